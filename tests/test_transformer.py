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


def stock_parameters(cfg: TransformerConfig, seed: int) -> list[torch.Tensor]:
    """The initial values torch's own modules get under torch.manual_seed(seed), built in the model's order."""
    nn = torch.nn
    C = cfg.d_model
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        modules = [nn.Embedding(cfg.vocab_size, C), nn.Embedding(cfg.block_size, C)]
        for _ in range(cfg.n_layer):
            modules += [nn.LayerNorm(C), *(nn.Linear(C, C) for _ in "qkvo"), nn.LayerNorm(C), nn.Linear(C, cfg.d_ff),
                        nn.Linear(cfg.d_ff, C)]
        modules += [nn.LayerNorm(C), nn.Linear(C, cfg.vocab_size, bias=False)]
    return [p.detach() for m in modules for p in m.parameters()]


@pytest.mark.parametrize("seed", [0, 7])
def test_seeded_init_draws_torchs_defaults_from_the_models_generator(seed):
    cfg = config()
    before = torch.random.get_rng_state()
    model = TinyTransformer(cfg, torch.Generator().manual_seed(seed))
    assert torch.equal(torch.random.get_rng_state(), before)  # the global RNG was never used
    params = list(model.parameters())
    expected = stock_parameters(cfg, seed)
    assert len(params) == len(expected)
    for p, q in zip(params, expected):
        assert torch.equal(p.detach(), q)


def test_dropout_draws_its_masks_from_the_models_generator():
    cfg = config(dropout=0.5)
    a, b = (TinyTransformer(cfg, torch.Generator().manual_seed(3)) for _ in range(2))
    x = torch.randint(9, (2, 6))
    before = torch.random.get_rng_state()
    ya, yb = a(x), b(x)
    assert torch.equal(torch.random.get_rng_state(), before)
    assert torch.equal(ya, yb) and not torch.equal(ya, a(x))  # same seed, same masks; new masks each call
    a.eval()
    assert torch.equal(a(x), a(x))  # no dropout in eval mode
    drop = a.drop.train()
    ones = torch.ones(1000)
    out = drop(ones)
    assert set(out.unique().tolist()) <= {0.0, 2.0} and 0.4 < (out == 0).float().mean() < 0.6  # 1 / (1 - p)


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


def test_curve_is_decimated_and_keeps_a_spike():
    tr = trainer()
    tr.history = [{"step": s, "loss": 1.0 / s} for s in range(1, 5001)]
    tr.history[3210]["loss"] = 9.0
    steps, losses = tr.curve(max_points=300)
    assert len(steps) <= 300 and steps[0] == 1 and steps[-1] == 5000 and steps == sorted(steps)
    assert max(losses) == 9.0 and min(losses) == 1 / 5000


def test_without_the_mask_sort_is_learned_by_reading_the_answer_and_generation_fails():
    honest, cheat = trainer("sort"), trainer("sort", causal=False)
    honest.step(150)
    cheat.step(150)
    assert cheat.recent_loss() < honest.recent_loss()
    assert cheat.generation_accuracy(32) < 0.5
