"""Figures of the sequence-models lab: the live frame of the memory race (loss, accuracy, accuracy against distance),
‖∂L/∂h_t‖ through time, the LSTM's gates, sparse-attention masks with their cost and reach, a selective scan
written out, Mamba's state against a KV cache, and the forms timed against length."""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sim.plots.palette import BLUE, GREEN, GUIDE, ORANGE, PURPLE, RED, WHITE
from sim.plots.panels import series, xy_panel

MODEL_COLORS = {"rnn": ORANGE, "lstm": BLUE, "attn": GREEN, "mamba": PURPLE, "window": RED, "bert": BLUE,
                "gpt": ORANGE}
PATTERN_COLORS = (BLUE, ORANGE, GREEN, PURPLE, RED)
MARGIN = dict(l=50, r=10, t=40, b=40)


def _parenthesis_below(name: str) -> str:
    """"Longformer (window + global)" written on two lines: titles side by side fit a narrow column."""
    return re.sub(r"\s*([（(])", r"<br>\1", name, count=1)


# ---------- the live memory race ----------
def memory_frame(runs: Sequence[dict], distance: int, chance: float, labels: Mapping[str, str],
                 guide: tuple[int, str] | None = None) -> dict:
    """The live view of the race: runs are {"kind", "name", "curve" (steps), "loss", "acc", "by_distance" (D,),
    "reach"}. Panels: the accuracy at each distance 1..D (chance dashed), then the loss curves and the moving
    accuracy. labels: "step", "loss", "accuracy", "distance", "loss_title", "acc_title", "dist_title", "chance",
    "caption" ({step}), "reach" ({name} {reach}). guide (x, label): a dashed vertical line at distance x on the first
    panel."""
    def colour(r: dict) -> str:
        return MODEL_COLORS.get(r["kind"], GUIDE)

    ds = np.arange(1, distance + 1)
    lines = [series(ds, r["by_distance"], color=colour(r), label=r["name"]) for r in runs]
    lines.append(series([1, distance], [chance, chance], color=GUIDE, width=1.0, label=labels["chance"], dash=True))
    if guide is not None:
        lines.append(series([guide[0], guide[0]], [0.0, 1.0], color=RED, width=1.0, label=guide[1], dash=True))
    # accuracy by distance is the race's figure: first (a narrow screen wraps the others below it), wider and taller
    # than the others, which are narrower than a phone, so it stays the largest where a phone narrows it to its width
    # and where the presenter view caps every panel's height
    by_d = xy_panel(labels["dist_title"], lines, x_label=labels["distance"], y_label=labels["accuracy"], width=460,
                    height=340, x_range=(1, max(distance, 2)), y_range=(0.0, 1.0))
    loss = xy_panel(labels["loss_title"], [series(r["curve"], r["loss"], color=colour(r), label=r["name"])
                                           for r in runs], x_label=labels["step"], y_label=labels["loss"],
                    width=300, height=240)
    acc = xy_panel(labels["acc_title"], [series(r["curve"], r["acc"], color=colour(r), label=r["name"])
                                         for r in runs], x_label=labels["step"], y_label=labels["accuracy"],
                   width=300, height=240, y_range=(0.0, 1.0))
    steps = max((int(r["curve"][-1]) for r in runs if len(r["curve"])), default=0)
    parts = [labels["reach"].format(name=r["name"], reach=r["reach"]) for r in runs]
    return {"epoch": steps, "caption": " · ".join([labels["caption"].format(step=steps), *parts]),
            "panels": [by_d, loss, acc]}


def encdec_frame(runs: Sequence[dict], labels: Mapping[str, str]) -> dict:
    """The live view of encoder against decoder: runs are {"kind", "name", "curve" (steps), "loss", "recent"}; one
    panel of the training losses (each its own task's). labels: "step", "loss", "loss_title", "caption" ({step})."""
    panel = xy_panel(labels["loss_title"], [series(r["curve"], r["loss"], color=MODEL_COLORS.get(r["kind"], GUIDE),
                                                   label=r["name"]) for r in runs],
                     x_label=labels["step"], y_label=labels["loss"], width=560, height=400)  # the section's figure
    steps = max((int(r["curve"][-1]) for r in runs if len(r["curve"])), default=0)
    return {"epoch": steps, "caption": labels["caption"].format(step=steps), "panels": [panel]}


