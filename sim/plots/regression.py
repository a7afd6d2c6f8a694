"""Pictures of the regression lab: the data with fitted curves, residuals, the loss surface with the
gradient-descent path (Plotly), the live panels, and the LaTeX of one worked update."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from sim.fitting import regression as reg
from sim.fitting.regression_data import RegressionData, truth
from sim.plots.curves import TEST_COLOR, TRAIN_COLOR, WHITE, compact_layout
from sim.plots.palette import GREEN, GUIDE, RED
from sim.plots.panels import series, xy_panel

DATA_COLOR = TEST_COLOR
FIT_COLOR = TRAIN_COLOR
OUTLIER_COLOR = RED
ROBUST_COLOR = GREEN
GUIDE_COLOR = GUIDE
LIVE_POINTS = 400  # the live view draws at most this many points: every frame carries them
# figure heights (px): the page's main fit is the tallest; the views below it are lower or half as wide
FIT_HEIGHT, RESIDUALS_HEIGHT, SURFACE_HEIGHT = 400, 260, 380
# the live view's panels (px): the fit spans the page's figure column, the loss and the path share the row below
# (2 × 330 + their borders and gap: within the figure column of a 1280-px projector, 683 px)
LIVE_FIT, LIVE_HALF = (672, 320), (330, 240)


def _y_window(y: np.ndarray) -> tuple[float, float]:
    """The data's extent with a margin: a curve that runs away leaves the picture instead of squashing it."""
    lo, hi = float(np.min(y)), float(np.max(y))
    pad = 0.25 * (hi - lo) or 1.0
    return lo - pad, hi + pad


def _spread(n: int, most: int) -> np.ndarray:
    """At most `most` evenly spread indices of range(n)."""
    return np.unique(np.linspace(0, n - 1, min(n, most)).round().astype(int)) if n else np.zeros(0, int)


# ---------- Plotly figures ----------
def fit_figure(x: np.ndarray, y: np.ndarray, outlier: np.ndarray, curves: Sequence[dict], labels: dict,
               height: int = FIT_HEIGHT) -> go.Figure:
    """Data points (outliers in red) and curves, each {"x", "y", "name", "color", "dash"}.

    labels: "x", "y", "data", "outlier".
    """
    traces = [go.Scatter(x=x[mask], y=y[mask], mode="markers", name=name,
                         marker={"color": colour, "size": 7, "symbol": symbol, "opacity": 0.8})
              for mask, name, colour, symbol in ((~outlier, labels["data"], DATA_COLOR, "circle"),
                                                 (outlier, labels["outlier"], OUTLIER_COLOR, "x")) if mask.any()]
    traces += [go.Scatter(x=c["x"], y=c["y"], mode="lines", name=c["name"],
                          line={"color": c["color"], "width": 2.5, "dash": c.get("dash", "solid")}) for c in curves]
    fig = go.Figure(traces, layout={"yaxis": {"range": _y_window(y)}})
    return compact_layout(fig, labels["x"], labels["y"], height)


def residual_figure(x: np.ndarray, y_hat: np.ndarray, r: np.ndarray, outlier: np.ndarray, labels: dict) -> go.Figure:
    """Residuals against x and against ŷ, and their histogram, side by side.

    labels: "x", "fitted", "residual", "count", "vs_x", "vs_fit", "hist".
    """
    # three axes laid out by hand: plotly's make_subplots costs ~40 ms, more than the rest of a redraw
    # outliers as a trace of their own: a colour per point costs plotly a validation per point
    data = [go.Scatter(x=along[mask], y=r[mask], xaxis=f"x{axis}", yaxis=f"y{axis}", mode="markers", showlegend=False,
                       marker={"color": colour, "size": 6, "opacity": 0.8})
            for axis, along in (("", x), ("2", y_hat))
            for mask, colour in ((~outlier, DATA_COLOR), (outlier, OUTLIER_COLOR)) if mask.any()]
    data.append(go.Histogram(x=r, xaxis="x3", yaxis="y3", marker_color=DATA_COLOR, showlegend=False))
    layout = {"template": WHITE, "height": RESIDUALS_HEIGHT, "margin": {"l": 55, "r": 10, "t": 35, "b": 45}}
    zero = {"type": "line", "y0": 0, "y1": 0, "x0": 0, "x1": 1, "line": {"color": GUIDE_COLOR, "dash": "dash"}}
    layout["shapes"] = [{**zero, "xref": "x domain", "yref": "y"}, {**zero, "xref": "x2 domain", "yref": "y2"}]
    layout["annotations"] = []
    for i, (title, x_title, y_title) in enumerate(((labels["vs_x"], labels["x"], labels["residual"]),
                                                   (labels["vs_fit"], labels["fitted"], ""),
                                                   (labels["hist"], labels["residual"], labels["count"]))):
        suffix, lo = ("" if i == 0 else str(i + 1)), i * 0.355
        layout[f"xaxis{suffix}"] = {"domain": [lo, lo + 0.29], "anchor": f"y{suffix}", "title": {"text": x_title}}
        layout[f"yaxis{suffix}"] = {"anchor": f"x{suffix}", "title": {"text": y_title}}
        layout["annotations"].append({"text": title, "x": lo + 0.145, "y": 1.0, "xref": "paper", "yref": "paper",
                                      "xanchor": "center", "yanchor": "bottom", "showarrow": False})
    return go.Figure(data=data, layout=layout)


