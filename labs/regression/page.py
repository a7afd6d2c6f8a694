"""Regression lab: fit a curve by least squares or by gradient descent (live, or one update written out),
then read the residuals, the loss surface, and what outliers do to squared and Huber losses."""
import hashlib
import random

import numpy as np
import streamlit as st

from labs.regression.live import live_panel, live_spec
from labs.regression.schema import PAGE, SCHEMA
from labs.regression.views import (
    data_labels,
    metrics_row,
    num,
    outliers_panel,
    residuals_panel,
    show_issues,
    step_panel,
    surface_panel,
)
from sim.fitting import regression as reg
from sim.fitting.regression_data import RegressionData, make_dataset, parse_regression_csv
from sim.plots import regression as plots
from ui import charts
from ui.i18n import t, t_md
from ui.upload import upload_box
from ui.urlstate import PageState

WITH_HELP = ("noise", "outlier_size", "degree", "standardize", "delta")  # widgets with a reg.<name>_help tooltip
ss = st.session_state


def widget(state: PageState, name: str, **kw):
    return state.widget(name, help=t(f"reg.{name}_help") if name in WITH_HELP else None, **kw)


# ---------- callbacks ----------
def regenerate() -> None:
    ss["reg.seed"] = random.randrange(1_000_000)


# ---------- data ----------
def digest(data: RegressionData) -> str:
    """An uploaded set's fingerprint: runs are shared by their settings, across sessions, so its values (not the
    object) name it."""
    h = hashlib.sha256()
    for a in (data.x, data.y):
        h.update(str(a.shape).encode())
        h.update(np.ascontiguousarray(a, dtype=float).tobytes())
    return h.hexdigest()


def data_controls(state: PageState) -> tuple[RegressionData, tuple]:
    """The data in use and a key that changes whenever it does."""
    uploaded = ss.get("reg.upload")
    for name in ("dataset", "n", "noise", "outliers", "outlier_size", "seed"):
        widget(state, name, disabled=uploaded is not None)
    st.button(t("reg.regenerate"), on_click=regenerate, icon=":material/casino:", width="stretch",
              disabled=uploaded is not None)
    uploaded = upload_box("reg", parse_regression_csv,
                          lambda data: t_md("reg.upload_used", n=len(data.y), columns=data.columns),
                          errors="reg.upload")
    if uploaded is not None:
        return uploaded, ("upload", digest(uploaded))
    v = state.values
    key = tuple(v[k] for k in ("dataset", "n", "noise", "seed", "outliers", "outlier_size"))
    if v["outliers"] > v["n"]:
        st.caption(t("reg.outliers_capped", n=v["n"]))
    return make_dataset(*key), key


# ---------- model ----------
def model_controls(state: PageState, data: RegressionData) -> reg.ModelConfig:
    cols = st.columns(4, vertical_alignment="bottom")
    for col, name in zip(cols, ("degree", "loss", "delta", "standardize"), strict=True):
        widget(state, name, container=col)  # δ stays live: the outliers view uses it with any loss
    v = state.values
    return reg.ModelConfig(degree=v["degree"], standardize=v["standardize"], loss=v["loss"],
                           delta=v["delta"] * data.scale)


def closed_form_view(data: RegressionData, config: reg.ModelConfig) -> reg.Fit:
    st.caption(t(f"reg.method.{'normal' if config.loss == 'mse' else 'irls'}"))
    model = reg.fit(data.x, data.y, config)
    show_issues(model.issues)
    if model.overflow:
        return model
    labels = {**data_labels(data), "fit": t("reg.plot.fit"), "truth": t("reg.plot.truth")}
    charts.plotly_chart(st, plots.fit_view(data, model, labels), key="reg.fit_fig")
    metrics_row(data, model)
    return model


# ---------- gradient descent ----------
def gd_config(state: PageState, config: reg.ModelConfig) -> reg.GDConfig:
    v = state.values
    return reg.GDConfig(model=config, lr=v["lr"], batch_size=None if v["batch_size"] == "full" else v["batch_size"],
                        seed=v["seed"])


def lr_advice(run: reg.GDRun) -> None:
    """Where this learning rate sits against the squared loss's limits 1/λ and 2/λ."""
    advice = reg.lr_advice(run)
    args = {"lr": num(run.config.lr), "zigzag": num(advice.zigzag), "diverge": num(advice.diverge)}
    if advice.kind == "mae":
        st.caption(t("reg.lr.mae"))
        return
    if advice.kind == "diverge":
        st.warning(t("reg.lr.diverge", **args), icon=":material/trending_up:")
    elif advice.kind == "zigzag":
        st.info(t("reg.lr.zigzag", **args), icon=":material/swap_vert:")
    else:
        st.caption(t("reg.lr.ok", **args))
    if advice.minibatch:
        st.caption(t("reg.lr.minibatch"))


def gd_view(state: PageState, data: RegressionData, data_key: tuple,
            config: reg.ModelConfig) -> tuple[reg.Fit, np.ndarray | None]:
    """The live run of the settings; returns its model at the step shown, and its (w, b) path for one weight."""
    with state.controls():
        cols = st.columns(3)
        state.widget("lr", container=cols[0])
        state.widget("batch_size", container=cols[1],
                     format_func=lambda b: t("reg.batch_size.full") if b == "full" else str(b))
        state.widget("speed", container=cols[2])
    gd = gd_config(state, config)
    start = reg.GDRun(data.x, data.y, gd)  # the run at w = b = 0: what the advice and the path's background read
    lr_advice(start)
    cursor = live_panel(live_spec(data, data_key, gd, state.values["speed"]), data, config, reg.path_background(start))
    with cursor.model() as run:  # the run at the step shown
        model, path = run.gd.as_fit(), run.gd.path_array() if run.with_path else None
    if not cursor.playing:
        metrics_row(data, model)
    return model, path


# ---------- page ----------
def main() -> None:
    state = PageState(PAGE, SCHEMA)
    with state.frame(t("reg.title"), t("reg.intro")):
        left, right = state.columns([1, 3], controls=0, gap="medium")
        with state.controls(left):
            st.subheader(t("reg.data"))
            data, data_key = data_controls(state)
        with right:
            with state.controls():
                config = model_controls(state, data)
            path = None  # the gradient-descent path, drawn on the loss surface
            if state.widget("solver", fold=False, label_visibility="collapsed") == "closed_form":
                model = closed_form_view(data, config)
            else:
                model, path = gd_view(state, data, data_key, config)
        if not model.overflow:
            # one panel at a time: hidden tabs would still rebuild their figures on every rerun
            panel = state.widget("panel", fold=False, label_visibility="collapsed")
            {"residuals": lambda: residuals_panel(data, model), "surface": lambda: surface_panel(data, config, path),
             "outliers": lambda: outliers_panel(data, config),
             "step": lambda: step_panel(state, data, data_key, config)}[panel]()


main()
