"""ui.player: the live-run controller plays on its own thread, hands over frames, pauses, steps and stops."""
import threading
import time

import pytest
from waits import wait_until

from ui.player import KEEP, Player


class Counter:
    """A stand-in for a model: step() adds one; it "diverges" at `stop_at`; step() may fail on purpose."""

    def __init__(self, stop_at: int | None = None, fail_at: int | None = None):
        self.n, self.stop_at, self.fail_at = 0, stop_at, fail_at
        self.inside = 0  # steps and snapshots running right now: the lock must keep this at most 1

    def step(self, n: int = 1):
        self.inside += 1
        assert self.inside == 1, "two threads inside the model at once"
        if self.n == self.fail_at:
            self.inside -= 1
            raise RuntimeError("worker failed")
        self.n += n
        self.inside -= 1

    def snapshot(self) -> dict:
        self.inside += 1
        assert self.inside == 1
        frame = {"n": self.n}
        self.inside -= 1
        return frame

    def stopped(self) -> bool:
        return self.stop_at is not None and self.n >= self.stop_at


def player(model: Counter, **kw) -> Player:
    return Player(model.step, model.snapshot, model.stopped, **kw)


def test_a_paused_run_hands_over_one_frame_of_its_state():
    m = Counter()
    p = player(m)
    frames = p.frames(after=0)
    assert [f for _, f in frames] == [{"n": 0}] and not p.playing
    assert p.frames(after=frames[-1][0]) == []  # nothing new since


def test_play_trains_on_its_own_thread_and_pause_stops_it():
    m = Counter()
    p = player(m, ticks_per_s=1000, frames_per_s=100)
    p.play()
    wait_until(lambda: m.n > 50)
    seen = p.frames(after=0, timeout=1.0)
    assert seen and seen[-1][1]["n"] > 0 and len(seen) <= KEEP
    assert [s for s, _ in seen] == sorted(s for s, _ in seen)
    thread = p._thread
    p.pause()
    thread.join(10)  # the thread ends: nothing steps the model any more
    assert not thread.is_alive() and p._thread is None and not p.playing


def test_the_tick_rate_bounds_the_steps():
    m = Counter()
    p = player(m, ticks_per_s=50, frames_per_s=10)
    p.play()
    time.sleep(1.0)  # the point of the test: how many ticks fit in one second
    p.pause()
    assert 10 <= m.n <= 60  # ~50 in a second; the bound is loose, the machine may be busy


def test_step_pauses_then_steps_once_at_the_speed_with_a_frame():
    m = Counter()
    p = player(m)
    p.speed = 5
    last = p.latest()[0]
    p.step_once()
    assert m.n == 5 and not p.playing
    assert [f for _, f in p.frames(after=last)] == [{"n": 5}]


def test_a_stopped_run_stops_playing_with_its_last_frame_and_cannot_play():
    m = Counter(stop_at=30)
    p = player(m, ticks_per_s=1000)
    p.play()
    wait_until(lambda: not p.playing)
    assert m.n == 30 and p.latest()[1] == {"n": 30}
    p.play()
    assert not p.playing and m.n == 30


def test_an_unwatched_run_pauses_itself():
    m = Counter()
    p = player(m, ticks_per_s=1000, idle_s=0.2)
    p.play()
    wait_until(lambda: not p.playing, timeout=5)
    wait_until(lambda: p._thread is None, 5, "the thread to end")


def test_a_failing_step_pauses_with_the_error_and_play_starts_again():
    m = Counter(fail_at=5)
    p = player(m, ticks_per_s=1000)
    p.play()
    wait_until(lambda: not p.playing)
    assert isinstance(p.error, RuntimeError) and m.n == 5
    m.fail_at = None
    p.play()
    assert p.error is None
    wait_until(lambda: m.n > 10)
    p.pause()


def test_play_pause_play_quickly_keeps_one_thread_and_keeps_playing():
    m = Counter()
    p = player(m, ticks_per_s=2000)
    for _ in range(50):
        p.play()
        p.pause()
    p.play()
    assert p.playing
    n = m.n
    wait_until(lambda: m.n > n, 10, "more steps")
    assert sum(t.name == "live-run" and t.is_alive() for t in threading.enumerate()) == 1
    p.pause()


@pytest.mark.parametrize("readers", [4])
def test_the_page_reads_the_model_under_the_lock_while_it_trains(readers):
    m = Counter()
    p = player(m, ticks_per_s=5000, frames_per_s=1000)
    p.play()
    errors = []

    def read():
        try:
            for _ in range(200):
                with p.lock:
                    m.snapshot()
                p.frames(after=0)
        except AssertionError as e:
            errors.append(e)

    threads = [threading.Thread(target=read) for _ in range(readers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    p.pause()
    assert not errors
