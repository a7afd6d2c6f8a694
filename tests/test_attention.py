"""Attention engine against PyTorch's own attention, and the notes' worked numbers."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from sim.plots.attention import (
    ANNOTATE_MAX_TOKENS,
    PIPELINE_ROWS,
    permutation_figures,
    pipeline_figures,
    position_figure,
)
from sim.transformers.attention import (
    EQUIVARIANCE_TOL,
    NOTES_SCORES,
    NOTES_VALUES,
    MultiHeadAttention,
    attend_row,
    causal_mask,
    embed_tokens,
    fmt,
    head_choices,
    head_indices,
    head_stats,
    lab_pipeline,
    make_mask,
    notes_bars,
    notes_softmax_table,
    notes_weighted_sum_text,
    permutation,
    permutation_check,
    permutation_stats,
    positional_encoding,
    random_attention,
    row_entropy,
    run_pipeline,
    scale_text,
    scaled_dot_product,
    sliding_window_mask,
    softmax_naive,
    softmax_stable,
    stable_softmax_table,
    weight_share,
)


def qkv(B=2, H=3, T=7, d=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(B, H, T, d, generator=g) for _ in range(3)]


def test_causal_mask_is_the_notes_lower_triangle():
    expected = torch.tensor([[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.bool)
    assert torch.equal(causal_mask(4), expected)


def test_sliding_window_masks():
    causal = sliding_window_mask(5, 2)
    assert causal[3].tolist() == [False, False, True, True, False]  # itself and one before
    both = sliding_window_mask(5, 2, causal=False)
    assert both[2].tolist() == [False, True, True, True, False]
    assert torch.equal(sliding_window_mask(6, 6), causal_mask(6))  # a window as long as the sequence
    with pytest.raises(ValueError):
        sliding_window_mask(4, 0)


@pytest.mark.parametrize("kind", ["none", "causal", "window", "causal_window"])
def test_scaled_dot_product_matches_torch(kind):
    q, k, v = qkv()
    mask = make_mask(kind, 7, 3)
    ours = scaled_dot_product(q, k, v, mask=mask)
    if kind == "causal":
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    else:
        ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # bool attn_mask: True = take part
    torch.testing.assert_close(ours.output, ref, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(ours.scores, q @ k.transpose(-2, -1) / math.sqrt(5))


def test_custom_scale_matches_torch():
    q, k, v = qkv()
    ours = scaled_dot_product(q, k, v, scale=1.0)
    torch.testing.assert_close(ours.output, F.scaled_dot_product_attention(q, k, v, scale=1.0), rtol=1e-5, atol=1e-5)


def test_masked_weights_are_exact_zeros_and_rows_sum_to_one():
    q, k, v = qkv()
    w = scaled_dot_product(q, k, v, mask=sliding_window_mask(7, 2)).weights
    assert torch.all(w[..., ~sliding_window_mask(7, 2)] == 0)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 3, 7))


def test_fully_masked_row_gives_zeros_not_nan():
    q, k, v = qkv()
    mask = causal_mask(7).clone()
    mask[2] = False  # query 2 may look nowhere
    out = scaled_dot_product(q, k, v, mask=mask)
    assert not torch.isnan(out.weights).any() and not torch.isnan(out.output).any()
    assert torch.all(out.weights[..., 2, :] == 0) and torch.all(out.output[..., 2, :] == 0)


def copied_into_torch_mha(mha: MultiHeadAttention, d_model: int, n_heads: int) -> torch.nn.MultiheadAttention:
    ref = torch.nn.MultiheadAttention(d_model, n_heads, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([mha.q_proj.weight, mha.k_proj.weight, mha.v_proj.weight]))
        ref.in_proj_bias.copy_(torch.cat([mha.q_proj.bias, mha.k_proj.bias, mha.v_proj.bias]))
        ref.out_proj.weight.copy_(mha.o_proj.weight)
        ref.out_proj.bias.copy_(mha.o_proj.bias)
    return ref


@pytest.mark.parametrize("causal", [True, False])
def test_multi_head_attention_matches_torch(causal):
    torch.manual_seed(0)
    mha = MultiHeadAttention(12, 3, causal=causal)
    ref = copied_into_torch_mha(mha, 12, 3)
    x = torch.randn(2, 6, 12)
    forbidden = ~causal_mask(6) if causal else None  # torch's bool attn_mask means "may not attend"
    expected, weights = ref(x, x, x, attn_mask=forbidden, average_attn_weights=False)
    torch.testing.assert_close(mha(x), expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(mha.last_weights, weights, rtol=1e-5, atol=1e-5)
    assert mha.last_weights.shape == (2, 3, 6, 6)


def test_multi_head_attention_with_a_window_matches_sdpa_on_its_projections():
    torch.manual_seed(1)
    mha = MultiHeadAttention(8, 2, causal=False)
    x = torch.randn(1, 9, 8)
    mask = sliding_window_mask(9, 3)
    heads = [mha.heads(x, p) for p in (mha.q_proj, mha.k_proj, mha.v_proj)]  # (1, 2, 9, 4)
    y = F.scaled_dot_product_attention(*heads, attn_mask=mask).transpose(1, 2).reshape(1, 9, 8)
    torch.testing.assert_close(mha(x, mask=mask), mha.o_proj(y), rtol=1e-5, atol=1e-5)


def test_heads_must_divide_the_width():
    with pytest.raises(ValueError, match="invalid:heads"):
        MultiHeadAttention(10, 3)


@pytest.mark.parametrize("kind", ["none", "causal", "window", "causal_window"])
def test_pipeline_is_the_module_forward(kind):
    torch.manual_seed(2)
    mha = MultiHeadAttention(8, 4, causal=False)
    x = torch.randn(5, 8)
    mask = make_mask(kind, 5, 2)
    p = run_pipeline(mha, x, mask)
    with torch.no_grad():
        torch.testing.assert_close(p.output, mha(x[None], mask=mask)[0])
    assert p.q.shape == (4, 5, 2) and p.raw.shape == (4, 5, 5) and p.concat.shape == (5, 8)
    torch.testing.assert_close(p.scaled, p.raw / math.sqrt(2))
    torch.testing.assert_close(p.concat[:, 2:4], p.heads_out[1])  # head 1 fills columns 2..3


def test_pipeline_without_scaling_and_with_temperature():
    torch.manual_seed(3)
    mha = MultiHeadAttention(16, 1, causal=False)
    x = torch.randn(6, 16)
    sharp = run_pipeline(mha, x, None, scale_by_sqrt_d=False)
    scaled = run_pipeline(mha, x, None)
    hot = run_pipeline(mha, x, None, temperature=4.0)
    torch.testing.assert_close(sharp.scaled, sharp.raw)
    torch.testing.assert_close(hot.scaled, scaled.raw / 4 / 4)  # √16 = 4, then the temperature 4
    assert row_entropy(sharp.weights).mean() < row_entropy(scaled.weights).mean() < row_entropy(hot.weights).mean()
    with pytest.raises(ValueError):
        run_pipeline(mha, x, None, temperature=0.0)


def test_notes_softmax_and_weighted_sum():
    weights, out = attend_row(torch.tensor(NOTES_SCORES), torch.tensor(NOTES_VALUES))
    assert [round(w, 3) for w in weights.tolist()] == [0.844, 0.114, 0.042]
    assert [round(o, 3) for o in out.tolist()] == [0.928, 0.270]


def test_naive_softmax_overflows_and_the_stable_one_does_not():
    big = torch.tensor([1000.0, 999.0, 998.0])
    assert torch.isnan(softmax_naive(big)).all()
    torch.testing.assert_close(softmax_stable(big), torch.softmax(big, dim=-1))
    torch.testing.assert_close(softmax_stable(big), softmax_naive(big - 1000))
    small = torch.tensor([2.0, 0.0, -1.0])
    torch.testing.assert_close(softmax_naive(small), softmax_stable(small))


def test_row_entropy_limits():
    assert row_entropy(torch.tensor([1.0, 0.0, 0.0])).item() == 0
    assert math.isclose(row_entropy(torch.full((4,), 0.25)).item(), math.log(4), rel_tol=1e-6)


# ---------- what the lab shows ----------
@pytest.mark.parametrize("mask", ["none", "causal", "window"])
def test_lab_pipeline_matches_torchs_multihead_attention(mask):
    tokens = ["the", "cat", "猫", "the", "dog"]
    p = lab_pipeline(tokens, 12, 3, 5, mask, 2)
    ref = copied_into_torch_mha(random_attention(12, 3, 5), 12, 3)
    x = embed_tokens(tokens, 12, 5)
    allowed = make_mask(mask, 5, 2)
    expected, weights = ref(x[None], x[None], x[None], attn_mask=None if allowed is None else ~allowed,
                            average_attn_weights=False)
    torch.testing.assert_close(p.output, expected[0].detach(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(p.weights, weights[0].detach(), rtol=1e-5, atol=1e-5)
    assert p.d_head == 4 and torch.equal(p.x, x)


def test_lab_pipeline_unscaled_with_a_temperature_is_torchs_softmax_of_qk_over_t():
    p = lab_pipeline(list("abcd"), 8, 2, 1, "causal", 2, scale_by_sqrt_d=False, temperature=2.0)
    scores = p.q @ p.k.transpose(-2, -1) / 2.0
    ref = F.scaled_dot_product_attention(p.q, p.k, p.v, is_causal=True, scale=0.5)
    torch.testing.assert_close(p.scaled, scores)
    torch.testing.assert_close(p.heads_out, ref, rtol=1e-5, atol=1e-5)


def test_pipeline_arrays_are_the_stages_as_numpy():
    p = lab_pipeline(list("abc"), 4, 2, 0, "none", 2)
    a = p.arrays()
    assert a["mask"] is None and set(a) == {"x", "q", "k", "v", "raw", "scaled", "mask", "weights", "heads_out",
                                            "concat", "output"}
    assert isinstance(a["weights"], np.ndarray) and np.array_equal(a["weights"], p.weights.numpy())
    assert lab_pipeline(list("abc"), 4, 2, 0, "causal", 2).arrays()["mask"].dtype == bool


def test_head_choices_indices_and_scale_text():
    assert head_choices(3) == ("all", "1", "2", "3")
    assert head_indices("all", 3) == [0, 1, 2] and head_indices("2", 3) == [1]
    assert scale_text(4, True) == "√4 = 2" and scale_text(2, True) == "√2 = 1.41" and scale_text(8, False) == "1"


def test_head_stats_are_numpys_max_entropy_and_row_sums_of_the_chosen_heads():
    p = lab_pipeline(list("abcdef"), 8, 4, 3, "causal", 2)
    w = p.weights.numpy()[[1, 3]]
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -np.nansum(np.where(w > 0, w * np.log(w), 0.0), axis=-1).mean()
    assert head_stats(p, [1, 3]) == {"max_weight": f"{w.max(-1).mean():.3f}", "entropy": f"{entropy:.3f}",
                                     "uniform_entropy": f"{math.log(6):.3f}",
                                     "row_sums": f"{w.sum(-1).min():.4f} … {w.sum(-1).max():.4f}"}


def test_fmt():
    assert fmt([1, 2.5]) == "[1.000, 2.500]" and fmt(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), 0) == "[[1, 2], [3, 4]]"


def test_notes_tables_have_the_closed_form_softmax():
    e = [math.exp(s) for s in NOTES_SCORES]
    w = [x / sum(e) for x in e]  # 0.844, 0.114, 0.042
    names, scores, weights = notes_bars()
    assert names == ["key0", "key1", "key2"] and scores == list(NOTES_SCORES)
    assert weights == pytest.approx(w, rel=1e-6)
    table = notes_softmax_table("key").splitlines()
    assert table[0] == "| key | s | e^s | e^s / Σ |" and len(table) == 6
    assert table[2] == f"| key0 | 2 | {e[0]:.4f} | **0.844** |"
    assert table[4] == f"| key2 | -1 | {e[2]:.4f} | **0.042** |"
    assert table[5] == f"| Σ | | {sum(e):.4f} | 1.000 |"
    out = [sum(wj * v[i] for wj, v in zip(w, NOTES_VALUES, strict=True)) for i in range(2)]  # [0.928, 0.270]
    assert notes_weighted_sum_text() == ("v0 = [1, 0]   v1 = [0, 2]   v2 = [2, 1]\n"
                                         "output = 0.844×[1, 0] + 0.114×[0, 2] + 0.042×[2, 1]\n"
                                         f"       = [{out[0]:.3f}, {out[1]:.3f}]")


@pytest.mark.parametrize("temp", [0.1, 0.5, 2.0, 5.0])
def test_the_notes_softmax_at_another_temperature(temp):
    """The notes' scores divided by τ: torch's softmax, the table's e^(s/τ) column and the weighted sum agree."""
    weights = torch.softmax(torch.tensor(NOTES_SCORES) / temp, dim=0)
    names, scores, shown = notes_bars(temp)
    assert scores == list(NOTES_SCORES) and shown == pytest.approx(weights.tolist(), rel=1e-6)
    table = notes_softmax_table("key", temp).splitlines()
    assert table[0] == f"| key | s | e^(s/{temp:g}) | e^(s/{temp:g}) / Σ |"
    e0 = torch.exp(torch.tensor(2.0) / temp).item()  # in float32, as the table's
    assert table[2] == f"| key0 | 2 | {e0:.4f} | **{weights[0].item():.3f}** |"
    out = weights @ torch.tensor(NOTES_VALUES)
    assert notes_weighted_sum_text(temp).endswith(f"= [{out[0].item():.3f}, {out[1].item():.3f}]")


