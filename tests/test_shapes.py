"""Shape tracing against closed forms, the real module's own counts and the course notes' example."""
import math
import resource
from dataclasses import replace

import pytest
import torch
from torch import nn

from sim.plots.shapes import HIGHLIGHT, ROW_PX, flow_figure, flow_layout, human_bytes, kv_figure, step_table
from sim.transformers.attention import MultiHeadAttention
from sim.transformers.shapes import (
    PRESETS,
    ShapeConfig,
    ShapeError,
    block_of,
    build_model,
    check_kv_heads,
    check_model,
    collapse_repeats,
    follow,
    kv_cache_bytes,
    kv_cache_options,
    memory_needed,
    shape_chain,
    totals,
    trace_model,
    trace_shapes,
)

NOTES = PRESETS["notes"]
# the notes: B = 2, T = 5, d_model = 8, 4 heads, d_h = 2
NOTES_CHAIN = [(2, 5, 8), (2, 5, 4, 2), (2, 4, 5, 2), (2, 4, 5, 5), (2, 4, 5, 2), (2, 5, 8)]


def q_path(steps, attn="blocks.0.attn"):
    q = next(i for i, s in enumerate(steps) if s.name == f"{attn}.q_proj")
    return follow(steps, q, attn)


def test_notes_example_gives_the_notes_chain():
    steps = trace_model(NOTES).steps
    changes = shape_chain(steps, q_path(steps))
    traced = [steps[i].out_shape for i in changes]
    assert [steps[i].op for i in changes] == ["linear", "view", "transpose", "matmul", "matmul", "transpose", "view"]
    # the notes' "transpose back to [2, 5, 8]" is transpose(1, 2) -> [2, 5, 4, 2], then .contiguous().view
    assert traced[5] == (2, 5, 4, 2)
    assert traced[:5] + traced[6:] == NOTES_CHAIN
    # and W_O keeps [2, 5, 8]
    last = q_path(steps)[-1]
    assert steps[last].name == "blocks.0.attn.o_proj" and steps[last].out_shape == (2, 5, 8)


def test_multi_head_attention_alone_on_real_tensors():
    torch.manual_seed(0)
    mha = MultiHeadAttention(8, 4)
    x = torch.randn(2, 5, 8)
    steps = trace_shapes(mha, x)
    path = follow(steps, 0, "")
    assert [steps[i].out_shape for i in shape_chain(steps, path)] == NOTES_CHAIN[:5] + [(2, 5, 4, 2), (2, 5, 8)]
    assert steps[-1].out_shape == (2, 5, 8) and steps[0].sources == (-1,)  # q_proj reads the traced input
    assert totals(steps)["params"] == sum(p.numel() for p in mha.parameters()) == 4 * (8 * 8 + 8)


def test_notes_four_tokens_keep_their_shape_through_every_block():
    c = PRESETS["tokens"]  # [1, 4, 6] through 24 blocks, then logits [1, 4, V]
    trace = trace_model(c)
    adds = [s for s in trace.steps if s.name == "blocks.0.add"]
    assert [s.out_shape for s in adds] == [(1, 4, 6)] * 2
    assert trace.steps[-1].name == "lm_head" and trace.steps[-1].out_shape == (1, 4, c.vocab_size)
    assert trace.n_layer == 24 and trace.traced_layers == 2


@pytest.mark.parametrize("name", ["notes", "tokens", "gpt2", "long"])
def test_parameter_count_is_the_real_modules(name):
    c = PRESETS[name]
    model = build_model(c)  # the full depth, on meta
    assert trace_model(c).totals["params"] == sum(p.numel() for p in model.parameters())


def test_gpt2_small_sizes_give_gpt2_parameters():
    # GPT-2 small: 124,439,808 parameters with the head tied to the token embedding (the preset ties it);
    # with a head of its own, 768 × 50257 more
    c = PRESETS["gpt2"]
    assert trace_model(c).totals["params"] == 124_439_808
    assert trace_model(replace(c, tie_embeddings=False)).totals["params"] == 124_439_808 + 768 * 50257


