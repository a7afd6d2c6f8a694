"""Figures of measured attention runs, each trace named with its source (`measured · CPU · <cpu>`,
`measured · CUDA events · <device>`, `measured · counters (ncu …) · <device>`, `simulated · IO model`, the
paper).

Inputs are the flat rows of sim.gpu.report (run rows and traffic rows); `labels` holds the translated words,
`labels["impl"]` the name of each implementation.
"""
from __future__ import annotations

import re

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sim.plots.curves import compact_layout
from sim.plots.gpu import HEIGHT, L2, NAIVE, TILED, add_line, log_log
from sim.plots.palette import AMBER, GUIDE, PURPLE

COLOURS = {"naive": NAIVE, "tiled_torch": PURPLE, "flash_triton": TILED, "sdpa_flash": L2, "sdpa_math": AMBER,
           "tiled": TILED}
PAPER = GUIDE


def _series(rows: list[dict], value: str) -> dict[tuple[str, str], list[tuple[int, float]]]:
    """(impl, source) -> [(N, value)] sorted by N, for the rows that have the value."""
    out: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for r in rows:
        if r.get(value) is not None:
            out.setdefault((r["impl"], r["source"]), []).append((r["N"], r[value]))
    return {key: sorted(points) for key, points in out.items()}


def _named(labels: dict, impl: str, source: str) -> str:
    return f"{labels['impl'].get(impl, impl)} — {source}"


def scaling_figures(runs: list[dict], simulated: list[dict], labels: dict,
                    height: int = HEIGHT) -> tuple[go.Figure, go.Figure]:
    """Measured time against N, and measured peak memory against N next to the simulator's HBM bytes (log-log),
    `height` px tall."""
    time_fig, memory_fig = go.Figure(), go.Figure()
    for (impl, source), points in _series(runs, "time_ms").items():
        add_line(time_fig, *zip(*points, strict=True), _named(labels, impl, source), COLOURS.get(impl, PAPER))
    for (impl, source), points in _series(runs, "peak_bytes").items():
        add_line(memory_fig, *zip(*points, strict=True), _named(labels, impl, source), COLOURS.get(impl, PAPER))
    two_level = [{**r, "hbm": r["hbm_read_bytes"] + r["hbm_write_bytes"]} for r in simulated
                 if r["model"] == "two_level"]
    for (algo, source), points in _series(two_level, "hbm").items():
        name = labels["sim_hbm"].format(algo=labels["impl"].get(algo, algo))
        add_line(memory_fig, *zip(*points, strict=True), f"{name} — {source}", COLOURS.get(algo, PAPER), "dash",
                 "diamond")
    return (log_log(time_fig, labels["x_n"], labels["y_time"], labels["title_time"], height),
            log_log(memory_fig, labels["x_n"], labels["y_bytes"], labels["title_memory"], height))


def _counters_label(source: str) -> str:
    """A counters source without its kernel count, so that one legend entry covers every bar of a series."""
    return re.sub(r", \d+ kernels", "", source)


def traffic_figure(traffic: list[dict], labels: dict) -> go.Figure:
    """Bytes per implementation and N: measured HBM and L2 (ncu) bars next to the simulator's two- and
    three-level figures (log scale). Rows without counters contribute no bar (the table says why)."""
    fig = go.Figure()
    series: dict[str, dict] = {}  # legend name -> {"x": [], "y": [], "text": [], "colour", "pattern"}
    for r in traffic:
        x = f"{labels['impl'].get(r['impl'], r['impl'])} · N={r['N']:,}"
        if r["model"] == "measured":
            if r["hbm_read_bytes"] is None:
                continue
            bars = [(labels["hbm"], r["hbm_read_bytes"] + r["hbm_write_bytes"], ""),
                    (labels["l2"], r["l2_bytes"], "/")]
            source = _counters_label(r["source"])
        else:
            level = labels[r["model"]]
            bars = [(f"{labels['hbm']} ({level})", r["hbm_read_bytes"] + r["hbm_write_bytes"], "."),
                    (f"{labels['l2']} ({level})", r["l2_bytes"], "x")]
            source = r["source"]
        for what, value, pattern in bars:
            if value is None:
                continue
            entry = series.setdefault(f"{what} — {source}", {"x": [], "y": [], "text": [], "pattern": pattern,
                                                             "colour": PAPER if r["model"] != "measured" else TILED})
            entry["x"].append(x)
            entry["y"].append(value)
            entry["text"].append(r["source"])
    for name, s in series.items():
        fig.add_trace(go.Bar(x=s["x"], y=s["y"], name=name, hovertext=s["text"],
                             marker=dict(color=s["colour"], pattern_shape=s["pattern"])))
    compact_layout(fig, "", labels["y_bytes"], HEIGHT + 80)
    fig.update_yaxes(type="log", exponentformat="SI")
    # the title at the top, the legend under it: its long source labels take a row each in a narrow column
    fig.update_layout(title=dict(text=labels["title_traffic"], font=dict(size=14), x=0, y=1, yref="container",
                                 yanchor="top", pad=dict(t=8, l=8)), margin=dict(t=44 + 19 * len(series)),
                      barmode="group")
    return fig


