"""sim.core.live: shared trajectories, cursors of their own, checkpoints and replays, fair turns."""
import copy
import random
import time

import pytest
from waits import wait_until

from sim.core import live
from sim.core.live import Cursor, Runs, Scheduler, Trajectory, _one_a_tick


class Walk:
    """A toy live run: a random walk whose generator is part of its state, and a list that grows."""

    def __init__(self, seed: int, stop_at: int | None = None, cost_s: float = 0.0):
        self.rng, self.x, self.path, self.steps = random.Random(seed), 0.0, [], 0
        self.stop_at, self.cost_s = stop_at, cost_s
        self.data = list(range(1000))  # shared: never copied by a checkpoint

    def shared(self):
        return (self.data,)

    @property
    def stopped(self) -> bool:
        return self.stop_at is not None and self.steps >= self.stop_at

    def advance(self, n: int) -> None:
        for _ in range(n):
            if self.stopped:
                return
            if self.cost_s:
                time.sleep(self.cost_s)  # sleeping releases the GIL, as torch's ops do
            self.x += self.rng.gauss(0, 1)
            self.path.append(self.x)
            self.steps += 1

    def frame(self) -> dict:
        return {"steps": self.steps, "x": self.x, "n": len(self.path)}


def private(seed: int, steps: int) -> Walk:
    w = Walk(seed)
    w.advance(steps)
    return w


def test_a_cursor_sees_exactly_the_frames_and_model_of_a_private_run():
    runs = Runs(Scheduler(workers=1))
    traj = runs.get("a", lambda: Walk(3), unit=2, keep=50)
    one, two = Cursor(runs, traj), Cursor(runs, traj)
    for _ in range(7):
        one.step_once()  # 2 steps each
    assert one.pos == 14 and two.pos == 0 and traj.head >= 14
    assert traj.frames[14] == private(3, 14).frame()
    with one.model() as run:
        assert run.x == private(3, 14).x and run.path == private(3, 14).path
    for _ in range(3):
        two.step_once()
    with two.model() as run:  # behind the head: a copy replayed from a checkpoint
        assert run.steps == 6 and run.path == private(3, 6).path
        assert run.data is traj._run.data  # the data is shared, not copied
    assert all(f == private(3, s).frame() for s, f in traj.frames.items())


def test_playing_cursors_share_one_computation_and_each_keeps_its_own_place():
    runs = Runs(Scheduler(workers=2))
    traj = runs.get("walk", lambda: Walk(1, cost_s=0.001), unit=1, keep=10_000)
    assert runs.get("walk", lambda: pytest.fail("built twice")) is traj
    a, b = Cursor(runs, traj, speed=1), Cursor(runs, traj, speed=1)
    a.play()
    b.play()
    wait_until(lambda: a.frames(a.pos) and a.pos > 30 and b.frames(b.pos) and b.pos > 30)
    b.pause()
    stay = b.pos
    wait_until(lambda: a.frames(a.pos) and a.pos > stay + 20)
    assert b.pos == stay  # one pausing never pauses another
    a.pause()
    assert traj.head <= max(a.pos, b.pos) + 20  # computed once, a little ahead of the fastest
    b.reset()
    assert b.pos == 0 and b.frames(-1) == [(0, private(1, 0).frame())]
    with traj.lock:  # a worker may still be computing the few steps ahead it was asked for
        kept = dict(traj.frames)
    for s, f in kept.items():
        assert f == private(1, s).frame()


def test_a_cursor_behind_the_frames_kept_replays_on_a_copy():
    runs = Runs(Scheduler(workers=1))
    traj = runs.get("k", lambda: Walk(5), unit=1, keep=8)
    lead, late = Cursor(runs, traj), Cursor(runs, traj)
    lead.step_size = 40
    lead.step_once()
    assert traj.head == 40 and 0 in traj.frames and 5 not in traj.frames
    for _ in range(6):
        late.step_once()
    assert late.pos == 6 and late.traj is not traj  # forked from the checkpoint at step 0
    assert late.frames(5) == [(6, private(5, 6).frame())]
    with late.model() as run:
        assert run.path == private(5, 6).path


def test_a_run_that_stops_stops_every_cursor_at_its_last_step():
    runs = Runs(Scheduler(workers=1))
    traj = runs.get("s", lambda: Walk(2, stop_at=25), unit=5)
    c = Cursor(runs, traj, speed=4)
    c.play()
    wait_until(lambda: c.frames(c.pos) and c.stopped)
    assert not c.playing and c.pos == 25 == traj.head and traj.frames[25] == private(2, 25).frame()
    c.play()
    assert not c.playing  # a stopped run does not start


def test_toggle_plays_a_paused_cursor_and_pauses_a_playing_one_where_it_is():
    runs = Runs(Scheduler(workers=1))
    c = Cursor(runs, runs.get("t", lambda: Walk(3), unit=5), speed=2)
    c.toggle()
    assert c.playing
    wait_until(lambda: c.frames(c.pos) and c.pos >= 20)
    c.toggle()
    at = c.pos
    assert not c.playing and at >= 20 and c.frame() == private(3, at).frame()
    time.sleep(0.2)
    assert c.frames(c.pos)[-1][0] == at  # paused: it stays
    c.toggle()
    assert c.playing
    runs.scheduler.close()


def test_distinct_runs_get_equal_shares_of_the_workers():
    runs = Runs(Scheduler(workers=2))
    cursors = [Cursor(runs, runs.get(i, lambda i=i: Walk(i, cost_s=0.002))) for i in range(6)]
    for c in cursors:
        c.speed = 10  # 300 steps/s asked, each: the two workers give the six 1,000 steps/s in all
        c.play()
    end = time.monotonic() + 2.0
    while time.monotonic() < end:  # each "page" takes its frames, as a playing fragment does
        for c in cursors:
            c.frames(c.pos)
        time.sleep(0.04)
    heads = [c.traj.head for c in cursors]
    for c in cursors:
        c.pause()
    mean = sum(heads) / len(heads)
    assert all(abs(h - mean) <= 0.2 * mean for h in heads), heads


