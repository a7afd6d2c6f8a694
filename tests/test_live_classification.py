"""The classification lab's live run on the live-run contract (sim.core.live): a pure function of its settings
however its epochs are grouped, and every session on a shared trajectory sees exactly what a private run shows
at its step: frames, and every probe of the model at that step (cursor.model())."""
import json

import numpy as np
import pytest
from waits import wait_until

from labs.classification.live import bench_spec, live_spec, newest_static, payload
from labs.classification.run import NET_EVERY, ClassifierRun, curve_arrays, static
from labs.classification.schema import SCHEMA
from sim.core.history import CAP
from sim.core.live import Runs, Scheduler
from sim.nets.training import holdout_report
from ui.i18n import language

DEFAULTS = {p.name: p.default for p in SCHEMA}
SETTINGS = {  # the default run; a 3-class softmax with dropout and Adam; a regression with L1
    "default": {},
    "softmax_dropout": {"dataset": "spiral3", "dropout": 0.2, "optimizer": "adam", "hidden": (6, 4), "n": 300},
    "regression": {"problem": "regression", "dataset": "plane", "regularization": "l1", "reg_rate": 0.001,
                   "activation": "relu"},
}


def spec_of(**changes):
    return live_spec({**DEFAULTS, **changes})


def same(a, b, where="frame") -> None:
    """a and b equal exactly: numbers, strings, lists, dicts and arrays (dtype too; NaN equals NaN)."""
    assert type(a) is type(b), (where, type(a), type(b))
    if isinstance(a, dict):
        assert a.keys() == b.keys(), (where, a.keys(), b.keys())
        for k in a:
            same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), (where, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, float) and a != a:
        assert b != b, where
    else:
        assert a == b, (where, a, b)


def private(spec, steps: int) -> ClassifierRun:
    """A run of its own, built as the page builds it and advanced straight to `steps`."""
    run = spec.build()
    run.advance(steps)
    return run


def probes(run: ClassifierRun) -> dict:
    """Everything the page reads of the model at a step: validation probabilities (metrics, confusion matrix, ROC),
    the test set's one evaluation, the weights (notes, downloads), the history (curves, CSV), the divergence."""
    tr = run.trainer
    out = {"epoch": tr.epoch, "proba_val": tr.predict_proba(tr.X_val), "layers": tr.layers(), "history": tr.history,
           "diverged": tr.diverged, "static": static(tr)}
    if tr.config.problem == "classification":
        out["test"] = holdout_report(tr.y_test, tr.predict_proba(tr.X_test), 0.4)
    return out


@pytest.mark.parametrize("name", list(SETTINGS))
def test_advance_grouping_does_not_change_the_run(name):
    spec = spec_of(**SETTINGS[name])
    whole, parts = spec.build(), spec.build()
    whole.advance(160)
    for n in (1, 2, 3, 70, 4, 80):  # across the frames with the network (0, 75, 150)
        parts.advance(n)
        same(parts.frame(), private(spec, parts.steps).frame(), f"{name}@{parts.steps}")
    assert parts.steps == whole.steps == 160
    same(parts.frame(), whole.frame())
    same(probes(parts), probes(whole))


def test_grouping_does_not_change_a_history_that_is_compacted():
    """Past CAP records the history is thinned: it is thinned at the same records however the epochs come."""
    spec = spec_of(n=100)
    whole, parts = spec.build(), spec.build()
    whole.advance(CAP + 700)
    while parts.steps < whole.steps:
        parts.advance(min(37, whole.steps - parts.steps))
    assert len(whole.trainer.history) < CAP + 700  # it was compacted
    same(parts.trainer.history, whole.trainer.history)
    same(parts.frame(), whole.frame())


def test_the_network_and_curve_are_in_every_net_every_th_frame():
    spec = spec_of()
    run = spec.build()
    assert "net" in run.frame() and "curve" in run.frame()  # step 0: the first frame always has them
    run.advance(1)
    assert "net" not in run.frame()
    run.advance(NET_EVERY - 1)
    f = run.frame()
    same({"net": f["net"], "curve": f["curve"]}, static(run.trainer))
    assert f["curve"]["epoch"].dtype == np.int32 and f["curve"]["train_loss"].dtype == np.float32
    assert all(w.dtype == np.float32 for w in f["net"]["weights"])
    assert f["curve"]["epoch"][-1] == NET_EVERY and f["curve"]["train_loss"][-1] == np.float32(f["train_loss"])


def test_curve_arrays_keep_first_and_last_epochs_and_none_as_nan():
    history = [{"epoch": e, "train_loss": 1 / e, "val_loss": 2 / e, "train_acc": None, "val_acc": None}
               for e in range(1, 2001)]
    c = curve_arrays(history, 100)
    assert len(c["epoch"]) <= 100 and c["epoch"][0] == 1 and c["epoch"][-1] == 2000
    assert np.isnan(c["train_acc"]).all() and c["val_loss"][-1] == np.float32(2 / 2000)