def throughput_figure(runs: list[dict], labels: dict) -> go.Figure:
    """TFLOP/s of each implementation that ran, without and with the causal mask."""
    fig = go.Figure()
    for causal in (False, True):
        rows = [r for r in runs if r["causal"] == causal and r["tflops_per_s"]]
        for source in dict.fromkeys(r["source"] for r in rows):
            picked = [r for r in rows if r["source"] == source]
            fig.add_trace(go.Bar(x=[labels["impl"].get(r["impl"], r["impl"]) for r in picked],
                                 y=[r["tflops_per_s"] for r in picked],
                                 name=f"{labels['causal' if causal else 'full']} — {source}",
                                 marker=dict(color=TILED if causal else NAIVE, pattern_shape="/" if causal else ""),
                                 text=[f"{r['tflops_per_s']:.3g}" for r in picked], textposition="outside"))
    compact_layout(fig, "", labels["y_tflops"], HEIGHT)
    fig.update_layout(title=dict(text=labels["title_throughput"], font=dict(size=14)), margin=dict(t=90),
                      barmode="group")
    return fig


def fig2_figure(paper: dict, forward: list[dict], forward_backward: list[dict], traffic: list[dict],
                labels: dict) -> go.Figure:
    """The FlashAttention paper's Figure 2 row (A100, forward + backward) next to what was measured here: runtime
    on the left, HBM traffic on the right (measured by counters where there are any, and simulated, forward)."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=(labels["runtime"], labels["traffic"]), horizontal_spacing=0.12)
    names = {"standard": labels["paper_standard"], "flashattention": labels["paper_flash"]}
    fig.add_trace(go.Bar(x=list(names.values()), y=[paper[k]["runtime_ms"] for k in names], marker_color=PAPER,
                         name=labels["paper_source"], legendgroup="paper"), row=1, col=1)
    fig.add_trace(go.Bar(x=list(names.values()), y=[paper[k]["hbm_gb"] for k in names], marker_color=PAPER,
                         name=labels["paper_source"], legendgroup="paper", showlegend=False), row=1, col=2)
    for rows, pass_name, pattern in ((forward, labels["forward"], ""), (forward_backward, labels["forward_backward"],
                                                                         "/")):
        timed = [r for r in rows if r["time_ms"] is not None]
        for source in dict.fromkeys(r["source"] for r in timed):
            picked = [r for r in timed if r["source"] == source]
            fig.add_trace(go.Bar(x=[labels["impl"].get(r["impl"], r["impl"]) for r in picked],
                                 y=[r["time_ms"] for r in picked], name=f"{pass_name} — {source}",
                                 marker=dict(color=[COLOURS.get(r["impl"], PAPER) for r in picked],
                                             pattern_shape=pattern)), row=1, col=1)
    shown = set()  # one legend entry per source
    for r in traffic:
        if r["hbm_read_bytes"] is None or r["model"] == "three_level":
            continue
        source = _counters_label(r["source"]) if r["model"] == "measured" else r["source"]
        fig.add_trace(go.Bar(x=[labels["impl"].get(r["impl"], r["impl"])],
                             y=[(r["hbm_read_bytes"] + r["hbm_write_bytes"]) / 1e9],
                             name=f"{labels['forward']} — {source}", legendgroup=source,
                             showlegend=source not in shown,
                             marker=dict(color=COLOURS.get(r["impl"], PAPER),
                                         pattern_shape="" if r["model"] == "measured" else ".")), row=1, col=2)
        shown.add(source)
    compact_layout(fig, "", labels["y_ms"], HEIGHT + 60)
    fig.update_yaxes(title_text=labels["y_gb"], row=1, col=2)
    fig.update_layout(title=dict(text=labels["title_fig2"], font=dict(size=14)), margin=dict(t=120), barmode="group")
    return fig
