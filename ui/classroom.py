"""Classroom mode on every page: students follow the teacher's lab and settings; the teacher steers.

main.py calls `join_from_url` and `follow` before the page runs (a student's first run already shows the
class's settings), `sidebar` for the class panel, `publish` after the page ran (the teacher's settings, if they
changed, become the class's) and `report` (a student's tile of the class at a glance). A student's page learns of
the teacher's changes over the live channel (server/class_push.py, ui/classroom_watch.js) and reruns only then;
where the app serves no channel (AppTest, `streamlit run main.py`) a fragment asks the class every POLL_S instead. Labs
are handed in as `LabPage`s (ui/ imports no lab): a followed change is applied through the lab's schema
(`ui.urlstate.set_values`, as a preset is), and a change of lab is a `st.switch_page`.

The class lives in a store chosen by the environment variable MLSIM_CLASS_STORE: unset or "memory" for
the in-process store (one app process), "redis://host:port/0" for a Redis every app process shares.
The teacher's secret exists only in the teacher's session and that tab's sessionStorage (never in a URL or
a log): whatever a student puts in their URL, their session has no secret, so server.classroom refuses every
change they try. `keeper` (ui/classroom_keeper.js, on every run) keeps the pair {code, secret} in the
teacher's tab, so a reload (a new session) is the teacher again; the pair reaches the tab once per secret.
A student's id in the class is the class's (server.classroom.Classroom.join), issued for the browser's HttpOnly
cookie, which the page's script can neither read nor change: every tab and reload of one browser is one student,
with one answer per question, one entry in the teacher's inbox and one rate limit.
"""
from __future__ import annotations

import math
import os
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from server import class_push, live_channel
from server import classroom as cr
from sim.core.glance import glance
from ui.i18n import t
from ui.schema import Param, read_query, write_query
from ui.urlstate import set_values

STORE_ENV = "MLSIM_CLASS_STORE"
MESSAGE_S = 30.0  # a message about a class one is no longer in (ended, not found) shows this long
POLL_S = 0.5  # without a channel, a student's page asks the class for changes this often
PANEL_S = 2.0  # the teacher's class panel: heartbeat, the step of the teacher's run, students here, the inbox
REPORT_S = 1.0  # a student's page run writes their tile at most this often (the channel writes it while idle)
SPARK = 40  # points of a tile's sparkline (the key figure, a point per step seen)
KEEPER = "_cls.keeper"  # the keeper component's widget key
WATCH = "_cls.watch"  # the watch component's widget key
ss = st.session_state
_HERE = Path(__file__).parent


@dataclass(frozen=True)
class LabPage:
    url_path: str  # the class's name for the lab (its /<url_path>)
    file: str  # its page script, for st.switch_page
    page: str  # its schema's PAGE prefix
    schema: list[Param]
    quiet: tuple[str, str] | None = None  # (name, value): the teacher's view of the lab that does not move the class


_registry: dict = {}


def register(build: Callable[[], dict[str, LabPage]]) -> None:
    """main.py hands in how to list the labs (built on first use: importing every schema is not free)."""
    _registry["build"] = build


def lab_pages() -> dict[str, LabPage]:
    if "pages" not in _registry:
        _registry["pages"] = _registry["build"]()
    return _registry["pages"]


@st.cache_resource(show_spinner=False)
def _room(setting: str) -> cr.Classroom:
    return cr.Classroom(cr.open_store(setting))


def room() -> cr.Classroom:
    """The class store of this process (shared by every session; raises StoreUnavailable if it is misnamed)."""
    try:
        return _room(os.environ.get(STORE_ENV, ""))
    except (ValueError, ImportError) as e:
        raise cr.StoreUnavailable(str(e)) from e


def credential() -> str:
    """What makes a student the same student in a class: the browser's cookie (server.live_channel.BROWSER_COOKIE:
    set by the server, HttpOnly, so no script of the page reads or changes it; every tab of the browser sends it),
    else this session (no cookie: AppTest, a bare `streamlit run main.py`). Never shown; the class stores a hash."""
    cookie = st.context.cookies.get(live_channel.BROWSER_COOKIE)
    if cookie:
        return f"browser:{cookie}"
    ctx = get_script_run_ctx()
    return f"session:{ctx.session_id if ctx else 'test'}"


