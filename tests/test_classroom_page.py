"""Classroom mode through the app (AppTest): the teacher's and the students' sides, in both languages and
with both class stores; presenter view and hidden controls on a lab."""
import html

import pytest

from apptools import open_app, open_lab, texts
from labs import LABS
from labs.classroom.questions import BANK
from server import classroom as cr
from sim.core.text import plain
from ui import classroom
from ui.i18n import catalogue

CLS = "labs/classification/page.py"
ROOM = "labs/classroom/page.py"


@pytest.fixture(params=["memory", "redis"])
def store(request, monkeypatch):
    """The class store the app uses (MLSIM_CLASS_STORE), fresh for each test."""
    setting = "memory" if request.param == "memory" else request.getfixturevalue("redis_url")
    monkeypatch.setenv(classroom.STORE_ENV, setting)
    classroom._room.clear()
    yield classroom.room()
    classroom._room.clear()


def teacher(lang="en"):
    at = open_lab(ROOM, lang)
    at.button(key="room.start_btn").click().run()
    assert not at.exception, at.exception
    return at, at.session_state["_cls.code"]


def student(code, lang="en", **query):
    at = open_app(lang)
    at.query_params.update({"class": code, **query})
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_start_a_class_shows_code_link_and_qr(store, lang):
    at, code = teacher(lang)
    assert cr.normal_code(code) == code
    assert f"?class={code}" in texts(at)
    assert at.get("image"), "the QR code"
    assert any(code in str(h.proto.body) for h in at.get("html"))  # the projector-sized code
    assert store.state(code).lab == "classroom"


def test_students_follow_the_teacher_and_can_explore(store):
    t, code = teacher()
    s = student(code)
    assert s.session_state["_cls.code"] == code and "_cls.secret" not in s.session_state
    assert s.session_state["_cls.v"] == store.state(code).version
    # the teacher opens a lab and changes a setting: the class follows it there
    t.switch_page(CLS).run()
    t.selectbox(key="cls.activation").set_value("linear").run()
    assert store.state(code).lab == "classification" and store.state(code).params["activation"] == "linear"
    s.run()  # the student's poll (the sidebar fragment's timer in a browser) finds the change
    assert not s.exception
    assert s.session_state["_vals.cls"]["activation"] == "linear"
    assert s.selectbox(key="cls.activation").value == "linear"
    # exploring on one's own: the teacher's next change is not taken, until following again
    s.button(key="room.follow").click().run()  # "Explore on my own"
    t.selectbox(key="cls.activation").set_value("relu").run()
    s.run()
    assert s.selectbox(key="cls.activation").value == "linear"
    s.button(key="room.follow").click().run()  # the same button, now "Back to the teacher": at once
    assert s.selectbox(key="cls.activation").value == "relu"


def test_a_student_cannot_steer_the_class_whatever_the_url(store):
    t, code = teacher()
    t.switch_page(CLS).run()
    before = store.state(code)
    forged = {"secret": "x" * 32, "_cls.secret": "x", "teacher": "1", "room.start_btn": "1"}
    s = student(code, **forged)
    assert "_cls.secret" not in s.session_state
    s.selectbox(key="cls.activation").set_value("sigmoid").run()
    assert not s.exception
    after = store.state(code)
    assert (after.lab, after.params, after.version) == (before.lab, before.params, before.version)


@pytest.mark.parametrize("raw,reason", [("ZZ0", "bad_code"), ("ACDEF", "not_found")])
def test_wrong_code_is_a_message_and_the_lab_works(store, raw, reason):
    s = open_lab(CLS, "en", **{"class": raw})
    assert s.session_state["_cls.problem"][0] == reason
    assert s.warning and not s.exception
    s.selectbox(key="cls.activation").set_value("relu").run()
    assert not s.exception


