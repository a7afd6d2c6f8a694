"""The one page layout of every lab: figure first.

A lab is a simulator, not a document: the figure you change and the controls that change it share the first screen
(a 1366x768 laptop, a 1280x720 projector, the presenter view, a phone). Each page is

    header   the title on one line, the one-sentence intro, Copy link (PageState.frame)
    switch   the lab's sections, when it has several (PageState.sections)
    stage    the section's main figure in a wide column, the controls that change it in a narrow column beside it
             (PageState.stage): the main controls on view, the rest folded (PageState.more)
    below    secondary figures, then the longer explanation, in the order the section draws them

On a phone (< 640 px) Streamlit stacks the stage's columns in their order: the figure first at the screen's width,
then its controls. STYLE trims Streamlit's empty top padding, keeps the title on one line, lets no figure overflow
the screen's width, and gives the app's own tap targets WCAG 2.2's 24x24 CSS px.

Accessible to every student: STYLE gives the grey text Streamlit draws (captions, help, disabled text, placeholders,
chart axes) and the selected option of pills WCAG AA's contrast (4.5:1) on the theme's backgrounds, and every control a
visible focus ring; `style` also mounts ui/page_a11y.js, which keeps <html lang> the page's language and the sidebar's
menu a valid list for screen readers.
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from sim.plots.palette import PALETTE, rgb
from ui.i18n import lang

STAGE = (3, 1)  # figure column : controls column
SECTIONS = "mlsim-sections"  # the key of the container that holds a lab's section switch
HEADER = "mlsim-header"  # the key of the title row
STAGE_KEY = "mlsim-stage"  # the key of the stage's container (tests/test_layout.py finds it by it)
PHONE = 640  # px: Streamlit stacks columns below this width
A11Y = "mlsim-a11y"  # the key of ui/page_a11y.js's component (hidden: it draws nothing)
HTML_LANG = {"zh": "zh-CN", "en": "en"}  # <html lang> of each of the app's languages
# WCAG AA contrast (4.5:1) for text on the light theme's white and its greys (the sidebar's, a widget's). Streamlit
# draws captions in its text colour at 60 % opacity (3.9:1 on white) and its charts' axis text in AXIS_GREY (3.8:1):
# both become MUTED, the palette's neutral grey (6.2:1 on white, 5.4:1 on a widget's grey). It draws the text of a
# selected pill or segment in the theme's blue (the palette's) on a 10 % tint of it (3.95:1): SELECTED is that blue
# darkened to 85 % (5.1:1 there).
MUTED, FOCUS = PALETTE["neutral"], PALETTE["blue"]
SELECTED = "#" + "".join(f"{round(c * 0.85):02x}" for c in rgb(PALETTE["blue"]))
AXIS_GREY = (128, 132, 149)  # Streamlit's chart theme (its gray70): Plotly writes it as rgb(), Vega as hex
AXIS_RGB, AXIS_HEX = "rgb({}, {}, {})".format(*AXIS_GREY), "#" + "".join(f"{c:02x}" for c in AXIS_GREY)
_HERE = Path(__file__).parent
# visually hidden, read by screen readers (the sr-only pattern): a chart's summary (ui.charts, class CHART_DESC)
SR_STYLE = ("position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);"
            "clip-path:inset(50%);white-space:nowrap;border:0")
CHART_DESC = "mlsim-chart-desc"

STYLE = f"""
<style>
/* the empty band Streamlit keeps above a page (6rem) for its header bar, which here holds only the menu button */
.stApp [data-testid="stMainBlockContainer"] {{ padding: 2.75rem 1.5rem 3rem; }}
.stApp [data-testid="stHeader"] {{ height: 2.5rem; min-height: 2.5rem; }}
/* the title on one line, beside its buttons on every screen: a long one is cut short with "…" */
.stApp [data-testid="stMain"] h1 {{ font-size: 1.75rem; line-height: 1.25; padding: 0; white-space: nowrap;
  overflow: hidden; text-overflow: ellipsis; }}
