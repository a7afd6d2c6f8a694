"""Live runs: each distinct run computed once per process, every viewer with a cursor of its own, fair turns.

A live lab's trainer implements the LiveRun contract: `steps` (its step counter: optimizer steps, or epochs),
`advance(n)` (train n steps; a run may stop early), `frame()` (what the live view draws of the run as it is now,
in no language: numbers and arrays, the page adds the words), `stopped` (diverged or finished) and, optionally,
`shared()` (parts that never change, such as the data, which checkpoints share instead of copying). A run must be
a pure function of its settings and seed, however its steps are grouped into `advance` calls, and a step's frame
never changes once taken (a run that diverges counts the step it diverged at): the tests check both for every lab.
Measured wall-clock figures (a step's milliseconds) are the one exception: a replayed copy measures its own.

A Trajectory is one run and everything computed of it: the frames at its frame steps (a bounded window, the first
one always kept) and checkpoints (full copies: weights, optimiser, random generators) to replay from. Sessions
whose settings are equal share one Trajectory through Runs (the registry); each has a Cursor: its own step,
Play/Pause/Step/Reset and speed, so one student pausing never pauses another. The Scheduler steps the trajectories
that a playing cursor needs, on one worker thread per core, always the one that has had the least compute so far:
the total stays at what the cores can do, and distinct runs share it equally. Nothing here imports Streamlit.

"The model at my step" (a probe: a prompt's next-token distribution, samples) is `Cursor.model()`: the live run
when the cursor is at the head, else a copy restored from the nearest checkpoint and replayed to the cursor's
step, so a probe reads exactly what a private run would show at that step.
"""
from __future__ import annotations

import bisect
import copy
import itertools
import os
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol, TypeVar

FRAMES_PER_S = 30  # ticks a second of a playing cursor: it moves `speed` frame units a tick
LOOKAHEAD_S = 0.3  # a trajectory is computed this far ahead of its fastest playing cursor
SLICE_S = 0.02  # a worker steps one trajectory for about this long before it picks again
CHECKPOINT_S = 0.25  # compute time between two checkpoints (a replay to any step costs at most about this much)
CHECKPOINT_SHARE = 0.1  # ... or longer, so that copying a big run (deep models) costs at most this share of its compute
MAX_CHECKPOINTS = 24  # per trajectory; beyond it every other one of the older half goes (steps 0 and newest stay)
IDLE_S = 20.0  # a cursor not read for this long has lost its viewer (the tab is gone): it stops asking for steps
GRACE_S = 60.0  # a trajectory nobody watches is kept this long, for a viewer who comes back
MAX_RUNS = 48  # trajectories kept at most; over it, the longest unwatched go first
RATE_WINDOW_S = 3.0  # steps a second are measured over this window
MEMOS = 32  # results of Cursor.memo kept per trajectory
T = TypeVar("T")


class LiveRun(Protocol):
    steps: int

    def advance(self, n: int) -> None: ...

    def frame(self) -> dict: ...

    @property
    def stopped(self) -> bool: ...


@dataclass(frozen=True)
class LiveSpec:
    """A live lab's run as its page asks for it, and as the benchmarks and tests build it the same way.

    key: the run's name on the page ("lm.train"); settings: what defines the run (with the seed), hashable and
    equal for equal runs; build(): the run at step 0 (raises ValueError on settings it cannot train); unit: steps
    a frame at speed 1; speed: frame units a tick (the page's speed setting); step_size: what Step trains (None:
    a tick); keep: frames a trajectory keeps (a few hundred: a frame may hold arrays).
    """

    key: str
    settings: Hashable
    build: Callable[[], LiveRun]
    unit: int = 1
    speed: int = 1
    step_size: int | None = None
    keep: int = 600


