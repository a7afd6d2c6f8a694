"""A generic live view: frames of line charts and heatmaps drawn on canvases, updated in place.

Labs build the panels with sim.plots.panels and send a few frames per fragment rerun (the same
pattern as the classification lab's live_panel); the browser plays them back at a steady pace.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable

from sim.core.live import LiveSpec
from ui import live_run
from ui.components import live_component
from ui.i18n import t

_component = live_component("mlsim_live_plots", "live_plots.js", "live_plots.css")


A11Y_WORDS = ("xy", "heatmap", "at", "value", "sep", "then", "join", "step", "panel")


def a11y_words() -> dict[str, str]:
    """What a screen reader hears of the panels, in the page's language: templates the view fills with the frame's
    titles, axis names and numbers (ui/live_common.js panelName, live_plots.js sayPlots)."""
    return {k: str(t(f"live.a11y.{k}")) for k in A11Y_WORDS}


def show_frames(frames: list[dict], *, key: str, seq: int, status: str) -> None:
    """frames: [{"epoch": int (optional), "caption": str, "panels": [panel, ...]}]; seq must change per call."""
    _component(data={"frames": frames, "seq": seq, "status": status, "a11y": a11y_words()}, key=key,
               height="content")


def frames_view(spec: LiveSpec, draw: Callable[[dict], dict], *extra: Hashable, key: str | None = None,
                stopped: str = "stopped") -> live_run.Show:
    """The show() a live lab gives ui.live_run.live_lab when its view is this component: spec's frames drawn by
    draw(frame), once for every session at that step (live_run.drawn_once; `extra`: what else the drawing depends
    on), as component `key` (default "<spec.key>.view"). A run that stopped by itself is shown as `stopped`
    ("diverged" where that is the only way the run stops)."""
    def show(frames: list[dict], seq: int, status: str, _cursor) -> None:
        show_frames(live_run.drawn_once(spec, frames, draw, *extra), key=key or f"{spec.key}.view", seq=seq,
                    status=stopped if status == "stopped" else status)
    return show
