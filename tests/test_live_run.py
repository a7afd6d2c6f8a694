"""ui.live_run.drawn_once: a frame of a shared run is drawn once for every session showing it in one language."""
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
