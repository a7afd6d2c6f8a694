"""The one entry point of every live lab: live_lab(spec, show, ...).

The page describes its run (sim.core.live.LiveSpec: the settings that define it, how to build it); live_lab opens
this session's cursor on the process's shared trajectory of those settings (computed once for every session that
has them, on the scheduler's workers) and shows Play/Pause/Step/Reset and the newest frames in a fragment. While it
plays, the browser asks for the next frames each time it has taken the last ones in (ui/live_common.js), so the pace
of updates is the browser's and the pace of training the scheduler's. It asks on the view's own channel
(server/live_channel.py: a WebSocket to this process, no Streamlit rerun per update) where the app serves one, else
by rerunning the fragment (AppTest, `streamlit run main.py`). Both are the same Feed: this session's cursor, drawn by
the lab's show(). Buttons act on the cursor and rerun the whole page, so every part of it (curves, metrics,
messages) follows the cursor's step; so does a run that stops on its own.
"""
from __future__ import annotations

import dataclasses
import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

import streamlit as st
from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.script_run_context import SCRIPT_RUN_CONTEXT_ATTR_NAME

from server import live_channel
from sim.core.live import Cursor, LiveSpec, Runs
from ui import classroom
from ui.components import mounting
from ui.i18n import lang, t

WAIT_S = 0.04  # a playing fragment collects new frames this long before it sends them
POLL_S = 1.0  # a safety net: a playing view whose browser's request for more was lost is rerun by this timer
CHANNEL_POLL_S = 4.0  # with a channel, the fragment still reruns this often while playing (messages, busy)
ss = st.session_state
RUNS = Runs()  # the process's trajectories: every session of the server is a thread of this one process
BUSY = 0.8  # a playing run computed at less than this share of the speed asked says the server is shared
DRAWN_KEEP = 512  # frames drawn for the live views, kept for every session showing the same run and step
_drawn: OrderedDict[tuple, dict] = OrderedDict()
_drawn_lock = threading.Lock()
_SEQ = itertools.count(1)  # update numbers, unique in the process (a view tells a new update by its number)
Show = Callable[[list[dict], int, str, Cursor], None]


