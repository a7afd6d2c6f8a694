"""Sparse attention masks: which scores (query i, key j) are computed, what share of the full T × T that is, and
how far information can travel after L layers.

Every mask is a boolean (T, T) array, True where query i attends to key j; `causal` keeps j ≤ i as a decoder
(GPT-style) must. Patterns (as the article's section on the O(n²) cost names them):
- window(T, w): each token sees the w tokens on each side (|i − j| ≤ w);
- dilated(T, w, gap): w keys on each side at every `gap`-th position (|i − j| ≤ w·gap and gap divides i − j);
- longformer(T, w, globals): the window, plus global tokens that see and are seen by every token;
- bigbird(T, w, globals, r, seed): longformer's, plus r random keys per query.
"""
from __future__ import annotations

import numpy as np


def _positions(T: int) -> tuple[np.ndarray, np.ndarray]:
    if T < 1:
        raise ValueError("T must be at least 1")
    i = np.arange(T)
    return i[:, None], i[None, :]


def _finish(mask: np.ndarray, causal: bool) -> np.ndarray:
    if causal:
        mask &= np.tri(mask.shape[0], dtype=bool)
    np.fill_diagonal(mask, True)  # a token always sees itself
    return mask


def full(T: int, causal: bool = False) -> np.ndarray:
    _positions(T)
    return _finish(np.ones((T, T), dtype=bool), causal)


def window(T: int, w: int, causal: bool = False) -> np.ndarray:
    qi, kj = _positions(T)
    return _finish(np.abs(qi - kj) <= w, causal)


def dilated(T: int, w: int, gap: int, causal: bool = False) -> np.ndarray:
    if gap < 1:
        raise ValueError("gap must be at least 1")
    qi, kj = _positions(T)
    d = np.abs(qi - kj)
    return _finish((d <= w * gap) & (d % gap == 0), causal)


def longformer(T: int, w: int, globals_: tuple[int, ...] = (0,), causal: bool = False) -> np.ndarray:
    mask = window(T, w)
    g = [k for k in globals_ if 0 <= k < T]
    mask[g, :] = True
    mask[:, g] = True
    return _finish(mask, causal)


def bigbird(T: int, w: int, globals_: tuple[int, ...] = (0,), r: int = 2, seed: int = 0,
            causal: bool = False) -> np.ndarray:
    mask = longformer(T, w, globals_)
    rng = np.random.default_rng(seed)
    for i in range(T):
        mask[i, rng.choice(T, size=min(r, T), replace=False)] = True
    return _finish(mask, causal)


def share_computed(mask: np.ndarray) -> float:
    """Scores computed / T²."""
    return float(mask.sum()) / mask.size


def receptive_field(mask: np.ndarray, layers: int) -> np.ndarray:
    """For each query, how many positions can reach it after `layers` layers of this mask (a path of at most
    `layers` hops, each hop one attention edge key -> query)."""
    if layers < 1:
        raise ValueError("layers must be at least 1")
    m = mask.astype(np.float32)  # float products (BLAS): path counts stay exact far beyond any T the lab allows
    reach = m.copy()
    for _ in range(layers - 1):
        reach = ((reach @ m) > 0).astype(np.float32)
    return reach.sum(axis=1).astype(np.int64)
