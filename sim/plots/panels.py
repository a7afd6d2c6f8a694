"""Pure builders of the panels the live_plots canvas component draws: line/point charts and heatmaps.

A panel is a plain dict (JSON for the browser). Heatmap values travel as one byte per cell, scaled
between vmin and vmax; masked cells are sent separately so they are drawn as masked, not as zeros.
"""
from __future__ import annotations

import base64
import math
from collections.abc import Sequence

import numpy as np

from sim.plots.palette import BLUE


def _finite(values) -> list[float | None]:
    """Floats rounded for transport; NaN and ±inf become None (a gap in the line)."""
    out = []
    for v in np.asarray(values, dtype=float).reshape(-1):
        out.append(round(float(v), 6) if math.isfinite(v) else None)
    return out


def series(x, y, kind: str = "line", color: str = BLUE, width: float = 2.0, label: str = "",
           dash: bool = False, size: float = 3.0, texts: Sequence[str] | None = None) -> dict:
    """One line or set of points; kind is "line" or "points"; texts: a word written beside each point."""
    if kind not in ("line", "points"):
        raise ValueError(f"unknown series kind {kind}")
    out = {"kind": kind, "x": _finite(x), "y": _finite(y), "color": color, "width": width, "label": label,
           "dash": dash, "size": size}
    return out if texts is None else {**out, "texts": [str(w) for w in texts]}


LEGENDS = ("inside", "below")


def xy_panel(title: str, series_list: Sequence[dict], *, x_range=None, y_range=None, x_label: str = "",
             y_label: str = "", width: int = 360, height: int = 240, log_y: bool = False,
             legend: str = "inside") -> dict:
    """A chart of lines and points; ranges default to the data's extent. legend: where the labelled series are
    named, "inside" the plot area's top right corner (over the data: for a few short labels) or "below" it, in rows
    under the x axis that the plot area gives up its height to (ui/live_common.js drawXY)."""
    if legend not in LEGENDS:
        raise ValueError(f"unknown legend place {legend}")
    return {"type": "xy", "title": title, "series": list(series_list), "x_range": _range(x_range),
            "y_range": _range(y_range), "x_label": x_label, "y_label": y_label, "width": width,
            "height": height, "log_y": log_y, "legend": legend}


def _range(r) -> list[float] | None:
    return None if r is None else [float(r[0]), float(r[1])]


def heatmap_panel(title: str, values: np.ndarray, *, vmin: float, vmax: float, mask: np.ndarray | None = None,
                  colormap: str = "sequential", row_labels: Sequence[str] | None = None,
                  col_labels: Sequence[str] | None = None, annotate: bool = False, width: int = 240,
                  height: int = 240) -> dict:
    """A (rows, cols) matrix as coloured cells; `mask` True marks cells drawn hatched (e.g. causal mask)."""
    values = np.asarray(values, dtype=float)
    if values.ndim != 2:
        raise ValueError("heatmap values must be 2-D")
    if colormap not in ("sequential", "diverging"):
        raise ValueError(f"unknown colormap {colormap}")
    span = (vmax - vmin) or 1.0
    unit = np.clip(np.nan_to_num((values - vmin) / span, nan=0.0), 0.0, 1.0)
    data = base64.b64encode(np.rint(unit * 255).astype(np.uint8).tobytes()).decode("ascii")
    mask_b64 = None
    if mask is not None:
        mask = np.broadcast_to(np.asarray(mask, dtype=bool), values.shape)
        mask_b64 = base64.b64encode(mask.astype(np.uint8).tobytes()).decode("ascii")
    text = [f"{v:.2f}" if math.isfinite(v) else "" for v in values.reshape(-1)] if annotate else None
    return {"type": "heatmap", "title": title, "rows": values.shape[0], "cols": values.shape[1], "data": data,
            "mask": mask_b64, "colormap": colormap, "vmin": float(vmin), "vmax": float(vmax),
            "row_labels": list(row_labels) if row_labels is not None else None,
            "col_labels": list(col_labels) if col_labels is not None else None,
            "text": text, "width": width, "height": height}
