"""ui.live_run: a frame of a shared run is drawn once for every session showing it in one language (drawn_once); a
page whose run gets less than it asks says that the server is shared (busy)."""
import time

import pytest
from streamlit.testing.v1 import AppTest
from waits import wait_until

from sim.core.live import LiveSpec
from ui.i18n import language
from ui.live_run import drawn_once


def test_a_frame_is_drawn_once_per_step_and_language_and_each_session_keeps_its_own_marks():
    spec = LiveSpec("test.drawn", ("settings", 1), build=lambda: None)
    calls = []

    def draw(frame):
        calls.append(frame["step"])
        return {"caption": f"step {frame['step']}", "run": "not mine", "n": -1}

    with language("en"):
        one = drawn_once(spec, [{"step": 3, "run": 1, "n": 3}, {"step": 4, "run": 1, "n": 4}], draw)
        other = drawn_once(spec, [{"step": 4, "run": 2, "n": 4}], draw)
    assert calls == [3, 4] and other == [{"caption": "step 4", "step": 4, "run": 2, "n": 4}]
    assert one[1] == {"caption": "step 4", "step": 4, "run": 1, "n": 4}
    with language("zh"):
        drawn_once(spec, [{"step": 4, "run": 3, "n": 4}], draw)
    drawn_once(LiveSpec("test.drawn", ("settings", 2), build=lambda: None), [{"step": 4, "run": 4, "n": 4}], draw)
    assert calls == [3, 4, 4, 4]  # another language, other settings: drawn again


def _busy_page(lang: str) -> None:
    """A live view whose run costs 20 ms of CPU a step, asked for at 30 steps a second."""
    import time

    import streamlit as st

    from sim.core.live import LiveSpec
    from ui import live_run

    class Spin:
        steps, stopped = 0, False

        def advance(self, n: int) -> None:
            for _ in range(n):
                end = time.thread_time() + 0.02
                while time.thread_time() < end:
                    pass
                self.steps += 1

        def frame(self) -> dict:
            return {"steps": self.steps}

    st.session_state["lang"] = lang
    spec = LiveSpec("test.busy", (st.session_state.get("which", 0),), build=Spin, speed=1)
    live_run.live_lab(spec, lambda frames, seq, status, cursor: st.write(f"frames {len(frames)}"), prefix="att")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_run_that_gets_less_than_it_asks_says_the_server_is_shared_and_a_run_alone_does_not(lang):
    """One worker (one core), runs of 20 ms steps asking 30 steps/s each: alone, a run gets what it asks and
    nothing is said; three different runs share the core (about 17 steps/s each) and each playing page says
    how many runs there are and what it gets."""
    import threading

    from sim.core.live import Runs, Scheduler
    from ui import live_run

    live_run.RUNS.scheduler.close()
    live_run.RUNS = Runs(Scheduler(workers=1))
    pages, cursors, done = [], [], threading.Event()

    def browsers():  # each playing view's browser asks for the next frames about 20 times a second
        while not done.is_set():
            for c in list(cursors):
                c.frames(after=c.pos)
            time.sleep(0.05)

    threading.Thread(target=browsers, daemon=True).start()
    busy = "different runs" if lang == "en" else "个不同的运行"
    try:
        for which in range(3):
            at = AppTest.from_function(_busy_page, args=(lang,), default_timeout=30)
            at.session_state["which"] = which
            at.run()
            at.button(key="test.busy.play").click().run()
            pages.append(at)
            cursors.append(at.session_state["test.busy.cursor"])
            if which == 0:  # alone: one run, so nothing is said whatever its rate (no wall-clock threshold)
                wait_until(lambda: cursors[0].shown_rate() > 0, timeout=10, what="a run alone computing")
                assert not [c for c in at.run().caption if busy in c.value]
        for at in pages:
            wait_until(lambda at=at: any(busy in c.value for c in at.run().caption), timeout=15, what="the message")
        said = next(c.value for c in pages[0].caption if busy in c.value)
        assert " 3 " in said and "30" in said, said
    finally:
        done.set()
