"""Pictures of the generalisation lab: Plotly figures for the static views, panels for the live ones.

Data and translated labels in, a figure or a panel dict out. Colours: training orange, validation
blue (TensorFlow Playground's pair), test purple, new data grey. The views at the end (data_figure,
capacity_figures, cv_frame, the live frames, leak_figures) are what the page shows, from sim's objects;
a label ending in a template ("caption", "zeros", "fold_title") is filled in here.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sim.core.data import DOMAIN
from sim.fitting.generalization import (
    GRID,
    NOISE_CELLS,
    CurveData,
    FitErrors,
    Fold,
    NoisyPoints,
    Sweep,
    cv_summary,
    true_curve,
)
from sim.fitting.leakage import Leak
from sim.plots.curves import GUIDE_COLOR, TEST_COLOR, TRAIN_COLOR, compact_layout
from sim.plots.palette import BLUE, INK, NEUTRAL, ORANGE, PURPLE, RED, tint
from sim.plots.panels import series, xy_panel

VAL_COLOR = TEST_COLOR
HOLDOUT_COLOR = PURPLE  # the test part: looked at once, at the end
NEW_COLOR = NEUTRAL  # truly new data
FIT_COLOR = INK
PART_COLORS = {"train": TRAIN_COLOR, "val": VAL_COLOR, "test": HOLDOUT_COLOR}
LIGHT = {0: tint(ORANGE, 0.35), 1: tint(BLUE, 0.3)}  # class regions behind the points
CLASS = {0: TRAIN_COLOR, 1: TEST_COLOR}
TOP_DECADES = 3  # the sweep's error axis reaches this many decades above the lowest validation error
TWO_UP = (440, 280)  # panel size (px) when two share the page's width
# the regularisation run's three panels and the label-noise run's two, in the page's figure column: two to a row
# even on a 1280-px projector (683 px), and over 85 % of a phone's width; each as large as the others, so the first
# (the fit, the boundary) stays the largest however a screen scales them
THREE_UP, NOISE_UP = (332, 260), (332, 332)
# the main Plotly figures' heights (px), taller than the figures below them (the chosen degree's fit 340, a leakage
# scenario's picture of one draw 300)
SWEEP_HEIGHT, LEAK_HEIGHT = 380, 340


# ---------- split and cross-validation ----------
def split_figure(x: np.ndarray, y: np.ndarray, parts: dict[str, np.ndarray], grid: np.ndarray, truth: np.ndarray,
                 labels: dict) -> go.Figure:
    """A bar of the train / validation / test shares over a scatter of the points coloured by part.

    labels: "train", "val", "test" (part names), "truth", "x", "y".
    """
    fig = make_subplots(rows=2, cols=1, row_heights=[0.16, 0.84], vertical_spacing=0.08)
    n = sum(len(idx) for idx in parts.values())
    for part, idx in parts.items():
        share = len(idx) / n
        fig.add_trace(go.Bar(
            x=[share], y=[""], orientation="h", name=labels[part], marker_color=PART_COLORS[part],
            text=f"{labels[part]} {share:.0%} · {len(idx)}", textposition="inside", insidetextanchor="middle",
            hovertemplate=f"{labels[part]}: {len(idx)} ({share:.0%})<extra></extra>", showlegend=False), row=1, col=1)
        fig.add_trace(go.Scatter(
            x=x[idx], y=y[idx], mode="markers", name=labels[part], marker=dict(color=PART_COLORS[part], size=8),
            hovertemplate=f"{labels[part]}<br>x=%{{x:.2f}}<br>y=%{{y:.2f}}<extra></extra>"), row=2, col=1)
    fig.add_trace(go.Scatter(x=grid, y=truth, mode="lines", name=labels["truth"],
                             line=dict(color=GUIDE_COLOR, dash="dash"), hoverinfo="skip"), row=2, col=1)
    fig.update_layout(barmode="stack")
    fig.update_xaxes(range=[0, 1], visible=False, row=1, col=1)
    fig.update_yaxes(visible=False, row=1, col=1)
    fig.update_xaxes(title_text=labels["x"], row=2, col=1)
    fig.update_yaxes(title_text=labels["y"], row=2, col=1)
    return compact_layout(fig, "", "", height=380)


def padded_range(values: Sequence[float], pad: float = 0.15) -> tuple[float, float]:
    """The values' extent widened by `pad` of its span at each end (a fixed axis for a moving curve)."""
    lo, hi = float(np.min(values)), float(np.max(values))
    span = hi - lo or 1.0
    return lo - pad * span, hi + pad * span


