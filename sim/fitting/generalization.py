"""Generalisation: train / validation / test splits, K-fold cross-validation, the degree sweep, label noise.

The curve data is one period of a sine on [-3, 3], shifted off centre by PHASE, plus Gaussian noise, so
a polynomial of middle degree fits it, a line under-fits it and a high degree chases its noise. (The
regression lab's sine is centred, an odd function: there every even power adds a parameter and no
fit, so degree 2 is worse than degree 1 on average, and the capacity sweep climbs in steps of two.)
Polynomials are fitted by sim.fitting.regression's least squares on features standardised on the training
x only (the powers of raw x up to x^20 would be too ill-conditioned to solve).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sim.core.data import DOMAIN, make_classification, split
from sim.core.history import decimate
from sim.fitting.fit import FitTrainer
from sim.fitting.regression import feature_map, least_squares

X_RANGE = (-3.0, 3.0)  # where the curve data's x lie
AMPLITUDE, PHASE = 2.0, 0.7  # the true curve 2·sin(πx/3 + 0.7): odd and even powers both help it
MAX_DEGREE = 20  # the sweep stops here, or at n_train - 1 (a polynomial through every training point)
N_NEW = 1000  # points of truly new data: a large fresh sample that stands in for "the world"
GRID = np.linspace(*X_RANGE, 121)  # where curves are evaluated to be drawn: smooth, and light to send per frame
TEST_SHARES = (0.1, 0.2)  # the notes' range for the test share (what train and validation leave)
SWEEP_DRAWS = 30  # data sets the capacity sweep averages: this one and 29 more drawn the same way
SWEEP_FLOOR = 1e-30  # errors are averaged on a log scale; an interpolating fit's ~0 counts as this
NOISE_POINTS, NOISE_GRID = 300, 25  # label-noise run: points (half train, half validation), boundary cells a side
LIVE_CURVE_POINTS = 160  # a live frame's loss or accuracy curves: at most this many epochs (the canvas is ~380 px)
WEIGHT_BINS = 41  # the live weights' histogram
# sim.core.data's noise only jitters the moons; for circle and xor it would flip labels, which is flip_labels' own job
SPREAD = {"moons": 0.15}


def three_way_split(n: int, train: float, val: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Shuffled train, validation and test indices of n points, sized by the shares train and val.

    Every part gets at least one point; raises ValueError when the shares leave nothing for one part.
    """
    test = 1.0 - train - val
    if n < 3 or min(train, val) <= 0 or test < 1e-9:
        raise ValueError("invalid:split")
    n_train = max(1, round(n * train))
    n_val = max(1, round(n * val))
    if n_train + n_val >= n:
        raise ValueError("invalid:split")
    # a stream of its own, so the split is not correlated with the draws that made the data
    perm = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(3,))).permutation(n)
    return perm[:n_train], perm[n_train:n_train + n_val], perm[n_train + n_val:]


def kfold_indices(n: int, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """K folds of 0..n-1: (train_idx, val_idx) each; the k validation folds are disjoint and cover every index once.

    Fold sizes differ by at most one (the first n % k folds are one larger).
    """
    if not 2 <= k <= n:
        raise ValueError("invalid:k")
    perm = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(4,))).permutation(n)
    folds = np.array_split(perm, k)
    return [(np.sort(np.concatenate(folds[:i] + folds[i + 1:])), np.sort(fold)) for i, fold in enumerate(folds)]