class Feed:
    """This session's live view of one cursor: the frames sent so far and the lab's show(), for the fragment and the
    channel alike. Its lock is held while the cursor is read or moved (the buttons take it too), never while the
    session's state is: a button's callback runs holding that state, and a show() reads it. `drawing` makes the two
    callers of show(), the page's run and the channel's thread, take turns (draw): both read and write the session's
    state (a lab's show() keeps what it drew last), and a page rerun may come while the channel draws. Only draw takes
    it, and nothing is held while waiting for it, so it cannot deadlock with the buttons or the session's state."""

    def __init__(self, cursor: Cursor):
        self.cursor = cursor
        self.lock = threading.RLock()
        self.seen: tuple[int | None, int] = (None, -1)  # (cursor serial, step) of the newest frame sent
        self.show: Show | None = None  # the lab's, from the newest render
        self.ctx = None  # the session's script context, from the newest render
        self.behind: tuple | None = None  # what a view not playing said it shows, behind its cursor (update)
        self.drawing = threading.Lock()

    def draw(self, show: Show, frames: list[dict], seq: int, status: str) -> None:
        """show(frames, seq, status, cursor), one caller at a time (the page's run or the channel's thread)."""
        with self.drawing:
            show(frames, seq, status, self.cursor)

    def frames(self) -> tuple[list[dict], int, str]:
        """The frames since the newest sent (while playing, after a short wait for more), each with its "step", "run"
        and "n"; the update's number; the status: "playing", "paused" or "stopped"."""
        cursor = self.cursor
        run, seen = self.seen
        got = cursor.frames(after=seen if run == cursor.serial else -1, timeout=WAIT_S if cursor.playing else 0.0)
        self.seen = (cursor.serial, got[-1][0])
        frames = [{**f, "step": s, "run": cursor.serial, "n": s} for s, f in got]
        return frames, next(_SEQ), self.status()

    def status(self) -> str:
        cursor = self.cursor
        return "stopped" if cursor.stopped else "playing" if cursor.playing else "paused"

    def update(self, shown: tuple[int, int, str] | None = None) -> dict:
        """The channel's next update: the data show() gives the view's component; or {"idle": True} when a view
        that is not playing says what it shows (`shown`: run, step, status) and that is where its cursor is. Such
        a view asks now and then, and gets a move whose page rerun never reached the browser once it says the same
        thing behind twice in a row (once, the page's own rerun may still be on its way).

        Called on a server thread, with a copy of the session's script context attached for the call (_reader), so
        that show() reads and keeps the session's state and language as in a rerun (it mounts the component and
        nothing else; ui.components.mounting captures the data)."""
        with self.lock:  # the cursor only: a button's callback holds the session's state while it waits for this
            cursor = self.cursor
            if shown is not None and not cursor.playing:
                at = shown == (cursor.serial, cursor.pos, self.status())
                if at or shown != self.behind:  # where the run is, or behind for the first time
                    self.behind = None if at else shown
                    return {"idle": True, "rerun": False}
                self.behind = None  # behind twice in a row, IDLE_ASK_MS apart: its page rerun did not come
            was_playing = cursor.playing
            frames, seq, status = self.frames()
            stopped = was_playing and not self.cursor.playing
            show, ctx = self.show, self.ctx
        thread = threading.current_thread()
        add_script_run_ctx(thread, ctx)
        out: list[dict] = []
        try:
            with mounting(capture=out):
                self.draw(show, frames, seq, status)
        finally:
            setattr(thread, SCRIPT_RUN_CONTEXT_ATTR_NAME, None)
        data = out[-1] if out else {"seq": seq, "status": status, "frames": []}
        # it stopped by itself (diverged, finished, failed): the browser reruns the fragment, which reruns the page
        return {**data, "rerun": stopped}


def _refuse(_msg) -> None:
    raise RuntimeError("a live view's show() mounts its canvas component and draws nothing else")


def _reader(ctx):
    """A copy of the session's script context for a channel's thread (Streamlit's documented way for a thread to
    reach a session: add_script_run_ctx): it reads and writes the session's state, and so its language and its
    presenter flags, as a rerun would, but it belongs to no run: no rerun or stop of the session's script is raised
    in it (that run's parallel coordinator is not copied), and no element it might draw reaches the page."""
    return None if ctx is None else dataclasses.replace(ctx, _enqueue=_refuse, parallel_coordinator=None)


def _feed(key: str, cursor: Cursor) -> Feed:
    feed = ss.get(f"{key}.feed")
    if feed is None or feed.cursor is not cursor:
        feed = ss[f"{key}.feed"] = Feed(cursor)
    return feed


def _channel(key: str, feed: Feed) -> dict | None:
    """{"path", "token"} of this view's channel, or None where there is none (no route in this process: AppTest or
    a bare `streamlit run main.py`; or no browser cookie). The token stays while the view shows the same cursor."""
    ctx = get_script_run_ctx()
    if not live_channel.served() or ctx is None:
        return None
    browser = st.context.cookies.get(live_channel.BROWSER_COOKIE)
    if not browser:
        return None
    return {"path": live_channel.url_path(),
            "token": live_channel.REGISTRY.issue((ctx.session_id, key), browser, feed)}


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
    feed = ss.get(f"{key}.feed")
    with feed.lock if feed is not None else threading.RLock():  # not while the channel reads the cursor
        getattr(ss[f"{key}.cursor"], what)()
    st.rerun()  # from a callback this reruns the whole page: every part of it follows the cursor