def test_unwatched_trajectories_are_freed_after_the_grace_and_the_oldest_first_over_the_cap():
    runs = Runs(Scheduler(workers=1), grace_s=60.0, max_runs=3)
    kept = Cursor(runs, runs.get("kept", lambda: Walk(0)))
    for i in range(5):
        runs.get(i, lambda i=i: Walk(i))
    assert [t.key for t in runs.trajectories()] == ["kept", 3, 4]  # over the cap: the longest unwatched went
    runs.grace_s = 0.0
    runs.collect()
    assert [t.key for t in runs.trajectories()] == ["kept"]  # watched: kept however long the others waited
    kept.frames(0)


def test_frames_shown_are_one_a_tick_and_always_the_newest():
    assert _one_a_tick([1, 2, 3, 4, 5, 6, 7], 3) == [1, 4, 7]
    assert _one_a_tick([1, 2, 3, 4, 5], 3) == [1, 4, 5]
    assert _one_a_tick([], 3) == []


def test_a_failing_run_reports_its_error_and_keeps_its_place():
    class Broken(Walk):
        def advance(self, n):
            if self.steps >= 3:
                raise RuntimeError("boom")
            super().advance(n)

    runs = Runs(Scheduler(workers=1))
    traj = Trajectory("b", Broken(0))
    c = Cursor(runs, traj)
    for _ in range(5):
        c.step_once()
    assert c.pos == 3 and isinstance(c.error, RuntimeError) and not c.stopped and not c.playing
    c.play()  # tries again from the newest checkpoint, and fails again at the same step
    assert c.error is None
    wait_until(lambda: c.frames(c.pos) and c.error is not None)
    assert c.pos == 3 and not c.playing


def test_a_step_lands_on_its_step_even_where_playing_left_no_frame():
    runs = Runs(Scheduler(workers=1))
    traj = runs.get("between", lambda: Walk(6), unit=5)
    c = Cursor(runs, traj, speed=2)  # frames every 10 steps while it plays
    c.advance(20)
    traj.ensure(40)
    assert 23 not in traj.frames
    c.step_size = 3
    c.step_once()
    assert c.pos == 23 and c.frames(22) == [(23, private(6, 23).frame())]


def test_a_memo_is_computed_once_per_step_for_every_cursor():
    runs = Runs(Scheduler(workers=1))
    traj = runs.get("m", lambda: Walk(4))
    a, b = Cursor(runs, traj), Cursor(runs, traj)
    calls = []

    def figure(run):
        calls.append(run.steps)
        return run.x

    a.advance(5)
    b.advance(5)
    assert a.memo("fig", figure) == b.memo("fig", figure) == private(4, 5).x and calls == [5]
    b.reset()
    assert b.memo("fig", figure) == 0.0 and calls == [5, 0]  # another step, computed for it
    assert a.memo(("fig", "zh"), figure) == private(4, 5).x and calls == [5, 0, 5]  # another key


def test_a_cursor_nobody_reads_stops_asking_for_steps(monkeypatch):
    """A playing tab that is gone (nobody takes its frames) gets a little more than its lookahead, then nothing; a
    viewer still reading is not held to it."""
    from sim.core import live

    monkeypatch.setattr(live, "IDLE_S", 0.3)
    runs = Runs(Scheduler(workers=1))
    traj = runs.get("idle", lambda: Walk(7, cost_s=0.001))
    gone, other = Cursor(runs, traj, speed=5), Cursor(runs, traj)
    gone.play()
    wait_until(lambda: gone.frames(gone.pos) and gone.pos > 10)
    wait_until(lambda: not traj.needs_work())
    head = traj.head
    assert head <= gone.pos + 5 * 30 * live.LOOKAHEAD_S + 2 * 5
    time.sleep(0.4)
    other.play()
    other.frames(0)
    assert not [c for c in traj.cursors if c.playing and c.watching(time.monotonic()) and c is not other]
    other.pause()


def spin(seconds: float) -> None:
    """Burn this thread's CPU for `seconds` (thread time, which the trajectory measures)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


class Heavy(Walk):
    """A run that is costly to copy (as a deep model is): each copy burns 40 ms of CPU, each step 5 ms."""

    def advance(self, n: int) -> None:
        for _ in range(n):
            spin(0.005)
            super().advance(1)

    def __deepcopy__(self, memo):
        spin(0.04)
        twin = Walk.__new__(Heavy)
        twin.__dict__.update({k: (v if k == "data" else copy.deepcopy(v, memo))
                              for k, v in self.__dict__.items()})
        return twin


def test_a_run_costly_to_copy_is_checkpointed_less_often_and_still_replays_exactly():
    traj = Trajectory("heavy", Heavy(5))
    traj.demand = 300
    while traj.needs_work():
        traj.compute(1.0)
    # a copy costs >= 40 ms, so the next one waits >= 40 ms / CHECKPOINT_SHARE of compute (0.4 s, not 0.25 s)
    assert traj.checkpoint_every >= 0.04 / live.CHECKPOINT_SHARE > live.CHECKPOINT_S
    made = [s for s, _ in traj.checkpoints]
    gaps = [b - a for a, b in zip(made[1:], made[2:], strict=False)]  # after the first costly copy
    assert gaps and min(gaps) >= 0.4 / 0.005 - 1  # >= 0.4 s of 5 ms steps (made[0]: step 0)
    with traj.model_at(123) as run:
        assert run.path == private(5, 123).path
