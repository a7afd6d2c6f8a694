"""Generalisation lab: splits and cross-validation, leakage, capacity, regularisation, label noise."""
import random

import streamlit as st

from labs.generalization import labels
from labs.generalization.cv_view import cv_view
from labs.generalization.live import live_section
from labs.generalization.schema import PAGE, SCHEMA
from sim.fitting import leakage
from sim.fitting.fit import FitConfig
from sim.fitting.generalization import (
    CurveData,
    capacity_sweep,
    cross_validate,
    curve_data,
    cv_summary,
    fit_errors,
    noisy_points,
    odd_test_share,
)
from sim.plots import generalization as plots
from ui import charts
from ui.i18n import t
from ui.urlstate import PageState

DEFAULTS = {p.name: p.default for p in SCHEMA}
ss = st.session_state


def regenerate() -> None:
    ss["gen.seed"] = random.randrange(1_000_000)


# ---------- data ----------
@st.cache_data(max_entries=64, show_spinner=False)
def cached_curve_data(n: int, noise: float, train: float, val: float, seed: int) -> CurveData:
    return curve_data(n, noise, train, val, seed)


def current_data(v: dict) -> CurveData:
    """The split data of the settings; on an impossible split, a message and the last split that worked."""
    want = (v["n"], v["noise"], v["train"], v["val"], v["seed"])
    try:
        ss["gen.data"] = cached_curve_data(*want)
        ss["gen.data_key"] = want
    except ValueError:
        st.error(t("gen.split_empty", train=f"{v['train']:.0%}", val=f"{v['val']:.0%}"))
        if "gen.data" not in ss:  # nothing worked yet in this session: the default split
            ss["gen.data_key"] = (v["n"], v["noise"], DEFAULTS["train"], DEFAULTS["val"], v["seed"])
            ss["gen.data"] = cached_curve_data(*ss["gen.data_key"])
    return ss["gen.data"]


def data_controls(state: PageState) -> None:
    with state.controls():
        cols = st.columns([2, 2, 2, 2, 2, 1.5], vertical_alignment="bottom")
        for col, name in zip(cols, ("n", "noise", "train", "val", "seed"), strict=False):
            state.widget(name, container=col)
        cols[5].button(t("gen.regenerate"), on_click=regenerate, icon=":material/casino:")
        test = odd_test_share(state.values["train"], state.values["val"])
        if test is not None:
            st.caption(t("gen.test_outside", test=f"{test:.0%}"))


def widgets(state: PageState, *names: str) -> None:
    """One row of the settings `names`."""
    with state.controls():
        for col, name in zip(st.columns(len(names)), names, strict=True):
            state.widget(name, container=col)


# ---------- sections ----------
def split_section(state: PageState) -> None:
    st.markdown(t("gen.split.intro"))
    data_controls(state)
    data = current_data(state.values)
    charts.plotly_chart(st, plots.data_figure(data, labels.parts()), key="gen.split_fig")
    st.subheader(t("gen.cv.title"))
    st.markdown(t("gen.cv.intro"))
    with state.controls():
        c1, c2 = st.columns(2)
        k = state.widget("k", container=c1)
        degree = state.widget("degree", container=c2)
    folds = cross_validate(data, degree, k, state.values["seed"])
    cv_view(folds, data, k, (ss["gen.data_key"], degree, k))
    mean, std = cv_summary(folds)
    fit = fit_errors(data, degree)
    cols = st.columns(3)
    cols[0].metric(t("gen.cv.mean", k=k), f"{mean:.3f} ± {std:.3f}")
    cols[1].metric(t("gen.cv.holdout"), f"{fit.val:.3f}")
    cols[2].metric(t("gen.cv.new"), f"{fit.new:.3f}")
    st.caption(t("gen.cv.note"))


@st.cache_data(max_entries=32, show_spinner=False)
def cached_leak(scenario: str, knob: float, seed: int) -> leakage.Leak:
    return leakage.leak(scenario, knob, seed)