@dataclass(frozen=True, eq=False)
class CurveData:
    """The 1-D data of the split, CV and capacity views, already split, plus a fresh sample of new data."""

    x: np.ndarray  # (n,) every point of the pool
    y: np.ndarray  # (n,)
    train: np.ndarray  # indices into x, y
    val: np.ndarray
    test: np.ndarray
    x_new: np.ndarray  # (N_NEW,) truly new data from the same source, never used for any choice
    y_new: np.ndarray

    @property
    def dev(self) -> np.ndarray:
        """Train and validation together: what cross-validation splits up (the test part stays out)."""
        return np.concatenate([self.train, self.val])

    @property
    def parts(self) -> dict[str, np.ndarray]:
        """The three parts' indices by name: "train", "val", "test"."""
        return {"train": self.train, "val": self.val, "test": self.test}

    def train_val(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(x_train, y_train, x_val, y_val): what a network is trained and validated on."""
        return self.x[self.train], self.y[self.train], self.x[self.val], self.y[self.val]


def noisy_curve(n: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n points: x uniform on X_RANGE, y the true curve plus Gaussian noise of std `noise`."""
    if n < 1 or not noise >= 0:
        raise ValueError("invalid:n" if n < 1 else "invalid:noise")
    rng = np.random.default_rng(seed)
    x = rng.uniform(*X_RANGE, n)
    return x, true_curve(x) + rng.normal(0.0, noise, n)


def derived_seed(seed: int, *key: int) -> int:
    """A seed of an independent stream of `seed`, named by key."""
    return int(np.random.SeedSequence(seed, spawn_key=key).generate_state(1)[0])


def curve_data(n: int, noise: float, train: float, val: float, seed: int) -> CurveData:
    """n noisy points of the curve split into train / validation / test, and N_NEW new ones."""
    x, y = noisy_curve(n, noise, seed)
    # new data: the same source with another seed stream, so it never repeats a pool point
    x_new, y_new = noisy_curve(N_NEW, noise, derived_seed(seed, 5))
    tr, va, te = three_way_split(n, train, val, seed)
    return CurveData(x, y, tr, va, te, x_new, y_new)


def odd_test_share(train: float, val: float) -> float | None:
    """The test share 1 - train - val when there is one but it lies outside the notes' TEST_SHARES; else None."""
    test = 1 - train - val
    lo, hi = TEST_SHARES
    return test if 1e-9 < test and not lo - 1e-9 <= test <= hi + 1e-9 else None


def true_curve(x: np.ndarray) -> np.ndarray:
    """The noise-free function the data were drawn around: AMPLITUDE·sin(πx/3 + PHASE)."""
    return AMPLITUDE * np.sin(np.pi * np.asarray(x, dtype=float) / 3.0 + PHASE)


def poly_fit(x: np.ndarray, y: np.ndarray, degree: int) -> Callable[[np.ndarray], np.ndarray]:
    """The least-squares polynomial of a degree through (x, y), as a function of new x."""
    features = feature_map(x, degree, standardize=True)  # scaled by these x only: nothing leaks in
    w, b = least_squares(features(x), y)
    return lambda x_new: features(x_new) @ w + b


def mse(predict: Callable[[np.ndarray], np.ndarray], x: np.ndarray, y: np.ndarray) -> float:
    """Mean squared error of a model on (x, y)."""
    return float(np.mean((predict(x) - y) ** 2))


@dataclass(frozen=True, eq=False)
class FitErrors:
    """One polynomial fitted on the training part, and its MSE on the training, validation and new data."""

    predict: Callable[[np.ndarray], np.ndarray]
    train: float
    val: float
    new: float


def fit_errors(data: CurveData, degree: int) -> FitErrors:
    """The least-squares polynomial of a degree on data's training part, scored on every part but the test."""
    x, y, x_val, y_val = data.train_val()
    f = poly_fit(x, y, degree)
    return FitErrors(f, mse(f, x, y), mse(f, x_val, y_val), mse(f, data.x_new, data.y_new))


@dataclass(frozen=True)
class Sweep:
    """Errors of one polynomial per degree, all fitted on the same training points."""

    degrees: np.ndarray  # 1..max
    train: np.ndarray  # MSE on the training points, per degree
    val: np.ndarray  # MSE on the validation points
    new: np.ndarray  # MSE on the N_NEW new points: what the validation error tries to estimate
    best: int  # the degree with the lowest validation error (the one a validation set would pick)
    interpolating: int | None  # n_train - 1, the degree that passes through every training point, if swept
    draws: int = 1  # data sets averaged (geometric mean per degree); 1: this data set alone
    val_low: np.ndarray | None = None  # the draws' validation error per degree: lower quartile (draws > 1)
    val_high: np.ndarray | None = None  # upper quartile: half of the draws lie between the two
    this_val: np.ndarray | None = None  # the validation error of the shown data set alone (draws > 1)


def degree_sweep(data: CurveData, max_degree: int = MAX_DEGREE) -> Sweep:
    """Fit degrees 1..min(max_degree, n_train - 1) on the training part; errors on train, validation, new."""
    n_train = len(data.train)
    top = min(max_degree, n_train - 1)
    if top < 1:
        raise ValueError("invalid:n")
    x, y = data.x[data.train], data.y[data.train]
    rows = []
    for d in range(1, top + 1):
        f = poly_fit(x, y, d)
        rows.append((mse(f, x, y), mse(f, data.x[data.val], data.y[data.val]), mse(f, data.x_new, data.y_new)))
    train, val, new = np.array(rows).T
    degrees = np.arange(1, top + 1)
    return Sweep(degrees, train, val, new, int(degrees[np.argmin(val)]), top if top == n_train - 1 else None)


def sweep_draw_seeds(seed: int, draws: int = SWEEP_DRAWS) -> list[int]:
    """The seeds of the sweep's data sets: `seed` itself (the data set shown), then draws - 1 independent ones."""
    return [seed] + [derived_seed(seed, 7, r) for r in range(1, draws)]


def capacity_sweep(n: int, noise: float, train: float, val: float, seed: int, draws: int = SWEEP_DRAWS,
                   max_degree: int = MAX_DEGREE) -> Sweep:
    """degree_sweep of `draws` data sets drawn like curve_data(n, noise, train, val, seed), the first one that.

    One small validation part is noisy: with 8 points, its error can rank degree 2 below degree 1 or put a
    false dip at degree 12. Per degree, the errors of the draws are averaged on the log scale the sweep is
    drawn on (the geometric mean: the mean of log MSE), so the few draws whose high-degree fit explodes do
    not swamp the rest. Training error stays non-increasing (each draw's is, and so is a mean of logs).
    best is the degree of the lowest averaged validation error; the test parts are never looked at.
    """
    if draws < 1:
        raise ValueError("invalid:draws")
    sweeps = [degree_sweep(curve_data(n, noise, train, val, s), max_degree) for s in sweep_draw_seeds(seed, draws)]
    if draws == 1:
        return sweeps[0]

    def typical(values: np.ndarray) -> np.ndarray:
        return np.exp(np.log(np.maximum(values, SWEEP_FLOOR)).mean(axis=0))

    train_all, val_all, new_all = (np.array([getattr(s, part) for s in sweeps]) for part in ("train", "val", "new"))
    val_mean = typical(val_all)
    first = sweeps[0]
    return Sweep(first.degrees, typical(train_all), val_mean, typical(new_all), int(first.degrees[np.argmin(val_mean)]),
                 first.interpolating, draws, np.percentile(val_all, 25, axis=0), np.percentile(val_all, 75, axis=0),
                 first.val)


@dataclass(frozen=True, eq=False)
class Fold:
    """One round of cross-validation: which points trained, which validated, and the score."""

    train: np.ndarray  # indices into the CurveData pool
    val: np.ndarray
    score: float  # validation MSE of the polynomial fitted on this fold's training points
    predict: Callable[[np.ndarray], np.ndarray]  # that polynomial


def cross_validate(data: CurveData, degree: int, k: int, seed: int) -> list[Fold]:
    """K-fold CV of one polynomial degree on the development part (train + validation); test stays out."""
    dev = data.dev
    folds = []
    for tr, va in kfold_indices(len(dev), k, seed):
        tr, va = dev[tr], dev[va]
        f = poly_fit(data.x[tr], data.y[tr], degree)  # fewer points than terms: the smallest-norm solution
        folds.append(Fold(tr, va, mse(f, data.x[va], data.y[va]), f))
    return folds


def cv_summary(folds: list[Fold]) -> tuple[float, float]:
    """Mean and (population) standard deviation of the folds' scores."""
    scores = np.array([f.score for f in folds])
    return float(scores.mean()), float(scores.std())


def plane_grid(resolution: int) -> np.ndarray:
    """Points (resolution², 2) of an even grid over sim.core.data's plane [-6, 6]², where a boundary is drawn."""
    axis = np.linspace(-DOMAIN, DOMAIN, resolution)
    gx, gy = np.meshgrid(axis, axis)
    return np.column_stack([gx.ravel(), gy.ravel()])


def flip_labels(y: np.ndarray, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Binary labels with round(fraction·n) of them flipped at random, and the mask of flipped ones."""
    if not 0 <= fraction <= 1:
        raise ValueError("invalid:flip")
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(6,)))
    flipped = np.zeros(len(y), dtype=bool)
    flipped[rng.choice(len(y), round(fraction * len(y)), replace=False)] = True
    return np.where(flipped, 1 - y, y), flipped


NOISE_CELLS = plane_grid(NOISE_GRID)  # where the label-noise run's boundary is drawn


@dataclass(frozen=True, eq=False)
class NoisyPoints:
    """The label-noise run's data: training points with some labels flipped, validation points left clean."""

    X_train: np.ndarray  # (n, 2)
    y_train: np.ndarray  # (n,) 0/1, flipped where `flipped`
    flipped: np.ndarray  # (n,) bool
    X_val: np.ndarray
    y_val: np.ndarray  # clean

    def train_val(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.X_train, self.y_train, self.X_val, self.y_val


def noisy_points(dataset: str, flip: float, seed: int, n: int = NOISE_POINTS) -> NoisyPoints:
    """n two-class points of sim.core.data: half to train (a share `flip` of their labels flipped), half to validate."""
    X, y = make_classification(dataset, n, SPREAD.get(dataset, 0.0), seed)
    tr, va = split(n, 0.5, seed)
    y_noisy, flipped = flip_labels(y[tr], flip, seed)
    return NoisyPoints(X[tr], y_noisy, flipped, X[va], y[va])


# ---------- the live network ----------
VIEWS = ("curve", "weights", "boundary")  # what a live frame draws of the model (FitRun)


def weight_histogram(weights: np.ndarray, bins: int = WEIGHT_BINS) -> dict:
    """The weights binned on [-reach, reach] (reach: the largest |weight|, at least 1e-3), those exactly 0 apart:
    {"reach", "counts" ((bins,) int32: the non-zero weights per bin), "zeros", "size" (every weight)}."""
    reach = max(float(np.abs(weights).max()), 1e-3)
    counts, _ = np.histogram(weights[weights != 0], np.linspace(-reach, reach, bins + 1))
    return {"reach": reach, "counts": counts.astype(np.int32), "zeros": int((weights == 0).sum()),
            "size": int(weights.size)}


class FitRun:
    """A network's run (sim.fitting.fit.FitTrainer) as a live run (sim.core.live.LiveRun): a step is an epoch tried,
    and it stops when it is finished (early stopping, divergence, max_epochs). `steps` counts the epoch that
    diverged too (the trainer does not count one it undid), so the frame of a step never changes once taken.

    Its frame, in no language: "epoch", "best_epoch", "best_val", "last" (the latest epoch's losses, and accuracies
    for binary labels), "diverged", "stopped", "finished", and "curves" (epochs, train, val: the losses, or the
    accuracies for the "boundary" view, at most LIVE_CURVE_POINTS epochs, float32); then what `view` draws of the
    model: "curve" its predictions over GRID ("pred", float32), "weights" those and the weights' histogram
    ("weights"), "boundary" its class in each of NOISE_CELLS ("classes", bits packed by np.packbits).
    """

    def __init__(self, trainer: FitTrainer, view: str):
        if view not in VIEWS:
            raise ValueError(f"invalid:view {view}")
        self.trainer, self.view = trainer, view
        self.steps = trainer.epoch

    @property
    def stopped(self) -> bool:
        return self.trainer.finished

    def advance(self, n: int) -> None:
        for _ in range(n):
            if self.trainer.finished:
                return
            self.trainer.step(1)
            self.steps += 1

    def shared(self) -> tuple:
        return self.trainer.shared()

    def frame(self) -> dict:
        tr = self.trainer
        key = "acc" if self.view == "boundary" else "loss"
        pick = decimate(tr.history, "epoch", (f"train_{key}", f"val_{key}"), LIVE_CURVE_POINTS)
        out = {"epoch": tr.epoch, "best_epoch": tr.best_epoch, "best_val": tr.best_val, "last": dict(tr.history[-1]),
               "diverged": tr.diverged, "stopped": tr.stopped, "finished": tr.finished,
               "curves": (np.array([h["epoch"] for h in pick], dtype=np.int32),
                          np.array([h[f"train_{key}"] for h in pick], dtype=np.float32),
                          np.array([h[f"val_{key}"] for h in pick], dtype=np.float32))}
        if self.view == "boundary":
            out["classes"] = np.packbits(tr.predict(NOISE_CELLS) > 0.5)
        else:
            out["pred"] = tr.predict(GRID).astype(np.float32)
        if self.view == "weights":
            out["weights"] = weight_histogram(tr.weights())
        return out
