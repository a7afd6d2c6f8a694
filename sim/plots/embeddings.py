"""Figures of the embeddings sections: the live view of word vectors learning (their 2-D projection coloured by part
of speech, their cosine matrix, the loss), a retrieval's scores, and the embedding lookup as rows of a table."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sim.plots.palette import AMBER, BLUE, BROWN, GREEN, ORANGE, PURPLE, RED
from sim.plots.panels import heatmap_panel, series, xy_panel

POS_COLOURS = (PURPLE, GREEN, BLUE, ORANGE, BROWN, RED)  # sim.language.embeddings.POS_NAMES, in order
# panel sizes (CSS px): the projection is the largest on every screen. A phone scales a panel wider than itself down
# to its width (the taller shape then draws larger); the presenter view draws them 1.8x and caps their height (the
# wider shape then draws larger); so the others are narrower than a phone, and squarer than the projection
SCATTER, COSINES, LOSS = (430, 340), (300, 300), (300, 250)


def embed_panels(frame: dict, words: Sequence[str], pos: np.ndarray, pos_labels: Sequence[str],
                 labels: dict) -> list[dict]:
    """The projection (one series of points per part of speech, each word written beside its point), the cosine
    matrix with the words ordered by part of speech, and the loss curve. labels: "pca", "pc1", "pc2", "cos", "loss",
    "step" in the page's language."""
    xy = np.asarray(frame["xy"], dtype=float)
    pad = 0.1 * max(float(np.ptp(xy[:, 0])), float(np.ptp(xy[:, 1])), 1e-9)
    points = [series(xy[pos == p, 0], xy[pos == p, 1], kind="points", color=POS_COLOURS[p], size=4,
                     label=pos_labels[p], texts=[w for w, q in zip(words, pos, strict=True) if q == p])
              for p in sorted(set(pos.tolist()))]
    scatter = xy_panel(labels["pca"], points, x_label=labels["pc1"], y_label=labels["pc2"], width=SCATTER[0],
                       height=SCATTER[1], x_range=(xy[:, 0].min() - pad, xy[:, 0].max() + 3 * pad),
                       y_range=(xy[:, 1].min() - pad, xy[:, 1].max() + pad))
    order = np.argsort(pos, kind="stable")
    names = [words[i] for i in order]
    cos = heatmap_panel(labels["cos"], np.asarray(frame["cos"], dtype=float)[np.ix_(order, order)], vmin=-1.0,
                        vmax=1.0, colormap="diverging", row_labels=names, col_labels=names, width=COSINES[0],
                        height=COSINES[1])
    loss = xy_panel(labels["loss"], [series(frame["curve"], frame["loss"], color=AMBER)], x_label=labels["step"],
                    width=LOSS[0], height=LOSS[1])
    return [scatter, cos, loss]


def result_row(position: int, token: int) -> str:
    """The label of a looked-up row: its place in the result counted from 1, and its id (ids count from 0)."""
    return f"{position + 1}: id {token}"


def cells(values: np.ndarray) -> list[list[str]]:
    """A table's values as written in its cells: two decimals (a float32 rounded to 2 places still prints as
    -1.100000023841858, too long for a cell)."""
    return [[f"{v:.2f}" for v in row] for row in np.asarray(values, dtype=float)]


def lookup_figure(table: np.ndarray, ids: Sequence[int], rows: np.ndarray, labels: dict) -> go.Figure:
    """The (V, d) table with the picked rows outlined, and the (T, d) result beside it, every value written."""
    V, d = table.shape
    fig = make_subplots(1, 2, column_widths=[0.6, 0.4], horizontal_spacing=0.12,
                        subplot_titles=(labels["table"], labels["result"]))
    lim = float(np.abs(table).max()) or 1.0
    common = {"colorscale": "RdBu", "zmin": -lim, "zmax": lim, "texttemplate": "%{text}", "showscale": False}
    fig.add_trace(go.Heatmap(z=table, text=cells(table), x=list(range(d)), y=list(range(V)), **common), 1, 1)
    fig.add_trace(go.Heatmap(z=rows, text=cells(rows), x=list(range(d)),
                             y=[result_row(t, i) for t, i in enumerate(ids)], **common), 1, 2)
    for i in sorted(set(ids)):
        fig.add_shape(type="rect", x0=-0.5, x1=d - 0.5, y0=i - 0.5, y1=i + 0.5, line={"color": AMBER, "width": 3},
                      row=1, col=1)
    fig.update_yaxes(autorange="reversed", title_text=labels["id"], dtick=1, row=1, col=1)
    fig.update_yaxes(autorange="reversed", row=1, col=2)
    fig.update_xaxes(title_text=labels["dim"], dtick=1)
    # 17 px a row: the notes' 20-row table (460 px) fits a laptop's first screen beside its controls
    fig.update_layout(height=max(320, 17 * V + 120), margin={"t": 40, "b": 40, "l": 60, "r": 20})
    return fig


def scores_figure(names: Sequence[str], scores: Sequence[float], title: str) -> go.Figure:
    """Horizontal bars: the cosine of the question with each retrieved paragraph, best on top."""
    fig = go.Figure(go.Bar(x=list(scores), y=list(names), orientation="h", marker_color=BLUE,
                           text=[f"{s:.3f}" for s in scores], textposition="auto"))
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(range=[0, 1])
    fig.update_layout(title=title, height=80 + 36 * len(names), margin={"t": 40, "b": 30, "l": 10, "r": 10})
    return fig