def cv_panels(x: np.ndarray, y: np.ndarray, fold_train: np.ndarray, fold_val: np.ndarray, test: np.ndarray,
              grid: np.ndarray, fold_pred: np.ndarray, truth: np.ndarray, scores: Sequence[float], k: int,
              labels: dict) -> list[dict]:
    """One CV frame: the fold's points and fitted curve, and the fold scores so far (mean ± std when all are in).

    labels: "fold_title", "scores_title", "x", "fold", "mse", "train", "val", "test", "mean".
    """
    y_range = padded_range(y)
    fit = xy_panel(labels["fold_title"], [
        series(grid, truth, color=GUIDE_COLOR, dash=True, width=1.5),
        series(x[test], y[test], kind="points", color=HOLDOUT_COLOR, size=2.5, label=labels["test"]),
        series(x[fold_train], y[fold_train], kind="points", color=TRAIN_COLOR, size=3.5, label=labels["train"]),
        series(x[fold_val], y[fold_val], kind="points", color=VAL_COLOR, size=5, label=labels["val"]),
        series(grid, fold_pred, color=FIT_COLOR, width=2),
    ], x_range=(grid[0], grid[-1]), y_range=y_range, x_label=labels["x"], width=TWO_UP[0], height=TWO_UP[1])
    folds = np.arange(1, len(scores) + 1)
    lines = [series(folds, scores, kind="points", color=VAL_COLOR, size=5)]
    if len(scores) == k:
        mean, std = float(np.mean(scores)), float(np.std(scores))
        ends = [0.5, k + 0.5]
        lines += [series(ends, [mean, mean], color=FIT_COLOR, label=labels["mean"]),
                  series(ends, [mean - std] * 2, color=GUIDE_COLOR, dash=True, width=1),
                  series(ends, [mean + std] * 2, color=GUIDE_COLOR, dash=True, width=1)]
    top = max(scores) * 1.25 if len(scores) else 1.0
    bars = xy_panel(labels["scores_title"], lines, x_range=(0.5, k + 0.5), y_range=(0, top), x_label=labels["fold"],
                    y_label=labels["mse"], width=TWO_UP[0], height=TWO_UP[1])
    return [fit, bars]


# ---------- capacity ----------
def _vline(x: float, color: str, dash: str, text: str, anchor: str) -> tuple[dict, dict]:
    """A full-height vertical line at x and its label at the bottom, as plain layout dicts.

    (fig.add_vline validates a copy of the whole layout per call: ~40 ms; dicts cost nothing.)
    """
    shape = dict(type="line", x0=x, x1=x, y0=0, y1=1, xref="x", yref="paper", line=dict(color=color, dash=dash))
    note = dict(x=x, y=0, xref="x", yref="paper", text=text, showarrow=False, xanchor=anchor, yanchor="bottom",
                font=dict(size=11, color=color))
    return shape, note


