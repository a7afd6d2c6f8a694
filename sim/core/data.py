"""Seeded 2-D toy datasets in the TensorFlow Playground plane [-6, 6]², and their input features.

circle, xor, gauss, spiral, plane and gauss_multi follow the generators of TensorFlow Playground's
dataset.ts (same shapes, radii and noise meaning: noise in [0, 0.5] is the Playground's percent / 100).
Classification labels are 0..k-1 (the Playground's -1 is our 0), drawn in equal shares (sizes differ
by at most one) except in "imbalanced" (90 % class 0, 10 % class 1, overlapping: accuracy looks good
there while precision and recall of the rare class do not); with noise, circle and xor read the label
at a shifted point as the Playground does, so some labels flip. NumPy only, so it is cheap to import.
"""

from collections.abc import Callable

import numpy as np

DOMAIN = 6.0  # every point lies in [-DOMAIN, DOMAIN]²

CLASSIFICATION_DATASETS = ("circle", "xor", "gauss", "spiral", "spiral3", "moons", "blobs3", "blobs4", "blobs5",
                           "imbalanced")
IMBALANCED_SHARE = 0.1  # share of class 1 (the rare, positive class) in the "imbalanced" dataset
REGRESSION_DATASETS = ("plane", "gauss_multi")

FEATURES = ("x1", "x2", "x1sq", "x2sq", "x1x2", "sinx1", "sinx2")

_Maker = Callable[[np.random.Generator, int, float], tuple[np.ndarray, np.ndarray]]  # (rng, n, noise) -> X, y

_FEATURE_FNS = {
    "x1": lambda x1, x2: x1,
    "x2": lambda x1, x2: x2,
    "x1sq": lambda x1, x2: x1 * x1,
    "x2sq": lambda x1, x2: x2 * x2,
    "x1x2": lambda x1, x2: x1 * x2,
    "sinx1": lambda x1, x2: np.sin(x1),
    "sinx2": lambda x1, x2: np.sin(x2),
}


def n_classes(name: str) -> int:
    """Number of classes of a classification dataset."""
    if name not in CLASSIFICATION_DATASETS:
        raise ValueError("invalid:dataset")
    if name == "spiral3":
        return 3
    if name.startswith("blobs"):
        return int(name[-1])
    return 2


def _class_sizes(n: int, k: int) -> np.ndarray:
    """Sizes of k classes that sum to n and differ by at most one."""
    return n // k + (np.arange(k) < n % k)


def _gauss_std(noise: float) -> float:
    """Playground's two-gauss spread: variance grows linearly from 0.5 (noise 0) to 4 (noise 0.5)."""
    return float(np.sqrt(0.5 + noise * 7.0))


def _circle(rng: np.random.Generator, n: int, noise: float) -> tuple[np.ndarray, np.ndarray]:
    radius = 5.0
    outer, inner = _class_sizes(n, 2)  # class 0 on the outer ring, class 1 in the inner disc
    r = np.concatenate([rng.uniform(0, radius * 0.5, inner), rng.uniform(radius * 0.7, radius, outer)])
    angle = rng.uniform(0, 2 * np.pi, n)
    X = np.stack([r * np.sin(angle), r * np.cos(angle)], axis=1)
    # like the Playground, noise moves the point used for the label, not the point drawn
    shifted = X + rng.uniform(-radius, radius, (n, 2)) * noise
    y = np.linalg.norm(shifted, axis=1) < radius * 0.5
    return X, y


def _xor(rng: np.random.Generator, n: int, noise: float) -> tuple[np.ndarray, np.ndarray]:
    padding = 0.3  # keeps points off the axes, where the label flips
    same_sign = np.repeat([True, False], _class_sizes(n, 2))  # x1·x2 >= 0 is class 1
    sx = rng.choice([-1.0, 1.0], n)
    sy = np.where(same_sign, sx, -sx)
    X = np.stack([sx, sy], axis=1) * (rng.uniform(0, 5, (n, 2)) + padding)
    shifted = X + rng.uniform(-5, 5, (n, 2)) * noise
    y = shifted[:, 0] * shifted[:, 1] >= 0
    return X, y