def address() -> str:
    """The network address this session came from (the joins a class takes from one address are limited)."""
    return live_channel.client_address(st.context.ip_address, st.context.headers.get("X-Forwarded-For"))


def student_id() -> str:
    """This session's id in its class: issued by the class on the first look (ClassroomError if it refuses: the
    class is full, this address brought too many new students in the last minute, the class has ended)."""
    held = ss.get("_cls.student")
    if held and held[0] == code():
        return held[1]
    student = room().join(code(), credential(), address())
    ss["_cls.student"] = (code(), student)
    return student


def code() -> str | None:
    return ss.get("_cls.code")


def is_teacher() -> bool:
    return bool(ss.get("_cls.code") and ss.get("_cls.secret"))


def is_student() -> bool:
    return bool(ss.get("_cls.code") and not ss.get("_cls.secret"))


def following() -> bool:
    return is_student() and ss.get("_cls.follow", True)


def _notice(key: str, **params) -> None:
    """A good message above the page for MESSAGE_S seconds (e.g. "welcome back")."""
    ss["_cls.notice"] = (key, params, time.time())


def _problem(reason: str | None, **params) -> None:
    if reason is not None and ss.get("_cls.problem") != (reason, params):
        ss["_cls.problem_at"] = time.time()
    ss["_cls.problem"] = None if reason is None else (reason, params)


def join(raw: str | None) -> bool:
    """Join class `raw` as a student (a teacher's session stays the teacher's); False if it cannot be a code."""
    if is_teacher():
        return False
    c = cr.normal_code(raw)
    if c is None:
        _problem("bad_code", code=str(raw)[:12])
        return False
    if c != code():
        ss["_cls.code"], ss["_cls.follow"], ss["_cls.v"] = c, True, 0
        _problem(None)
    return True


def join_from_url() -> None:
    raw = st.query_params.get("class")
    if raw is not None and raw != code():
        join(raw)


def _forget() -> None:
    for k in ("_cls.code", "_cls.secret", "_cls.v", "_cls.pub", "_cls.follow", "_cls.notice", "_cls.student",
              "_cls.feed", "_cls.seen", "_cls.reported"):
        ss.pop(k, None)


def leave() -> None:
    """Work on your own from now: the settings on screen stay."""
    _forget()
    st.query_params.pop("class", None)


def current_params(lab: LabPage) -> dict[str, str] | None:
    """The lab's settings in this session, as URL strings (None if the lab was not opened yet).

    A widget the user just changed counts already (its new value is in the session before the page runs,
    as PageState reads it), so the teacher's change is published at the start of the run, not its end.
    """
    values = ss.get(f"_vals.{lab.page}")
    if values is None:
        return None
    values = dict(values)
    for p in lab.schema:
        key = f"{lab.page}.{p.name}"
        if key in ss and p.kind != "ints":
            values[p.name] = tuple(c for c in p.choices if c in ss[key]) if p.kind == "multi" else ss[key]
    try:
        return write_query(lab.schema, values)
    except (TypeError, ValueError):  # a widget in a state the page has not checked yet: its last kept values
        return write_query(lab.schema, ss[f"_vals.{lab.page}"])


def apply(state: cr.ClassState, labs: dict[str, LabPage], current: str, rerun: bool) -> None:
    """Take the class's lab and settings: through the lab's schema (bad values become defaults), then go there."""
    back = not ss.get("_cls.v")  # joining, or back to the teacher: their step too
    ss["_cls.v"] = state.version
    lab = labs.get(state.lab)
    if lab is None:  # a lab this server does not have (another version of the app)
        _problem("unknown_lab", lab=state.lab)
        return
    values, _ = read_query(lab.schema, state.params)
    set_values(lab.page, lab.schema, values)
    if back and state.step:
        seek_to(state.step)
    if state.lab != current:
        st.switch_page(lab.file, query_params={"class": state.code})
    elif rerun:
        st.rerun()


