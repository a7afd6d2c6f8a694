"""A generic live view: frames of line charts and heatmaps drawn on canvases, updated in place.

Labs build the panels with sim.plots.panels and send a few frames per fragment rerun (the same
pattern as the classification lab's live_panel); the browser plays them back at a steady pace.
"""
from __future__ import annotations

from ui.components import live_component

_component = live_component("mlsim_live_plots", "live_plots.js", "live_plots.css")


def show_frames(frames: list[dict], *, key: str, seq: int, status: str) -> None:
    """frames: [{"epoch": int (optional), "caption": str, "panels": [panel, ...]}]; seq must change per call."""
    _component(data={"frames": frames, "seq": seq, "status": status}, key=key, height="content")
