"""The attention lab's comparison: the same tiny transformer trained with and without the causal mask, side by side
(one live run stepping both: labs.attention.training)."""
from collections.abc import Callable

import streamlit as st

from labs.attention import training
from sim.core.live import LiveSpec
from ui.i18n import t
from ui.urlstate import PageState


def compare_section(state: PageState) -> None:
    figure, side = state.stage()
    text, probe = training.model_controls(state, side, ("task", "lr"))
    panel = training.trained_panel("compare", state, text, figure, probe)
    st.markdown(t("att.compare_intro"))
    if panel is not None:
        st.markdown(t("att.compare_explain"))
        if reading := training.compare_text(*panel):  # the step on screen, paused only
            st.markdown(reading)


def bench_spec(seed: int | None = None) -> tuple[LiveSpec, Callable[[list[dict]], object]]:
    """The comparison's default run (seed: another training seed) and what a playing page does with its frames."""
    return training.bench_spec(seed, kind="compare")
