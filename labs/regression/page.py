"""Regression lab: fit a curve by least squares or by gradient descent (live, or one update written out),
then read the residuals, the loss surface, and what outliers do to squared and Huber losses."""
import random

import streamlit as st

from labs.regression.schema import PAGE, SCHEMA
from labs.regression.views import (
    data_labels,
    metrics_row,
    num,
    outliers_panel,
    param_labels,
    residuals_panel,
    show_issues,
    step_panel,
    surface_panel,
)
from sim.fitting import regression as reg
from sim.fitting.regression_data import RegressionData, make_dataset, parse_regression_csv
from sim.plots import regression as plots
from ui import charts, live_run
from ui.i18n import t, t_md
from ui.live_plots import show_frames
from ui.player import Player
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
        return uploaded, ("upload", id(uploaded))
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
def current_player(state: PageState, data: RegressionData, data_key: tuple, config: reg.ModelConfig) -> Player:
    """The session's run (player.model is its GDRun); a new one from w = b = 0 whenever the data, the model or the
    training changed."""
    v = state.values
    gd = reg.GDConfig(model=config, lr=v["lr"], batch_size=None if v["batch_size"] == "full" else v["batch_size"],
                      seed=v["seed"])

    def build() -> Player:
        run = reg.GDRun(data.x, data.y, gd)
        background = reg.path_background(run)
        # a tick per frame: at speed 1 every epoch is drawn, the early zig-zag of a large learning rate included
        return Player(run.step, lambda: frame(run, data, background), lambda: run.diverged, model=run)

    player = live_run.current_player("reg", (data_key, gd), build)
    player.speed = v["speed"]
    player.step_size = 1  # Step: one epoch
    return player


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


def frame(run: reg.GDRun, data: RegressionData, background: tuple | None) -> dict:
    """One animation frame (in the language of the player's page at the time): panels and caption."""
    labels = {**data_labels(data), **param_labels(run.config.model), "epoch": t("reg.epoch"),
              **{k: t(f"reg.live.{k}") for k in ("fit", "loss", "path")}}
    caption = t("reg.live.caption", epoch=run.epoch, loss=num(run.history[-1]))
    return plots.live_frame(run, data, background, labels, caption)


def live_panel(player: Player) -> None:
    run = player.model

    def messages() -> None:
        if run.diverged:
            st.error(t("reg.diverged", epoch=run.epoch, loss=num(run.history[-1]), start=num(run.start_loss),
                       lr=num(run.config.lr)), icon=":material/error:")

    def show(frames: list[dict], seq: int, status: str) -> None:
        show_frames(frames, key="reg.live", seq=seq, status="diverged" if status == "stopped" else status)

    live_run.live_view("reg", "reg", player, show, lambda: run.diverged, messages=messages)


def gd_view(state: PageState, data: RegressionData, data_key: tuple, config: reg.ModelConfig) -> reg.GDRun:
    with state.controls():
        cols = st.columns(3)
        state.widget("lr", container=cols[0])
        state.widget("batch_size", container=cols[1],
                     format_func=lambda b: t("reg.batch_size.full") if b == "full" else str(b))
        state.widget("speed", container=cols[2])
    player = current_player(state, data, data_key, config)
    lr_advice(player.model)
    live_panel(player)
    if not player.playing:
        with player.lock:
            metrics_row(data, player.model.as_fit())
    return player.model


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
            if state.widget("solver", fold=False, label_visibility="collapsed") == "closed_form":
                model = closed_form_view(data, config)
            else:
                model = gd_view(state, data, data_key, config).as_fit()
        if not model.overflow:
            # one panel at a time: hidden tabs would still rebuild their figures on every rerun
            panel = state.widget("panel", fold=False, label_visibility="collapsed")
            {"residuals": lambda: residuals_panel(data, model), "surface": lambda: surface_panel(data, config),
             "outliers": lambda: outliers_panel(data, config),
             "step": lambda: step_panel(state, data, data_key, config)}[panel]()


main()
