"""Pure encoders for the live view: model outputs in, compact bytes for the canvas component out.

Everything is quantised to one byte per value and base64-encoded, so a frame of a 50×50 boundary
is about 3 kB and a few frames fit in every fragment rerun.
"""
from __future__ import annotations

import base64

import numpy as np

from sim.core.history import decimate
from sim.plots.palette import BLUE, ORANGE
from sim.plots.panels import series, xy_panel

DOMAIN = 6.0  # the plane is [-6, 6]²


def _b64(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype=np.uint8).tobytes()).decode("ascii")


def _unit_to_byte(v: np.ndarray) -> np.ndarray:
    return np.rint(np.clip(np.nan_to_num(v, nan=0.5), 0.0, 1.0) * 255).astype(np.uint8)


def grid_channels(outputs: int, problem: str) -> int:
    """Bytes per grid cell for a model with `outputs` columns: 1 for binary (P(class 1)) and
    regression, k for k > 2 classes."""
    return 1 if problem == "regression" or outputs == 2 else outputs


def encode_grid(grid: np.ndarray, problem: str) -> str:
    """(res, res, k) probabilities, or (res, res, 1) regression values in [-1, 1], to base64 bytes."""
    if problem == "regression":
        unit = (grid[..., :1] + 1.0) / 2.0
    elif grid.shape[-1] == 2:
        unit = grid[..., 1:]
    else:
        unit = grid
    return _b64(_unit_to_byte(unit).reshape(-1))


def encode_map(values: np.ndarray, bounded: tuple[float, float] | None = None) -> str:
    """One node's output over the plane (res, res) to bytes, 0.5 meaning zero.

    Bounded activations (tanh, sigmoid) keep their own scale so thumbnails are comparable;
    unbounded ones (ReLU, linear, input features) are scaled by their largest magnitude.
    """
    if bounded is not None:
        lo, hi = bounded
        unit = (values - lo) / (hi - lo)
    else:
        m = float(np.max(np.abs(values))) or 1.0
        unit = (values / m + 1.0) / 2.0
    return _b64(_unit_to_byte(unit).reshape(-1))


def encode_points(X: np.ndarray, y: np.ndarray, problem: str) -> tuple[str, str]:
    """Points quantised to the plane's 256 steps; labels as class ids or regression values."""
    xy = _unit_to_byte((X + DOMAIN) / (2 * DOMAIN))
    labels = _unit_to_byte((y + 1.0) / 2.0) if problem == "regression" else y.astype(np.uint8)
    return _b64(xy.reshape(-1)), _b64(labels)


def curve(history: list[dict], max_points: int = 300) -> dict:
    """Loss history min–max decimated to at most max_points (first, latest and every spike kept), losses to 4
    significant digits (a sparkline a few hundred pixels tall; it halves what a frame carries)."""
    pick = decimate(history, "epoch", ("train_loss", "val_loss"), max_points)
    return {"epochs": [h["epoch"] for h in pick], "train": [_sig4(h["train_loss"]) for h in pick],
            "val": [_sig4(h["val_loss"]) for h in pick]}


def curve_panel(history: list[dict], labels: dict, max_points: int = 300) -> dict:
    """The live view's loss curve as an xy panel (sim.plots.panels): train and validation loss from 0, against
    epochs (a run is monitored on its validation set; the test set waits for the one final evaluation).

    labels: "epoch", "train_loss", "val_loss".
    """
    c = curve(history, max_points)
    top = max([v for v in c["train"] + c["val"] if v is not None and np.isfinite(v)], default=1.0) * 1.05 or 1.0
    lines = [series(c["epochs"], c[part], color=colour, width=1.6, label=labels[f"{part}_loss"])
             for part, colour in (("train", ORANGE), ("val", BLUE))]
    return xy_panel("", lines, y_range=(0.0, top), x_label=labels["epoch"], width=360, height=150)


def _sig4(v: float | None) -> float | None:
    return None if v is None else float(f"{v:.4g}")


def link_weight_arrays(layers: list[tuple[np.ndarray, np.ndarray]]) -> tuple[list[np.ndarray], float]:
    """Row-major weights per layer (float32: what a live frame keeps) and the magnitude that draws a full-width
    link (the 95th percentile of |w|)."""
    flat = [np.ascontiguousarray(W, dtype=np.float32).reshape(-1) for W, _ in layers]
    mags = np.concatenate([np.abs(W).reshape(-1) for W, _ in layers]) if layers else np.zeros(1)
    return flat, max(float(np.percentile(mags, 95)) if mags.size else 0.0, 1e-6)


def weight_lists(flat: list[np.ndarray]) -> list[list[float]]:
    """link_weight_arrays' weights as the canvas takes them: lists, 4 decimals."""
    return [np.round(w.astype(float), 4).tolist() for w in flat]


def link_weights(layers: list[tuple[np.ndarray, np.ndarray]]) -> tuple[list[list[float]], float]:
    """Row-major weights per layer and the magnitude that draws a full-width link."""
    flat, wmax = link_weight_arrays(layers)
    return weight_lists(flat), wmax
