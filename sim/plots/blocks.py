"""Figures of the transformer-block lab: the normalised tensor, histograms per layer, RoPE's turning pairs, attention
of the three position encodings, FFN curves, KV-cache bars, and the live frames of Pre/Post-LN and the MoE runs."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sim.plots.palette import BLUE, GREEN, GUIDE, INK, ORANGE, PURPLE, RED, rgba
from sim.plots.panels import heatmap_panel, series, xy_panel

RUN_COLORS = (BLUE, ORANGE, GREEN, PURPLE)
MARGIN = dict(l=40, r=10, t=40, b=30)


def norm_figure(x: np.ndarray, y: np.ndarray, group: np.ndarray, labels: dict) -> go.Figure:
    """Each sample b of the (B, T, d) tensor as a (T, d) grid, before and after; the cells averaged together with
    the chosen one outlined, every number written in its cell. labels: "input", "output", "sample" ({b}),
    "position", "feature"."""
    B, T, d = x.shape
    gap = 55  # px between samples: a title's height, also in the presenter view's larger type
    height = 120 + (38 * T + gap) * B
    # the samples share their feature axis: its numbers only under the last one (none overlaps a title)
    fig = make_subplots(rows=B, cols=2, horizontal_spacing=0.06, vertical_spacing=gap / (height - 70),
                        subplot_titles=[f"{labels[k]} · {labels['sample'].format(b=b)}" for b in range(B)
                                        for k in ("input", "output")])
    span_x, span_y = float(np.abs(x).max()) or 1.0, float(np.abs(y).max()) or 1.0
    for b in range(B):
        for col, (v, span) in enumerate(((x[b], span_x), (y[b], span_y)), start=1):
            fig.add_trace(go.Heatmap(z=v, zmin=-span, zmax=span, colorscale="RdBu", showscale=False,
                                     text=np.round(v, 2), texttemplate="%{text}", textfont={"size": 10},
                                     hovertemplate=f"{labels['position']} %{{y}} · {labels['feature']} %{{x}}"
                                                   ": %{z:.3f}<extra></extra>"), row=b + 1, col=col)
            ts, js = np.nonzero(group[b])
            if len(ts):
                fig.add_trace(go.Scatter(x=js, y=ts, mode="markers", hoverinfo="skip", showlegend=False,
                                         marker=dict(symbol="square-open", size=26, color=INK, line=dict(width=3))),
                              row=b + 1, col=col)
            fig.update_yaxes(autorange="reversed", title_text=labels["position"] if col == 1 else None,
                             row=b + 1, col=col, dtick=1)
            fig.update_xaxes(dtick=1, row=b + 1, col=col, showticklabels=b == B - 1,
                             title_text=labels["feature"] if b == B - 1 else None)
    fig.update_layout(height=height, margin=MARGIN, showlegend=False)
    fig.update_annotations(font_size=12)  # the titles side by side fit a phone's half width
    return fig


def histogram_matrix(values: Sequence[np.ndarray], bins: np.ndarray) -> np.ndarray:
    """(layers, bins − 1) each layer's share of values per bin."""
    return np.array([np.histogram(v, bins=bins)[0] / max(len(v), 1) for v in values])


def init_figure(acts: Sequence[np.ndarray], grads: Sequence[np.ndarray], act_std: np.ndarray, grad_std: np.ndarray,
                labels: dict) -> go.Figure:
    """Per layer (rows): the histogram of its activations, of log10 |gradient|, and both spreads per layer.
    labels: "acts", "grads", "std", "layer", "value", "log_grad", "act_std", "grad_std"."""
    depth = len(acts)
    top = max(float(np.abs(np.concatenate(acts)).max()), 1e-6)
    a_bins = np.linspace(-top, top, 41)
    logs = [np.log10(np.abs(g) + 1e-30) for g in grads]
    finite = np.concatenate(logs)
    finite = finite[finite > -29]
    lo, hi = (float(finite.min()), float(finite.max())) if len(finite) else (-10.0, 0.0)
    g_bins = np.linspace(lo, hi + 1e-9, 41)
    fig = make_subplots(rows=1, cols=3, subplot_titles=[labels["acts"], labels["grads"], labels["std"]],
                        horizontal_spacing=0.08)
    layers = list(range(1, depth + 1))
    matrices = ((histogram_matrix(acts, a_bins), a_bins), (histogram_matrix(logs, g_bins), g_bins))
    for col, (m, bins) in enumerate(matrices, start=1):
        centres = (bins[:-1] + bins[1:]) / 2
        fig.add_trace(go.Heatmap(z=np.sqrt(m), x=centres, y=layers, colorscale="Blues", showscale=False,
                                 hovertemplate=f"{labels['layer']} %{{y}} · %{{x:.3g}}<extra></extra>"), row=1, col=col)
        fig.update_yaxes(autorange="reversed", title_text=labels["layer"] if col == 1 else None, row=1, col=col)
    fig.update_xaxes(title_text=labels["value"], row=1, col=1)
    fig.update_xaxes(title_text=labels["log_grad"], row=1, col=2)
    for name, std, colour in ((labels["act_std"], act_std, BLUE), (labels["grad_std"], grad_std, ORANGE)):
        fig.add_trace(go.Scatter(x=layers, y=np.maximum(std, 1e-30), name=name, mode="lines+markers",
                                 line=dict(color=colour)), row=1, col=3)
    fig.update_yaxes(type="log", row=1, col=3)
    fig.update_xaxes(title_text=labels["layer"], row=1, col=3)
    fig.update_layout(height=380, margin=MARGIN, legend=dict(orientation="h", y=-0.2))
    return fig