def _blobs(rng: np.random.Generator, centers: np.ndarray, n: int, noise: float) -> tuple[np.ndarray, np.ndarray]:
    """One Gaussian blob per class around each center, with the Playground's gauss spread."""
    y = np.repeat(np.arange(len(centers)), _class_sizes(n, len(centers)))
    X = centers[y] + rng.normal(0, _gauss_std(noise), (n, 2))
    return X, y


def _gauss(rng: np.random.Generator, n: int, noise: float) -> tuple[np.ndarray, np.ndarray]:
    return _blobs(rng, np.array([[-2.0, -2.0], [2.0, 2.0]]), n, noise)


def _blobs_k(k: int) -> _Maker:
    """Generator of k blobs with centers evenly spaced on a circle of radius 3.5."""
    angles = np.pi / 2 + 2 * np.pi * np.arange(k) / k
    centers = 3.5 * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    return lambda rng, n, noise: _blobs(rng, centers, n, noise)


def _spiral_k(k: int) -> _Maker:
    """Generator of k interleaved spiral arms; k=2 is the Playground's spiral."""

    def generate(rng: np.random.Generator, n: int, noise: float) -> tuple[np.ndarray, np.ndarray]:
        y = np.concatenate([np.full(size, label) for label, size in enumerate(_class_sizes(n, k))])
        t = np.concatenate([np.arange(size) / size for size in _class_sizes(n, k)])  # 0 -> 1 along each arm
        # arm offsets 2π(label+1)/k: for k=2, class 1 starts at angle 0 like the Playground's positive arm
        angle = 1.75 * t * 2 * np.pi + 2 * np.pi * (y + 1) / k
        X = 5.0 * t[:, None] * np.stack([np.sin(angle), np.cos(angle)], axis=1)
        return X + rng.uniform(-1, 1, (n, 2)) * noise, y

    return generate


def _imbalanced(rng: np.random.Generator, n: int, noise: float) -> tuple[np.ndarray, np.ndarray]:
    """A wide majority cloud (class 0) and a small rare cloud (class 1, IMBALANCED_SHARE of the points)
    at its edge; they overlap, more with noise, so no boundary separates them cleanly."""
    rare = min(max(int(round(n * IMBALANCED_SHARE)), 1), n - 1)
    y = np.repeat([0, 1], [n - rare, rare])
    centers = np.array([[-1.0, -1.0], [1.5, 1.5]])
    spread = np.array([1.8, 1.0]) * _gauss_std(noise) / _gauss_std(0.0)
    X = centers[y] + rng.normal(0, 1, (n, 2)) * spread[y, None]
    return X, y


