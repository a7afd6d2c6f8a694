"""Counting by formula, checked against the trace and by hand: parameters (tied and untied head), where a
forward pass's FLOPs go (2N per token, attention's T² part, the head, the rest), and the memory Adam training holds."""
from dataclasses import replace

import pytest

from sim.plots.shapes import gigabytes
from sim.transformers.shapes import (
    ARTICLE_70B,
    PRESETS,
    block_of,
    build_model,
    bytes_per_param,
    flops_split,
    param_counts,
    trace_model,
    training_memory,
)

GPT2 = PRESETS["gpt2"]
GPT2_PARAMS = 124_439_808  # GPT-2 small as published (vocab 50257, context 1024, d 768, 12 layers, 12 heads)


# ---------- tied embeddings ----------
def test_gpt2_preset_is_the_published_tied_model():
    assert GPT2.tie_embeddings
    assert trace_model(GPT2).totals["params"] == param_counts(GPT2)["total"] == GPT2_PARAMS
    assert f"{GPT2_PARAMS / 1e6:.1f} M" == "124.4 M"
    untied = replace(GPT2, tie_embeddings=False)  # the head gets its own 50257 × 768 matrix
    assert trace_model(untied).totals["params"] == param_counts(untied)["total"] == GPT2_PARAMS + 50257 * 768


def test_the_tied_head_is_the_embedding_matrix_and_still_multiplies():
    model = build_model(GPT2)
    assert model.lm_head.weight is model.tok_emb.weight
    assert sum(p.numel() for p in model.parameters()) == GPT2_PARAMS
    steps = trace_model(GPT2).steps
    emb, head = (next(s for s in steps if s.name == name) for name in ("tok_emb", "lm_head"))
    assert emb.params == 50257 * 768 and emb.flops == 0  # a lookup copies rows
    assert head.params == 0 and head.flops == 2 * 1024 * 768 * 50257  # counted once, but the product still runs


@pytest.mark.parametrize("tie", [False, True])
@pytest.mark.parametrize("name", list(PRESETS))
def test_parameter_formula_is_the_real_modules(name, tie):
    c = replace(PRESETS[name], tie_embeddings=tie)
    total = param_counts(c)["total"]
    assert total == trace_model(c).totals["params"] == sum(p.numel() for p in build_model(c).parameters())


def test_non_embedding_parameters_by_hand_and_from_the_trace():
    # one GPT-2 block: 2 norms (2 × 2 × 768) + q, k, v, o (4 × (768² + 768)) + FFN (768·3072 + 3072 + 3072·768 + 768)
    block = 2 * 2 * 768 + 4 * (768 ** 2 + 768) + (768 * 3072 + 3072) + (3072 * 768 + 768)
    assert block == 7_087_872
    n = param_counts(GPT2)["non_embedding"]
    assert n == 12 * block + 2 * 768 == 85_056_000
    steps = trace_model(GPT2).steps  # every parameter except the lookups' tables (the head reads no new ones)
    outside = sum(s.params for s in steps if block_of(s.module) is None and s.name not in ("tok_emb", "pos_emb"))
    assert n == 12 * sum(s.params for s in steps if block_of(s.module) is not None) + outside


# ---------- where the FLOPs go ----------
@pytest.mark.parametrize("c", [GPT2, replace(GPT2, tie_embeddings=False), PRESETS["notes"], PRESETS["long"],
                               replace(PRESETS["notes"], batch=3, seq_len=7, n_layer=5, d_ff=20)],
                         ids=["gpt2", "gpt2_untied", "notes", "long", "odd"])
