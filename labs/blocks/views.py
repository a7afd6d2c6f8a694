"""The transformer-block lab's slider-driven sections: normalisation, initialisation and depth, position encodings and
the FFN (the KV cache is in kv.py)."""
import numpy as np
import pandas as pd
import streamlit as st
import torch
import torch.nn.functional as F

from labs.blocks.ffn_batch import ffn_batch_view
from sim.plots.blocks import (
    activation_figure,
    bars_figure,
    init_figure,
    norm_figure,
    position_figures,
    rope_figure,
    score_figure,
)
from sim.plots.shapes import human_count
from sim.transformers.blocks import (
    POSITIONS,
    ffn_module,
    ffn_params,
    init_stats,
    norm_view,
    position_experiment,
    rope,
    rope_frequencies,
    rope_pairs,
    shifted_scores,
    swiglu_hidden,
    vectors,
)
from sim.transformers.claims import cost_case, extrapolation_case, init_reading, shift_case
from ui import charts
from ui.i18n import t
from ui.urlstate import PageState

ss = st.session_state


def bounded(state: PageState, name: str, lo: int, hi: int, container=st) -> int:
    """A slider for a parameter whose range depends on other settings (a cell inside the tensor's shape)."""
    key = state.key(name)
    value = min(hi, max(lo, state.values[name]))
    if hi <= lo:
        state.set(name, lo)
        return lo
    if key not in ss or not lo <= ss[key] <= hi:
        ss[key] = value
    value = container.slider(t(key), lo, hi, step=1, key=key)
    state.set(name, value)
    return value


# ---------- normalisation ----------
def norm_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:  # the kind and the chosen cell beside the tensor; its sizes folded
        kind = state.widget("n_kind", fold=False)
        sizes = [state.values[n] for n in ("n_B", "n_T", "n_d")]
        cell = tuple(bounded(state, name, 0, n - 1) for name, n in zip(("n_b", "n_t", "n_j"), sizes, strict=True))
        with state.more(side):
            B, T, d = (state.widget(n) for n in ("n_B", "n_T", "n_d"))
            seed = state.widget("n_seed")
    v = norm_view(kind, B, T, d, cell, seed)
    labels = {k: t(f"blk.norm.fig.{k}") for k in ("input", "output", "sample", "position", "feature")}
    with figure:
        charts.plotly_chart(st, norm_figure(v.x, v.y, v.group, labels), key="blk.fig.norm")
        if kind == "batch" and B * T == 1:
            st.warning(t("blk.norm.batch_one"), icon=":material/warning:")
        st.caption(t("blk.norm.help"))
    n = int(v.group.sum())
    st.markdown(t(f"blk.norm.what.{kind}", n=n, b=cell[0], t=cell[1], j=cell[2]))
    b, tt, j = cell
    x, y = v.x[b, tt, j], v.y[b, tt, j]
    if v.mean is None:
        st.latex(rf"y = \frac{{x}}{{\mathrm{{RMS}}}} = \frac{{{x:.3f}}}{{{v.scale:.3f}}} = {y:.3f}")
    else:
        st.latex(rf"y = \frac{{x-\mu}}{{\sqrt{{\sigma^2+\epsilon}}}}"
                 rf" = \frac{{{x:.3f} - ({v.mean:.3f})}}{{{v.scale:.3f}}} = {y:.3f}")
    st.markdown(t("blk.norm.intro"))


# ---------- initialisation and depth ----------
@st.cache_data(max_entries=32, show_spinner=False)
def cached_init(depth: int, width: int, init: str, act: str, seed: int):
    return init_stats(depth, width, init, act, seed)


