"""Figures of the attention lab: stage heatmaps (heads side by side, masked cells drawn as masked), live panels."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from sim.plots.curves import GUIDE_COLOR, TEST_COLOR, TRAIN_COLOR, compact_layout
from sim.plots.palette import BLUE, MASKED, ORANGE, TEXT, WHITE
from sim.plots.panels import heatmap_panel, series, xy_panel

MASKED_COLOR = MASKED  # masked cells: a flat grey with a cross, never a colour of the value scale
SEQUENTIAL = [[0.0, WHITE], [1.0, BLUE]]  # weights in [0, 1]: white (0) to blue (1)
DIVERGING = [[0.0, ORANGE], [0.5, WHITE], [1.0, BLUE]]  # signed values: orange - white - blue
CELL_PX = 18  # height of one matrix row on screen
MAIN_CELL_PX, MAIN_HEIGHT = 40, (320, 460)  # the page's main stage: taller rows, within the first screen
ANNOTATE_MAX_TOKENS = 8  # numbers are written in the cells of sequences up to this long
# the pipeline's figures as the lab lays them out, a row of figures at a time
PIPELINE_ROWS = (("x",), ("q", "k", "v"), ("raw", "scaled"), ("masked", "weights"), ("heads_out", "concat", "output"))


def stage_figure(title: str, mats: Sequence[np.ndarray], *, row_labels: Sequence[str],
                 col_labels: Sequence[str], block_titles: Sequence[str] = (), mask: np.ndarray | None = None,
                 weights: bool = False, annotate: bool = False, masked_label: str = "",
                 row_sums_label: str | None = None) -> go.Figure:
    """Matrices of one stage side by side (one per head) in a single heatmap, separated by a gap column.

    mask (rows, cols) True = masked: those cells are drawn grey with a ×, not as values.
    weights: the values are probabilities (white to blue, 0 to 1), else a signed diverging scale.
    row_sums_label: write each row's sum to the right of every block (rows of weights sum to 1).
    """
    rows, gap = mats[0].shape[0], 1
    widths = [m.shape[1] for m in mats]
    extra = 1 if row_sums_label else 0  # a column for the row sums after each block
    starts = np.cumsum([0] + [w + extra + gap for w in widths[:-1]])
    total = int(starts[-1] + widths[-1] + extra)
    # categorical axes with unique names (a token may repeat): hover shows them, no per-cell text is sent
    y_names = [f"{i}·{r}" for i, r in enumerate(row_labels)]
    x_names = [f"{total + i}" for i in range(total)]  # placeholders for the gap columns, never shown
    block_names = list(block_titles) or [""] * len(mats)
    z = np.full((rows, total), np.nan)
    for s, m, b in zip(starts, mats, block_names, strict=True):
        z[:, s: s + m.shape[1]] = m
        x_names[s: s + m.shape[1]] = [f"{b} {j}·{c}".strip() for j, c in enumerate(col_labels[: m.shape[1]])]
    if row_sums_label:
        for s, w in zip(starts, widths, strict=True):
            x_names[s + w] = f"{x_names[s + w]}Σ"
    masked = None
    if mask is not None:
        masked = np.full((rows, total), np.nan)
        for s, w in zip(starts, widths, strict=True):
            z[:, s: s + w][mask] = np.nan
            masked[:, s: s + w][mask] = 1.0
    if weights:
        zmin, zmax, scale = 0.0, 1.0, SEQUENTIAL
    else:
        bound = float(np.nanmax(np.abs(z))) if np.isfinite(z).any() else 1.0
        zmin, zmax, scale = -(bound or 1.0), bound or 1.0, DIVERGING
    data = [go.Heatmap(
        z=z, x=x_names, y=y_names, zmin=zmin, zmax=zmax, colorscale=scale, xgap=1, ygap=1,
        hovertemplate="%{y} → %{x}<br>%{z:.3f}<extra></extra>", texttemplate="%{z:.2f}" if annotate else None,
        colorbar=dict(thickness=10, len=0.9))]
    if masked is not None:
        data.append(go.Heatmap(
            z=masked, x=x_names, y=y_names, colorscale=[[0, MASKED_COLOR], [1, MASKED_COLOR]], showscale=False,
            xgap=1, ygap=1, text=np.where(masked == 1.0, "×", ""), texttemplate="%{text}" if rows <= 16 else None,
            hovertemplate=f"{masked_label}<extra></extra>"))
    if row_sums_label:
        for s, m in zip(starts, mats, strict=True):
            data.append(go.Scatter(
                x=[x_names[s + m.shape[1]]] * rows, y=y_names, mode="text", showlegend=False,
                text=[f"{v:.3f}" for v in np.nansum(m, axis=1)], textfont=dict(size=9, color=TEXT),
                hovertemplate=f"{row_sums_label}: %{{text}}<extra></extra>"))
    annotations = [dict(x=x_names[s + (w - 1) // 2], y=1.0, yref="paper", yanchor="bottom", text=name,
                        showarrow=False, font=dict(size=11))
                   for s, w, name in zip(starts, widths, block_titles, strict=False)]  # titles: one a block, or none
    tick_cols = [int(s + c) for s, w in zip(starts, widths, strict=True) for c in range(w)]
    return go.Figure(data, dict(
        title=dict(text=title, font=dict(size=13), x=0, y=0.99, yanchor="top"), annotations=annotations,
        height=min(120 + CELL_PX * rows, 720), margin=dict(l=10, r=10, t=50 if block_titles else 34, b=10),
        plot_bgcolor="white", paper_bgcolor="white",
        xaxis=dict(tickvals=[x_names[i] for i in tick_cols], ticktext=[col_labels[c] for w in widths for c in range(w)],
                   showgrid=False, tickfont=dict(size=9), tickangle=0, showticklabels=total <= 48),
        yaxis=dict(tickvals=y_names, ticktext=list(row_labels), autorange="reversed", showgrid=False,
                   tickfont=dict(size=10), showticklabels=rows <= 40),
    ))


def sharpness_figure(head_dims: Sequence[int], curves: dict[str, Sequence[float]], labels: dict,
                     current: int | None = None) -> go.Figure:
    """Mean largest attention weight against the head width, with and without ÷√d_h.

    labels: "d_h", "max", "scaled", "unscaled".
    """
    fig = go.Figure()
    for key, colour in (("scaled", TEST_COLOR), ("unscaled", TRAIN_COLOR)):
        fig.add_trace(go.Scatter(x=list(head_dims), y=list(curves[key]), mode="lines+markers", name=labels[key],
                                 line=dict(color=colour, width=2)))
    if current is not None:
        fig.add_vline(x=current, line=dict(color=GUIDE_COLOR, dash="dot"))
    fig.update_xaxes(type="log")
    return compact_layout(fig, labels["d_h"], labels["max"], height=260)


def variance_figure(head_dims: Sequence[int], measured: dict[str, Sequence[float]], labels: dict,
                    current: int | None = None) -> go.Figure:
    """The measured variance of q·k against the head width, log-log: unit vectors (1/d_h) and unit-variance entries
    (d_h), each with its formula dashed. labels: "d_h", "variance", "unit", "entries", "inverse", "width"."""
    d = np.asarray(head_dims, dtype=float)
    fig = go.Figure()
    for key, formula, values, colour in (("unit", "inverse", 1.0 / d, TEST_COLOR), ("entries", "width", d,
                                                                                      TRAIN_COLOR)):
        fig.add_trace(go.Scatter(x=d, y=list(measured[key]), mode="markers", name=labels[key],
                                 marker=dict(color=colour, size=9)))
        fig.add_trace(go.Scatter(x=d, y=values, mode="lines", name=labels[formula],
                                 line=dict(color=colour, width=1.5, dash="dash")))
    if current is not None:
        fig.add_vline(x=current, line=dict(color=GUIDE_COLOR, dash="dot"))
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log", exponentformat="power")
    return compact_layout(fig, labels["d_h"], labels["variance"], height=260)


def bars_figure(names: Sequence[str], series_: dict[str, Sequence[float]], y_title: str) -> go.Figure:
    """Grouped bars, one group per name (e.g. the notes' softmax scores and weights), values written on them."""
    fig = go.Figure()
    for (label, values), colour in zip(series_.items(), (TRAIN_COLOR, TEST_COLOR), strict=False):
        fig.add_trace(go.Bar(x=list(names), y=list(values), name=label, marker_color=colour,
                             text=[f"{v:.3f}" for v in values], textposition="outside"))
    return compact_layout(fig, "", y_title, height=260)


# ---------- live panels (canvas component) ----------
def loss_panel(title: str, runs: Sequence[tuple[str, Sequence[int], Sequence[float], str]], labels: dict,
               floor: float | None = None, y_max: float | None = None, width: int = 360, height: int = 240) -> dict:
    """The loss curves as a live xy panel; the floor (if any) dashed."""
    items = [series(steps, losses, color=colour, label=name) for name, steps, losses, colour in runs]
    last = max((s[-1] for _, s, _, _ in runs if len(s)), default=1)
    if floor:
        items.append(series([0, last], [floor, floor], color=GUIDE_COLOR, width=1.5, dash=True, label=labels["floor"]))
    return xy_panel(title, items, x_label=labels["step"], y_label=labels["loss"], width=width, height=height,
                    y_range=None if y_max is None else (0.0, y_max))


def attention_panels(maps: Sequence[np.ndarray], tokens: Sequence[str], title: str, causal: bool,
                     size: int = 200) -> list[dict]:
    """One heatmap per layer and head: maps[layer] is (H, T, T); the causal mask's cells drawn as masked."""
    T = len(tokens)
    mask = np.triu(np.ones((T, T), dtype=bool), 1) if causal else None
    return [heatmap_panel(title.format(layer=li + 1, head=hi + 1), m[hi], vmin=0.0, vmax=1.0, mask=mask,
                          row_labels=tokens, col_labels=tokens, width=size, height=size)
            for li, m in enumerate(maps) for hi in range(m.shape[0])]


def _shape(*dims: int) -> str:
    return "(" + ", ".join(str(d) for d in dims) + ")"


def pipeline_figures(stages: dict[str, np.ndarray | None], tokens: Sequence[str], heads: Sequence[int], labels: dict,
                     numbers: bool, main: str | None = None) -> dict[str, go.Figure]:
    """One figure per stage of a sim.transformers.attention.Pipeline (its arrays()), for the chosen heads (indices);
    numbers in the cells when asked for and the sequence has at most ANNOTATE_MAX_TOKENS tokens. The stage `main`
    (the page's main figure) gets taller rows, MAIN_HEIGHT px in all.

    labels: a title template per stage ("x", "q", "k", "v", "raw", "scaled", "masked", "weights", "heads_out",
    "concat", "output") with a {shape} field, plus "head" ("head {h}"), "masked_cell" (hover) and "row_sum".
    """
    T, C = stages["x"].shape
    H, _, dh = stages["q"].shape
    annotate = numbers and T <= ANNOTATE_MAX_TOKENS
    one = len(heads) == 1
    blocks = [] if H == 1 else [labels["head"].format(h=h + 1) for h in heads]
    forbid = None if stages["mask"] is None else ~stages["mask"]
    dims, feats = [str(j) for j in range(dh)], [str(j) for j in range(C)]

    def per_head(key: str, cols: Sequence[str], last: int, stage: str | None = None, **kw) -> go.Figure:
        shape = _shape(T, last) if one else _shape(len(heads), T, last)
        return stage_figure(labels[key].format(shape=shape), [stages[stage or key][h] for h in heads],
                            row_labels=tokens, col_labels=cols, block_titles=blocks, annotate=annotate,
                            masked_label=labels["masked_cell"], **kw)

    def whole(key: str) -> go.Figure:
        return stage_figure(labels[key].format(shape=_shape(T, C)), [stages[key]], row_labels=tokens,
                            col_labels=feats, annotate=annotate)

    figs = {"x": whole("x")}
    for key in ("q", "k", "v"):
        figs[key] = per_head(key, dims, dh)
    figs["raw"] = per_head("raw", tokens, T)
    figs["scaled"] = per_head("scaled", tokens, T)
    figs["masked"] = per_head("masked", tokens, T, stage="scaled", mask=forbid)
    figs["weights"] = per_head("weights", tokens, T, mask=forbid, weights=True, row_sums_label=labels["row_sum"])
    figs["heads_out"] = per_head("heads_out", dims, dh)
    figs["concat"] = whole("concat")
    figs["output"] = whole("output")
    if main:
        lo, hi = MAIN_HEIGHT
        figs[main].update_layout(height=min(max(120 + MAIN_CELL_PX * T, lo), hi))
    return figs


def _labels(n: int) -> list[str]:
    return [str(i) for i in range(n)]


def position_figure(table: np.ndarray, title: str) -> go.Figure:
    """A position-encoding table (positions × features) as a heatmap, one row per position; title has {shape}."""
    return stage_figure(title.format(shape=_shape(*table.shape)), [table], row_labels=_labels(table.shape[0]),
                        col_labels=_labels(table.shape[1]))


def permutation_figures(output: np.ndarray, permuted_output: np.ndarray, tokens: Sequence[str],
                        permuted_tokens: Sequence[str], labels: dict) -> tuple[go.Figure, go.Figure]:
    """The attention output of the tokens and of the permuted tokens, rows labelled by their tokens, on one colour
    scale. labels: "before" and "after", title templates with {shape}."""
    shape = _shape(*output.shape)
    figs = tuple(stage_figure(labels[key].format(shape=shape), [m], row_labels=rows, col_labels=_labels(m.shape[1]))
                 for key, m, rows in (("before", output, tokens), ("after", permuted_output, permuted_tokens)))
    return figs


# ---------- the tiny transformer's live frames ----------
def loss_text(loss: float | None) -> str:
    """A loss to 4 decimals; "—" when there is none yet."""
    return "—" if loss is None else f"{loss:.4f}"


def live_frame(kind: str, runs: Sequence, labels: dict) -> dict:
    """One frame of the lab's live view of its runs (sim.transformers.transformer.RunView): for "train" (one run) its
    loss curve and every layer's and head's attention map; for "compare" (causal, then open) both loss curves on one
    scale with the task's floor, and each run's first-layer maps.

    labels: "plot.step", "plot.loss", "plot.floor", "plot.train_loss", "plot.map" ({layer} {head}), the run names
    "run.causal", "run.open", "run.causal_short", "run.open_short", and the caption templates "live_caption"
    ({step} {loss}) and "compare_caption" ({run} {step} {loss}).
    """
    axes = {"step": labels["plot.step"], "loss": labels["plot.loss"], "floor": labels["plot.floor"]}

    def name(run, short: bool = True) -> str:
        return labels[("run.causal" if run.causal else "run.open") + ("_short" if short else "")]

    if kind == "train":
        (run,) = runs
        panels = [loss_panel(labels["plot.train_loss"], [(labels["plot.loss"], *run.curve, TRAIN_COLOR)], axes,
                             width=400),
                  *attention_panels(run.maps, run.tokens, labels["plot.map"], run.causal)]
        caption = labels["live_caption"].format(step=run.steps, loss=loss_text(run.recent_loss))
        return {"epoch": run.steps, "caption": caption, "panels": panels}
    floor = runs[0].floor
    top = max([max(run.curve[1][:50], default=0.0) for run in runs] + [floor or 0.0, 0.1])
    panels = [loss_panel(name(run, short=False), [(labels["plot.loss"], *run.curve, colour)], axes, floor=floor,
                         y_max=top, width=360, height=250)
              for run, colour in zip(runs, (TEST_COLOR, TRAIN_COLOR), strict=False)]
    for run in runs:
        panels += attention_panels(run.maps[:1], runs[0].tokens, f"{name(run)} · {labels['plot.map']}", run.causal,
                                   size=180)
    caption = " · ".join(labels["compare_caption"].format(run=name(run), step=run.steps,
                                                          loss=loss_text(run.recent_loss)) for run in runs)
    return {"epoch": runs[0].steps, "caption": caption, "panels": panels}