def surface_figure(w_grid: np.ndarray, b_grid: np.ndarray, Z: np.ndarray, path: np.ndarray | None,
                   optimum: tuple[float, float], labels: dict) -> go.Figure:
    """Contours of log10 L over (w, b), the gradient-descent path (rows of (w, b)) and the minimum.

    labels: "w", "b", "loss", "path", "start", "optimum".
    """
    fig = go.Figure(go.Contour(
        x=w_grid, y=b_grid, z=np.log10(np.maximum(Z, 1e-12)), customdata=Z, colorscale="Blues", reversescale=True,
        ncontours=25, contours={"coloring": "heatmap", "showlines": True},
        colorbar={"title": {"text": f"log₁₀ {labels['loss']}", "side": "right"}, "thickness": 12},
        hovertemplate=f"w=%{{x:.3g}}<br>b=%{{y:.3g}}<br>{labels['loss']}=%{{customdata:.4g}}<extra></extra>"))
    if path is not None and len(path):
        fig.add_scatter(x=path[:, 0], y=path[:, 1], mode="lines+markers", name=labels["path"],
                        line={"color": FIT_COLOR, "width": 2}, marker={"size": 4})
        fig.add_scatter(x=path[:1, 0], y=path[:1, 1], mode="markers", name=labels["start"],
                        marker={"color": FIT_COLOR, "size": 11, "symbol": "circle-open", "line": {"width": 2}})
    fig.add_scatter(x=[optimum[0]], y=[optimum[1]], mode="markers", name=labels["optimum"],
                    marker={"color": OUTLIER_COLOR, "size": 14, "symbol": "star"})
    fig.update_xaxes(range=[w_grid[0], w_grid[-1]])
    fig.update_yaxes(range=[b_grid[0], b_grid[-1]])
    return compact_layout(fig, labels["w"], labels["b"], SURFACE_HEIGHT)


def surface_window(optimum: np.ndarray, path: np.ndarray | None, resolution: int = 70) -> tuple[np.ndarray, np.ndarray]:
    """A (w, b) grid around the minimum, the start (0, 0) and the path's points near them; a path that
    runs away is left to leave the picture rather than shrink the valley to a dot."""
    start = np.zeros(2) if path is None else path[0]
    reach = 3 * np.linalg.norm(start - optimum) + 1.0
    points = np.vstack([optimum, start] + ([] if path is None else
                                           [path[np.linalg.norm(path - optimum, axis=1) <= reach]]))
    lo, hi = points.min(axis=0), points.max(axis=0)
    pad = np.maximum((hi - lo) / 3, 0.5)
    return (np.linspace(lo[0] - pad[0], hi[0] + pad[0], resolution),
            np.linspace(lo[1] - pad[1], hi[1] + pad[1], resolution))


# ---------- the page's figures, from the data and the model ----------
def _data_labels(labels: dict) -> dict:
    return {k: labels[k] for k in ("x", "y", "data", "outlier")}


