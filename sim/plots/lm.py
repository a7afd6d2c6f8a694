"""Figures of the language-model lab: the live frame, tokens coloured in HTML, Altair linked views (per-token loss →
next-token distribution; IsoFLOP brush → loss curves) and the published scaling laws (Plotly). Data in, figure out.

The selection readers (selected_position, selected_runs) turn Streamlit's selection events into values.
"""
from __future__ import annotations

import html as _html
import math
from collections.abc import Sequence

import altair as alt
import numpy as np
import plotly.graph_objects as go

from sim.language.tokenizer import N_BYTES
from sim.plots.attention import loss_panel
from sim.plots.curves import GUIDE_COLOR, TEST_COLOR, TRAIN_COLOR, compact_layout
from sim.plots.palette import BLUE, CLASSES, GREEN, INK, NEUTRAL, ORANGE, PURPLE, RED, tint
from sim.plots.panels import series, xy_panel

TOKEN_PARAM = "token"  # the per-token loss chart's point selection
BRUSH_PARAM = "brush"  # the IsoFLOP chart's interval selection
TOKEN_TINTS = tuple(tint(c, 0.35) for c in CLASSES)
# the live panels (px): the lab's main figure, the loss one first; as tall as the first screen allows, and both the
# same size, so that on a phone (scaled to its width) the loss panel stays the largest figure of the page
PANEL = (600, 300)


# ---------- the live view ----------
def live_frame(view: dict, labels: dict) -> dict:
    """One frame: train and validation loss with the entropy floor, and the validation perplexity exp(loss).

    view: steps, train (steps, losses), val (steps, losses), floor (None: unknown), caption. labels: "step", "loss",
    "floor", "train", "val", "ppl", "loss_title", "ppl_title".
    """
    floor = view["floor"]
    loss = loss_panel(labels["loss_title"], [(labels["train"], *view["train"], TRAIN_COLOR),
                                             (labels["val"], *view["val"], TEST_COLOR)], labels, floor=floor,
                      width=PANEL[0], height=PANEL[1])
    steps, vals = view["val"]
    items = [series(steps, [math.exp(min(v, 50.0)) for v in vals], color=TEST_COLOR, label=labels["val"])]
    if floor:
        items.append(series([0, max(steps, default=1)], [math.exp(floor)] * 2, color=GUIDE_COLOR, width=1.5,
                            dash=True, label=labels["floor"]))
    ppl = xy_panel(labels["ppl_title"], items, x_label=labels["step"], y_label=labels["ppl"], width=PANEL[0],
                   height=PANEL[1], log_y=True)
    return {"epoch": view["steps"], "caption": view["caption"], "panels": [loss, ppl]}


# ---------- tokens as coloured text ----------
def _visible(piece: str) -> str:
    return _html.escape(piece).replace("\n", "↵").replace(" ", "&nbsp;")


def token_html(pieces: Sequence[str], losses: Sequence[float | None] | None = None, vmax: float = 5.0) -> str:
    """The tokens as spans: alternating tints (a token each), or shaded by loss (darker red: more surprising)."""
    spans = []
    for i, piece in enumerate(pieces):
        if losses is None:
            colour = TOKEN_TINTS[i % len(TOKEN_TINTS)]
        else:
            v = losses[i]
            colour = tint(NEUTRAL, 0.15) if v is None else tint(RED, 0.1 + 0.9 * min(1.0, max(0.0, v) / vmax))
        spans.append(f'<span style="background:{colour};border-radius:3px;padding:1px 1px;margin:0 1px;'
                     f'line-height:1.9;font-family:monospace">{_visible(piece)}</span>')
    return '<div style="word-break:break-all">' + "".join(spans) + "</div>"


def compression_figure(lengths: Sequence[int], n_chars: int, kind: str, merges: int, labels: dict) -> go.Figure:
    """Tokens per character of a text against the vocabulary size: a byte-level BPE one merge at a time (lengths[k]:
    the text's tokens after k merges, from its 256 UTF-8 bytes), beside one token per character (a line at 1); the
    tokenizer shown now (kind "char", or "bpe" with `merges` merges applied) in red.

    labels: "vocab", "per_char", "bpe", "char", "now"."""
    x = [N_BYTES + k for k in range(len(lengths))]
    y = [n / n_chars for n in lengths]
    chars = kind == "char"
    fig = go.Figure(go.Scatter(x=x, y=y, mode="lines", name=labels["bpe"], line=dict(color=BLUE, width=3)))
    fig.add_trace(go.Scatter(x=[x[0], x[-1]], y=[1.0, 1.0], mode="lines", name=labels["char"],
                             line=dict(color=RED if chars else ORANGE, width=4 if chars else 2,
                                       dash=None if chars else "dash")))
    if not chars:
        fig.add_trace(go.Scatter(x=[x[merges]], y=[y[merges]], mode="markers", name=labels["now"],
                                 marker=dict(size=18, color=RED, symbol="star", line=dict(color=INK, width=1))))
    fig.update_yaxes(rangemode="tozero")
    return compact_layout(fig, labels["vocab"], labels["per_char"], height=360)