def sweep_figure(degrees: np.ndarray, train: np.ndarray, val: np.ndarray, new: np.ndarray, best: int, chosen: int,
                 interpolating: int | None, labels: dict, band: tuple[np.ndarray, np.ndarray] | None = None,
                 this_val: np.ndarray | None = None) -> go.Figure:
    """Training, validation and new-data error against polynomial degree (log scale), best and chosen marked.

    Left of the best validation degree is shaded as under-fitting, right of it as over-fitting, each only where its
    label is not empty (sim.fitting.claims.capacity_reading says where the sweep shows them). With several
    draws averaged: band (low, high) shades the draws' spread of validation error, this_val is the shown
    data set's own validation error (a thin line).
    labels: "degree", "mse", "train", "val", "new", "best", "chosen", "under", "over", "interpolating"; with a
    band also "band" and "this_val".
    """
    floor = 1e-6  # an interpolating fit has training error ~1e-15: drawn at the bottom of the axis
    spread = []
    if band is not None:
        low, high = (np.maximum(v, floor) for v in band)
        spread = [go.Scatter(x=np.concatenate([degrees, degrees[::-1]]), y=np.concatenate([high, low[::-1]]),
                             fill="toself", fillcolor=VAL_COLOR, opacity=0.15, line=dict(width=0),
                             name=labels["band"], hoverinfo="skip")]
    if this_val is not None:
        spread.append(go.Scatter(x=degrees, y=np.maximum(this_val, floor), mode="lines", name=labels["this_val"],
                                 line=dict(color=VAL_COLOR, width=1, dash="dot"),
                                 hovertemplate=f"{labels['degree']} %{{x}}<br>{labels['this_val']}: %{{y:.4g}}"
                                               "<extra></extra>"))
    traces = [go.Scatter(x=degrees, y=np.maximum(values, floor), mode="lines+markers", name=name,
                         line=dict(color=color, width=2, dash=dash), marker=dict(size=5),
                         hovertemplate=f"{labels['degree']} %{{x}}<br>{name}: %{{y:.4g}}<extra></extra>")
              for values, name, color, dash in ((train, labels["train"], TRAIN_COLOR, None),
                                                (val, labels["val"], VAL_COLOR, None),
                                                (new, labels["new"], NEW_COLOR, "dot"))] + spread
    lo, hi = degrees[0] - 0.5, degrees[-1] + 0.5
    # a region only where the caller's reading of the sweep found it (an empty label: none, e.g. no rise past best)
    regions = [(x0, x1, color, text, x, anchor) for x0, x1, color, text, x, anchor in (
        (lo, best, TRAIN_COLOR, labels["under"], lo, "left"), (best, hi, VAL_COLOR, labels["over"], hi, "right"))
        if text]
    shapes = [dict(type="rect", x0=x0, x1=x1, y0=0, y1=1, xref="x", yref="paper", fillcolor=color, opacity=0.06,
                   line_width=0, layer="below") for x0, x1, color, *_ in regions]
    notes = [dict(x=x, y=1, xref="x", yref="paper", text=text, showarrow=False, xanchor=anchor, yanchor="top",
                  font=dict(size=11, color=GUIDE_COLOR)) for *_, text, x, anchor in regions]
    marks = [_vline(best, VAL_COLOR, "dash", labels["best"], "left")]
    if chosen != best and degrees[0] <= chosen <= degrees[-1]:
        marks.append(_vline(chosen, FIT_COLOR, "dot", labels["chosen"], "right"))
    shapes += [shape for shape, _ in marks]
    notes += [note for _, note in marks]
    if interpolating is not None:
        notes.append(dict(x=interpolating, y=np.log10(floor), xref="x", yref="y", text=labels["interpolating"],
                          showarrow=True, ax=-40, ay=-40, font=dict(size=11)))
    fig = go.Figure(traces, layout=dict(shapes=shapes, annotations=notes))
    # a tick per decade; the top at most TOP_DECADES above the lowest validation error, so the exploding
    # errors of the highest degrees run off the top instead of squashing the U at the bottom
    shown = np.concatenate([np.maximum(v, floor) for v in (train, val, new)])
    top = min(float(shown.max()), 10.0 ** TOP_DECADES * max(float(val.min()), floor))
    fig.update_yaxes(type="log", dtick=1, range=[np.log10(shown.min()) - 0.2, np.log10(top) + 0.2])
    fig.update_xaxes(range=[lo, hi], dtick=1 if len(degrees) <= 12 else 2)
    return compact_layout(fig, labels["degree"], labels["mse"], height=SWEEP_HEIGHT)