def rope_figure(pairs: np.ndarray, shown: Sequence[int], freqs: np.ndarray, labels: dict) -> go.Figure:
    """pairs (P, d/2, 2): for each shown pair i, the pair's point at every position 0..P−1 (joined in order, the
    last marked), turning by θ_i per position. labels: "pair" ({i} {theta})."""
    fig = make_subplots(rows=1, cols=len(shown), subplot_titles=[labels["pair"].format(i=i, theta=f"{freqs[i]:.3g}")
                                                                 for i in shown])
    P = pairs.shape[0]
    r = float(np.abs(pairs).max()) * 1.15 or 1.0
    for col, i in enumerate(shown, start=1):
        pts = pairs[:, i]
        fig.add_trace(go.Scatter(x=pts[:, 0], y=pts[:, 1], mode="lines+markers", showlegend=False,
                                 marker=dict(color=list(range(P)), colorscale="Viridis", size=7),
                                 line=dict(color=rgba(GUIDE, 0.6)), text=[str(p) for p in range(P)],
                                 hovertemplate="p=%{text}: (%{x:.3f}, %{y:.3f})<extra></extra>"), row=1, col=col)
        fig.add_trace(go.Scatter(x=[0, pts[-1, 0]], y=[0, pts[-1, 1]], mode="lines", showlegend=False,
                                 line=dict(color=RED, width=3), hoverinfo="skip"), row=1, col=col)
        fig.update_xaxes(range=[-r, r], row=1, col=col)
        fig.update_yaxes(range=[-r, r], scaleanchor=f"x{col if col > 1 else ''}", row=1, col=col)
    fig.update_layout(height=360, margin=MARGIN)  # the section's main figure: taller than the ones below it
    fig.update_annotations(font_size=12)  # four titles side by side
    return fig


def score_figure(scores: np.ndarray, title: str, labels: dict) -> go.Figure:
    """(P, P) q_m·k_n over query position m (rows) and key position n: constant along each diagonal under RoPE."""
    fig = go.Figure(go.Heatmap(z=scores, colorscale="RdBu", zmid=0, hovertemplate="m=%{y} n=%{x}: %{z:.4f}"
                                                                                   "<extra></extra>"))
    fig.update_layout(title=title, height=340, margin=MARGIN, xaxis_title=labels["key_pos"],
                      yaxis_title=labels["query_pos"], yaxis_autorange="reversed")
    return fig


def position_figures(results: Sequence, labels: dict) -> tuple[go.Figure, go.Figure]:
    """The attention of one test sequence per encoding (the trained length marked), and accuracy per position.
    results: sim.transformers.blocks.PositionResult; labels: "pos.<name>", "key_pos", "query_pos", "accuracy",
    "trained"."""
    n = len(results)
    heat = make_subplots(rows=1, cols=n, subplot_titles=[labels[f"pos.{r.pos}"] for r in results],
                         horizontal_spacing=0.05)
    for col, r in enumerate(results, start=1):
        heat.add_trace(go.Heatmap(z=r.weights, zmin=0, zmax=1, colorscale="Blues", showscale=False,
                                  hovertemplate="m=%{y} n=%{x}: %{z:.2f}<extra></extra>"), row=1, col=col)
        edge = r.train_len - 0.5
        heat.add_shape(type="line", x0=edge, x1=edge, y0=-0.5, y1=len(r.weights) - 0.5,
                       line=dict(color=RED, dash="dash"), row=1, col=col)
        heat.add_shape(type="line", y0=edge, y1=edge, x0=-0.5, x1=len(r.weights) - 0.5,
                       line=dict(color=RED, dash="dash"), row=1, col=col)
        heat.update_yaxes(autorange="reversed", row=1, col=col)
    heat.update_layout(height=330, margin=MARGIN)
    acc = go.Figure()
    for r, colour in zip(results, RUN_COLORS, strict=False):
        acc.add_trace(go.Scatter(x=list(range(len(r.accuracy))), y=r.accuracy, name=labels[f"pos.{r.pos}"],
                                 mode="lines+markers", line=dict(color=colour)))
    acc.add_vline(x=results[0].train_len - 0.5, line=dict(color=RED, dash="dash"), annotation_text=labels["trained"])
    acc.update_layout(height=300, margin=MARGIN, xaxis_title=labels["query_pos"], yaxis_title=labels["accuracy"],
                      yaxis_range=[0, 1.05], legend=dict(orientation="h", y=-0.25))
    return heat, acc