def init_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:
        # the depth first: a slider stays on the first screen when the presenter view's type wraps the choices
        depth, init, act, width = (state.widget(n, fold=False) for n in ("i_depth", "i_init", "i_act", "i_width"))
        with state.more(side):
            seed = state.widget("i_seed")
    s = cached_init(depth, width, init, act, seed)
    labels = {k: t(f"blk.init.fig.{k}") for k in ("acts", "grads", "std", "layer", "value", "log_grad", "act_std",
                                                    "grad_std")}
    r = init_reading(s.act_std, s.grad_std)
    with figure:
        charts.plotly_chart(st, init_figure(s.acts, s.grads, s.act_std, s.grad_std, labels), key="blk.fig.init")
        for what, case, ratio in (("signal", r.signal, r.signal_ratio), ("gradient", r.gradient, r.gradient_ratio)):
            if case != "steady":
                st.warning(t(f"blk.init.{case}.{what}", ratio=f"{ratio:.3g}", depth=depth),
                           icon=":material/trending_down:" if case == "vanish" else ":material/trending_up:")
        if r.signal == r.gradient == "steady":
            st.info(t("blk.init.steady", signal=f"{r.signal_ratio:.3g}", gradient=f"{r.gradient_ratio:.3g}",
                      depth=depth), icon=":material/check:")
        st.caption(t(f"blk.init.rule.{init}"))
    st.markdown(t("blk.init.summary", first=f"{s.act_std[0]:.3g}", last=f"{s.act_std[-1]:.3g}",
                  g_first=f"{s.grad_std[0]:.3g}", g_last=f"{s.grad_std[-1]:.3g}", ratio=f"{r.gradient_ratio:.3g}",
                  depth=depth))
    st.markdown(t("blk.init.intro"))


# ---------- position encodings ----------
@st.cache_data(max_entries=16, show_spinner=False)
def cached_positions(train_len: int, test_len: int, seed: int):
    return [position_experiment(p, train_len, test_len, seed=seed) for p in POSITIONS]


def pos_labels() -> dict:
    return {**{f"pos.{p}": t(f"blk.pos.name.{p}") for p in POSITIONS},
            **{k: t(f"blk.pos.fig.{k}") for k in ("key_pos", "query_pos", "accuracy", "trained", "pair")}}