def test_each_linear_step_reads_its_own_weights():
    steps = trace_model(NOTES).steps
    model = build_model(NOTES)
    weighted = [s for s in steps if s.op in ("linear", "embedding", "layer_norm")]
    assert {s.op for s in weighted} == {"linear", "embedding", "layer_norm"}
    for s in weighted:
        module = model.get_submodule(s.name)
        assert s.params == sum(p.numel() for p in module.parameters()), s.name


@pytest.mark.parametrize("n_layer", [1, 2, 5])
def test_totals_of_the_folded_trace_equal_the_full_trace(n_layer):
    c = replace(NOTES, n_layer=n_layer)
    folded = trace_model(c)
    model = build_model(c)
    full = trace_shapes(model, torch.zeros(c.batch, c.seq_len, dtype=torch.long, device="meta"))
    assert folded.totals == totals(full)
    assert folded.totals["params"] == sum(p.numel() for p in model.parameters())


def test_meta_and_real_tensors_trace_the_same_steps():
    c = replace(NOTES, n_layer=3)
    assert trace_model(c, device="meta") == trace_model(c, device="cpu")


def test_matmul_flops_are_2mnk():
    class Mats(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(3, 4)
            self.plain = nn.Linear(4, 6, bias=False)

        def forward(self, x, y):
            a = self.plain(self.proj(x))  # (2, 5, 3) -> (2, 5, 4) -> (2, 5, 6)
            return a @ y, torch.bmm(a[0:1], y[0:1]), torch.mm(a[0], y[0])  # (2, 5, 7), (1, 5, 7), (5, 7)

    steps = trace_shapes(Mats(), torch.randn(2, 5, 3), torch.randn(2, 6, 7))
    by_op = {}
    for s in steps:
        by_op.setdefault(s.op, []).append(s)
    m = 2 * 5
    assert [s.flops for s in by_op["linear"]] == [2 * m * 4 * 3 + m * 4, 2 * m * 6 * 4]  # 2·m·n·k (+ m·n bias)
    assert by_op["matmul"][0].flops == 2 * (2 * 5 * 7 * 6)  # a batch of 2 products (5×6)·(6×7)
    assert by_op["bmm"][0].flops == 2 * 5 * 7 * 6
    assert by_op["mm"][0].flops == 2 * 5 * 7 * 6


def test_attention_scores_flops_and_bytes():
    c = ShapeConfig(batch=3, seq_len=7, d_model=12, n_head=3, n_kv_head=3, d_ff=8, vocab_size=10, n_layer=1)
    steps = trace_model(c).steps
    scores, weighted = [s for s in steps if s.op == "matmul"]
    assert scores.out_shape == (3, 3, 7, 7) and scores.flops == 2 * (3 * 3) * 7 * 7 * 4  # k = d_h = 4
    assert weighted.out_shape == (3, 3, 7, 4) and weighted.flops == 2 * (3 * 3) * 7 * 4 * 7  # k = T = 7
    assert scores.bytes == 3 * 3 * 7 * 7 * 4 and not scores.view


def test_views_allocate_nothing_and_contiguous_copies():
    steps = trace_model(NOTES).steps
    views = [s for s in steps if s.op in ("view", "transpose")]
    assert {s.op for s in views} == {"view", "transpose"}
    for s in views:
        assert s.view and s.new_bytes == 0 and s.flops == 0, s.name
    copy = next(s for s in steps if s.op == "contiguous")
    assert not copy.view and copy.new_bytes == 2 * 5 * 8 * 4


def test_bfloat16_halves_the_bytes():
    f32, bf16 = trace_model(NOTES), trace_model(replace(NOTES, dtype="bfloat16"))
    assert bf16.totals["params"] == f32.totals["params"]
    assert [s.bytes for s in bf16.steps if s.op == "linear"] == [s.bytes // 2 for s in f32.steps if s.op == "linear"]
    assert memory_needed(bf16, 2) < memory_needed(f32, 4)


def test_sources_point_backwards_and_name_the_readers():
    trace = trace_model(replace(NOTES, n_layer=4))
    for i, s in enumerate(trace.steps):
        assert all(src < i for src in s.sources), s.name
    steps = trace.steps
    ln_f = next(s for s in steps if s.name == "ln_f")
    assert steps[ln_f.sources[0]].name == "blocks.0.add"  # the last block's output, folded onto block 0
    assert next(s for s in steps if s.name == "tok_emb").sources == (-1,)  # the token ids, the traced input
    assert steps[next(s for s in steps if s.name == "pos_emb").sources[0]].op == "arange"


def test_collapse_keeps_block_zero_and_reports_the_count():
    model = build_model(replace(NOTES, n_layer=3))
    full = trace_shapes(model, torch.zeros(2, 5, dtype=torch.long, device="meta"))
    kept, prefix, n = collapse_repeats(full)
    assert (prefix, n) == ("blocks", 3)
    assert {block_of(s.module) for s in kept} == {None, ("blocks", 0)}
    assert len(kept) == len(full) - 2 * sum(block_of(s.module) == ("blocks", 1) for s in full)


def test_huge_sizes_trace_without_allocating():
    c = ShapeConfig(batch=64, seq_len=131_072, d_model=16_384, n_head=128, n_kv_head=8, d_ff=65_536,
                    vocab_size=262_144, n_layer=128)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    trace = trace_model(c)
    grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    scores = next(s for s in trace.steps if s.op == "matmul")
    assert scores.out_shape == (64, 128, 131_072, 131_072) and scores.bytes == 64 * 128 * 131_072 ** 2 * 4
    mask = next(s for s in trace.steps if s.op == "ones")  # the causal mask, made without a device: on meta too
    assert mask.out_shape == (131_072, 131_072)
    assert grew < 512 * 1024, f"{grew} KiB"  # a real (T, T) mask alone would be 16 GiB
    assert memory_needed(trace, 4) > 10 ** 15


@pytest.mark.parametrize("changes,code", [
    ({"d_model": 10, "n_head": 4}, "heads_divide"), ({"d_model": 0}, "not_positive"),
    ({"batch": -1}, "not_positive"), ({"n_layer": 0}, "not_positive"),
])
def test_bad_sizes_raise_a_coded_error(changes, code):
    with pytest.raises(ShapeError) as e:
        trace_model(replace(NOTES, **changes))
    assert e.value.code == code


def test_heads_error_suggests_head_counts_that_divide():
    with pytest.raises(ShapeError) as e:
        check_model(replace(NOTES, d_model=12, n_head=5))
    assert e.value.params["options"] == [2, 3, 4, 6] and all(12 % h == 0 for h in e.value.params["options"])


@pytest.mark.parametrize("kv,ok", [(1, True), (2, True), (4, True), (3, False), (8, False)])
def test_kv_heads_must_divide_the_heads(kv, ok):
    c = replace(NOTES, n_kv_head=kv)
    if ok:
        check_kv_heads(c)
    else:
        with pytest.raises(ShapeError) as e:
            check_kv_heads(c)
        assert e.value.code == "kv_heads_divide" and e.value.params["options"] == [1, 2, 4]


def test_kv_cache_against_hand_computation():
    # GPT-2 small, fp16, 1024 tokens: 12 layers × 2 × 1024 × 768 × 2 B = 37,748,736 B = 36 MiB per sequence
    assert kv_cache_bytes(12, 1024, 768, 12, 12, 2) == 37_748_736 == 36 * 2 ** 20
    # a 7B-class model (32 layers, d_model 4096), 4096 tokens in fp16: exactly 2 GiB; 8 KV heads of 32: a quarter
    assert kv_cache_bytes(32, 4096, 4096, 32, 32, 2) == 2 * 2 ** 30
    assert kv_cache_bytes(32, 4096, 4096, 32, 8, 2) == 2 ** 29
    # the notes' sizes, float32, batch 2: 2 layers × 2 × 2 × 5 × 8 × 4 B
    assert kv_cache_bytes(2, 5, 8, 4, 4, 4, batch=2) == 1280


def test_kv_cache_options_run_from_mqa_to_mha():
    options = kv_cache_options(replace(PRESETS["gpt2"], n_kv_head=4))
    assert [k for k, _ in options] == [1, 2, 3, 4, 6, 12]
    assert options[-1][1] == 12 * options[0][1] == kv_cache_bytes(12, 1024, 768, 12, 12, 4)


def test_other_modules_trace_too():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
    x = torch.randn(2, 5, 8)
    steps = trace_shapes(layer, x)
    assert steps[-1].out_shape == (2, 5, 8)
    assert {"linear1", "linear2", "norm1", "norm2"} <= {s.name for s in steps}
    assert next(s for s in steps if s.name == "linear1").out_shape == (2, 5, 16)
    assert totals(steps)["params"] == sum(p.numel() for p in layer.parameters())
    mlp = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2))
    steps = trace_shapes(mlp, torch.randn(4, 3))
    assert [(s.name, s.op, s.out_shape) for s in steps] == [("0", "linear", (4, 5)), ("1", "relu", (4, 5)),
                                                             ("2", "linear", (4, 2))]
    assert [s.flops for s in steps] == [2 * 4 * 5 * 3 + 4 * 5, 4 * 5, 2 * 4 * 2 * 5 + 4 * 2]