def test_class_ends_and_students_keep_their_settings(store):
    t, code = teacher()
    t.switch_page(CLS).run()
    t.selectbox(key="cls.activation").set_value("sigmoid").run()
    s = student(code)
    assert s.selectbox(key="cls.activation").value == "sigmoid"
    t.switch_page(ROOM).run()
    t.button(key="room.end_btn").click().run()
    s.run()
    assert s.session_state["_cls.problem"][0] == "ended" and "_cls.code" not in s.session_state
    assert s.selectbox(key="cls.activation").value == "sigmoid"


def test_store_gone_is_a_message(monkeypatch):
    monkeypatch.setenv(classroom.STORE_ENV, "redis://127.0.0.1:1/0")  # nothing listens there
    classroom._room.clear()
    try:
        s = open_lab(CLS, "en", **{"class": "ACDEF"})
        assert s.session_state["_cls.problem"][0] == "store" and not s.exception
        at = open_lab(ROOM)
        at.button(key="room.start_btn").click().run()
        assert at.error and not at.exception
    finally:
        classroom._room.clear()


def test_predict_then_reveal(store):
    t, code = teacher("en")
    s = student(code, "zh")
    t.button(key="room.pose_bank").click().run()  # the bank's first question
    q = store.state(code).question
    assert q is not None and q.text == "room.q.linear_deep"
    s.run()
    assert any("线性激活函数" in h.proto.body for h in s.get("html"))  # each student reads it in their own language
    s.button(key="room.opt.1").click().run()
    assert store.histogram(code, t.session_state["_cls.secret"]) == dict.fromkeys(q.options, 0) | {q.options[1]: 1}
    t.button(key="room.reveal").click().run()
    assert not t.exception
    state = store.state(code)
    assert state.question.revealed and state.lab == "classification" and state.params["activation"] == "linear"
    s.run()
    assert s.session_state["_vals.cls"]["hidden"] == (4, 4, 4)
    t.switch_page(ROOM).run()
    right = catalogue("en")["room.right"].format(a=catalogue("en")["room.q.linear_deep.straight"])
    assert right in [m.value for m in t.markdown]  # back on this page, the bank's right answer
    t.text_input(key="room.own_q").set_value("Typed?")
    t.text_area(key="room.own_opts").set_value("one\none").run()
    t.button(key="room.pose_own").click().run()
    assert t.error  # two equal answers
    t.text_area(key="room.own_opts").set_value("one\ntwo").run()
    t.button(key="room.pose_own").click().run()
    assert store.state(code).question.options == ("one", "two")


def test_presenter_view_folds_and_hides_controls():
    at = open_lab(CLS, "en", present="1", hide="lr,seed")
    keys = {w.key for w in at.selectbox} | {w.key for w in at.slider} | {w.key for w in at.number_input}
    assert "cls.lr" not in keys and "cls.seed" not in keys and "cls.activation" in keys
    assert at.session_state["_vals.cls"]["lr"] == 0.03  # a hidden control's value still counts
    assert any("font-size" in str(h.proto.body) for h in at.get("html"))
    assert at.query_params["present"] == "1" and at.query_params["hide"] == "lr,seed"  # kept in the URL
    folded = [w.key for b in blocks(at._tree, "popover") for w in b.selectbox]
    assert "cls.optimizer" in folded and "cls.problem" in folded  # behind the one controls button
    assert "cls.activation" not in folded and "cls.dataset" not in folded  # main controls, beside the figure


def blocks(node, kind):
    """Every block of `kind` (e.g. "popover") under `node`."""
    for child in getattr(node, "children", {}).values():
        if getattr(child, "type", None) == kind:
            yield child
        yield from blocks(child, kind)


def test_follow_benchmark_drives_students_through_the_page_code(capsys, monkeypatch):
    from benchmarks import classroom_follow

    monkeypatch.setenv(classroom.STORE_ENV, "memory")
    classroom._room.clear()
    classroom_follow.main(["--students", "2", "--rounds", "2", "--gap", "5"])
    out = capsys.readouterr().out
    assert out.count("2/2 followed") == 2 and "wrong values 0" in out and "follow latency over 4" in out


