"""Two vectors dragged on a canvas: a component that draws a, b and what the engine computed from them, and sends
the dragged coordinates back into the page's parameters (and so into the URL)."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from labs.foundations.schema import PAGE, SCHEMA
from sim.linalg.vectors import VectorReport
from sim.plots.foundations import vector_pad_payload
from ui.components import live_component
from ui.i18n import t
from ui.urlstate import PageState, set_values

KEY = "fnd.pad"
_component = live_component("mlsim_vector_pad", "vector_pad.js", "vector_pad.css", Path(__file__).parent)
ss = st.session_state


def _moved() -> None:
    """The pad's new a and b, held to the sliders' range and step, become the page's values."""
    moved = (ss.get(KEY) or {}).get("moved") or {}
    params = {p.name: p for p in SCHEMA}
    values = {}
    try:
        for name, (x, y) in (("a", moved["a"]), ("b", moved["b"])):
            for axis, v in (("x", x), ("y", y)):
                p = params[f"{name}{axis}"]
                values[p.name] = round(min(p.hi, max(p.lo, round(float(v) / p.step) * p.step)), 1)
    except (KeyError, TypeError, ValueError):
        return  # not two pairs of numbers: nothing moves
    set_values(PAGE, SCHEMA, values)


def vector_pad(state: PageState, r: VectorReport, container=st) -> None:
    p = state.params["ax"]
    labels = {"a": t("fnd.vec.fig.a"), "b": t("fnd.vec.fig.b"), "help": t("fnd.vec.pad_help")}
    with container:
        _component(data=vector_pad_payload(r.a, r.b, r.total, r.scaled, r.projection, p.hi, p.step, labels), key=KEY,
                   height="content", on_moved_change=_moved)
