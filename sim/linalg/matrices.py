"""2×2 matrices as maps of the plane: where a grid and the unit square go, the determinant as signed area,
composition as a product (and why AB is not BA), the transpose, the inverse when there is one."""
from __future__ import annotations

import math

import numpy as np

Matrix = tuple[float, float, float, float]  # (a11, a12, a21, a22), row by row


def as_array(m: Matrix) -> np.ndarray:
    return np.array(m, dtype=float).reshape(2, 2)


def det(m: Matrix) -> float:
    """a11·a22 − a12·a21: the signed area the unit square becomes (negative: the map flips the plane)."""
    return m[0] * m[3] - m[1] * m[2]


def product(a: Matrix, b: Matrix) -> Matrix:
    """AB by the row-times-column rule: (AB)[i, j] = Σ_k A[i, k]·B[k, j]."""
    return tuple(sum(a[2 * i + k] * b[2 * k + j] for k in range(2)) for i in range(2) for j in range(2))


def commute(a: Matrix, b: Matrix, tol: float = 1e-12) -> bool:
    """AB = BA (to rounding): doing one map then the other is the same as the other way round."""
    return all(math.isclose(x, y, rel_tol=1e-9, abs_tol=tol) for x, y in zip(product(a, b), product(b, a),
                                                                             strict=True))


def transpose(m: Matrix) -> Matrix:
    """Aᵀ: the rows of A become its columns (A mirrored along its main diagonal)."""
    return (m[0], m[2], m[1], m[3])


def symmetric(m: Matrix) -> bool:
    """A = Aᵀ: the two entries off the diagonal are equal."""
    return m[1] == m[2]


def inverse(m: Matrix, tol: float = 1e-12) -> Matrix | None:
    """A⁻¹, or None when the map squashes the plane onto a line or a point (det = 0): nothing undoes that."""
    d = det(m)
    if abs(d) <= tol * max(1.0, max(abs(x) for x in m) ** 2):
        return None
    return (m[3] / d, -m[1] / d, -m[2] / d, m[0] / d)


def orientation(m: Matrix) -> str:
    """What the map does to the plane's orientation: "flips" it (det < 0), "keeps" it (det > 0), or "flat" when it
    squashes the plane onto a line or a point (no inverse, as inverse() decides)."""
    return "flat" if inverse(m) is None else "flips" if det(m) < 0 else "keeps"


def unit_square(m: Matrix) -> np.ndarray:
    """The corners (0,0), (1,0), (1,1), (0,1), (0,0) after the map, (5, 2)."""
    corners = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]], dtype=float)
    return corners @ as_array(m).T


def polygon_area(points: np.ndarray) -> float:
    """Signed area of a closed polygon (shoelace formula), counter-clockwise positive."""
    x, y = points[:, 0], points[:, 1]
    return 0.5 * float(np.sum(x[:-1] * y[1:] - x[1:] * y[:-1]))


def grid_lines(m: Matrix, reach: int = 3, points: int = 2) -> list[np.ndarray]:
    """The lines x = c and y = c (c = −reach..reach) after the map, each (points, 2)."""
    t = np.linspace(-reach, reach, points)
    lines = []
    for c in range(-reach, reach + 1):
        for line in (np.stack([np.full_like(t, c), t], 1), np.stack([t, np.full_like(t, c)], 1)):
            lines.append(line @ as_array(m).T)
    return lines


def rotation(degrees: float) -> Matrix:
    r = math.radians(degrees)
    return (math.cos(r), -math.sin(r), math.sin(r), math.cos(r))


MIRROR: Matrix = (1.0, 0.0, 0.0, -1.0)  # reflection in the x axis
PRESETS: dict[str, Matrix] = {
    "identity": (1.0, 0.0, 0.0, 1.0),
    "rotate45": tuple(round(x, 4) for x in rotation(45)),
    "mirror": MIRROR,
    "shear": (1.0, 1.0, 0.0, 1.0),
    "stretch": (2.0, 0.0, 0.0, 0.5),
    "squash": (1.0, 2.0, 0.5, 1.0),  # det 0: the plane onto a line
}
