"""The live-run controller: plays a training run on a thread of its own, off the page's rerun cycle.

Like TensorFlow Playground's Player (src/playground.ts), it owns the timer and calls one step then
takes a frame: here `step(speed)` advances the model by one tick of `speed` epochs or optimizer
steps (the lab's speed setting), and `snapshot()` returns what the browser draws. Training runs at
the speed asked for whether or not the browser keeps up; the page takes the newest frames when it
reruns, and older ones are dropped. No Streamlit calls here, so the timing is tested on its own.

Thread safety: the run's model is only touched with `lock` held (the player holds it for each step
and snapshot; the page holds it for anything else it reads). Lock order: `lock`, then the frames'
condition, never the other way round. A run nobody watches (its tab closed, so its frames are not
taken for IDLE_S) pauses by itself and its thread ends, so nothing keeps the session's model alive
once Streamlit drops the session.
"""
from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable

from ui.i18n import language

FRAMES_PER_S = 30  # snapshots a second, and ticks a second by default (a tick per frame, `speed` epochs each)
KEEP = 6  # frames kept for the page; older ones are dropped
IDLE_S = 20.0  # a playing run whose frames nobody took for this long pauses (the tab is gone)
_SERIALS = itertools.count(1)


class Player:
    """Play / Pause / Step of one run; `frames()` hands the page what happened since its last look."""

    def __init__(self, step: Callable[[int], None], snapshot: Callable[[], dict], stopped: Callable[[], bool],
                 model: object = None, ticks_per_s: float = FRAMES_PER_S, frames_per_s: float = FRAMES_PER_S,
                 idle_s: float = IDLE_S):
        self._step, self.snapshot, self._stopped = step, snapshot, stopped  # the page may replace snapshot
        self.serial = next(_SERIALS)  # tells this run's frames from another's (a Reset makes a new player)
        self.model = model  # what it plays (a trainer, or a list of them): the page reads it with `lock` held
        self.lang: str | None = None  # the language frames are drawn in (the page sets it; a frame may hold words)
        self.speed = 1  # epochs (or steps) per tick; the page sets it from its speed slider
        self.step_size: int | None = None  # what the Step button trains (None: one tick, `speed`)
        self.tick_s, self.frame_s, self.idle_s = 1 / ticks_per_s, 1 / frames_per_s, idle_s
        self.lock = threading.RLock()  # held while the model is stepped or read
        self._new = threading.Condition()  # signals a new frame, and guards what follows
        self._frames: deque[tuple[int, dict]] = deque(maxlen=KEEP)
        self._seq = 0
        self._playing = False
        self._thread: threading.Thread | None = None
        self._watched = time.monotonic()
        self.error: BaseException | None = None  # what stopped the thread, if it failed (the page says so)

    @property
    def playing(self) -> bool:
        return self._playing

    def play(self) -> None:
        """Start (or keep) playing; a stopped run (diverged, finished) does not start."""
        if self.stopped():
            return
        with self._new:
            if self._playing:
                return
            self._playing, self.error = True, None
            self._watched = time.monotonic()
            if self._thread is None:  # else the thread still running goes on (see _run)
                self._thread = threading.Thread(target=self._run, name="live-run", daemon=True)
                self._thread.start()

    def pause(self) -> None:
        with self._new:
            self._playing = False
            self._new.notify_all()

    def close(self, timeout: float = 5.0) -> None:
        """Pause and wait for the thread to end (a program that exits should not leave it mid-step)."""
        self.pause()
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def step_once(self) -> None:
        """Pause, then train step_size (or one tick) and take a frame of it."""
        self.pause()
        with self.lock:
            self._step(self.step_size or self.speed)
            self._publish(self._frame())

    def stopped(self) -> bool:
        with self.lock:
            return self._stopped()

    def frames(self, after: int, timeout: float = 0.0) -> list[tuple[int, dict]]:
        """(seq, frame) of the kept frames newer than `after`; while playing, those made in the next `timeout` s too.

        Collecting for the whole `timeout` (not returning at the first new frame) sends a few frames per page
        rerun, which the browser plays back evenly. With no frame yet at all, one is taken now, so the page
        always has something to draw.
        """
        if self._seq == 0:
            self.refresh()
        deadline = time.monotonic() + timeout
        with self._new:
            self._watched = time.monotonic()
            while self._playing and (left := deadline - time.monotonic()) > 0:
                self._new.wait(left)
            return [(s, f) for s, f in self._frames if s > after]

    def latest(self) -> tuple[int, dict]:
        """The newest frame (taken now if there is none)."""
        return self.frames(-1)[-1]

    def refresh(self) -> None:
        """Take a frame of the model as it is now (after the page changed what a frame shows)."""
        with self.lock:
            self._publish(self._frame())

    def _frame(self) -> dict:
        with language(self.lang):  # this thread may not be the page's: it has no session to read the language from
            return self.snapshot()

    def _publish(self, frame: dict) -> None:
        with self._new:
            self._seq += 1
            self._frames.append((self._seq, frame))
            self._new.notify_all()

    def _run(self) -> None:
        while True:
            self._play_until_paused()
            with self._new:
                if self._playing:  # Play was pressed again while this thread was on its way out
                    continue
                self._thread = None
                self._new.notify_all()
                return

    def _play_until_paused(self) -> None:
        """Tick until paused, stopped (diverged, finished), unwatched or failed; the last three pause the run."""
        next_tick = next_frame = time.monotonic()
        try:
            while self._playing:
                with self.lock:
                    self._step(self.speed)
                    done = self._stopped()
                    now = time.monotonic()
                    # half a tick early counts: with one tick per frame, a tick a hair before its frame is due
                    # would otherwise skip that frame, and every other one
                    if done or now >= next_frame - self.tick_s / 2:
                        self._publish(self._frame())
                        next_frame = max(next_frame + self.frame_s, now)
                if done or now - self._watched > self.idle_s:  # idle: nobody has looked for a while, the tab is gone
                    self.pause()
                    return
                next_tick = max(next_tick + self.tick_s, now - self.tick_s)  # never rush to catch up
                time.sleep(max(0.0, next_tick - time.monotonic()))
        except Exception as e:  # the page shows a message; the user can press Play again
            self.error = e
            self.pause()