# ---------- Altair: per-token loss → next-token distribution ----------
def shown(piece: str) -> str:
    """A token as an axis label: spaces and line breaks made visible."""
    return piece.replace(" ", "␣").replace("\n", "↵").replace("\t", "⇥") or "∅"


def token_loss_chart(pieces: Sequence[str], losses: Sequence[float | None], labels: dict,
                     selected: int | None = None) -> alt.Chart:
    """Bars of each token's loss; clicking one selects it (point selection TOKEN_PARAM on field "pos")."""
    rows = [{"pos": i, "token": f"{i}:{shown(p)}", "loss": v if v is not None else 0.0, "chosen": i == selected}
            for i, (p, v) in enumerate(zip(pieces, losses, strict=True))]
    pick = alt.selection_point(name=TOKEN_PARAM, fields=["pos"], on="click")
    return alt.Chart(alt.Data(values=rows)).mark_bar().encode(
        x=alt.X("token:N", sort=None, title=labels["token"], axis=alt.Axis(labelAngle=0)),
        y=alt.Y("loss:Q", title=labels["loss"]),
        color=alt.condition("datum.chosen", alt.value(ORANGE), alt.value(BLUE)),
        tooltip=[alt.Tooltip("token:N", title=labels["token"]), alt.Tooltip("loss:Q", format=".3f")],
    ).add_params(pick).properties(height=120)