def _copy(run: LiveRun) -> LiveRun:
    """A full, independent copy of `run`; what it declares shared (its data) is referenced, not copied."""
    shared = run.shared() if hasattr(run, "shared") else ()
    return copy.deepcopy(run, {id(x): x for x in shared})


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class Trajectory:
    """One run, its frames and checkpoints. `unit`: steps a frame (the lab's step at speed 1); `keep`: frames kept."""

    def __init__(self, key: Hashable, run: LiveRun, unit: int = 1, keep: int = 600):
        self.key, self.unit, self.keep = key, unit, keep
        self.lock = threading.RLock()  # held while the run is stepped or read
        self._run = run
        self.head = run.steps  # the step the run is at
        self.first = run.steps
        self.stopped = run.stopped
        self.error: BaseException | None = None
        self.frames: dict[int, dict] = {self.head: run.frame()}
        self._steps = [self.head]  # the frames' steps, sorted
        self.checkpoints: list[tuple[int, LiveRun]] = [(self.head, _copy(run))]
        self._since_checkpoint = 0.0
        self.checkpoint_every = CHECKPOINT_S  # compute time between checkpoints: longer when a copy is costly
        self._replayed: OrderedDict[int, LiveRun] = OrderedDict()  # step -> a copy at that step (probes)
        self.memos: OrderedDict[tuple, object] = OrderedDict()  # (step, key) -> what Cursor.memo computed
        self.stride = unit  # a frame every `stride` steps: the slowest playing viewer's step a tick
        self.demand = self.head  # the step the playing cursors need computed
        self.vtime = 0.0  # CPU time received (s): the scheduler serves the least served first
        self.typical_slice = 0.0  # a moving average of its slices' CPU time
        self.busy = False
        self.cursors: weakref.WeakSet[Cursor] = weakref.WeakSet()
        self.watched = time.monotonic()  # when a cursor last read it
        self.compute_s = 0.0  # CPU time its steps took
        self._done: list[tuple[float, int]] = []  # (when, head) of recent slices, for the rate

    # ---- computing (a scheduler worker, or a Step) ----
    def needs_work(self) -> bool:
        return not self.stopped and self.error is None and self.head < self.demand

    def compute(self, budget_s: float) -> float:
        """Step towards `demand` for about budget_s (at least one frame's steps); returns the CPU time this thread
        spent (not the wall time, which counts waits for the GIL that other threads hold)."""
        t0, cpu0 = time.perf_counter(), time.thread_time()
        with self.lock:
            try:
                while self.needs_work():
                    t = time.thread_time()
                    run = self._run
                    run.advance(min(self.stride - self.head % self.stride, self.demand - self.head) or self.stride)
                    self.head, self.stopped = run.steps, run.stopped
                    self._store(self.head, run.frame())
                    spent = time.thread_time() - t
                    self.compute_s += spent
                    self._since_checkpoint += spent
                    if self._since_checkpoint >= self.checkpoint_every or self.stopped:
                        self._checkpoint()
                    if time.perf_counter() - t0 >= budget_s:
                        break
            except Exception as e:  # noqa: BLE001 — the page shows it; the run stays where it was
                self.error = e
        self._done.append((time.monotonic(), self.head))
        self._done = [d for d in self._done if d[0] > time.monotonic() - RATE_WINDOW_S]
        return time.thread_time() - cpu0

    def ensure(self, step: int) -> None:
        """Compute up to `step` now, on this thread (a Step press)."""
        with self.lock:
            self.demand = max(self.demand, step)
            while self.needs_work() and self.head < step:
                self.compute(1.0)

    def _store(self, step: int, frame: dict) -> None:
        if step not in self.frames:
            bisect.insort(self._steps, step)
        self.frames[step] = frame
        while len(self._steps) > self.keep:  # the oldest go, but the first frame stays: Reset shows it
            del self.frames[self._steps.pop(1 if self._steps[0] == self.first else 0)]

    def _checkpoint(self) -> None:
        self._since_checkpoint = 0.0
        if self.checkpoints[-1][0] == self.head:
            return
        t = time.thread_time()
        self.checkpoints.append((self.head, _copy(self._run)))
        self.checkpoint_every = max(CHECKPOINT_S, (time.thread_time() - t) / CHECKPOINT_SHARE)
        if len(self.checkpoints) > MAX_CHECKPOINTS:
            half = len(self.checkpoints) // 2
            older = self.checkpoints[1:half]
            self.checkpoints = [self.checkpoints[0], *older[1::2], *self.checkpoints[half:]]

    # ---- reading ----
    def frame_steps(self, after: int, upto: int) -> list[int]:
        """The steps in (after, upto] that have a frame, oldest first."""
        with self.lock:
            return self._steps[bisect.bisect_right(self._steps, after):bisect.bisect_right(self._steps, upto)]

    def frame_at_or_before(self, step: int) -> tuple[int, dict] | None:
        with self.lock:
            i = bisect.bisect_right(self._steps, step)
            return None if i == 0 else (self._steps[i - 1], self.frames[self._steps[i - 1]])

    def frame_at(self, step: int) -> dict:
        """The frame at `step` (≤ head), taken of a replayed copy if the run went past it between two frames."""
        with self.lock:
            frame = self.frames.get(step)
            if frame is None:
                with self.model_at(step) as run:
                    frame = run.frame()
                self._store(step, frame)
            return frame

    def covers(self, step: int) -> bool:
        """Whether the frames from `step` on are still kept (a cursor further behind replays on a copy)."""
        with self.lock:
            kept = self._steps[1:] if self._steps[0] == self.first else self._steps
            return step == self.first or not kept or step >= kept[0] - self.stride

    def recover(self) -> None:
        """After a failed step: back to the newest checkpoint, to try again (the frames computed so far stay)."""
        with self.lock:
            if self.error is None:
                return
            self._run = _copy(self.checkpoints[-1][1])
            self.head, self.stopped, self.error = self._run.steps, self._run.stopped, None

    @contextmanager
    def model_at(self, step: int) -> Iterator[LiveRun]:
        """The run as it was at `step` (≤ head), lock held while it is used; a replayed copy unless step is head."""
        with self.lock:
            if step == self.head:
                yield self._run
                return
            if step not in self._replayed:
                base_step, base = max(((s, c) for s, c in self.checkpoints if s <= step), key=lambda sc: sc[0])
                run = _copy(base)
                while run.steps < step and not run.stopped:
                    run.advance(step - run.steps)
                self._replayed[step] = run
                while len(self._replayed) > 2:
                    self._replayed.popitem(last=False)
            self._replayed.move_to_end(step)
            yield self._replayed[step]

    @contextmanager
    def model_near(self, step: int) -> Iterator[tuple[int, LiveRun]]:
        """(its step, the run) at the newest checkpoint at or before `step`, or the head if that is nearer: no replay
        (a probe taken while playing, which says which step it shows)."""
        with self.lock:
            s, c = max(((s, c) for s, c in self.checkpoints if s <= step), key=lambda sc: sc[0])
            if self.head <= step and self.head > s:
                yield self.head, self._run
            else:
                yield s, c

    def rate(self) -> float:
        """Steps a second computed over the last few seconds."""
        done = self._done
        if len(done) < 2 or done[-1][0] - done[0][0] <= 0:
            return 0.0
        return (done[-1][1] - done[0][1]) / (done[-1][0] - done[0][0])

    def fork(self, step: int) -> Trajectory:
        """A private trajectory from the newest checkpoint at or before `step` (for a cursor behind the frames kept)."""
        with self.lock:
            base_step, base = max(((s, c) for s, c in self.checkpoints if s <= step), key=lambda sc: sc[0])
            return Trajectory((self.key, "fork", base_step, next(_FORKS)), _copy(base), self.unit, self.keep)


