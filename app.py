"""Entry point: routes to the labs with st.navigation and draws the shared sidebar."""
import threading

import streamlit as st

from sim.threads import configure_threads
from ui.i18n import init_lang, t
from ui.labs import LABS
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