def test_send_my_settings_reaches_the_teacher_who_can_show_them(store):
    t, code = teacher()
    t.switch_page(CLS).run()
    s = student(code)
    s.button(key="room.follow").click().run()  # exploring on their own
    s.selectbox(key="cls.activation").set_value("sigmoid").run()
    s.button(key="room.send").click().run()
    assert not s.exception
    inbox = store.inbox(code, t.session_state["_cls.secret"])
    assert len(inbox) == 1 and inbox[0]["lab"] == "classification" and inbox[0]["params"]["activation"] == "sigmoid"
    assert store.state(code).params["activation"] != "sigmoid"  # sending is not steering
    t.run()
    t.button(key="room.inbox.0").click().run()  # the teacher shows it: now the class follows it
    assert not t.exception
    t.run()
    assert t.selectbox(key="cls.activation").value == "sigmoid"
    assert store.state(code).params["activation"] == "sigmoid"


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.url_path)
def test_every_lab_in_presenter_view_with_hidden_controls(lab):
    """Every lab in LABS draws in the presenter view with its first two controls hidden: no exception, and
    neither hidden control has a widget."""
    import importlib

    schema = importlib.import_module(f"labs.{lab.name}.schema")
    hidden = [p.name for p in schema.SCHEMA[:2]]
    at = open_lab(lab.file, "en", present="1", hide=",".join(hidden))
    assert not at.exception
    keys = {getattr(w, "key", None) for kind in ("selectbox", "slider", "number_input", "toggle", "button_group",
                                                  "select_slider", "multiselect") for w in getattr(at, kind, [])}
    assert not {f"{schema.PAGE}.{name}" for name in hidden} & keys, lab.url_path


def keeper_data(at) -> dict:
    """What this run sent the browser's keeper (ui/classroom_keeper.js): {n, teaching, pair, pair_id, drop}."""
    import json

    (keeper,) = [e for e in at.get("bidi_component") if e.proto.component_name == "mlsim_class_keeper"]
    return json.loads(keeper.proto.json)


def hello(at, held: object):
    """What the keeper hands back in a session's second run (its callback stores it in the session), then the run."""
    at.session_state["_cls.hello"] = held
    at.run()
    assert not at.exception, at.exception
    return at


def kept(at):
    """The keeper says it keeps the pair this run sent (its "kept" trigger; the callback stores the pair's id)."""
    at.session_state["_cls.kept"] = keeper_data(at)["pair_id"]
    return at


def test_a_reloaded_teacher_is_the_teacher_again(store):
    t, code = teacher()
    t.switch_page(CLS).run()
    held = keeper_data(t)["pair"]
    assert held == {"code": code, "secret": t.session_state["_cls.secret"]}
    s = student(code)
    # the reload: a new session of the same tab, whose keeper hands back the pair it kept
    r = hello(open_lab(CLS), held)
    assert classroom_of(r) == (code, True) and r.session_state["_cls.secret"] != held["secret"]
    assert any(f"still teaching class **{code}**" in m.value for m in r.success)
    assert keeper_data(r)["pair"] == {"code": code, "secret": r.session_state["_cls.secret"]}  # the new pair
    r.selectbox(key="cls.activation").set_value("tanh").run()  # still steers: the student follows
    assert store.state(code).params["activation"] == "tanh"
    s.run()
    assert s.selectbox(key="cls.activation").value == "tanh"
    r.switch_page("labs/regression/page.py").run()  # and changes the lab
    assert store.state(code).lab == "regression"
    # the session before the reload (or a duplicated tab with the old pair) steers nothing any more
    t.selectbox(key="cls.activation").set_value("sigmoid").run()
    assert classroom_of(t) == (None, False) and t.session_state["_cls.problem"][0] == "moved"
    assert keeper_data(t) | {"n": "", "pair_id": ""} == {"n": "", "teaching": False, "pair": None, "pair_id": "",
                                                          "drop": True}
    assert store.state(code).lab == "regression"