_FORKS = itertools.count()


class Scheduler:
    """Worker threads, one per core, stepping whichever trajectory in need has had the least compute."""

    def __init__(self, workers: int | None = None, slice_s: float = SLICE_S):
        self.workers, self.slice_s = workers or cores(), slice_s
        self._cond = threading.Condition()
        self._waiting: set[Trajectory] = set()
        self._threads: list[threading.Thread] = []
        self._closed = False

    def close(self, timeout: float = 5.0) -> None:
        """Stop the workers after their current slice (a program that exits should not leave one mid-step)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            threads = list(self._threads)
        for th in threads:
            th.join(timeout)

    def want(self, traj: Trajectory) -> None:
        """traj needs steps (its demand moved on): have a worker take it."""
        with self._cond:
            if traj not in self._waiting:
                floor = min((t.vtime for t in self._waiting), default=traj.vtime)
                traj.vtime = max(traj.vtime, floor)  # a run back from a pause does not get the time it missed
                self._waiting.add(traj)
            self._threads = [th for th in self._threads if th.is_alive()]
            if len(self._threads) < self.workers and not self._closed:
                th = threading.Thread(target=self._work, name="live-worker", daemon=True)
                self._threads.append(th)
                th.start()
            self._cond.notify_all()

    def running(self) -> int:
        """Distinct runs computing now (the page says so when a class is sharing the cores)."""
        with self._cond:
            return sum(1 for t in self._waiting if t.needs_work())

    def _work(self) -> None:
        idle_since = time.monotonic()
        while True:
            with self._cond:
                if self._closed:
                    return
                self._waiting = {t for t in self._waiting if t.needs_work() or t.busy}
                ready = [t for t in self._waiting if not t.busy]
                if not ready:
                    if time.monotonic() - idle_since > 5.0:  # nothing to do for a while: this thread ends
                        self._threads = [th for th in self._threads if th is not threading.current_thread()]
                        return
                    self._cond.wait(0.5)
                    continue
                traj = min(ready, key=lambda t: t.vtime)
                traj.busy = True
            used = traj.compute(self.slice_s)
            with self._cond:
                traj.busy = False
                # a one-off cost (a new thread's first backward pass took 0.2 s, ten slices' worth) is charged
                # at most a few typical slices, or that run would be held back for seconds to pay it off
                typical = traj.typical_slice or used
                traj.vtime += min(used, 4 * max(typical, self.slice_s))
                traj.typical_slice = 0.8 * typical + 0.2 * min(used, 4 * typical)
                self._cond.notify_all()
            idle_since = time.monotonic()


class Runs:
    """The process's trajectories by key (the settings and seed that define a run); a key's run is built once."""

    def __init__(self, scheduler: Scheduler | None = None, grace_s: float = GRACE_S, max_runs: int = MAX_RUNS):
        self.scheduler = scheduler or Scheduler()
        self.grace_s, self.max_runs = grace_s, max_runs
        self._lock = threading.Lock()
        self._building: dict[Hashable, threading.Lock] = {}
        self._runs: dict[Hashable, Trajectory] = {}

    def open(self, spec: LiveSpec) -> Cursor:
        """A new cursor, at step 0, on the trajectory of spec's settings (built if there is none)."""
        traj = self.get((spec.key, spec.settings), spec.build, spec.unit, spec.keep)
        return Cursor(self, traj, spec.speed, spec.step_size)

    def get(self, key: Hashable, build: Callable[[], LiveRun], unit: int = 1, keep: int = 600) -> Trajectory:
        """The trajectory of `key`, built by build() if there is none (build may raise on bad settings)."""
        with self._lock:
            if key in self._runs:
                return self._runs[key]
            building = self._building.setdefault(key, threading.Lock())
        with building:  # two sessions asking at once build it once
            with self._lock:
                if key in self._runs:
                    return self._runs[key]
            try:
                traj = Trajectory(key, build(), unit, keep)
            finally:
                with self._lock:
                    self._building.pop(key, None)
            with self._lock:
                self._runs[key] = traj
            self.collect(keep=traj)
            return traj

    def collect(self, keep: Trajectory | None = None) -> None:
        """Free trajectories nobody has watched for grace_s, then the longest unwatched while over max_runs (`keep`,
        just built, has no cursor yet)."""
        now = time.monotonic()
        with self._lock:
            def unwatched(t: Trajectory) -> bool:
                return t is not keep and not any(c.watching(now) for c in list(t.cursors))

            for key, traj in list(self._runs.items()):
                if unwatched(traj) and now - traj.watched > self.grace_s:
                    del self._runs[key]
            spare = sorted((t for t in self._runs.values() if unwatched(t)), key=lambda t: t.watched)
            while len(self._runs) > self.max_runs and spare:
                del self._runs[spare.pop(0).key]

    def __len__(self) -> int:
        return len(self._runs)

    def trajectories(self) -> list[Trajectory]:
        with self._lock:
            return list(self._runs.values())


