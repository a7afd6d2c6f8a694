"""Evaluation figures: confusion matrix, ROC and precision-recall curves with the current threshold."""

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from sim.plots.curves import GUIDE_COLOR, TEST_COLOR, TRAIN_COLOR, compact_layout
from sim.plots.palette import INK, WHITE

UNIT_RANGE = [-0.02, 1.02]  # rates live on [0, 1]; a little air so the edges stay visible


def confusion_figure(cm: np.ndarray, class_names: Sequence[str], labels: dict) -> go.Figure:
    """Counts as a heatmap, true class down, predicted across. labels: "true", "predicted", "count"."""
    names = list(class_names)
    fig = go.Figure(go.Heatmap(
        z=cm, x=names, y=names, text=cm, texttemplate="%{text}",
        colorscale=[[0, WHITE], [1, TEST_COLOR]], showscale=False,
        hovertemplate=(f"{labels['true']}: %{{y}}<br>{labels['predicted']}: %{{x}}<br>"
                       f"{labels['count']}: %{{z}}<extra></extra>"),
    ))
    compact_layout(fig, labels["predicted"], labels["true"])
    fig.update_xaxes(type="category")
    fig.update_yaxes(type="category", autorange="reversed")  # class 0 in the top row
    return fig


def _score_curve(x: ArrayLike, y: ArrayLike, name: str, shape: str, point: tuple[float, float] | None,
                 x_title: str, y_title: str, threshold_label: str) -> go.Figure:
    """A curve on the unit square, and a marker at the point of the current threshold."""
    hover = f"{x_title}: %{{x:.3f}}<br>{y_title}: %{{y:.3f}}"
    fig = go.Figure(go.Scatter(
        x=np.asarray(x), y=np.asarray(y), mode="lines", name=name,
        line=dict(color=TEST_COLOR, width=2, shape=shape),
        hovertemplate=hover + "<extra></extra>",
    ))
    if point is not None:
        fig.add_trace(go.Scatter(
            x=[point[0]], y=[point[1]], mode="markers", name=threshold_label,
            marker=dict(color=TRAIN_COLOR, size=11, line=dict(color=INK, width=1)),
            hovertemplate=f"{threshold_label}<br>{hover}<extra></extra>",
        ))
    compact_layout(fig, x_title, y_title)
    fig.update_xaxes(range=UNIT_RANGE)
    fig.update_yaxes(range=UNIT_RANGE)
    return fig


def _score_name(metric: str, value: float | None) -> str:
    return metric if value is None else f"{metric} = {value:.3f}"


def roc_figure(fpr: ArrayLike, tpr: ArrayLike, auc_value: float | None, point: tuple[float, float] | None,
               labels: dict) -> go.Figure:
    """ROC curve with its AUC, the chance diagonal and the current (fpr, tpr) point.

    labels: "fpr", "tpr", "chance", "threshold".
    """
    fig = _score_curve(fpr, tpr, _score_name("AUC", auc_value), "linear", point,
                       labels["fpr"], labels["tpr"], labels["threshold"])
    fig.add_trace(go.Scatter(
        x=[0, 1], y=[0, 1], mode="lines", name=labels["chance"], hoverinfo="skip",
        line=dict(color=GUIDE_COLOR, width=1, dash="dash"),
    ))
    return fig


def pr_figure(precision: ArrayLike, recall: ArrayLike, ap: float | None, point: tuple[float, float] | None,
              labels: dict) -> go.Figure:
    """Precision against recall as steps (their area is AP) and the current (recall, precision) point.

    labels: "precision", "recall", "threshold".
    """
    return _score_curve(recall, precision, _score_name("AP", ap), "hv", point,
                        labels["recall"], labels["precision"], labels["threshold"])
