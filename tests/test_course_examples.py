"""The course texts' worked examples that the labs reproduce, with the texts' own numbers (../shared/seeds): the
next-token pairs of "我今天吃了一碗面" and the article's 7 B / 2 T against 14 B / 1 T plans (language-model lab),
the embedding lookup of ids [4, 18, 7] (shape lab), the notes' 8-token batch through the FFN (blocks lab), and the
features of a 224×224×3 picture and of the (age, income) shopper (classification lab)."""
import math

import pytest
import torch

from sim.language.lm import ARTICLE_SENTENCE, make_task, next_token_pairs, shift_targets
from sim.language.scaling import FITS, article_plans
from sim.language.tokenizer import make_tokenizer
from sim.nets.training import ClassifierConfig, Trainer, feature_examples, input_features, mlp_parameters
from sim.transformers.blocks import ffn_trace
from sim.transformers.shapes import PRESETS, ShapeConfig, ShapeError, build_model, embedding_lookup
from sim.transformers.transformer import notes_ffn_batch


# ---------- language-model lab: next-token pairs ----------
def test_the_articles_sentence_gives_its_next_token_pairs():
    tok = make_tokenizer("char", ARTICLE_SENTENCE, 0)
    pairs = [(tok.decode(x), tok.decode([y])) for x, y in next_token_pairs(tok, ARTICLE_SENTENCE)]
    assert ARTICLE_SENTENCE == "我今天吃了一碗面" and len(pairs) == 7
    for given in (("我今天吃了一碗", "面"), ("我今天吃了一", "碗"), ("我今天吃了", "一")):
        assert given in pairs  # the article's three
    assert pairs[0] == ("我", "今")  # every character but the first is a target once
    assert [y for _, y in pairs] == list(ARTICLE_SENTENCE[1:])


def test_the_pairs_are_the_targets_training_uses():
    """The lab's training batches are shift_targets of windows: each target is the token after its input."""
    task = make_task("我今天吃了一碗面。" * 40, "char", 0, context=8)
    x, y = task.batch(4, torch.Generator().manual_seed(0))
    assert torch.equal(x[:, 1:], y[:, :-1])
    seq = torch.arange(9)
    assert [t.tolist() for t in shift_targets(seq)] == [list(range(8)), list(range(1, 9))]


# ---------- language-model lab: the article's two plans ----------
@pytest.mark.parametrize("fit", ["hoffmann", "epoch"])
def test_the_articles_plans_cost_the_same_to_train_and_twice_to_serve(fit):
    r = article_plans(fit, served=1e13)
    a, b = r["plans"]["A"], r["plans"]["B"]
    assert (a["N"], a["D"], b["N"], b["D"]) == (7e9, 2e12, 14e9, 1e12)
    assert a["train"] == b["train"] == pytest.approx(8.4e22)  # 6·N·D, equal
    assert (a["per_token"], b["per_token"]) == (1.4e10, 2.8e10)  # 2·N per served token
    assert b["serve"] == 2 * a["serve"] == pytest.approx(2.8e23)
    assert b["loss"] < a["loss"]  # the larger model gets a little lower
    assert FITS[fit].loss(7e9, r["D_match"]) == pytest.approx(b["loss"])  # A trained to B's loss
    assert r["D_match"] > 2e12 and r["extra"] == pytest.approx(6 * 7e9 * r["D_match"] - 8.4e22)
    assert r["break_even"] == pytest.approx(r["extra"] / 1.4e10)


def test_the_plans_losses_by_hoffmann():
    """L = 1.69 + 406.4/N^0.34 + 410.7/D^0.28, worked by hand: A 2.020, B 2.014; A needs about 2.36 T tokens to
    reach B's loss, and has paid the extra training back after about 1.1 T tokens served."""
    r = article_plans("hoffmann", served=1e13)
    assert r["plans"]["A"]["loss"] == pytest.approx(2.0203, abs=1e-4)
    assert r["plans"]["B"]["loss"] == pytest.approx(2.0136, abs=1e-4)
    assert r["D_match"] == pytest.approx(2.36e12, rel=0.01)
    assert r["break_even"] == pytest.approx(1.1e12, rel=0.05)


# ---------- shape lab: the embedding lookup ----------
def test_the_notes_ids_pick_three_rows_of_the_labs_embedding():
    c = ShapeConfig()
    r = embedding_lookup(c)
    assert r.ids == (4, 18, 7) and r.table_shape == (c.vocab_size, c.d_model) == (64, 8)
    assert r.out_shape == (3, 8) and r.rows_are_table_rows
    table = build_model(c, "cpu").tok_emb.weight  # the lab's model starts with this very table
    assert torch.equal(r.rows, table[[4, 18, 7]])
    assert torch.equal(r.rows[0], table[4])  # the notes: row 1 is token 4's vector


def test_a_large_table_gives_shapes_only_and_a_small_vocabulary_refuses():
    r = embedding_lookup(PRESETS["gpt2"])
    assert r.rows is None and r.table_shape == (50257, 768) and r.out_shape == (3, 768)
    with pytest.raises(ShapeError) as e:
        embedding_lookup(ShapeConfig(vocab_size=18))
    assert e.value.code == "id_range" and e.value.params == {"id": 18, "vocab_size": 18}


# ---------- blocks lab: the notes' batch through the FFN ----------
def test_eight_tokens_through_the_notes_ffn():
    r = notes_ffn_batch()
    assert all(r[k].shape == (8, 2) for k in ("X", "H", "A", "Y"))  # [8, 2] stays [8, 2], as the notes say
    assert r["X"][0].tolist() == [1, 2] and r["H"][0].tolist() == [5, 2] and r["Y"][0].tolist() == [5, 9]
    assert torch.equal(r["A"], r["H"].clamp_min(0))
    assert torch.equal(r["Y"], r["loop"])  # the batch gives what row after row gives


def test_ffn_shapes_at_the_sections_sizes():
    assert ffn_trace("gelu", 768, 3072, 8) == [("up", (8, 768), (8, 3072)), ("act", (8, 3072), (8, 3072)),
                                               ("down", (8, 3072), (8, 768))]
    assert ffn_trace("gelu", 2, 2, 8)[-1][2] == (8, 2)


# ---------- classification lab: features ----------
def test_the_picture_and_the_shopper_as_features():
    assert input_features((224, 224, 3)) == 150528  # the article's figure
    rows = {r["name"]: r for r in feature_examples(("x1", "x2"), (4, 2), 1)}
    assert rows["image"]["features"] == 150528 and rows["image"]["logistic"] == 150529
    assert rows["purchase"]["features"] == 2 and rows["purchase"]["logistic"] == 3  # θ₀, θ₁, θ₂
    assert rows["image"]["first_layer"] == 150528 * 4


def test_parameter_count_is_the_labs_network():
    config = ClassifierConfig(features=("x1", "x2", "x1sq"), hidden=(4, 3))
    trainer = Trainer(config)
    sizes = [int(s) for s in trainer.net.sizes]
    assert mlp_parameters(sizes) == len(trainer.net.params) == 3 * 4 + 4 + 4 * 3 + 3 + 3 * 1 + 1
    lab = feature_examples(config.features, config.hidden, sizes[-1])[0]
    assert lab["network"] == len(trainer.net.params) and math.prod(lab["shape"]) == 3
