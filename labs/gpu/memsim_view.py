"""The GPU lab's step-by-step animation: a canvas component that plays the IO simulator's events in the browser.

Python sends the whole animation once (sim.plots.memsim_anim); Play, Step, Reset and the scrubber act in the
browser without a round trip.
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from labs.gpu.course import tensor_core_note
from sim.gpu.memsim import MAX_EVENTS, IOReport
from sim.plots.memsim_anim import animation_payload, largest_animated_n
from ui.components import live_component
from ui.i18n import t

_component = live_component("mlsim_memsim_view", "memsim_view.js", "memsim_view.css", Path(__file__).parent)

# texts the browser shows as they are or fills in ({tile}, {bytes}, {i}, ...): keys gpu.anim.<name>
LABELS = ("play", "pause", "step", "back", "reset", "scrub", "position", "caption",
          "kernel.qk", "kernel.mask", "kernel.softmax", "kernel.pv", "kernel.fused",
          "tile.rows", "tile.cols", "tile.cell",
          "do.load", "do.load_l2", "do.load_hit", "do.store", "do.compute", "do.compute_fused", "do.skip",
          "hbm", "l2", "l2_hit", "l2_miss", "sm", "sm_program", "compute", "masked",
          "counters", "hbm_read", "hbm_write", "l2_traffic", "sram_traffic", "of_total",
          "keys", "queries", "state.todo", "state.computed", "state.skipped", "state.written", "current",
          "a11y.diagram", "a11y.grid", "a11y.live", "a11y.sep")


def labels(report: IOReport, speed: int) -> dict[str, str]:
    """Every text of the animation in the user's language; the ones about the whole run already filled in."""
    out = {name: t(f"gpu.anim.{name}") for name in LABELS}
    out["ready"] = t("gpu.anim.ready", algo=t(f"gpu.anim.algo.{report.algo}"), N=report.N, d=report.d,
                     block_m=report.block_m, block_n=report.block_n)
    out["grid"] = t("gpu.anim.grid", t_r=report.t_r, t_c=report.t_c, block_m=report.block_m, block_n=report.block_n)
    out["speed"] = t("gpu.anim.speed", speed=speed)
    return out


def show_animation(report: IOReport, *, speed: int, key: str) -> None:
    """The animation of `report`'s first (batch, head) at `speed` steps per second, or a notice when it is too long."""
    if report.events_omitted:
        st.info(t("gpu.anim.too_large", N=f"{report.N:,}", steps=f"{report.events_total:,}",
                  limit=f"{MAX_EVENTS:,}", n=f"{largest_animated_n(report):,}"))
        return
    _component(data={**animation_payload(report, labels(report, speed)), "speed": speed}, key=key, height="content")
    st.caption(tensor_core_note())  # the animation's compute unit is a Tensor Core: what one of its operations does
