"""The assistant lab's live run ("asst.data.train": one tiny GPT trained on the raw corpus and one on the cleaned
corpus, sim.dedup.live.CleaningRun) against the live-run contract, and what its frame and models hold."""
import numpy as np
import torch
from live_contract import assert_grouping_invariant, check_two_cursors

from labs.assistant.data import PARAMS, live_spec
from sim.dedup.clean import clean
from sim.dedup.corpus import make_corpus
from sim.dedup.live import EVALS, corpus_text, window_loss

DEFAULTS = {p.name: p.default for p in PARAMS}
CORPUS = make_corpus(0)
CLEANED = clean(CORPUS)


def spec(**v):
    return live_spec({**DEFAULTS, **v}, CORPUS, CLEANED)


def probe(run):
    """What the page could read of the two models at the step shown: each one's loss on the fixed windows."""
    return [window_loss(run.trainers[m], run.evals[k]) for m in ("raw", "clean") for k in EVALS]


def test_advance_grouping_changes_nothing():
    assert_grouping_invariant(spec(), [(1, 3), (20, 6)], probe)  # 25: an evaluation in the second part


def test_two_cursors_see_what_a_private_run_shows():
    frames, probes = check_two_cursors(spec(d_speed=1), probe)
    assert frames > 10 and probes > 5


def test_the_two_models_start_equal_and_read_their_own_corpus():
    run = spec().build()
    raw, cl = run.trainers["raw"], run.trainers["clean"]
    for a, b in zip(raw.model.parameters(), cl.model.parameters(), strict=True):
        assert torch.equal(a, b)  # the same initial weights: only the data differs
    tok = raw.task.tokenizer
    assert tok.decode(raw.task.train_ids.tolist()) == corpus_text(CORPUS.lines)
    assert tok.decode(cl.task.train_ids.tolist()) == corpus_text([CORPUS.lines[i] for i in CLEANED.kept])


def test_the_frame_is_compact_and_complete():
    run = spec().build()
    run.advance(26)
    f = run.frame()
    assert f["steps"] == 26 and set(f["models"]) == {"raw", "clean"}
    for m in f["models"].values():
        assert list(m["eval_steps"]) == [1, 25] and m["eval_steps"].dtype == np.int32
        assert all(m[k].dtype == np.float32 and m[k].shape == (2,) for k in EVALS)
        assert m["train"][0][-1] == 26 and np.isfinite(m["loss"])
    # the first evaluation: the two models are still almost the same
    assert abs(f["models"]["raw"]["heldout"][0] - f["models"]["clean"]["heldout"][0]) < 0.2


def test_the_run_stops_at_its_last_step():
    run = spec().build()
    run.max_steps = 3
    run.advance(10)
    assert run.steps == 3 and run.stopped


def test_different_settings_make_a_different_run():
    assert spec().settings != spec(d_threshold=0.8).settings and spec().settings == spec(d_speed=5).settings
