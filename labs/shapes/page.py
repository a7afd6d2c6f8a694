"""Tensor shape chain lab: pick the sizes, trace the real transformer, read every tensor's shape and cost."""
from dataclasses import asdict, replace

import streamlit as st

from labs.shapes.embedding import lookup_view
from labs.shapes.schema import PAGE, SCHEMA
from labs.shapes.training import training_memory_view
from sim.plots.shapes import flow_figure, human_bytes, human_count, kv_figure, shape_text, short_name, step_table
from sim.transformers.claims import rule_case, written_chain
from sim.transformers.shapes import (
    NOTES_CHAIN,
    PRESETS,
    ModelTrace,
    ShapeConfig,
    ShapeError,
    check_kv_heads,
    flops_split,
    follow,
    kv_cache_bytes,
    kv_cache_options,
    memory_needed,
    param_counts,
    shape_chain,
    trace_model,
)
from ui import charts
from ui.i18n import t
from ui.sidebar import cached_device
from ui.urlstate import PageState, set_values

MAIN = ("batch", "seq_len", "d_model", "n_head")  # the sizes in the chain's shapes: beside the diagram
MORE = ("d_ff", "vocab_size", "n_layer", "dtype")
FLOW_ROWS = 10  # levels of the diagram on view: 440 px, within the first screen (the rest: drag it up)
TABLE_ROWS = 6  # rows of the step table on view (it scrolls): smaller than the diagram
ss = st.session_state


@st.cache_data(max_entries=64, show_spinner=False)
def traced(config: ShapeConfig) -> ModelTrace:
    return trace_model(config)  # on the meta device: shapes only, nothing allocated at any size


def apply_preset(name: str) -> None:
    set_values(PAGE, SCHEMA, asdict(PRESETS[name]))


def keep_plain_mha(state: PageState) -> None:
    """On a new head count: KV heads that equalled the heads (plain multi-head attention) follow it."""
    if state.values["n_kv_head"] == state.values["n_head"]:  # the values before this change
        set_values(PAGE, SCHEMA, {"n_kv_head": ss[f"{PAGE}.n_head"]})


def error_text(e: ShapeError) -> str:
    params = dict(e.params)
    if "name" in params:
        params["name"] = t(f"shp.{params['name']}")
    return t(f"shp.error.{e.code}", **params)


def controls(state: PageState, side) -> None:
    """The sizes that shape the chain beside it; the presets and the other sizes folded."""
    def widget(name: str, **kw) -> None:
        extra = {"on_change": keep_plain_mha, "args": (state,)} if name == "n_head" else {}
        state.widget(name, help=t(f"shp.{name}.help"), **extra, **kw)

    with side:
        for name in MAIN:
            widget(name, fold=False)
        with state.more(side):
            bar = st.container(horizontal=True, vertical_alignment="center")
            bar.caption(t("shp.presets"))
            for name in PRESETS:
                bar.button(t(f"shp.preset.{name}"), on_click=apply_preset, args=(name,), key=f"shp.preset_{name}")
            for name in MORE:
                widget(name)
            widget("tie_embeddings")


def summary(trace: ModelTrace, c: ShapeConfig) -> None:
    total = trace.totals
    cols = st.columns(4)
    cols[0].metric(t("shp.metric.params"), human_count(total["params"]),
                   help=t("shp.metric.params_help", n=f"{total['params']:,}", layers=c.n_layer))
    cols[1].metric(t("shp.metric.flops"), human_count(total["flops"]),
                   help=t("shp.metric.flops_help"))
    cols[2].metric(t("shp.metric.activations"), human_bytes(total["new_bytes"]), help=t("shp.metric.activations_help"))
    cols[3].metric(t("shp.metric.weights"), human_bytes(total["params"] * c.dtype_bytes),
                   help=t("shp.metric.weights_help", dtype=c.dtype, b=c.dtype_bytes))
    have = cached_device().memory_bytes
    need = memory_needed(trace, c.dtype_bytes)
    if have and need > have:
        st.warning(t("shp.too_large", need=human_bytes(need), have=human_bytes(have)), icon=":material/memory:")
    counts, other = param_counts(c), param_counts(replace(c, tie_embeddings=not c.tie_embeddings))
    st.caption(t(f"shp.tied.{'on' if c.tie_embeddings else 'off'}", vc=f"{counts['tok_emb']:,}",
                 n=f"{total['params']:,}", other=f"{other['total']:,}"))
    split = flops_split(c, total["flops"])
    rule = split.all_params_rule
    st.markdown(t("shp.flops.split", n=human_count(split.n), fwd=human_count(split.forward_per_token),
                  train=human_count(split.training_per_token), tokens=f"{split.tokens:,}",
                  weights=human_count(split.weights), attention=human_count(split.attention),
                  head=human_count(split.head), other=human_count(split.other), traced=human_count(split.traced),
                  step=human_count(split.training_pass))
                + " " + t(f"shp.flops.rule.{rule_case(rule, split.traced)}", all=human_count(split.params),
                          rule=human_count(rule), pct=f"{abs(rule / split.traced - 1):.0%}"))


