"""Attention lab: the pipeline stage by stage, the notes' worked numbers, and a tiny transformer trained live."""
import streamlit as st

from labs.attention.compare import compare_section
from labs.attention.permutation import permutation_section
from labs.attention.schema import PAGE, SCHEMA
from labs.attention.training import train_section
from labs.attention.widgets import remembered
from sim.core.text import html
from sim.plots.attention import PIPELINE_ROWS, bars_figure, pipeline_figures, sharpness_figure, variance_figure
from sim.transformers.attention import (
    SHARPNESS_HEAD_DIMS,
    dot_variance,
    head_choices,
    head_indices,
    head_stats,
    lab_pipeline,
    notes_bars,
    notes_softmax_table,
    notes_weighted_sum_text,
    scale_text,
    sharpness_by_head_dim,
    stable_softmax_table,
    weight_share,
)
from sim.transformers.claims import sharpness_reading, variance_case
from sim.transformers.tasks import MAX_TOKENS, PRESETS, split_tokens, utf8_bytes
from sim.transformers.transformer import notes_ffn_text
from ui import charts
from ui.course import course_note
from ui.i18n import t
from ui.urlstate import PageState

VARIANCE_PAIRS = 4096  # random pairs per head width of the dot-product variance figure
STAGES = ("x", "q", "k", "v", "raw", "weights", "heads_out", "concat", "output", "head", "row_sum", "masked_cell")


# ---------- 1. the pipeline ----------
MAIN_STAGE = "weights"  # the stage drawn in the section's stage, beside the controls that change it most
BELOW = tuple(row for row in (tuple(k for k in r if k != MAIN_STAGE) for r in PIPELINE_ROWS) if row)


def text_input(state: PageState) -> list[str]:
    """The preset's or the typed text (the preset itself is chosen under "More settings"), cut into at most
    MAX_TOKENS tokens."""
    preset = state.values["preset"]
    tokens = split_tokens(remembered(st.text_input, "att.text", preset, PRESETS[preset], label=t("att.text"),
                                     max_chars=400))
    if len(tokens) > MAX_TOKENS:
        st.warning(t("att.too_many_tokens", n=len(tokens), max=MAX_TOKENS))
    return tokens[:MAX_TOKENS]


def pipeline_controls(state: PageState, side) -> tuple[list[str], object]:
    """The tokens, the temperature and the mask beside the weights (the head too, once the sizes are checked: the
    returned slot); the example, the layer's sizes and the scaling folded. Returns (tokens, the head's slot)."""
    with side:
        tokens = text_input(state)
        # the slider before the mask's choices, which the presenter view's type wraps onto several rows
        state.widget("temperature", fold=False)
        if state.widget("mask", fold=False) in ("window", "causal_window"):
            state.widget("window", fold=False)
        head = st.container()
        with state.more(side):
            for name in ("preset", "d_model", "heads", "seed", "scale", "numbers"):
                state.widget(name)
    return tokens, head


def pipeline_section(state: PageState) -> None:
    figure, side = state.stage()
    tokens, head = pipeline_controls(state, side)
    v = state.values
    if not tokens:
        figure.info(t("att.no_tokens"))
        return
    d_model, n_heads = v["d_model"], v["heads"]
    if d_model % n_heads:
        figure.error(t("att.invalid_heads", d=d_model, h=n_heads))
        return
    heads = head_indices(state.widget("head", container=head, fold=False, options=head_choices(n_heads)), n_heads)
    p = lab_pipeline(tokens, d_model, n_heads, v["seed"], v["mask"], v["window"], v["scale"], v["temperature"])
    labels = {k: t(f"att.stage.{k}") for k in STAGES}
    labels["scaled"] = t("att.stage.scaled", divisor=scale_text(p.d_head, v["scale"]), temp=f"{v['temperature']:g}",
                         shape="{shape}")
    labels["masked"] = t("att.stage.masked" if p.mask is not None else "att.stage.no_mask")
    figs = pipeline_figures(p.arrays(), [html(tok, 20) for tok in tokens], heads, labels, numbers=v["numbers"],
                            main=MAIN_STAGE)
    with figure:
        charts.plotly_chart(st, figs[MAIN_STAGE], key=f"att.fig.{MAIN_STAGE}")
        st.caption(t(f"att.explain.{MAIN_STAGE}"))
    stats = head_stats(p, heads)
    c1, c2, c3 = st.columns(3)
    c1.metric(t("att.metric.max_weight"), stats["max_weight"])
    c2.metric(t("att.metric.entropy"), stats["entropy"], help=t("att.metric.entropy_help",
                                                                uniform=stats["uniform_entropy"]))
    c3.metric(t("att.metric.row_sums"), stats["row_sums"])
    st.markdown(t("att.pipeline_intro"))
    # the demo's tokens are words and characters; a real tokenizer's are sub-words
    st.caption(t("att.token_note", n=len(tokens), bytes=utf8_bytes(tokens)))
    for row in BELOW:  # the rest of the pipeline in its order, each figure smaller than the main one
        for col, key in zip(st.columns(max(2, len(row))), row, strict=False):
            charts.plotly_chart(col, figs[key], key=f"att.fig.{key}")
            col.caption(t(f"att.explain.{key}"))
    scale_section(p.d_head)
    permutation_section(state, tokens)


