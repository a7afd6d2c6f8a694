"""Data leakage, measured: three ways a test score flatters a model, each next to truly new data.

Each scenario builds a pool of labelled data, evaluates a k-nearest-neighbours classifier with a leaky
protocol and with an honest one, and scores both on the test part of the pool (the score you would
report) and on new data drawn the way deployment would meet it. Nothing is hard-coded: the gaps come
from fitting and scoring, and each scenario has a knob at whose lowest setting there is nothing to leak.
Every number is the mean over REPEATS independent draws (twice that for the time series), so one
lucky split does not decide it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

K_NEIGHBOURS = 5  # odd, so a vote between two classes never ties
REPEATS = 5


def knn_predict(X_train: np.ndarray, y_train: np.ndarray, X: np.ndarray, k: int = K_NEIGHBOURS) -> np.ndarray:
    """Majority label (0/1) of the k nearest training points, by Euclidean distance, for each row of X."""
    d2 = np.zeros((len(X), len(X_train)))  # (m, n); column by column: with 4 features this beats a matmul
    for j in range(X.shape[1]):
        d2 += np.subtract.outer(X[:, j], X_train[:, j]) ** 2
    nearest = np.argpartition(d2, k - 1, axis=1)[:, :k]  # (m, k)
    return (y_train[nearest].mean(axis=1) > 0.5).astype(np.int64)


def standardizer(X: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """The map x -> (x - mean) / std with the statistics of X (a constant column keeps std 1)."""
    mean, std = X.mean(axis=0), X.std(axis=0)
    std = np.where(std > 0, std, 1.0)
    return lambda A: (A - mean) / std


def knn_score(X_fit: np.ndarray, X_train: np.ndarray, y_train: np.ndarray, X: np.ndarray, y: np.ndarray) -> float:
    """Accuracy on (X, y) of k-NN trained on (X_train, y_train), features standardised with X_fit's statistics."""
    scale = standardizer(X_fit)
    return float(np.mean(knn_predict(scale(X_train), y_train, scale(X)) == y))


@dataclass(frozen=True)
class Scores:
    """One protocol's scores, means over the draws."""

    reported: float  # accuracy on the test part of the pool: what the evaluation would report
    new: float  # accuracy on truly new data: what deployment gets
    spread: float  # standard deviation of (reported - new) over the draws: how much one draw can wobble

    @property
    def gap(self) -> float:
        """How much the reported accuracy flatters: reported - new (a share; 0.1 is 10 points)."""
        return self.reported - self.new


@dataclass(frozen=True, eq=False)
class Leak:
    """Both protocols of a scenario, and one draw of its data for the picture."""

    leaky: Scores
    honest: Scores
    example: dict  # arrays of the first draw (see each scenario for the keys)
    draws: int  # independent draws the scores are means over


def _mean_scores(draws: list[tuple[float, float, float, float]]) -> tuple[Scores, Scores]:
    """Per protocol, the mean reported and new-data accuracy over the draws, and the spread of their gap."""
    d = np.array(draws)  # (REPEATS, 4): leaky reported, leaky new, honest reported, honest new
    return tuple(Scores(float(d[:, i].mean()), float(d[:, i + 1].mean()), float((d[:, i] - d[:, i + 1]).std()))
                 for i in (0, 2))


def _seeds(seed: int, scenario: int, repeats: int = REPEATS) -> list[np.random.Generator]:
    return [np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(scenario, r))) for r in range(repeats)]


# ---------- 1. standardising before the split ----------
def _site(rng: np.random.Generator, n: int, loud: int | None, strength: float) -> tuple[np.ndarray, np.ndarray]:
    """Records of one hospital: two measurements that carry the diagnosis, two spare ones that do not.

    The scanner of a hospital may be noisy in one spare measurement (`loud`: 2 or 3), by a factor strength.
    """
    X = rng.normal(size=(n, 4))
    y = (X[:, 0] + X[:, 1] + rng.normal(0, 0.5, n) > 0).astype(np.int64)
    if loud is not None:
        X[:, loud] *= strength
    return X, y