.stApp .st-key-{HEADER} {{ flex-wrap: nowrap; }}
.stApp .st-key-{HEADER} > * {{ min-width: 0; }}
.stApp .st-key-{HEADER} > :not(:first-child) {{ flex-shrink: 0; }}
/* pills and segmented buttons wrap in a narrow column (Streamlit keeps them on one row, scrolling) */
.stApp [data-testid="stMain"] [data-testid="stButtonGroup"] > div {{ flex-wrap: wrap; }}
.stApp [data-testid="stMain"] [data-testid="stButtonGroup"] > div > button {{ max-width: 100%; height: auto; }}
.stApp [data-testid="stMain"] [data-testid="stButtonGroup"] > div > button p {{ white-space: normal; }}
/* a lab's section switch stays one row (the figure's place does not depend on how many sections fit): on a narrow
   screen it scrolls sideways on its own */
.stApp .st-key-{SECTIONS} [data-testid="stButtonGroup"] > div {{ flex-wrap: nowrap; overflow-x: auto;
  scrollbar-width: thin; }}
.stApp .st-key-{SECTIONS} [role="radiogroup"] > button {{ flex-shrink: 0; }}
/* no figure wider than its column: a canvas or an image scales down (keeping its shape), never scrolls sideways */
.stApp [data-testid="stMain"] canvas, .stApp [data-testid="stMain"] img {{ max-width: 100%; height: auto; }}
/* WCAG AA contrast (see MUTED): also in a popover, which Streamlit draws outside .stApp */
body [data-testid="stCaptionContainer"], body [data-testid="stCaptionContainer"] p,
body [data-testid="stWidgetLabel"] [disabled], body label[disabled], body [aria-disabled="true"] p,
body button:disabled, body button:disabled p, body [data-baseweb="select"] [aria-disabled="true"],
body [data-testid="stTooltipContent"] {{ color: {MUTED}; opacity: 1; }}
body input::placeholder, body textarea::placeholder {{ color: {MUTED}; opacity: 1; }}
body [data-testid="stButtonGroup"] button[data-selected="true"],
body [data-testid="stButtonGroup"] button[data-selected="true"] p {{ color: {SELECTED}; }}
/* the axis text of Streamlit's chart theme (AXIS_GREY): Plotly writes it in a style attribute, Vega in a fill one */
body .js-plotly-plot text[style*="fill: {AXIS_RGB}"] {{ fill: {MUTED} !important; }}
body svg text[fill="{AXIS_HEX}"] {{ fill: {MUTED}; }}
/* a visible focus ring on every control reached with the keyboard (Streamlit turns most outlines off) */
body :focus-visible {{ outline: 2px solid {FOCUS} !important; outline-offset: 2px; }}
.stApp .st-key-{A11Y} {{ display: none; }}
/* a chart's summary: its element's box out of the page's flow too (no gap under the chart) */
[data-testid="stElementContainer"]:has(.{CHART_DESC}) {{ {SR_STYLE} }}
@media (max-width: {PHONE}px) {{
  .stApp [data-testid="stMainBlockContainer"] {{ padding-left: 0.75rem; padding-right: 0.75rem; padding-top: 2.5rem; }}
  .stApp [data-testid="stMain"] h1 {{ font-size: 1.25rem; }}
  .stApp [data-testid="stMain"] button {{ min-height: 24px; min-width: 24px; }}
}}
</style>
"""


_a11y = None


def style() -> None:
    """The layout's CSS and ui/page_a11y.js (every page, main.py): the script is mounted hidden in the sidebar, whose
    elements persist across page switches (the main area's would sit above a lab's stage)."""
    global _a11y
    st.html(STYLE)
    if _a11y is None:
        _a11y = st.components.v2.component("mlsim_page_a11y", js=(_HERE / "page_a11y.js").read_text("utf-8"),
                                           isolate_styles=False)
    with st.sidebar:
        _a11y(data={"lang": HTML_LANG[lang()]}, key=A11Y, height=0)


def stage(ratio: tuple[int, int] = STAGE) -> tuple:
    """(figure, controls): the section's main figure and, beside it, the controls that change it. The figure's column
    comes first, so a phone shows it first."""
    return tuple(st.container(key=STAGE_KEY).columns(ratio, gap="medium"))
