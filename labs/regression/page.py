"""Regression lab: fit a curve by least squares or by gradient descent (live, or one update written out),
then read the residuals, the loss surface, and what outliers do to squared and Huber losses."""
import random

import numpy as np
import streamlit as st

from sim import regression as reg
from sim.plots import regression as plots
from sim.regression_data import RegressionData, make_dataset, parse_regression_csv, truth
from sim.text import html
from sim.upload import MAX_BYTES, UploadError
from ui import live_run
from ui.player import Player
from ui.i18n import t, t_md
from ui.live_plots import show_frames
from labs.regression.schema import PAGE, SCHEMA
from ui.urlstate import PageState

CURVE_POINTS = 200  # points along a fitted 1-D curve
SHOWN_ROWS = 10  # rows of the step-by-step table
NOTES_EXAMPLE = (np.array([[1.0], [2.0]]), np.array([2.0, 3.0]), 0.1)  # the notes' samples and learning rate
WITH_HELP = ("noise", "outlier_size", "degree", "standardize", "delta")  # widgets with a reg.<name>_help tooltip
ss = st.session_state


def num(v: float | None) -> str:
    return "—" if v is None or not np.isfinite(v) else f"{v:.4g}"


def widget(state: PageState, name: str, **kw):
    return state.widget(name, help=t(f"reg.{name}_help") if name in WITH_HELP else None, **kw)


# ---------- callbacks ----------
def regenerate() -> None:
    ss["reg.seed"] = random.randrange(1_000_000)


def clear_upload() -> None:
    ss["reg.upload"] = None


def set_step(w: np.ndarray, b: float, count: int) -> None:
    ss["reg.step_params"] = (w, b, count)


