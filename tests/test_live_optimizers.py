"""The optimiser lab's live runs (sim.optim.race.RaceRun through labs/optimizers/race.py and sched_race.py): the race
and the schedules race are each one run of all their racers, the same however their steps are grouped, and two
cursors on one shared trajectory see exactly what a private run shows at their step: every frame, and the racers
read through cursor.model() (the table's numbers, the weights). The wall-clock figures (ms per step, the ms curve)
measure the machine, so they are compared for their shape only."""
import math

import numpy as np
import pytest
import torch
from waits import wait_until

from labs.optimizers.race import defaults, drawn, frame_labels, names, race_spec
from labs.optimizers.sched_race import bench_spec as sched_bench_spec
from labs.optimizers.sched_race import sched_spec
from sim.core.live import Runs, Scheduler
from sim.optim.optimizers import SCHEDULES
from ui.i18n import language

CLOCK = ("ms", "update_ms")  # a racer's wall-clock figures (its frame's "ms", its view's both)


def race():
    """Three racers on a small model, SGD at a learning rate that really diverges (at step 2)."""
    v = {**defaults(None), "r_width": 8, "r_speed": 2, "r_seed": 5, "r_sgd_lr": 10.0}
    return race_spec(v, ("sgd", "adam", "muon"))


def sched(steps: int = 100):
    """Every schedule with Lion on a small model, to its end (100 steps: it stops)."""
    v = {**defaults(None), "r_width": 8, "r_speed": 3, "s_opt": "lion", "s_lr": 0.01}
    return sched_spec(v, steps, 10, 0.1, 0.8)


KINDS = {"race": race, "sched": sched}


def exact(frame: dict) -> dict:
    """The frame without the clock: the ms figure and the ms curve of each racer."""
    racers = [{**{k: v for k, v in r.items() if k not in CLOCK and k != "curves"},
               "curves": {k: c for k, c in r["curves"].items() if k != "ms"}} for r in frame["racers"]]
    return {**frame, "racers": racers}


