"""Figures of the GPU lab's IO model: bytes against N and against SRAM size, and the roofline.

Every figure is the simulator's (labels["simulated"] in the title): measured figures live in gpu_measure.py.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from sim.gpu.memsim import GpuSpec, Roofline
from sim.gpu.sweeps import SramPoint, SweepPoint
from sim.plots.curves import compact_layout
from sim.plots.palette import BLUE, GREEN, GUIDE, INK, RED, WHITE

NAIVE, TILED, L2 = RED, BLUE, GREEN
HEIGHT = 360


def add_line(fig: go.Figure, x, y, name: str, color: str, dash: str | None = None, symbol: str = "circle",
             mode: str = "lines+markers") -> None:
    """A line (or markers) through the points whose y is not None."""
    pairs = [(a, b) for a, b in zip(x, y, strict=True) if b is not None]
    if pairs:
        xs, ys = zip(*pairs, strict=True)
        fig.add_trace(go.Scatter(x=xs, y=ys, name=name, mode=mode, line=dict(color=color, dash=dash),
                                 marker=dict(symbol=symbol, size=9 if mode == "markers" else 7)))


def _guide(fig: go.Figure, x: list[int], anchor: tuple[int, float], power: int, name: str) -> None:
    """A dotted reference line ∝ x^power through one point of the data (its slope is what matters)."""
    x0, y0 = anchor
    fig.add_trace(go.Scatter(x=x, y=[y0 * (v / x0) ** power for v in x], name=name, mode="lines",
                             line=dict(color=GUIDE, dash="dot", width=1), hoverinfo="skip"))


def log_log(fig: go.Figure, x_title: str, y_title: str, title: str, height: int = HEIGHT) -> go.Figure:
    compact_layout(fig, x_title, y_title, height)
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log", exponentformat="SI")
    fig.update_layout(title=dict(text=title, font=dict(size=14), x=0, y=1, yref="container", yanchor="top",
                                 pad=dict(t=8, l=8)), margin=dict(t=100), legend=dict(y=1.02))
    return fig


def bytes_vs_n_figure(points: list[SweepPoint], labels: dict, height: int = HEIGHT) -> go.Figure:
    """HBM bytes of both algorithms against N (log-log): naive grows as N², tiled as N²/M·d² (∝ N² at fixed M
    too, but hundreds of times lower), and the L2 model's HBM bytes below the two-level line; `height` px tall."""
    fig = go.Figure()
    x = [p.value for p in points]
    add_line(fig, x, [p.naive_hbm for p in points], labels["naive"], NAIVE)
    add_line(fig, x, [p.tiled_hbm for p in points], labels["tiled"], TILED)
    add_line(fig, x, [p.naive_hbm_l2 for p in points], labels["naive_l2"], NAIVE, "dash", "diamond")
    add_line(fig, x, [p.tiled_hbm_l2 for p in points], labels["tiled_l2"], TILED, "dash", "diamond")
    # equal to the two-level tiled reads by construction: open markers, so the line below stays visible
    add_line(fig, x, [p.tiled_l2 for p in points], labels["tiled_l2_traffic"], L2, symbol="square-open", mode="markers")
    _guide(fig, x, (x[-1], points[-1].naive_hbm), 2, labels["n2"])
    _guide(fig, x, (x[0], points[0].naive_hbm), 1, labels["n1"])
    return log_log(fig, labels["x_n"], labels["y_bytes"], labels["title_n"], height)


def bytes_vs_sram_figure(points: list[SramPoint], naive_hbm: int, labels: dict) -> go.Figure:
    """Tiled HBM bytes against SRAM size (log-log), with Algorithm 1's blocks and square blocks, the Θ(N²d²/M)
    law scaled to meet the square blocks' first point, and naive's bytes (independent of M) for scale."""
    fig = go.Figure()
    x = [p.sram_bytes / 1024 for p in points]
    add_line(fig, x, [p.paper_hbm for p in points], labels["paper_blocks"], TILED)
    add_line(fig, x, [p.square_hbm for p in points], labels["square_blocks"], L2, "dash", "square")
    first = next((p for p in points if p.square_hbm), None)
    if first:
        scale = first.square_hbm / first.law
        fig.add_trace(go.Scatter(x=x, y=[p.law * scale for p in points], name=labels["law"], mode="lines",
                                 line=dict(color=GUIDE, dash="dot", width=1), hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=[x[0], x[-1]], y=[naive_hbm, naive_hbm], name=labels["naive"], mode="lines",
                             line=dict(color=NAIVE)))
    return log_log(fig, labels["x_sram"], labels["y_bytes"], labels["title_sram"])


def roofline_figure(spec: GpuSpec, points: dict[str, Roofline], labels: dict, height: int = HEIGHT) -> go.Figure:
    """Attainable FLOP/s against arithmetic intensity for one GPU, and where each pass sits on it; `height` px tall."""
    lo = min([0.1, *(r.intensity / 3 for r in points.values())])
    hi = max([1e4, *(r.intensity * 3 for r in points.values())])
    xs = np.geomspace(lo, hi, 200)
    fig = go.Figure(go.Scatter(x=xs, y=np.minimum(spec.peak_flops, xs * spec.hbm_bytes_per_s), mode="lines",
                               name=labels["roof"], line=dict(color=INK)))
    ridge = spec.peak_flops / spec.hbm_bytes_per_s  # a trace, not a vline: shapes on log axes take log10(x)
    fig.add_trace(go.Scatter(x=[ridge, ridge], y=[lo * spec.hbm_bytes_per_s, spec.peak_flops], mode="lines",
                             name=labels["ridge"].format(ridge=f"{ridge:.0f}"),
                             line=dict(color=GUIDE, dash="dot", width=1)))
    colors = {"naive": NAIVE, "tiled": TILED}
    for name, r in points.items():
        algo, _, level = name.partition("_")
        fig.add_trace(go.Scatter(x=[r.intensity], y=[r.attainable_flops], mode="markers", name=labels[name],
                                 marker=dict(color=colors[algo], size=13, symbol="diamond" if level else "circle",
                                             line=dict(color=WHITE, width=1))))
    return log_log(fig, labels["x_intensity"], labels["y_flops"], labels["title_roofline"], height)
