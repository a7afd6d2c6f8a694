"""Every live lab's run controls and live view, around one ui.player.Player (the live-run controller).

The page builds a model and a Player for it (keyed by the settings that define the run) and calls
live_view(); the player trains on its own thread, and this fragment shows the newest frames each time
it reruns: while playing, each time the browser asks for more (ui/live_common.js), so the pace of
updates is the browser's and the pace of training the player's. Buttons act on the player; Step, Reset
and a run that stops on its own rerun the whole page so every part of it (curves, metrics, messages)
follows.
"""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from sim.core.live import Cursor, LiveSpec, Runs
from ui.i18n import lang, t
from ui.player import Player

WAIT_S = 0.04  # a playing fragment collects new frames this long before it sends them
POLL_S = 1.0  # a safety net: a playing view whose browser's request for more was lost is rerun by this timer
ss = st.session_state


def current_player(key: str, want: object, build: Callable[[], Player]) -> Player:
    """The session's player for run `key`; a new one (with a new model) when `want` (its settings) changed.

    A player being replaced is paused, so its thread ends and its model can be freed.
    """
    if ss.get(f"{key}.key") != want or f"{key}.player" not in ss:
        old = ss.get(f"{key}.player")
        player = build()  # may raise on bad settings: the old run stays
        if old is not None:
            old.pause()
        ss[f"{key}.player"], ss[f"{key}.key"] = player, want
        ss.pop(f"{key}.seen", None)
    player = ss[f"{key}.player"]
    player.lang = lang()
    return player


def _play(key: str) -> None:
    ss[f"{key}.player"].play()
    st.rerun()  # from a callback this reruns the whole page: the fragment's timer starts


def _pause(key: str) -> None:
    ss[f"{key}.player"].pause()
    st.rerun()


def _step(key: str) -> None:
    ss[f"{key}.player"].step_once()
    st.rerun()


def _reset(key: str) -> None:
    """Stop, and have the next full run build a fresh model from the same settings.

    The player is not deleted here: the button lives in a fragment, and a browser may rerun that
    fragment alone first, which must still find a player to read.
    """
    ss[f"{key}.player"].pause()
    ss.pop(f"{key}.key", None)
    st.rerun()


def run_controls(prefix: str, key: str, player: Player, stopped: bool, **step_label):
    """Play/Pause, Step and Reset in a row (labels `<prefix>.play` ...); returns the row for extra buttons.

    `stopped` (diverged or finished) disables Play and Step; `step_label` fills the Step label.
    """
    bar = st.container(horizontal=True)
    if player.playing:
        bar.button(t(f"{prefix}.pause"), on_click=_pause, args=(key,), icon=":material/pause:", key=f"{key}.pause")
    else:
        bar.button(t(f"{prefix}.play"), on_click=_play, args=(key,), icon=":material/play_arrow:", type="primary",
                   disabled=stopped, key=f"{key}.play")
    bar.button(t(f"{prefix}.step", **step_label), on_click=_step, args=(key,), icon=":material/skip_next:",
               disabled=stopped, key=f"{key}.step")
    bar.button(t(f"{prefix}.reset"), on_click=_reset, args=(key,), icon=":material/restart_alt:", key=f"{key}.reset")
    return bar


def live_view(prefix: str, key: str, player: Player, show: Callable[[list[dict], int, str], None],
              stopped: Callable[[], bool], extra_buttons: Callable[[object], None] | None = None,
              messages: Callable[[], None] | None = None, **step_label) -> None:
    """Run controls and the newest frames of `player`'s run, in a fragment that reruns while it plays.

    show(frames, seq, status) draws the frames (status: "playing", "paused" or "diverged"/"stopped" as
    the page words it through `stopped`); messages() writes what the page says about the run's state.
    """

    @st.fragment(run_every=POLL_S if player.playing else None)
    def panel():
        playing, done = player.playing, stopped()
        bar = run_controls(prefix, key, player, done, **step_label)
        if extra_buttons:
            extra_buttons(bar)
        seen = ss.get(f"{key}.seen", 0)
        got = player.frames(after=seen, timeout=WAIT_S if playing else 0.0)
        if got:
            ss[f"{key}.seen"] = got[-1][0]
        frames = [{**f, "run": player.serial, "n": s} for s, f in (got or [player.latest()])]
        if player.error is not None:
            st.error(t("live.failed"), icon=":material/error:")
        if messages:
            messages()
        seq = ss[f"{key}.seq"] = ss.get(f"{key}.seq", 0) + 1
        show(frames, seq, "stopped" if done else "playing" if playing else "paused")
        if ss.get(f"{key}.was_playing") and not player.playing:  # it stopped by itself (diverged, finished, failed)
            ss[f"{key}.was_playing"] = False
            st.rerun()  # the whole page: buttons, messages and panels follow
        ss[f"{key}.was_playing"] = player.playing
        # while playing, the browser asks for the next frames once it has taken these in (the view's
        # "pull" trigger reruns this fragment): a slow browser is sent only what it can draw

    panel()


# ---------- the one entry point of a live lab: a shared run (sim.core.live), this session's cursor on it ----------
RUNS = Runs()  # the process's trajectories: every session of the server is a thread of this one process
BUSY = 0.8  # a playing run computed at less than this share of the speed asked says the server is shared


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


def _act(key: str, what: str) -> None:
    getattr(ss[f"{key}.cursor"], what)()
    st.rerun()  # from a callback this reruns the whole page: every part of it follows the cursor


def live_lab(spec: LiveSpec, show: Callable[[list[dict], int, str], None], *, prefix: str,
             errors: tuple[type[BaseException], ...] = (ValueError,),
             bad_settings: Callable[[BaseException], None] | None = None,
             messages: Callable[[Cursor], None] | None = None,
             extra_buttons: Callable[[object], None] | None = None, **step_label) -> Cursor | None:
    """A live lab's run and its live view: the run of spec.settings (built by spec.build(), a sim.core.live.LiveRun,
    shared with every session of the process that has the same settings), Play/Pause/Step/Reset of this session's
    cursor on it (buttons labelled `<prefix>.play` ..., `step_label` filling the Step label), messages(cursor)
    and the newest frames drawn by show(frames, seq, status) in a fragment that reruns while it plays. Each frame
    is the run's frame with its "step", "run" and "n". status: "playing", "paused" or "stopped" (diverged,
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
            extra_buttons(bar)
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
        show(frames, seq, "stopped" if cursor.stopped else "playing" if cursor.playing else "paused")
        if ss.get(f"{key}.was_playing") and not cursor.playing:  # it stopped by itself (diverged, finished, failed)
            ss[f"{key}.was_playing"] = False
            st.rerun()  # the whole page: buttons, messages and panels follow
        ss[f"{key}.was_playing"] = cursor.playing
        # while playing, the browser asks for the next frames once it has taken these in (the view's "pull"
        # trigger reruns this fragment): a slow browser is sent only what it can draw

    panel()
    return cursor


def busy(cursor: Cursor) -> None:
    """Say so when the server trains other runs as well and this one gets less than it asks for."""
    others, rate = RUNS.scheduler.running(), cursor.shown_rate()
    if others > 1 and 0 < rate < BUSY * cursor.rate:
        st.caption(t("live.busy", n=others, rate=f"{rate:.1f}", asked=f"{cursor.rate:.0f}"))
