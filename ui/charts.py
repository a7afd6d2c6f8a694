"""Every lab's Plotly and Altair charts go through here: the presenter view's style, and figures for slides.

`plotly_chart(container, fig, key=...)` / `altair_chart(container, chart, key=...)` stand for
`container.plotly_chart(fig, key=...)` / `container.altair_chart(chart, key=...)` (other keywords, e.g.
on_select, pass through). In the presenter view (`?present=1`) the figure gets sim.plots.present's style (a
white card, black type 1.6x larger, thicker lines), and what is downloaded is what is on screen. Every Plotly
chart keeps a small modebar (on hover) whose camera button saves the figure as PNG (twice the pixels) or SVG,
the session's choice from `?figures=png|svg`, named after the lab and the chart.
"""
from __future__ import annotations

import json
import re
from contextlib import nullcontext
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from sim.plots.palette import PALETTE
from sim.plots.present import presenter_chart, presenter_figure
from ui.present import FIGURE_FORMATS, presenting

_HERE = Path(__file__).parent
# the modebar keeps the download button (and reset, for charts one can zoom): no zoom/lasso/select clutter
MODEBAR_REMOVE = ["zoom", "pan", "select", "lasso", "zoomIn", "zoomOut", "autoScale", "zoom2d", "pan2d",
                  "select2d", "lasso2d", "zoomIn2d", "zoomOut2d", "autoScale2d", "toggleSpikelines",
                  "hoverClosestCartesian", "hoverCompareCartesian", "zoom3d", "pan3d", "orbitRotation",
                  "tableRotation", "resetCameraLastSave3d", "hoverClosest3d", "hoverClosestGl2d",
                  "hoverClosestPie", "toggleHover", "resetViews", "resetViewMapbox"]


def figure_format() -> str:
    """"png" or "svg": how this session's charts download (the URL's ?figures=, kept by ui.present)."""
    fmt = st.session_state.get("_figures", FIGURE_FORMATS[0])
    return fmt if fmt in FIGURE_FORMATS else FIGURE_FORMATS[0]


def _lab() -> str:
    """The current page's URL path ("optimizers"), or "" outside a multipage run."""
    ctx = get_script_run_ctx()
    pages = getattr(ctx, "pages_manager", None)
    if pages is None:
        return ""
    page = pages.get_pages().get(pages.current_page_script_hash) or {}
    return str(page.get("url_pathname") or "")


def file_name(key: str | None) -> str:
    """A readable file name (no extension) from the lab and the chart's key: "optimizers-fig-paths"."""
    parts = [p for p in re.split(r"[^0-9A-Za-z_]+", key or "") if p]
    lab = _lab()
    if lab and len(parts) > 1:
        parts = parts[1:]  # the key's first part is the lab's prefix ("opt"): the lab's name says it better
    return "-".join(([lab] if lab else []) + parts) or "figure"


def plotly_config(key: str | None, config: dict | None = None) -> dict:
    """The Plotly config of every chart: the caller's, with the modebar available and the download set up."""
    fmt = figure_format()
    out = {k: v for k, v in (config or {}).items() if k != "displayModeBar"}
    out["displaylogo"] = False
    out["modeBarButtonsToRemove"] = sorted(set(out.get("modeBarButtonsToRemove", [])) | set(MODEBAR_REMOVE))
    out["toImageButtonOptions"] = {"format": fmt, "filename": file_name(key), "scale": 2 if fmt == "png" else 1}
    return out


def plotly_chart(container, fig, *, key: str | None = None, config: dict | None = None, **kw):
    """container.plotly_chart(fig, key=key, **kw), in presenter style when presenting, downloadable."""
    if presenting():
        fig = presenter_figure(fig)
    return container.plotly_chart(fig, key=key, config=plotly_config(key, config), **kw)


_download = None


def _download_button(container, key: str | None) -> None:
    """A small button under an Altair chart that saves it (ui/chart_download.js): Streamlit turns vega-embed's
    own "Save as SVG / PNG" menu off, and its toolbar's "Download as PNG" has no SVG and a time-stamped name."""
    global _download
    if _download is None:
        js = f"const PALETTE = {json.dumps(PALETTE)};\n" + (_HERE / "chart_download.js").read_text("utf-8")
        _download = st.components.v2.component("mlsim_chart_download", js=js, isolate_styles=False)
    fmt = figure_format()
    with container if hasattr(container, "__enter__") else nullcontext():  # `st` itself is no container
        _download(data={"name": file_name(key), "format": fmt, "scale": 2 if fmt == "png" else 1},
                  key=f"{key}.download" if key else None, height="content")


def altair_chart(container, chart, *, key: str | None = None, **kw):
    """container.altair_chart(chart, key=key, **kw), in presenter style when presenting, with a download button."""
    if presenting():
        chart = presenter_chart(chart)
    event = container.altair_chart(chart, key=key, **kw)
    _download_button(container, key)
    return event


def bar_chart(container, rows: dict, *, x: str, y: str, color: str, height: int, key: str):
    """Horizontal bars of rows[x] (counts) per rows[y] (categories, in their order), as an Altair chart (so it
    gets the presenter style); what st.bar_chart(horizontal=True) draws."""
    import altair as alt

    values = [dict(zip(rows, v, strict=True)) for v in zip(*rows.values(), strict=True)]
    chart = alt.Chart(alt.Data(values=values)).mark_bar(color=color).encode(
        x=alt.X(f"{x}:Q", title=None, axis=alt.Axis(tickMinStep=1, format="d")),
        y=alt.Y(f"{y}:N", title=None, sort=None), tooltip=[f"{y}:N", f"{x}:Q"]).properties(height=height)
    return altair_chart(container, chart, key=key, width="stretch")