def test_weight_share_names_how_the_largest_weight_stands():
    assert [weight_share(w) for w in ([0.995, 0.005], [0.844, 0.114, 0.042], [0.5, 0.5], [0.4, 0.3, 0.3])] == \
        ["all", "most", "spread", "spread"]


def test_stable_softmax_table_overflows_only_naively():
    table, overflow = stable_softmax_table(1000, "naive", "stable")
    assert overflow and table.splitlines() == [
        "| | naive | stable |", "|---|---|---|", "| s | [1000, 999, 998] | s − max = [0, -1, -2] |",
        f"| e^… | [inf, inf, inf] | [1.0000, {math.exp(-1):.4f}, {math.exp(-2):.4f}] |",
        "| softmax | [nan, nan, nan] | [0.665, 0.245, 0.090] |"]
    table, overflow = stable_softmax_table(10, "n", "s")
    naive_exp = table.splitlines()[3].split("|")[2].strip(" []").split(", ")  # float32: e^10 to 7 digits
    assert not overflow and [float(x) for x in naive_exp] == pytest.approx([math.exp(s) for s in (10, 9, 8)], 1e-6)
    assert table.endswith("| softmax | [0.665, 0.245, 0.090] | [0.665, 0.245, 0.090] |")


def stage_labels():
    keys = [k for row in PIPELINE_ROWS for k in row]
    return {**{k: k + " {shape}" for k in keys}, "head": "head {h}", "masked_cell": "masked", "row_sum": "sum"}