def scaling_leak(strength: float, seed: int, n_train: int = 300, n_test: int = 150, n_new: int = 1000) -> Leak:
    """Standardisation statistics from the whole pool (leaky) or from the training hospitals only (honest).

    The pool is split by hospital: training hospitals, and one test hospital whose scanner is noisy in
    spare measurement 2. New patients come from another hospital, noisy in spare measurement 3.
    Why the leaky score is too good: k-NN counts every feature in units of its standard deviation. A
    scaler fitted on the pool has seen the test hospital's noisy measurement, gives it a large std and
    so turns exactly that noise down, for those patients. A new hospital's noise sits in a measurement
    the scaler never saw inflated, so nothing turns it down, and the neighbours are found by noise.
    The honest scaler corrects neither, so its test score already shows what new data will get.
    At strength 1 no scanner is noisy and both protocols agree.
    """
    draws, example = [], None
    for rng in _seeds(seed, 1):
        X_tr, y_tr = _site(rng, n_train, None, strength)
        X_te, y_te = _site(rng, n_test, 2, strength)
        X_new, y_new = _site(rng, n_new, 3, strength)
        pool = np.vstack([X_tr, X_te])
        draws.append((knn_score(pool, X_tr, y_tr, X_te, y_te), knn_score(pool, X_tr, y_tr, X_new, y_new),
                      knn_score(X_tr, X_tr, y_tr, X_te, y_te), knn_score(X_tr, X_tr, y_tr, X_new, y_new)))
        example = example or {"train": X_tr[:, 2:], "test": X_te[:, 2:], "new": X_new[:300, 2:]}
    return Leak(*_mean_scores(draws), example, len(draws))


