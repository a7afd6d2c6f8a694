"""The tiny transformer: causality, generation, the FFN example, tasks and the live trainer."""
import pytest
import torch

from sim.tasks import LETTERS, SEP, make_task, split_tokens
from sim.transformer import (
    IGNORE,
    Block,
    FeedForward,
    LMTrainer,
    TinyTransformer,
    TransformerConfig,
    notes_ffn,
)


def config(**kw):
    return TransformerConfig(**{"vocab_size": 9, "block_size": 12, "n_layer": 2, "n_head": 2, "d_model": 16,
                                "d_ff": 64, **kw})


def test_forward_shapes_and_attention_maps():
    torch.manual_seed(0)
    model = TinyTransformer(config())
    logits = model(torch.randint(9, (3, 10)))
    assert logits.shape == (3, 10, 9)
    assert [w.shape for w in model.attention_maps()] == [(3, 2, 10, 10)] * 2


@pytest.mark.parametrize("causal", [True, False])
def test_a_future_token_changes_earlier_logits_only_without_the_mask(causal):
    torch.manual_seed(0)
    model = TinyTransformer(config(causal=causal)).eval()
    a = torch.randint(9, (1, 8))
    b = a.clone()
    b[0, 6] = (a[0, 6] + 1) % 9
    same = torch.allclose(model(a)[0, :6], model(b)[0, :6])
    assert same == causal


def test_block_is_pre_norm_residual():
    torch.manual_seed(0)
    block = Block(config())
    x = torch.randn(2, 5, 16)
    mid = x + block.attn(block.ln1(x))
    torch.testing.assert_close(block(x), mid + block.ffn(block.ln2(mid)))


def test_feed_forward_is_up_gelu_down():
    ffn = FeedForward(4, 16)
    x = torch.randn(3, 4)
    torch.testing.assert_close(ffn(x), ffn.down(torch.nn.functional.gelu(ffn.up(x))))


def test_notes_ffn_example():
    ffn, steps = notes_ffn()
    assert steps["h"].tolist() == [5.0, 2.0] and steps["relu"].tolist() == [5.0, 2.0]
    assert steps["y"].tolist() == [5.0, 9.0]
    assert ffn(torch.tensor([[1.0, 2.0]])).tolist() == [[5.0, 9.0]]


def test_invalid_heads_and_too_long_input():
    with pytest.raises(ValueError, match="invalid:heads"):
        TinyTransformer(config(n_head=3))
    with pytest.raises(ValueError, match="invalid:too_long"):
        TinyTransformer(config())(torch.zeros(1, 13, dtype=torch.long))


def test_generation_greedy_is_deterministic_and_sampling_is_seeded():
    torch.manual_seed(0)
    model = TinyTransformer(config()).eval()
    idx = torch.tensor([[1, 2, 3]])
    out = model.generate(idx, 15)  # longer than block_size: the context is cropped
    assert out.shape == (1, 18) and torch.equal(out, model.generate(idx, 15))
    s1 = model.generate(idx, 5, greedy=False, generator=torch.Generator().manual_seed(4))
    s2 = model.generate(idx, 5, greedy=False, generator=torch.Generator().manual_seed(4))
    assert torch.equal(s1, s2)


def test_split_tokens():
    assert split_tokens("猫追狗") == ["猫", "追", "狗"]
    assert split_tokens("the cat  chased 狗!") == ["the", "cat", "chased", "狗", "!"]


@pytest.mark.parametrize("name,answer", [("copy", "cab"), ("reverse", "bac"), ("sort", "abc"), ("repeat", "cabcab")])
def test_task_answers_and_batches(name, answer):
    task = make_task(name, 3)
    assert task.answer("cab") == answer
    x, y = task.batch(4, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, task.block_size)
    seq = task.vocab.decode(x[0]) + task.vocab.decode(y[0, -1:])
    prompt = seq[:3]
    assert seq == task.example(prompt) and set(prompt) <= set(LETTERS)
    scored = (y[0] != IGNORE).nonzero().flatten().tolist()
    assert task.vocab.decode(y[0, scored]) == task.answer(prompt)  # only the answer is scored
    assert (SEP in seq) == (name != "repeat")


def test_text_task_and_bad_input():
    task = make_task("text", 4, "hello world")
    x, y = task.batch(3, torch.Generator().manual_seed(0))
    assert x.shape == (3, 4) and torch.equal(x[:, 1:], y[:, :-1])
    with pytest.raises(ValueError, match="invalid:text_short"):
        make_task("text", 8, "short")
    with pytest.raises(ValueError, match="invalid:length"):
        make_task("copy", 40)
    with pytest.raises(ValueError, match="invalid:task"):
        make_task("translate", 3)


def trainer(name="copy", causal=True, seed=0):
    task = make_task(name, 4)
    cfg = TransformerConfig(len(task.vocab), task.block_size, 1, 2, 32, 128, causal=causal)
    return LMTrainer(cfg, task, lr=3e-3, batch_size=32, seed=seed)


def test_trainer_learns_copy_and_generates_the_answer():
    tr = trainer()
    tr.step(300)
    assert tr.steps == 300 and len(tr.history) == 300
    assert tr.recent_loss() < 0.05 and tr.generation_accuracy(32) == 1.0
    assert tr.complete("dcab|", 4) == "dcab"
    maps = tr.attention("dcab|dca")
    assert len(maps) == 1 and maps[0].shape == (2, 8, 8)
    assert torch.all(maps[0].triu(1) == 0)  # causal: nothing above the diagonal


def test_trainer_is_seeded():
    a, b = trainer(seed=5), trainer(seed=5)
    a.step(5)
    b.step(5)
    assert [h["loss"] for h in a.history] == [h["loss"] for h in b.history]


def test_without_the_mask_sort_is_learned_by_reading_the_answer_and_generation_fails():
    honest, cheat = trainer("sort"), trainer("sort", causal=False)
    honest.step(150)
    cheat.step(150)
    assert cheat.recent_loss() < honest.recent_loss()
    assert cheat.generation_accuracy(32) < 0.5
