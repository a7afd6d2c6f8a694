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
"""
from __future__ import annotations

import streamlit as st

STAGE = (3, 1)  # figure column : controls column
SECTIONS = "mlsim-sections"  # the key of the container that holds a lab's section switch
HEADER = "mlsim-header"  # the key of the title row
STAGE_KEY = "mlsim-stage"  # the key of the stage's container (tests/test_layout.py finds it by it)
PHONE = 640  # px: Streamlit stacks columns below this width

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
@media (max-width: {PHONE}px) {{
  .stApp [data-testid="stMainBlockContainer"] {{ padding-left: 0.75rem; padding-right: 0.75rem; padding-top: 2.5rem; }}
  .stApp [data-testid="stMain"] h1 {{ font-size: 1.25rem; }}
  .stApp [data-testid="stMain"] button {{ min-height: 24px; min-width: 24px; }}
}}
</style>
"""


def style() -> None:
    """The layout's CSS (every page, main.py)."""
    st.html(STYLE)


def stage(ratio: tuple[int, int] = STAGE) -> tuple:
    """(figure, controls): the section's main figure and, beside it, the controls that change it. The figure's column
    comes first, so a phone shows it first."""
    return tuple(st.container(key=STAGE_KEY).columns(ratio, gap="medium"))
