"""The Code button of a lab's header ("Show me the code"): the file that reproduces the page's run (sim.codegen) as a
download beside Copy link; in the presenter view also the same text in a fold at the end of the page, to be opened on
the projector (a downloaded file would have to be shown from another program)."""
from __future__ import annotations

import streamlit as st

from sim import codegen
from ui import present
from ui.i18n import t


def run_file(page: str, values: dict, link: str) -> tuple[str, str] | None:
    """(file name, text) of the run of page `page` (its key prefix) at its values, made from `link`; None where the lab
    or the section shown has no live run (or its settings cannot train). A filled-in template: cheap every run."""
    lab = codegen.PAGES.get(page)
    if lab is None:
        return None
    try:
        return f"{lab}_run.py", codegen.script(lab, values, link)
    except (LookupError, ValueError):
        return None


def code_button(slot, page: str, values: dict, link: str) -> tuple[str, str] | None:
    """The Code download button in `slot` (the header row's place for it) when the page has a run to write out; returns
    (file name, text) for code_fold, or None (the slot stays empty)."""
    made = run_file(page, values, link)
    if made is None:
        return None
    name, text = made
    slot.download_button(t("code.button"), text, file_name=name, mime="text/x-python", icon=":material/code:",
                         on_click="ignore", key=f"{page}.code_file", help=t("code.help", file=name))
    return made


def code_fold(made: tuple[str, str] | None) -> None:
    """In the presenter view, the file's text in a fold at the end of the page."""
    if made is not None and present.presenting():
        with st.expander(t("code.fold"), icon=":material/code:"):
            st.code(made[1], language="python", line_numbers=True)
