"""Pictures of a shape trace: the dataflow as a flow diagram, the steps as a table, the KV cache as bars.

Nodes are the traced inputs (ids -1, -2, ...) and the steps (ids 0, 1, ...); an edge runs from each
source to the step that reads it. Rows are depths (longest path from the inputs), columns are lanes:
a tensor that is read again far below (the residual stream) keeps its lane free down to its reader,
so every edge runs straight down its source's lane and then one diagonal step into its target.
"""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from sim.plots.curves import WHITE
from sim.plots.palette import ALARM, BLUE, GOOD, GUIDE, INK, NEUTRAL, ORANGE, rgba, tint
from sim.transformers.shapes import LAYOUT_OPS, ShapeStep

ROW_PX = 40  # one depth level; lanes share the width the page gives
BOX_W, BOX_H = 0.9, 0.72  # node box in lane / row units
COLOURS = {  # fill, border
    "input": (tint(NEUTRAL, 0.2), NEUTRAL),
    "matmul": (tint(BLUE, 0.17), BLUE),  # linear, matmul: where the FLOPs are
    "layout": (tint(GUIDE, 0.07), GUIDE),  # view, transpose, ...: no arithmetic
    "embedding": (tint(GOOD, 0.17), GOOD),
    "other": (tint(ORANGE, 0.2), ORANGE),  # element-wise, norms, softmax
}
MATMUL_OPS = {"linear", "matmul", "mm", "bmm", "addmm", "baddbmm", "scaled_dot_product_attention"}
HIGHLIGHT = ALARM


def kind(step: ShapeStep) -> str:
    if step.op in MATMUL_OPS:
        return "matmul"
    if step.op == "embedding":
        return "embedding"
    return "layout" if step.op in LAYOUT_OPS else "other"