def classroom_of(at) -> tuple[str | None, bool]:
    """(the class code of the session, whether it is the teacher's)."""
    return at.session_state["_cls.code"] if "_cls.code" in at.session_state else None, \
        "_cls.secret" in at.session_state


@pytest.mark.parametrize("case", ["forged", "ended", "not_a_code", "not_a_pair"])
def test_a_kept_pair_that_is_no_longer_good_is_dropped(store, case):
    t, code = teacher()
    pair = keeper_data(t)["pair"]
    if case == "ended":
        t.button(key="room.end_btn").click().run()
        assert keeper_data(t)["drop"] and keeper_data(t)["pair"] is None  # ending the class clears the tab
    held = {"forged": {"code": code, "secret": "x" * 32}, "ended": pair, "not_a_code": {"code": "<b>", "secret": 1},
            "not_a_pair": {"code": [code], "secret": {"s": pair["secret"]}}}[case]
    r = hello(open_lab(ROOM), held)
    assert classroom_of(r) == (None, False) and r.session_state["_cls.problem"][0] == "gone"
    assert keeper_data(r)["drop"] and keeper_data(r)["pair"] is None
    assert any("has ended" in w.value for w in r.warning)
    assert pair["secret"] not in texts(r)
    r.button(key="room.start_btn").click().run()  # a new class, as the message says
    assert classroom_of(r)[1] and not r.exception


@pytest.fixture
def cookies(monkeypatch):
    """Each AppTest session's browser cookie (AppTest cannot send one): the session key "test.cookie", which a test
    sets before a session's first run; ui.classroom.credential reads it as it reads the real cookie."""
    import streamlit as st

    monkeypatch.setattr(classroom, "credential", lambda: f"browser:{st.session_state.get('test.cookie', 'none')}")


def student_with_cookie(code: str, cookie: str, page: str = ROOM):
    at = open_app("en")
    at.session_state["test.cookie"] = cookie
    at.query_params.update({"class": code})
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def test_answers_and_the_rate_limit_count_per_student_not_per_tab(store, cookies):
    """Issue 40: a student's id is the class's, issued for the browser's cookie: two tabs of one browser are one
    student (one answer, one inbox entry, one rate limit), whatever id the page's script reports."""
    t, code = teacher()
    t.button(key="room.pose_bank").click().run()
    q = store.state(code).question
    secret = t.session_state["_cls.secret"]
    one, two = (student_with_cookie(code, "B") for _ in range(2))  # two tabs of one browser
    other = student_with_cookie(code, "C")  # another browser
    assert one.session_state["_cls.student"] == two.session_state["_cls.student"] != other.session_state["_cls.student"]
    one.session_state["_cls.hello"] = {"browser": "R" * 22, "class": None}  # an old keeper's id: means nothing now
    one.button(key="room.opt.0").click().run()
    two.button(key="room.opt.1").click().run()  # the same browser: replaces the first answer
    assert store.histogram(code, secret) == dict.fromkeys(q.options, 0) | {q.options[1]: 1}
    other.button(key="room.opt.0").click().run()
    assert store.histogram(code, secret) == dict.fromkeys(q.options, 0) | {q.options[0]: 1, q.options[1]: 1}
    assert store.students(code, secret) == 2
    for tab in (one, two, one):
        tab.button(key="room.send").click().run()
    assert len(store.inbox(code, secret)) == 1  # one entry per student, the latest
    store.rate_limit, store.rate_window_s = 7, 60.0  # this test's class: 7 a minute, five used already by "B"
    for tab, i in ((one, 2), (two, 0)):
        tab.button(key=f"room.opt.{i}").click().run()
        assert not tab.warning
    one.button(key="room.opt.1").click().run()  # the eighth of this student: refused, whichever tab
    assert any("Too many answers" in w.value for w in one.warning)
    other.button(key="room.opt.1").click().run()  # another student is not held back
    assert not other.warning
    assert store.histogram(code, secret) == dict.fromkeys(q.options, 0) | {q.options[0]: 1, q.options[1]: 1}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_full_class_and_too_many_joins_are_messages_and_the_student_works_on(store, cookies, lang):
    """The class takes max_students, and join_limit new students a minute from one address: the next is told so in
    their language, is not in the class, and the lab works."""
    t, code = teacher()
    store.max_students, store.join_limit = 2, 3
    try:
        first = student_with_cookie(code, "A", CLS)
        student_with_cookie(code, "B", CLS)
        for cookie, reason in (("C", "full"), ("D", "joins")):  # C: full (two in); D: the fourth join from here
            late = open_app(lang)
            late.session_state["test.cookie"] = cookie
            late.query_params.update({"class": code})
            late.run()
            assert late.session_state["_cls.problem"][0] == reason and "_cls.code" not in late.session_state
            words = catalogue(lang)[f"room.problem.{reason}"].format(code=code, n=2)
            assert words in [w.value for w in late.warning] and not late.exception
        first.run()  # a student who is in stays in, full or not
        assert first.session_state["_cls.code"] == code and not first.warning
    finally:
        store.max_students, store.join_limit = cr.MAX_STUDENTS, cr.JOIN_LIMIT