def position_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:
        d, base, P = (state.widget(n, fold=False) for n in ("p_dim", "p_base", "p_positions"))
        with state.more(side):
            seed = state.widget("p_seed")
    q, k = vectors(d, seed)
    labels = pos_labels()
    freqs = rope_frequencies(d, base).numpy()
    shown = sorted({0, 1, d // 4, d // 2 - 1} & set(range(d // 2)))
    with figure:
        charts.plotly_chart(st, rope_figure(rope_pairs(q, torch.arange(P), base), shown, freqs, labels),
                            key="blk.fig.rope")
        st.caption(t("blk.pos.rope_help"))
    st.markdown(t("blk.pos.intro"))
    st.subheader(t("blk.pos.relative"))
    c = st.columns(3)
    m, n, s = (state.widget(name, container=col) for name, col in zip(("p_m", "p_n", "p_shift"), c, strict=True))
    rows = shifted_scores(q, k, m, n, s, base)
    left, right = st.columns(2, gap="medium")  # below the stage, each smaller than the turning pairs
    left.dataframe(pd.DataFrame(rows, columns=[t("blk.pos.col.m"), t("blk.pos.col.n"), t("blk.pos.col.diff"),
                                               t("blk.pos.col.dot")]).style.format({t("blk.pos.col.dot"): "{:.10f}"}),
                   hide_index=True)
    dots = [r[3] for r in rows]
    left.markdown(t(f"blk.pos.relative_result.{shift_case(dots)}", spread=f"{max(dots) - min(dots):.1e}",
                    plain=f"{float(q @ k):.4f}", q=fmt_vec(q), k=fmt_vec(k)))
    Q = rope(q.expand(P, -1), torch.arange(P), base)
    K = rope(k.expand(P, -1), torch.arange(P), base)
    charts.plotly_chart(right, score_figure((Q @ K.T).numpy(), t("blk.pos.scores_title"), labels),
                        key="blk.fig.scores")
    st.subheader(t("blk.pos.trained"))
    st.markdown(t("blk.pos.trained_intro"))
    c = st.columns(3)
    L, L2 = state.widget("p_train", container=c[0]), state.widget("p_test", container=c[1])
    tseed = state.widget("p_train_seed", container=c[2])
    if L2 <= L:
        st.info(t("blk.pos.test_short", train=L), icon=":material/info:")
    with st.spinner(t("blk.pos.training")):
        results = cached_positions(L, L2, tseed)
    heat, acc = position_figures(results, labels)
    left, right = st.columns(2, gap="medium")
    charts.plotly_chart(left, heat, key="blk.fig.pos_att")
    charts.plotly_chart(right, acc, key="blk.fig.pos_acc")
    inside, beyond = {r.pos: r.inside for r in results}, {r.pos: r.beyond for r in results}
    st.dataframe(pd.DataFrame({t("blk.pos.col.encoding"): [labels[f"pos.{p}"] for p in POSITIONS],
                               t("blk.pos.col.inside"): [inside[p] for p in POSITIONS],
                               t("blk.pos.col.beyond"): [beyond[p] for p in POSITIONS]}).style.format(precision=3),
                 hide_index=True)
    for p in POSITIONS:  # what each run shows past the trained length, in the table's numbers
        if (case := extrapolation_case(inside[p], beyond[p])) != "none":
            st.markdown(t(f"blk.pos.beyond.{case}", name=labels[f"pos.{p}"], inside=f"{inside[p]:.3f}",
                          beyond=f"{beyond[p]:.3f}"))
    st.caption(t("blk.pos.trained_help"))


def fmt_vec(v: torch.Tensor) -> str:
    items = ", ".join(f"{x:.2f}" for x in v[:8].tolist())
    return f"[{items}{', …' if len(v) > 8 else ''}]"


# ---------- FFN ----------
def ffn_section(state: PageState) -> None:
    figure, side = state.stage()
    d, ratio = (state.widget(n, container=side, fold=False) for n in ("f_d", "f_ratio"))
    h, hs = ratio * d, swiglu_hidden(d)
    rows = [("gelu", h), ("swiglu", h), ("swiglu", hs)]
    names = [t("blk.ffn.gelu", h=h), t("blk.ffn.swiglu", h=h), t("blk.ffn.swiglu", h=hs)]
    counts = [ffn_params(kind, d, width) for kind, width in rows]
    with figure:
        charts.plotly_chart(st, bars_figure(names, counts, t("blk.ffn.params_title"), t("blk.ffn.col.params")),
                            key="blk.fig.ffn")
        gelu, swiglu = counts[0], counts[2]
        st.caption(t(f"blk.ffn.summary.{cost_case(gelu, swiglu)}", d=d, h=h, hs=hs, gelu=human_count(gelu),
                     swiglu=human_count(swiglu), ratio=f"{max(gelu, swiglu) / min(gelu, swiglu):.2f}", mult=ratio))
    module = [sum(p.numel() for p in ffn_module(kind, d, width).parameters()) for kind, width in rows]
    st.dataframe(pd.DataFrame({t("blk.ffn.col.ffn"): names, t("blk.ffn.col.params"): counts,
                               t("blk.ffn.col.module"): module,
                               t("blk.ffn.col.flops"): [2 * x for x in counts],
                               t("blk.ffn.col.ratio"): [x / counts[0] for x in counts]}).style.format(
        {t("blk.ffn.col.ratio"): "{:.3f}"}), hide_index=True)
    x = np.linspace(-4, 4, 161)
    xt = torch.tensor(x)
    curves = {"ReLU": F.relu(xt).numpy(), "GELU": F.gelu(xt).numpy(), "SiLU (Swish)": F.silu(xt).numpy()}
    left, right = st.columns(2, gap="medium")
    charts.plotly_chart(left, activation_figure(x, curves, {"title": t("blk.ffn.curves")}), key="blk.fig.act")
    right.markdown(t("blk.ffn.intro"))
    ffn_batch_view(d, h)