def fit_figure(x: np.ndarray, y: np.ndarray, parts: dict[str, np.ndarray], grid: np.ndarray, pred: np.ndarray,
               truth: np.ndarray, labels: dict) -> go.Figure:
    """The points by part, the true curve and one fitted curve (clipped to the data's height).

    labels: "train", "val", "test", "truth", "fit", "x", "y".
    """
    fig = go.Figure()
    for part, idx in parts.items():
        fig.add_trace(go.Scatter(x=x[idx], y=y[idx], mode="markers", name=labels[part],
                                 marker=dict(color=PART_COLORS[part], size=7)))
    fig.add_trace(go.Scatter(x=grid, y=truth, mode="lines", name=labels["truth"],
                             line=dict(color=GUIDE_COLOR, dash="dash"), hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=grid, y=pred, mode="lines", name=labels["fit"], line=dict(color=FIT_COLOR, width=2)))
    fig.update_yaxes(range=list(padded_range(y)))
    return compact_layout(fig, labels["x"], labels["y"], height=340)


# ---------- live training ----------
def fit_panel(x_train: np.ndarray, y_train: np.ndarray, x_val: np.ndarray, y_val: np.ndarray, grid: np.ndarray,
              pred: np.ndarray, truth: np.ndarray, y_range: tuple[float, float], labels: dict,
              size: tuple[int, int] = TWO_UP) -> dict:
    """The network's curve now, over the training and validation points. labels: "title", "train", "val", "x"."""
    return xy_panel(labels["title"], [
        series(grid, truth, color=GUIDE_COLOR, dash=True, width=1.5),
        series(x_train, y_train, kind="points", color=TRAIN_COLOR, size=3.5, label=labels["train"]),
        series(x_val, y_val, kind="points", color=VAL_COLOR, size=4.5, label=labels["val"]),
        series(grid, pred, color=FIT_COLOR, width=2),
    ], x_range=(grid[0], grid[-1]), y_range=y_range, x_label=labels["x"], width=size[0], height=size[1])


def curves_panel(curves: tuple, best_epoch: int | None, labels: dict, log_y: bool = False,
                 y_range: tuple[float, float] | None = None, size: tuple[int, int] = TWO_UP) -> dict:
    """Training and validation curves (epochs, train, val) against epoch, a vertical line at the best epoch.

    labels: "title", "train", "val", "epoch", "best".
    """
    epochs, train, val = curves
    lines = [series(epochs, train, color=TRAIN_COLOR, label=labels["train"]),
             series(epochs, val, color=VAL_COLOR, label=labels["val"])]
    if best_epoch is not None:
        values = np.concatenate([train, val]).astype(float)
        lo, hi = y_range or (float(values.min()), float(values.max()))
        lo = max(lo, 1e-12) if log_y else lo  # a vertical line on a log axis must stay above zero
        lines.append(series([best_epoch, best_epoch], [lo, hi], color=FIT_COLOR, dash=True, width=1.5,
                            label=labels["best"]))
    return xy_panel(labels["title"], lines, x_range=(0, max(int(epochs[-1]), 1)), y_range=y_range,
                    x_label=labels["epoch"], log_y=log_y, width=size[0], height=size[1])