def test_the_teachers_secret_reaches_the_tab_once(store):
    """Issue 40, D2: the keeper's data holds the teacher's pair until the tab says it keeps it, then never again in
    that session's runs (page switches, setting changes); a reload's new secret is handed over once too."""
    t, code = teacher()
    first = keeper_data(t)
    assert first["teaching"] and first["pair"] == {"code": code, "secret": t.session_state["_cls.secret"]}
    kept(t)
    runs = [keeper_data(t.switch_page(CLS).run())]
    t.selectbox(key="cls.activation").set_value("tanh").run()
    assert store.state(code).params["activation"] == "tanh"  # still the teacher: steering goes on
    runs += [keeper_data(t), keeper_data(t.run()), keeper_data(t.switch_page(ROOM).run())]
    assert [(d["teaching"], d["pair"]) for d in runs] == [(True, None)] * 4
    r = hello(open_lab(CLS), first["pair"])  # a reload hands back the pair: a new secret, handed over once
    assert keeper_data(r)["pair"] == {"code": code, "secret": r.session_state["_cls.secret"]}
    assert keeper_data(kept(r).run())["pair"] is None


@pytest.mark.parametrize("page", [CLS, ROOM])
def test_a_teacher_whose_store_went_away_is_told_in_a_teachers_words(monkeypatch, page):
    """Issue 40, D6: with the class store gone, the teacher reads that students cannot follow or answer (not the
    students' "you keep working on your own"), on a lab page and on the class page."""
    monkeypatch.setenv(classroom.STORE_ENV, "memory")
    classroom._room.clear()
    try:
        t, code = teacher()
        t.switch_page(page).run()
        classroom.room().store.close()
        t.run()
        assert not t.exception
        mine, theirs = (catalogue("en")[f"room.problem.{k}"] for k in ("store_teacher", "store"))
        shown = [w.value for w in t.warning]
        assert mine in shown and theirs not in shown, shown
    finally:
        classroom._room.clear()


@pytest.mark.parametrize("q", BANK, ids=lambda q: q.id)
def test_every_reveal_opens_its_lab_without_a_problem(q):
    """A reveal's settings, as the URL of its lab: the page runs them with no exception and no refused value
    (tests/test_classroom_bank.py checks that the engine then shows the marked answer; a divergence message may
    be that answer)."""
    lab = next(lab for lab in LABS if lab.url_path == q.lab)
    at = open_lab(lab.file, "zh", **q.reveal)
    assert not at.exception, q.id
    rejected = catalogue("zh")["url.rejected"].split("“")[0]
    assert not [w.value for w in at.warning if w.value.startswith(rejected)], q.id


