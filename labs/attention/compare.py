"""The attention lab's comparison: the same tiny transformer trained with and without the causal mask, side by side
(one live run stepping both: labs.attention.training)."""
from collections.abc import Callable

import streamlit as st

from labs.attention import training
from sim.core.live import Cursor, LiveSpec
from sim.plots.attention import loss_text
from sim.transformers.claims import CompareReading, compare_reading
from ui.i18n import t
from ui.urlstate import PageState


def compare_section(state: PageState) -> None:
    figure, side = state.stage()
    text, probe = training.model_controls(state, side, ("task", "lr"))
    panel = training.trained_panel("compare", state, text, figure, probe)
    st.markdown(t("att.compare_intro"))
    if panel is not None:
        st.markdown(t("att.compare_explain"))
        if reading := compare_text(*panel):  # the step on screen, paused only
            st.markdown(reading)


def compare_text(cursor: Cursor, probe: str) -> str:
    """What the masked and the open model show at the step on screen (sim.transformers.claims.compare_reading), in
    the page's words; "" before the first step, after a divergence (already said) and while the view plays on past
    the cursor's step (a press of Play or Pause reruns the whole page)."""
    if cursor.playing:
        return ""
    with cursor.model() as run:
        if run.steps == 0 or run.stopped:
            return ""
        return reading_text(compare_reading(run, probe))


def reading_text(r: CompareReading) -> str:
    """A CompareReading in the page's words: the losses against the best honest loss (or each other, for a text),
    the open model's weight on the next position and, for a generated task, both models' exact answers."""
    floor = "—" if r.floor is None else f"{r.floor:.4f}"
    common = {"step": r.step, "open": loss_text(r.open), "causal": loss_text(r.causal), "floor": floor}
    parts = [t(f"att.cmp.loss.{r.loss}", ratio=f"{max(r.open, r.causal) / max(min(r.open, r.causal), 1e-12):.1f}",
               **common)]
    if r.masked:
        parts.append(t(f"att.cmp.masked.{r.masked}", **common))
    parts.append(t(f"att.cmp.att.{r.attention}", share=f"{r.next_weight:.0%}", head=r.head))
    if r.generation:
        parts.append(t(f"att.cmp.gen.{r.generation}", open_acc=f"{r.open_acc:.0%}", causal_acc=f"{r.causal_acc:.0%}"))
    return " ".join(parts)


def bench_spec(seed: int | None = None) -> tuple[LiveSpec, Callable[[list[dict]], object]]:
    """The comparison's default run (seed: another training seed) and what a playing page does with its frames."""
    return training.bench_spec(seed, kind="compare")
