"""Figures of the foundations lab: the computational graph of a small network, the training loop's calls, gradient
norms with depth, two vectors, a 2×2 map of the plane, and matrix-product throughput."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sim.plots.palette import ALARM, BLUE, GOOD, GUIDE, INK, NEUTRAL, ORANGE, WHITE, rgba, tint

MARGIN = dict(l=40, r=10, t=40, b=30)
OPS = {"+": "+", "-": "−", "*": "×", "neg": "−x", "tanh": "tanh", "relu": "ReLU", "sigmoid": "σ", "exp": "exp",
       "log": "log"}


# ---------- the computational graph ----------
def graph_layout(parents: Sequence[Sequence[int]]) -> np.ndarray:
    """(x, y) of each node: x its depth (a leaf one column before the first node that reads it), y spread within the
    column and ordered by the mean height of the nodes it connects to, so that edges cross little."""
    n = len(parents)
    depth = [0] * n
    for i, ps in enumerate(parents):  # forward order: parents come first
        depth[i] = 1 + max((depth[p] for p in ps), default=-1)
    readers: list[list[int]] = [[] for _ in range(n)]
    for i, ps in enumerate(parents):
        for p in ps:
            readers[p].append(i)
    for i, ps in enumerate(parents):
        if not ps and readers[i]:
            depth[i] = min(depth[r] for r in readers[i]) - 1
    y = np.arange(n, dtype=float)  # a first guess: forward order
    for _ in range(4):  # a few rounds of the barycentre heuristic, each column re-spread on [0, 1]
        new = y.copy()
        for i in range(n):
            near = list(parents[i]) + readers[i]
            new[i] = np.mean([y[j] for j in near]) if near else y[i]
        for d in set(depth):
            col = sorted((i for i in range(n) if depth[i] == d), key=lambda i: (new[i], i))
            for r, i in enumerate(col):
                new[i] = (r + 0.5) / len(col) * (n / max(1, len(col)) ** 0.5)
        y = new
    for d in set(depth):  # final spread: evenly on [0, 1] per column
        col = sorted((i for i in range(n) if depth[i] == d), key=lambda i: (y[i], i))
        for r, i in enumerate(col):
            y[i] = (r + 1) / (len(col) + 1)
    return np.stack([np.array(depth, dtype=float), y], 1)


def number(v: float | None) -> str:
    return "" if v is None else f"{v:.3g}"


def graph_figure(names: Sequence[str], ops: Sequence[str], parents: Sequence[Sequence[int]],
                 values: Sequence[float | None], grads: Sequence[float | None], current: int | None,
                 edge_notes: dict[tuple[int, int], str], labels: dict) -> go.Figure:
    """Nodes (leaves as squares, operations as circles) with their value and, once known, their gradient; the
    current node ringed in red; edges in grey, those in edge_notes (parent, child) in red with their note (a local
    derivative). labels: "value", "grad"."""
    pos = graph_layout(parents)
    fig = go.Figure()
    ex, ey = [], []
    for c, ps in enumerate(parents):
        for p in ps:
            if (p, c) not in edge_notes:
                ex += [pos[p, 0], pos[c, 0], None]
                ey += [pos[p, 1], pos[c, 1], None]
    fig.add_trace(go.Scatter(x=ex, y=ey, mode="lines", line=dict(color=tint(GUIDE, 0.5), width=1), hoverinfo="skip",
                             showlegend=False))
    for (p, c), note in edge_notes.items():
        fig.add_trace(go.Scatter(x=[pos[p, 0], pos[c, 0]], y=[pos[p, 1], pos[c, 1]], mode="lines",
                                 line=dict(color=ALARM, width=3), hoverinfo="skip", showlegend=False))
        fig.add_annotation(x=(pos[p, 0] + pos[c, 0]) / 2, y=(pos[p, 1] + pos[c, 1]) / 2, text=note, showarrow=False,
                           font=dict(color=ALARM, size=12), bgcolor=rgba(WHITE, 0.85))
    leaf = [not ps for ps in parents]
    colour = [GOOD if g is not None else BLUE if v is not None else tint(NEUTRAL, 0.4)
              for v, g in zip(values, grads, strict=True)]
    text = [f"{name if is_leaf else OPS.get(op, op)}<br>{number(v)}" + (f"<br>∇{number(g)}" if g is not None else "")
            for name, op, is_leaf, v, g in zip(names, ops, leaf, values, grads, strict=True)]
    hover = [f"{name}<br>{labels['value']}: {number(v) or '?'}<br>{labels['grad']}: {number(g) or '?'}"
             for name, v, g in zip(names, values, grads, strict=True)]
    fig.add_trace(go.Scatter(
        x=pos[:, 0], y=pos[:, 1], mode="markers+text", text=text, textposition="middle center",
        textfont=dict(size=10, color=INK), hovertext=hover, hoverinfo="text", showlegend=False,
        marker=dict(size=[34 if is_leaf else 40 for is_leaf in leaf], color=[tint(c, 0.25) for c in colour], opacity=1,
                    symbol=["square" if is_leaf else "circle" for is_leaf in leaf],
                    line=dict(color=[ALARM if i == current else c for i, c in enumerate(colour)],
                              width=[4 if i == current else 1.5 for i in range(len(names))]))))
    height = max(360, 58 * int(max(np.unique(pos[:, 0], return_counts=True)[1])))  # a node's box, and a gap
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=10, b=10), plot_bgcolor=WHITE)
    fig.update_xaxes(visible=False, range=[pos[:, 0].min() - 0.5, pos[:, 0].max() + 0.5])
    fig.update_yaxes(visible=False, range=[0, 1])
    return fig


# ---------- the training loop ----------
def loop_figure(steps: int, runs: dict[str, tuple[np.ndarray, np.ndarray]], labels: dict) -> go.Figure:
    """Left: the loss per step (log scale); right: .grad of the first weight per step; one line per run
    (name -> (loss, grad)). labels: "loss", "grad", "step"."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=[labels["loss"], labels["grad"]], horizontal_spacing=0.1)
    x = np.arange(1, steps + 1)
    for (name, (loss, grad)), colour in zip(runs.items(), (BLUE, ORANGE), strict=False):
        fig.add_trace(go.Scatter(x=x, y=np.maximum(loss, 1e-300), name=name, line=dict(color=colour),
                                 legendgroup=name), row=1, col=1)
        fig.add_trace(go.Scatter(x=x, y=grad, name=name, line=dict(color=colour), legendgroup=name,
                                 showlegend=False), row=1, col=2)
    fig.update_yaxes(type="log", exponentformat="power", row=1, col=1)
    fig.update_xaxes(title_text=labels["step"])
    fig.update_layout(height=340, margin=MARGIN, legend=dict(orientation="h", y=-0.25))
    return fig