def weights_panel(hist: dict, labels: dict, size: tuple[int, int] = THREE_UP) -> dict:
    """A weight histogram (sim.fitting.generalization.weight_histogram) as a step line; the weights that are
    exactly 0 drawn as a red spike.

    labels: "title", "weight", "zero".
    """
    reach, counts, zeros = hist["reach"], hist["counts"], hist["zeros"]
    edges = np.linspace(-reach, reach, len(counts) + 1)
    step_x = np.repeat(edges, 2)[1:-1]
    step_y = np.repeat(counts, 2)
    top = max(int(counts.max()), zeros, 1)
    return xy_panel(labels["title"], [
        series(step_x, step_y, color=VAL_COLOR, width=1.5),
        series([0, 0], [0, zeros], color=RED, width=3, label=labels["zero"]),
    ], x_range=(-reach, reach), y_range=(0, top * 1.1), x_label=labels["weight"], width=size[0], height=size[1])


def boundary_panel(grid_x: np.ndarray, grid_y: np.ndarray, predicted: np.ndarray, X: np.ndarray, y: np.ndarray,
                   flipped: np.ndarray, reach: float, labels: dict) -> dict:
    """Predicted class behind the training points; points whose label was flipped get a black ring.

    grid_x, grid_y, predicted: flat arrays of the grid cells and their predicted class (0/1).
    labels: "title".
    """
    lines = [series(grid_x[predicted == c], grid_y[predicted == c], kind="points", color=LIGHT[c], size=5.5)
             for c in (0, 1)]
    lines.append(series(X[flipped, 0], X[flipped, 1], kind="points", color=INK, size=5))
    lines += [series(X[y == c, 0], X[y == c, 1], kind="points", color=CLASS[c], size=3) for c in (0, 1)]
    # square, so the plane is not stretched
    return xy_panel(labels["title"], lines, x_range=(-reach, reach), y_range=(-reach, reach), width=NOISE_UP[0],
                    height=NOISE_UP[1])


# ---------- leakage ----------
def leak_figure(leaky: tuple[float, float], honest: tuple[float, float], labels: dict) -> go.Figure:
    """Reported vs new-data accuracy of the leaky and the honest protocol, side by side.

    leaky, honest: (reported, new). labels: "leaky", "honest", "reported", "new", "accuracy", "chance".
    """
    fig = go.Figure()
    protocols = [labels["leaky"], labels["honest"]]
    for i, (name, color) in enumerate(((labels["reported"], VAL_COLOR), (labels["new"], NEW_COLOR))):
        values = [leaky[i], honest[i]]
        fig.add_trace(go.Bar(x=protocols, y=values, name=name, marker_color=color,
                             text=[f"{v:.0%}" for v in values], textposition="outside",
                             hovertemplate=f"%{{x}}<br>{name}: %{{y:.1%}}<extra></extra>"))
    fig.update_layout(barmode="group", bargap=0.3, shapes=[dict(
        type="line", x0=0, x1=1, y0=0.5, y1=0.5, xref="paper", yref="y", line=dict(color=GUIDE_COLOR, dash="dot"))],
        annotations=[dict(x=1, y=0.5, xref="paper", yref="y", text=labels["chance"], showarrow=False, xanchor="right",
                          yanchor="top", font=dict(size=11, color=GUIDE_COLOR))])
    fig.update_yaxes(range=[0, 1.12], tickformat=".0%")
    return compact_layout(fig, "", labels["accuracy"], height=LEAK_HEIGHT)


def spare_features_figure(example: dict, labels: dict) -> go.Figure:
    """Scenario 1: the two spare measurements of training, test and new hospitals.

    labels: "train", "test", "new", "u", "v".
    """
    fig = go.Figure()
    for part, color in (("new", NEW_COLOR), ("train", TRAIN_COLOR), ("test", HOLDOUT_COLOR)):
        pts = example[part]
        fig.add_trace(go.Scatter(x=pts[:, 0], y=pts[:, 1], mode="markers", name=labels[part],
                                 marker=dict(color=color, size=4, opacity=0.6)))
    return compact_layout(fig, labels["u"], labels["v"], height=300)


