"""The sequence-models lab's live run ("seq.memory": an RNN, an LSTM, a causal transformer and Mamba stepped in turn,
sim.sequence.live.MemoryRun) against the live-run contract, and what its frame holds."""
import numpy as np
import torch
from live_contract import assert_grouping_invariant, check_two_cursors

from labs.sequence.memory import memory_spec, window_spec
from labs.sequence.schema import SCHEMA
from sim.sequence.memory import gradients_through_time, lstm_gates

DEFAULTS = {p.name: p.default for p in SCHEMA}
SMALL = {"m_distance": 8, "m_hidden": 16, "m_speed": 2}


def spec():
    return memory_spec({**DEFAULTS, **SMALL})


def probe(run):
    """What the page reads of the models at the step shown: the gradients through time, the LSTM's gates, and each
    model's logits on a fixed batch."""
    x, _, _ = run.task.batch(4, torch.Generator().manual_seed(5))
    with torch.no_grad():
        logits = [tr.model.eval()(x).numpy() for tr in run.trainers]
    grads = [gradients_through_time(tr) for tr in run.trainers]
    _, gates, key_at = lstm_gates(run.trainer("lstm"))
    return logits, grads, gates, key_at


def test_advance_grouping_changes_nothing():
    assert_grouping_invariant(spec(), [(4, 11)], probe)  # 4: a turn in the middle of a round


def test_two_cursors_see_what_a_private_run_shows():
    frames, probes = check_two_cursors(spec(), probe)
    assert frames > 10 and probes > 5


def test_speed_and_step_keep_the_labs_meaning():
    s = spec()
    assert (s.unit, s.speed, s.step_size) == (1, 2, 8)  # a tick: 2 steps in turn; Step: every model 2 steps
    run = s.build()
    run.advance(s.step_size)
    assert [tr.steps for tr in run.trainers] == [2, 2, 2, 2]
    run.advance(2)
    assert [tr.steps for tr in run.trainers] == [3, 3, 2, 2]
    assert [tr.config.kind for tr in run.trainers] == ["rnn", "lstm", "attn", "mamba"]
    assert [tr.config.hidden for tr in run.trainers] == [16, 16, 32, 16]


def test_the_frame_is_compact_and_complete():
    run = spec().build()
    run.advance(12)
    f = run.frame()
    assert f["steps"] == 12 and f["distance"] == 8 and f["keys"] == 8
    for r in f["runs"]:
        assert r["steps"] == 3 and r["curve"].dtype == np.int32 and list(r["curve"]) == [1, 2, 3]
        assert r["loss"].dtype == r["acc"].dtype == r["by_distance"].dtype == np.float32
        assert r["by_distance"].shape == (8,) and 0 <= r["reach"] <= 8 and not r["diverged"]


def test_a_run_stops_when_every_model_has_diverged():
    run = spec().build()
    for tr in run.trainers:
        head = tr.model.head if tr.config.kind != "attn" else tr.model.net.lm_head
        head.weight.data[0, 0] = float("nan")
    run.advance(2)
    assert not run.stopped and [tr.diverged for tr in run.trainers] == [True, True, False, False]
    run.advance(10)
    assert run.stopped and run.steps == 4


def test_the_benchmarks_read_the_pages_run_and_judge_the_ordering_from_its_frame():
    from benchmarks.classroom import lab_spec
    from benchmarks.sequence import far_accuracy, ordered

    spec, draw = lab_spec("sequence", seed=3)
    assert spec.key == "seq.memory" and spec.settings == (72, 64, 0.003, 3)
    run = spec.build()
    run.advance(3)
    assert draw([{**run.frame(), "step": 3, "run": 1, "n": 3}])[0]["panels"]
    frame = {"distance": 4, "runs": [{"kind": k, "by_distance": np.array(v, dtype=np.float32)} for k, v in (
        ("rnn", [1.0, 1.0, 0.5, np.nan]), ("lstm", [1.0, 1.0, 0.95, 0.9]), ("attn", [1.0] * 4),
        ("mamba", [1.0, 0.5, 0.0, 0.0]))]}
    acc = far_accuracy(frame)
    assert acc["rnn"] == 0.5 and abs(acc["lstm"] - 0.925) < 1e-6 and acc["attn"] == 1.0 and ordered(acc)
    assert acc["mamba"] == 0.0  # read too, but not part of the RNN / LSTM / transformer ordering
    assert not ordered({**acc, "rnn": 0.95}) and not ordered({**acc, "lstm": 0.5})


WINDOW = {"w_distance": 12, "w_window": 2, "w_layers": 2, "w_speed": 2, "w_seed": 4}


def window_probe(run):
    x, _, _ = run.task.batch(4, torch.Generator().manual_seed(5))
    with torch.no_grad():
        return [tr.model.eval()(x).numpy() for tr in run.trainers]


def test_the_window_run_keeps_the_contract():
    s = window_spec({**DEFAULTS, **WINDOW})
    assert s.key == "seq.window" and (s.speed, s.step_size) == (2, 4)
    assert_grouping_invariant(s, [(3, 8)], window_probe)
    frames, probes = check_two_cursors(s, window_probe)
    assert frames > 10 and probes > 5
    run = s.build()
    run.advance(4)
    assert [(tr.config.kind, tr.config.window, tr.config.layers, tr.steps) for tr in run.trainers] == [
        ("attn", 0, 2, 2), ("window", 2, 2, 2)]
    assert [r["kind"] for r in run.frame()["runs"]] == ["attn", "window"]


ENCDEC = {"e_text": "en", "e_layers": 1, "e_width": 16, "e_speed": 2, "e_seed": 1}


def encdec_probe(run):
    from sim.sequence.encdec import cross_losses

    return cross_losses({tr.style: tr for tr in run.trainers}, n=8)


def test_the_encoder_decoder_run_keeps_the_contract():
    from labs.sequence.encdec import encdec_spec

    s = encdec_spec({**DEFAULTS, **ENCDEC})
    assert s.key == "seq.encdec" and (s.speed, s.step_size) == (2, 4)
    assert_grouping_invariant(s, [(3, 8)], encdec_probe)
    frames, probes = check_two_cursors(s, encdec_probe)
    assert frames > 10 and probes > 5
    run = s.build()
    run.advance(5)
    f = run.frame()
    assert [(r["kind"], r["steps"]) for r in f["runs"]] == [("bert", 3), ("gpt", 2)] and f["steps"] == 5
    assert [tr.model.config.causal for tr in run.trainers] == [False, True]
    assert f["runs"][0]["curve"].dtype == np.int32 and f["runs"][0]["loss"].dtype == np.float32