def test_a_leaf_module_traced_alone_and_in_place_ops():
    steps = trace_shapes(nn.Linear(3, 4), torch.randn(2, 3))
    assert [(s.name, s.op, s.out_shape, s.params) for s in steps] == [("linear", "linear", (2, 4), 16)]

    class InPlace(nn.Module):
        def forward(self, x):
            y = x * 2
            y += 1  # in place: no new memory, but still arithmetic
            return y

    mul, add = trace_shapes(InPlace(), torch.randn(3, 4))
    assert (add.op, add.view, add.new_bytes, add.flops) == ("add", True, 0, 12)
    assert add.sources == (0,) and mul.flops == 12


def test_functional_ops_split_and_sdpa():
    class Fused(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(8, 24)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(C, dim=2)
            q, k, v = (t.view(B, T, 2, 4).transpose(1, 2) for t in (q, k, v))
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    steps = trace_shapes(Fused(), torch.randn(2, 5, 8))
    splits = [s for s in steps if s.op == "split"]
    assert [s.name for s in splits] == ["split[0]", "split[1]", "split[2]"]
    assert all(s.out_shape == (2, 5, 8) and s.view for s in splits)
    sdpa = steps[-1]
    assert sdpa.op == "scaled_dot_product_attention" and sdpa.out_shape == (2, 2, 5, 4)
    assert sdpa.flops == (2 * 2 * 5) * 5 * (2 * 4 + 2 * 4 + 5)


def test_hooks_are_removed_even_when_the_forward_fails():
    mha = MultiHeadAttention(8, 4)
    with pytest.raises(RuntimeError):
        trace_shapes(mha, torch.randn(2, 5, 7))  # wrong width
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in mha.modules())
    assert trace_shapes(mha, torch.randn(1, 3, 8))[-1].out_shape == (1, 3, 8)


