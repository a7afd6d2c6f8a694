"""The class engine (server/classroom.py) against both stores: the in-process one and a real redis-server."""
import time
from functools import partial

import pytest
from waits import wait_until

from server import classroom as cr
from server.classroom import Classroom, MemoryStore, RedisStore, open_store


@pytest.fixture(params=["memory", "redis"])
def store(request):
    if request.param == "memory":
        return MemoryStore()
    url = request.getfixturevalue("redis_url")
    s = RedisStore(url)
    s.r.flushdb()
    return s


def gone(call) -> bool:
    """True when call() finds no class (it has ended)."""
    try:
        call()
    except cr.ClassNotFound:
        return True
    return False


def refused(call) -> bool:
    """True when call() is turned away by the rate limit."""
    try:
        call()
    except cr.RateLimited:
        return True
    return False


def test_codes_are_short_and_unambiguous():
    codes = {cr.new_code() for _ in range(500)}
    assert len(codes) > 490
    assert all(len(c) == cr.CODE_LEN and not set(c) & set("0O1IL2Z5S8B") for c in codes)
    assert cr.normal_code(" acd-ef ") == "ACDEF"
    assert cr.normal_code("AC0EF") is None and cr.normal_code("ACDE") is None and cr.normal_code(None) is None


def test_open_store_setting(redis_url):
    assert isinstance(open_store(""), MemoryStore) and isinstance(open_store("memory"), MemoryStore)
    assert isinstance(open_store(redis_url), RedisStore)
    with pytest.raises(ValueError):
        open_store("mysql://x")


def test_teacher_publishes_students_follow(store):
    room = Classroom(store)
    code, secret = room.create("classification", {"lr": "0.03"})
    s = room.state(code, "student-1")
    assert (s.lab, s.params, s.version, s.question) == ("classification", {"lr": "0.03"}, 1, None)
    v = room.publish(code, secret, "regression", {"degree": "3"})
    s = room.state(code, "student-1")
    assert (s.lab, s.params, s.version) == ("regression", {"degree": "3"}, v) and v == 2
    assert room.publish(code, secret, "regression", {"degree": "3"}) == 2  # unchanged: no new version
    room.state(code, "student-2")
    assert room.students(code, secret) == 2


def test_forged_secret_changes_nothing(store):
    room = Classroom(store)
    code, secret = room.create("classification", {"lr": "0.03"})
    other_code, other_secret = room.create("classification", {})
    for forged in (None, "", "x" * 32, other_secret, secret[:-1], secret + "x"):
        for call in (partial(room.publish, code, forged, "gpu", {}), partial(room.pose, code, forged, "q?", ["a", "b"]),
                     partial(room.reveal, code, forged), partial(room.end, code, forged),
                     partial(room.histogram, code, forged), partial(room.heartbeat, code, forged)):
            with pytest.raises(cr.Forbidden):
                call()
    s = room.state(code)
    assert (s.lab, s.params, s.version, s.question) == ("classification", {"lr": "0.03"}, 1, None)
    assert secret not in str(store.get(f"mlsim:class:{code}"))  # only its hash is stored


def test_wrong_code(store):
    room = Classroom(store)
    with pytest.raises(cr.ClassNotFound):
        room.state("ACDEF")
    with pytest.raises(cr.ClassNotFound):
        room.answer("ACDEF", "b", "q", "a")


def test_class_expires_without_teacher_and_answers_go(store):
    room = Classroom(store, timeout_s=0.6)
    code, secret = room.create("classification", {})
    q = room.pose(code, secret, "Will it curve?", ["yes", "no"])
    room.answer(code, "b1", q.id, "yes")
    for _ in range(3):  # the teacher's heartbeats keep it alive past its timeout: the point of the sleeps
        time.sleep(0.3)
        room.heartbeat(code, secret)
    assert room.histogram(code, secret) == {"yes": 1, "no": 0}
    answers = f"mlsim:class:{code}:answers"  # the teacher closed the tab: the class and its answers go
    wait_until(lambda: gone(lambda: room.state(code)) and store.hgetall(answers) == {}, 10, "the class to end")