def fit_view(data: RegressionData, model: reg.Fit, labels: dict) -> go.Figure:
    """The data with the model's curve and, for a generated set of one input, the noise-free trend.

    labels: "x", "y", "data", "outlier", "fit", "truth".
    """
    cx, cy = reg.curve(data, model)
    curves = [{"x": cx, "y": cy, "name": labels["fit"], "color": FIT_COLOR}]
    if not data.uploaded and data.x.shape[1] == 1:
        curves.append({"x": cx, "y": truth(data.name, cx), "name": labels["truth"], "color": GUIDE_COLOR,
                       "dash": "dash"})
    return fit_figure(reg.axis(data)[0], data.y, data.outlier, curves, _data_labels(labels))


def residuals_view(data: RegressionData, model: reg.Fit, labels: dict) -> go.Figure:
    """residual_figure of the model's residuals ŷ − y against the (last) input (for the temperature
    example, yesterday) and against ŷ. labels: those of residual_figure."""
    y_hat = model.predict(data.x)
    return residual_figure(data.x[:, -1], y_hat, y_hat - data.y, data.outlier, labels)


def surface_view(data: RegressionData, config: reg.ModelConfig, path: np.ndarray | None, labels: dict) -> go.Figure:
    """surface_figure of the loss of a one-input line over (w, b) around its exact minimum (and the path).

    labels: those of surface_figure.
    """
    X = reg.feature_map(data.x, 1, config.standardize)(data.x)
    w, b = reg.robust_fit(X, data.y, config.loss, config.delta)
    w_grid, b_grid = surface_window(np.array([w[0], b]), path)
    Z = reg.loss_surface(X, data.y, w_grid, b_grid, config.loss, config.delta)
    return surface_figure(w_grid, b_grid, Z, path, (float(w[0]), b), labels)


def outlier_view(data: RegressionData, fits: reg.OutlierFits, labels: dict, height: int = 320) -> go.Figure:
    """The fit with every point (in the loss's colour) and, dotted, the fit without the outliers.

    labels: "x", "y", "data", "outlier", "fit_all", "fit_clean".
    """
    cx, cy = fits.curve
    curves = [{"x": cx, "y": cy, "name": labels["fit_all"], "color": FIT_COLOR if fits.loss == "mse" else ROBUST_COLOR}]
    if fits.clean is not None:
        curves.append({"x": cx, "y": fits.clean, "name": labels["fit_clean"], "color": GUIDE_COLOR, "dash": "dot"})
    return fit_figure(reg.axis(data)[0], data.y, data.outlier, curves, _data_labels(labels), height=height)


def live_frame(frame: dict, data: RegressionData, background: tuple | None, labels: dict, caption: str) -> dict:
    """One animation frame of the live view from a run's frame (reg.gd_frame): its epoch, its caption and its
    panels (live_panels)."""
    return {"epoch": frame["epoch"], "caption": caption, "panels": live_panels(frame, data, background, labels)}


def live_panels(frame: dict, data: RegressionData, background: tuple | None, labels: dict) -> list[dict]:
    """A run's frame (reg.gd_frame) as panels: the curve as it is now, the loss so far and, with a background
    (reg.path_background), the (w, b) path. The fit spans the row; the loss and the path share the one below.

    labels: "x", "y", "epoch", "w", "b", and the titles "fit", "loss", "path".
    """
    cx, cy = frame["curve"]
    panels = [fit_panel(reg.axis(data)[0], data.y, data.outlier, cx, cy,
                        {"title": labels["fit"], "x": labels["x"], "y": labels["y"]}),
              loss_panel(*frame["losses"], {"title": labels["loss"], "epoch": labels["epoch"]},
                         width=LIVE_FIT[0] if background is None else LIVE_HALF[0])]
    if background is not None and frame["path"] is not None:
        contours, optimum = background
        panels.append(path_panel(frame["path"], contours, optimum,
                                 {"title": labels["path"], "w": labels["w"], "b": labels["b"]}))
    return panels