def test_code_lines_come_from_the_module_source():
    steps = trace_model(NOTES).steps
    q = next(s for s in steps if s.name == "blocks.0.attn.q_proj")
    assert ".view(" in q.code and "transpose(1, 2)" in q.code


# ---------- pictures ----------
def test_flow_layout_keeps_edges_clear():
    trace = trace_model(replace(NOTES, n_layer=3))
    place = flow_layout(trace.steps, 1)
    assert len(set(place.values())) == len(place), "two nodes in one cell"
    for i, s in enumerate(trace.steps):
        for src in s.sources:
            (s_lane, s_d), (_, d) = place[src], place[i]
            assert s_d < d
            # the edge runs down the source's lane to the row above its reader: nothing may sit there
            assert not [n for n, (lane, depth) in place.items() if lane == s_lane and s_d < depth < d]
    residual = [place[i] for i, s in enumerate(trace.steps) if s.name == "blocks.0.add"]
    assert {lane for lane, _ in residual} == {0}, "the residual stream runs straight down lane 0"


def test_flow_layout_places_a_long_chain_of_constants_above_its_reader():
    class Constants(nn.Module):
        def forward(self, x):
            return x + torch.ones(3, 4).tril().exp().log()

    place = flow_layout(trace_shapes(Constants(), torch.randn(3, 4)), 1)
    assert min(d for _, d in place.values()) == 0
    assert place[3][1] == place[-1][1] and place[4][1] == place[-1][1] + 1  # log beside the input, then the add


