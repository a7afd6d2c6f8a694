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