def _moons(rng: np.random.Generator, n: int, noise: float) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaved half circles (scikit-learn's make_moons), centred and scaled by 3.5."""
    upper, lower = _class_sizes(n, 2)
    a, b = rng.uniform(0, np.pi, upper), rng.uniform(0, np.pi, lower)
    X = np.concatenate([np.stack([np.cos(a), np.sin(a)], 1), np.stack([1 - np.cos(b), 0.5 - np.sin(b)], 1)])
    X = (X - [0.5, 0.25] + rng.normal(0, noise, (n, 2))) * 3.5
    return X, np.repeat([0, 1], [upper, lower])


_CLASSIFIERS: dict[str, _Maker] = {
    "circle": _circle,
    "xor": _xor,
    "gauss": _gauss,
    "spiral": _spiral_k(2),
    "spiral3": _spiral_k(3),
    "moons": _moons,
    "blobs3": _blobs_k(3),
    "blobs4": _blobs_k(4),
    "blobs5": _blobs_k(5),
    "imbalanced": _imbalanced,
}


def _finish(rng: np.random.Generator, X: np.ndarray, y: np.ndarray, dtype) -> tuple[np.ndarray, np.ndarray]:
    """Shuffle (generators emit points grouped by class), clip to the plane and cast."""
    order = rng.permutation(len(X))
    return np.clip(X[order], -DOMAIN, DOMAIN).astype(np.float32), y[order].astype(dtype)


def make_classification(name: str, n: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n points X (n, 2) float32 in [-6, 6]² and labels y (n,) int64 in 0..k-1; same seed, same data."""
    if name not in _CLASSIFIERS:
        raise ValueError("invalid:dataset")
    rng = np.random.default_rng(seed)
    X, y = _CLASSIFIERS[name](rng, n, noise)
    return _finish(rng, X, y, np.int64)


def _plane_label(X: np.ndarray) -> np.ndarray:
    return (X[:, 0] + X[:, 1]) / 10.0


_GAUSSIANS = np.array([[-4, 2.5, 1], [0, 2.5, -1], [4, 2.5, 1], [-4, -2.5, -1], [0, -2.5, 1], [4, -2.5, -1]])


def _gauss_multi_label(X: np.ndarray) -> np.ndarray:
    """Signed bump of the nearest-strongest of six Gaussians: 1 at a centre, 0 from distance 2 on."""
    d = np.linalg.norm(X[:, None, :] - _GAUSSIANS[None, :, :2], axis=2)  # (n, 6)
    bumps = _GAUSSIANS[:, 2] * np.clip(1 - d / 2, 0, 1)
    return bumps[np.arange(len(X)), np.abs(bumps).argmax(axis=1)]


_REGRESSORS = {"plane": _plane_label, "gauss_multi": _gauss_multi_label}


def make_regression(name: str, n: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n points X (n, 2) float32 uniform in [-6, 6]² and targets y (n,) float32 in [-1, 1]."""
    if name not in _REGRESSORS:
        raise ValueError("invalid:dataset")
    rng = np.random.default_rng(seed)
    X = rng.uniform(-DOMAIN, DOMAIN, (n, 2))
    # like the Playground, noise shifts the point at which the target is read
    y = _REGRESSORS[name](X + rng.uniform(-DOMAIN, DOMAIN, (n, 2)) * noise)
    return _finish(rng, X, np.clip(y, -1, 1), np.float32)


def feature_matrix(X: np.ndarray, features: tuple[str, ...]) -> np.ndarray:
    """Columns x1, x2, x1², x2², x1·x2, sin x1, sin x2 (by FEATURES name) of points X (n, 2)."""
    if not set(features) <= set(_FEATURE_FNS):
        raise ValueError("invalid:features")
    x1, x2 = X[:, 0], X[:, 1]
    return np.stack([_FEATURE_FNS[f](x1, x2) for f in features], axis=1).astype(np.float32)


def split(n: int, train_ratio: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Shuffled train and test indices of n points; at least one on each side when n >= 2."""
    # a stream of its own, so the split is not correlated with the draws that made the data
    perm = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1,))).permutation(n)
    n_train = min(max(int(n * train_ratio), 1), n - 1)
    return perm[:n_train], perm[n_train:]


def split3(n: int, train_ratio: float, val_share: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Shuffled train, validation and test indices of n points (n >= 3), each side non-empty.

    The training indices are exactly split()'s, so a run keeps its training set when the held-out points
    are cut in two: val_share of the held-out points (rounded) form the validation set, the rest the test set.
    """
    if n < 3:
        raise ValueError("invalid:n")
    train, rest = split(n, train_ratio, seed)
    if len(rest) < 2:  # split() leaves at least one point; two are needed for validation and test
        train, rest = train[:-1], np.concatenate([train[-1:], rest])
    n_val = min(max(int(round(len(rest) * val_share)), 1), len(rest) - 1)
    return train, rest[:n_val], rest[n_val:]


def split_sizes(n: int, train_ratio: float, val_share: float) -> tuple[int, int, int]:
    """(train, validation, test) counts split3 gives for n points (n >= 3), without drawing anything."""
    if n < 3:
        raise ValueError("invalid:n")
    n_train = min(max(int(n * train_ratio), 1), n - 1)
    n_train -= n - n_train < 2
    n_val = min(max(int(round((n - n_train) * val_share)), 1), n - n_train - 1)
    return n_train, n_val, n - n_train - n_val