def poll(labs: dict[str, LabPage], current: str, rerun: bool) -> cr.ClassState | None:
    """A student's look at the class: follow a change, or note what went wrong (then the student works on)."""
    before = ss.get("_cls.problem")
    state = None
    try:
        state = room().state(code(), student_id())
        ss["_cls.seen"] = state
        _problem(None)
    except cr.ClassNotFound:
        _problem("ended" if ss.get("_cls.v") else "not_found", code=code())
        leave()
    except (cr.ClassFull, cr.JoinLimited) as e:  # not let in: the student works on their own
        _problem(e.reason, code=code(), n=room().max_students)
        leave()
    except cr.StoreUnavailable:
        _problem("store")
    if state is not None and following() and state.version != ss.get("_cls.v"):
        apply(state, labs, current, rerun)
    if rerun and ss.get("_cls.problem") != before:
        st.rerun()  # the whole page, so the message shows above it
    return state


def follow(labs: dict[str, LabPage], current: str) -> None:
    """Before the page runs: a following student takes the class's latest settings at once."""
    shown()["cursor"] = None  # the page's live run, if it has one, says so as it draws (ui.live_run)
    if is_student():
        poll(labs, current, rerun=False)


def shown() -> dict:
    """What this session's page shows, for the class: {"cursor": its live run's cursor, or None}. One dict per session
    (read by the session's class feed on the channel's thread, which must not read the session's state)."""
    return ss.setdefault("_cls.shown", {"cursor": None, "spark": deque(maxlen=SPARK)})


def seek_to(step: int) -> None:
    """The page's live run starts at `step` (the teacher's) instead of its first step (ui.live_run takes it)."""
    ss["_live.seek"] = int(step)


def tile(holder: dict, lab: str, following: bool, params: dict) -> dict:
    """A student's tile: the lab, following or exploring, its settings (the teacher sees where they differ from the
    class's, and may show them to the class), and what the live run on their page shows (step, key figures, a
    sparkline of the first, a thumbnail), from `holder` (shown())."""
    out = {"lab": lab, "follow": following, "params": params}
    cursor = holder.get("cursor")
    if cursor is not None:
        seen = glance(cursor.frame())
        figures = seen.get("figures") or []
        spark = holder["spark"]
        if figures and seen.get("step") is not None and math.isfinite(figures[0][1]):
            if spark and (spark[-1][0] > seen["step"] or spark[-1][2] != cursor.serial):
                spark.clear()  # another run, or a reset
            if not spark or spark[-1][0] < seen["step"]:
                spark.append((seen["step"], round(figures[0][1], 4), cursor.serial))
        out.update(seen, spark=[s[1] for s in spark])
    return out


def report(labs: dict[str, LabPage], current: str) -> None:
    """After a student's page ran: their tile, at most every REPORT_S unless what it says changed (the class feed
    writes it on its own while the page is idle)."""
    if not is_student():
        return
    holder, lab = shown(), labs.get(current)
    now_tile = (current, following(), (None if lab is None else current_params(lab)) or {})
    holder["tile"] = now_tile  # the class feed's tile says the same between page runs
    last = ss.get("_cls.reported")
    if last and last[1] == now_tile and time.monotonic() - last[0] < REPORT_S:
        return
    try:
        room().report(code(), student_id(), tile(holder, *now_tile))
        ss["_cls.reported"] = (time.monotonic(), now_tile)
    except cr.ClassroomError:
        pass  # the class panel says what went wrong


def publish(labs: dict[str, LabPage], current: str, with_step: bool = True) -> None:
    """The teacher's lab and settings become the class's when they changed, with the step of the page's live run
    (`with_step`: after the page ran, when its run is the one of these settings); otherwise a heartbeat."""
    if not is_teacher():
        return
    lab = labs.get(current)
    params = None if lab is None else current_params(lab)
    cursor = shown().get("cursor") if with_step else None
    step = None if cursor is None else int(cursor.pos)
    if params is not None and lab.quiet and params.get(lab.quiet[0]) == lab.quiet[1]:
        params = None  # e.g. the class at a glance: the class stays where the teacher left it
    try:
        if params is not None and ss.get("_cls.pub") != (current, params, step):
            room().publish(code(), ss["_cls.secret"], current, params, step)
            ss["_cls.pub"] = (current, params, step)
        else:
            room().heartbeat(code(), ss["_cls.secret"])
        _problem(None)
    except (cr.ClassNotFound, cr.Forbidden) as e:  # timed out, or another tab took it over (Classroom.resume)
        _problem("lost" if isinstance(e, cr.ClassNotFound) else "moved", code=code())
        leave()
        ss["_cls.drop"] = True  # the pair this tab keeps is worth nothing now
    except cr.StoreUnavailable:
        _problem("store")


