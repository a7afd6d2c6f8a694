"""sim.sequence.encdec: the two masks against sim.transformers' causal mask, the encoder's masked batches, the losses
of the table against log-softmax by hand, what each style can see (the decoder's blank ignores the right side, the
encoder's does not), the user's text validated, greedy continuation by hand, and the section's claim after training
(the encoder fills blanks better, the decoder continues better)."""
import numpy as np
import pytest
import torch

from sim.sequence.encdec import (
    MASK,
    EncDecTrainer,
    bert_batch,
    continue_text,
    cross_losses,
    fill_blank,
    masks,
    parse_blank,
    text_task,
)
from sim.transformers.attention import causal_mask


def pair(steps=0, seed=0, text="en"):
    task = text_task(text)
    trs = {s: EncDecTrainer(task, s, 1, 16, 3e-3, seed) for s in ("bert", "gpt")}
    for _ in range(steps):
        for tr in trs.values():
            tr.step(1)
    return task, trs


def test_the_masks_are_full_and_causal():
    m = masks(7)
    assert m["bert"].all() and m["bert"].shape == (7, 7)
    assert np.array_equal(m["gpt"], causal_mask(7).numpy())


def test_the_encoders_batch_masks_some_characters_and_asks_for_them():
    task = text_task("en")
    x = task.windows(50, torch.Generator().manual_seed(0))
    inp, target = bert_batch(task, x, torch.Generator().manual_seed(1))
    picked = inp == task.mask
    assert picked.any(1).all() and 0.1 < picked.float().mean() < 0.3
    assert torch.equal(inp[~picked], x[~picked]) and torch.equal(target[picked], x[picked])
    assert (target[~picked] == -100).all()
    assert task.decode([task.mask]) == MASK and task.decode(task.encode("the cat")) == "the cat"


def test_the_tables_losses_are_cross_entropy_by_hand():
    task, trs = pair(steps=5)
    table = cross_losses(trs, n=8, seed=3)
    x = task.windows(8, torch.Generator().manual_seed(3))
    T, mid, V = task.length, task.length // 2, len(task.chars)
    with torch.no_grad():
        gpt, bert = trs["gpt"].model.eval(), trs["bert"].model.eval()
        lp = torch.log_softmax(gpt(x[:, :mid])[:, -1, :V], -1)
        assert abs(table["gpt"]["blank"] + lp[torch.arange(8), x[:, mid]].mean().item()) < 1e-5
        lp = torch.log_softmax(gpt(x[:, :T - 1])[:, -1, :V], -1)
        assert abs(table["gpt"]["next"] + lp[torch.arange(8), x[:, T - 1]].mean().item()) < 1e-5
        filled = x.clone()
        filled[:, mid] = task.mask
        lp = torch.log_softmax(bert(filled)[:, mid, :V], -1)
        assert abs(table["bert"]["blank"] + lp[torch.arange(8), x[:, mid]].mean().item()) < 1e-5
        last = x.clone()
        last[:, T - 1] = task.mask
        lp = torch.log_softmax(bert(last)[:, T - 1, :V], -1)
        assert abs(table["bert"]["next"] + lp[torch.arange(8), x[:, T - 1]].mean().item()) < 1e-5


def test_only_the_encoder_reads_the_right_side_of_the_blank():
    task, trs = pair(steps=3)
    a, b, c = (torch.tensor([task.encode(s)]) for s in ("the cat ", "at on", "og on"))
    for style, changes in (("bert", True), ("gpt", False)):
        one, other = trs[style].blank_logits(a, b), trs[style].blank_logits(a, c)
        assert (not torch.allclose(one, other)) == changes, style


def test_the_users_text_is_validated_and_cut_to_the_window():
    task = text_task("en")
    assert parse_blank(task, "the c_t") == ("the c", "t")
    for bad, reason in (("the cat", "blank"), ("t_e c_t", "blank"), ("_he cat", "empty"), ("the ça_", "chars")):
        with pytest.raises(ValueError, match=f"invalid:{reason}"):
            parse_blank(task, bad)
    left, right = parse_blank(task, "the cat chases the dog _ the dog chases the cat")
    assert len(left) + len(right) == task.length - 1 and left.endswith("dog ") and right.startswith(" the")
    with pytest.raises(ValueError, match="invalid:chars"):
        continue_text(pair()[1]["gpt"], "THE")
    with pytest.raises(ValueError, match="invalid:empty"):
        continue_text(pair()[1]["gpt"], "")


def test_greedy_continuation_and_the_top_guesses_by_hand():
    task, trs = pair(steps=20)
    gpt = trs["gpt"].model.eval()
    ids = task.encode("the dog ")
    with torch.no_grad():
        for _ in range(3):
            ids.append(int(gpt(torch.tensor([ids[-(task.length - 1):]]))[0, -1, :-1].argmax()))
    assert continue_text(trs["gpt"], "the dog ", 3) == task.decode(ids[8:])
    guesses = fill_blank(trs["bert"], "the c", "t")
    with torch.no_grad():
        p = torch.softmax(trs["bert"].model(torch.tensor([task.encode("the c") + [task.mask] + task.encode("t")]))
                          [0, 5, :-1], -1)
    assert [g[0] for g in guesses] == [task.chars[int(i)] for i in p.argsort(descending=True)[:3]]
    assert abs(guesses[0][1] - p.max().item()) < 1e-6


def test_after_training_the_encoder_fills_blanks_and_the_decoder_continues_better():
    torch.set_num_threads(1)
    task = text_task("en")
    trs = {s: EncDecTrainer(task, s, 2, 32, 3e-3, 0) for s in ("bert", "gpt")}
    for _ in range(500):
        for tr in trs.values():
            tr.step(1)
    table = cross_losses(trs)
    assert table["bert"]["blank"] < table["gpt"]["blank"], table
    assert table["gpt"]["next"] < table["bert"]["next"], table