def leakage_section(state: PageState) -> None:
    st.markdown(t("gen.leak.intro"))
    for scenario, knob in (("scaling", "strength"), ("group", "records"), ("time", "spell")):
        with st.container(border=True):
            st.subheader(t(f"gen.leak.{scenario}.title"))
            st.markdown(t(f"gen.leak.{scenario}.text"))
            value = state.widget(knob)
            leak = cached_leak(scenario, value, state.values["seed"])
            bar_labels = labels.leak_bars(scenario)
            example, bars = plots.leak_figures(scenario, leak, labels.leak_example(scenario), bar_labels)
            c1, c2 = st.columns(2)
            charts.plotly_chart(c1, example, key=f"gen.leak.{scenario}.example")
            charts.plotly_chart(c2, bars, key=f"gen.leak.{scenario}.bars")
            gap = {name: f"{s.gap * 100:+.0f} ± {s.spread * 100:.0f}"
                   for name, s in (("leaky", leak.leaky), ("honest", leak.honest))}
            st.caption(t("gen.leak.summary", leaky=bar_labels["leaky"], honest=bar_labels["honest"],
                         lr=f"{leak.leaky.reported:.0%}", ln=f"{leak.leaky.new:.0%}", gap=gap["leaky"],
                         hr=f"{leak.honest.reported:.0%}", hn=f"{leak.honest.new:.0%}", hgap=gap["honest"],
                         repeats=leakage.REPEATS))


@st.cache_data(max_entries=64, show_spinner=False)
def cached_sweep(data_key: tuple):
    return capacity_sweep(*data_key)  # this data set and more drawn like it, averaged


def capacity_section(state: PageState) -> None:
    st.markdown(t("gen.cap.intro"))
    data_controls(state)
    data = current_data(state.values)
    degree = state.widget("degree")
    sweep = cached_sweep(ss["gen.data_key"])
    fit = fit_errors(data, degree)
    figures = plots.capacity_figures(data, sweep, fit, degree, *labels.capacity(sweep, len(data.train), degree))
    for col, fig, key in zip(st.columns(2), figures, ("gen.sweep_fig", "gen.fit_fig"), strict=True):
        charts.plotly_chart(col, fig, key=key)
    st.caption(t("gen.cap.draws", draws=sweep.draws, best=sweep.best))
    for col, name in zip(st.columns(3), ("train", "val", "new"), strict=True):
        col.metric(t(f"gen.cap.metric.{name}", d=degree), f"{getattr(fit, name):.4f}")
    st.subheader(t("gen.es.title"))
    st.markdown(t("gen.es.intro"))
    v = state.values
    widgets(state, "width", "lr", "patience", "speed")
    config = FitConfig(hidden=(v["width"],) * 2, lr=v["lr"], patience=v["patience"], seed=v["seed"])
    live_section("cap", config, ss["gen.data_key"], data, v["speed"])


def regularization_section(state: PageState) -> None:
    st.markdown(t("gen.reg.intro"))
    data_controls(state)
    data = current_data(state.values)
    v = state.values
    widgets(state, "l2", "l1", "dropout")
    st.latex(t("gen.reg.formula"))  # the L2 term exactly as sim.fitting.fit computes it (l2_penalty)
    st.caption(t("gen.reg.convention"))
    widgets(state, "width", "lr", "speed")
    config = FitConfig(hidden=(v["width"],) * 2, lr=v["lr"], l2=v["l2"], l1=v["l1"], dropout=v["dropout"],
                       seed=v["seed"])
    live_section("reg", config, ss["gen.data_key"], data, v["speed"])
    st.caption(t("gen.reg.note"))


@st.cache_data(max_entries=32, show_spinner=False)
def cached_noisy_points(dataset: str, flip: float, seed: int):
    return noisy_points(dataset, flip, seed)


def label_noise_section(state: PageState) -> None:
    st.markdown(t("gen.noise.intro"))
    v = state.values
    widgets(state, "dataset", "flip", "width", "lr", "speed")
    points = cached_noisy_points(v["dataset"], v["flip"], v["seed"])
    config = FitConfig(task="binary", hidden=(v["width"],) * 2, lr=v["lr"], seed=v["seed"])
    live_section("noise", config, (v["dataset"], v["flip"], v["seed"]), points, v["speed"])
    st.caption(t("gen.noise.note", flipped=int(points.flipped.sum()), n=len(points.y_train)))


# ---------- page ----------
SECTIONS = {"split": split_section, "leakage": leakage_section, "capacity": capacity_section,
            "regularization": regularization_section, "label_noise": label_noise_section}


def main() -> None:
    PageState(PAGE, SCHEMA).sections(t("nav.generalization"), t("gen.intro"), SECTIONS)


main()
