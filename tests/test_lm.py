"""The language-model engine: the synthetic language's exact entropy against Monte Carlo, sampling rules against
direct computation, the tiny GPT reaching the entropy floor, per-token losses, the sweep and the text checks."""
import math

import numpy as np
import pytest
import torch

from sim.language.grammar import GRAMMARS, grammar
from sim.language.lm import (
    LMRun,
    TextError,
    generate,
    lm_trainer,
    make_task,
    next_token_probs,
    read_text,
    sweep,
    synthetic_text,
    token_losses,
    top_tokens,
)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_entropy_matches_monte_carlo(lang):
    g = grammar(lang)
    words = g.sample_words(200_000, seed=1)
    h_word = -np.mean([math.log(p) for _, p in words])
    chars = np.mean([len(w) for w, _ in words])
    assert g.entropy_per_word() == pytest.approx(h_word, rel=0.01)
    assert g.entropy_per_char() == pytest.approx(h_word / chars, rel=0.01)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_grammar_is_well_formed_and_parses_back(lang):
    g = grammar(lang)
    for state, words in GRAMMARS[lang].items():
        assert sum(p for _, p, _ in words) == pytest.approx(1.0), state
        texts = [w for w, _, _ in words]
        assert not any(a != b and b.startswith(a) for a in texts for b in texts), f"{state} is not prefix-free"
    pi = g.stationary()
    assert np.allclose(pi @ g.transition_matrix(), pi) and pi.sum() == pytest.approx(1.0)
    words = g.sample_words(300, seed=3)
    assert g.parse("".join(w for w, _ in words)) == [w for w, _ in words]


def test_temperature_zero_is_argmax_and_temperature_scales():
    logits = torch.tensor([0.5, 2.0, -1.0, 1.9])
    assert next_token_probs(logits, 0.0).tolist() == [0, 1, 0, 0]
    assert torch.allclose(next_token_probs(logits, 0.5), torch.softmax(logits.double() * 2, -1))
    assert next_token_probs(logits, 1e-4).argmax() == 1 and next_token_probs(logits, 1e-4).max() > 0.99


def test_top_k_and_top_p_against_direct_computation():
    logits = torch.tensor([1.0, 3.0, 0.0, 2.0, -1.0])
    p = torch.softmax(logits.double(), -1).tolist()
    order = sorted(range(5), key=lambda i: -p[i])
    k2 = [p[i] if i in order[:2] else 0.0 for i in range(5)]
    assert torch.allclose(next_token_probs(logits, 1.0, top_k=2), torch.tensor(k2).double() / sum(k2))
    for top_p in (0.3, 0.7, 0.9, 0.99):
        kept, mass = [], 0.0
        for i in order:  # the smallest set of most likely tokens whose mass reaches top_p
            kept.append(i)
            mass += p[i]
            if mass >= top_p:
                break
        want = torch.tensor([p[i] if i in kept else 0.0 for i in range(5)]).double()
        assert torch.allclose(next_token_probs(logits, 1.0, top_p=top_p), want / want.sum()), top_p
    assert torch.allclose(next_token_probs(logits, 1.0, top_k=0, top_p=1.0), torch.tensor(p).double())


@pytest.fixture(scope="module")
def trained():
    text, h = synthetic_text("en", 30_000, 0)
    task = make_task(text, "char", 0, 32, h)
    run = LMRun(lm_trainer(task, 1, 2, 32, 1e-2, 0, batch_size=16))
    run.step(500)
    return run


def test_tiny_gpt_approaches_the_entropy_floor(trained):
    floor = trained.task.loss_floor()
    assert 0.3 < floor < 0.35
    assert trained.last_val() < 1.35 * floor  # generous: a few hundred steps of a 1-layer model
    steps, losses = trained.val_curve()
    assert steps[0] == 1 and losses[0] > 2 * losses[-1]


def test_greedy_generation_is_argmax_and_reproducible(trained):
    tr = trained.trainer
    a = generate(tr, "the cat", 20, 0.0, 0, 1.0, seed=1)
    assert a == generate(tr, "the cat", 20, 0.0, 0, 1.0, seed=2)  # greedy: the seed does not matter
    assert generate(tr, "the cat", 20, 1.0, 5, 0.9, 3) == generate(tr, "the cat", 20, 1.0, 5, 0.9, 3)
    words = {w.strip(" .") for rules in GRAMMARS["en"].values() for w, _, _ in rules}
    assert all(w.strip(".") in words for w in a.split()[:-1]), a  # it writes the language's words


def test_token_losses(trained):
    tl = token_losses(trained.trainer, " the cat sees a dog.")
    assert tl.pieces[:4] == [" ", "t", "h", "e"] and tl.losses[0] is None
    ids = trained.task.tokenizer.encode(" the cat sees a dog.")
    assert tl.losses[2] == pytest.approx(-math.log(float(tl.probs[1, ids[2]])))
    assert torch.allclose(tl.probs.sum(-1), torch.ones(len(ids)).double())
    top = top_tokens(tl.probs[1], trained.task.tokenizer, 3)
    assert top[0][0] == "h" and top[0][1] > 0.9  # after " t" comes "h"


def test_bpe_task_floor_is_per_token():
    text, h = synthetic_text("zh", 8000, 0)
    task = make_task(text, "bpe", 500, 16, h)
    assert task.chars_per_token > 1 and task.loss_floor() == pytest.approx(h * task.chars_per_token)
    assert task.tokenizer.decode(task.val_ids.tolist()) == text[int(len(text) * 0.9):]


def test_sweep_runs_spend_their_budget():
    text, h = synthetic_text("en", 8000, 0)
    task = make_task(text, "char", 0, 16, h)
    runs = list(sweep(task, (1e7,), (4, 8), layers=1, batch_size=8))
    assert [r.width for r in runs] == [4, 8] and runs[0].params < runs[1].params
    for r in runs:
        assert r.tokens == r.steps * 8 * 16 and abs(6 * r.params * r.tokens - 1e7) < 6 * r.params * 8 * 16
        assert math.isfinite(r.loss) and r.curve[-1][1] == r.loss


def test_text_checks():
    assert read_text(("猫" * 300).encode("utf-8-sig")) == "猫" * 300
    for raw, code in ((b"\xff\xfe" + b"x" * 300, "not_text"), (b"short", "too_short"),
                      (b"a" * (2 * 1024 * 1024 + 1), "too_large")):
        with pytest.raises(TextError) as e:
            read_text(raw)
        assert e.value.code == code
    with pytest.raises(ValueError):
        make_task("abc " * 60, "char", 0, 200)


def test_sweep_points_keep_curve_points_after_enough_steps():
    from sim.language.lm import sweep_points

    runs = [{"params": 100, "tokens": 1000, "steps": 100, "curve": [[100, 3.0], [500, 2.0], [1000, 1.5]]},
            {"params": 900, "tokens": 200, "steps": 20, "curve": [[200, 2.5]]}]
    assert sweep_points(runs, min_steps=50) == [(100.0, 500.0, 2.0), (100.0, 1000.0, 1.5)]
    assert len(sweep_points(runs, min_steps=1)) == 4