def scale_section(d_head: int) -> None:
    """Why ÷√d_h: the softmax's sharpness with and without it, and the dot product's measured variance beside the
    article's claim about unit vectors."""
    st.subheader(t("att.sharpness_title"))
    left, right = st.columns(2)
    sharp = cached_sharpness()
    charts.plotly_chart(left, sharpness_figure(SHARPNESS_HEAD_DIMS, sharp,
                                               {k: t(f"att.sharpness.{k}") for k in ("d_h", "max", "scaled",
                                                                                     "unscaled")},
                                               current=d_head), key="att.fig.sharpness")
    left.caption(sharpness_text(sharp))
    dims = sorted({*SHARPNESS_HEAD_DIMS, d_head})
    measured = cached_variance(tuple(dims))
    labels = {k: t(f"att.variance.{k}") for k in ("d_h", "variance", "unit", "entries", "inverse", "width")}
    charts.plotly_chart(right, variance_figure(dims, measured, labels, current=d_head), key="att.fig.variance")
    right.caption(t("att.variance_help", pairs=f"{VARIANCE_PAIRS:,}"))
    i = dims.index(d_head)
    unit, entries = measured["unit"][i], measured["entries"][i]
    course_note(t("att.course.dk.says"), t(f"att.course.dk.shows.{variance_case(d_head, unit, entries)}", d=d_head,
                                            pairs=f"{VARIANCE_PAIRS:,}", unit=f"{unit:.4g}", inv=f"{1 / d_head:.4g}",
                                            entries=f"{entries:.4g}"))


def sharpness_text(curves: dict[str, list[float]]) -> str:
    """The sharpness figure's caption: how it was made, and what its curves show (claims.sharpness_reading)."""
    r = sharpness_reading(SHARPNESS_HEAD_DIMS, curves)
    return " ".join((t("att.sharpness_help"),
                     t(f"att.sharpness.read.{r.unscaled}", narrow=r.narrow, wide=r.wide,
                       narrow_w=f"{r.unscaled_narrow:.2f}", wide_w=f"{r.unscaled_wide:.2f}"),
                     t(f"att.sharpness.scaled.{r.scaled}", low=f"{r.scaled_low:.2f}", high=f"{r.scaled_high:.2f}")))


@st.cache_data
def cached_sharpness() -> dict[str, list[float]]:
    return sharpness_by_head_dim(list(SHARPNESS_HEAD_DIMS))


@st.cache_data(max_entries=16)
def cached_variance(dims: tuple[int, ...]) -> dict[str, list[float]]:
    return dot_variance(list(dims), VARIANCE_PAIRS)


# ---------- 2. the notes' numbers ----------
def examples_section(state: PageState) -> None:
    figure, side = state.stage()
    temp = state.widget("ex_temp", container=side, fold=False)
    names, scores, weights = notes_bars(temp)
    with figure:
        st.markdown(f"**{t('att.ex.softmax_title')}**")
        charts.plotly_chart(st, bars_figure(names, {t("att.ex.scores"): scores, t("att.ex.weights"): weights},
                                            t("att.ex.value")), key="att.fig.softmax")
        share = t(f"att.ex.share.{weight_share(weights)}", share=f"{max(weights):.3f}")  # chosen by the weights
        st.caption(t("att.ex.softmax_caption", how=t("att.ex.softmax_help"), share=share))
    left, right = st.columns(2, gap="medium")
    left.markdown(notes_softmax_table(t("att.ex.key"), temp))
    with right:
        st.markdown(f"**{t('att.ex.sum_title')}**")
        st.code(notes_weighted_sum_text(temp), language=None)
        st.caption(t("att.ex.sum_help"))
    st.subheader(t("att.ex.ffn_title"))
    st.code(notes_ffn_text(), language=None)
    st.caption(t("att.ex.ffn_help"))

    st.subheader(t("att.ex.stable_title"))
    big = state.widget("big", container=st.columns(2)[0])
    table, overflow = stable_softmax_table(big, t("att.ex.naive"), t("att.ex.stable"))
    st.markdown(table)
    (st.error if overflow else st.success)(t("att.ex.stable_nan" if overflow else "att.ex.stable_ok"))
    st.caption(t("att.ex.stable_help"))


# ---------- page ----------
def main() -> None:
    PageState(PAGE, SCHEMA).sections(t("att.title"), t("att.intro"), {
        "pipeline": pipeline_section, "examples": examples_section, "train": train_section,
        "compare": compare_section}, t("att.about"))


main()