def same(a, b, where: str = "frame") -> None:
    """a and b are equal, exactly: dicts, sequences, arrays (dtype too; NaN equal to NaN), numbers."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype, where
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), where
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for k in a:
            same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b), where
    else:
        assert a == b, (where, a, b)


def clock_shape(frame: dict, kind: str) -> None:
    """The clock's figures are there as the page draws them: a median ms once a racer has stepped, the ms curve
    (the race's) ending at the racer's step."""
    for r in frame["racers"]:
        assert (r["ms"] is None) == (r["steps"] == 0) and (r["ms"] is None or r["ms"] > 0)
        if kind == "race":
            steps, values = r["curves"]["ms"]
            assert steps.dtype == np.int32 and values.dtype == np.float32 and steps[-1] == r["steps"]


def compact(frame: dict) -> None:
    """Numbers and arrays only (float32 values, int32 steps): a trajectory keeps hundreds of frames."""
    for r in frame["racers"]:
        for steps, values in r["curves"].values():
            assert steps.dtype == np.int32 and values.dtype == np.float32 and len(steps) == len(values) <= 160
        assert all(isinstance(v, (int, float, str, bool, type(None))) for k, v in r.items() if k != "curves")


def probe(run) -> tuple[list[dict], list[list[torch.Tensor]]]:
    """What the page reads of the racers at a step (the table's numbers, clock aside) and their weights."""
    views = [{k: v for k, v in r.view(curves=()).items() if k not in CLOCK} for r in run.racers]
    return views, [[p.detach().clone() for p in r.params] for r in run.racers]


def same_probe(a, b) -> None:
    same(a[0], b[0], "views")
    for pa, pb in zip(a[1], b[1], strict=True):
        assert all(torch.equal(x, y) for x, y in zip(pa, pb, strict=True))


class Private:
    """A private run of the spec, built by spec.build() and advanced directly: its frame and probe at any step."""

    def __init__(self, spec):
        self.spec, self.run = spec, spec.build()

    def at(self, step: int):
        if self.run.steps > step:
            self.run = self.spec.build()
        self.run.advance(step - self.run.steps)
        assert self.run.steps == step
        return self.run


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("a,b", [(1, 6), (3, 4), (5, 0)])
def test_the_run_is_the_same_however_its_steps_are_grouped(kind, a, b):
    spec = KINDS[kind]()
    one, two = spec.build(), spec.build()
    one.advance(a)
    one.advance(b)
    two.advance(a + b)
    assert one.steps == two.steps == a + b and not one.stopped
    f1, f2 = one.frame(), two.frame()
    same(exact(f1), exact(f2))
    same_probe(probe(one), probe(two))
    compact(f1)
    clock_shape(f1, kind)
    if kind == "race" and a + b >= 2:  # SGD at 10 diverged at step 2, the others go on
        assert [r["diverged_at"] for r in f1["racers"]] == [2, None, None]
        assert [r["steps"] for r in f1["racers"]] == [2, a + b, a + b]


def test_a_long_history_is_compacted_the_same_whatever_the_clock():
    """Past sim.core.history's CAP the racers' histories are compacted on the loss and the learning rate only, so the
    curves of two runs of one setting stay equal however their steps take."""
    from sim.core.history import CAP

    v = {**defaults(None), "r_width": 8, "r_steps": CAP + 200}
    spec = race_spec(v, ("adam",))
    one, two = spec.build(), spec.build()
    one.advance(CAP + 150)
    for n in (7, CAP - 7, 150):
        two.advance(n)
    assert len(one.racers[0].columns["step"]) < CAP + 150  # compacted
    same(exact(one.frame()), exact(two.frame()))


@pytest.mark.parametrize("kind", KINDS)
def test_two_cursors_on_one_shared_run_see_exactly_a_private_run(kind):
    spec = KINDS[kind]()
    runs = Runs(Scheduler(workers=1))
    try:
        c1, c2 = runs.open(spec), runs.open(spec)
        assert c1.traj is c2.traj and len(runs) == 1
        private = Private(spec)
        seen: list[tuple[int, dict]] = []
        probes = 0

        def look(cursor, after: int = -1, timeout: float = 0.0) -> list:
            nonlocal probes
            got = cursor.frames(after, timeout)
            seen.extend(got)
            with cursor.model() as run:
                assert run.steps == cursor.pos
                same_probe(probe(run), probe(private.at(cursor.pos)))
            probes += 1
            return got

        c1.step_once()  # r_speed steps
        look(c1)
        c1.advance(5)
        look(c1)
        c2.advance(2)  # behind the head: replayed from a checkpoint
        look(c2)
        c2.step_once()
        look(c2)
        assert (c1.pos, c2.pos) == (spec.speed + 5, 2 + spec.speed)
        c1.reset()
        assert c1.pos == 0
        look(c1)
        c2.play()  # a short play: the scheduler's worker computes, c2 moves on the frames it finds
        after = c2.pos
        wait_until(lambda: look(c2, after, 0.04) and c2.pos >= 30, what="the playing cursor at step 30")
        c2.pause()
        look(c2)
        c1.step_once()
        look(c1)
        assert c1.pos == spec.speed and c2.pos >= 30 and probes >= 9
        steps = sorted({s for s, _ in seen})
        assert steps[0] == 0 and steps[-1] >= 30
        for s, f in seen:
            mine = private.at(s).frame()
            same(exact(f), exact(mine), f"step {s}")
            clock_shape(f, kind)
    finally:
        runs.scheduler.close()


def test_the_schedules_race_stops_every_cursor_when_every_schedule_has_ended():
    spec = sched(100)
    runs = Runs(Scheduler(workers=1))
    try:
        c = runs.open(spec)
        c.play()
        wait_until(lambda: c.frames(c.pos, 0.04) and c.stopped, what="the schedules race's end")
        assert not c.playing and c.pos == 100 == c.traj.head
        frame = c.traj.frames[100]
        assert [r["label"] for r in frame["racers"]] == list(SCHEDULES)
        assert all(r["finished"] and r["steps"] == 100 for r in frame["racers"])
        same(exact(frame), exact(Private(spec).at(100).frame()))
        c.play()
        assert not c.playing  # a finished race does not start again
    finally:
        runs.scheduler.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_frame_is_drawn_in_the_pages_words(kind):
    spec = KINDS[kind]()
    run = spec.build()
    run.advance(8)
    with language("zh"):
        shown, labels = names(kind == "sched"), frame_labels()
        fig = drawn({**run.frame(), "step": 8, "run": 1, "n": 8}, kind == "sched", shown, labels)
    loss = fig["panels"][0]
    assert [s["label"] for s in loss["series"]] == [shown[r.label] for r in run.racers]
    assert fig["epoch"] == 8 and fig["n"] == 8 and labels["loss_title"] == loss["title"]
    finite = [y for y in loss["series"][-1]["y"] if y is not None]
    assert finite[-1] == pytest.approx(run.racers[-1].last_loss(), rel=1e-6)  # float32 on the way


def test_bench_specs_build_the_default_runs():
    from labs.optimizers.race import bench_spec

    spec, draw = bench_spec(seed=3)
    assert spec.key == "opt.race" and spec.settings != bench_spec()[0].settings
    run = spec.build()
    run.advance(2)
    with language("en"):
        assert len(draw([{**run.frame(), "step": 2, "run": 1, "n": 2}])) == 1
    spec, draw = sched_bench_spec()
    assert spec.key == "opt.sched" and len(spec.build().racers) == len(SCHEDULES)
