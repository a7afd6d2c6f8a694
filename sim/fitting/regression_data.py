"""Seeded 1-D regression data (and the two-day temperature example), outliers, and CSV uploads.

Every set has a natural unit ("scale") in which its noise and outlier sizes are given, so a noise of
0.3 looks alike on a line in [−3, 3] and on house prices in units of 10,000 yuan.
Uploads reuse sim/core/upload.py's reading and checks; their errors are UploadError(code, params).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sim.core.upload import UploadError, data_rows, numbers, pick_columns, read_table
from sim.fitting.regression import least_squares, robust_spread

DATASETS = ("linear", "quadratic", "sine", "area_price", "study_score", "temperature")
# the course notes' worked example: inputs (n, 1), targets and the learning rate of its one written-out update
NOTES_EXAMPLE = (np.array([[1.0], [2.0]]), np.array([2.0, 3.0]), 0.1)
OUTLIER_SHARE = 0.3  # outliers are drawn among the largest 30 % of x, where a point pulls a line hardest


@dataclass(frozen=True)
class _Curve:
    lo: float  # x is uniform on [lo, hi]
    hi: float
    truth: Callable[[np.ndarray], np.ndarray]  # the noise-free trend
    scale: float  # noise 1.0 and outlier size 1.0 mean this much, in target units


_CURVES = {
    "linear": _Curve(-3.0, 3.0, lambda x: 1.5 * x + 1.0, 1.5),
    "quadratic": _Curve(-3.0, 3.0, lambda x: 0.5 * x * x - x - 1.0, 1.5),
    "sine": _Curve(-3.0, 3.0, lambda x: 2.0 * np.sin(np.pi * x / 3.0), 1.0),
    "area_price": _Curve(30.0, 150.0, lambda x: 1.6 * x + 25.0, 20.0),  # m² -> 10,000 yuan
    "study_score": _Curve(0.0, 10.0, lambda x: 95.0 - 55.0 * np.exp(-x / 4.0), 8.0),  # hours -> points, saturating
}
TEMPERATURE_SCALE = 5.0  # °C: the weather's day-to-day anomaly at noise 1.0
# column names (i18n suffixes) of the inputs and then the target
COLUMNS = {"linear": ("x", "y"), "quadratic": ("x", "y"), "sine": ("x", "y"), "area_price": ("area", "price"),
           "study_score": ("hours", "score"), "temperature": ("day_before", "yesterday", "tomorrow")}


@dataclass(frozen=True, eq=False)
class RegressionData:
    """Inputs, targets, which points are outliers, and what the columns are called."""

    x: np.ndarray  # (n, p) float64 inputs, p = 1, or 2 for the temperature example
    y: np.ndarray  # (n,) float64 targets
    outlier: np.ndarray  # (n,) bool: True for points moved as outliers
    columns: tuple[str, ...]  # p input names and the target's: i18n suffixes, or an upload's header
    name: str = ""  # the generated set's name in DATASETS; "" for an upload
    uploaded: bool = False  # columns are the user's own header names
    day: np.ndarray | None = None  # (n,) day of the target, for the temperature series
    scale: float = 1.0  # the set's unit of noise, outlier size and Huber's δ, in target units


def truth(name: str, x: np.ndarray) -> np.ndarray | None:
    """The noise-free trend of a 1-D set at x; None for the temperature series (no such curve)."""
    return _CURVES[name].truth(x) if name in _CURVES else None


def _temperature(rng: np.random.Generator, n: int, noise: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Daily temperatures: a seasonal wave plus weather that persists (AR(1)); (day-2, day-1) -> day."""
    days = rng.integers(0, 365) + np.arange(n + 2)
    anomaly = np.zeros(n + 2)
    shocks = rng.normal(0.0, noise * TEMPERATURE_SCALE, n + 2)
    for d in range(1, n + 2):
        anomaly[d] = 0.7 * anomaly[d - 1] + shocks[d]
    temp = 14.0 + 11.0 * np.sin(2 * np.pi * (days - 105) / 365) + anomaly
    return np.stack([temp[:-2], temp[1:-1]], axis=1), temp[2:], days[2:]


def make_dataset(name: str, n: int, noise: float, seed: int, outliers: int = 0,
                 outlier_size: float = 0.0) -> RegressionData:
    """n points with Gaussian noise of std noise·scale, then `outliers` of them moved by outlier_size·scale.

    The outliers come from a random stream of their own, so adding one leaves every other point as it was.
    """
    if name not in DATASETS:
        raise ValueError("invalid:dataset")
    rng = np.random.default_rng(seed)
    day = None
    if name == "temperature":
        x, y, day = _temperature(rng, n, noise)
        scale = TEMPERATURE_SCALE
    else:
        curve = _CURVES[name]
        x = rng.uniform(curve.lo, curve.hi, (n, 1))
        y = curve.truth(x[:, 0]) + rng.normal(0.0, noise * curve.scale, n)
        scale = curve.scale
    outlier = np.zeros(n, dtype=bool)
    k = min(outliers, n)
    if k:
        pick_rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2,)))
        candidates = np.argsort(x[:, -1])[-max(k, int(np.ceil(OUTLIER_SHARE * n))):]
        outlier[pick_rng.choice(candidates, k, replace=False)] = True
        y = y + outlier * outlier_size * scale
    return RegressionData(x, y, outlier, COLUMNS[name], name, day=day, scale=scale)


def parse_regression_csv(raw: bytes) -> RegressionData:
    """A CSV with a header: one input and a target, or two inputs and a target (the temperature shape).

    The target is the column named label, y, class or target, else the last one. Values keep their
    units. Raises UploadError (codes as in sim/core/upload.py).
    """
    header, rows = read_table(raw)
    target, inputs = pick_columns(header, 1, 2)
    rows = data_rows(rows, len(header))
    x = np.column_stack([numbers(rows, c, header[c], "non_numeric") for c in inputs])
    y = numbers(rows, target, header[target], "label_not_numeric")
    for c, col in zip(inputs, x.T, strict=True):
        if np.ptp(col) == 0:
            raise UploadError("constant_feature", {"column": header[c]})
    if np.ptp(y) == 0:
        raise UploadError("constant_label", {"column": header[target]})
    with np.errstate(all="ignore"):  # the unit of an upload: how far its points stray from a straight fit
        try:
            w, b = least_squares(x, y)
            scale = robust_spread(x @ w + b - y)
        except np.linalg.LinAlgError:  # values so large that the fit overflows; the page says so later
            scale = 1.0
    return RegressionData(x, y, np.zeros(len(y), dtype=bool), tuple(header[i] for i in inputs) + (header[target],),
                          uploaded=True, scale=scale if np.isfinite(scale) else 1.0)
