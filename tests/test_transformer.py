"""The tiny transformer: causality, generation, the FFN example, tasks and the live trainer."""
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from sim.core.text import md
from sim.plots.attention import live_frame, loss_text
from sim.transformers.attention import positional_encoding
from sim.transformers.tasks import LETTERS, SEP, lab_task, make_task, split_tokens, utf8_bytes
from sim.transformers.transformer import (
    IGNORE,
    POSITIONS,
    Block,
    FeedForward,
    LMTrainer,
    RunView,
    TinyTransformer,
    TransformerConfig,
    generation_report,
    lab_trainer,
    notes_ffn,
    notes_ffn_text,
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
    for p, q in zip(params, expected, strict=True):
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


# ---------- what the lab builds and shows ----------
def test_notes_ffn_text_is_the_hand_computation():
    # x = [1, 2]; W_up = [[1, 2], [2, 0]]: h = [1·1 + 2·2, 1·2 + 2·0] = [5, 2]
    # W_down = [[1, 1], [0, 2]]: y = [5·1 + 2·0, 5·1 + 2·2] = [5, 9]
    assert notes_ffn_text() == ("x      = [1, 2]\nW_up   = [[1, 2], [2, 0]]\nh      = x·W_up      = [5, 2]\n"
                                "ReLU(h)              = [5, 2]\nW_down = [[1, 1], [0, 2]]\n"
                                "y      = ReLU(h)·W_down = [5, 9]")


def test_lab_task_and_trainer_sizes():
    text = lab_task("text", 5, 8, "hello world, hello")
    assert text.name == "text" and text.length == 8 and text.block_size == 8
    copy = lab_task("copy", 5, 8, score_prompt=True)
    assert copy.length == 5 and copy.block_size == 10 and copy.score_prompt
    tr = lab_trainer(copy, 2, 4, 16, 0.01, 3, causal=False)
    assert tr.config == TransformerConfig(vocab_size=9, block_size=10, n_layer=2, n_head=4, d_model=16, d_ff=64,
                                          causal=False)
    assert tr.lr == 0.01 and tr.batch_size == 32 and tr.task is copy
    ref = LMTrainer(tr.config, copy, lr=0.01, batch_size=32, seed=3)  # the same seed: the same weights
    assert all(torch.equal(a, b) for a, b in zip(tr.model.parameters(), ref.model.parameters(), strict=True))
    with pytest.raises(ValueError, match="invalid:text_short"):
        lab_task("text", 5, 30, "short")


def test_probes_read_what_the_user_typed_or_fall_back():
    task = make_task("reverse", 4)
    default = task.default_probe()
    assert default == task.random_prompts(1, torch.Generator().manual_seed(7))[0]
    assert task.read_probe(" DcBa ") == ("dcba|abc", "dcba", True)  # prompt, separator, answer but its last token
    assert task.read_probe("xyzw") == (task.example(default)[:-1], default, False)
    assert task.read_probe("abc")[2] is False
    assert make_task("repeat", 2).read_probe("ab") == ("ababa", "ab", True)  # ab, then abab but its last
    text = make_task("text", 4, "hello world")
    assert text.default_probe() == "hell"
    assert text.read_probe("low") == ("low", "low", True)
    for bad in ("", "hello", "HEL"):
        assert text.read_probe(bad) == ("hell", "hell", False)


def test_run_view_is_the_trainers_curve_and_maps():
    tr = trainer()
    tr.step(3)
    v = tr.view("abcd|abcd")  # longer than block_size 8: its last 8 tokens are read
    assert v.causal and v.steps == 3 and v.recent_loss == tr.recent_loss() and v.curve == tr.curve()
    assert v.tokens == list("bcd|abcd") and v.floor == 0.0
    assert len(v.maps) == 1 and isinstance(v.maps[0], np.ndarray)
    np.testing.assert_array_equal(v.maps[0], tr.attention("bcd|abcd")[0].numpy())


LABELS = {"plot.step": "step", "plot.loss": "loss", "plot.floor": "floor", "plot.train_loss": "Training loss",
          "plot.map": "L{layer} H{head}", "run.causal": "Causal", "run.open": "Open", "run.causal_short": "c",
          "run.open_short": "o", "live_caption": "step {step} · loss {loss}",
          "compare_caption": "{run}: {step} {loss}", "generated": "{run} {prompt} {got} {answer} {mark} {acc}",
          "generated_text": "{run} {prompt} {greedy} {sampled}"}


def run_view(causal=True, losses=(2.0, 1.5, 1.0), layers=1, floor=None):
    maps = [np.full((2, 3, 3), 1 / 3) for _ in range(layers)]
    return RunView(causal=causal, steps=len(losses), recent_loss=sum(losses) / len(losses) if losses else None,
                   curve=(list(range(1, len(losses) + 1)), list(losses)), maps=maps, tokens=list("ab|"), floor=floor)


def test_train_frame_by_hand():
    frame = live_frame("train", [run_view(layers=2)], LABELS)
    assert frame["epoch"] == 3 and frame["caption"] == "step 3 · loss 1.5000"
    loss, *maps = frame["panels"]
    assert loss["series"][0]["y"] == [2.0, 1.5, 1.0] and loss["series"][0]["color"] == "#f59322"
    assert len(maps) == 4  # 2 layers × 2 heads
    assert loss_text(None) == "—"
    assert live_frame("train", [run_view(losses=())], LABELS)["caption"] == "step 0 · loss —"


def test_compare_frame_shares_one_scale_and_the_floor():
    causal, open_ = run_view(losses=(3.0, 1.0), floor=0.5), run_view(causal=False, losses=(2.5, 0.2), layers=2)
    frame = live_frame("compare", [causal, open_], LABELS)
    assert frame["caption"] == "c: 2 2.0000 · o: 2 1.3500"
    a, b, *maps = frame["panels"]
    assert a["y_range"] == b["y_range"] == [0.0, 3.0]  # the highest early loss of either run
    assert [s["label"] for s in a["series"]] == ["loss", "floor"] and a["series"][1]["y"] == [0.5, 0.5]
    assert len(maps) == 4 and maps[0]["title"].startswith("c · L1 H") and maps[2]["title"] == "o · L1 H1"
    low = live_frame("compare", [run_view(losses=(0.01,), floor=None), run_view(False, (0.02,))], LABELS)
    assert low["panels"][0]["y_range"] == [0.0, 0.1]  # never flatter than 0.1


class FakeTrainer:
    """complete() and generation_accuracy() of a trainer whose answers are known."""

    def __init__(self, task, causal, said):
        self.task, self.config, self.said = task, SimpleNamespace(causal=causal), said

    def complete(self, prompt, n, greedy=True, seed=0):
        return self.said[(prompt, greedy)][:n]

    def generation_accuracy(self):
        return 0.25


def test_generation_report_by_hand():
    task = make_task("reverse", 3)
    right = FakeTrainer(task, True, {("abc|", True): "cba"})
    wrong = FakeTrainer(task, False, {("abc|", True): "abc"})
    assert generation_report([right, wrong], "abc", LABELS) == [f"c {md('abc|')} {md('cba')} {md('cba')} ✅ 25%",
                                                                 f"o {md('abc|')} {md('abc')} {md('cba')} ❌ 25%"]
    text = make_task("text", 4, "hello world")
    said = {("hel", True): "lo world" * 5, ("hel", False): "p me" * 10}
    assert generation_report([FakeTrainer(text, True, said)], "hel", LABELS) == [
        f"c {md('hel')} {md(('lo world' * 5)[:40])} {md(('p me' * 10)[:40])}"]


def test_generation_report_of_a_real_trainer():
    tr = trainer()
    (line,) = generation_report([tr], "abcd", LABELS)
    got = tr.complete("abcd|", 4)
    assert line == f"c {md('abcd|')} {md(got)} {md('abcd')} {'✅' if got == 'abcd' else '❌'} " \
                   f"{tr.generation_accuracy():.0%}"


# ---------- position encoding of the tiny transformer: learned (default) or sinusoidal ----------
def test_sinusoidal_model_adds_the_fixed_table_and_trains_no_position_weights():
    torch.manual_seed(0)
    model = TinyTransformer(config(pos="sinusoidal")).eval()
    names = dict(model.named_parameters())
    assert "pos_emb.weight" not in names and not hasattr(model, "pos_emb")
    torch.testing.assert_close(model.pos_table, positional_encoding(12, 16))
    learned = TinyTransformer(config())
    assert sum(p.numel() for p in learned.parameters()) - sum(p.numel() for p in model.parameters()) == 12 * 16
    # the forward by hand: token rows + the table's first T rows, the blocks, the final norm, the head
    idx = torch.randint(9, (2, 7))
    x = model.tok_emb(idx) + positional_encoding(7, 16)
    for block in model.blocks:
        x = block(x)
    torch.testing.assert_close(model(idx), model.lm_head(model.ln_f(x)))


def test_learned_positions_are_the_embedding_table():
    torch.manual_seed(0)
    model = TinyTransformer(config()).eval()
    assert model.config.pos == "learned" and POSITIONS == ("learned", "sinusoidal")
    torch.testing.assert_close(model.positions(5), model.pos_emb.weight[:5])


def test_lab_trainer_takes_the_position_encoding_and_rejects_others():
    task = lab_task("copy", 4, 8)
    sin = lab_trainer(task, 1, 2, 16, 3e-3, 0, pos="sinusoidal")
    assert sin.config.pos == "sinusoidal"
    np.testing.assert_allclose(sin.position_table(), positional_encoding(task.block_size, 16).numpy())
    learned = lab_trainer(task, 1, 2, 16, 3e-3, 0)
    np.testing.assert_array_equal(learned.position_table(), learned.model.pos_emb.weight.detach().numpy())
    before = learned.position_table()
    learned.step(3)
    assert not np.array_equal(before, learned.position_table())  # learned positions change as it trains
    sin.step(3)
    np.testing.assert_allclose(sin.position_table(), positional_encoding(task.block_size, 16).numpy())
    with pytest.raises(ValueError, match="invalid:pos"):
        lab_trainer(task, 1, 2, 16, 3e-3, 0, pos="rope")


def test_a_sinusoidal_model_learns_copy():
    task = make_task("copy", 4)
    tr = LMTrainer(TransformerConfig(len(task.vocab), task.block_size, 1, 2, 32, 128, pos="sinusoidal"), task,
                   lr=3e-3, batch_size=32, seed=0)
    tr.step(300)
    assert tr.recent_loss() < 0.1


def test_utf8_bytes_by_hand():
    assert utf8_bytes(split_tokens("猫追狗")) == 9  # three Han characters, 3 bytes each
    assert utf8_bytes(split_tokens("The cat")) == 6  # 3 + 3 letters; the space is no token
    assert utf8_bytes(split_tokens("猫 cat")) == 6 and utf8_bytes([]) == 0