def shape_text(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def human_bytes(n: int) -> str:
    """Bytes in binary units: 320 B, 1.5 KiB, 2.0 GiB."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError  # the loop returns at PiB


def gigabytes(n: int) -> str:
    """Bytes in decimal gigabytes (10⁹ B), as the article writes them: 140 GB, 1,120 GB."""
    return f"{n / 1e9:,.0f} GB"


def human_count(n: int | None) -> str:
    """1234 -> 1.23 k, 1.5e9 -> 1.50 G; None -> '?'."""
    if n is None:
        return "?"
    for value, unit in ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= value:
            return f"{n / value:.3g} {unit}"
    return str(n)


def short_name(step: ShapeStep) -> str:
    """What the node is called: a leaf module's own name (q_proj, ln1), else the op (view, matmul)."""
    return step.name.rsplit(".", 1)[-1] if step.name == step.module else step.op


def _readers(steps: list[ShapeStep]) -> dict[int, list[int]]:
    """node -> the steps that read it."""
    readers: dict[int, list[int]] = {}
    for i, s in enumerate(steps):
        for src in s.sources:
            readers.setdefault(src, []).append(i)
    return readers


def _depths(steps: list[ShapeStep], n_inputs: int, readers: dict[int, list[int]]) -> dict[int, int]:
    """Longest path from the inputs; a constant (a mask, positions) sits just above its first reader."""
    depth = {-1 - k: 0 for k in range(n_inputs)}
    live = set(depth)  # nodes that depend on an input
    for i, s in enumerate(steps):
        if any(src in live for src in s.sources):
            live.add(i)
            depth[i] = 1 + max(depth[src] for src in s.sources if src in live)
    for i in reversed(range(len(steps))):
        if i not in live:
            below = [depth[r] for r in readers.get(i, []) if r in depth]
            depth[i] = min(below) - 1 if below else 1 + max((depth[s] for s in steps[i].sources), default=-1)
    top = min(depth.values(), default=0)  # a long chain of constants may start above the inputs
    return {node: d - top for node, d in depth.items()}


def flow_layout(steps: list[ShapeStep], n_inputs: int) -> dict[int, tuple[int, int]]:
    """(lane, depth) of every node."""
    readers = _readers(steps)
    depth = _depths(steps, n_inputs, readers)
    lanes: list[tuple[int, int]] = []  # per lane: (last node, depth until which it is taken)
    place: dict[int, tuple[int, int]] = {}
    for node in sorted(depth, key=lambda n: (depth[n], n)):
        d = depth[node]
        sources = steps[node].sources if node >= 0 else ()
        # continue a source's lane when that source is still the lane's last node and its edges are done
        lane = next((place[s][0] for s in sources if s in place and lanes[place[s][0]] == (s, d - 1)), None)
        if lane is None:
            free = [k for k, (_, until) in enumerate(lanes) if until < d]
            near = place[sources[0]][0] if sources and sources[0] in place else 0
            lane = min(free, key=lambda k: (abs(k - near), k)) if free else len(lanes)
            if lane == len(lanes):
                lanes.append((node, d))
        until = max([d] + [depth[r] - 1 for r in readers.get(node, [])])  # the lane carries its edges down
        lanes[lane] = (node, until)
        place[node] = (lane, d)
    return place


def _hover(step: ShapeStep, labels: dict) -> str:
    ins = ", ".join(shape_text(s) for s in step.in_shapes)
    memory = labels["view_note"] if step.view else human_bytes(step.bytes)
    return (f"<b>{step.name}</b> · {step.op}<br>{ins} → <b>{shape_text(step.out_shape)}</b><br>"
            f"{labels['params']}: {step.params:,} · {labels['flops']}: {human_count(step.flops)} · "
            f"{labels['bytes']}: {memory}<br><i>{step.code[:90]}</i>")


def flow_figure(steps: list[ShapeStep], input_shapes: Sequence[Sequence[int]], labels: dict,
                highlight: Sequence[int] = (), block: tuple[str, int] | None = None,
                rows_shown: int | None = None) -> go.Figure:
    """The traced dataflow, top to bottom. Nodes in `highlight` get a red border.

    block: (module path of the drawn block, how many times it repeats) frames that block's nodes.
    rows_shown: at most this many levels on view (the figure as tall as they need, every row as tall as ever); the
    rest is reached by dragging the diagram up.
    labels: "input", "params", "flops", "bytes", "view_note", "block".
    """
    place = flow_layout(steps, len(input_shapes))
    shapes, xs, ys, texts, hovers = [], [], [], [], []
    for node, (lane, d) in place.items():
        if node < 0:
            colour, name, shape = COLOURS["input"], labels["input"], input_shapes[-1 - node]
            hover = f"{labels['input']} {shape_text(shape)}"
        else:
            step = steps[node]
            colour, name, shape = COLOURS[kind(step)], short_name(step), step.out_shape
            hover = _hover(step, labels)
        hot = node in highlight
        shapes.append(dict(type="rect", x0=lane - BOX_W / 2, x1=lane + BOX_W / 2, y0=-d - BOX_H / 2, y1=-d + BOX_H / 2,
                           fillcolor=colour[0], layer="below",
                           line=dict(color=HIGHLIGHT if hot else colour[1], width=2.5 if hot else 1,
                                     dash="dot" if node >= 0 and steps[node].view else "solid")))
        xs.append(lane)
        ys.append(-d)
        texts.append(f"<b>{name}</b><br>{shape_text(shape)}")
        hovers.append(hover)
    ex, ey, ax, ay = [], [], [], []
    for i, step in enumerate(steps):
        lane, d = place[i]
        for src in step.sources:
            s_lane, s_d = place[src]
            # straight down the source's lane, then one diagonal step into the target's top
            ex += [s_lane, s_lane, lane, None]
            ey += [-s_d - BOX_H / 2, -(d - 1) - BOX_H / 2, -d + BOX_H / 2, None]
            ax.append(lane)
            ay.append(-d + BOX_H / 2 + 0.06)
    if block:
        path, repeats = block
        rows = [(place[i][1], place[i][0]) for i, s in enumerate(steps) if s.module.startswith(path)]
        if rows:
            top, bottom = min(r for r, _ in rows), max(r for r, _ in rows)
            right = max(lane for _, lane in rows)
            shapes.insert(0, dict(type="rect", x0=-0.55, x1=right + 0.55, y0=-bottom - 0.55, y1=-top + 0.55,
                                  fillcolor=rgba(BLUE, 0.05), line=dict(color=tint(BLUE, 0.45), width=1, dash="dash"),
                                  layer="below"))
            xs.append(right + 0.5)
            ys.append(-top + 0.75)
            texts.append(f"<i>{labels['block'].format(path=path, n=repeats)}</i>")
            hovers.append("")
    n_lanes = max(lane for lane, _ in place.values()) + 1
    n_rows = max(d for _, d in place.values()) + 1
    fig = go.Figure([
        go.Scatter(x=ex, y=ey, mode="lines", line=dict(color=GUIDE, width=1.2), hoverinfo="skip"),
        go.Scatter(x=ax, y=ay, mode="markers", marker=dict(symbol="triangle-down", size=7, color=NEUTRAL),
                   hoverinfo="skip"),
        go.Scatter(x=xs, y=ys, mode="markers+text", text=texts, hovertext=hovers, hoverinfo="text",
                   textfont=dict(size=11, color=INK), cliponaxis=False,
                   marker=dict(symbol="square", size=26, opacity=0)),
    ], layout=dict(shapes=shapes))
    shown = min(n_rows, rows_shown or n_rows)
    fig.update_layout(template=WHITE, showlegend=False, height=ROW_PX * shown + 40,
                      margin=dict(l=10, r=10, t=25, b=10),
                      hoverlabel=dict(align="left"), dragmode="pan")
    fig.update_xaxes(visible=False, range=[-0.6, n_lanes - 0.4 + (0.9 if block else 0)], fixedrange=True)
    fig.update_yaxes(visible=False, range=[-shown + 0.4, 0.8], fixedrange=shown == n_rows)
    return fig


def step_table(steps: list[ShapeStep], labels: dict) -> pd.DataFrame:
    """One row per step. labels: column titles "module", "op", "in", "out", "params", "flops", "bytes",
    "code", and "view_note" (the memory cell of a view)."""
    return pd.DataFrame({
        labels["module"]: [s.name for s in steps],
        labels["op"]: [s.op for s in steps],
        labels["in"]: [" ".join(shape_text(x) for x in s.in_shapes) for s in steps],
        labels["out"]: [shape_text(s.out_shape) for s in steps],
        labels["params"]: [s.params for s in steps],
        labels["flops"]: [human_count(s.flops) for s in steps],
        labels["bytes"]: [labels["view_note"] if s.view else human_bytes(s.bytes) for s in steps],
        labels["code"]: [s.code for s in steps],
    })


def kv_figure(options: Sequence[tuple[int, int]], chosen: int | None, labels: dict) -> go.Figure:
    """KV-cache bytes for each KV-head count (1 = multi-query ... n_head = plain multi-head); `chosen` in red.

    labels: "kv_heads", "bytes", "mqa", "mha".
    """
    heads = [k for k, _ in options]
    names = [f"{k} · {labels['mqa']}" if k == 1 else f"{k} · {labels['mha']}" if k == heads[-1] else str(k)
             for k in heads]
    fig = go.Figure(go.Bar(
        x=names, y=[b for _, b in options], text=[human_bytes(b) for _, b in options], textposition="outside",
        marker_color=[HIGHLIGHT if k == chosen else COLOURS["matmul"][1] for k in heads], cliponaxis=False,
        hovertemplate=f"{labels['kv_heads']}: %{{x}}<br>{labels['bytes']}: %{{text}}<extra></extra>"))
    fig.update_layout(template=WHITE, height=280, margin=dict(l=55, r=10, t=30, b=45),
                      xaxis_title=labels["kv_heads"], yaxis_title=labels["bytes"])
    fig.update_xaxes(type="category")
    fig.update_yaxes(tickformat="~s", ticksuffix="B")
    return fig