# ---------- 2. several records per person ----------
def _people(rng: np.random.Generator, n_people: int, records: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`records` records of each of n_people people: features X, the person's label y, and person ids.

    One feature is a noisy measurement of what decides the label; three describe the person (like a face
    or a voice) and say nothing about the label, but are nearly the same in every record of that person.
    """
    signal = rng.normal(size=n_people)
    label = (signal + rng.normal(0, 0.8, n_people) > 0).astype(np.int64)  # partly explained by the signal
    looks = rng.normal(size=(n_people, 3))
    person = np.repeat(np.arange(n_people), records)
    X = np.hstack([signal[person, None], looks[person]]) + rng.normal(0, 0.15, (len(person), 4))
    return X, label[person], person


def group_leak(records: int, seed: int, n_records: int = 1000, n_new: int = 1000, test_share: float = 0.25) -> Leak:
    """Records split at random (leaky) or people split into groups, all records of a person on one side (honest).

    Why the leaky score is too good: with a random split, most test records have records of the same
    person in the training part, nearly identical in the person-describing features. k-NN finds them
    and copies that person's label, which it has simply memorised. New people have no such twin, and the
    score falls to what the one informative feature supports. A group split tests on unseen people only,
    exactly like deployment. With one record per person the two splits are the same.
    The pool holds about n_records records, and at least 50 people so the group split has some to test on.
    """
    n_people = max(50, -(-n_records // records))
    draws, example = [], None
    for rng in _seeds(seed, 2):
        X, y, person = _people(rng, n_people, records)
        X_new, y_new, _ = _people(rng, -(-n_new // records), records)  # about n_new records of new people
        order = rng.permutation(len(y))
        random_test = np.zeros(len(y), dtype=bool)
        random_test[order[:round(test_share * len(y))]] = True
        group_test = np.isin(person, rng.permutation(n_people)[:round(test_share * n_people)])
        scores = []
        for test in (random_test, group_test):
            tr = ~test
            scores += [knn_score(X[tr], X[tr], y[tr], X[test], y[test]), knn_score(X[tr], X[tr], y[tr], X_new, y_new)]
        draws.append(tuple(scores))
        if example is None:
            example = {"random_test": random_test.reshape(n_people, records),
                       "group_test": group_test.reshape(n_people, records)}
    return Leak(*_mean_scores(draws), example, len(draws))


# ---------- 3. a time series ----------
DRIFT_CHANNELS, DRIFT_PERSISTENCE = 4, 0.99


def _days(rng: np.random.Generator, n: int, spell: float, burn_in: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """n consecutive days: features X and a 0/1 weather regime y that lasts `spell` days on average (spell >= 2).

    One feature is a noisy reading of the regime. The others drift slowly and say nothing about it
    (like a sensor's calibration, or the level of a lake): they only tell which days are close in time.
    """
    total = n + burn_in
    switch = rng.random(total) < 1.0 / spell  # a regime ends with probability 1/spell each day
    y = (rng.random() < 0.5) ^ (np.cumsum(switch) % 2 == 1)
    shocks = rng.normal(0, np.sqrt(1 - DRIFT_PERSISTENCE ** 2), (total, DRIFT_CHANNELS))
    drift = np.zeros((total, DRIFT_CHANNELS))
    for t in range(1, total):
        drift[t] = DRIFT_PERSISTENCE * drift[t - 1] + shocks[t]
    X = np.column_stack([y + rng.normal(0, 1.0, total), drift])
    return X[burn_in:], y[burn_in:].astype(np.int64)


def time_leak(spell: float, seed: int, n_pool: int = 1000, n_new: int = 500, test_share: float = 0.3,
              gap: int = 60) -> Leak:
    """Days shuffled before the split (leaky) or the past for training and the future for testing (honest).

    New data are the days after the pool. Why the leaky score is too good: with shuffled days, a test
    day's neighbours in the slowly drifting features are the day before and the day after, both in the
    training part and almost always in the same weather spell, so k-NN reads the answer off tomorrow.
    For the future there is no tomorrow in the training data. The chronological split leaves `gap` days
    out between the last training day and the first test day (an embargo), so that the test does not
    begin inside the last training spell, which new data far in the future never could. At spell 2 a
    day's regime is a coin flip independent of the day before; neighbours in time share nothing and
    the two splits agree.
    Days in one spell share their label, so a few hundred days hold only a few dozen independent
    answers: this scenario averages twice as many draws as the others.
    """
    draws, example = [], None
    for rng in _seeds(seed, 3, 2 * REPEATS):
        X_all, y_all = _days(rng, n_pool + n_new, spell)
        X, y, X_new, y_new = X_all[:n_pool], y_all[:n_pool], X_all[n_pool:], y_all[n_pool:]
        n_test = round(test_share * n_pool)
        shuffled_test = np.zeros(n_pool, dtype=bool)
        shuffled_test[rng.permutation(n_pool)[:n_test]] = True
        future_test = np.arange(n_pool) >= n_pool - n_test
        future_train = np.arange(n_pool) < n_pool - n_test - gap
        scores = []
        for test, tr in ((shuffled_test, ~shuffled_test), (future_test, future_train)):
            scores += [knn_score(X[tr], X[tr], y[tr], X[test], y[test]), knn_score(X[tr], X[tr], y[tr], X_new, y_new)]
        draws.append(tuple(scores))
        if example is None:
            example = {"y": y, "shuffled_test": shuffled_test, "future_test": future_test, "future_train": future_train}
    return Leak(*_mean_scores(draws), example, len(draws))


SCENARIOS = {"scaling": scaling_leak, "group": group_leak, "time": time_leak}


def leak(scenario: str, knob: float, seed: int) -> Leak:
    """The scenario's Leak at its knob's value (see scaling_leak, group_leak, time_leak)."""
    if scenario not in SCENARIOS:
        raise ValueError("invalid:scenario")
    return SCENARIOS[scenario](knob, seed)
