"""sim.core.history: min–max decimation against a plain-loop reference, and histories that stay bounded."""
import math

import numpy as np
import pytest

from sim.core.history import CAP, HEAD, RECENT, bound, decimate, kept_after_compaction, minmax_indices
from sim.fitting.regression import GDConfig, GDRun
from sim.nets.training import ClassifierConfig, Trainer


def reference_indices(x, columns, max_points):
    """Min–max decimation written out with loops: equal-width x buckets, each column's min and max (earliest of
    equal values, NaN never chosen while a number is there), plus the first and the last point."""
    n = len(x)
    if n <= max_points:
        return list(range(n))
    columns = [list(c) for c in zip(*columns, strict=True)]
    columns = [c for c in columns if not all(math.isnan(v) for v in c)]
    buckets = (max_points - 2) // (2 * max(len(columns), 1))
    members = [[] for _ in range(buckets)]
    for i, xi in enumerate(x):
        b = 0 if x[-1] == x[0] else int((xi - x[0]) / (x[-1] - x[0]) * buckets)
        members[min(b, buckets - 1)].append(i)
    keep = {0, n - 1}
    for c in columns:
        for idx in members:
            if not idx:
                continue
            numbers = [i for i in idx if not math.isnan(c[i])] or idx
            keep.add(min(numbers, key=lambda i: (c[i], i)))
            keep.add(min(numbers, key=lambda i: (-c[i], i)))
    return sorted(keep)


@pytest.mark.parametrize("seed", range(5))
def test_minmax_matches_the_loop_reference(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 3000))
    x = np.cumsum(rng.integers(1, 4, n)).astype(float)  # uneven steps, like a compacted history
    columns = rng.integers(0, 20, (n, 3)).astype(float)  # small integers: many ties
    columns[rng.random((n, 3)) < 0.1] = np.nan
    columns[:, 2] = np.nan  # a series with no value at all is ignored
    for max_points in (10, 57, 200):
        got = minmax_indices(x, columns, max_points)
        assert got.tolist() == reference_indices(x.tolist(), columns.tolist(), max_points)
        assert len(got) <= max_points


def test_decimation_keeps_first_last_extremes_and_a_spike():
    n = 100_000
    loss = 1.0 / np.arange(1, n + 1)
    loss[61_234] = 50.0  # one diverging epoch in the middle of a long run
    records = [{"epoch": e + 1, "train_loss": float(v), "test_loss": None} for e, v in enumerate(loss)]
    pick = decimate(records, "epoch", ("train_loss", "test_loss"), max_points=300)
    assert len(pick) <= 300
    assert pick[0] is records[0] and pick[-1] is records[-1]
    kept = [r["train_loss"] for r in pick]
    assert max(kept) == 50.0 and min(kept) == loss.min()
    assert [r["epoch"] for r in pick] == sorted(r["epoch"] for r in pick)  # still in order


def test_short_histories_are_kept_whole():
    records = [{"step": i, "loss": 1.0} for i in range(10)]
    assert decimate(records, "step", ("loss",), 10) == records
    assert kept_after_compaction(list(range(CAP)), [0.0] * CAP) is None


def test_bound_keeps_the_start_and_the_recent_part_in_full():
    records = []
    for e in range(20_000):
        records.append({"epoch": e, "loss": math.sin(e / 50)})
        bound(records, "epoch", ("loss",))
        assert len(records) <= CAP
    epochs = [r["epoch"] for r in records]
    assert epochs[:HEAD] == list(range(HEAD))
    assert epochs[-RECENT:] == list(range(20_000 - RECENT, 20_000))
    assert epochs == sorted(epochs)
    # the middle is thinned but still covers the run: no gap wider than 2 % of it
    assert max(np.diff(epochs)) < 20_000 * 0.02


def test_a_long_classification_run_keeps_a_bounded_history():
    t = Trainer(ClassifierConfig(n=20, batch_size=30, hidden=()))  # one mini-batch per epoch: fast
    t.step(10_000)
    assert t.epoch == 10_000 and not t.diverged
    assert len(t.history) <= CAP
    assert t.history[-1]["epoch"] == 10_000 and t.history[0]["epoch"] == 1
    assert [h["epoch"] for h in t.history[-RECENT:]] == list(range(10_001 - RECENT, 10_001))
    assert set(t.history[-1]) == {"epoch", "train_loss", "val_loss", "train_acc", "val_acc"}
    # the record is the model's: the last entry is what a fresh evaluation gives
    p = t.predict_proba(t.X_val)
    assert t.history[-1]["val_acc"] == pytest.approx(np.mean(p.argmax(1) == t.y_val))


def test_a_long_gradient_descent_run_keeps_its_loss_and_path_aligned_and_bounded():
    x = np.linspace(-1, 1, 30)
    run = GDRun(x, 2 * x + 1, GDConfig(lr=0.01))
    run.step(12_000)
    assert run.epoch == 12_000
    assert len(run.history) == len(run.path) == len(run.epochs) <= CAP
    assert run.epochs[0] == 0 and run.history[0] == run.start_loss and run.epochs[-1] == 12_000
    assert run.history[-1] == pytest.approx(run.loss())
    np.testing.assert_array_equal(run.path[-1], np.append(run.w, run.b))
    assert run.epochs == sorted(run.epochs)
