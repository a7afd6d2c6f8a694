"""The class at a glance, on the teacher's own screen (not the projector): a tile per student with their lab, whether
they follow or explore, the settings where they differ from the class's, their step, the run's key figures and a
picture of it (the boundary as a thumbnail, else a sparkline of the key figure). Refreshed once every BOARD_S; sorted
as the teacher asks; a click on a tile shows that student's run to the class (as the inbox does). The tiles come from
the class store (server.classroom.Classroom.board), so the class's students may be on any app process."""
import json
from pathlib import Path

import streamlit as st

from server import classroom as cr
from sim.plots.palette import PALETTE
from ui import classroom
from ui.i18n import t

ss = st.session_state
BOARD_S = 1.0
HIGHER_IS_BETTER = {"val_acc"}  # figures sorted from the largest
_HERE = Path(__file__).parent
_component = None


def _mount(**kw):
    global _component
    if _component is None:
        script = f"const PALETTE = {json.dumps(PALETTE)};\n" + (_HERE / "board.js").read_text("utf-8")
        _component = st.components.v2.component("mlsim_class_board", js=script, isolate_styles=False)
    return _component(**kw)


def rank(tiles: list[dict], by: str) -> list[dict]:
    """The tiles in the teacher's order: as they joined, or by the key figure (the best first; a loss from the
    smallest, an accuracy from the largest), students without one last."""
    if by != "figure":
        return sorted(tiles, key=lambda b: b["n"])

    def key(b: dict):
        figures = b.get("figures") or []
        if not figures:
            return (1, 0.0, b["n"])
        name, value = figures[0]
        return (0, -value if name in HIGHER_IS_BETTER else value, b["n"])
    return sorted(tiles, key=key)


def tile_view(b: dict, state: cr.ClassState, labs: dict) -> dict:
    """What one tile shows, in the teacher's words (the JS draws it as text: a name is never markup)."""
    lab = b.get("lab")
    params = b.get("params") or {}
    diff = [f"{k}={v}" for k, v in params.items() if lab == state.lab and state.params.get(k, v) != v][:6]
    away = b.get("ago") is None or b["ago"] > cr.SEEN_S
    return {"id": b["student"], "name": b["name"] or t("room.student_n", n=b["n"]),
            "lab": t(f"nav.{lab}") if lab in labs else (lab or "–"),
            "mode": t("room.tile_follow" if b.get("follow", True) else "room.tile_explore"),
            "follow": bool(b.get("follow", True)), "diff": diff, "away": away,
            "step": t("room.tile_step", n=b["step"]) if b.get("step") is not None else "",
            "figures": [f"{t(f'room.fig.{k}')} {v:.3g}" for k, v in b.get("figures") or []],
            "spark": b.get("spark") or [], "thumb": b.get("thumb")}


def _pick() -> None:
    ss["room.picked"] = (ss.get("room.dashboard") or {}).get("pick")


@st.fragment(run_every=BOARD_S)
def board(labs: dict, current: str) -> None:
    """The tiles, redrawn once every BOARD_S (one read of the store and one component for the whole class)."""
    code, secret = classroom.code(), ss.get("_cls.secret")
    if not code or not secret:
        return
    try:
        tiles, state = classroom.room().board(code, secret), classroom.room().state(code)
    except cr.ClassroomError as e:
        st.warning(classroom.problem_text(e.reason), icon=":material/warning:")
        return
    picked = ss.pop("room.picked", None)
    chosen = next((b for b in tiles if b["student"] == picked), None)
    if chosen is not None:  # that student's run, to the class (from the next run of the whole app)
        classroom.show_to_class({"lab": chosen.get("lab"), "params": chosen.get("params") or {},
                                 "step": chosen.get("step")}, labs, current)
    by = st.segmented_control(t("room.sort"), ("joined", "figure"), default="joined", key="room.sort",
                              format_func=lambda v: t(f"room.sort.{v}")) or "joined"
    views = [tile_view(b, state, labs) for b in rank(tiles, by)]
    if not views:
        st.caption(t("room.board_empty"))
    _mount(data={"tiles": views, "pick_label": t("room.tile_pick")}, key="room.dashboard", on_pick_change=_pick)
