"""The generalisation lab's cross-validation folds, one by one: Play / Pause / Step over sim's frames."""
import streamlit as st

from labs.generalization import labels
from sim.fitting.generalization import CurveData, Fold
from sim.plots.generalization import cv_frame
from ui.components import in_fragment_rerun
from ui.i18n import t
from ui.live_plots import show_frames

CV_TICK_S = 0.8  # one fold per tick, slow enough to follow
ss = st.session_state


def cv_start() -> None:
    ss["gen.cv.shown"] = 1
    ss["gen.cv.playing"] = True
    st.rerun()


def cv_pause() -> None:
    """Stop the folds' animation; a full rerun if it was playing, so its fragment's timer stops too."""
    if ss.get("gen.cv.playing"):
        ss["gen.cv.playing"] = False
        st.rerun()


def cv_toggle() -> None:
    if ss.get("gen.cv.playing"):
        cv_pause()
    else:
        cv_start()


def cv_step(k: int) -> None:
    ss["gen.cv.shown"] = ss["gen.cv.shown"] % k + 1
    cv_pause()


def cv_view(folds: list[Fold], data: CurveData, k: int, key: tuple) -> None:
    """The folds one by one: each fold's points and curve, and its score joining the others."""
    if ss.get("gen.cv.key") != key:  # new data or settings: show the finished result
        ss["gen.cv.key"], ss["gen.cv.shown"], ss["gen.cv.playing"] = key, k, False

    @st.fragment(run_every=CV_TICK_S if ss.get("gen.cv.playing") else None)
    def panel():
        playing = ss.get("gen.cv.playing", False)
        if playing and in_fragment_rerun():
            ss["gen.cv.shown"] = min(ss["gen.cv.shown"] + 1, k)
        shown = ss["gen.cv.shown"]
        bar = st.container(horizontal=True)
        # one Play/Pause button, as in ui.live_run.live_lab: two would swap places while the page reruns
        bar.button(t("gen.pause" if playing else "gen.cv.play"), on_click=cv_toggle,
                   icon=":material/pause:" if playing else ":material/play_arrow:",
                   type="secondary" if playing else "primary", key="gen.cv.play")
        bar.button(t("gen.cv.step"), on_click=cv_step, args=(k,), icon=":material/skip_next:", key="gen.cv.step")
        ss["gen.cv.seq"] = ss.get("gen.cv.seq", 0) + 1
        show_frames([cv_frame(data, folds, shown, labels.cv())], key="gen.cv.view", seq=ss["gen.cv.seq"],
                    status="playing" if playing else "paused")
        if playing and shown >= k:
            ss["gen.cv.playing"] = False
            st.rerun()  # whole page, so this fragment's timer stops

    panel()