def live_lab(spec: LiveSpec, show: Callable[[list[dict], int, str, Cursor], None], *, prefix: str,
             errors: tuple[type[BaseException], ...] = (ValueError,),
             bad_settings: Callable[[BaseException], None] | None = None,
             messages: Callable[[Cursor], None] | None = None,
             below: Callable[[Cursor], None] | None = None,
             extra_buttons: Callable[[object, Cursor], None] | None = None, **step_label) -> Cursor | None:
    """A live lab's run and its live view: the run of spec.settings (built by spec.build(), a sim.core.live.LiveRun,
    shared with every session of the process that has the same settings), Play/Pause/Step/Reset of this session's
    cursor on it (buttons labelled `<prefix>.play` ..., `step_label` filling the Step label), messages(cursor)
    and the newest frames drawn by show(frames, seq, status, cursor) in a fragment (and, while it plays, on the
    view's channel), then below(cursor). Each frame is the run's frame with its "step", "run" and "n". status:
    "playing", "paused" or "stopped" (diverged, finished). show() mounts the view's canvas component
    (ui.components.live_component) and draws nothing else: the channel calls it outside a script run and sends the
    component's data; what else the page says of the run goes in messages(cursor) above the view (what must be seen:
    it diverged) or below(cursor) under it (a report that must not push the figure down), both rerun with the
    fragment. Returns the cursor (`with
    cursor.model() as run:` reads the run at the cursor's step), or None when the first settings were bad.

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

    feed = _feed(key, cursor)
    seek = ss.pop("_live.seek", None)  # a student back with the teacher: at the teacher's step (ui.classroom)
    if seek is not None and seek > cursor.pos:
        with feed.lock:
            cursor.advance(seek - cursor.pos)
    classroom.shown()["cursor"] = cursor  # the class at a glance reads the page's run
    served = live_channel.served()

    @st.fragment(run_every=(CHANNEL_POLL_S if served else POLL_S) if cursor.playing else None)
    def panel():
        done = cursor.stopped
        bar = st.container(horizontal=True)
        # Play and Pause are one button (one key, a media player's toggle): as two buttons, the page's rerun after a
        # press showed the new one beside the old one for about half a second, idle, and the row's other buttons
        # moved by a button's width and back, so a press in that time landed beside its button
        playing = cursor.playing
        bar.button(t(f"{prefix}.pause" if playing else f"{prefix}.play"), on_click=_act, args=(key, "toggle"),
                   icon=":material/pause:" if playing else ":material/play_arrow:",
                   type="secondary" if playing else "primary", disabled=done and not playing, key=f"{key}.play")
        bar.button(t(f"{prefix}.step", **step_label), on_click=_act, args=(key, "step_once"),
                   icon=":material/skip_next:", disabled=done, key=f"{key}.step")
        bar.button(t(f"{prefix}.reset"), on_click=_act, args=(key, "reset"), icon=":material/restart_alt:",
                   key=f"{key}.reset")
        if extra_buttons:
            extra_buttons(bar, cursor)
        with feed.lock:
            feed.show, feed.ctx = show, _reader(get_script_run_ctx())
            frames, seq, status = feed.frames()
        channel = _channel(key, feed)
        if cursor.error is not None:
            st.error(t("live.failed"), icon=":material/error:")
        if cursor.playing:
            busy(cursor)
        if messages:
            messages(cursor)
        with mounting(extra={"channel": channel} if channel else None):
            feed.draw(show, frames, seq, status)
        if below:
            below(cursor)
        if ss.get(f"{key}.was_playing") and not cursor.playing:  # it stopped by itself (diverged, finished, failed)
            ss[f"{key}.was_playing"] = False
            st.rerun()  # the whole page: buttons, messages and panels follow
        ss[f"{key}.was_playing"] = cursor.playing
        # while playing, the browser asks for the next frames once it has taken these in (on the view's channel, or
        # through the view's "pull" trigger, which reruns this fragment): a slow browser is sent only what it can draw

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