def test_flow_figure_draws_every_node_and_highlights_the_path():
    trace = trace_model(NOTES)
    path = q_path(trace.steps)
    labels = {k: k for k in ("input", "params", "flops", "bytes", "view_note")} | {"block": "{path} × {n}"}
    fig = flow_figure(trace.steps, [(2, 5)], labels, highlight=path, block=("blocks.0", 2))
    boxes = [s for s in fig.layout.shapes if s.type == "rect"]
    assert len(boxes) == len(trace.steps) + 1 + 1  # steps, the input, the block's frame
    assert sum(b.line.color == HIGHLIGHT for b in boxes) == len(path)
    assert "[2, 5, 4, 2]" in " ".join(fig.data[2].text) and "blocks.0 × 2" in " ".join(fig.data[2].text)


def test_flow_figure_shows_its_first_levels_and_drags_to_the_rest():
    """rows_shown: the diagram keeps its row height, shows the first levels, and only then lets its y axis move."""
    trace = trace_model(NOTES)
    labels = {k: k for k in ("input", "params", "flops", "bytes", "view_note")} | {"block": "{path} × {n}"}
    full = flow_figure(trace.steps, [(2, 5)], labels)
    levels = round((full.layout.height - 40) / ROW_PX)
    assert full.layout.yaxis.fixedrange and levels > 10
    part = flow_figure(trace.steps, [(2, 5)], labels, rows_shown=10)
    assert part.layout.height == ROW_PX * 10 + 40 and not part.layout.yaxis.fixedrange
    assert tuple(part.layout.yaxis.range) == (-10 + 0.4, 0.8) and part.layout.xaxis.fixedrange
    assert len(part.layout.shapes) == len(full.layout.shapes)  # every box is there, below the view
    assert flow_figure(trace.steps, [(2, 5)], labels, rows_shown=levels + 5).layout.height == full.layout.height


def test_step_table_and_kv_figure():
    trace = trace_model(NOTES)
    labels = {k: k for k in ("module", "op", "in", "out", "params", "flops", "bytes", "code", "view_note")}
    table = step_table(trace.steps, labels)
    assert len(table) == len(trace.steps) and table["params"].sum() == sum(s.params for s in trace.steps)
    assert (table["bytes"] == "view_note").sum() == sum(s.view for s in trace.steps)
    fig = kv_figure(kv_cache_options(NOTES), 2, {"kv_heads": "k", "bytes": "b", "mqa": "MQA", "mha": "MHA"})
    assert list(fig.data[0].x) == ["1 · MQA", "2", "4 · MHA"] and list(fig.data[0].y) == [320, 640, 1280]


@pytest.mark.parametrize("n,text", [(0, "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (3 * 2 ** 30, "3.0 GiB"),
                                    (2 ** 60, "1024.0 PiB")])
def test_human_bytes(n, text):
    assert human_bytes(n) == text
    assert math.isfinite(float(text.split()[0]))
