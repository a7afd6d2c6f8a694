"""The regression lab's Streamlit parts below the fit (residuals, loss surface, outliers, one update written
out) and the labels and numbers the page and they share. Every number and figure comes from sim/."""
import math

import numpy as np
import streamlit as st

from sim.core.text import html
from sim.fitting import claims
from sim.fitting import regression as reg
from sim.fitting.regression_data import NOTES_EXAMPLE, RegressionData
from sim.plots import regression as plots
from ui import charts
from ui.i18n import t
from ui.layout import STAGE
from ui.urlstate import PageState

SHOWN_ROWS = 10  # rows of the step-by-step table
ss = st.session_state


def num(v: float | None) -> str:
    return "—" if v is None or not math.isfinite(v) else f"{v:.4g}"


def column(data: RegressionData, i: int) -> str:
    """Display name of column i (inputs first, then the target), for the figures' labels."""
    name = data.columns[i]
    return html(name, 40) if data.uploaded else t(f"reg.col.{name}")


def data_labels(data: RegressionData) -> dict:
    """Labels of a picture of the data: its x (reg.axis), its target, the points and the outliers."""
    kind = reg.axis(data)[1]
    x = column(data, 0) if kind == "input" else t(f"reg.col.{kind}")
    return {"x": x, "y": column(data, -1), "data": t("reg.plot.data"), "outlier": t("reg.plot.outliers")}


def param_labels(config: reg.ModelConfig) -> dict:
    suffix = "_std" if config.standardize else ""
    return {"w": t(f"reg.plot.w{suffix}"), "b": t("reg.plot.b")}


def show_issues(issues: list[tuple[str, dict]]) -> None:
    for code, params in issues:
        (st.error if code == "overflow" else st.warning)(t(f"reg.issue.{code}", **params), icon=":material/warning:")


def metrics_row(data: RegressionData, model: reg.Fit) -> None:
    m = reg.scores(data, model)
    for col, name in zip(st.columns(4), ("mse", "rmse", "mae", "r2"), strict=True):
        col.metric(t(f"reg.metric.{name}"), num(m[name]), help=t(f"reg.metric.{name}_help"))
    rule = reg.rule_scores(data)
    if rule is not None:  # the notes' rule written by a person: average the two days
        verdict = claims.rule_verdict(rule["rmse"], m["rmse"])
        st.caption(t(f"reg.temperature_rule.{verdict}", rule=num(rule["rmse"]), fit=num(m["rmse"])))


# ---------- panels below ----------
def residuals_panel(data: RegressionData, model: reg.Fit, playing: bool = False) -> None:
    """The model's residuals; while a live run plays, a note instead (its model here is the step of this page run,
    behind the live view)."""
    if playing:
        st.caption(t("reg.playing"))
        return
    labels = {"x": column(data, data.x.shape[1] - 1), **{k: t(f"reg.plot.{k}") for k in
                                                         ("fitted", "residual", "count", "vs_x", "vs_fit", "hist")}}
    figure, words = st.columns(STAGE, gap="medium")  # as wide as the fit above it, and lower
    charts.plotly_chart(figure, plots.residuals_view(data, model, labels), key="reg.resid_fig")
    words.caption(t("reg.residuals_help"))


def surface_panel(data: RegressionData, config: reg.ModelConfig, path: np.ndarray | None,
                  playing: bool = False) -> None:
    """The loss over (w, b), with `path` (the gradient-descent run's, at the step shown) drawn on it; while the run
    plays, without it (the live view draws the path as it goes)."""
    k = reg.parameter_count(data.x, config.degree)
    if k != 2:
        st.info(t("reg.surface_only_two", k=k))
        return
    labels = {**param_labels(config), "loss": t("reg.plot.loss"), "path": t("reg.plot.path"),
              "start": t("reg.plot.start"), "optimum": t("reg.plot.optimum")}
    figure, words = st.columns(2, gap="medium")  # half the page's width: smaller than the fit above it
    shown = None if playing else path
    charts.plotly_chart(figure, plots.surface_view(data, config, shown, labels), key="reg.surface_fig")
    note = "reg.surface_playing" if playing else None if path is not None else "reg.surface_no_path"
    words.caption(t("reg.surface_help") + ("" if note is None else " " + t(note)))


def outliers_panel(data: RegressionData, config: reg.ModelConfig) -> None:
    st.markdown(t("reg.outliers_intro"))
    if not data.outlier.any():
        st.info(t("reg.outliers_none"))
    labels = {**data_labels(data), "fit_all": t("reg.plot.fit_all"), "fit_clean": t("reg.plot.fit_clean")}
    shifts = {}
    for col, loss in zip(st.columns(2), ("mse", "huber"), strict=True):
        fits = reg.outlier_fits(data, config, loss)
        if fits.fit.overflow:
            col.error(t("reg.issue.overflow"))
            continue
        col.markdown(f"**{t(f'reg.loss.{loss}')}**")
        charts.plotly_chart(col, plots.outlier_view(data, fits, labels), key=f"reg.outlier_fig.{loss}")
        if fits.shift is not None:
            shifts[loss] = fits.shift
            col.caption(t("reg.outliers_shift", shift=num(fits.shift), unit=num(fits.shift_units)))
    if len(shifts) == 2:  # what these outliers did to the two fits, read off the two shifts shown above
        st.markdown(t(f"reg.outliers_compare.{claims.outlier_verdict(shifts['mse'], shifts['huber'])}",
                      mse=num(shifts["mse"]), huber=num(shifts["huber"])))
    st.caption(t("reg.outliers_help", delta=num(config.delta)))