@pytest.mark.parametrize("T,numbers,written", [(ANNOTATE_MAX_TOKENS, True, True),
                                               (ANNOTATE_MAX_TOKENS + 1, True, False), (3, False, False)])
def test_pipeline_figures_from_numpy_arrays(T, numbers, written):
    p = lab_pipeline([f"w{i}" for i in range(T)], 8, 2, 0, "causal", 2)
    figs = pipeline_figures(p.arrays(), [f"w{i}" for i in range(T)], [1], stage_labels(), numbers=numbers)
    assert list(figs) == ["x", "q", "k", "v", "raw", "scaled", "masked", "weights", "heads_out", "concat", "output"]
    assert sorted(figs) == sorted(k for row in PIPELINE_ROWS for k in row)
    assert figs["q"].layout.title.text == f"q ({T}, 4)" and figs["x"].layout.title.text == f"x ({T}, 8)"
    assert (figs["x"].data[0].texttemplate is not None) == written
    z = np.array(figs["weights"].data[0].z, dtype=float)  # head 2's weights; the masked cells drawn apart
    expected = p.weights[1].numpy().astype(float)
    expected[~causal_mask(T).numpy()] = np.nan
    np.testing.assert_allclose(z[:, :T], expected, rtol=1e-6)


# ---------- position encoding and permutation (the article's "invariant" corrected to "equivariant") ----------
@pytest.mark.parametrize("T,d", [(1, 2), (7, 8), (32, 64), (5, 7)])
def test_positional_encoding_is_the_closed_form(T, d):
    pe = positional_encoding(T, d)
    expected = np.zeros((T, d))
    for pos in range(T):
        for col in range(d):
            i = col // 2  # columns 2i and 2i + 1 share the frequency 1 / 10000^(2i/d)
            angle = pos / 10000 ** (2 * i / d)
            expected[pos, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    np.testing.assert_allclose(pe.numpy(), expected, atol=1e-5)  # float32 angles up to 31 rad


def test_embeddings_without_positions_are_the_token_vectors_alone():
    tokens = ["猫", "追", "狗", "猫"]
    plain = embed_tokens(tokens, 8, 3, positions=False)
    torch.testing.assert_close(embed_tokens(tokens, 8, 3), plain + positional_encoding(4, 8))
    assert torch.equal(plain[0], plain[3])  # the same token, the same row, wherever it stands


def test_permutations():
    assert permutation("reverse", 4) == [3, 2, 1, 0]
    assert permutation("rotate", 4) == [1, 2, 3, 0]  # the first token moves to the end
    shuffled = permutation("shuffle", 6, seed=3)
    assert sorted(shuffled) == list(range(6)) and shuffled == permutation("shuffle", 6, seed=3)
    assert permutation("reverse", 1) == permutation("rotate", 1) == [0]
    with pytest.raises(ValueError, match="invalid:perm"):
        permutation("sort", 3)


@pytest.mark.parametrize("kind", ["reverse", "rotate", "shuffle"])
def test_attention_is_permutation_equivariant_not_invariant_as_torch_computes_it(kind):
    tokens = ["the", "cat", "猫", "chases", "狗", "the"]
    c = permutation_check(tokens, 12, 3, 5, kind)
    # the reference: torch's own multi-head attention holding the same weights, on X and on P X (no positions)
    ref = copied_into_torch_mha(random_attention(12, 3, 5), 12, 3)
    x = embed_tokens(tokens, 12, 5, positions=False)
    perm = torch.tensor(permutation(kind, 6, 5))
    out = ref(x[None], x[None], x[None], need_weights=False)[0][0].detach()
    xp = x[perm]
    out_p = ref(xp[None], xp[None], xp[None], need_weights=False)[0][0].detach()
    torch.testing.assert_close(c.output, out, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(c.permuted_output, out_p, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out_p, out[perm], rtol=1e-5, atol=1e-5)  # equivariant: f(P X) = P f(X)
    assert c.permuted_tokens == [tokens[j] for j in perm.tolist()] and not c.same_sequence
    assert c.equivariant and c.equivariance_gap < EQUIVARIANCE_TOL
    assert c.invariance_gap == pytest.approx((out_p - out).abs().max().item(), abs=1e-5)
    assert c.invariance_gap > 0.05  # not invariant: f(P X) ≠ f(X) row by row
    # with the position encoding added first the symmetry is gone
    xpos = embed_tokens(tokens, 12, 5)
    xpos_p = embed_tokens([tokens[j] for j in perm.tolist()], 12, 5)
    g = ref(xpos[None], xpos[None], xpos[None], need_weights=False)[0][0].detach()
    g_p = ref(xpos_p[None], xpos_p[None], xpos_p[None], need_weights=False)[0][0].detach()
    assert c.positions_gap == pytest.approx((g_p - g[perm]).abs().max().item(), abs=1e-5)
    assert c.positions_gap > 0.05
    # an order-blind summary (the mean over the rows) is what is invariant
    torch.testing.assert_close(c.permuted_output.mean(0), c.output.mean(0), rtol=1e-5, atol=1e-5)


def test_a_permutation_that_changes_nothing_is_reported():
    c = permutation_check(["a", "b", "a"], 8, 2, 0, "reverse")
    assert c.same_sequence and c.invariance_gap < EQUIVARIANCE_TOL and c.positions_gap > 0.05
    assert permutation_check(["猫"], 8, 2, 0, "rotate").same_sequence
    with pytest.raises(ValueError, match="invalid:no_tokens"):
        permutation_check([], 8, 2, 0, "reverse")


def test_permutation_stats_are_the_gaps_written_out():
    c = permutation_check(list("猫追狗"), 8, 2, 0, "reverse")
    stats = permutation_stats(c)
    assert stats == {"equivariance": f"{c.equivariance_gap:.1e}", "invariance": f"{c.invariance_gap:.1e}",
                     "positions": f"{c.positions_gap:.1e}"}
    assert float(stats["equivariance"]) < EQUIVARIANCE_TOL < float(stats["invariance"])


def test_permutation_and_position_figures():
    c = permutation_check(list("猫追狗"), 8, 2, 0, "reverse")
    before, after = permutation_figures(c.output.numpy(), c.permuted_output.numpy(), list("猫追狗"),
                                        c.permuted_tokens, {"before": "f(X) {shape}", "after": "f(PX) {shape}"})
    assert before.layout.title.text == "f(X) (3, 8)" and after.layout.title.text == "f(PX) (3, 8)"
    assert list(after.layout.yaxis.ticktext) == ["狗", "追", "猫"]
    np.testing.assert_allclose(np.array(after.data[0].z, dtype=float), c.permuted_output.numpy(), rtol=1e-6)
    np.testing.assert_allclose(np.array(after.data[0].z, dtype=float)[::-1], np.array(before.data[0].z, dtype=float),
                               atol=1e-5)  # the same rows, reversed
    table = positional_encoding(16, 8).numpy()
    fig = position_figure(table, "PE {shape}")
    assert fig.layout.title.text == "PE (16, 8)"
    np.testing.assert_allclose(np.array(fig.data[0].z, dtype=float), table, rtol=1e-6)