def q_chain(trace: ModelTrace, c: ShapeConfig) -> list[int]:
    """Q's way through block 0's attention, drawn as one line; returns the steps on it."""
    q = next(i for i, s in enumerate(trace.steps) if s.name.endswith("attn.q_proj"))
    path = follow(trace.steps, q, trace.steps[q].module.rsplit(".", 1)[0])
    changes = shape_chain(trace.steps, path)
    matmuls = [i for i in changes if trace.steps[i].op == "matmul"]
    # the notes' words for them
    names = dict(zip(matmuls, (t("shp.chain.scores"), t("shp.chain.weighted")), strict=True))
    st.markdown(t("shp.chain", d_h=c.d_head) + "  \n" + " → ".join(
        f"{names.get(i) or short_name(trace.steps[i])} `{shape_text(trace.steps[i].out_shape)}`" for i in changes))
    written = written_chain([trace.steps[i].out_shape for i in changes], [trace.steps[i].op for i in changes])
    if written == list(NOTES_CHAIN):  # the chain traced here, as the notes write it, is theirs
        st.success(t("shp.notes_match"), icon=":material/menu_book:")
    st.caption(t("shp.chain_note") + " " + t("shp.notation"))
    return path


def flow_labels() -> dict[str, str]:
    labels = {k: t(f"shp.col.{k}") for k in ("module", "op", "in", "out", "params", "flops", "bytes", "code")}
    return labels | {"input": t("shp.input"), "view_note": t("shp.view_note"), "block": t("shp.block_note")}


def flow_view(trace: ModelTrace, c: ShapeConfig, path: list[int]) -> None:
    """The traced dataflow, its first levels on view (the stage's figure)."""
    st.markdown(f"**{t('shp.flow')}**")
    charts.plotly_chart(st, flow_figure(trace.steps, [(c.batch, c.seq_len)], flow_labels(), highlight=path,
                                        block=(f"{trace.block}.0", c.n_layer), rows_shown=FLOW_ROWS),
                        key="shp.flow_fig")
    st.caption(t("shp.flow_help"))


def step_table_view(trace: ModelTrace, c: ShapeConfig) -> None:
    labels = flow_labels()
    st.subheader(t("shp.table"))
    st.caption(t("shp.table_help", n=c.n_layer, traced=trace.traced_layers))
    st.dataframe(step_table(trace.steps, labels), key="shp.table_df",
                 height=35 * (min(len(trace.steps), TABLE_ROWS) + 1) + 3,
                 column_config={labels["params"]: st.column_config.NumberColumn(format="localized")})


def kv_cache(state: PageState, c: ShapeConfig) -> None:
    st.subheader(t("shp.kv.title"))
    left, right = st.columns([2, 3], gap="medium")
    chosen = None
    with left:
        st.caption(t("shp.kv.intro"))
        state.widget("n_kv_head", help=t("shp.n_kv_head.help"))
        try:
            check_kv_heads(c)
        except ShapeError as e:
            st.error(error_text(e), icon=":material/error:")
        else:
            chosen = c.n_kv_head
            sizes = (c.n_layer, c.seq_len, c.d_model, c.n_head)
            per_seq = kv_cache_bytes(*sizes, chosen, c.dtype_bytes)
            total = kv_cache_bytes(*sizes, chosen, c.dtype_bytes, c.batch)
            full = kv_cache_bytes(*sizes, c.n_head, c.dtype_bytes, c.batch)
            st.metric(t("shp.kv.metric", b=c.batch), human_bytes(total))
            st.markdown(t("shp.kv.formula", layers=c.n_layer, T=c.seq_len, width=chosen * c.d_head, kv=chosen,
                          d_h=c.d_head, bytes=c.dtype_bytes, per_seq=human_bytes(per_seq), B=c.batch,
                          total=human_bytes(total)))
            st.caption(t("shp.kv.gqa", kv=chosen, h=c.n_head, group=c.n_head // chosen, mha=human_bytes(full),
                         ratio=f"{c.n_head / chosen:g}"))
    labels = {"kv_heads": t("shp.kv.axis_heads"), "bytes": t("shp.kv.axis_bytes"), "mqa": t("shp.kv.mqa"),
              "mha": t("shp.kv.mha")}
    charts.plotly_chart(right, kv_figure(kv_cache_options(c), chosen, labels), key="shp.kv_fig")


def main() -> None:
    state = PageState(PAGE, SCHEMA)
    with state.frame(t("shp.title"), t("shp.intro"), t("shp.about")):
        figure, side = state.stage()
        controls(state, side)
        c = ShapeConfig(**{p.name: state.values[p.name] for p in SCHEMA})
        try:
            trace = traced(c)
        except ShapeError as e:
            figure.error(error_text(e), icon=":material/error:")
        else:
            summary(trace, c)
            path = q_chain(trace, c)
            with figure:
                flow_view(trace, c, path)
            step_table_view(trace, c)
            lookup_view(c, error_text)
            kv_cache(state, c)
            training_memory_view(trace.totals["params"])


main()
