"""The attention lab's live runs (sim.transformers.live.AttentionRun: "att.train", one tiny transformer, and
"att.compare", with and without the causal mask) against the live-run contract: grouping, shared cursors."""
import numpy as np
import pytest
from live_contract import assert_grouping_invariant, assert_same, check_two_cursors

from labs.attention.schema import SCHEMA
from labs.attention.training import LABELS, drawn, live_spec, probe_maps
from sim.core.live import Runs, Scheduler
from sim.transformers.tasks import CORPORA
from sim.transformers.transformer import generation_report
from ui.i18n import catalogue

EN = catalogue("en")
TEMPLATES = {k: EN[f"att.{k}"] for k in LABELS}
DEFAULTS = {p.name: p.default for p in SCHEMA}


def spec(kind: str, **v):
    v = {**DEFAULTS, **v}
    return live_spec(kind, v, CORPORA[v["corpus"]] if v["task"] == "text" else "")


def probe_of(typed: str):
    """What the page reads of the model at the step shown: the maps of a probe the user typed, what the models
    generate from it, the first model's position table."""
    def probe(run):
        text, prompt, ok = run.task.read_probe(typed)
        assert ok
        return run.maps(text), generation_report(run.trainers, prompt, TEMPLATES), run.trainers[0].position_table()
    return probe


CASES = {
    "train": ("train", {}, "hgfed"),
    "train_text": ("train", {"task": "text", "context": 8, "layers": 2, "causal": False}, "the cat"),
    "compare": ("compare", {"task": "sort", "speed": 5}, "dcbae"),
}


@pytest.mark.parametrize("case", CASES)
def test_advance_grouping_changes_nothing(case):
    kind, v, typed = CASES[case]
    assert_grouping_invariant(spec(kind, **v), [(7, 12)], probe_of(typed))


@pytest.mark.parametrize("case", CASES)
def test_two_cursors_see_what_a_private_run_shows(case):
    kind, v, typed = CASES[case]
    check_two_cursors(spec(kind, **v), probe_of(typed))


def test_the_frame_is_compact_and_in_no_language():
    run = spec("compare", task="sort").build()
    run.advance(3)
    f = run.frame()
    assert f["steps"] == 3 and f["probe"] == run.task.read_probe(run.task.default_probe())[0]
    assert [r["causal"] for r in f["runs"]] == [True, False]
    for r in f["runs"]:
        assert r["maps"].dtype == np.uint8 and r["maps"].shape == (1, 2, 10, 10)  # layers, heads, T, T
        assert r["curve"][0].dtype == np.int32 and r["curve"][1].dtype == np.float32 and len(r["curve"][0]) == 3
    # the open model reads the future: its maps have weight above the diagonal, the causal one's none
    causal, open_ = (r["maps"][0] for r in f["runs"])
    above = np.triu(np.ones((10, 10), dtype=bool), 1)
    assert causal[:, above].max() == 0 and open_[:, above].max() > 0
    assert_same(f["runs"][0]["maps"], run.maps(f["probe"])[0])


def test_a_diverged_model_stops_both():
    run = spec("compare").build()
    run.advance(2)
    run.trainers[1].model.lm_head.weight.data[0, 0] = float("nan")
    run.advance(5)
    assert run.stopped and run.steps == 3 and [tr.steps for tr in run.trainers] == [3, 3]
    assert not run.trainers[0].diverged and run.trainers[1].diverged


def test_while_playing_a_typed_probe_is_read_at_the_newest_checkpoint_and_says_so():
    s = spec("train", speed=5)
    runs = Runs(Scheduler(workers=1))
    try:
        c = runs.open(s)
        c.advance(30)
        kept = [s for s, _ in c.traj.checkpoints]  # one after every CHECKPOINT_S of compute
        step = max(s for s in c.traj.frames if s < c.traj.head and s not in kept)  # behind the head
        frame = {**c.traj.frames[step], "step": step, "run": c.serial, "n": step}
        probe = "hgfed|hgfe"
        got = probe_maps(c, frame, probe, playing=True)
        checkpoint = max(s for s in kept if s <= step)
        assert got[0] == probe and got[2] == checkpoint < step
        private = s.build()
        private.advance(checkpoint)
        assert_same(got[1], private.maps(probe))
        view = drawn("train", frame, TEMPLATES, got)
        assert view["caption"].endswith(TEMPLATES["maps_at"].format(step=checkpoint))
        assert view["panels"][1]["row_labels"] == list(probe)
        assert probe_maps(c, frame, frame["probe"], playing=True) is None  # the default probe: the frame's own
        c.reset()
        c.advance(step)  # paused at that frame: the model at its step, replayed
        assert c.pos == step
        paused = probe_maps(c, frame, probe, playing=False)
        private.advance(step - checkpoint)
        assert paused[2] == step
        assert_same(paused[1], private.maps(probe))
    finally:
        runs.scheduler.close()