# ---------- why: gradients through time ----------
def gradient_figure(grads: Mapping[str, tuple[str, np.ndarray]], key_at: int, labels: Mapping[str, str]) -> go.Figure:
    """‖∂L/∂h_t‖ against position t, log scale, one line per model: grads kind -> (name, (T,) norms); key_at: the
    key's position. labels: "title", "position", "norm", "key"."""
    fig = go.Figure()
    for kind, (name, g) in grads.items():
        g = np.asarray(g, dtype=float)
        fig.add_trace(go.Scatter(x=np.arange(len(g)), y=np.where(g > 0, g, np.nan), name=name, mode="lines+markers",
                                 marker=dict(size=4), line=dict(color=MODEL_COLORS.get(kind, GUIDE))))
    fig.add_vline(x=key_at, line=dict(color=RED, dash="dash"), annotation_text=labels["key"])
    fig.update_layout(title=labels["title"], height=440, margin=MARGIN, xaxis_title=labels["position"],
                      yaxis_title=labels["norm"], yaxis_type="log", legend=dict(orientation="h", y=-0.2))
    return fig


def gates_figure(gates: Mapping[str, np.ndarray], key_at: int, labels: Mapping[str, str]) -> go.Figure:
    """The LSTM's gates and cell state for one sequence: each (T, H) as a heatmap, units (rows) against position, two
    to a row when there are more than two (so the figure stays shorter than the gradients above it); gates from 0 to
    1, the cell state diverging around 0. labels: "<gate name>" for each, "position", "unit", "key"."""
    names = list(gates)
    cols = 2 if len(names) > 2 else 1
    rows = -(-len(names) // cols)
    fig = make_subplots(rows=rows, cols=cols, shared_xaxes=True, vertical_spacing=0.16, horizontal_spacing=0.08,
                        subplot_titles=[_parenthesis_below(labels[n]) if cols > 1 else labels[n] for n in names])
    for i, n in enumerate(names):
        row, col = i // cols + 1, i % cols + 1
        z = np.asarray(gates[n], dtype=float).T  # (H, T)
        if n == "cell":
            span = float(np.abs(z).max()) or 1.0
            kw = dict(zmin=-span, zmax=span, colorscale="RdBu", zmid=0)
        else:
            kw = dict(zmin=0.0, zmax=1.0, colorscale="Viridis")
        fig.add_trace(go.Heatmap(z=z, showscale=i == 0, hovertemplate=f"{labels['position']} %{{x}} · "
                                 f"{labels['unit']} %{{y}}: %{{z:.2f}}<extra></extra>", **kw), row=row, col=col)
        fig.add_vline(x=key_at, line=dict(color=RED, dash="dash"), row=row, col=col)
        if col == 1:
            fig.update_yaxes(title_text=labels["unit"], row=row, col=col)
        if row == rows:
            fig.update_xaxes(title_text=labels["position"], row=row, col=col)
    fig.update_layout(height=170 * rows + 60, margin=MARGIN | dict(t=60))
    return fig


# ---------- sparse attention ----------
def masks_figure(masks: Mapping[str, np.ndarray], labels: Mapping[str, str], height: int = 340) -> go.Figure:
    """Each pattern's (T, T) mask side by side (query rows, key columns; dark = a score computed), its share of T² in
    the title. labels: "<pattern>" names, "share" ({share}), "query", "key". height: taller than the share and reach
    figures (300), which a phone draws at the same width."""
    names = list(masks)
    fig = make_subplots(rows=1, cols=len(names), horizontal_spacing=0.03, subplot_titles=[
        f"{_parenthesis_below(labels[n])}<br>{labels['share'].format(share=f'{masks[n].mean():.1%}')}"
        for n in names])
    for col, n in enumerate(names, start=1):
        fig.add_trace(go.Heatmap(z=masks[n].astype(np.uint8), zmin=0, zmax=1, showscale=False,
                                 colorscale=[[0, WHITE], [1, BLUE]],
                                 hovertemplate=f"{labels['query']} %{{y}} · {labels['key']} %{{x}}<extra></extra>"),
                      row=1, col=col)
        fig.update_yaxes(autorange="reversed", scaleanchor=f"x{col if col > 1 else ''}", showticklabels=col == 1,
                         row=1, col=col)
    fig.update_yaxes(title_text=labels["query"], row=1, col=1)
    fig.update_layout(height=height, margin=dict(l=50, r=20, t=85, b=30))
    fig.update_annotations(font_size=12)  # the titles: five side by side in the stage's column
    return fig



def share_figure(lengths: Sequence[int], shares: Mapping[str, Sequence[float]], labels: Mapping[str, str]) -> go.Figure:
    """The share of the T² scores each pattern computes, against T (log–log: full attention stays at 1, a window
    falls as 1/T). labels: "<pattern>", "title", "length", "share_axis"."""
    fig = go.Figure()
    for (n, s), c in zip(shares.items(), PATTERN_COLORS, strict=False):
        fig.add_trace(go.Scatter(x=list(lengths), y=list(s), name=labels[n], mode="lines+markers",
                                 line=dict(color=c)))
    fig.update_layout(title=labels["title"], height=300, margin=MARGIN, xaxis_type="log", yaxis_type="log",
                      xaxis_title=labels["length"], yaxis_title=labels["share_axis"],
                      legend=dict(orientation="h", y=-0.25))
    return fig


def reach_figure(fields: Mapping[str, np.ndarray], layers: int, labels: Mapping[str, str]) -> go.Figure:
    """For each pattern, how many positions can reach each query after `layers` layers. labels: "<pattern>",
    "title" ({layers}), "query", "positions"."""
    fig = go.Figure()
    for (n, f), c in zip(fields.items(), PATTERN_COLORS, strict=False):
        fig.add_trace(go.Scatter(x=np.arange(len(f)), y=f, name=labels[n], mode="lines", line=dict(color=c)))
    fig.update_layout(title=labels["title"].format(layers=layers), height=300, margin=MARGIN,
                      xaxis_title=labels["query"], yaxis_title=labels["positions"],
                      legend=dict(orientation="h", y=-0.25))
    return fig


# ---------- Mamba ----------
def scan_rows(w, labels: Mapping[str, str]) -> list[dict]:
    """The worked scan (sim.ssm.cost.WorkedScan) as table rows, one per step t: u, Δ, Ā, B̄, h, C and y, vectors
    written out with their numbers. labels: column names "t", "u", "delta", "abar", "bbar", "h", "C", "y"."""
    def vec(v) -> str:
        return "[" + ", ".join(f"{x:.3f}" for x in v) + "]"

    return [{labels["t"]: t, labels["u"]: f"{w.u[t]:g}", labels["delta"]: f"{w.delta[t]:g}",
             labels["abar"]: vec(w.abar[t]), labels["bbar"]: vec(w.bbar[t]), labels["h"]: vec(w.h[t]),
             labels["C"]: vec(w.C[t]), labels["y"]: f"{w.y[t]:.3f}"} for t in range(len(w.u))]


def state_figure(tokens: Sequence[int], mamba: float, kv: Sequence[float], labels: Mapping[str, str]) -> go.Figure:
    """Bytes kept per sequence against tokens generated: Mamba's state (flat) and the KV cache (growing), log–log.
    labels: "title", "tokens", "bytes", "mamba", "kv"."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=list(tokens), y=list(kv), name=labels["kv"], mode="lines", line=dict(color=ORANGE)))
    fig.add_trace(go.Scatter(x=list(tokens), y=[mamba] * len(tokens), name=labels["mamba"], mode="lines",
                             line=dict(color=GREEN)))
    fig.update_layout(title=labels["title"], height=420, margin=MARGIN, xaxis_type="log", yaxis_type="log",
                      xaxis_title=labels["tokens"], yaxis_title=labels["bytes"], legend=dict(orientation="h", y=-0.25))
    return fig


def timing_figure(lengths: Sequence[int], times: Mapping[str, Sequence[float]], labels: Mapping[str, str]) -> go.Figure:
    """Measured milliseconds of a forward pass against length, log–log, one line per form. labels: "<form>",
    "title", "length", "ms"."""
    fig = go.Figure()
    for (f, s), c in zip(times.items(), (ORANGE, BLUE, GREEN), strict=False):
        fig.add_trace(go.Scatter(x=list(lengths), y=[1000 * x for x in s], name=labels[f], mode="lines+markers",
                                 line=dict(color=c)))
    fig.update_layout(title=labels["title"], height=340, margin=MARGIN, xaxis_type="log", yaxis_type="log",
                      xaxis_title=labels["length"], yaxis_title=labels["ms"], legend=dict(orientation="h", y=-0.25))
    return fig


# ---------- sequential vs parallel ----------
def parallel_figure(lengths: Sequence[int], times: Mapping[str, Sequence[float]], steps: Mapping[str, Sequence[int]],
                    labels: Mapping[str, str]) -> go.Figure:
    """Left: measured milliseconds of a forward pass against T (log–log), per model; right: the sequential steps
    each needs against T. labels: "<model>" names, "time_title", "steps_title", "length", "ms", "steps"."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=[labels["time_title"], labels["steps_title"]],
                        horizontal_spacing=0.1)
    for (m, s), c in zip(times.items(), (ORANGE, GREEN), strict=False):
        fig.add_trace(go.Scatter(x=list(lengths), y=[1000 * x for x in s], name=labels[m], mode="lines+markers",
                                 line=dict(color=c), legendgroup=m), row=1, col=1)
        fig.add_trace(go.Scatter(x=list(lengths), y=list(steps[m]), name=labels[m], mode="lines+markers",
                                 line=dict(color=c, dash="dot"), legendgroup=m, showlegend=False), row=1, col=2)
    for col in (1, 2):
        fig.update_xaxes(type="log", title_text=labels["length"], row=1, col=col)
        fig.update_yaxes(type="log", row=1, col=col)
    fig.update_yaxes(title_text=labels["ms"], row=1, col=1)
    fig.update_yaxes(title_text=labels["steps"], row=1, col=2)
    fig.update_layout(height=400, margin=MARGIN, legend=dict(orientation="h", y=-0.25))
    return fig