def test_two_cursors_on_one_trajectory_see_what_a_private_run_shows():
    spec = spec_of(n=200)
    runs = Runs(Scheduler(workers=1))
    one, two = runs.open(spec), runs.open(spec)
    assert one.traj is two.traj and one.step_size == 1
    seen = {id(one): [], id(two): []}

    def look(cursor, after=-1):
        got = cursor.frames(after)
        seen[id(cursor)] += got
        return got

    for _ in range(3):
        one.step_once()  # one epoch each (Step, as TensorFlow Playground's)
        look(one, one.pos - 1)
    assert one.pos == 3 and two.pos == 0
    one.advance(90)
    look(one, 3)
    two.advance(20)
    look(two, 0)
    assert one.pos == 93 and two.pos == 20
    for cursor in (one, two):
        with cursor.model() as run:  # two is behind the head: a copy replayed from a checkpoint
            assert run.steps == cursor.pos
            same(probes(run), probes(private(spec, cursor.pos)), f"probes@{cursor.pos}")
    one.step_once()
    look(one, 93)
    with one.model() as run:
        assert run.steps == 94
        same(probes(run), probes(private(spec, 94)))
    two.reset()
    assert two.pos == 0 and look(two)[-1][0] == 0
    two.play()  # a short play: the scheduler computes ahead, the cursor moves onto frames
    wait_until(lambda: look(two, two.pos) and two.pos >= 120, 30, "the playing cursor to move on")
    two.pause()
    with two.model() as run:
        same(probes(run), probes(private(spec, two.pos)), f"probes@{two.pos}")
    for cursor in (one, two):
        steps = [s for s, _ in seen[id(cursor)]]
        assert steps and len(set(steps)) > 2
        for s, frame in seen[id(cursor)]:
            same(frame, private(spec, s).frame(), f"frame@{s}")
    assert any(newest_static([{**f, "step": s}]) for s, f in seen[id(two)] if s > 0)  # the play met a net frame
    runs.scheduler.close()


def test_step_after_a_play_trains_one_epoch():
    spec = spec_of(n=200)
    runs = Runs(Scheduler(workers=1))
    one = runs.open(spec)
    one.step_once()
    one.play()
    wait_until(lambda: one.frames(one.pos) and one.pos >= 30, 30, "the playing cursor to move on")
    one.pause()
    wait_until(lambda: one.traj.head > one.pos + 1, 10, "the run to be computed ahead of the cursor")
    before = one.pos
    one.step_once()
    runs.scheduler.close()
    assert one.pos == before + 1


def test_a_diverging_run_stops_every_cursor_at_the_same_epoch():
    spec = spec_of(lr=10.0)
    runs = Runs(Scheduler(workers=1))
    one, two = runs.open(spec), runs.open(spec)
    one.advance(200)
    assert one.stopped and one.pos < 200
    with one.model() as run:
        assert run.trainer.divergence == "overshoot" and run.stopped
        same(probes(run), probes(private(spec, 200)))
    two.advance(500)
    assert two.pos == one.pos and two.stopped
    runs.scheduler.close()


def test_the_payload_is_json_and_carries_the_network_only_from_a_frame_that_has_it():
    spec = spec_of()
    run = spec.build()
    frames = []
    for _ in range(NET_EVERY // 5):
        run.advance(5)
        frames.append({**run.frame(), "step": run.steps, "run": 1, "n": run.steps})
    found = newest_static(frames)
    assert found is not None and found[0] == NET_EVERY
    with language("zh"):
        data = payload(frames, seq=1, status="playing", config=run.trainer.config, n_outputs=2, threshold=0.5,
                       discretize=False, show_val=True, static_part=found[1])
        bare = payload(frames[:-1], seq=2, status="playing", config=run.trainer.config, n_outputs=2, threshold=0.5,
                       discretize=False, show_val=True)
    json.dumps(data)
    assert data["net"]["sizes"] == [2, 4, 2, 1] and len(data["net"]["thumbs"]) == 9 and data["curve"]
    assert data["frames"][-1]["epoch"] == NET_EVERY and "net" not in data["frames"][-1]
    assert bare["net"] is None and bare["curve"] is None and bare["points"] is None


def test_bench_spec_draws_the_default_run():
    spec, draw = bench_spec(seed=4)
    assert spec.settings[0].seed == 4 and spec.unit == 5 and spec.step_size == 1
    run = spec.build()
    with language("en"):
        data = draw([{**run.frame(), "step": 0, "run": 1, "n": 0}])
    assert data["net"] is not None and data["points"] is not None
