"""Checks of the live-run contract (sim.core.live) on a lab's own run, for the tests/test_live_<lab>.py files.

`assert_same` compares two frames (or probes) exactly: dicts, tuples and lists by their items, NumPy arrays by dtype,
shape and every value (NaN equal to NaN), anything else by ==. `Private` is a run built by spec.build() and advanced
directly, one step at a time, remembering its frame and probe at every step: what any cursor must see.
"""
from __future__ import annotations

import copy
import math
from collections.abc import Callable

import numpy as np
from waits import wait_until

from sim.core import live
from sim.core.live import Cursor, LiveSpec, Runs, Scheduler


def assert_same(a, b, where: str = "frame") -> None:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), f"{where}: {type(a)} vs {type(b)}"
        assert a.dtype == b.dtype and a.shape == b.shape, f"{where}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), f"{where}: arrays differ"
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f"{where}: keys {sorted(a)} vs {sorted(b)}"
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), f"{where}: {type(a)} of {len(a)} vs {type(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        assert math.isnan(b), f"{where}: nan vs {b}"
    else:
        assert type(a) is type(b) and a == b, f"{where}: {a!r} vs {b!r}"


def assert_grouping_invariant(spec: LiveSpec, splits: list[tuple[int, int]],
                              probe: Callable[[object], object] | None = None) -> None:
    """advance(a) + advance(b), with a frame taken in between, gives the frame (and the probe) of advance(a + b), and
    so does a deep copy taken after a (a checkpoint) and advanced b."""
    for a, b in splits:
        one, two = spec.build(), spec.build()
        one.advance(a)
        one.frame()  # taking a frame in between changes nothing
        kept = copy.deepcopy(one, {id(x): x for x in getattr(one, "shared", tuple)()})
        one.advance(b)
        kept.advance(b)
        two.advance(a + b)
        assert_same(one.frame(), two.frame(), f"advance({a}) + advance({b}) vs advance({a + b})")
        assert_same(kept.frame(), two.frame(), f"a copy after {a}, advanced {b}")
        if probe is not None:
            assert_same(probe(one), probe(two), f"probe after advance({a}) + advance({b})")
        assert one.steps == two.steps == kept.steps


class Private:
    """spec's run built and advanced directly, a step at a time: its frame and probe(run) at every step."""

    def __init__(self, spec: LiveSpec, probe: Callable[[object], object]):
        self.run, self.probe = spec.build(), probe
        self.seen = {self.run.steps: (self.run.frame(), probe(self.run))}

    def at(self, step: int) -> tuple[dict, object]:
        while self.run.steps < step and not self.run.stopped:
            self.run.advance(1)
            self.seen[self.run.steps] = (self.run.frame(), self.probe(self.run))
        return self.seen[step]


class Viewer:
    """A cursor and everything it has been shown, checked against a Private run as it goes."""

    def __init__(self, cursor: Cursor, private: Private):
        self.cursor, self.private, self.after, self.frames_seen, self.probes = cursor, private, -1, 0, 0

    def look(self) -> None:
        """The frames shown since the last look, and the run at the cursor (cursor.model()), against the private run."""
        c = self.cursor
        for step, frame in c.frames(self.after):
            assert_same(frame, self.private.at(step)[0], f"frame at step {step}")
            self.after = step
            self.frames_seen += 1
        with c.model() as run:
            assert run.steps == c.pos
            assert_same(self.private.probe(run), self.private.at(c.pos)[1], f"probe at step {c.pos}")
        self.probes += 1

    def play_until(self, step: int, timeout: float = 60.0) -> None:
        """Play (the scheduler's worker computes) until the cursor is past `step` or stopped, looking all along."""
        c = self.cursor
        c.play()

        def far() -> bool:
            self.look_frames()
            return c.pos >= step or c.stopped

        wait_until(far, timeout, f"{c} to play past step {step}")
        c.pause()
        self.look()

    def look_frames(self) -> None:
        for step, frame in self.cursor.frames(self.after):
            assert_same(frame, self.private.at(step)[0], f"frame at step {step} (playing)")
            self.after = step
            self.frames_seen += 1

    def reset(self) -> None:
        self.cursor.reset()
        self.after = -1
        self.look()


def check_two_cursors(spec: LiveSpec, probe: Callable[[object], object], play: bool = True) -> tuple[int, int]:
    """Two cursors on one trajectory, moved differently (Step, advance, Reset, a short play); every frame they are
    shown and every probe of cursor.model() is the private run's at the same step. A checkpoint is taken at every
    frame, so the replays start from copies made in the middle of training. Returns (frames, probes) checked."""
    runs = Runs(Scheduler(workers=1))
    every, share = live.CHECKPOINT_S, live.CHECKPOINT_SHARE
    live.CHECKPOINT_S, live.CHECKPOINT_SHARE = 0.0, math.inf
    try:
        private = Private(spec, probe)
        one, two = Viewer(runs.open(spec), private), Viewer(runs.open(spec), private)
        assert one.cursor.traj is two.cursor.traj  # equal settings: one shared run
        one.look()
        for _ in range(3):
            one.cursor.step_once()
            one.look()
        two.cursor.advance(23)
        two.look()
        one.cursor.advance(7)
        one.look()
        two.cursor.step_once()
        two.look()
        if play:
            one.play_until(one.cursor.pos + 40)
        two.reset()  # back to the start of the same run: behind the head, replayed from a checkpoint
        two.cursor.advance(5)
        two.look()
        one.reset()
        one.cursor.step_once()
        one.look()
        if play:
            two.play_until(two.cursor.pos + 20)
        assert one.cursor.traj.error is None
        return one.frames_seen + two.frames_seen, one.probes + two.probes
    finally:
        live.CHECKPOINT_S, live.CHECKPOINT_SHARE = every, share
        runs.scheduler.close()