def test_end_deletes_answers_and_inbox(store):
    room = Classroom(store)
    code, secret = room.create("classification", {})
    q = room.pose(code, secret, "Will it curve?", ["yes", "no"])
    room.answer(code, "b1", q.id, "no")
    room.send(code, "b1", "regression", {"degree": "5"})
    assert room.inbox(code, secret)[0]["params"] == {"degree": "5"}
    room.end(code, secret)
    for key in Classroom._keys(code).values():
        assert store.get(key) is None
    with pytest.raises(cr.ClassNotFound):
        room.state(code)


def test_answers_histogram_reveal(store):
    room = Classroom(store)
    code, secret = room.create("classification", {})
    q = room.pose(code, secret, "Will it curve?", ["yes", "no", "depends"])
    assert room.state(code).question == q
    for i, a in enumerate(["yes", "no", "no", "depends", "no"]):
        room.answer(code, f"b{i}", q.id, a)
    room.answer(code, "b0", q.id, "no")  # a browser changes its mind: its latest answer counts, once
    assert room.histogram(code, secret) == {"yes": 0, "no": 4, "depends": 1}
    for bad in (("other-id", "yes"), (q.id, "maybe")):
        with pytest.raises(cr.BadInput):
            room.answer(code, "b9", *bad)
    room.reveal(code, secret)
    assert room.state(code).question.revealed
    with pytest.raises(cr.QuestionClosed):  # answers close at the reveal
        room.answer(code, "b9", q.id, "yes")
    q2 = room.pose(code, secret, "Next?", ["a", "b"])
    assert room.histogram(code, secret) == {"a": 0, "b": 0} and q2.id != q.id
    for bad in (("", ["a", "b"]), ("q", ["a"]), ("q", ["a", "a"]), ("x" * 400, ["a", "b"]), ("q", list("abcdefg"))):
        with pytest.raises(cr.BadInput):
            room.pose(code, secret, *bad)


def test_answers_rate_limited_per_browser(store):
    room = Classroom(store, rate_limit=5, rate_window_s=0.5)
    code, secret = room.create("classification", {})
    q = room.pose(code, secret, "q", ["a", "b"])
    for _ in range(5):
        room.answer(code, "flooder", q.id, "a")
    with pytest.raises(cr.RateLimited):
        room.answer(code, "flooder", q.id, "b")
    with pytest.raises(cr.RateLimited):
        room.send(code, "flooder", "gpu", {})
    room.answer(code, "calm", q.id, "b")  # other browsers are not held back
    assert room.histogram(code, secret) == {"a": 1, "b": 1}
    # refused tries do not extend the window: once it has passed, the answer is taken
    wait_until(lambda: not refused(lambda: room.answer(code, "flooder", q.id, "b")), 10, "the window to pass")
    assert room.histogram(code, secret) == {"a": 0, "b": 2}


def test_send_settings_is_bounded(store):
    room = Classroom(store)
    code, _ = room.create("classification", {})
    with pytest.raises(cr.BadInput):
        room.send(code, "b", "classification", {"x": "y" * 5000})


def test_memory_store_gone():
    store = MemoryStore()
    room = Classroom(store)
    code, secret = room.create("classification", {})
    store.close()
    for call in (lambda: room.state(code), lambda: room.publish(code, secret, "gpu", {}),
                 lambda: room.answer(code, "b", "q", "a"), lambda: room.create("gpu", {})):
        with pytest.raises(cr.StoreUnavailable):
            call()


def test_redis_store_gone(tmp_path):
    from conftest import running_redis

    with running_redis(tmp_path) as (url, proc):
        room = Classroom(RedisStore(url))
        code, secret = room.create("classification", {})
        proc.terminate()
        proc.wait(10)
        t0 = time.time()
        for call in (lambda: room.state(code), lambda: room.publish(code, secret, "gpu", {}),
                     lambda: room.answer(code, "b", "q", "a")):
            with pytest.raises(cr.StoreUnavailable):
                call()
        assert time.time() - t0 < 10  # short timeouts: a poll does not hang