def records_figure(example: dict, labels: dict, people: int = 16) -> go.Figure:
    """Scenario 2: which records of the first people are tested, under a random and under a group split.

    labels: "random", "group", "person", "record", "train", "test".
    """
    fig = make_subplots(rows=1, cols=2, subplot_titles=[labels["random"], labels["group"]], horizontal_spacing=0.1)
    scale = [[0, TRAIN_COLOR], [1, HOLDOUT_COLOR]]
    for col, key in ((1, "random_test"), (2, "group_test")):
        z = example[key][:people].astype(int)
        fig.add_trace(go.Heatmap(z=z, colorscale=scale, zmin=0, zmax=1, showscale=False, xgap=1, ygap=1,
                                 customdata=np.where(z == 1, labels["test"], labels["train"]),
                                 hovertemplate=f"{labels['person']} %{{y}} · {labels['record']} %{{x}}: "
                                               "%{customdata}<extra></extra>"), row=1, col=col)
        fig.update_xaxes(title_text=labels["record"], row=1, col=col)
    fig.update_yaxes(title_text=labels["person"], autorange="reversed", row=1, col=1)
    fig.update_yaxes(autorange="reversed", row=1, col=2)
    return compact_layout(fig, "", "", height=300)


def timeline_figure(example: dict, labels: dict, days: int = 420) -> go.Figure:
    """Scenario 3: the weather regime over the last days of the pool, with each split's days marked.

    labels: "shuffled", "future", "train", "test", "day", "regime".
    """
    y = example["y"]
    t = np.arange(len(y))[-days:]
    fig = go.Figure(go.Scatter(x=t, y=y[t], mode="lines", line=dict(color=FIT_COLOR, shape="hv", width=1.5),
                               name=labels["regime"]))
    rows = ((example["shuffled_test"], 1.15, labels["shuffled"], "test"),
            (example["future_train"], 1.3, labels["future"], "train"),
            (example["future_test"], 1.3, labels["future"], "test"))
    for mask, height, split_name, part in rows:
        marked = t[mask[t]]
        fig.add_trace(go.Scatter(x=marked, y=np.full(len(marked), height), mode="markers",
                                 name=f"{split_name} · {labels[part]}",
                                 marker=dict(symbol="line-ns-open", size=9, color=PART_COLORS[part])))
    fig.update_yaxes(range=[-0.2, 1.45], tickvals=[0, 1])
    return compact_layout(fig, labels["day"], labels["regime"], height=300)


# ---------- the page's views ----------
def data_figure(data: CurveData, labels: dict) -> go.Figure:
    """The split view: the data's three parts over the true curve (labels: as split_figure)."""
    return split_figure(data.x, data.y, data.parts, GRID, true_curve(GRID), labels)


def capacity_figures(data: CurveData, sweep: Sweep, fit: FitErrors, degree: int, sweep_labels: dict,
                     fit_labels: dict) -> tuple[go.Figure, go.Figure]:
    """The capacity view: the errors against degree with `degree` marked, and that degree's fit over the data."""
    band = None if sweep.val_low is None else (sweep.val_low, sweep.val_high)
    return (sweep_figure(sweep.degrees, sweep.train, sweep.val, sweep.new, sweep.best, degree, sweep.interpolating,
                         sweep_labels, band, sweep.this_val),
            fit_figure(data.x, data.y, data.parts, GRID, fit.predict(GRID), true_curve(GRID), fit_labels))


def cv_frame(data: CurveData, folds: list[Fold], shown: int, labels: dict) -> dict:
    """The folds' animation at fold `shown` (1..k): its points and curve, and the scores of folds 1..shown.

    labels: cv_panels' (its "fold_title" a template of i and k) and "caption" (a template of i, k, score, mean, std).
    """
    k, fold = len(folds), folds[shown - 1]
    mean, std = cv_summary(folds[:shown])
    panel_labels = {**labels, "fold_title": labels["fold_title"].format(i=shown, k=k)}
    caption = labels["caption"].format(i=shown, k=k, score=f"{fold.score:.3f}", mean=f"{mean:.3f}", std=f"{std:.3f}")
    panels = cv_panels(data.x, data.y, fold.train, fold.val, data.test, GRID, fold.predict(GRID), true_curve(GRID),
                       [f.score for f in folds[:shown]], k, panel_labels)
    return {"caption": caption, "panels": panels}


