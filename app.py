"""Entry point: routes to the labs with st.navigation and draws the shared sidebar.

pandas is imported here, before any page runs, although no page needs it at once: plotly looks pandas up in
sys.modules without the import lock, so a first import of it in one session's thread (Streamlit imports it
lazily for st.dataframe) while another thread draws a figure handed plotly a half-initialised module
(AttributeError: ... 'pandas' has no attribute 'Series'). Imported at the top, every session's first run waits
until it is complete (about 0.4 s, once per process).
"""
import threading

import pandas  # noqa: F401 - see the docstring
import streamlit as st

from labs import LABS
from sim.threads import configure_threads
from ui.i18n import init_lang, t
from ui.sidebar import device_banner, language_switch

st.set_page_config(page_title="ML Visual Simulator", page_icon=":material/science:", layout="wide")
init_lang()

home = st.Page("labs/home.py", title=t("nav.home"), icon=":material/home:", default=True)  # served at /
pages = [st.Page(lab.file, title=t(f"nav.{lab.stem}"), icon=lab.icon, url_path=lab.url_path) for lab in LABS]

language_switch()
banner = st.sidebar.empty()
st.navigation([home, *pages]).run()
device_banner(banner)  # last, so importing torch never delays the first paint
configure_threads()  # once per process (later calls do nothing), before any Play or Step trains a model


@st.cache_resource(show_spinner=False)
def compile_engine() -> threading.Thread:
    """Once per process: the classification engine's kernels compiled in the background (see warm_up)."""
    from sim.training import warm_up  # here: importing numba would delay the first paint

    thread = threading.Thread(target=warm_up, name="compile-engine", daemon=True)
    thread.start()
    return thread


compile_engine()
