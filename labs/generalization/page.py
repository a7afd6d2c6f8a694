"""Generalisation lab: splits and cross-validation, leakage, capacity, regularisation, label noise."""
import random

import streamlit as st

from labs.generalization import labels
from labs.generalization.cv_view import cv_view
from labs.generalization.leak_view import leakage_section
from labs.generalization.live import live_section
from labs.generalization.schema import PAGE, SCHEMA
from sim.fitting.claims import capacity_reading, cv_reading
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
DATA = ("n", "noise", "train", "val", "seed")  # what draws and splits the 1-D data
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


def stage_controls(state: PageState, side, shown: tuple[str, ...], more: tuple[str, ...] = (),
                   data: bool = True) -> CurveData | None:
    """Beside the figure: the settings `shown` on view; under More settings the settings `more` and, with `data`,
    the 1-D data's other settings and New random data. With `data`, returns the split data (an impossible split
    says so here, beside its sliders)."""
    with side:
        for name in shown:
            state.widget(name, fold=False)
        if more or data:
            with state.more(side):
                for name in more + tuple(n for n in DATA if data and n not in shown):
                    state.widget(name)
                if data:
                    st.button(t("gen.regenerate"), on_click=regenerate, icon=":material/casino:")
        if not data:
            return None
        test = odd_test_share(state.values["train"], state.values["val"])
        if test is not None:
            st.caption(t("gen.test_outside", test=f"{test:.0%}"))
        return current_data(state.values)


def widgets(state: PageState, *names: str) -> None:
    """One row of the settings `names`."""
    with state.controls():
        for col, name in zip(st.columns(len(names)), names, strict=True):
            state.widget(name, container=col)


# ---------- sections ----------
def split_section(state: PageState) -> None:
    figure, side = state.stage()
    data = stage_controls(state, side, ("train", "val", "n"))
    with figure:
        charts.plotly_chart(st, plots.data_figure(data, labels.parts()), key="gen.split_fig")
    st.markdown(t("gen.split.intro"))
    st.subheader(t("gen.cv.title"))
    st.markdown(t("gen.cv.intro"))
    widgets(state, "k", "degree")
    k, degree = state.values["k"], state.values["degree"]
    folds = cross_validate(data, degree, k, state.values["seed"])
    cv_view(folds, data, k, (ss["gen.data_key"], degree, k))
    mean, std = cv_summary(folds)
    fit = fit_errors(data, degree)
    cols = st.columns(3)
    cols[0].metric(t("gen.cv.mean", k=k), f"{mean:.3f} ± {std:.3f}")
    cols[1].metric(t("gen.cv.holdout"), f"{fit.val:.3f}")
    cols[2].metric(t("gen.cv.new"), f"{fit.new:.3f}")
    closer = cv_reading(mean, fit.val, fit.new)  # which of the two estimates beside it came closer, this time
    st.caption(t("gen.cv.note") + " " + t(f"gen.cv.closer.{closer.case}", cv=f"{closer.cv_miss:.3f}",
                                          holdout=f"{closer.holdout_miss:.3f}"))


@st.cache_data(max_entries=64, show_spinner=False)
def cached_sweep(data_key: tuple):
    return capacity_sweep(*data_key)  # this data set and more drawn like it, averaged


def capacity_section(state: PageState) -> None:
    figure, side = state.stage()
    data = stage_controls(state, side, ("degree", "n", "noise"))
    degree = state.values["degree"]
    sweep = cached_sweep(ss["gen.data_key"])
    fit = fit_errors(data, degree)
    sweep_fig, fit_fig = plots.capacity_figures(data, sweep, fit, degree,
                                                *labels.capacity(sweep, len(data.train), degree))
    with figure:
        charts.plotly_chart(st, sweep_fig, key="gen.sweep_fig")
        st.caption(t("gen.cap.draws", draws=sweep.draws, best=sweep.best, n_val=len(data.val)))
    left, right = st.columns(2, gap="medium")  # the chosen degree's fit, half the page's width
    charts.plotly_chart(left, fit_fig, key="gen.fit_fig")
    with right:
        for col, name in zip(st.columns(3), ("train", "val", "new"), strict=True):
            col.metric(t(f"gen.cap.metric.{name}", d=degree), f"{getattr(fit, name):.4f}")
        shows = capacity_reading(sweep.degrees, sweep.val)  # what the averaged validation curve above does
        st.markdown(t("gen.cap.intro") + " " + t(f"gen.cap.shows.{shows.case}", best=shows.best, low=f"{shows.low:.3g}",
                                                 peak=shows.peak, high=f"{shows.high:.3g}", top=shows.top))
    st.subheader(t("gen.es.title"))
    st.markdown(t("gen.es.intro"))
    v = state.values
    widgets(state, "width", "lr", "patience", "speed")
    config = FitConfig(hidden=(v["width"],) * 2, lr=v["lr"], patience=v["patience"], seed=v["seed"])
    live_section("cap", config, ss["gen.data_key"], data, v["speed"])


def regularization_section(state: PageState) -> None:
    figure, side = state.stage()
    data = stage_controls(state, side, ("l2", "l1", "dropout"), ("width", "lr", "speed"))
    v = state.values
    config = FitConfig(hidden=(v["width"],) * 2, lr=v["lr"], l2=v["l2"], l1=v["l1"], dropout=v["dropout"],
                       seed=v["seed"])
    with figure:
        live_section("reg", config, ss["gen.data_key"], data, v["speed"])
        st.caption(t("gen.reg.note"))
    st.markdown(t("gen.reg.intro"))
    st.latex(t("gen.reg.formula"))  # the L2 term exactly as sim.fitting.fit computes it (l2_penalty)
    st.caption(t("gen.reg.convention"))


@st.cache_data(max_entries=32, show_spinner=False)
def cached_noisy_points(dataset: str, flip: float, seed: int):
    return noisy_points(dataset, flip, seed)


def label_noise_section(state: PageState) -> None:
    figure, side = state.stage()
    stage_controls(state, side, ("flip", "dataset", "width"), ("lr", "speed"), data=False)
    v = state.values
    points = cached_noisy_points(v["dataset"], v["flip"], v["seed"])
    config = FitConfig(task="binary", hidden=(v["width"],) * 2, lr=v["lr"], seed=v["seed"])
    with figure:
        live_section("noise", config, (v["dataset"], v["flip"], v["seed"]), points, v["speed"])
        st.caption(t("gen.noise.note", flipped=int(points.flipped.sum()), n=len(points.y_train)))
    st.markdown(t("gen.noise.intro"))


# ---------- page ----------
SECTIONS = {"split": split_section, "leakage": leakage_section, "capacity": capacity_section,
            "regularization": regularization_section, "label_noise": label_noise_section}


def main() -> None:
    PageState(PAGE, SCHEMA).sections(t("nav.generalization"), t("gen.intro"), SECTIONS, t("gen.about"))


main()