def loss_text(value: float) -> str:
    """A loss as the live captions print it: four significant digits, so a run near zero loss (noise 0) does not
    read 0.0000 at every epoch."""
    return f"{value:#.4g}"


def curve_frame(frame: dict, data: CurveData, labels: dict, extra: list[dict] | None = None,
                caption: str = "") -> dict:
    """A run's frame (sim.fitting.generalization.FitRun, "curve" or "weights") on the 1-D curve: its fit over the
    points and its loss curves (then any extra panels).

    labels: "fit" (fit_panel's), "loss" (curves_panel's), "caption" (a template of epoch, train, val, best, best_val).
    """
    last = frame["last"]
    size = THREE_UP if extra else TWO_UP
    fit = fit_panel(*data.train_val(), GRID, frame["pred"], true_curve(GRID), padded_range(data.y), labels["fit"],
                    size)
    losses = curves_panel(frame["curves"], frame["best_epoch"], labels["loss"], log_y=True, size=size)
    head = labels["caption"].format(epoch=frame["epoch"], train=loss_text(last["train_loss"]),
                                    val=loss_text(last["val_loss"]), best=frame["best_epoch"],
                                    best_val=loss_text(frame["best_val"]))
    return {"epoch": frame["epoch"], "caption": "  ·  ".join(filter(None, [head, caption])),
            "panels": [fit, losses, *(extra or [])]}


def regularization_frame(frame: dict, data: CurveData, labels: dict) -> dict:
    """curve_frame and the weights' histogram, with the count of weights that are exactly 0 in the caption.

    labels: curve_frame's, "weights" (weights_panel's) and "zeros" (a template of z, m).
    """
    hist = frame["weights"]
    zeros = labels["zeros"].format(z=hist["zeros"], m=hist["size"])
    return curve_frame(frame, data, labels, [weights_panel(hist, labels["weights"])], zeros)


def noise_frame(frame: dict, points: NoisyPoints, labels: dict) -> dict:
    """A run's frame (sim.fitting.generalization.FitRun, "boundary") of the label-noise run: its boundary over the
    (partly flipped) training points, its accuracies.

    labels: "boundary" (boundary_panel's), "acc" (curves_panel's), "caption" (a template of epoch, train, val, gap).
    """
    last = frame["last"]
    predicted = np.unpackbits(frame["classes"], count=len(NOISE_CELLS)).astype(int)
    boundary = boundary_panel(NOISE_CELLS[:, 0], NOISE_CELLS[:, 1], predicted, points.X_train, points.y_train,
                              points.flipped, DOMAIN, labels["boundary"])
    acc = curves_panel(frame["curves"], frame["best_epoch"], labels["acc"], y_range=(0.0, 1.0), size=NOISE_UP)
    caption = labels["caption"].format(epoch=frame["epoch"], train=f"{last['train_acc']:.1%}",
                                       val=f"{last['val_acc']:.1%}",
                                       gap=f"{(last['train_acc'] - last['val_acc']) * 100:+.1f}")
    return {"epoch": frame["epoch"], "caption": caption, "panels": [boundary, acc]}


EXAMPLE_FIGURES = {"scaling": spare_features_figure, "group": records_figure, "time": timeline_figure}


def leak_figures(scenario: str, leak: Leak, example_labels: dict, bar_labels: dict) -> tuple[go.Figure, go.Figure]:
    """A leakage scenario's picture of one draw and its bars of both protocols (labels: as those figures)."""
    return (EXAMPLE_FIGURES[scenario](leak.example, example_labels),
            leak_figure((leak.leaky.reported, leak.leaky.new), (leak.honest.reported, leak.honest.new), bar_labels))
