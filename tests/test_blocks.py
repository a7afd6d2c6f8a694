"""The transformer-block engine against independent references: torch's norms, a complex-number RoPE, closed forms,
real modules' parameter counts, the shape lab's KV cache, and the Pre/Post-LN models themselves."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from sim.core.threads import configure_threads
from sim.transformers.blocks import (
    CausalSelfAttention,
    DepthBlock,
    DepthConfig,
    DepthTrainer,
    PositionAttention,
    batch_norm,
    ffn_module,
    ffn_params,
    init_stats,
    kv_bytes_per_token_layer,
    layer_norm,
    norm_group,
    norm_view,
    position_experiment,
    rms_norm,
    rope,
    rope_frequencies,
    rope_scores,
    sinusoidal,
    swiglu_hidden,
    vectors,
)
from sim.transformers.shapes import kv_cache_bytes
from sim.transformers.tasks import lab_task

configure_threads()  # as the app: one intra-op thread (a second one only spins on a busy machine)


def rope_complex(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """RoFormer written with complex numbers: pair (x_2i, x_2i+1) as x_2i + i·x_2i+1, times e^(i·p·θ_i)."""
    d = x.shape[-1]
    theta = torch.tensor([base ** (-2 * i / d) for i in range(d // 2)], dtype=torch.float64)
    z = torch.view_as_complex(x.double().reshape(*x.shape[:-1], d // 2, 2).contiguous())
    turn = torch.polar(torch.ones(len(positions), d // 2, dtype=torch.float64),
                       positions.double()[:, None] * theta[None])
    return torch.view_as_real(z * turn).reshape(x.shape)


# ---------- normalisation ----------
def test_norms_match_torch():
    x = torch.randn(3, 5, 8, dtype=torch.float64) * 3 + 1
    w = torch.rand(8, dtype=torch.float64)
    assert torch.allclose(rms_norm(x, w, 1e-6), F.rms_norm(x, (8,), w, eps=1e-6))
    assert torch.allclose(rms_norm(x, None, 1e-3), F.rms_norm(x, (8,), eps=1e-3))
    assert torch.allclose(layer_norm(x, 1e-5), F.layer_norm(x, (8,), eps=1e-5))
    # BatchNorm over (B, T) per feature: torch wants the features as channels, (B, C, T)
    ref = F.batch_norm(x.transpose(1, 2), None, None, training=True, eps=1e-5).transpose(1, 2)
    assert torch.allclose(batch_norm(x, 1e-5), ref)


def test_rms_norm_keeps_the_mean_layer_norm_removes_it():
    x = torch.randn(2, 3, 16, dtype=torch.float64) + 5
    assert layer_norm(x).mean(-1).abs().max() < 1e-9
    assert rms_norm(x).mean(-1).min() > 0.5  # the offset survives, only the scale is fixed
    assert torch.allclose(rms_norm(x).pow(2).mean(-1), torch.ones(2, 3, dtype=torch.float64), atol=1e-5)


@pytest.mark.parametrize("kind,count", [("batch", 2 * 3), ("layer", 4), ("rms", 4)])
def test_the_group_is_what_is_averaged(kind, count):
    v = norm_view(kind, 2, 3, 4, (1, 2, 3), seed=5)
    assert v.group.sum() == count and v.group[1, 2, 3]
    b, t, j = v.cell
    if kind == "rms":
        assert v.mean is None and math.isclose(v.x[b, t, j] / v.scale, v.y[b, t, j], rel_tol=1e-6)
    else:
        assert math.isclose((v.x[b, t, j] - v.mean) / v.scale, v.y[b, t, j], rel_tol=1e-6)
    assert norm_group("batch", (2, 3, 4), (0, 0, 1))[:, :, 1].all()


# ---------- RoPE and sinusoidal ----------
def test_rope_matches_the_complex_form_and_keeps_lengths():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 7, 16, generator=g, dtype=torch.float64)
    pos = torch.arange(7) * 3 + 1
    y = rope(x, pos)
    assert torch.allclose(y, rope_complex(x, pos))
    assert torch.allclose(y.norm(dim=-1), x.norm(dim=-1))
    assert torch.allclose(rope(x, pos, base=100.0), rope_complex(x, pos, base=100.0))
    assert torch.allclose(rope(x, torch.zeros(7)), x)


def test_rope_scores_depend_on_relative_position_only():
    g = torch.Generator().manual_seed(1)
    for _ in range(5):
        q, k = torch.randn(32, generator=g, dtype=torch.float64), torch.randn(32, generator=g, dtype=torch.float64)
        m, n, s = (int(v) for v in torch.randint(0, 500, (3,), generator=g))
        a = rope(q[None], torch.tensor([m]))[0] @ rope(k[None], torch.tensor([n]))[0]
        b = rope(q[None], torch.tensor([m + s]))[0] @ rope(k[None], torch.tensor([n + s]))[0]
        assert abs(a - b) < 1e-9
    q, k = vectors(8, 0)
    rows = rope_scores(q, k, 5, 2, [0, 10, 70])
    assert [r[:3] for r in rows] == [(5, 2, 3), (15, 12, 3), (75, 72, 3)]
    assert max(r[3] for r in rows) - min(r[3] for r in rows) < 1e-9
    c = rope_scores(q, k, 5, 3, [0])[0][3]
    assert abs(c - rows[0][3]) > 1e-6  # another offset, another score: the test can fail


def test_rope_rejects_odd_dimensions_and_frequencies_fall():
    with pytest.raises(ValueError):
        rope(torch.randn(3, 5), torch.arange(3))
    f = rope_frequencies(8).numpy()
    assert f[0] == 1.0 and np.all(np.diff(f) < 0) and math.isclose(f[1], 10000 ** (-2 / 8))


def test_sinusoidal_is_the_2017_table():
    pe = sinusoidal(10, 6)
    p, i = 7, 2
    assert math.isclose(pe[p, 2 * i].item(), math.sin(p / 10000 ** (2 * i / 6)), rel_tol=1e-5)
    assert math.isclose(pe[p, 2 * i + 1].item(), math.cos(p / 10000 ** (2 * i / 6)), rel_tol=1e-5)


def test_position_experiment_rope_holds_past_the_trained_length():
    res = {p: position_experiment(p, 8, 16, steps=200, seed=0) for p in ("learned", "rope")}
    for r in res.values():
        assert np.isnan(r.accuracy[0]) and r.weights.shape == (16, 16)
        assert np.allclose(r.weights.sum(-1), 1.0) and np.allclose(np.triu(r.weights, 1), 0.0)
    assert np.nanmean(res["rope"].accuracy[1:8]) > 0.9 and np.nanmean(res["learned"].accuracy[1:8]) > 0.9
    assert np.mean(res["rope"].accuracy[8:]) > np.mean(res["learned"].accuracy[8:]) + 0.2
    with pytest.raises(ValueError):
        PositionAttention("alibi", 4, 8, 8, torch.Generator())


# ---------- initialisation ----------
def test_init_statistics_follow_the_variance_rules():
    he = init_stats(10, 256, "he", "relu", seed=0)
    default = init_stats(10, 256, "default", "relu", seed=0)
    assert 0.3 < he.act_std[-1] / he.act_std[0] < 3  # He keeps ReLU's signal
    assert default.act_std[-1] / default.act_std[0] < 0.01  # the default's 1/(3·fan_in) shrinks √6 a layer
    xav = init_stats(10, 256, "xavier", "tanh", seed=0)
    assert xav.act_std[-1] > 10 * init_stats(10, 256, "default", "tanh", seed=0).act_std[-1]
    assert len(he.acts) == len(he.grads) == 10 and he.acts[0].shape == (8192,)
    assert math.isclose(he.act_std[3], float(np.std(he.acts[3])), rel_tol=0.1)  # the sample is like the whole


def test_gradients_per_layer_are_the_backward_pass():
    s = init_stats(3, 16, "xavier", "tanh", seed=3, n=8)
    g = torch.Generator().manual_seed(3)
    x, target = torch.randn(8, 16, generator=g), torch.randn(8, 16, generator=g)
    ws = []
    for _ in range(3):
        w = torch.empty(16, 16)
        torch.nn.init.xavier_normal_(w, generator=g)
        ws.append(w)
    h1 = torch.tanh(x @ ws[0].T)
    h2 = torch.tanh(h1 @ ws[1].T)
    h3 = torch.tanh(h2 @ ws[2].T)
    assert np.allclose(s.acts[2], h3.numpy().ravel(), atol=1e-6)
    assert np.allclose(s.grads[2], ((h3 - target) / 8).numpy().ravel(), atol=1e-6)


# ---------- FFN ----------
@pytest.mark.parametrize("d,h", [(64, 256), (768, 3072), (100, 7)])
def test_ffn_parameter_counts_are_the_modules(d, h):
    for kind in ("gelu", "swiglu"):
        assert ffn_params(kind, d, h) == sum(p.numel() for p in ffn_module(kind, d, h).parameters())


def test_swiglu_hidden_width_keeps_the_cost():
    assert swiglu_hidden(4096, multiple_of=256) == 11008  # LLaMA-7B's hidden width
    assert swiglu_hidden(768) == 2048
    assert abs(ffn_params("swiglu", 768, swiglu_hidden(768)) / ffn_params("gelu", 768, 3072) - 1) < 0.01


# ---------- KV cache ----------
def test_kv_cache_per_token_and_layer():
    # DeepSeek-V2: 128 heads of 128; MLA caches 512 + 64 numbers against MHA's 2·128·128
    mha = kv_bytes_per_token_layer("mha", 128, 128, 8, 512, 64, 2)
    mla = kv_bytes_per_token_layer("mla", 128, 128, 8, 512, 64, 2)
    assert mha == 2 * 128 * 128 * 2 and mla == 576 * 2 and round(mha / mla) == 57
    assert kv_bytes_per_token_layer("mqa", 32, 64, 8, 0, 0, 1) == 2 * 64
    for kind, kv in (("mha", 32), ("gqa", 8), ("mqa", 1)):
        per = kv_bytes_per_token_layer(kind, 32, 64, 8, 512, 64, 2)
        assert per * 24 * 1000 * 3 == kv_cache_bytes(24, 1000, 32 * 64, 32, kv, 2, 3)


# ---------- Pre-LN against Post-LN ----------
def test_pre_and_post_ln_blocks_compute_what_they_say():
    g = torch.Generator().manual_seed(0)
    pre = DepthBlock(DepthConfig(10, 8, 1, 2, 16, "pre"), g)
    post = DepthBlock(DepthConfig(10, 8, 1, 2, 16, "post"), g)
    x = torch.randn(2, 8, 16)
    h = x + pre.attn(pre.ln1(x))
    assert torch.allclose(pre(x), h + pre.ffn(pre.ln2(h)), atol=1e-6)
    h = post.ln1(x + post.attn(x))
    assert torch.allclose(post(x), post.ln2(h + post.ffn(h)), atol=1e-6)
    assert torch.allclose(post(x).mean(-1), torch.zeros(2, 8), atol=1e-5)  # every output normalised


def test_fused_causal_attention_is_the_explicit_formula():
    attn = CausalSelfAttention(16, 4, torch.Generator().manual_seed(0))
    x = torch.randn(2, 6, 16)
    q, k, v = attn.qkv(x).split(16, dim=-1)
    heads = lambda t: t.view(2, 6, 4, 4).transpose(1, 2)  # noqa: E731
    scores = heads(q) @ heads(k).transpose(-2, -1) / 2.0  # √d_h = 2
    scores = scores.masked_fill(torch.ones(6, 6, dtype=torch.bool).triu(1), float("-inf"))
    y = (scores.softmax(-1) @ heads(v)).transpose(1, 2).reshape(2, 6, 16)
    assert torch.allclose(attn(x), attn.proj(y), atol=1e-5)
    with pytest.raises(ValueError):
        CausalSelfAttention(16, 3, torch.Generator())


def test_depth_trainers_record_norms_and_warmup():
    task = lab_task("reverse", 3, 16)
    c = DepthConfig(len(task.vocab), task.block_size, 4, 2, 16, "post")
    tr = DepthTrainer(c, task, lr=0.01, warmup=10, seed=0)
    assert tr.init_norms.shape == (4,) and np.all(tr.init_norms > 0)
    assert math.isclose(tr.lr_at(0), 0.001) and math.isclose(tr.lr_at(9), 0.01) and tr.lr_at(50) == 0.01
    tr.step(3)
    assert tr.steps == 3 and len(tr.curve()[0]) == 3 and tr.norms.shape == (4,)
    twin = DepthTrainer(c, task, lr=0.01, warmup=10, seed=0)
    assert np.allclose(twin.init_norms, tr.init_norms)  # same seed, same start
