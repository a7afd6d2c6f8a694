"""Two vectors: their sum, a scalar multiple, norms, dot product, angle, cosine similarity and projection."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# the article's three-dimensional example: the squares of its entries are 9, 1 and 49 (signs do not change the norm)
ARTICLE_VECTOR = (3.0, 1.0, 7.0)


def norm(v: Sequence[float]) -> float:
    """‖v‖ = √(Σ v_i²), Pythagoras in any number of dimensions."""
    return math.sqrt(sum(x * x for x in v))


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    if len(a) != len(b):
        raise ValueError(f"dot of lengths {len(a)} and {len(b)}")
    return sum(x * y for x, y in zip(a, b, strict=True))


def cosine(a: Sequence[float], b: Sequence[float]) -> float | None:
    """dot(a, b) / (‖a‖ ‖b‖), or None when either is the zero vector (it has no direction)."""
    na, nb = norm(a), norm(b)
    if na == 0 or nb == 0:
        return None
    return max(-1.0, min(1.0, dot(a, b) / (na * nb)))  # rounding can step just past ±1


@dataclass(frozen=True)
class VectorReport:
    a: tuple[float, float]
    b: tuple[float, float]
    k: float
    total: tuple[float, float]  # a + b
    scaled: tuple[float, float]  # k·a
    norm_a: float
    norm_b: float
    dot: float
    cos: float | None  # None: a zero vector
    angle_deg: float | None
    projection: tuple[float, float] | None  # the projection of a on b; None when b is zero
    zero: tuple[str, ...]  # which of "a", "b" is the zero vector
    kind: str | None  # "same", "opposite", "perpendicular", "acute" or "obtuse"; None: a zero vector


KINDS = ("same", "opposite", "perpendicular", "acute", "obtuse")


def direction(cos: float | None, tol: float = 1e-9) -> str | None:
    """How two directions relate, from their cosine (the article's three cases, and the two between them)."""
    if cos is None:
        return None
    if cos >= 1 - tol:
        return "same"
    if cos <= -1 + tol:
        return "opposite"
    return "perpendicular" if abs(cos) <= tol else "acute" if cos > 0 else "obtuse"


def analyse(a: Sequence[float], b: Sequence[float], k: float) -> VectorReport:
    a, b = (float(a[0]), float(a[1])), (float(b[0]), float(b[1]))
    c = cosine(a, b)
    nb = norm(b)
    proj = None if nb == 0 else tuple(dot(a, b) / nb ** 2 * x for x in b)
    return VectorReport(a, b, k, (a[0] + b[0], a[1] + b[1]), (k * a[0], k * a[1]), norm(a), nb, dot(a, b), c,
                        None if c is None else math.degrees(math.acos(c)), proj,
                        tuple(name for name, v in (("a", a), ("b", b)) if norm(v) == 0), direction(c))