def test_flops_split_adds_up_to_the_traced_total(c):
    trace = trace_model(c)
    split = flops_split(c, trace.totals["flops"])
    steps, L, C = trace.steps, c.n_layer, c.d_model

    def traced(keep) -> int:  # block 0's steps count once per block
        return sum((L if block_of(s.module) else 1) * (s.flops or 0) for s in steps if keep(s))

    # attention's T² part is exactly the blocks' two matmuls; the head is exactly the lm_head step
    assert split.attention == traced(lambda s: s.op == "matmul")
    assert split.head == traced(lambda s: s.name == "lm_head")
    # 2N per token is the blocks' linear layers (2 per weight, 1 per bias) plus 1 more per bias and 2 per norm
    # parameter, which the trace counts among the element-wise steps
    biases, norms = L * (4 * C + c.d_ff + C), L * 2 * 2 * C + 2 * C
    linears = traced(lambda s: s.op == "linear" and s.name != "lm_head")
    assert split.weights == linears + (biases + 2 * norms) * split.tokens
    elementwise = traced(lambda s: s.op not in ("linear", "matmul"))
    assert split.other == elementwise - (biases + 2 * norms) * split.tokens > 0
    assert split.weights + split.attention + split.head + split.other == trace.totals["flops"]


def test_gpt2_flops_by_hand():
    trace = trace_model(GPT2)
    split = flops_split(GPT2, trace.totals["flops"])
    assert split.tokens == 1024
    assert (split.forward_per_token, split.training_per_token) == (2 * 85_056_000, 6 * 85_056_000)
    assert split.weights == 2 * 85_056_000 * 1024 == 174_194_688_000
    assert split.attention == 12 * 4 * 1024 ** 2 * 768 == 38_654_705_664
    assert split.head == 2 * 768 * 50257 * 1024 == 79_047_426_048
    assert 0 < split.other < 0.03 * split.traced  # norms, softmax, GELU, adds: small next to the matrix products
    assert split.training_pass == 3 * split.traced


def test_the_old_rule_overshoots_the_untied_model():
    # the issue: 2 × all parameters × tokens is ABOVE the traced total of GPT-2 with its own head, because the
    # token and position tables cost no FLOPs; the split accounts for the total exactly
    untied = replace(GPT2, tie_embeddings=False)
    split = flops_split(untied, trace_model(untied).totals["flops"])
    assert split.all_params_rule == 2 * 163_037_184 * 1024 > split.traced
    assert split.weights + split.attention + split.head <= split.traced


# ---------- training memory ----------
def test_training_memory_by_hand():
    # 1,000 parameters in fp32: weights, gradients, m and v, 4 B each
    assert training_memory(1000, "fp32") == {"weights": 4000, "grads": 4000, "master": 0, "adam_m": 4000,
                                             "adam_v": 4000, "optimizer": 8000, "total": 16000}
    # mixed precision: 2 B weights and gradients, 4 B each for the master copy, m and v
    assert training_memory(1000, "mixed") == {"weights": 2000, "grads": 2000, "master": 4000, "adam_m": 4000,
                                              "adam_v": 4000, "optimizer": 8000, "total": 16000}
    assert bytes_per_param("fp32") == bytes_per_param("mixed") == 16
    assert training_memory(GPT2_PARAMS, "mixed")["total"] == 1_991_036_928  # GPT-2 small: 16 × 124,439,808


def test_the_articles_70b_example_and_the_standard_accounting():
    n = ARTICLE_70B["params"]
    assert n == 70 * 10 ** 9
    # the article: bf16 weights ~140 GB, optimizer state 280 GB, over 420 GB: bf16 weights and two bf16 moments
    theirs = training_memory(n, "article")
    assert (theirs["weights"], theirs["optimizer"], theirs["total"]) == (
        ARTICLE_70B["weights"], ARTICLE_70B["optimizer"], ARTICLE_70B["total"]) == (140 * 10 ** 9, 280 * 10 ** 9,
                                                                                    420 * 10 ** 9)
    assert bytes_per_param("article") == 6
    # the standard mixed-precision accounting: 2 + 2 + 4 + 4 + 4 = 16 B per parameter
    ours = training_memory(n, "mixed")
    gb = 10 ** 9
    assert ours == {"weights": 140 * gb, "grads": 140 * gb, "master": 280 * gb, "adam_m": 280 * gb,
                    "adam_v": 280 * gb, "optimizer": 560 * gb, "total": 1120 * gb}
    assert (gigabytes(ARTICLE_70B["total"]), gigabytes(ours["total"])) == ("420 GB", "1,120 GB")