# ---------- live panels (sim.plots.panels) ----------
def fit_panel(x: np.ndarray, y: np.ndarray, outlier: np.ndarray, curve_x: np.ndarray, curve_y: np.ndarray,
              labels: dict, width: int = LIVE_FIT[0]) -> dict:
    """Data (thinned to LIVE_POINTS) and the model's current curve. labels: "title", "x", "y"."""
    keep = _spread(len(x), LIVE_POINTS)
    x, y, outlier = x[keep], y[keep], outlier[keep]
    parts = [series(x[~outlier], y[~outlier], "points", DATA_COLOR, size=2.5),
             series(x[outlier], y[outlier], "points", OUTLIER_COLOR, size=4.0),
             series(curve_x, curve_y, "line", FIT_COLOR, width=2.5)]
    return xy_panel(labels["title"], parts, y_range=_y_window(y), x_label=labels["x"], y_label=labels["y"],
                    width=width, height=LIVE_FIT[1])


def loss_panel(epochs: Sequence[int], history: Sequence[float], labels: dict, width: int = LIVE_HALF[0]) -> dict:
    """Loss against epoch on a log axis (at most 300 points). labels: "title", "epoch"."""
    idx = reg.thin_indices(len(history), reg.LIVE_HISTORY)
    return xy_panel(labels["title"], [series(np.asarray(epochs)[idx], np.asarray(history)[idx], "line", FIT_COLOR)],
                    x_label=labels["epoch"], width=width, height=LIVE_HALF[1], log_y=True)


def path_panel(path: np.ndarray, contours: Sequence[tuple[np.ndarray, np.ndarray]], optimum: tuple[float, float],
               labels: dict, width: int = LIVE_HALF[0]) -> dict:
    """The (w, b) path over the squared loss's contour ellipses; the view is set by the outer ellipse
    (or by the start and the minimum), so a path that overshoots visibly leaves it. labels: "title", "w", "b"."""
    parts = [series(cw, cb, "line", GUIDE_COLOR, width=1.0) for cw, cb in contours]
    idx = reg.thin_indices(len(path), reg.LIVE_HISTORY)
    parts += [series(path[idx, 0], path[idx, 1], "line", FIT_COLOR, width=1.5),
              series(path[idx[-1:], 0], path[idx[-1:], 1], "points", FIT_COLOR, size=3.5),
              series([optimum[0]], [optimum[1]], "points", OUTLIER_COLOR, size=4.5)]
    box = np.vstack([np.column_stack(c) for c in contours] if contours else [path[:1], [optimum]])
    lo, hi = box.min(axis=0), box.max(axis=0)
    pad = np.maximum((hi - lo) * 0.15, 0.25)
    return xy_panel(labels["title"], parts, x_range=(lo[0] - pad[0], hi[0] + pad[0]),
                    y_range=(lo[1] - pad[1], hi[1] + pad[1]), x_label=labels["w"], y_label=labels["b"],
                    width=width, height=LIVE_HALF[1])


# ---------- one update, written out ----------
def _num(v: float) -> str:
    return f"{v:.4g}".replace("e+", "e")


def _paren(v: float) -> str:
    return f"({_num(v)})" if v < 0 else _num(v)


def step_formulas(x: np.ndarray, slopes: np.ndarray, grad: float, before: float, after: float, lr: float,
                  param: str, robust: bool, expand_up_to: int = 4) -> list[str]:
    """LaTeX for one parameter's update: its gradient as an average of ψ(rᵢ)·xᵢ, then the step.

    x is the column that multiplies the parameter (ones for the bias); the sum is written out term by
    term for at most `expand_up_to` points.
    """
    n, r = len(slopes), r"\psi(r_i)" if robust else "r_i"
    bias = param == "b"
    term = r if bias else rf"{r}\,x_i"
    sums = rf"\frac{{1}}{{{n}}}\sum_i {term}"
    if n <= expand_up_to:
        parts = [_paren(s) if bias else rf"{_paren(s)}\cdot{_paren(v)}" for s, v in zip(slopes, x, strict=True)]
        sums += rf" = \frac{{1}}{{{n}}}\left[{' + '.join(parts)}\right]"
    return [rf"\frac{{\partial L}}{{\partial {param}}} = {sums} = {_num(grad)}",
            rf"{param} \leftarrow {param} - \eta\,\frac{{\partial L}}{{\partial {param}}}"
            rf" = {_paren(before)} - {_num(lr)}\cdot{_paren(grad)} = {_num(after)}"]