def saved_figure(rows: dict[str, int], labels: dict) -> go.Figure:
    """Bytes autograd keeps for backward, per case (name -> bytes). labels: "bytes"."""
    names = list(rows)
    fig = go.Figure(go.Bar(x=[rows[n] for n in names], y=names, orientation="h",
                           marker_color=[ORANGE, BLUE][:len(names)], text=[f"{rows[n]:,}" for n in names],
                           textposition="auto"))
    fig.update_layout(height=180, margin=MARGIN, xaxis_title=labels["bytes"])
    return fig


# ---------- gradient norms with depth ----------
COLOURS = {"sigmoid": ORANGE, "tanh": BLUE, "relu": GOOD}


def depth_figure(back: dict[str, np.ndarray], weight: dict[str, np.ndarray], sweep: dict[str, np.ndarray],
                 depths: Sequence[int], labels: dict) -> go.Figure:
    """Left: per layer l, for each activation, the gradient passed back ‖∂L/∂z_l‖ (solid) and the weights' ‖∂L/∂W_l‖
    (dotted), log scale; right: layer 1's passed-back gradient against depth.
    labels: "per_layer", "by_depth", "layer", "depth", "norm", "back", "weight"."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=[labels["per_layer"], labels["by_depth"]],
                        horizontal_spacing=0.1)
    for name, n in back.items():
        layers = np.arange(1, len(n) + 1)
        fig.add_trace(go.Scatter(x=layers, y=np.maximum(n, 1e-300), name=f"{name} · {labels['back']}",
                                 mode="lines+markers", line=dict(color=COLOURS[name]), legendgroup=name), row=1, col=1)
        fig.add_trace(go.Scatter(x=layers, y=np.maximum(weight[name], 1e-300), name=f"{name} · {labels['weight']}",
                                 mode="lines", line=dict(color=COLOURS[name], dash="dot", width=1.5),
                                 legendgroup=name), row=1, col=1)
        fig.add_trace(go.Scatter(x=list(depths), y=np.maximum(sweep[name], 1e-300), name=name, mode="lines+markers",
                                 line=dict(color=COLOURS[name], dash="dash"), legendgroup=name, showlegend=False),
                      row=1, col=2)
    fig.update_yaxes(type="log", exponentformat="power", title_text=labels["norm"], row=1, col=1)
    fig.update_yaxes(type="log", exponentformat="power", row=1, col=2)
    fig.update_xaxes(title_text=labels["layer"], row=1, col=1)
    fig.update_xaxes(title_text=labels["depth"], row=1, col=2)
    fig.update_layout(height=380, margin=MARGIN, legend=dict(orientation="h", y=-0.25))
    return fig


# ---------- 2×2 maps ----------
def plane_figure(panels: Sequence[tuple[str, list[np.ndarray], np.ndarray]], labels: dict,
                 height: int | None = None) -> go.Figure:
    """One panel per map: (title, its grid lines, its unit square's corners). The untouched grid and square are
    drawn faintly beneath, the basis images e1 → first column, e2 → second column as arrows.
    labels: "before", "after"; height in px (default: 400 for several panels, 420 for one)."""
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=[p[0] for p in panels], horizontal_spacing=0.06)
    reach = 3.5
    for col, (_, lines, square) in enumerate(panels, start=1):
        for line in lines:
            fig.add_trace(go.Scatter(x=line[:, 0], y=line[:, 1], mode="lines", line=dict(color=tint(BLUE, 0.35),
                                     width=1), hoverinfo="skip", showlegend=False), row=1, col=col)
        base = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]], dtype=float)
        fig.add_trace(go.Scatter(x=base[:, 0], y=base[:, 1], mode="lines", line=dict(color=NEUTRAL, dash="dot"),
                                 name=labels["before"], showlegend=col == 1, legendgroup="before"), row=1, col=col)
        fig.add_trace(go.Scatter(x=square[:, 0], y=square[:, 1], mode="lines", fill="toself",
                                 fillcolor=rgba(ORANGE, 0.35), line=dict(color=ORANGE, width=2.5),
                                 name=labels["after"], showlegend=col == 1, legendgroup="after"), row=1, col=col)
        for corner, colour in ((square[1], ALARM), (square[3], GOOD)):  # where e1 and e2 land
            fig.add_trace(go.Scatter(x=[0, corner[0]], y=[0, corner[1]], mode="lines+markers", showlegend=False,
                                     line=dict(color=colour, width=3), marker=dict(size=[0, 9], color=colour),
                                     hoverinfo="skip"), row=1, col=col)
        axis = "" if col == 1 else str(col)
        fig.update_xaxes(range=[-reach, reach], zeroline=True, zerolinecolor=GUIDE, showgrid=False, row=1, col=col)
        fig.update_yaxes(range=[-reach, reach], zeroline=True, zerolinecolor=GUIDE, showgrid=False,
                         scaleanchor=f"x{axis}", scaleratio=1, row=1, col=col)
    fig.update_layout(height=height or (400 if len(panels) > 1 else 420), margin=MARGIN, plot_bgcolor=WHITE,
                      legend=dict(orientation="h", y=-0.1))
    return fig


# ---------- matrix-product throughput ----------
def throughput_figure(rows: Sequence[tuple[str, float, bool]], labels: dict) -> go.Figure:
    """Floating-point operations per second (log scale): (name, FLOP/s, measured here) per row; measured rows in
    blue, published figures in grey. labels: "axis", "measured", "published"."""
    fig = go.Figure()
    for measured, colour, name in ((True, BLUE, labels["measured"]), (False, NEUTRAL, labels["published"])):
        part = [r for r in rows if r[2] == measured]
        if part:
            fig.add_trace(go.Bar(x=[r[1] for r in part], y=[r[0] for r in part], orientation="h", name=name,
                                 marker_color=colour, text=[f"{r[1] / 1e9:,.0f} GFLOP/s" for r in part],
                                 textposition="auto"))
    fig.update_xaxes(type="log", exponentformat="power", title_text=labels["axis"])
    fig.update_layout(height=120 + 40 * len(rows), margin=MARGIN, legend=dict(orientation="h", y=-0.3),
                      yaxis=dict(autorange="reversed"))
    return fig


# ---------- the numbers beside the graph ----------
def term(number: str) -> str:
    """A number written as a term of a formula: bracketed when negative, so that −0.3 squared reads (-0.3)², not
    -0.3² (which is −0.09). The vector pad's JavaScript does the same (labs/foundations/vector_pad.js)."""
    return f"({number})" if number.startswith("-") else number


def forward_formula(name: str, op: str, parents: Sequence[str], values: Sequence[float], value: float) -> str:
    """How node `name` was computed, with the names and then the numbers: "h = tanh(z) = tanh(1.11) = 0.803"."""
    if op in ("+", "-", "*"):
        sym, v = OPS[op], [term(f"{x:.4g}") for x in values]
        return f"{name} = {parents[0]} {sym} {parents[1]} = {v[0]} {sym} {v[1]} = {value:.4g}"
    if op.startswith("**"):
        e = op[2:]
        return f"{name} = ({parents[0]})^{e} = ({values[0]:.4g})^{e} = {value:.4g}"
    if op == "neg":
        return f"{name} = −{parents[0]} = −({values[0]:.4g}) = {value:.4g}"
    f = OPS.get(op, op)
    return f"{name} = {f}({parents[0]}) = {f}({values[0]:.4g}) = {value:.4g}"


def local_formula(op: str, parent_index: int, parent_values: Sequence[float], value: float) -> str:
    """d child / d parent for the op, written with the numbers it is made of."""
    if op == "+":
        return "1"
    if op == "-":
        return "1" if parent_index == 0 else "−1"
    if op == "*":
        return f"{parent_values[1 - parent_index]:.4g}"  # the other factor
    if op.startswith("**"):
        e = float(op[2:])
        return f"{e:g}·({parent_values[0]:.4g})^{e - 1:g}"
    if op == "tanh":
        return f"1 − {term(f'{value:.4g}')}²"
    if op == "sigmoid":
        return f"{value:.4g}·(1 − {value:.4g})"
    if op == "relu":
        return "1" if parent_values[0] > 0 else "0"
    if op == "neg":
        return "−1"
    return "…"


def vector_pad_payload(a, b, k: float, limit: float, step: float, labels: dict, texts: dict) -> dict:
    """What the vector pad (labs/foundations/vector_pad.js) is given: a and b (which the user drags, within ±limit on a
    grid of `step`), the scalar k, its labels ("a", "b", "help") and the page's texts it fills in with the numbers it
    computes as the vectors move ("numbers", "angle", "zero", and "kind": one text per direction)."""
    pair = lambda v: [float(v[0]), float(v[1])]  # noqa: E731
    return {"a": pair(a), "b": pair(b), "k": float(k), "range": limit + 0.5, "limit": limit, "step": step,
            "labels": labels, "texts": texts}