def set_step(w, b: float, count: int) -> None:
    ss["reg.step_params"] = (w, b, count)


def step_source(state: PageState, data: RegressionData, data_key: tuple, config: reg.ModelConfig) -> tuple:
    """(raw inputs, design matrix, targets, lr, loss, δ, key) of the step-by-step view."""
    if state.widget("step_data") == "example":
        x, y, lr = NOTES_EXAMPLE
        return x, x, y, lr, "mse", 1.0, ("example",)
    lr = state.values["lr"]
    return data.x, reg.design_matrix(data.x, config), data.y, lr, config.loss, config.delta, (data_key, config, lr)


def step_panel(state: PageState, data: RegressionData, data_key: tuple, config: reg.ModelConfig) -> None:
    st.markdown(t("reg.step_intro"))
    x, X, y, lr, loss, delta, key = step_source(state, data, data_key, config)
    k, n = X.shape[1], len(y)
    if ss.get("reg.step_key") != key or "reg.step_params" not in ss:
        ss["reg.step_key"] = key
        set_step([0.0] * k, 0.0, 0)
    w, b, count = ss["reg.step_params"]
    s = reg.explain_step(w, b, X, y, lr, loss, delta)
    bar = st.container(horizontal=True)
    bar.button(t("reg.step_next"), on_click=set_step, args=(s.w_new, s.b_new, count + 1), type="primary",
               icon=":material/skip_next:", disabled=not math.isfinite(s.loss_after))
    bar.button(t("reg.step_restart"), on_click=set_step, args=([0.0] * k, 0.0, 0), icon=":material/restart_alt:")
    robust = loss != "mse"
    st.caption(t("reg.step_update", k=count + 1, n=n, lr=num(lr), loss=t(f"reg.loss.{loss}")))
    rows = {"i": list(range(1, min(n, SHOWN_ROWS) + 1))}
    rows |= {t("reg.col.input", i=i + 1) if x.shape[1] > 1 else "x": x[:SHOWN_ROWS, i] for i in range(x.shape[1])}
    rows |= {"y": y[:SHOWN_ROWS], "ŷ = Xw + b": s.y_hat[:SHOWN_ROWS], "r = ŷ − y": s.residuals[:SHOWN_ROWS]}
    if robust:
        rows["ψ(r)"] = s.slopes[:SHOWN_ROWS]
    st.dataframe(rows, hide_index=True)
    if n > SHOWN_ROWS:
        st.caption(t("reg.step_rows", shown=SHOWN_ROWS, n=n))
    for line in (plots.step_formulas(X[:, 0], s.slopes, s.grad_w[0], s.w[0], s.w_new[0], lr, "w" if k == 1 else "w_1",
                                     robust)
                 + plots.step_formulas([1.0] * n, s.slopes, s.grad_b, s.b, s.b_new, lr, "b", robust)):
        st.latex(line)
    if k > 1:
        st.dataframe({t("reg.step_param"): [f"w{i + 1}" for i in range(k)] + ["b"],
                      t("reg.step_before"): [*s.w, s.b], t("reg.step_grad"): [*s.grad_w, s.grad_b],
                      t("reg.step_after"): [*s.w_new, s.b_new]}, hide_index=True)
    if key != ("example",) and not config.inputs_as_is:
        st.caption(t("reg.step_features"))
    st.caption(t("reg.step_loss", before=num(s.loss_before), after=num(s.loss_after)))
    if not math.isfinite(s.loss_before):  # the features themselves overflow: no step is to blame
        st.error(t("reg.issue.overflow"), icon=":material/error:")
    elif not math.isfinite(s.loss_after):
        st.error(t("reg.step_overflow", lr=num(lr)), icon=":material/error:")
    if key == ("example",) and count == 0:
        st.success(t("reg.step_example_done", w=num(s.w_new[0]), b=num(s.b_new)), icon=":material/check:")
    if key == ("example",):
        example_conventions(x, y, lr)
    st.caption(t("reg.convention"))


def example_conventions(x, y, lr: float) -> None:
    """The notes' example's first step under the loss it implies and under the notes' own definition."""
    steps = reg.squared_loss_conventions([0.0], 0.0, x, y, lr)
    st.markdown(t("reg.conv.intro"))
    rows = {t("reg.conv.quantity"): [t(f"reg.conv.{k}") for k in ("loss", "grad_w", "grad_b", "w", "b")]}
    rows |= {t(f"reg.conv.{name}"): [num(c.loss), num(c.grad_w[0]), num(c.grad_b), num(c.w_new[0]), num(c.b_new)]
             for name, c in steps.items()}
    st.dataframe(rows, hide_index=True)
