"""Presenter view and hidden controls, for every lab: `?present=1` and `?hide=name,name`.

Both are read from the URL once per session (main.py calls `read_flags` before the page runs) and kept in
the session, so they hold across page switches, and `carry` writes them (and a student's class code) back
into every lab's URL. The presenter view is CSS on top of the normal page (projector-sized type, the
sidebar hidden, high contrast), one button that holds the lab's controls (PageState.widget draws them
into `controls_box`), and keyboard shortcuts for the live labs' run buttons (ui/present_keys.js).
"""
from __future__ import annotations

from pathlib import Path
from string import Template

import streamlit as st

from sim.plots.palette import PALETTE
from ui.i18n import t

ss = st.session_state
PRESENT, HIDE, CLASS = "present", "hide", "class"  # the URL keys
TRUE = ("1", "true", "yes", "on")
FIGURES, FIGURE_FORMATS = "figures", ("png", "svg")  # ?figures=svg: charts download as SVG (ui/charts.py)
_HERE = Path(__file__).parent

# projector-sized type, no sidebar, white on black with yellow accents (readable from the back of a room); the
# controls button opens a box nearly as wide as the screen, so its rows of widgets keep their columns
CSS = Template("""
<style>
html, .stApp { font-size: 26px; }
.stApp, .stApp [data-testid="stHeader"] { background: $black !important; color: $white !important; }
.stApp [data-testid="stMarkdownContainer"] p, .stApp li, .stApp label, .stApp [data-testid="stCaptionContainer"],
.stApp [data-testid="stWidgetLabel"] p { color: $white !important; font-size: 1.15rem !important; }
.stApp [data-testid="stCaptionContainer"] * { color: $rule !important; }
/* an alert keeps its light box (yellow for a warning, ...): its text black on it, not the page's white */
.stApp [data-testid="stAlertContainer"] [data-testid="stMarkdownContainer"],
.stApp [data-testid="stAlertContainer"] [data-testid="stMarkdownContainer"] * { color: $black !important; }
.stApp :focus-visible { outline-color: $highlight !important; }
.stApp h1 { font-size: 1.6rem !important; color: $highlight !important; }
.stApp h2, .stApp h3 { font-size: 2.2rem !important; color: $highlight !important; }
.stApp [data-testid="stMetricValue"] { font-size: 2.6rem !important; }
.stApp button:not([data-testid="stTooltipIcon"] button) { font-size: 1.1rem !important;
  border: 2px solid $highlight !important; background: $black !important; color: $white !important; }
.stApp [data-testid="stTooltipIcon"] svg { color: $white !important; fill: currentColor; }
.stApp button p, .stApp button span { color: inherit !important; font-size: 1.1rem !important; }
.stApp button[kind="primary"] { background: $highlight !important; color: $black !important; }
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stExpandSidebarButton"],
.stApp header[data-testid="stHeader"] { display: none !important; }
.stApp [data-testid="stMainBlockContainer"] { max-width: 100% !important; padding-top: 1rem !important; }
/* the figure and the title above it fit the projector's screen: a canvas as tall as 55 % of it at most */
.stApp [data-testid="stMain"] canvas { max-height: 55vh; width: auto; }  /* PRESENT_MAX_HEIGHT in live_common.js */
[data-testid="stPopoverBody"] { width: min(94vw, 1800px) !important; max-width: none !important;
  max-height: 85vh !important; overflow-y: auto !important; }
</style>
""").substitute(PALETTE)


def read_flags() -> None:
    """`present` and `hide` from the URL into the session (the URL wins when it names them)."""
    q = st.query_params
    if PRESENT in q:
        ss["_present"] = q[PRESENT].strip().lower() in TRUE
    if HIDE in q:
        ss["_hide"] = tuple(dict.fromkeys(n.strip() for n in q[HIDE].split(",") if n.strip()))
    if FIGURES in q and q[FIGURES].strip().lower() in FIGURE_FORMATS:
        ss["_figures"] = q[FIGURES].strip().lower()


def presenting() -> bool:
    return bool(ss.get("_present"))


def hidden() -> tuple[str, ...]:
    return ss.get("_hide", ())


def carry() -> dict[str, str]:
    """The session's classroom keys a lab's URL keeps: presenter view, hidden controls, a student's class."""
    out = {}
    if presenting():
        out[PRESENT] = "1"
    if hidden():
        out[HIDE] = ",".join(hidden())
    if ss.get("_cls.code") and not ss.get("_cls.secret"):
        out[CLASS] = ss["_cls.code"]
    if ss.get("_figures", FIGURE_FORMATS[0]) != FIGURE_FORMATS[0]:
        out[FIGURES] = ss["_figures"]
    return out


def style() -> None:
    """The presenter view's CSS (every page, main.py)."""
    if presenting():
        st.html(CSS)


def in_fragment() -> bool:
    """True while a fragment's body runs (a full run or its own): its widgets must stay inside it.

    Reads Streamlit's per-thread fragment state (not a public API, as ui.components.in_fragment_rerun).
    """
    from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

    try:
        return bool(ThreadState.get().fragment_id)
    except RuntimeError:  # not a script run's thread
        return False


def controls_box(container):
    """The one button the presenter view folds a lab's controls behind (in `container`, beside the title)."""
    return container.popover(t("present.controls"), icon=":material/tune:")


_keys = None


def shortcuts() -> None:
    """Space: Play/Pause, →: Step, r: Reset, for whichever live view is on the page (presenter view only)."""
    global _keys
    if not presenting():
        return
    if _keys is None:
        _keys = st.components.v2.component("mlsim_present_keys", js=(_HERE / "present_keys.js").read_text("utf-8"),
                                           isolate_styles=False)
    _keys(data={}, key="present.keys", height=0)
