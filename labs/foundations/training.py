"""The training loop's calls (zero_grad, no_grad, eval) on the backprop section's network, and gradient norms with
depth for sigmoid, tanh and ReLU: every number measured with torch.autograd here."""
import pandas as pd
import streamlit as st

from labs.foundations.backprop import network_controls
from sim.autograd.depth import DEPTHS, DepthGrads, depth_claim, depth_grads, first_layer_by_depth
from sim.autograd.loop import (
    LOSS_CAP,
    LoopRun,
    Saved,
    dropout_outputs,
    eval_facts,
    held_at,
    saved_for_backward,
    train,
    zero_grad_outcome,
)
from sim.autograd.network import NetConfig
from sim.core.text import Markup
from sim.plots.foundations import depth_figure, loop_figure, saved_figure
from ui import charts
from ui.i18n import t
from ui.urlstate import PageState


@st.cache_data(max_entries=64, show_spinner=False)
def runs(config: NetConfig, lr: float, steps: int) -> tuple[LoopRun, LoopRun]:
    return train(config, lr, steps, zero_grad=True), train(config, lr, steps, zero_grad=False)


@st.cache_data(max_entries=64, show_spinner=False)
def saved(config: NetConfig, batch: int) -> tuple[Saved, Saved]:
    return saved_for_backward(config, batch, no_grad=False), saved_for_backward(config, batch, no_grad=True)


def zero_grad_part(state: PageState, config: NetConfig, figure, side) -> None:
    """The two runs' curves in the stage (the rate and the steps beside them), what they show under them; the part's
    explanation below the stage."""
    with side:
        lr = state.widget("l_lr", help=t("fnd.l_lr.help"), fold=False)
        steps = state.widget("l_steps", fold=False)
    with_zero, without = runs(config, lr, steps)
    names = {"with": t("fnd.loop.with_zero"), "without": t("fnd.loop.without_zero")}
    fig = loop_figure(steps, {names["with"]: (with_zero.loss, with_zero.grad),
                              names["without"]: (without.loss, without.grad)},
                      {"loss": t("fnd.loop.fig.loss"), "grad": t("fnd.loop.fig.grad"), "step": t("fnd.loop.fig.step")})
    with figure:
        charts.plotly_chart(st, fig, key="fnd.fig_loop")
        for name, run in (("with", with_zero), ("without", without)):
            if run.diverged_at is not None:
                st.warning(t("fnd.loop.diverged", run=names[name], step=run.diverged_at + 1, cap=f"{LOSS_CAP:.0e}"),
                           icon=":material/trending_up:")
        st.markdown(zero_grad_text(with_zero, without, steps))
    st.markdown(t("fnd.loop.intro"))
    st.subheader(t("fnd.loop.zero.title"))
    st.markdown(t("fnd.loop.zero.intro"))


def zero_grad_text(with_zero: LoopRun, without: LoopRun, steps: int) -> Markup:
    """What the two runs show: their last losses or where they diverged, and .grad at step 3 as a sum."""
    step = lambda run: (run.diverged_at or 0) + 1  # noqa: E731 (the step it diverged at; only those keys use it)
    text = t(f"fnd.loop.zero.result.{zero_grad_outcome(with_zero, without)}", steps=steps,
             with_loss=f"{with_zero.last_loss:.3g}", without_loss=f"{without.last_loss:.3g}",
             with_step=step(with_zero), without_step=step(without))
    held = held_at(without)
    if held is None:
        return text
    number = lambda x: f"{x + 0.0:.4g}"  # noqa: E731 (+ 0.0: a −0.0 reads 0)
    return t("fnd.loop.zero.with_sum", result=text, sum=t(f"fnd.loop.zero.{held}", g3=number(without.grad[2]),
                                                       f3=", ".join(number(x) for x in without.fresh[:3])))


def no_grad_part(state: PageState, config: NetConfig) -> None:
    st.subheader(t("fnd.loop.nograd.title"))
    st.markdown(t("fnd.loop.nograd.intro"))
    with state.controls(st.columns(2)[0]):  # a slider as wide as the chart below
        batch = state.widget("l_batch", help=t("fnd.l_batch.help"))
    on, off = saved(config, batch)
    cols = st.columns(3)
    cols[0].metric(t("fnd.loop.nograd.on"), f"{on.bytes:,} B", help=t("fnd.loop.nograd.tensors", n=on.tensors))
    cols[1].metric(t("fnd.loop.nograd.off"), f"{off.bytes:,} B", help=t("fnd.loop.nograd.tensors", n=off.tensors))
    cols[2].metric(t("fnd.loop.nograd.graph"), t("fnd.loop.nograd.yes") if on.graph else t("fnd.loop.nograd.no"),
                   delta=t("fnd.loop.nograd.off_graph") if not off.graph else None, delta_color="off")
    left, right = st.columns(2, gap="medium")  # below the stage: narrower than the curves
    charts.plotly_chart(left, saved_figure({t("fnd.loop.nograd.on"): on.bytes, t("fnd.loop.nograd.off"): off.bytes},
                                           {"bytes": t("fnd.loop.nograd.bytes")}), key="fnd.fig_saved")
    right.caption(t("fnd.loop.nograd.how", tensors=on.tensors, batch=batch, weights=on.weights))


