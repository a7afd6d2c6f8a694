"""MinHash signatures (Broder 1997) and locality-sensitive hashing by bands (as in Leskovec, Rajaraman & Ullman,
Mining of Massive Datasets, ch. 3).

A signature holds, for each of num_perm random hash functions h_i(x) = (a_i·x + b_i) mod p, the least h_i over a
set's shingles. Two sets' signatures agree at one position with probability equal to their Jaccard similarity, so
the share of equal positions estimates it.
"""
from __future__ import annotations

import math
import re
import zlib
from collections.abc import Iterable

import numpy as np

PRIME = (1 << 31) - 1  # a Mersenne prime: a·x + b < 2^62 fits in int64 for a, b, x < p
EMPTY = PRIME  # the signature of the empty set: above every hash value


def normalise(text: str) -> str:
    """Lower case, punctuation gone, runs of spaces one space: what near-duplicate checks compare."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def shingles(text: str, k: int = 5) -> set[str]:
    """The set of k-character pieces of the normalised text (the whole text if shorter)."""
    s = normalise(text)
    if len(s) <= k:
        return {s} if s else set()
    return {s[i: i + k] for i in range(len(s) - k + 1)}


def jaccard(a: set, b: set) -> float:
    """|a ∩ b| / |a ∪ b| (1 for two empty sets)."""
    union = len(a | b)
    return 1.0 if union == 0 else len(a & b) / union


def _coefficients(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(1, PRIME, num_perm, dtype=np.int64), rng.integers(0, PRIME, num_perm, dtype=np.int64)


def _ids(items: Iterable) -> np.ndarray:
    """Each item as a stable 32-bit integer (CRC-32 of its UTF-8 text: Python's hash() changes per process)."""
    return np.fromiter((zlib.crc32(str(x).encode("utf-8")) % PRIME for x in items), dtype=np.int64)


def minhash(shingle_set: Iterable, num_perm: int = 128, seed: int = 0) -> np.ndarray:
    """The (num_perm,) int64 MinHash signature of a set of shingles (any items; str() of each is hashed)."""
    if num_perm < 1:
        raise ValueError("num_perm must be at least 1")
    a, b = _coefficients(num_perm, seed)
    x = _ids(set(shingle_set))
    if len(x) == 0:
        return np.full(num_perm, EMPTY, dtype=np.int64)
    return ((np.outer(x, a) + b) % PRIME).min(axis=0)  # (num_perm,)


def jaccard_estimate(sig_a: np.ndarray, sig_b: np.ndarray) -> float:
    """The share of positions where the two signatures are equal: an unbiased estimate of the Jaccard similarity."""
    sig_a, sig_b = np.asarray(sig_a), np.asarray(sig_b)
    if sig_a.shape != sig_b.shape:
        raise ValueError("signatures of different lengths")
    return float(np.mean(sig_a == sig_b))


def candidate_probability(j: float | np.ndarray, bands: int, rows: int) -> float | np.ndarray:
    """The chance that two sets of Jaccard j share at least one of `bands` bands of `rows` rows: 1 − (1 − j^r)^b."""
    return 1.0 - (1.0 - np.asarray(j, dtype=float) ** rows) ** bands


def lsh_bands(num_perm: int, threshold: float) -> tuple[int, int]:
    """(bands, rows), bands·rows ≤ num_perm, whose S-curve 1 − (1 − j^r)^b best separates pairs above the threshold
    from pairs below it: the least area of false candidates below plus missed pairs above (as datasketch chooses)."""
    grid = np.linspace(0.0, 1.0, 201)
    best, best_cost = (1, num_perm), math.inf
    for b in range(1, num_perm + 1):
        r = num_perm // b
        p = candidate_probability(grid, b, r)
        below, above = grid < threshold, grid >= threshold
        cost = np.trapezoid(p * below, grid) + np.trapezoid((1 - p) * above, grid)
        if cost < best_cost - 1e-12:
            best, best_cost = (b, r), cost
    return best


def lsh_candidates(signatures: np.ndarray, bands: int, rows: int) -> set[tuple[int, int]]:
    """Pairs (i < j) of rows of `signatures` (n, num_perm) that are equal on all rows of at least one band."""
    pairs: set[tuple[int, int]] = set()
    for band in range(bands):
        buckets: dict[bytes, list[int]] = {}
        chunk = np.ascontiguousarray(signatures[:, band * rows:(band + 1) * rows])
        for i, row in enumerate(chunk):
            buckets.setdefault(row.tobytes(), []).append(i)
        for members in buckets.values():
            for x in range(len(members)):
                for y in range(x + 1, len(members)):
                    pairs.add((members[x], members[y]))
    return pairs