def _hold(c: str, secret: str) -> None:
    """This session teaches class c with `secret`: the keeper hands the pair to the tab until the tab says it keeps
    it (the pair's id, _cls.pair, comes back as _cls.kept), and never again in this session's later runs."""
    ss["_cls.code"], ss["_cls.secret"], ss["_cls.drop"], ss["_cls.pair"] = c, secret, False, secrets.token_hex(6)


def start(lab: str, params: dict[str, str]) -> None:
    """Start a class following (lab, params); this session holds its secret."""
    leave()
    c, secret = room().create(lab, params)
    _hold(c, secret)
    ss["_cls.pub"] = (lab, params, None)
    _problem(None)


def end() -> None:
    try:
        room().end(code(), ss.get("_cls.secret"))
    except cr.ClassroomError:
        pass  # gone already: nothing left to delete
    leave()
    ss["_cls.drop"] = True  # the keeper forgets the pair in the tab


def restore(raw_code: object, secret: object) -> None:
    """A fresh session of a tab that kept {code, secret}: the teacher again if the class is alive and the secret
    its own (the store hands out a new one, which the keeper keeps from now); otherwise the pair is dropped
    and the page says the class has ended. The secret is never shown, logged or put in a URL."""
    if is_teacher():
        return
    c = cr.normal_code(raw_code) if isinstance(raw_code, str) else None
    try:
        if c is None:
            raise cr.Forbidden("")
        fresh = room().resume(c, secret)
    except (cr.ClassNotFound, cr.Forbidden):
        ss["_cls.drop"] = True
        _problem("gone", code=c or "")
        return
    except cr.StoreUnavailable:  # the class may be alive: keep the pair, a later reload tries again
        _problem("store")
        return
    _forget()  # a class this tab had joined as a student, if any
    _hold(c, fresh)
    ss["_cls.pub"] = None
    _problem(None)
    _notice("back", code=c)
    # last: a Streamlit call that talks to the browser may end this run early, and the old secret is used up
    st.query_params.pop("class", None)


def greet() -> None:
    """Before anything else in a run: the pair the keeper handed back (once per session, from a tab that kept one).
    The component's callback only stores it (AppTest sets the same session key)."""
    held = ss.pop("_cls.hello", None)
    if isinstance(held, dict):
        restore(held.get("code"), held.get("secret"))


def _on_hello() -> None:
    ss["_cls.hello"] = (ss.get(KEEPER) or {}).get("hello")


def _on_kept() -> None:
    ss["_cls.kept"] = (ss.get(KEEPER) or {}).get("kept")


_keeper = None


def keeper() -> None:
    """The browser's side of the class (ui/classroom_keeper.js), in the sidebar with no height: it keeps the
    teacher's pair in the tab (sent until the tab says it keeps it, then never again), drops it, and once a
    session hands back the pair the tab kept."""
    global _keeper
    if _keeper is None:
        _keeper = st.components.v2.component("mlsim_class_keeper", isolate_styles=False,
                                             js=(_HERE / "classroom_keeper.js").read_text("utf-8"))
    nonce = ss.setdefault("_cls.nonce", secrets.token_hex(8))
    handing = is_teacher() and ss.get("_cls.kept") != ss.get("_cls.pair")
    pair = {"code": code(), "secret": ss["_cls.secret"]} if handing else None
    with st.sidebar:
        _keeper(data={"n": nonce, "teaching": is_teacher(), "pair": pair, "pair_id": ss.get("_cls.pair"),
                      "drop": bool(ss.get("_cls.drop"))},
                key=KEEPER, height=0, on_hello_change=_on_hello, on_kept_change=_on_kept)


