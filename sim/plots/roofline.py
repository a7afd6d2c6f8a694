"""Figures of the foundations lab's CPU-against-GPU part: matrix-product throughput against size, the roofline with
its two measured roofs and the measured operations placed on it, and the published GPUs' rooflines (all log-log)."""
from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go

from sim.plots.palette import BLUE, GOOD, INK, NEUTRAL, ORANGE, WHITE, rgba

MARGIN = dict(l=50, r=10, t=30, b=40)
SERIES = (ORANGE, BLUE, NEUTRAL)  # 1 thread, all threads (GOOD: the element-wise operation)
# a roofline's legend in its empty top-left corner (the roof rises from the bottom left): below the plot it would meet
# the axis title once the presenter view enlarges the type
CORNER = dict(x=0.01, y=0.99, xanchor="left", yanchor="top", bgcolor=rgba(WHITE, 0.8))


def sweep_figure(series: Sequence[tuple[str, Sequence[int], Sequence[float]]], labels: dict) -> go.Figure:
    """GFLOP/s against n for each series (name, sizes n, GFLOP/s). labels: "x", "y"."""
    fig = go.Figure()
    for (name, sizes, gflops), colour in zip(series, SERIES, strict=False):
        fig.add_trace(go.Scatter(x=list(sizes), y=list(gflops), mode="lines+markers", name=name,
                                 line=dict(color=colour, width=2.5), marker=dict(size=8),
                                 hovertemplate="n = %{x}<br>%{y:.3g} GFLOP/s<extra>" + name + "</extra>"))
    fig.update_xaxes(type="log", title_text=labels["x"], tickvals=[s for _, sizes, _ in series[:1] for s in sizes])
    fig.update_yaxes(type="log", title_text=labels["y"])
    fig.update_layout(height=360, margin=MARGIN, legend=dict(orientation="h", y=-0.25))
    return fig


def roofline_figure(roof: tuple[Sequence[float], Sequence[float]], ridge: float,
                    products: Sequence[tuple[str, Sequence[float], Sequence[float], Sequence[str]]],
                    elementwise: tuple[str, Sequence[float], Sequence[float], Sequence[str]],
                    labels: dict) -> go.Figure:
    """The roofline (log-log): `roof` = (intensities, attainable FLOP/s) drawn as the roof, a dotted line at the
    ridge, and the measured operations as markers, plotted in GFLOP/s: the matrix products, one group per thread
    count (coloured as in sweep_figure), and the element-wise operation; each group (name, intensities, FLOP/s, hover
    texts). labels: "x", "y", "roof", "ridge"."""
    fig = go.Figure()
    xs, ys = roof
    fig.add_trace(go.Scatter(x=list(xs), y=[y / 1e9 for y in ys], mode="lines", name=labels["roof"],
                             line=dict(color=INK, width=3), hoverinfo="skip"))
    fig.add_vline(x=ridge, line=dict(color=NEUTRAL, dash="dot"))
    # an annotation on a log axis is placed at log10 of its x (a shape is not): at the ridge itself, not at 10^ridge
    fig.add_annotation(x=math.log10(ridge), y=1, yref="paper", text=labels["ridge"], showarrow=False,
                       xanchor="right", yanchor="top")
    groups = [*zip(products, SERIES, strict=False), (elementwise, GOOD)]
    for (name, x, y, text), colour in groups:
        fig.add_trace(go.Scatter(x=list(x), y=[v / 1e9 for v in y], mode="markers", name=name, text=list(text),
                                 marker=dict(color=colour, size=11, line=dict(color="white", width=1)),
                                 hovertemplate="%{text}<br>%{x:.3g} FLOP/B · %{y:.3g} GFLOP/s<extra></extra>"))
    fig.update_xaxes(type="log", title_text=labels["x"])
    fig.update_yaxes(type="log", title_text=labels["y"])
    fig.update_layout(height=420, margin=MARGIN, legend=CORNER)
    return fig


def published_roofs_figure(roofs: Sequence[tuple[str, tuple[Sequence[float], Sequence[float]], float]],
                           labels: dict) -> go.Figure:
    """One published roofline per device (log-log), plotted in TFLOP/s: (name, (intensities, attainable FLOP/s), its
    ridge), each ridge marked where its two roofs meet. labels: "x", "y", "ridge"."""
    fig = go.Figure()
    for (name, (xs, ys), ridge), colour in zip(roofs, (ORANGE, BLUE, GOOD, NEUTRAL, INK), strict=False):
        fig.add_trace(go.Scatter(x=list(xs), y=[y / 1e12 for y in ys], mode="lines", name=name, legendgroup=name,
                                 line=dict(color=colour, width=2.5),
                                 hovertemplate="%{x:.3g} FLOP/B · %{y:.4g} TFLOP/s<extra>" + name + "</extra>"))
        fig.add_trace(go.Scatter(x=[ridge], y=[max(ys) / 1e12], mode="markers", legendgroup=name, showlegend=False,
                                 marker=dict(color=colour, size=10, line=dict(color="white", width=1)),
                                 hovertemplate=f"{labels['ridge']}: %{{x:.3g}} FLOP/B<extra>{name}</extra>"))
    fig.update_xaxes(type="log", title_text=labels["x"])
    fig.update_yaxes(type="log", title_text=labels["y"])
    fig.update_layout(height=380, margin=MARGIN, legend=CORNER)
    return fig
