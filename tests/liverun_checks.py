"""Checks every live run (sim.core.live.LiveRun) of a lab must pass, for the tests/test_live_<lab>.py files:

- grouping: its frames and probes after advance(a) + advance(b) are those after advance(a + b);
- shared: two cursors on one shared trajectory (Runs.open), moved differently (Step, advance, Reset, a short Play),
  see exactly the frames, and read through cursor.model() exactly the probes, of a private run built by the spec
  and advanced directly to the same steps.

Frames and probes are compared exactly: numbers, strings, NumPy arrays (NaN equal to NaN), nested in dicts, lists
and tuples.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from sim.core import live
from sim.core.live import Cursor, LiveSpec, Runs, Scheduler


def same(a, b, where: str = "") -> None:
    """Assert a and b are exactly equal, NaN equal to NaN; a failure says where."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), where
        assert a.dtype == b.dtype and a.shape == b.shape, (where, a.dtype, b.dtype, a.shape, b.shape)
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), where
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), (where, a.keys(), getattr(b, "keys", lambda: b)())
        for k in a:
            same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), (where, a, b)
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        assert math.isnan(b), (where, a, b)
    else:
        assert type(a) is type(b) and a == b, (where, a, b)


def grouping(spec: LiveSpec, probe: Callable, a: int, b: int) -> None:
    """advance(a) + advance(b) ends where advance(a + b) does: the same frame and the same probe."""
    split, whole = spec.build(), spec.build()
    split.advance(a)
    split.frame()  # taking a frame in between changes nothing
    split.advance(b)
    whole.advance(a + b)
    assert split.steps == whole.steps == a + b
    same(split.frame(), whole.frame(), "frame")
    same(probe(split), probe(whole), "probe")


def shared(spec: LiveSpec, probe: Callable, play_steps: int, timeout: float = 120.0) -> None:
    """Two cursors on one shared trajectory against private runs at the same steps (see the module's doc). A
    checkpoint is taken at every frame (not every CHECKPOINT_S of compute), so the replays start from copies of the
    run in the middle of its training."""
    runs = Runs(Scheduler(workers=1))
    every = live.CHECKPOINT_S
    live.CHECKPOINT_S = 0.0
    try:
        one, two = runs.open(spec), runs.open(spec)
        assert one.traj is two.traj
        frames: list[tuple[int, dict]] = []
        probes: list[tuple[int, object]] = []

        def look(c: Cursor, after: int = -1) -> None:
            frames.extend(c.frames(after))
            with c.model() as run:
                assert run.steps == c.pos
                probes.append((c.pos, probe(run)))

        one.step_once()
        one.step_once()
        look(one)
        step = spec.step_size or spec.speed * spec.unit
        assert one.pos == 2 * step
        two.advance(3 * step + 1)  # past one: the head
        look(two)
        one.advance(1)  # behind the head: a copy replayed from a checkpoint
        look(one)
        one.reset()
        assert one.pos == 0
        look(one)
        two.play()
        start, seen = two.pos, two.pos
        deadline = time.monotonic() + timeout
        while two.pos < start + play_steps:
            assert time.monotonic() < deadline, "the short play never got its steps"
            got = two.frames(seen, timeout=0.04)
            frames.extend(got)
            seen = max([seen, *(s for s, _ in got)])
        two.pause()
        look(two, seen)
        one.step_once()
        look(one)
        assert len({s for s, _ in frames}) >= 6 and len({s for s, _ in probes}) >= 5
        assert len(one.traj.checkpoints) > 2 and one.traj.error is None
    finally:
        live.CHECKPOINT_S = every
        runs.scheduler.close()
    private = spec.build()
    checks = sorted([(s, 0, f) for s, f in frames] + [(s, 1, p) for s, p in probes], key=lambda c: c[:2])
    for s, kind, seen in checks:
        private.advance(s - private.steps)
        assert private.steps == s
        same(private.frame() if kind == 0 else probe(private), seen, f"{'frame' if kind == 0 else 'probe'} {s}")
