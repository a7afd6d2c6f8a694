"""Two vectors dragged on a canvas: a component that draws a, b, the arrows made from them and every number beside
the picture (computed in the browser as the vectors move, as sim.linalg.vectors.analyse does), and sends the dragged
coordinates back into the page's parameters (and so into the URL)."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from labs.foundations.schema import PAGE, SCHEMA
from sim.linalg.vectors import KINDS
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


def texts() -> dict:
    """The texts the pad fills in itself, in the page's language, placeholders unfilled (their values are numbers the
    pad formats)."""
    return {"numbers": t("fnd.vec.numbers"), "angle": t("fnd.vec.angle"), "zero": t("fnd.vec.zero"),
            "kind": {kind: t(f"fnd.vec.kind.{kind}") for kind in KINDS}}


def vector_pad(state: PageState, a, b, k: float) -> None:
    p = state.params["ax"]
    labels = {"a": t("fnd.vec.fig.a"), "b": t("fnd.vec.fig.b"), "help": t("fnd.vec.pad_help"),
              "a11y": t("fnd.vec.a11y")}  # the canvas's name, {a} {b} {sum} {k} {scaled} filled by the pad
    _component(data=vector_pad_payload(a, b, k, p.hi, p.step, labels, texts()), key=KEY, height="content",
               on_moved_change=_moved)