def test_join_link_uses_the_lan_address_for_a_loopback_host():
    assert cr.join_link("http://localhost:8501/classroom", "ACDEF", "192.168.1.20") == \
        "http://192.168.1.20:8501/classroom?class=ACDEF"
    assert cr.join_link("https://room.school.edu/classroom?lang=zh", "ACDEF", "10.0.0.2") == \
        "https://room.school.edu/classroom?class=ACDEF"
    assert cr.join_link("", "ACDEF", "10.0.0.2") == "http://10.0.0.2:8501/?class=ACDEF"
    addr = cr.lan_address()
    assert addr.count(".") == 3 and all(0 <= int(p) <= 255 for p in addr.split("."))


def test_question_bank_reveals_valid_settings_in_both_languages():
    """Every bank question's reveal is a valid URL of its lab (nothing replaced by a default), and its text
    and options exist in both catalogues."""
    import importlib

    from labs import LABS
    from labs.classroom.questions import BANK
    from ui.i18n import catalogue
    from ui.schema import read_query

    labs = {lab.url_path: lab.name for lab in LABS}
    for q in BANK:
        schema = importlib.import_module(f"labs.{labs[q.lab]}.schema").SCHEMA
        values, rejected = read_query(schema, q.reveal)
        assert not rejected and set(q.reveal) <= {p.name for p in schema}, q.id
        for lang in ("en", "zh"):
            cat = catalogue(lang)
            assert f"room.q.{q.id}" in cat and all(f"room.q.{q.id}.{o}" in cat for o in q.options), (q.id, lang)


def test_a_reloaded_teacher_resumes_with_a_new_secret(store):
    """Classroom.resume: the kept pair is checked against the stored hash; the class goes on under a new secret,
    and the old one (a copy in a duplicated tab, or the tab that reloaded) steers nothing any more."""
    room = Classroom(store)
    code, secret = room.create("classification", {"lr": "0.03"})
    fresh = room.resume(code, secret)
    assert fresh != secret and len(fresh) >= 32
    assert room.state(code).version == 1  # nothing new for the students to follow
    with pytest.raises(cr.Forbidden):
        room.publish(code, secret, "gpu", {})
    with pytest.raises(cr.Forbidden):
        room.resume(code, secret)  # the old pair a second time: it was used up
    assert room.publish(code, fresh, "regression", {"degree": "3"}) == 2
    assert fresh not in str(store.get(f"mlsim:class:{code}"))


def test_resume_refuses_forged_ended_and_expired_pairs(store):
    room = Classroom(store, timeout_s=0.6)
    code, secret = room.create("classification", {})
    other_code, other_secret = room.create("classification", {})
    for forged in (None, "", 123, {"secret": secret}, ["x"], "x" * 32, other_secret, secret[:-1], secret + "x",
                   secret * 3):
        with pytest.raises(cr.Forbidden):
            room.resume(code, forged)
    with pytest.raises(cr.ClassNotFound):
        room.resume("ACDEF" if code != "ACDEF" else "ACDEG", secret)
    room.end(other_code, other_secret)
    with pytest.raises(cr.ClassNotFound):
        room.resume(other_code, other_secret)  # ended
    fresh = room.resume(code, secret)  # in time: the class is alive again for another timeout
    # the teacher's tab stays away longer than the timeout (state() only reads; a resume would keep it alive)
    wait_until(lambda: gone(lambda: room.state(code)), 10, "the class to end")
    with pytest.raises(cr.ClassNotFound):
        room.resume(code, fresh)


