"""Figures of the 'from pretrained model to assistant' lab's paradigms and data sections: the nested map of AI,
the two models' boundaries and samples, the bandit's policy, what each cleaning step removed, the LSH S-curve, and
the raw-vs-clean live frame. Data in, figure out; the words come in `labels`."""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from sim.plots.curves import GUIDE_COLOR, TEST_COLOR, TRAIN_COLOR, compact_layout
from sim.plots.palette import AMBER, BLUE, CLASSES, GREEN, INK, NEUTRAL, ORANGE, PURPLE, RED, WHITE, rgba, tint
from sim.plots.panels import series, xy_panel

MAP_LEVELS = ("ai", "ml", "dl", "genai", "llm")  # outermost first
MAP_COLOURS = (tint(NEUTRAL, 0.25), tint(BLUE, 0.25), tint(GREEN, 0.3), tint(PURPLE, 0.3), tint(ORANGE, 0.45))
# the map's geometry (px): a level's title line, a line of its note, the space below its text and below its box; the
# indent of each level (a share of the width), and the columns of a note's line (a Chinese character takes two)
MAP_HEAD, MAP_LINE, MAP_PAD, MAP_FOOT = 24, 16, 8, 4
MAP_INDENT, MAP_NOTE_COLUMNS = 0.035, 36
# heights (px) of the sections' main figures (the two models' boundaries, side by side; what each cleaning step
# removed) and of the figures below them (each half the page's width or less), so the main one is the largest on
# every screen
BOUNDARY_HEIGHT, REMOVED_HEIGHT, BANDIT_HEIGHT = 420, 340, 280
KIND_COLOURS = {"junk": AMBER, "exact": BLUE, "near": PURPLE, "test": RED, "clean": NEUTRAL}


# ---------- paradigms ----------
def paradigm_map(names: dict[str, str], notes: dict[str, str], links: dict[str, str]) -> go.Figure:
    """AI ⊃ ML ⊃ DL ⊃ generative AI ⊃ LLM as nested boxes, each box's title and note in its own band above the boxes
    inside it; each title links to the lab that shows that level.

    names/notes: level -> title / one line; links: level -> the lab's address ("/classification?lang=en").
    The y axis counts pixels from the bottom (the figure has no margins), so the bands keep their height whatever
    the width; a note wraps at MAP_NOTE_COLUMNS columns, which fits the innermost box on a phone and in the presenter
    view's larger type."""
    wrapped = {level: "<br>".join(_lines(notes[level], MAP_NOTE_COLUMNS)) for level in MAP_LEVELS}
    band = MAP_HEAD + MAP_LINE * max(w.count("<br>") + 1 for w in wrapped.values()) + MAP_PAD  # one level's text
    height = len(MAP_LEVELS) * (band + MAP_FOOT) + MAP_PAD
    fig = go.Figure()
    for i, (level, colour) in enumerate(zip(MAP_LEVELS, MAP_COLOURS, strict=True)):
        x0, top = MAP_INDENT * i, height - 1 - band * i
        fig.add_shape(type="rect", x0=x0, y0=1 + MAP_FOOT * i, x1=1 - MAP_INDENT * i / 3, y1=top,
                      line=dict(color=INK, width=1), fillcolor=colour, layer="below")
        title = names[level]
        if level in links:
            title = f'<a href="{links[level]}" target="_self">{title}</a>'
        fig.add_annotation(x=x0 + 0.015, y=top - 4, xanchor="left", yanchor="top", showarrow=False, align="left",
                           text=f"<b>{title}</b>", font=dict(size=14, color=INK), captureevents=True)
        fig.add_annotation(x=x0 + 0.015, y=top - MAP_HEAD - 2, xanchor="left", yanchor="top", showarrow=False,
                           align="left", text=wrapped[level], font=dict(size=11, color=INK))
    fig.update_xaxes(visible=False, range=[0, 1])
    fig.update_yaxes(visible=False, range=[0, height])
    fig.update_layout(height=height, margin=dict(l=0, r=0, t=0, b=0), plot_bgcolor="white", paper_bgcolor="white",
                      dragmode=False)
    return fig


