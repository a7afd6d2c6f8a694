"""The one entry point of every live lab: live_lab(spec, show, ...).

The page describes its run (sim.core.live.LiveSpec: the settings that define it, how to build it); live_lab opens
this session's cursor on the process's shared trajectory of those settings (computed once for every session that
has them, on the scheduler's workers) and shows Play/Pause/Step/Reset and the newest frames in a fragment that
reruns while it plays: each time the browser asks for more (ui/live_common.js), so the pace of updates is the
browser's and the pace of training the scheduler's. Buttons act on the cursor and rerun the whole page, so every
part of it (curves, metrics, messages) follows the cursor's step; so does a run that stops on its own.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

import streamlit as st

from sim.core.live import Cursor, LiveSpec, Runs
from ui.i18n import lang, t

WAIT_S = 0.04  # a playing fragment collects new frames this long before it sends them
POLL_S = 1.0  # a safety net: a playing view whose browser's request for more was lost is rerun by this timer
ss = st.session_state
RUNS = Runs()  # the process's trajectories: every session of the server is a thread of this one process
BUSY = 0.8  # a playing run computed at less than this share of the speed asked says the server is shared
DRAWN_KEEP = 512  # frames drawn for the live views, kept for every session showing the same run and step
_drawn: OrderedDict[tuple, dict] = OrderedDict()
_drawn_lock = threading.Lock()


def _cursor(spec: LiveSpec) -> Cursor:
    """This session's cursor on the trajectory of spec.settings (shared with every session that has the same), a
    new one when they changed; spec.build() may raise on bad settings, and then the session's cursor stays."""
    key = spec.key
    if ss.get(f"{key}.want") != spec.settings or f"{key}.cursor" not in ss:
        cursor = RUNS.open(spec)
        old = ss.get(f"{key}.cursor")
        if old is not None:
            old.pause()
        ss[f"{key}.cursor"], ss[f"{key}.want"] = cursor, spec.settings
    return ss[f"{key}.cursor"]


def cursor_of(key: str) -> Cursor | None:
    """This session's cursor of live run `key`, if it has opened one."""
    return ss.get(f"{key}.cursor")


def _act(key: str, what: str) -> None:
    getattr(ss[f"{key}.cursor"], what)()
    st.rerun()  # from a callback this reruns the whole page: every part of it follows the cursor


def live_lab(spec: LiveSpec, show: Callable[[list[dict], int, str, Cursor], None], *, prefix: str,
             errors: tuple[type[BaseException], ...] = (ValueError,),
             bad_settings: Callable[[BaseException], None] | None = None,
             messages: Callable[[Cursor], None] | None = None,
             extra_buttons: Callable[[object, Cursor], None] | None = None, **step_label) -> Cursor | None:
    """A live lab's run and its live view: the run of spec.settings (built by spec.build(), a sim.core.live.LiveRun,
    shared with every session of the process that has the same settings), Play/Pause/Step/Reset of this session's
    cursor on it (buttons labelled `<prefix>.play` ..., `step_label` filling the Step label), messages(cursor)
    and the newest frames drawn by show(frames, seq, status, cursor) in a fragment that reruns while it plays.
    Each frame is the run's frame with its "step", "run" and "n". status: "playing", "paused" or "stopped" (diverged,
    finished). Returns the cursor (`with cursor.model() as run:` reads the run at the cursor's step), or None when
    the first settings were bad.

    Bad settings (spec.build raises one of `errors`): bad_settings(e) says so, and the session keeps its old run.
    """
    key = spec.key
    try:
        cursor = _cursor(spec)
    except errors as e:
        if bad_settings is None:
            raise
        bad_settings(e)
        cursor = ss.get(f"{key}.cursor")
        if cursor is None:
            return None
    cursor.speed, cursor.step_size = spec.speed, spec.step_size

    @st.fragment(run_every=POLL_S if cursor.playing else None)
    def panel():
        done = cursor.stopped
        bar = st.container(horizontal=True)
        if cursor.playing:
            bar.button(t(f"{prefix}.pause"), on_click=_act, args=(key, "pause"), icon=":material/pause:",
                       key=f"{key}.pause")
        else:
            bar.button(t(f"{prefix}.play"), on_click=_act, args=(key, "play"), icon=":material/play_arrow:",
                       type="primary", disabled=done, key=f"{key}.play")
        bar.button(t(f"{prefix}.step", **step_label), on_click=_act, args=(key, "step_once"),
                   icon=":material/skip_next:", disabled=done, key=f"{key}.step")
        bar.button(t(f"{prefix}.reset"), on_click=_act, args=(key, "reset"), icon=":material/restart_alt:",
                   key=f"{key}.reset")
        if extra_buttons:
            extra_buttons(bar, cursor)
        run, seen = ss.get(f"{key}.seen", (None, -1))
        got = cursor.frames(after=seen if run == cursor.serial else -1, timeout=WAIT_S if cursor.playing else 0.0)
        ss[f"{key}.seen"] = (cursor.serial, got[-1][0])
        frames = [{**f, "step": s, "run": cursor.serial, "n": s} for s, f in got]
        if cursor.error is not None:
            st.error(t("live.failed"), icon=":material/error:")
        if cursor.playing:
            busy(cursor)
        if messages:
            messages(cursor)
        seq = ss[f"{key}.seq"] = ss.get(f"{key}.seq", 0) + 1
        show(frames, seq, "stopped" if cursor.stopped else "playing" if cursor.playing else "paused", cursor)
        if ss.get(f"{key}.was_playing") and not cursor.playing:  # it stopped by itself (diverged, finished, failed)
            ss[f"{key}.was_playing"] = False
            st.rerun()  # the whole page: buttons, messages and panels follow
        ss[f"{key}.was_playing"] = cursor.playing
        # while playing, the browser asks for the next frames once it has taken these in (the view's "pull"
        # trigger reruns this fragment): a slow browser is sent only what it can draw

    panel()
    return cursor


def drawn_once(spec: LiveSpec, frames: list[dict], draw: Callable[[dict], dict], *extra: Hashable) -> list[dict]:
    """[draw(f) for f in frames], each frame drawn once for every session that shows spec's run at that step in this
    language (`extra`: what else the drawing depends on); each session's own "step", "run" and "n" go back on it.
    A class of 30 following its teacher draws each frame once, not 30 times."""
    out = []
    for f in frames:
        key = (spec.key, spec.settings, f["step"], lang(), extra)
        with _drawn_lock:
            done = _drawn.get(key)
        if done is None:
            done = draw(f)
            with _drawn_lock:
                _drawn[key] = done
                while len(_drawn) > DRAWN_KEEP:
                    _drawn.popitem(last=False)
        out.append({**done, "step": f["step"], "run": f["run"], "n": f["n"]})
    return out


def busy(cursor: Cursor) -> None:
    """Say so when the server trains other runs as well and this one gets less than it asks for."""
    others, rate = RUNS.scheduler.running(), cursor.shown_rate()
    if others > 1 and 0 < rate < BUSY * cursor.rate:
        st.caption(t("live.busy", n=others, rate=f"{rate:.1f}", asked=f"{cursor.rate:.0f}"))
