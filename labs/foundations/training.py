"""The training loop's calls (zero_grad, no_grad, eval) on the backprop section's network, and gradient norms with
depth for sigmoid, tanh and ReLU: every number measured with torch.autograd here."""
import pandas as pd
import streamlit as st

from labs.foundations.backprop import network_controls
from sim.autograd.depth import DEPTHS, first_layer_by_depth, first_to_last, layer_grad_norms
from sim.autograd.loop import LOSS_CAP, LoopRun, Saved, dropout_outputs, saved_for_backward, train
from sim.autograd.network import NetConfig
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


def zero_grad_part(state: PageState, config: NetConfig) -> None:
    st.subheader(t("fnd.loop.zero.title"))
    st.markdown(t("fnd.loop.zero.intro"))
    with state.controls():
        cols = st.columns(2)
        lr = state.widget("l_lr", container=cols[0], help=t("fnd.l_lr.help"))
        steps = state.widget("l_steps", container=cols[1])
    with_zero, without = runs(config, lr, steps)
    names = {"with": t("fnd.loop.with_zero"), "without": t("fnd.loop.without_zero")}
    fig = loop_figure(steps, {names["with"]: (with_zero.loss, with_zero.grad),
                              names["without"]: (without.loss, without.grad)},
                      {"loss": t("fnd.loop.fig.loss"), "grad": t("fnd.loop.fig.grad"), "step": t("fnd.loop.fig.step")})
    charts.plotly_chart(st, fig, key="fnd.fig_loop")
    for name, run in (("with", with_zero), ("without", without)):
        if run.diverged_at is not None:
            st.warning(t("fnd.loop.diverged", run=names[name], step=run.diverged_at + 1, cap=f"{LOSS_CAP:.0e}"),
                       icon=":material/trending_up:")
    st.markdown(t("fnd.loop.zero.result", steps=steps, with_loss=f"{with_zero.last_loss:.3g}",
                  without_loss=f"{without.last_loss:.3g}", g3=f"{without.grad[min(2, steps - 1)]:.4g}",
                  f3=", ".join(f"{x:.4g}" for x in without.fresh[:3])))


def no_grad_part(state: PageState, config: NetConfig) -> None:
    st.subheader(t("fnd.loop.nograd.title"))
    st.markdown(t("fnd.loop.nograd.intro"))
    with state.controls():
        batch = state.widget("l_batch", help=t("fnd.l_batch.help"))
    on, off = saved(config, batch)
    cols = st.columns(3)
    cols[0].metric(t("fnd.loop.nograd.on"), f"{on.bytes:,} B", help=t("fnd.loop.nograd.tensors", n=on.tensors))
    cols[1].metric(t("fnd.loop.nograd.off"), f"{off.bytes:,} B", help=t("fnd.loop.nograd.tensors", n=off.tensors))
    cols[2].metric(t("fnd.loop.nograd.graph"), t("fnd.loop.nograd.yes") if on.graph else t("fnd.loop.nograd.no"),
                   delta=t("fnd.loop.nograd.off_graph") if not off.graph else None, delta_color="off")
    charts.plotly_chart(st, saved_figure({t("fnd.loop.nograd.on"): on.bytes, t("fnd.loop.nograd.off"): off.bytes},
                                         {"bytes": t("fnd.loop.nograd.bytes")}), key="fnd.fig_saved")
    st.caption(t("fnd.loop.nograd.how", tensors=on.tensors, batch=batch))


def eval_part(state: PageState, config: NetConfig) -> None:
    st.subheader(t("fnd.loop.eval.title"))
    st.markdown(t("fnd.loop.eval.intro"))
    with state.controls():
        p = state.widget("l_dropout", help=t("fnd.l_dropout.help"))
    train_out, eval_out, plain = dropout_outputs(config, p)
    runs_col = [t("fnd.loop.eval.run", i=i + 1) for i in range(len(train_out))]
    st.dataframe(pd.DataFrame({t("fnd.loop.eval.col.run"): runs_col, "model.train()": train_out,
                               "model.eval()": eval_out}), hide_index=True, key="fnd.eval_table",
                 column_config={c: st.column_config.NumberColumn(format="%.6f") for c in ("model.train()",
                                                                                         "model.eval()")})
    same = len(set(eval_out)) == 1
    differ = len(set(train_out)) > 1
    st.markdown(t("fnd.loop.eval.result", plain=f"{plain:.6f}", same=t("fnd.loop.nograd.yes" if same else
                                                                       "fnd.loop.nograd.no"),
                  differ=t("fnd.loop.nograd.yes" if differ else "fnd.loop.nograd.no"), p=f"{p:g}"))


def loop_section(state: PageState) -> None:
    st.markdown(t("fnd.loop.intro"))
    config = network_controls(state)
    zero_grad_part(state, config)
    no_grad_part(state, config)
    eval_part(state, config)


@st.cache_data(max_entries=64, show_spinner=False)
def depth_norms(acts: tuple[str, ...], depth: int, scale: float, seed: int) -> tuple[dict, dict]:
    sweep = first_layer_by_depth(scale, seed=seed)
    return ({a: layer_grad_norms(a, depth, scale, seed=seed) for a in acts}, {a: sweep[a] for a in acts})


def depth_section(state: PageState) -> None:
    st.markdown(t("fnd.depth.intro"))
    with state.controls():
        cols = st.columns([3, 2, 2, 2])
        acts = state.widget("d_act", container=cols[0])
        depth = state.widget("d_depth", container=cols[1])
        scale = state.widget("d_scale", container=cols[2], help=t("fnd.d_scale.help"))
        seed = state.widget("d_seed", container=cols[3])
    if not acts:
        st.info(t("fnd.depth.none"), icon=":material/info:")
        return
    norms, sweep = depth_norms(acts, depth, scale, seed)
    fig = depth_figure(norms, sweep, DEPTHS, {k: t(f"fnd.depth.fig.{k}", depth=depth, scale=f"{scale:g}")
                                              for k in ("per_layer", "by_depth", "layer", "depth", "norm")})
    charts.plotly_chart(st, fig, key="fnd.fig_depth")
    for a, n in norms.items():
        ratio = first_to_last(n)
        st.markdown(t("fnd.depth.ratio", act=t(f"fnd.d_act.{a}"), first=f"{n[0]:.3g}", last=f"{n[-1]:.3g}",
                      ratio=f"{ratio:.3g}", depth=depth))
    st.caption(t("fnd.depth.how"))