class Cursor:
    """One viewer's place on a trajectory: its step, playing or not, its speed (frame units a tick)."""

    def __init__(self, runs: Runs, traj: Trajectory, speed: int = 1, step_size: int | None = None):
        self.runs, self.traj = runs, traj
        self.pos = traj.first
        self.speed = speed
        self.step_size = step_size  # what Step trains, in steps (None: one tick, speed × unit)
        self.playing = False
        self._exact = float(self.pos)  # where playing has brought it, fractions of a step included
        self._t = time.monotonic()  # when pos last moved while playing
        self._read = time.monotonic()
        self.serial = next(_SERIALS)  # tells this cursor's frames from another's (a Reset makes a new one)
        traj.cursors.add(self)

    # ---- controls ----
    @property
    def rate(self) -> float:
        """Steps a second this cursor asks for while playing."""
        return self.speed * self.traj.unit * FRAMES_PER_S

    def play(self) -> None:
        """Play on; after a failure, from the newest checkpoint (the failure may have been passing)."""
        if self.traj.error is not None:
            self.traj.recover()
        if self.stopped:
            return
        self.playing, self._t, self._read = True, time.monotonic(), time.monotonic()
        self._ask()

    def pause(self) -> None:
        if self.playing:
            self._move(time.monotonic())
        self.playing = False

    def toggle(self) -> None:
        """Pause if playing, else play (the live view's one Play/Pause button)."""
        if self.playing:
            self.pause()
        else:
            self.play()

    def step_once(self) -> None:
        """Pause, then move on step_size steps (or a tick's)."""
        self.pause()
        self.advance(self.step_size or self.speed * self.traj.unit)

    def advance(self, n: int) -> None:
        """Move on n steps now, onto exactly that step (or where the run stopped before it), computing them on this
        thread if no one has yet."""
        if self.traj.error is not None:
            self.traj.recover()
        target = self.pos + n
        self._catch_up(target)
        traj = self.traj
        traj.ensure(target)
        with traj.lock:
            if traj.error is None or traj.head >= target:
                self.pos = min(target, traj.head)
                traj.frame_at(self.pos)
            else:
                self.pos = max(self.pos, traj.head)
        self._exact = float(self.pos)

    def reset(self) -> None:
        """Back to the first step of the same trajectory (nothing is recomputed)."""
        self.playing, self.pos, self._exact = False, self.traj.first, float(self.traj.first)
        self.serial = next(_SERIALS)

    @property
    def stopped(self) -> bool:
        """The run stopped (diverged, finished) and this cursor has reached where it stopped."""
        return self.traj.stopped and self.pos >= self.traj.head

    @property
    def error(self) -> BaseException | None:
        """What made the run fail, once this cursor has reached the failure (Play tries again)."""
        return self.traj.error if self.pos >= self.traj.head else None

    def watching(self, now: float) -> bool:
        return now - self._read < IDLE_S

    # ---- frames ----
    def frames(self, after: int, timeout: float = 0.0) -> list[tuple[int, dict]]:
        """(step, frame) for the frames shown since step `after` (at most one a tick), moving on while playing;
        with none, the frame at the cursor. While playing, waits `timeout` first (a few frames per page rerun)."""
        if self.playing and timeout > 0:
            time.sleep(timeout)
        now = time.monotonic()
        self._read = now
        self.traj.watched = now
        if self.playing:
            self._move(now)
            self._ask()
            if self.stopped or self.error is not None:
                self.playing = False
        steps = self.traj.frame_steps(after, self.pos)
        picked = _one_a_tick(steps, self.speed * self.traj.unit)
        out = []
        for s in picked:
            f = self.traj.frames.get(s)
            if f is not None:
                out.append((s, f))
        if not out:
            got = self.traj.frame_at_or_before(self.pos)
            out = [got] if got is not None else []
        return out

    def latest(self) -> tuple[int, dict]:
        return self.frames(self.pos)[-1]

    def shown_rate(self) -> float:
        """Steps a second the trajectory is being computed at (what a playing cursor can get)."""
        return self.traj.rate()

    def _move(self, now: float) -> None:
        """Advance by the time played, no further than computed (time waiting for steps is not banked), onto a
        step that has a frame; the fraction of a step left over is kept for the next move."""
        traj = self.traj
        self._exact = min(max(self._exact, self.pos) + self.rate * (now - self._t), float(traj.head))
        self._t = now
        target = int(self._exact)
        self._catch_up(target)
        got = self.traj.frame_at_or_before(target)
        if got is not None and got[0] > self.pos:
            self.pos = got[0]

    def _catch_up(self, target: int) -> None:
        """A cursor that fell behind the frames kept goes on from a private copy (replayed from a checkpoint)."""
        if not self.traj.covers(self.pos + 1) and self.pos < self.traj.head:
            forked = self.traj.fork(self.pos)
            self.traj.cursors.discard(self)
            self.traj = forked
            forked.cursors.add(self)
            with forked.lock:
                forked.demand = max(self.pos, target)
            forked.ensure(self.pos)

    def _ask(self) -> None:
        """Tell the trajectory how far this cursor will need it soon, and how often it needs a frame."""
        traj = self.traj
        with traj.lock:
            playing = [c for c in list(traj.cursors) if c.playing and c.watching(time.monotonic())]
            if playing:
                traj.stride = max(traj.unit, min(c.speed for c in playing) * traj.unit)
                traj.demand = max(traj.demand, *(int(c.pos + c.rate * LOOKAHEAD_S) + traj.stride for c in playing))
        if traj.needs_work():
            self.runs.scheduler.want(traj)

    def frame(self) -> dict:
        """The run's frame at this cursor's step (what the page says about the run matches what it draws)."""
        return self.traj.frame_at(self.pos)

    @contextmanager
    def model_near(self) -> Iterator[tuple[int, LiveRun]]:
        """(its step, the run) at the newest checkpoint at or before this cursor's step: no replay, for what is
        refreshed now and then while playing (the caller says which step it shows)."""
        with self.traj.model_near(self.pos) as got:
            yield got

    @contextmanager
    def model(self) -> Iterator[LiveRun]:
        """The run at this cursor's step (lock held while it is used)."""
        with self.traj.model_at(self.pos) as run:
            yield run

    def memo(self, key: Hashable, fn: Callable[[LiveRun], T]) -> T:
        """fn(the run at this cursor's step), computed once for every cursor of the trajectory at this step: a class
        following its teacher draws the same figures once. key: what else the result depends on (the language, a
        threshold); the result is shared, so it must not be changed by its users."""
        traj, at = self.traj, (self.pos, key)
        with traj.lock:
            if at in traj.memos:
                traj.memos.move_to_end(at)
                return traj.memos[at]
            with self.model() as run:
                value = fn(run)
            traj.memos[at] = value
            while len(traj.memos) > MEMOS:
                traj.memos.popitem(last=False)
            return value


_SERIALS = itertools.count(1)


def _one_a_tick(steps: list[int], per_tick: int) -> list[int]:
    """Of the frame steps, about one per `per_tick` steps (a viewer's speed), always the newest."""
    if len(steps) <= 1 or per_tick <= 0:
        return steps
    picked, last = [], None
    for s in steps:
        if last is None or s - last >= per_tick:
            picked.append(s)
            last = s
    if picked[-1] != steps[-1]:
        picked.append(steps[-1])
    return picked