HOSTILE_CODES = ["[a](//ev.il)", "![](//e.vil)", ":red[XXXXX]", "<img src=x>"]


@pytest.mark.parametrize("raw", HOSTILE_CODES)
def test_a_bad_code_typed_or_in_a_link_is_shown_as_typed(store, raw):
    at = open_lab(ROOM)
    at.text_input(key="room.code_in").set_value(raw).run()
    at.button(key="room.join_btn").click().run()
    message = catalogue("en")["room.problem.bad_code"].format(code=plain(raw))  # the characters, never markup
    assert [e.value for e in at.error] == [message] and not at.exception
    s = open_lab(CLS, "en", **{"class": raw})
    assert message in [w.value for w in s.warning]


def test_a_typed_question_is_shown_as_typed(store):
    question, options = "![](//e.vil/q.png) [a](//ev.il)", ["![](//e.vil/o.png)", ":red[b]"]
    t, code = teacher()
    t.text_input(key="room.own_q").set_value(question)
    t.text_area(key="room.own_opts").set_value("\n".join(options)).run()
    t.button(key="room.pose_own").click().run()
    assert plain(question) in [h.value for h in t.subheader]
    s = student(code)
    s.switch_page(ROOM).run()
    assert any(html.escape(question) in h.proto.body for h in s.get("html"))  # projector-sized, st.html
    assert [s.button(key=f"room.opt.{i}").label for i in range(2)] == [plain(o) for o in options]
    s.button(key="room.opt.0").click().run()
    assert catalogue("en")["room.your_answer"].format(a=plain(options[0])) in [c.value for c in s.caption]


def test_back_to_the_teacher_takes_their_step_and_the_board_shows_the_students(store):
    """Snap back: a student who explored comes back to the teacher's settings and the teacher's step; the teacher's
    class at a glance has a tile per student with their lab, mode, step and key figure."""
    from labs.classroom.board import rank, tile_view

    t, code = teacher()
    t.switch_page(CLS).run()
    for _ in range(3):
        t.button(key="cls.step").click().run()  # the teacher's run: 3 epochs on
    taught = t.session_state["cls.cursor"].pos
    assert taught == 3 and store.state(code).step == taught
    s = student(code)
    assert s.session_state["cls.cursor"].pos == taught  # joining: at the teacher's step
    s.button(key="room.follow").click().run()  # explores...
    s.selectbox(key="cls.activation").set_value("sigmoid").run()
    s.button(key="cls.reset").click().run()
    assert s.session_state["cls.cursor"].pos == 0
    board = store.board(code, t.session_state["_cls.secret"])
    assert len(board) == 1 and board[0]["follow"] is False and board[0]["params"]["activation"] == "sigmoid"
    view = tile_view(board[0], store.state(code), {"classification": None})
    assert view["name"] == "Student 1" and "activation=sigmoid" in view["diff"] and view["thumb"]["side"] == 20
    s.button(key="room.follow").click().run()  # ...and comes back: the teacher's settings and step
    assert s.selectbox(key="cls.activation").value == t.selectbox(key="cls.activation").value
    assert s.session_state["cls.cursor"].pos == taught
    board = store.board(code, t.session_state["_cls.secret"])
    assert board[0]["follow"] is True and board[0]["step"] == taught and board[0]["figures"][0][0] == "val_loss"
    t.switch_page("labs/classroom/page.py").run()  # the teacher's own screen: the board draws
    assert not t.exception
    tiles = [{"n": 1, "figures": [["val_loss", 0.5]]}, {"n": 2, "figures": []},
             {"n": 3, "figures": [["val_loss", 0.2]]}]
    assert [b["n"] for b in rank(tiles, "figure")] == [3, 1, 2]
    accs = [{"n": 1, "figures": [["val_acc", 0.5]]}, {"n": 2, "figures": [["val_acc", 0.9]]}]
    assert [b["n"] for b in rank(accs, "figure")] == [2, 1] and [b["n"] for b in rank(accs, "joined")] == [1, 2]
