"""What the regression and generalisation labs say of their runs and computations, read off the numbers they show
beside them: each function returns a case (the page's i18n key ends with it) and the numbers that decided it, so a
sentence never assumes an outcome the run did not have (tests/test_regression_claims.py and
tests/test_generalization_claims.py check the two agree over seeds and settings)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sim.core.claims import compared
from sim.fitting.leakage import Scores
from sim.fitting.regression import GDRun

SAME = 1.01  # two errors within 1 % of each other are "about the same" (the pages print 3 or 4 significant digits)
LEVEL = 1.25  # two shifts or misses within this factor of each other are "about equal"
RISE = 1.1  # a validation error more than 10 % above its lowest has "risen" (below: "level")
CLIMB = 2.0  # the averaged validation error at least twice its lowest past it: a clear U
ROUNDING = 1e-10  # a validation MSE below this is rounding error: the polynomial matches the noise-free curve
MEMORISED, CLEAN = 0.8, 0.2  # a network that answers the flipped label on at least 80 % of the flipped points has
# memorised them; on at most 20 % (the true class on the rest), it has not
NOTICE = 0.03  # a leakage gap (reported − new accuracy) under 3 points is "close"
SIGNIFICANT = 2.0  # ... and so is one within this many standard errors of the draws' mean


# ---------- regression ----------
def rule_verdict(rule_rmse: float, fit_rmse: float) -> str:
    """The fitted weights against the rule "tomorrow = the mean of the two days before": "better" (lower RMSE),
    "worse" or "level" (within SAME)."""
    return {"less": "better", "more": "worse", "level": "level"}[compared(fit_rmse, rule_rmse, SAME)]


def outlier_verdict(mse_shift: float, huber_shift: float) -> str:
    """How far the outliers move the Huber fit against the squared-error fit: "less", "more" or "level"."""
    return compared(huber_shift, mse_shift, LEVEL)


def divergence_case(run: GDRun) -> str:
    """Why a gradient-descent run stopped: "overflow" (its features or its starting loss are not finite: nothing
    could be trained), "overflowed" (no finite loss above the start was recorded: the step that stopped it overflowed,
    so there is no grown loss to quote), "grew" (squared error: the loss grew epoch after epoch, each step
    overshooting by more than the last) or "capped" (Huber, absolute error: each point's pull is capped, so the loss
    does not grow exponentially; long steps left it above regression.DIVERGED times its start)."""
    if not (np.isfinite(run.X).all() and math.isfinite(run.start_loss)):
        return "overflow"
    if not run.history[-1] > run.start_loss:
        return "overflowed"
    return "grew" if run.config.model.loss == "mse" else "capped"


# ---------- generalisation: the polynomials ----------
@dataclass(frozen=True)
class CapacityReading:
    """What the averaged validation error against degree shows (sim.fitting.generalization.Sweep)."""

    case: str  # "u" (it climbs to CLIMB× its lowest past it), "slight" (by RISE to CLIMB), "level" (less: no degree
    # in the sweep over-fits), "rounding" (its lowest is below ROUNDING: the polynomial matches the true curve)
    best: int  # the degree of the lowest averaged validation error
    low: float  # that error
    peak: int  # the degree of the highest averaged validation error past `best` (best itself when there is none)
    high: float  # that error
    top: int  # the highest degree swept
    under: bool  # there are degrees below `best`: the sweep shows under-fitting
    over: bool  # the error rises past `best` ("u" or "slight"): the sweep shows over-fitting


def capacity_reading(degrees: np.ndarray, val: np.ndarray) -> CapacityReading:
    """Read the averaged validation error `val` per degree (`degrees`, ascending)."""
    m = int(np.argmin(val))
    after = val[m:]
    p = m + int(np.argmax(after))
    low, high = float(val[m]), float(val[p])
    if low < ROUNDING:
        case = "rounding"
    else:
        case = "u" if high >= CLIMB * low else "slight" if high > RISE * low else "level"
    return CapacityReading(case, int(degrees[m]), low, int(degrees[p]), high, int(degrees[-1]), m > 0,
                           case in ("u", "slight"))


@dataclass(frozen=True)
class CVReading:
    """Which estimate of the new-data error is closer: K-fold cross-validation's mean or the one validation split."""

    case: str  # "cv" (closer by more than LEVEL), "holdout" or "level"
    cv_miss: float  # |CV mean − new-data MSE|
    holdout_miss: float  # |hold-out MSE − new-data MSE|


def cv_reading(cv_mean: float, holdout: float, new: float) -> CVReading:
    cv_miss, holdout_miss = abs(cv_mean - new), abs(holdout - new)
    case = {"less": "cv", "more": "holdout", "level": "level"}[compared(cv_miss, holdout_miss, LEVEL)]
    return CVReading(case, cv_miss, holdout_miss)