def show_to_class(item: dict, labs: dict[str, LabPage], current: str) -> None:
    """The teacher opens settings a student sent or ran ({"lab", "params", "step"?}: their page, values and step); the
    class follows from there. Taken at the start of the next run (take_show): a page switch from inside a page or a
    fragment shows the new page under the old page's address."""
    if item.get("lab") in labs:
        ss["_cls.show"] = item
        st.rerun()


def take_show(labs: dict[str, LabPage], current: str) -> None:
    """main.py, before the page runs: what show_to_class asked for. `partial` items set only the values they name
    (the class at a glance: its view, the rest as the teacher left it)."""
    item = ss.pop("_cls.show", None)
    lab = labs.get(item["lab"]) if item else None
    if lab is None:
        return
    if item.get("partial"):
        set_values(lab.page, lab.schema, item["params"])
    else:
        values, _ = read_query(lab.schema, item["params"])
        set_values(lab.page, lab.schema, values)
    if item.get("step"):
        seek_to(item["step"])
    if item["lab"] != current:
        st.switch_page(lab.file)


def send_mine(labs: dict[str, LabPage], current: str) -> None:
    lab = labs.get(current)
    params = None if lab is None else current_params(lab)
    try:
        room().send(code(), student_id(), current, params or {})
        st.toast(t("room.sent"), icon=":material/send:")
    except cr.ClassroomError as e:
        st.toast(problem_text(e.reason), icon=":material/warning:")


# a teacher reads what a problem means for their class, not the students' "you keep working on your own"
TEACHER_WORDS = {"store": "store_teacher", "not_found": "lost", "forbidden": "moved"}


def problem_text(reason: str, **params) -> str:
    """The message of a class problem (room.problem.<reason>) in the words for this session: a teacher's or a
    student's."""
    if is_teacher():
        reason = TEACHER_WORDS.get(reason, reason)
    return t(f"room.problem.{reason}", **{"code": code() or "", "lab": "", "n": cr.MAX_STUDENTS, **params})


def message(slot=None):
    """What went wrong with the class, above the page (the student keeps working on their own), or a notice; in
    `slot` (the one this returned: a later look, after the page ran, redraws it), else a new one. Returns the slot."""
    slot = st.empty() if slot is None else slot
    notice = ss.get("_cls.notice")
    notice = notice if notice and time.time() - notice[2] <= MESSAGE_S else None
    problem = ss.get("_cls.problem")
    if problem and not code() and time.time() - ss.get("_cls.problem_at", 0) > MESSAGE_S:
        ss["_cls.problem"] = problem = None  # out of the class a while: the message has been read
    if not (notice or problem):
        slot.empty()  # nothing to say: no container above the page
        return slot
    box = slot.container()
    if notice:
        box.success(t(f"room.{notice[0]}", **notice[1]), icon=":material/school:")
    if problem:
        reason, params = problem
        box.warning(problem_text(reason, **params), icon=":material/school:")
    return slot


def sidebar(labs: dict[str, LabPage], current: str) -> None:
    """The class panel in the sidebar: a student's follow switch, the teacher's class code and inbox."""
    if not code():
        return
    with st.sidebar:
        if is_teacher():
            _teacher_panel(labs, current)
        else:
            if not watch():
                _watch(labs, current)
            _student_panel(labs, current)


@st.fragment(run_every=PANEL_S)
def _teacher_panel(labs: dict[str, LabPage], current: str) -> None:
    """The class code, how many students are here and what they sent: redrawn every PANEL_S (it changes)."""
    box = st.container(border=True)
    before = ss.get("_cls.problem")
    publish(labs, current)
    if not is_teacher() or ss.get("_cls.problem") != before:  # the class was lost, or the store went or came back:
        st.rerun()  # the whole page, so the message above it says so (this fragment draws only the panel)
    try:
        n, inbox = room().students(code(), ss["_cls.secret"]), room().inbox(code(), ss["_cls.secret"])
    except cr.ClassroomError:
        n, inbox = 0, []
    box.markdown(t("room.teaching", code=code(), n=n))
    glance_page = next((lab for lab in labs.values() if lab.quiet), None)
    if glance_page is not None and box.button(t("room.to_board"), key="room.to_board", icon=":material/grid_view:"):
        show_to_class({"lab": glance_page.url_path, "params": dict([glance_page.quiet]), "partial": True}, labs,
                      current)
    for i, item in enumerate(inbox[:5]):
        if box.button(t("room.inbox_item", lab=t(f"nav.{item['lab']}") if item["lab"] in labs else item["lab"]),
                      key=f"room.inbox.{i}", icon=":material/input:"):
            show_to_class(item, labs, current)