def distribution_chart(top: Sequence[tuple[str, float]], labels: dict) -> alt.Chart:
    rows, seen = [], {}
    for tok, p in top:  # different tokens may look alike (e.g. two partial characters, both "�"): number repeats
        label = shown(tok)
        seen[label] = seen.get(label, 0) + 1
        rows.append({"token": label if seen[label] == 1 else f"{label} ({seen[label]})", "p": p})
    return alt.Chart(alt.Data(values=rows)).mark_bar(color=GREEN).encode(
        x=alt.X("p:Q", title=labels["prob"], scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("token:N", sort=None, title=labels["next"]),
        tooltip=[alt.Tooltip("token:N"), alt.Tooltip("p:Q", format=".3f")],
    ).properties(height=max(72, 12 * len(rows)))


def _selection(event, name: str):
    if event is None:
        return None
    sel = event.get("selection") if isinstance(event, dict) else getattr(event, "selection", None)
    if sel is None:
        return None
    return sel.get(name) if isinstance(sel, dict) else getattr(sel, name, None)


def selected_position(event, n_tokens: int) -> int | None:
    """The token clicked in token_loss_chart (its position), None when nothing (valid) is selected."""
    points = _selection(event, TOKEN_PARAM)
    if not points:
        return None
    pos = points[0].get("pos") if isinstance(points, list) else None
    return int(pos) if isinstance(pos, (int, float)) and 0 <= pos < n_tokens else None


# ---------- Altair: the measured sweep, IsoFLOP brush → loss curves ----------
def sweep_rows(runs: Sequence[dict]) -> list[dict]:
    """One row per run for the charts: its index, budget (as text and number), N and loss."""
    return [{"run": i, "budget": f"{r['budget']:.0e}", "C": r["budget"], "N": r["params"], "loss": r["loss"]}
            for i, r in enumerate(runs) if math.isfinite(r["loss"])]


def isoflop_chart(runs: Sequence[dict], labels: dict, frontier: Sequence[tuple[float, float]] = ()) -> alt.Chart:
    """Final loss against N, one line per budget (IsoFLOP curves), with a rectangle brush (BRUSH_PARAM) over N and
    loss; the IsoFLOP minima (frontier) as black diamonds."""
    brush = alt.selection_interval(name=BRUSH_PARAM, encodings=["x", "y"])
    base = alt.Chart(alt.Data(values=sweep_rows(runs))).encode(
        x=alt.X("N:Q", scale=alt.Scale(type="log"), title=labels["N"]),
        y=alt.Y("loss:Q", scale=alt.Scale(zero=False), title=labels["loss"]),
        color=alt.Color("budget:N", title=labels["budget"], sort=None))
    lines = base.mark_line(point=True).encode(tooltip=["budget:N", "N:Q", alt.Tooltip("loss:Q", format=".3f")])
    chart = lines.add_params(brush)
    if frontier:
        mins = alt.Chart(alt.Data(values=[{"N": n, "loss": v} for n, v in frontier])).mark_point(
            shape="diamond", size=90, filled=True, color=INK).encode(x="N:Q", y="loss:Q")
        chart = chart + mins
    return chart.properties(height=300)


def selected_runs(event, runs: Sequence[dict]) -> set[int]:
    """The runs inside the IsoFLOP brush (N and loss both within its ranges); empty when nothing is brushed."""
    box = _selection(event, BRUSH_PARAM)
    if not box or "N" not in box or "loss" not in box:
        return set()
    (n0, n1), (l0, l1) = sorted(box["N"]), sorted(box["loss"])
    return {row["run"] for row in sweep_rows(runs) if n0 <= row["N"] <= n1 and l0 <= row["loss"] <= l1}


def curves_chart(runs: Sequence[dict], chosen: set[int], labels: dict) -> alt.Chart:
    """Each run's validation loss against tokens seen; the chosen runs in colour, the others grey."""
    rows = [{"run": i, "name": f"{r['budget']:.0e} · N={r['params']:,}", "tokens": d, "loss": v,
             "on": not chosen or i in chosen}
            for i, r in enumerate(runs) for d, v in r["curve"] if math.isfinite(v)]
    return alt.Chart(alt.Data(values=rows)).mark_line(point=True).encode(
        x=alt.X("tokens:Q", scale=alt.Scale(type="log"), title=labels["D"]),
        y=alt.Y("loss:Q", scale=alt.Scale(zero=False), title=labels["loss"]),
        detail="run:N",
        color=alt.condition("datum.on", alt.Color("name:N", legend=None), alt.value(tint(NEUTRAL, 0.4))),
        opacity=alt.condition("datum.on", alt.value(1.0), alt.value(0.35)),
        tooltip=["name:N", "tokens:Q", alt.Tooltip("loss:Q", format=".3f")],
    ).properties(height=260)


# ---------- Plotly: the published laws ----------
FIT_COLOURS = {"rule20": GREEN, "hoffmann": ORANGE, "epoch": BLUE, "article": RED}


def laws_figure(frontiers: dict[str, tuple[np.ndarray, np.ndarray]], current: dict[str, tuple[float, float]],
                models: Sequence[tuple[str, float, float]], names: dict, labels: dict) -> go.Figure:
    """Parameters N against training tokens D: each fit's compute-optimal frontier over a range of budgets, the
    chosen budget's optimum on each, the lines of 20 tokens per parameter, and published models."""
    fig = go.Figure()
    for key, (N, D) in frontiers.items():
        fig.add_trace(go.Scatter(x=N, y=D, mode="lines", name=names[key], line=dict(color=FIT_COLOURS[key],
                                                                                    dash="dot" if key == "article"
                                                                                    else "solid")))
    for key, (N, D) in current.items():
        fig.add_trace(go.Scatter(x=[N], y=[D], mode="markers", showlegend=False, name=names[key],
                                 marker=dict(size=12, color=FIT_COLOURS[key], symbol="star",
                                             line=dict(color=INK, width=1))))
    fig.add_trace(go.Scatter(x=[m[1] for m in models], y=[m[2] for m in models], mode="markers+text",
                             text=[m[0] for m in models], textposition="top center", name=labels["models"],
                             marker=dict(size=9, color=PURPLE)))
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return compact_layout(fig, labels["N"], labels["D"], height=420)


def inference_figure(N: np.ndarray, train: np.ndarray, serve: np.ndarray, best: float, chinchilla: float,
                     labels: dict) -> go.Figure:
    """Training, serving and total compute against model size, at a fixed target loss."""
    fig = go.Figure()
    for y, name, colour in ((train, labels["train"], ORANGE), (serve, labels["serve"], BLUE),
                            (train + serve, labels["total"], INK)):
        fig.add_trace(go.Scatter(x=N, y=y, mode="lines", name=name, line=dict(color=colour)))
    for x, name, colour in ((best, labels["best"], GREEN), (chinchilla, labels["chinchilla"], RED)):
        fig.add_vline(x=x, line=dict(color=colour, dash="dash"), annotation_text=name)
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return compact_layout(fig, labels["N"], labels["flops"], height=340)


def kaplan_figure(N: np.ndarray, kaplan: np.ndarray, chinchilla: np.ndarray, labels: dict) -> go.Figure:
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=N, y=kaplan, mode="lines", name=labels["kaplan"], line=dict(color=PURPLE)))
    fig.add_trace(go.Scatter(x=N, y=chinchilla, mode="lines", name=labels["chinchilla"], line=dict(color=BLUE)))
    fig.update_xaxes(type="log")
    return compact_layout(fig, labels["N"], labels["loss"], height=320)