# ---------- generalisation: the live networks ----------
@dataclass(frozen=True)
class CurveReading:
    """What a curve run's losses show at the epoch on screen (FitTrainer.history: one record per epoch)."""

    case: str  # "start" (epoch 0), "falling" (validation loss at its lowest now), "not_yet" (never below its start:
    # the first epochs move the network towards the training points before the validation ones follow), "overfit"
    # (validation loss above RISE× its lowest while training loss fell since), "both" (validation rose, training did
    # not fall) or "level"
    epoch: int
    best: int  # the epoch of the lowest validation loss
    best_val: float
    val: float  # the validation loss now
    best_train: float  # the training loss at the best epoch
    train: float  # the training loss now


def curve_reading(history: Sequence[dict], best_epoch: int, best_val: float) -> CurveReading:
    """Read a run's history (records with "epoch", "train_loss", "val_loss") against its best epoch. A bounded
    history (sim.core.history.bound) keeps the record of the lowest validation loss: min–max thinning keeps it."""
    last = history[-1]
    at_best = min(history, key=lambda h: abs(h["epoch"] - best_epoch))
    epoch, val, train, best_train = last["epoch"], last["val_loss"], last["train_loss"], at_best["train_loss"]
    if epoch == 0:
        case = "start"
    elif best_epoch == epoch:
        case = "falling"
    elif best_epoch == 0:
        case = "not_yet"
    elif val > RISE * best_val:
        case = "overfit" if train < best_train else "both"
    else:
        case = "level"
    return CurveReading(case, epoch, best_epoch, best_val, val, best_train, train)


@dataclass(frozen=True)
class NoiseReading:
    """What the label-noise run does with the flipped training labels at the epoch on screen."""

    case: str  # "none" (no label flipped), "memorised" (it answers the flipped label on at least MEMORISED of the
    # flipped points), "clean" (on at most CLEAN of them: the true class on the rest) or "partly" (in between)
    memorised: int  # flipped points on which the network answers their (flipped) label
    flipped: int


def noise_reading(predicted: np.ndarray, y_train: np.ndarray, flipped: np.ndarray) -> NoiseReading:
    """predicted: the network's class (0/1) of each training point; y_train: their labels, flipped where `flipped`."""
    n = int(flipped.sum())
    m = int((predicted[flipped] == y_train[flipped]).sum())
    case = "none" if n == 0 else "memorised" if m >= MEMORISED * n else "clean" if m <= CLEAN * n else "partly"
    return NoiseReading(case, m, n)


# ---------- generalisation: leakage ----------
def protocol_verdict(scores: Scores, draws: int) -> str:
    """One protocol's reported accuracy against new data's: "flatters" (above by at least NOTICE and by more than
    SIGNIFICANT standard errors of the draws' mean), "under" (below by as much) or "close"."""
    margin = max(NOTICE, SIGNIFICANT * scores.spread / math.sqrt(draws))
    return "flatters" if scores.gap >= margin else "under" if scores.gap <= -margin else "close"


def leak_mechanism(scenario: str, example: dict) -> dict[str, float]:
    """What makes a scenario's leaky protocol flatter, measured on its first draw (Leak.example):

    "scaling": {"a", "b"}: the pool's standard deviation of spare measurement A (the test hospital's noisy one) and of
    B (the new hospital's), each over the training hospitals' own: how much more the leaky scaler divides them by;
    "group": {"both"}: the share of the people with a record in the random split's test part who also have records
    in its training part (the split by person has none);
    "time": {"near", "same"}: the share of the shuffled split's test days with a training day right before or after
    them, and the share of those neighbours in the test day's regime.
    """
    if scenario == "scaling":
        pool = np.vstack([example["train"], example["test"]])
        a, b = pool.std(axis=0) / example["train"].std(axis=0)
        return {"a": float(a), "b": float(b)}
    if scenario == "group":
        test = example["random_test"]  # (people, records)
        tested = test.any(axis=1)
        return {"both": float((tested & ~test.all(axis=1)).sum() / max(tested.sum(), 1))}
    if scenario == "time":
        y, test = example["y"], example["shuffled_test"]
        inner = np.flatnonzero(test[1:-1]) + 1  # test days with a day on each side
        pairs = [(d, n) for d in inner for n in (d - 1, d + 1) if not test[n]]  # (test day, a training neighbour)
        near = len({d for d, _ in pairs}) / max(len(inner), 1)
        same = sum(y[d] == y[n] for d, n in pairs) / max(len(pairs), 1)
        return {"near": float(near), "same": float(same)}
    raise ValueError("invalid:scenario")