def eval_part(state: PageState, config: NetConfig) -> None:
    st.subheader(t("fnd.loop.eval.title"))
    st.markdown(t("fnd.loop.eval.intro"))
    left, right = st.columns(2, gap="medium")  # below the stage: a table narrower than the curves
    with left:
        with state.controls():
            p = state.widget("l_dropout", help=t("fnd.l_dropout.help"))
        train_out, eval_out, plain = dropout_outputs(config, p)
        runs_col = [t("fnd.loop.eval.run", i=i + 1) for i in range(len(train_out))]
        st.dataframe(pd.DataFrame({t("fnd.loop.eval.col.run"): runs_col, "model.train()": train_out,
                                   "model.eval()": eval_out}), hide_index=True, key="fnd.eval_table",
                     column_config={c: st.column_config.NumberColumn(format="%.6f") for c in ("model.train()",
                                                                                             "model.eval()")})
    right.markdown(eval_text(train_out, eval_out, plain, p))


def eval_text(train_out: list[float], eval_out: list[float], plain: float, p: float) -> Markup:
    f = eval_facts(train_out, eval_out, plain)
    yes = lambda b: t("fnd.loop.nograd.yes" if b else "fnd.loop.nograd.no")  # noqa: E731
    return t("fnd.loop.eval.result", p=f"{p:g}", plain=f"{plain:.6f}", differ=yes(f.differ), same=yes(f.same),
             plain_same=yes(f.plain))


def loop_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:
        main = st.container()  # the rate and the steps of the curves, on view
        with state.more(side):
            config = network_controls(state)
    zero_grad_part(state, config, figure, main)
    no_grad_part(state, config)
    eval_part(state, config)


@st.cache_data(max_entries=64, show_spinner=False)
def depth_norms(acts: tuple[str, ...], depth: int, scale: float, seed: int) -> tuple[dict, dict]:
    sweep = first_layer_by_depth(scale, seed=seed)
    return ({a: depth_grads(a, depth, scale, seed=seed) for a in acts}, {a: sweep[a] for a in acts})


def times(x: float) -> str:
    """A factor as it is read: 1,509 rather than 1.51e+03, and 4.3e+08 once it is that large."""
    return f"{x:,.0f}" if 10 <= x < 1e6 else f"{x:.3g}"


def depth_text(act: str, g: DepthGrads, depth: int) -> Markup:
    """What one activation's run shows: which way the passed-back gradient went, and whether the weights' says so."""
    c = depth_claim(g)
    weight = t("fnd.depth.weight.same" if c.weight == c.back else "fnd.depth.weight.other",
               ratio=f"{c.weight_ratio:.3g}", depth=depth)
    return t(f"fnd.depth.back.{c.back}", act=t(f"fnd.d_act.{act}"), first=f"{g.back[0]:.3g}",
             last=f"{g.back[-1]:.3g}", depth=depth, factor=times(c.factor), weight=weight)


def depth_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:  # the sliders first: the activations' pills wrap to several rows in the narrow column
        depth = state.widget("d_depth", fold=False)
        scale = state.widget("d_scale", help=t("fnd.d_scale.help"), fold=False)
        acts = state.widget("d_act", fold=False)
        with state.more(side):
            seed = state.widget("d_seed")
    if not acts:
        figure.info(t("fnd.depth.none"), icon=":material/info:")
        st.markdown(t("fnd.depth.intro"))
        return
    grads, sweep = depth_norms(acts, depth, scale, seed)
    labels = {k: t(f"fnd.depth.fig.{k}", depth=depth, scale=f"{scale:g}")
              for k in ("per_layer", "by_depth", "layer", "depth", "norm", "back", "weight")}
    fig = depth_figure({a: g.back for a, g in grads.items()}, {a: g.weight for a, g in grads.items()}, sweep, DEPTHS,
                       labels)
    with figure:
        charts.plotly_chart(st, fig, key="fnd.fig_depth")
        for a, g in grads.items():
            st.markdown(depth_text(a, g, depth))
        st.caption(t("fnd.depth.how", depths=", ".join(map(str, DEPTHS))))
    st.markdown(t("fnd.depth.intro"))