# ---------- data ----------
def upload_box() -> None:
    with st.expander(t("reg.upload")):
        st.caption(t("reg.upload_help"))
        file = st.file_uploader(t("reg.upload_file"), type=["csv", "txt"], key="reg.file",
                                max_upload_size=MAX_BYTES // 2**20)
        if file is not None and ss.get("reg.upload_tag") != file.file_id:
            ss["reg.upload_tag"] = file.file_id
            try:
                ss["reg.upload"] = parse_regression_csv(file.getvalue())
                ss.pop("reg.upload_error", None)
            except UploadError as e:
                ss["reg.upload_error"] = (e.code, e.params)  # the data in use stays as it was
        if ss.get("reg.upload_error"):
            code, params = ss["reg.upload_error"]
            st.error(t_md(f"reg.upload.{code}", **params))
        if ss.get("reg.upload") is not None:
            data = ss["reg.upload"]
            st.success(t_md("reg.upload_used", n=len(data.y), columns=data.columns))
            st.button(t("reg.upload_clear"), on_click=clear_upload)


def data_controls(state: PageState) -> tuple[RegressionData, tuple]:
    """The data in use and a key that changes whenever it does."""
    uploaded = ss.get("reg.upload")
    for name in ("dataset", "n", "noise", "outliers", "outlier_size", "seed"):
        widget(state, name, disabled=uploaded is not None)
    st.button(t("reg.regenerate"), on_click=regenerate, icon=":material/casino:", width="stretch",
              disabled=uploaded is not None)
    upload_box()
    uploaded = ss.get("reg.upload")
    if uploaded is not None:
        return uploaded, ("upload", id(uploaded))
    v = state.values
    key = tuple(v[k] for k in ("dataset", "n", "noise", "seed", "outliers", "outlier_size"))
    if v["outliers"] > v["n"]:
        st.caption(t("reg.outliers_capped", n=v["n"]))
    return make_dataset(*key), key


def column(data: RegressionData, i: int) -> str:
    """Display name of column i (inputs first, then the target), for the figures' labels."""
    name = data.columns[i]
    return html(name, 40) if data.uploaded else t(f"reg.col.{name}")


def axis_x(data: RegressionData) -> tuple[np.ndarray, str]:
    """What the data pictures put along x: the input, or the day (row) for two-input data."""
    if data.x.shape[1] == 1:
        return data.x[:, 0], column(data, 0)
    if data.day is not None:
        return data.day.astype(float), t("reg.col.day")
    return np.arange(1.0, len(data.y) + 1), t("reg.col.row")


def curve(data: RegressionData, model: reg.Fit) -> tuple[np.ndarray, np.ndarray]:
    """The model drawn along axis_x: a smooth curve for one input, its predictions in order otherwise."""
    if data.x.shape[1] == 1:
        grid = np.linspace(data.x.min(), data.x.max(), CURVE_POINTS)
        return grid, model.predict(grid[:, None])
    along, _ = axis_x(data)
    order = np.argsort(along)
    return along[order], model.predict(data.x[order])


def data_labels(data: RegressionData) -> dict:
    return {"x": axis_x(data)[1], "y": column(data, -1), "data": t("reg.plot.data"),
            "outlier": t("reg.plot.outliers")}


# ---------- model ----------
def model_controls(state: PageState, data: RegressionData) -> reg.ModelConfig:
    cols = st.columns(4, vertical_alignment="bottom")
    for col, name in zip(cols, ("degree", "loss", "delta", "standardize")):
        widget(state, name, container=col)  # δ stays live: the outliers view uses it with any loss
    v = state.values
    return reg.ModelConfig(degree=v["degree"], standardize=v["standardize"], loss=v["loss"],
                           delta=v["delta"] * data.scale)


def show_issues(issues: list[tuple[str, dict]]) -> None:
    for code, params in issues:
        (st.error if code == "overflow" else st.warning)(t(f"reg.issue.{code}", **params), icon=":material/warning:")


def metrics_row(data: RegressionData, model: reg.Fit) -> None:
    m = reg.regression_metrics(data.y, model.predict(data.x))
    for col, name in zip(st.columns(4), ("mse", "rmse", "mae", "r2")):
        col.metric(t(f"reg.metric.{name}"), num(m[name]), help=t(f"reg.metric.{name}_help"))
    if data.name == "temperature":  # the notes' rule written by a person: average the two days
        rule = reg.regression_metrics(data.y, data.x.mean(axis=1))
        st.caption(t("reg.temperature_rule", rule=num(rule["rmse"]), fit=num(m["rmse"])))


def closed_form_view(data: RegressionData, config: reg.ModelConfig) -> reg.Fit:
    st.caption(t(f"reg.method.{'normal' if config.loss == 'mse' else 'irls'}"))
    model = reg.fit(data.x, data.y, config)
    show_issues(model.issues)
    if model.issues[:1] == [("overflow", {})]:
        return model
    cx, cy = curve(data, model)
    curves = [{"x": cx, "y": cy, "name": t("reg.plot.fit"), "color": plots.FIT_COLOR}]
    if not data.uploaded and data.x.shape[1] == 1:
        curves.append({"x": cx, "y": truth(data.name, cx), "name": t("reg.plot.truth"), "color": plots.GUIDE_COLOR,
                       "dash": "dash"})
    x, _ = axis_x(data)
    st.plotly_chart(plots.fit_figure(x, data.y, data.outlier, curves, data_labels(data)), key="reg.fit_fig")
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
        background = path_background(run, data, config)
        # a tick per frame: at speed 1 every epoch is drawn, the early zig-zag of a large learning rate included
        return Player(run.step, lambda: frame(run, data, background), lambda: run.diverged, model=run)

    player = live_run.current_player("reg", (data_key, gd), build)
    player.speed = v["speed"]
    player.step_size = 1  # Step: one epoch
    return player


def lr_advice(run: reg.GDRun) -> None:
    """Where this learning rate sits against the squared loss's limits 1/λ and 2/λ."""
    if run.config.model.loss == "mae":
        st.caption(t("reg.lr.mae"))
        return
    zigzag, diverge = reg.lr_limits(run.X)
    lr, args = run.config.lr, {"lr": num(run.config.lr), "zigzag": num(zigzag), "diverge": num(diverge)}
    if lr >= diverge:
        st.warning(t("reg.lr.diverge", **args), icon=":material/trending_up:")
    elif lr >= zigzag:
        st.info(t("reg.lr.zigzag", **args), icon=":material/swap_vert:")
    else:
        st.caption(t("reg.lr.ok", **args))
    if run.config.batch_size and run.config.batch_size < len(run.y):
        st.caption(t("reg.lr.minibatch"))


def two_parameters(data: RegressionData, config: reg.ModelConfig) -> bool:
    """One input, degree 1: the loss is a surface over (w, b) that can be drawn."""
    return data.x.shape[1] == 1 and config.degree == 1


def frame(run: reg.GDRun, data: RegressionData, path_parts: tuple | None) -> dict:
    """One animation frame: the curve as it is now, the loss so far and, for two parameters, the path."""
    model = run.as_fit()
    x, _ = axis_x(data)
    cx, cy = curve(data, model)
    labels = data_labels(data)
    # the fit spans the column; the loss and the path share the row below it
    panels = [plots.fit_panel(x, data.y, data.outlier, cx, cy, {**labels, "title": t("reg.live.fit")}),
              plots.loss_panel(run.epochs, run.history, {"title": t("reg.live.loss"), "epoch": t("reg.epoch")},
                               width=640 if path_parts is None else 314)]
    if path_parts is not None:
        contours, optimum = path_parts
        panels.append(plots.path_panel(np.array(run.path), contours, optimum, param_labels(run.config.model)
                                       | {"title": t("reg.live.path")}))
    caption = t("reg.live.caption", epoch=run.epoch, loss=num(run.history[-1]))
    return {"epoch": run.epoch, "caption": caption, "panels": panels}


def param_labels(config: reg.ModelConfig) -> dict:
    suffix = "_std" if config.standardize else ""
    return {"w": t(f"reg.plot.w{suffix}"), "b": t("reg.plot.b")}


def path_background(run: reg.GDRun, data: RegressionData, config: reg.ModelConfig) -> tuple | None:
    """Contour ellipses (squared loss only) and the minimum, for the (w, b) path panel."""
    if not two_parameters(data, config):
        return None
    w, b = reg.robust_fit(run.X, run.y, config.loss, config.delta)
    levels = run.start_loss * 0.25 ** np.arange(6) if config.loss == "mse" else []
    contours = reg.squared_loss_contours(run.X, run.y, levels) if config.loss == "mse" else []
    return contours, (float(w[0]), b)


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


# ---------- panels below ----------
def residuals_panel(data: RegressionData, model: reg.Fit) -> None:
    y_hat = model.predict(data.x)
    x = data.x[:, -1]  # the (last) input: for the temperature example, yesterday
    labels = {"x": column(data, data.x.shape[1] - 1), **{k: t(f"reg.plot.{k}") for k in
                                                         ("fitted", "residual", "count", "vs_x", "vs_fit", "hist")}}
    st.plotly_chart(plots.residual_figure(x, y_hat, y_hat - data.y, data.outlier, labels), key="reg.resid_fig")
    st.caption(t("reg.residuals_help"))


def surface_panel(data: RegressionData, config: reg.ModelConfig) -> None:
    if not two_parameters(data, config):
        st.info(t("reg.surface_only_two", k=data.x.shape[1] * config.degree + 1))
        return
    features = reg.feature_map(data.x, 1, config.standardize)
    X = features(data.x)
    w, b = reg.robust_fit(X, data.y, config.loss, config.delta)
    player = ss.get("reg.player")
    run = player and player.model
    path = None
    if run is not None and run.config.model == config and len(run.y) == len(data.y) and np.array_equal(run.y, data.y):
        with player.lock:  # a playing run appends to its path (and compacts it) on its own thread
            path = np.array(run.path)
    w_grid, b_grid = plots.surface_window(np.array([w[0], b]), path)
    Z = reg.loss_surface(X, data.y, w_grid, b_grid, config.loss, config.delta)
    labels = {**param_labels(config), "loss": t("reg.plot.loss"), "path": t("reg.plot.path"),
              "start": t("reg.plot.start"), "optimum": t("reg.plot.optimum")}
    st.plotly_chart(plots.surface_figure(w_grid, b_grid, Z, path, (float(w[0]), b), labels), key="reg.surface_fig")
    st.caption(t("reg.surface_help") + ("" if path is not None else " " + t("reg.surface_no_path")))


def outliers_panel(data: RegressionData, config: reg.ModelConfig) -> None:
    st.markdown(t("reg.outliers_intro"))
    if not data.outlier.any():
        st.info(t("reg.outliers_none"))
    x, _ = axis_x(data)
    clean = ~data.outlier
    for col, loss in zip(st.columns(2), ("mse", "huber")):
        cfg = reg.ModelConfig(config.degree, config.standardize, loss, config.delta)
        with_all = reg.fit(data.x, data.y, cfg)
        if with_all.issues[:1] == [("overflow", {})]:
            col.error(t("reg.issue.overflow"))
            continue
        c = curve(data, with_all)
        curves = [{"x": c[0], "y": c[1], "name": t("reg.plot.fit_all"),
                   "color": plots.FIT_COLOR if loss == "mse" else plots.ROBUST_COLOR}]
        if data.outlier.any() and clean.sum() >= 2:
            without = reg.fit(data.x[clean], data.y[clean], cfg)
            cw = curve(data, without)
            curves.append({"x": cw[0], "y": cw[1], "name": t("reg.plot.fit_clean"), "color": plots.GUIDE_COLOR,
                           "dash": "dot"})
            shift = float(np.sqrt(np.mean((c[1] - cw[1]) ** 2)))
            caption = t("reg.outliers_shift", shift=num(shift), unit=num(shift / data.scale))
        else:
            caption = ""
        col.markdown(f"**{t(f'reg.loss.{loss}')}**")
        col.plotly_chart(plots.fit_figure(x, data.y, data.outlier, curves, data_labels(data), height=320),
                         key=f"reg.outlier_fig.{loss}")
        if caption:
            col.caption(caption)
    st.caption(t("reg.outliers_help", delta=num(config.delta)))


def step_source(state: PageState, data: RegressionData, data_key: tuple, config: reg.ModelConfig) -> tuple:
    """(raw inputs, design matrix, targets, lr, loss, δ, key) of the step-by-step view."""
    if state.widget("step_data") == "example":
        x, y, lr = NOTES_EXAMPLE
        return x, x, y, lr, "mse", 1.0, ("example",)
    X = reg.feature_map(data.x, config.degree, config.standardize)(data.x)
    lr = state.values["lr"]
    return data.x, X, data.y, lr, config.loss, config.delta, (data_key, config, lr)


def step_panel(state: PageState, data: RegressionData, data_key: tuple, config: reg.ModelConfig) -> None:
    st.markdown(t("reg.step_intro"))
    x, X, y, lr, loss, delta, key = step_source(state, data, data_key, config)
    if ss.get("reg.step_key") != key or "reg.step_params" not in ss:
        ss["reg.step_key"] = key
        set_step(np.zeros(X.shape[1]), 0.0, 0)
    w, b, count = ss["reg.step_params"]
    s = reg.explain_step(w, b, X, y, lr, loss, delta)
    bar = st.container(horizontal=True)
    bar.button(t("reg.step_next"), on_click=set_step, args=(s.w_new, s.b_new, count + 1), type="primary",
               icon=":material/skip_next:", disabled=not np.isfinite(s.loss_after))
    bar.button(t("reg.step_restart"), on_click=set_step, args=(np.zeros(X.shape[1]), 0.0, 0),
               icon=":material/restart_alt:")
    robust = loss != "mse"
    st.caption(t("reg.step_update", k=count + 1, n=len(y), lr=num(lr), loss=t(f"reg.loss.{loss}")))
    rows = {"i": np.arange(1, min(len(y), SHOWN_ROWS) + 1)}
    rows |= {t("reg.col.input", i=i + 1) if x.shape[1] > 1 else "x": x[:SHOWN_ROWS, i] for i in range(x.shape[1])}
    rows |= {"y": y[:SHOWN_ROWS], "ŷ = Xw + b": s.y_hat[:SHOWN_ROWS], "r = ŷ − y": s.residuals[:SHOWN_ROWS]}
    if robust:
        rows["ψ(r)"] = s.slopes[:SHOWN_ROWS]
    st.dataframe(rows, hide_index=True)
    if len(y) > SHOWN_ROWS:
        st.caption(t("reg.step_rows", shown=SHOWN_ROWS, n=len(y)))
    w_name = "w" if X.shape[1] == 1 else "w_1"
    for line in (plots.step_formulas(X[:, 0], s.slopes, s.grad_w[0], s.w[0], s.w_new[0], lr, w_name, robust)
                 + plots.step_formulas(np.ones(len(y)), s.slopes, s.grad_b, s.b, s.b_new, lr, "b", robust)):
        st.latex(line)
    if X.shape[1] > 1:
        names = [f"w{i + 1}" for i in range(X.shape[1])] + ["b"]
        st.dataframe({t("reg.step_param"): names, t("reg.step_before"): np.append(s.w, s.b),
                      t("reg.step_grad"): np.append(s.grad_w, s.grad_b),
                      t("reg.step_after"): np.append(s.w_new, s.b_new)}, hide_index=True)
    if X.shape != x.shape or not np.array_equal(X, x):
        st.caption(t("reg.step_features"))
    st.caption(t("reg.step_loss", before=num(s.loss_before), after=num(s.loss_after)))
    if not np.isfinite(s.loss_after):
        st.error(t("reg.step_overflow", lr=num(lr)), icon=":material/error:")
    if key == ("example",) and count == 0:
        st.success(t("reg.step_example_done", w=num(s.w_new[0]), b=num(s.b_new)), icon=":material/check:")
    st.caption(t("reg.convention"))


# ---------- page ----------
def main() -> None:
    state = PageState(PAGE, SCHEMA)
    with state.frame(t("reg.title"), t("reg.intro")):
        left, right = st.columns([1, 3], gap="medium")
        with left:
            st.subheader(t("reg.data"))
            data, data_key = data_controls(state)
        with right:
            config = model_controls(state, data)
            if state.widget("solver", label_visibility="collapsed") == "closed_form":
                model = closed_form_view(data, config)
            else:
                model = gd_view(state, data, data_key, config).as_fit()
        if model.issues[:1] != [("overflow", {})]:
            # one panel at a time: hidden tabs would still rebuild their figures on every rerun
            panel = state.widget("panel", label_visibility="collapsed")
            {"residuals": lambda: residuals_panel(data, model), "surface": lambda: surface_panel(data, config),
             "outliers": lambda: outliers_panel(data, config),
             "step": lambda: step_panel(state, data, data_key, config)}[panel]()


main()