@st.fragment(run_every=POLL_S)
def _watch(labs: dict[str, LabPage], current: str) -> None:
    """Without a channel: a student's look at the class every POLL_S; it draws nothing (a change reruns the whole
    page)."""
    poll(labs, current, rerun=True)


def _feed() -> class_push.ClassFeed:
    """This session's class feed (the same object while it is in the same class: its channel's token stays)."""
    feed, student = ss.get("_cls.feed"), student_id()
    if feed is None or (feed.code, feed.student) != (code(), student):
        holder = shown()

        def glance_now() -> dict | None:
            return tile(holder, *holder["tile"]) if "tile" in holder else None

        feed = ss["_cls.feed"] = class_push.ClassFeed(room(), code(), student, glance_now)
    return feed


def watch() -> bool:
    """Mount the student's watch (ui/classroom_watch.js) on the class's channel; False where there is none (no route
    in this process, no browser cookie, the class refused this student): then the page polls."""
    browser = st.context.cookies.get(live_channel.BROWSER_COOKIE)
    ctx = get_script_run_ctx()
    if not (live_channel.served() and browser and ctx and code()):
        return False
    try:
        feed = _feed()
    except cr.ClassroomError:
        return False
    token = live_channel.REGISTRY.issue((ctx.session_id, "class"), browser, feed)
    global _watcher
    if _watcher is None:
        _watcher = st.components.v2.component("mlsim_class_watch", isolate_styles=False,
                                              js=(_HERE / "classroom_watch.js").read_text("utf-8"))
    seen = ss.get("_cls.seen")
    _watcher(data={"path": live_channel.url_path(), "token": token, "v": seen.version if seen else 0},
             key=WATCH, height=0, on_changed_change=_changed, on_retry_change=_changed)
    return True


_watcher = None


def _changed() -> None:
    """The watch's triggers ("changed": the class has a new version; "retry": open the socket again) need a callback
    to be sent; the rerun they cause does the work (follow, before the page runs; a new token)."""


def _student_panel(labs: dict[str, LabPage], current: str) -> None:
    box = st.container(border=True)
    box.markdown(t("room.joined", code=code()))
    # one button, two states (exploring on one's own, or following): two buttons would swap places for a moment
    # after the rerun, as the live views' Play and Pause did
    on = following()
    box.button(t("room.explore" if on else "room.snap_back"), key="room.follow", on_click=_refollow, args=(not on,),
               icon=":material/explore:" if on else ":material/undo:", type="secondary" if on else "primary",
               help=t("room.follow_help"))
    box.caption(t("room.following" if on else "room.exploring"))
    box.text_input(t("room.name"), key="room.name", max_chars=cr.MAX_NAME, on_change=_rename,
                   placeholder=t("room.name_hint"))
    box.button(t("room.send"), key="room.send", on_click=send_mine, args=(labs, current), icon=":material/send:")
    box.button(t("room.leave"), key="room.leave", on_click=leave, icon=":material/logout:")


def _rename() -> None:
    try:
        room().rename(code(), student_id(), ss.get("room.name") or "")
    except cr.ClassroomError as e:
        st.toast(problem_text(e.reason), icon=":material/warning:")


def _refollow(on: bool) -> None:
    """Explore on one's own (the settings on screen stay), or back to the teacher: their settings and step now."""
    ss["_cls.follow"] = on
    if on:
        ss["_cls.v"] = 0  # back to following: the class's settings (and the teacher's step) are taken at once
