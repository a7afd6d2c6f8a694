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
DATA = ("dataset", "n", "noise", "outliers", "outlier_size", "seed")  # what draws the generated data set
# the controls beside the figure, per solver: what changes its picture most
MAIN = {"closed_form": ("dataset", "degree", "outliers"), "gd": ("dataset", "degree", "lr")}
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


def data_controls(state: PageState, shown: tuple[str, ...]) -> tuple[RegressionData, tuple]:
    """The data in use and a key that changes whenever it does (the data's settings not in `shown`, drawn beside
    the figure already, then New random data and the upload box)."""
    uploaded = ss.get("reg.upload")
    for name in DATA:
        if name not in shown:
            widget(state, name, disabled=uploaded is not None)
    st.button(t("reg.regenerate"), on_click=regenerate, icon=":material/casino:", width="stretch",
              disabled=uploaded is not None)
    uploaded = upload_box("reg", parse_regression_csv,
                          lambda data: t_md("reg.upload_used", n=len(data.y), columns=data.columns),
                          errors="reg.upload")
    if uploaded is not None:
        return uploaded, ("upload", digest(uploaded))
    key = tuple(state.values[k] for k in ("dataset", "n", "noise", "seed", "outliers", "outlier_size"))
    return make_dataset(*key), key


# ---------- model ----------
def model_controls(state: PageState, data: RegressionData, shown: tuple[str, ...]) -> reg.ModelConfig:
    """The model's settings not in `shown` (δ stays live: the outliers view uses it with any loss)."""
    for name in ("degree", "loss", "delta", "standardize"):
        if name not in shown:
            widget(state, name)
    v = state.values
    return reg.ModelConfig(degree=v["degree"], standardize=v["standardize"], loss=v["loss"],
                           delta=v["delta"] * data.scale)


def closed_form_view(data: RegressionData, config: reg.ModelConfig) -> reg.Fit:
    model = reg.fit(data.x, data.y, config)
    if not model.overflow:
        labels = {**data_labels(data), "fit": t("reg.plot.fit"), "truth": t("reg.plot.truth")}
        charts.plotly_chart(st, plots.fit_view(data, model, labels), key="reg.fit_fig")
    st.caption(t(f"reg.method.{'normal' if config.loss == 'mse' else 'irls'}"))
    show_issues(model.issues)
    if not model.overflow:
        metrics_row(data, model)
    return model


# ---------- gradient descent ----------
def gd_config(state: PageState, config: reg.ModelConfig) -> reg.GDConfig:
    v = state.values
    return reg.GDConfig(model=config, lr=v["lr"], batch_size=None if v["batch_size"] == "full" else v["batch_size"],
                        seed=v["seed"])


def lr_advice(run: reg.GDRun) -> None:
    """Where this learning rate sits against the squared loss's limits 1/λ and 2/λ, in the words its kind allows
    (reg.lr_advice: a mini-batch run or a large step on Huber's loss gets the limits, not a forecast)."""
    advice = reg.lr_advice(run)
    args = {"lr": num(run.config.lr), "zigzag": num(advice.zigzag), "diverge": num(advice.diverge),
            "b": run.config.batch_size}
    text = t(f"reg.lr.{advice.kind}", **args)
    if advice.kind == "diverge":
        st.warning(text, icon=":material/trending_up:")
    elif advice.kind == "zigzag":
        st.info(text, icon=":material/swap_vert:")
    else:
        st.caption(text)


def gd_view(state: PageState, data: RegressionData, data_key: tuple,
            config: reg.ModelConfig) -> tuple[reg.Fit, np.ndarray | None, bool]:
    """The live run of the settings (its Play bar above its view, the advice on its learning rate below); returns
    its model at the step shown, its (w, b) path for one weight, and whether it plays (then the model is the step
    of this page run, behind the live view: nothing below may show it)."""
    gd = gd_config(state, config)
    start = reg.GDRun(data.x, data.y, gd)  # the run at w = b = 0: what the advice and the path's background read
    cursor = live_panel(live_spec(data, data_key, gd, state.values["speed"]), data, config, reg.path_background(start))
    lr_advice(start)
    with cursor.model() as run:  # the run at the step shown
        model, path = run.gd.as_fit(), run.gd.path_array() if run.with_path else None
    if not cursor.playing:
        metrics_row(data, model)
    return model, path, cursor.playing


# ---------- page ----------
def controls(state: PageState, side) -> tuple[RegressionData, tuple, reg.ModelConfig]:
    """Beside the figure: the solver and what changes its picture most (the data set, the degree, and the outliers
    or gradient descent's learning rate); the rest under More settings. Returns the data, its key and the model."""
    with side:
        solver = state.widget("solver", fold=False)
        shown = MAIN[solver]
        for name in shown:
            widget(state, name, fold=False, disabled=ss.get("reg.upload") is not None and name in DATA)
        v = state.values
        if v["outliers"] > v["n"] and ss.get("reg.upload") is None:
            st.caption(t("reg.outliers_capped", n=v["n"]))
        with state.more(side):
            data, data_key = data_controls(state, shown)
            config = model_controls(state, data, shown)
            if solver == "gd":
                state.widget("batch_size", format_func=lambda b: t("reg.batch_size.full") if b == "full" else str(b))
                state.widget("speed")
    return data, data_key, config


def main() -> None:
    state = PageState(PAGE, SCHEMA)
    with state.frame(t("reg.title"), t("reg.intro"), t("reg.about")):
        figure, side = state.stage()
        data, data_key, config = controls(state, side)
        path, playing = None, False  # the gradient-descent path, drawn on the loss surface; whether its run plays
        with figure:
            if state.values["solver"] == "closed_form":
                model = closed_form_view(data, config)
            else:
                model, path, playing = gd_view(state, data, data_key, config)
        if not model.overflow:
            # one panel at a time: hidden tabs would still rebuild their figures on every rerun
            panel = state.widget("panel", fold=False, label_visibility="collapsed")
            {"residuals": lambda: residuals_panel(data, model, playing),
             "surface": lambda: surface_panel(data, config, path, playing),
             "outliers": lambda: outliers_panel(data, config),
             "step": lambda: step_panel(state, data, data_key, config)}[panel]()


main()
