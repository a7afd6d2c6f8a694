"""The app's page script (app.py serves it, `streamlit run app.py`): routes to the labs with st.navigation and draws
the shared sidebar.

pandas is imported here, before any page runs, although no page needs it at once: plotly looks pandas up in
sys.modules without the import lock, so a first import of it in one session's thread (Streamlit imports it
lazily for st.dataframe) while another thread draws a figure handed plotly a half-initialised module
(AttributeError: ... 'pandas' has no attribute 'Series'). Imported at the top, every session's first run waits
until it is complete (about 0.4 s, once per process).
"""
import importlib
from pathlib import Path

import pandas  # noqa: F401 - see the docstring
import streamlit as st

from labs import GROUPS, LABS
from sim.core.threads import configure_threads
from ui import classroom, layout, present
from ui.i18n import init_lang, t
from ui.sidebar import device_banner, language_switch

# the icon from a file: a ":material/..." page icon makes the browser fetch its SVG from Google's font servers, and
# nothing may be fetched from outside (an SVG file reaches the browser inline, as a data: URL)
ICON = Path(__file__).resolve().parent / "assets" / "icon.svg"
st.set_page_config(page_title="ML Visual Simulator", page_icon=str(ICON), layout="wide")
init_lang()

home = st.Page("labs/home.py", title=t("nav.home"), icon=":material/home:", default=True)  # served at /
menu = {"": [home]}  # the home page heads the menu, then a section per group of labs
for group in GROUPS:
    menu[t(f"nav.group.{group}")] = [st.Page(lab.file, title=t(f"nav.{lab.stem}"), icon=lab.icon, url_path=lab.url_path)
                                     for lab in LABS if lab.group == group]


def lab_pages() -> dict[str, classroom.LabPage]:
    """Every lab as the class follows it: its page script and schema (imported when a class needs them)."""
    mods = {lab.url_path: importlib.import_module(f"labs.{lab.name}.schema") for lab in LABS}
    return {lab.url_path: classroom.LabPage(lab.url_path, lab.file, mods[lab.url_path].PAGE, mods[lab.url_path].SCHEMA,
                                            getattr(mods[lab.url_path], "QUIET", None)) for lab in LABS}


classroom.register(lab_pages)
classroom.greet()  # what this tab's keeper handed back: a reloaded teacher's class
present.read_flags()  # ?present=1, ?hide=a,b: kept for the session
layout.style()
present.style()
classroom.join_from_url()  # ?class=CODE: this session follows that class
language_switch()
banner = st.sidebar.empty()
page = st.navigation(menu, expanded=True)  # every lab in sight, none behind "View more"
if classroom.code():  # in a class: a teacher's change goes out, a student takes the class's before the page draws
    classroom.take_show(classroom.lab_pages(), page.url_path)  # a student's run the teacher shows the class
    classroom.publish(classroom.lab_pages(), page.url_path, with_step=False)
    classroom.follow(classroom.lab_pages(), page.url_path)
    classroom.sidebar(classroom.lab_pages(), page.url_path)
notice = classroom.message()
classroom.keeper()  # the browser's side: keeps a teacher's class in the tab
page.run()
if classroom.is_teacher():  # the teacher's settings as the page left them become the class's
    classroom.publish(classroom.lab_pages(), page.url_path)
    classroom.message(notice)  # that publish may find the store gone: said now, not at the next page run
elif classroom.is_student():  # the student's tile of the class at a glance
    classroom.report(classroom.lab_pages(), page.url_path)
device_banner(banner)  # last, so importing torch never delays the first paint
configure_threads()  # once per process (later calls do nothing), before any Play or Step trains a model

# once per process: the classification engine's kernels compiled on a thread of their own (imported here, after the
# page ran: importing numba would delay the first paint)
from sim.nets.training import warm_up_in_background  # noqa: E402

warm_up_in_background()
