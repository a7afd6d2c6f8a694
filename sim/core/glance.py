"""A live run at a glance, for the teacher's view of the class: the step a student's run is at, its key figures and,
for a boundary, a thumbnail, read from the run's frame (sim.core.live) whatever the lab.

Every lab's frame names its step "epoch" or "steps"; its figures are top-level numbers ("val_loss", "val_acc",
"loss", "train_loss"), the "last" row of a history, or one number per model it trains side by side ("runs",
"racers", "models": "recent" or "loss", else the newest of its loss "curve"). The classification lab's frame holds
the boundary as bytes ("grid"), which is shrunk to THUMB × THUMB. tests/test_glance.py reads every lab's frame.
"""
from __future__ import annotations

import base64
import math

import numpy as np

FIGURES = ("val_loss", "val_acc", "loss", "train_loss")  # in the order the teacher sorts by (the first found)
THUMB = 20  # a thumbnail's side, in cells
MOST = 3  # figures a tile shows


def _number(x) -> float | None:
    if isinstance(x, np.ndarray):
        x = x[-1] if x.ndim == 1 and len(x) else None
    if isinstance(x, (int, float, np.floating, np.integer)) and not isinstance(x, bool):
        x = float(x)
        return x if math.isfinite(x) else None
    return None


def figures(frame: dict) -> list[list]:
    """[name, value] of the run's key figures, the one to sort by first (at most MOST)."""
    top = {**(frame.get("last") or {}), **frame}
    found = [[k, v] for k in FIGURES if (v := _number(top.get(k))) is not None]
    models = frame.get("runs") or frame.get("racers") or list((frame.get("models") or {}).values())
    for model in models if isinstance(models, list) else []:
        v = _number(model.get("recent", model.get("loss"))) if isinstance(model, dict) else None
        curve = model.get("curve") if isinstance(model, dict) else None
        if v is None and isinstance(curve, (list, tuple)) and len(curve) == 2:  # (steps, losses): its newest loss
            v = _number(np.asarray(curve[1], dtype=float))
        if v is not None:
            found.append(["loss", v])
    return found[:MOST]


def thumbnail(grid_b64: str, side: int = THUMB) -> dict | None:
    """A boundary's bytes (res × res cells, k bytes each: sim.plots.live.encode_grid) shrunk to side × side: one
    byte a cell, the probability of the second class (k = 1) or the likeliest class (k > 1)."""
    raw = np.frombuffer(base64.b64decode(grid_b64), dtype=np.uint8)
    for k in range(1, 9):
        res = math.isqrt(len(raw) // k)
        if res * res * k == len(raw):
            break
    else:
        return None
    cells = raw.reshape(res, res, k)
    pick = np.round(np.linspace(0, res - 1, min(side, res))).astype(int)
    small = cells[np.ix_(pick, pick)]
    small = small[..., 0] if k == 1 else np.argmax(small, axis=-1).astype(np.uint8)
    return {"side": len(pick), "k": k, "data": base64.b64encode(small.tobytes()).decode("ascii")}


def glance(frame: dict) -> dict:
    """{"step": the run's step, "figures": [[name, value], ...], "thumb": a thumbnail or None}."""
    step = frame.get("epoch", frame.get("steps"))
    grid = frame.get("grid")
    return {"step": int(step) if step is not None else None, "figures": figures(frame),
            "thumb": thumbnail(grid) if isinstance(grid, str) else None}