def test_a_student_is_who_the_class_says_whatever_the_browser_sends(store):
    """Classroom.join: one id per member credential (the same one again for the same credential, whichever tab
    or reload asks), random (never the credential, which is stored only as a hash); answers, sent settings,
    presence and the rate limit count by it."""
    room = Classroom(store, rate_limit=3)
    code, secret = room.create("classification", {})
    q = room.pose(code, secret, "q", ["a", "b"])
    me = room.join(code, "browser:cookie-1", "10.0.0.7")
    assert room.join(code, "browser:cookie-1", "10.0.0.7") == me  # a second tab, a reload
    assert room.join(code, "browser:cookie-1", "10.0.0.99") == me  # another network: still the same student
    other = room.join(code, "browser:cookie-2", "10.0.0.8")
    assert other != me and len(me) >= 16 and "cookie" not in me
    assert not any("cookie-1" in str(v) for v in store.hgetall(f"mlsim:class:{code}:members").items())
    room.answer(code, me, q.id, "a")
    room.answer(code, me, q.id, "b")  # changes their mind: replaces it
    room.answer(code, other, q.id, "a")
    assert room.histogram(code, secret) == {"a": 1, "b": 1}
    for student in (me, me, other):
        room.state(code, student)
    assert room.students(code, secret) == 2
    room.send(code, me, "regression", {})  # the third call of this student in the window
    with pytest.raises(cr.RateLimited):
        room.answer(code, me, q.id, "a")
    with pytest.raises(cr.ClassNotFound):
        room.join("ACDEF" if code != "ACDEF" else "ACDEG", "browser:cookie-1", "10.0.0.7")


def test_one_answer_and_one_inbox_entry_per_student_however_often_they_try(store):
    """Issue 40: a student who answers and sends their settings over and over holds one answer and one inbox entry
    (the latest); what the teacher reads grows with the students, not with their attempts."""
    room = Classroom(store, rate_limit=10_000)
    code, secret = room.create("classification", {})
    q = room.pose(code, secret, "q", ["a", "b"])
    me = room.join(code, "browser:cookie-1", "10.0.0.7")
    for i in range(200):
        room.answer(code, me, q.id, "ab"[i % 2])
        room.send(code, me, "regression", {"degree": str(i)})
        room.state(code, me)
    assert room.histogram(code, secret) == {"a": 0, "b": 1}
    inbox = room.inbox(code, secret)
    assert len(inbox) == 1 and inbox[0]["params"] == {"degree": "199"}
    assert room.students(code, secret) == 1
    for key in ("answers", "inbox", "seen", "members"):
        assert len(store.hgetall(f"mlsim:class:{code}:{key}")) == 1, key


def test_new_students_per_address_and_per_class_are_capped(store):
    """A student who makes themselves new (cleared cookies, a private window, a script) joins again: at most
    join_limit new students a minute from one address, and max_students in the class. A known student is never
    refused, and the refusals are not students."""
    room = Classroom(store, join_limit=5, max_students=8)
    code, secret = room.create("classification", {})
    q = room.pose(code, secret, "q", ["a", "b"])
    ids = [room.join(code, f"browser:rotated-{i}", "10.0.0.7") for i in range(5)]
    with pytest.raises(cr.JoinLimited):
        room.join(code, "browser:rotated-5", "10.0.0.7")
    assert room.join(code, "browser:rotated-0", "10.0.0.7") == ids[0]  # known: not a new join
    ids += [room.join(code, f"browser:class-{i}", "10.0.0.8") for i in range(3)]  # another address: let in
    with pytest.raises(cr.ClassFull):
        room.join(code, "browser:late", "10.0.0.9")
    assert len(set(ids)) == 8 and len(store.hgetall(f"mlsim:class:{code}:members")) == 8
    for i, student in enumerate(ids):
        room.answer(code, student, q.id, "ab"[i % 2])
    assert sum(room.histogram(code, secret).values()) == 8
    room.end(code, secret)
    assert store.hgetall(f"mlsim:class:{code}:members") == {}  # ending the class forgets its students


