"""The canvas components (live_common.js: colours, frame player, + the component's own script) and
the loop that feeds them."""
import json
import time
from collections.abc import Callable
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ui.i18n import t

_HERE = Path(__file__).parent


def live_component(name: str, script: str, stylesheet: str):
    """A Streamlit v2 component whose JS is live_common.js followed by `script` (files in ui/)."""
    # the stylesheet travels inside the script (the component writes it into its own <style>),
    # which works the same whether or not the component is isolated in a shadow root
    style = json.dumps((_HERE / stylesheet).read_text(encoding="utf-8"))
    js = "\n".join([f"const STYLE = {style};", (_HERE / "live_common.js").read_text(encoding="utf-8"),
                    (_HERE / script).read_text(encoding="utf-8")])
    # plain DOM (not a shadow root), so page-level tools and the browser tests can see the canvases
    return st.components.v2.component(name, js=js, isolate_styles=False)


def in_fragment_rerun() -> bool:
    """True when only a fragment is rerunning: st.rerun(scope="fragment") raises in a full run.

    Reads Streamlit's script-run context (not a public API); the live loops need it to continue
    with the next bounded chunk of training without rerunning the whole page.
    """
    ctx = get_script_run_ctx()
    return bool(ctx and ctx.fragment_ids_this_run)


def run_controls(prefix: str, *, playing: bool, stopped: bool, set_playing, step, reset, run: tuple = (),
                 step_args: tuple = (), key: str | None = None, **step_label):
    """Play/Pause, Step and Reset of a live training run, in a row; returns the row for extra buttons.

    Labels are `<prefix>.play` etc.; callbacks get `run` (which run, for pages with several) first;
    `stopped` (diverged or finished) disables Play and Step; `step_label` fills the Step label.
    """
    bar = st.container(horizontal=True)
    keyed = (lambda name: f"{key}.{name}") if key else (lambda name: None)
    if playing:
        bar.button(t(f"{prefix}.pause"), on_click=set_playing, args=(*run, False), icon=":material/pause:",
                   key=keyed("pause"))
    else:
        bar.button(t(f"{prefix}.play"), on_click=set_playing, args=(*run, True), icon=":material/play_arrow:",
                   type="primary", disabled=stopped, key=keyed("play"))
    bar.button(t(f"{prefix}.step", **step_label), on_click=step, args=(*run, *step_args),
               icon=":material/skip_next:", disabled=stopped, key=keyed("step"))
    bar.button(t(f"{prefix}.reset"), on_click=reset, args=run, icon=":material/restart_alt:", key=keyed("reset"))
    return bar


def restart(prefix: str) -> None:
    """Reset's callback: stop, and have the next full run build a fresh model from the same settings.

    The model is not deleted here: the button lives in a fragment, and a browser may rerun that
    fragment alone, which must still find a model to read. st.rerun() from a callback reruns the
    whole page, so every part of it (curves, metrics, messages) follows the new model.
    """
    st.session_state[f"{prefix}.playing"] = False
    st.session_state.pop(f"{prefix}.key", None)
    st.rerun()


def collect_frames(playing: bool, step: Callable[[], None], snapshot: Callable[[], dict],
                   stopped: Callable[[], bool], budget_s: float, max_frames: int) -> list[dict]:
    """One bounded chunk of a live run: while playing, step() then snapshot() until the time budget, the frame
    cap or stopped(); never empty (a paused or stopped run sends its current state)."""
    frames = []
    deadline = time.perf_counter() + budget_s
    while playing and len(frames) < max_frames and time.perf_counter() < deadline and not stopped():
        step()
        frames.append(snapshot())
    return frames or [snapshot()]


def next_seq(key: str) -> int:
    """A new sequence number for the live component's data (it redraws only when the number changes)."""
    st.session_state[key] = st.session_state.get(key, 0) + 1
    return st.session_state[key]


def continue_live(playing: bool, stopped: bool, playing_key: str) -> None:
    """After a chunk is shown: a run that stopped while playing stops playing with a full rerun (the buttons and
    messages follow); a playing run starts its next chunk right away."""
    if playing and stopped:
        st.session_state[playing_key] = False
        st.rerun()
    elif playing and in_fragment_rerun():
        st.rerun(scope="fragment")