def _lines(text: str, columns: int) -> list[str]:
    """`text` in lines of at most `columns` columns where it can break (after a space or a full-width comma or
    semicolon); a wide (CJK) character takes two columns."""
    lines, line = [], ""
    for piece in re.findall(r"[^ ，；]+[ ，；]*", text):
        if line and _width(line + piece.rstrip()) > columns:
            lines.append(line.rstrip())
            line = ""
        line += piece
    return lines + [line.rstrip()] if line else lines


def _width(text: str) -> int:
    """The columns `text` takes on a line: two for a wide (CJK) character, one for any other."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def boundary_figure(xs: np.ndarray, ys: np.ndarray, proba: np.ndarray, X: np.ndarray, y: np.ndarray,
                    labels: dict[str, str], samples: tuple[np.ndarray, np.ndarray] | None = None) -> go.Figure:
    """P(y=1|x) over the plane (proba: (len(ys), len(xs))), its 0.5 contour (the boundary), the data, and new points
    a generative model drew (hollow). labels: "title", "class0", "class1", "sample0", "sample1", "x1", "x2"."""
    scale = [[0, tint(ORANGE, 0.45)], [0.5, WHITE], [1, tint(BLUE, 0.45)]]
    fig = go.Figure(go.Contour(x=xs, y=ys, z=proba, zmin=0, zmax=1, colorscale=scale, showscale=False,
                               contours=dict(start=0, end=1, size=0.1), line=dict(width=0), hoverinfo="skip"))
    fig.add_trace(go.Contour(x=xs, y=ys, z=proba, showscale=False, contours=dict(start=0.5, end=0.5, size=1,
                                                                                   coloring="none"),
                             line=dict(color=INK, width=2.5), hoverinfo="skip", showlegend=False))
    for k in (0, 1):
        pts = X[y == k]
        fig.add_trace(go.Scatter(x=pts[:, 0], y=pts[:, 1], mode="markers", name=labels[f"class{k}"],
                                 marker=dict(color=CLASSES[k], size=6, line=dict(color="white", width=0.5))))
    if samples is not None and len(samples[0]):
        S, sy = samples
        for k in (0, 1):
            pts = S[sy == k]
            fig.add_trace(go.Scatter(x=pts[:, 0], y=pts[:, 1], mode="markers", name=labels[f"sample{k}"],
                                     marker=dict(color="rgba(0,0,0,0)", size=7, symbol="diamond-open",
                                                 line=dict(color=CLASSES[k], width=1.5))))
    fig.update_xaxes(range=[xs[0], xs[-1]])
    fig.update_yaxes(range=[ys[0], ys[-1]], scaleanchor="x")
    compact_layout(fig, labels["x1"], labels["x2"], height=BOUNDARY_HEIGHT)
    # two of these share the stage's figure column: the kind of model and the model each on a line of the title, the
    # legend two entries a row, so neither runs past the figure's width in the presenter view's larger type
    title = re.sub(r"([:：])\s*", r"\1<br>", labels["title"], count=1)
    fig.update_layout(title=dict(text=title, x=0, y=0.95, yanchor="top", font=dict(size=14)), margin=dict(t=92),
                      legend=dict(entrywidth=0.5, entrywidthmode="fraction"))
    return fig


def bandit_figure(probs: np.ndarray, mean_reward: np.ndarray, payouts: Sequence[float], labels: dict) -> go.Figure:
    """The policy's chance of each arm over the steps, and the moving mean reward. labels: "arm" (with {k} and
    {p}), "reward", "step", "prob"."""
    fig = go.Figure()
    steps = np.arange(len(probs))
    for k, p in enumerate(payouts):
        fig.add_trace(go.Scatter(x=steps, y=probs[:, k], mode="lines", name=labels["arm"].format(k=k + 1, p=p),
                                 line=dict(color=CLASSES[k % len(CLASSES)], width=2)))
    fig.add_trace(go.Scatter(x=steps[1:], y=mean_reward, mode="lines", name=labels["reward"],
                             line=dict(color=INK, width=1.5, dash="dot")))
    fig.update_yaxes(range=[0, 1.02])
    return compact_layout(fig, labels["step"], labels["prob"], height=BANDIT_HEIGHT)


# ---------- data before training ----------
def removed_figure(rows: Sequence[tuple[str, dict[str, int]]], kinds: dict[str, str], labels: dict) -> go.Figure:
    """Per step, the lines it removed stacked by what they truly were. rows: (step's name, kind -> count); kinds:
    kind -> its name ("clean" lines removed are the step's mistakes). labels: "lines"."""
    fig = go.Figure()
    names = [r[0] for r in rows]
    for kind, name in kinds.items():
        fig.add_trace(go.Bar(x=names, y=[r[1].get(kind, 0) for r in rows], name=name,
                             marker_color=KIND_COLOURS[kind]))
    fig.update_layout(barmode="stack")
    return compact_layout(fig, "", labels["lines"], height=REMOVED_HEIGHT)


def lsh_figure(grid: np.ndarray, chance: np.ndarray, threshold: float, pairs: np.ndarray, labels: dict) -> go.Figure:
    """The chance that a pair of Jaccard j becomes an LSH candidate (the S-curve), the threshold, and the injected
    near-duplicate pairs' exact Jaccard (ticks at the bottom). labels: "curve", "threshold", "pairs", "jaccard",
    "chance"."""
    fig = go.Figure(go.Scatter(x=grid, y=chance, mode="lines", name=labels["curve"], line=dict(color=BLUE, width=2.5)))
    fig.add_trace(go.Scatter(x=[threshold, threshold], y=[0, 1], mode="lines", name=labels["threshold"],
                             line=dict(color=GUIDE_COLOR, dash="dash")))
    fig.add_trace(go.Scatter(x=pairs, y=np.full(len(pairs), 0.02), mode="markers", name=labels["pairs"],
                             marker=dict(symbol="line-ns-open", size=12, color=rgba(PURPLE, 0.6))))
    fig.update_xaxes(range=[0, 1])
    fig.update_yaxes(range=[0, 1.02])
    return compact_layout(fig, labels["jaccard"], labels["chance"], height=280)


def estimate_figure(exact: np.ndarray, estimate: np.ndarray, labels: dict) -> go.Figure:
    """MinHash's estimate against the exact Jaccard for pairs of lines, with the ±0.1 band. labels: "pairs", "band",
    "jaccard", "estimate"."""
    line = np.array([0.0, 1.0])
    fig = go.Figure(go.Scatter(x=np.r_[line, line[::-1]], y=np.r_[line - 0.1, line[::-1] + 0.1], fill="toself",
                               fillcolor=rgba(GREEN, 0.15), line=dict(width=0), name=labels["band"],
                               hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=exact, y=estimate, mode="markers", name=labels["pairs"],
                             marker=dict(color=PURPLE, size=5, opacity=0.6)))
    fig.update_xaxes(range=[0, 1])
    fig.update_yaxes(range=[0, 1])
    return compact_layout(fig, labels["jaccard"], labels["estimate"], height=280)


def cleaning_frame(frame: dict, labels: dict) -> dict:
    """The raw-vs-clean live frame: per model, the training loss, the clean held-out loss and the test loss.

    frame: sim.dedup.live.CleaningRun.frame(); labels: "raw", "clean", "train", "heldout", "test", "leaked", "step",
    "loss", "caption"."""
    panels = []
    for name in ("raw", "clean"):
        m = frame["models"][name]
        items = [series(*m["train"], color=TRAIN_COLOR, width=1.5, label=labels["train"]),
                 series(m["eval_steps"], m["heldout"], color=TEST_COLOR, width=2.5, label=labels["heldout"]),
                 series(m["eval_steps"], m["test"], color=RED, width=2.5, label=labels["test"]),
                 series(m["eval_steps"], m["leaked"], color=PURPLE, width=1.5, dash=True, label=labels["leaked"])]
        panels.append(xy_panel(labels[name], items, x_label=labels["step"], y_label=labels["loss"], width=380,
                               height=260, y_range=(0.0, 3.5)))
    return {"epoch": frame["steps"], "caption": labels["caption"], "panels": panels}
