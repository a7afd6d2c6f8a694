"""Every lab's Plotly and Altair charts go through here: the presenter view's style, and figures for slides.

`plotly_chart(container, fig, key=...)` / `altair_chart(container, chart, key=...)` stand for
`container.plotly_chart(fig, key=...)` / `container.altair_chart(chart, key=...)` (other keywords, e.g.
on_select, pass through). In the presenter view (`?present=1`) the figure gets sim.plots.present's style (a
white card, black type 1.6x larger, thicker lines), and what is downloaded is what is on screen. Every Plotly
chart keeps a small modebar (on hover) whose camera button saves the figure as PNG (twice the pixels) or SVG,
the session's choice from `?figures=png|svg`, named after the lab and the chart.
"""
from __future__ import annotations

import html
import json
import re
from contextlib import nullcontext
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from sim.plots.describe import WORDS, describe
from sim.plots.palette import PALETTE
from sim.plots.present import presenter_chart, presenter_figure
from ui.i18n import lang, t
from ui.layout import CHART_DESC, SR_STYLE
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


# A chart's text summary (sim.plots.describe), under it: visually hidden, read by screen readers (ui.layout.SR_STYLE;
# STYLE takes its element's box out of the page's flow, so there is no gap under the chart)


_WORDS: dict[str, dict[str, str]] = {}  # per language: the catalogue does not change while the app runs


def chart_words() -> dict[str, str]:
    """The words of a chart's summary in the page's language (sim.plots.describe.WORDS's keys: chart.desc.<key>)."""
    code = lang()
    if code not in _WORDS:
        _WORDS[code] = {k: str(t(f"chart.desc.{k}")) for k in WORDS}
    return _WORDS[code]


def summary(fig) -> str:
    """The text summary of `fig` (a Plotly figure or an Altair chart) in the page's language; "" if unreadable. A
    Plotly figure drawn once for every session (Cursor.memo: a class following its teacher) keeps its summary per
    language, so each session's page run does not describe it again."""
    code = lang()
    kept = getattr(fig, "_mlsim_summary", None)
    if isinstance(kept, dict) and code in kept:
        return kept[code]
    try:
        text = describe(fig, chart_words())
    except Exception:  # noqa: BLE001 - a figure the describer cannot read still shows; only its summary is missing
        return ""
    if hasattr(fig, "to_plotly_json"):  # a Plotly figure keeps it (an Altair chart would take it for a property)
        fig._mlsim_summary = {**(kept or {}), code: text}
    return text


def description(container, fig, key: str | None, text: str | None = None) -> str:
    """Put the summary of `fig` (`text`, else computed) under it, as a visually hidden paragraph with an id
    ("<key>-desc"); returns the text."""
    text = summary(fig) if text is None else text
    if not text:
        return ""
    ident = "-".join(p for p in re.split(r"[^0-9A-Za-z_-]+", key or "") if p)
    attrs = f' id="{ident}-desc"' if ident else ""
    # st.html: the text as the characters it is (never Markdown: a title may hold a report's or a file's text)
    container.html(f'<p class="{CHART_DESC}"{attrs} style="{SR_STYLE}">{html.escape(text)}</p>')
    return text


def plotly_chart(container, fig, *, key: str | None = None, config: dict | None = None, **kw):
    """container.plotly_chart(fig, key=key, **kw), in presenter style when presenting, downloadable, with a text
    summary under it for screen readers (description)."""
    if presenting():
        fig = presenter_figure(fig)
    event = container.plotly_chart(fig, key=key, config=plotly_config(key, config), **kw)
    description(container, fig, key)
    return event


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
    """container.altair_chart(chart, key=key, **kw), in presenter style when presenting, with a text summary for
    screen readers (description) and a download button."""
    if presenting():
        chart = presenter_chart(chart)
    text = summary(chart)
    if text and hasattr(chart, "description") and type(chart.description).__name__ == "UndefinedType":
        chart = chart.properties(description=text)  # Vega names the chart's canvas or SVG with it (aria-label)
    if hasattr(chart, "config"):  # the marks and axes out of the accessibility tree: the summary speaks for them
        import altair as alt  # (Vega gives a brush's and an empty layer's marks a role and no name: svg-img-alt)

        chart = chart.copy()
        chart.config = alt.Config() if type(chart.config).__name__ == "UndefinedType" else chart.config
        if type(chart.config.mark).__name__ == "UndefinedType":
            chart.config.mark = alt.MarkConfig()
        chart.config.mark.aria = False
    event = container.altair_chart(chart, key=key, **kw)
    description(container, chart, key, text)
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