def activation_figure(x: np.ndarray, curves: dict[str, np.ndarray], labels: dict) -> go.Figure:
    fig = go.Figure()
    for (name, y), colour in zip(curves.items(), (GUIDE, BLUE, ORANGE, GREEN), strict=False):
        fig.add_trace(go.Scatter(x=x, y=y, name=name, line=dict(color=colour)))
    fig.update_layout(height=300, margin=MARGIN, title=labels["title"], legend=dict(orientation="h", y=-0.2))
    return fig


def bars_figure(names: Sequence[str], values: Sequence[float], title: str, axis: str, log: bool = False,
                text: Sequence[str] | None = None) -> go.Figure:
    fig = go.Figure(go.Bar(x=list(names), y=list(values), text=text, marker_color=[RUN_COLORS[i % 4]
                                                                                  for i in range(len(names))]))
    fig.update_layout(height=320, margin=MARGIN, title=title, yaxis_title=axis, yaxis_type="log" if log else None)
    return fig


# ---------- live frames ----------
def depth_frame(runs: Sequence[tuple[str, list[int], list[float], np.ndarray, np.ndarray, float | None]],
                labels: dict) -> dict:
    """Pre/Post-LN runs: (name, steps, losses, gradient norm per block now, at initialisation, recent loss). Loss
    curves, gradient norm per block now (log scale: it spans decades once a run stalls), and at initialisation.
    labels: "step", "loss", "layer", "grad_norm", "loss_title", "norm_title", "init_title", "caption" ({step})."""
    loss = xy_panel(labels["loss_title"],
                    [series(s, v, color=c, label=n) for (n, s, v, *_), c in zip(runs, RUN_COLORS, strict=False)],
                    x_label=labels["step"], y_label=labels["loss"], width=380, height=240)

    def norms(title: str, pick: int, log: bool) -> dict:
        items = [series(np.arange(1, len(r[pick]) + 1), r[pick], color=c, label=r[0])
                 for r, c in zip(runs, RUN_COLORS, strict=False)]
        finite = [float(v) for r in runs for v in np.ravel(r[pick]) if np.isfinite(v)]
        top = max(finite, default=0.0) * 1.1 or 1.0
        return xy_panel(title, items, x_label=labels["layer"], y_label=labels["grad_norm"], width=300, height=240,
                        log_y=log, y_range=None if log else (0.0, top))

    steps = max((r[1][-1] for r in runs if r[1]), default=0)
    parts = [f"{r[0]}: {r[5]:.3f}" for r in runs if r[5] is not None]
    return {"epoch": steps, "caption": " · ".join([labels["caption"].format(step=steps), *parts]),
            "panels": [loss, norms(labels["norm_title"], 3, True), norms(labels["init_title"], 4, False)]}


def moe_frame(runs: Sequence[dict], labels: dict) -> dict:
    """MoE runs, each {"name", "steps", "loss", "load" (E, cols), "by_cluster" (C, E), "imbalance"}: the loss curves,
    each run's expert load over time and where each cluster's tokens went. labels: "step", "loss", "loss_title",
    "load_title" ({name}), "cluster_title" ({name}), "expert", "cluster", "caption" ({step})."""
    panels = [xy_panel(labels["loss_title"], [series(r["steps"], r["loss"], color=c, label=r["name"])
                                              for r, c in zip(runs, RUN_COLORS, strict=False)],
                       x_label=labels["step"], y_label=labels["loss"], width=400, height=240)]
    for r in runs:
        E = r["load"].shape[0]
        panels.append(heatmap_panel(labels["load_title"].format(name=r["name"]), r["load"], vmin=0.0,
                                    vmax=min(1.0, 3.0 / E), row_labels=[str(e) for e in range(E)], width=300,
                                    height=200))
    for r in runs:
        m = r["by_cluster"]
        share = m / np.maximum(m.sum(1, keepdims=True), 1)
        panels.append(heatmap_panel(labels["cluster_title"].format(name=r["name"]), share, vmin=0.0, vmax=1.0,
                                    row_labels=[str(c) for c in range(m.shape[0])],
                                    col_labels=[str(e) for e in range(m.shape[1])], width=250, height=200))
    steps = max((r["steps"][-1] for r in runs if r["steps"]), default=0)
    parts = [f"{r['name']}: {r['imbalance']:.2f}" for r in runs if r["imbalance"] is not None]
    return {"epoch": steps, "caption": " · ".join([labels["caption"].format(step=steps), *parts]), "panels": panels}

