"""Histories of long runs: kept bounded in memory and thinned for plotting, spikes included.

Both use min–max decimation: the x axis is cut into buckets of equal width and, per bucket and per
series, the point with the lowest and the one with the highest value are kept, in their order. A
one-epoch spike survives (a plain every-k-th thinning would drop it), as do the global minimum and
maximum and the first and the last point. NumPy only: the engine and the figure builders share it.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

DIVERGED = 1e6  # a loss or |parameter| above this counts as divergence, like a non-finite one (2-D nets, fits)
PLOT_POINTS = 600  # the most points of a plotted history (a chart is a few hundred pixels wide)
# A stored history longer than CAP records is compacted: its first HEAD records (where the loss falls
# fastest) and its last RECENT ones (what divergence checks and live captions read) stay as they are,
# the middle is decimated to half of the room left, so it is not compacted again for a while.
CAP, HEAD, RECENT = 4000, 500, 1000


def minmax_indices(x: Sequence[float], columns, max_points: int) -> np.ndarray:
    """Sorted indices of at most max_points of n points: per x bucket, each column's min and max; first and last.

    x (n,) must be non-decreasing; columns (n,) or (n, k) holds the series (NaN for a missing value; a
    column with no value at all is ignored). With n <= max_points every index is kept.
    """
    x = np.asarray(x, dtype=float)
    n = len(x)
    if n <= max_points:
        return np.arange(n)
    values = np.asarray(columns, dtype=float).reshape(n, -1)
    values = values[:, ~np.isnan(values).all(axis=0)]  # (n, k) series that have a value somewhere
    buckets = (max_points - 2) // (2 * max(values.shape[1], 1))
    if buckets < 1:
        raise ValueError("max_points too small for the number of series")
    span = x[-1] - x[0]
    bucket = np.zeros(n, dtype=int) if span <= 0 else np.minimum(((x - x[0]) / span * buckets).astype(int),
                                                                   buckets - 1)
    keep = [np.array([0, n - 1])]
    for column in values.T:
        missing = np.isnan(column)
        # sorted by bucket, then by value (NaN last): the first index of each bucket is its min, or its max
        for key in (np.where(missing, np.inf, column), -np.where(missing, -np.inf, column)):
            order = np.lexsort((key, bucket))  # stable: of equal values the earliest wins
            sorted_bucket = bucket[order]
            keep.append(order[np.r_[True, sorted_bucket[1:] != sorted_bucket[:-1]]])
    return np.unique(np.concatenate(keep))


def _columns(records: Sequence[dict], keys: Sequence[str]) -> np.ndarray:
    """(n, len(keys)) floats of the records' values; NaN where a value is None or missing."""
    return np.column_stack([np.array([r.get(k) for r in records], dtype=float) for k in keys])


def decimate(records: Sequence[dict], x: str, keys: Sequence[str], max_points: int = PLOT_POINTS) -> list[dict]:
    """At most max_points of the records (dicts), min–max decimated on the values under `keys` against r[x]."""
    if len(records) <= max_points:
        return list(records)
    idx = minmax_indices([r[x] for r in records], _columns(records, keys), max_points)
    return [records[i] for i in idx]


def kept_after_compaction(x: Sequence[float], columns, cap: int = CAP, head: int = HEAD,
                          recent: int = RECENT) -> np.ndarray | None:
    """Indices a stored history of len(x) points keeps: None while it is within cap, else head + middle + recent."""
    n = len(x)
    if n <= cap:
        return None
    middle = slice(head, n - recent)
    values = np.asarray(columns, dtype=float).reshape(n, -1)
    inner = minmax_indices(np.asarray(x, dtype=float)[middle], values[middle], (cap - head - recent) // 2)
    return np.concatenate([np.arange(head), head + inner, np.arange(n - recent, n)])


def bound(records: list[dict], x: str, keys: Sequence[str], cap: int = CAP) -> None:
    """Compact a history of dicts in place once it holds more than cap records (see kept_after_compaction)."""
    if len(records) <= cap:
        return
    keep = kept_after_compaction([r[x] for r in records], _columns(records, keys), cap)
    records[:] = [records[i] for i in keep]


class LossCurve:
    """For a trainer whose `history` is a list of {"step", "loss", ...} records: its loss curve and recent loss."""

    history: list[dict]
    steps: int
    diverged: bool

    def record(self, loss: float) -> None:
        """One more step, whose training loss was `loss`: counted and kept; a loss that is not finite ends the run."""
        self.steps += 1
        self.diverged = not math.isfinite(loss)
        self.history.append({"step": self.steps, "loss": loss})
        bound(self.history, "step", ("loss",))

    def curve(self, max_points: int = 300) -> tuple[list[int], list[float]]:
        """Steps and losses of the history, min–max decimated to at most max_points (spikes stay visible)."""
        pick = decimate(self.history, "step", ("loss",), max_points)
        return [h["step"] for h in pick], [h["loss"] for h in pick]

    def recent_loss(self, k: int = 20) -> float | None:
        """Mean loss of the last k steps (single batches are noisy)."""
        tail = [h["loss"] for h in self.history[-k:]]
        return sum(tail) / len(tail) if tail else None