NODE = __import__("shutil").which("node")
KEEPER_HARNESS = """
const store = () => { const m = new Map(); return { getItem: (k) => (m.has(k) ? m.get(k) : null),
  setItem: (k, v) => m.set(k, String(v)), removeItem: (k) => m.delete(k), m }; };
globalThis.window = { sessionStorage: store(), localStorage: store() };
const { default: keeper } = await import(process.argv[2]);
const sent = [];
const run = (data) => keeper({ data, setTriggerValue: (name, value) => sent.push([name, value]) });
const pair = { code: 'ACDEF', secret: 'S'.repeat(32) };
const log = {};
run({ n: 'n1', teaching: false, pair: null, pair_id: null, drop: false }); // no class, nothing kept: nothing sent
run({ n: 'n1', teaching: true, pair, pair_id: 'p1', drop: false });  // the class started: kept, and said so
run({ n: 'n1', teaching: true, pair, pair_id: 'p1', drop: false });  // the same pair again (before the ack): once
run({ n: 'n1', teaching: true, pair: null, pair_id: 'p1', drop: false });  // acknowledged: later runs send no pair
log.kept = window.sessionStorage.getItem('mlsim.class');
window.__mlsimClassKeeper.sent.clear();                   // a reload: a new page, a new session
run({ n: 'n2', teaching: false, pair: null, pair_id: null, drop: false }); // hands back the kept pair
run({ n: 'n2', teaching: false, pair: null, pair_id: null, drop: true });  // refused: dropped, nothing sent again
log.after = window.sessionStorage.getItem('mlsim.class');
run({ n: 'n3', teaching: true, pair, pair_id: 'p3', drop: false });  // a teacher again
run({ n: 'n3', teaching: false, pair: null, pair_id: 'p3', drop: true });  // another tab took the class over:
log.moved = window.sessionStorage.getItem('mlsim.class');             // dropped, and not handed back
log.local = window.localStorage.m.size;                   // a student keeps nothing in the browser
console.log(JSON.stringify({ sent, ...log }));
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_keeper_script_keeps_the_pair_in_the_tab_and_hands_it_back_once(tmp_path):
    """ui/classroom_keeper.js run by node with in-memory storages: what it keeps, drops and sends. The pair is
    acknowledged once (so the server stops sending the secret), and a pair the server dropped (the class moved to
    another tab) is never handed back, which would turn "now taught from another tab" into "has ended" (issue 40,
    D2 and D3)."""
    import json
    import subprocess
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "ui/classroom_keeper.js"
    module = tmp_path / "keeper.mjs"
    module.write_text(script.read_text("utf-8"))
    harness = tmp_path / "harness.mjs"
    harness.write_text(KEEPER_HARNESS)
    result = subprocess.run([NODE, str(harness), str(module)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    assert json.loads(got["kept"]) == {"code": "ACDEF", "secret": "S" * 32} and got["after"] is None
    assert got["sent"] == [["kept", "p1"], ["hello", {"code": "ACDEF", "secret": "S" * 32}], ["kept", "p3"]]
    assert got["moved"] is None and got["local"] == 0


def test_the_launcher_gives_its_processes_one_class_store(tmp_path, monkeypatch):
    """deploy/classroom.py: with several app processes and no MLSIM_CLASS_STORE, a private redis-server that the
    processes inherit (a Child the launcher watches and stops); one process, or a store named already, starts
    nothing."""
    import argparse
    import os

    from deploy import classroom as launcher

    if launcher.find_redis() is None:
        pytest.skip("redis-server is missing")
    monkeypatch.setenv(launcher.STORE_ENV, "")  # restored after the test, whatever class_store sets
    assert launcher.class_store(argparse.Namespace(processes=1, remote=[]), tmp_path) is None
    assert os.environ[launcher.STORE_ENV] == ""  # one process: its own memory is the store
    store = launcher.class_store(argparse.Namespace(processes=2, remote=[]), tmp_path)
    try:
        room = Classroom(open_store(os.environ[launcher.STORE_ENV]))
        code, _ = room.create("classification", {})
        assert isinstance(room.store, RedisStore) and room.state(code).lab == "classification"
        named = os.environ[launcher.STORE_ENV]
        assert launcher.class_store(argparse.Namespace(processes=4, remote=[]), tmp_path) is None
        assert os.environ[launcher.STORE_ENV] == named  # a store named already is kept
    finally:
        launcher.stop_all([store.proc])
    with pytest.raises(cr.StoreUnavailable):
        room.state(code)  # stopped with the launcher
