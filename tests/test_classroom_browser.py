"""Classroom mode in headless Chromium: a teacher and a student in two browser contexts, on two app processes
whose class store is one real redis-server (so the test can read the class), a student URL with a forged
secret, and the presenter view (type sizes, hidden controls, controls behind one button, keyboard shortcuts)."""
import json
import os
import re
import time
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from waits import stays, wait_until

from browsertools import choose, no_exception, open_page, query_has, start_class
from conftest import running_app
from ui.classroom import REPORT_S, STORE_ENV
from ui.i18n import catalogue

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("class_servers")]  # its module fixture starts once
EN = catalogue("en")
LOGS = []  # the class servers' output files


def class_logs() -> str:
    return "".join(p.read_text(encoding="utf-8", errors="replace") for p in LOGS)


@pytest.fixture(scope="module")
def class_servers(redis_url, tmp_path_factory):
    """Two app processes sharing the test's redis-server as their class store, as behind the load balancer;
    yields (base URL of one, base URL of the other, redis client). Their output goes to class_logs."""
    import redis

    before = os.environ.get(STORE_ENV)
    os.environ[STORE_ENV] = redis_url
    folder = tmp_path_factory.mktemp("class_servers")
    LOGS[:] = [folder / "one.log", folder / "other.log"]
    try:
        with LOGS[0].open("w") as log1, LOGS[1].open("w") as log2, running_app(log1) as (one, _), \
                running_app(log2) as (other, _):
            yield one, other, redis.Redis.from_url(redis_url, decode_responses=True)
    finally:
        if before is None:
            os.environ.pop(STORE_ENV)
        else:
            os.environ[STORE_ENV] = before


def class_record(r, code: str) -> dict:
    return json.loads(r.get(f"mlsim:class:{code}"))


def test_student_follows_the_teacher_and_a_forged_secret_changes_nothing(class_servers, browser):
    """The teacher on one app process, the students on the other: the class is in the shared store."""
    base, other, r = class_servers
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(3)]
    teacher, student, forger = (c.new_page() for c in contexts)
    try:
        open_page(teacher, f"{base}/classroom?lang=en")
        teacher.get_by_role("button", name=EN["room.start"]).click()
        big = teacher.locator('[data-testid="room-big"]').first
        big.wait_for(timeout=30_000)
        code = big.inner_text().strip()
        assert re.fullmatch(r"[A-Z0-9]{5}", code) and class_record(r, code)["lab"] == "classroom"
        teacher.locator('[data-testid="stImage"] img').first.wait_for(timeout=30_000)  # the QR code
        # the teacher goes to a lab (inside the app: the same session, which holds the secret)
        teacher.locator('[data-testid="stSidebarNav"] a[href$="/classification"]').click()
        teacher.get_by_text(EN["cls.title"]).first.wait_for(timeout=60_000)
        wait_until(lambda: class_record(r, code)["lab"] == "classification", 20, "the class to follow the lab")
        # a student joins with the link: lands on the teacher's lab
        open_page(student, f"{other}/?class={code}&lang=en")
        student.wait_for_url(re.compile(r"/classification"), timeout=30_000)
        student.get_by_text(EN["cls.title"]).first.wait_for(timeout=60_000)
        # the teacher changes a setting: the student's page follows within a few seconds
        choose(teacher, "cls.activation", EN["cls.activation.linear"])
        query_has(teacher, "activation=linear", 15_000)
        t0 = time.time()
        try:
            query_has(student, "activation=linear", 10_000)
        except Exception:
            student.screenshot(path="/tmp/student_fail.png", full_page=True)
            print("RECORD", class_record(r, code), student.url)
            raise
        followed = time.time() - t0
        student.wait_for_function(  # the selectbox shows it (its input's value)
            "v => (document.querySelector('.st-key-cls-activation input') || {}).value === v",
            arg=EN["cls.activation.linear"], timeout=30_000)
        no_exception(student)
        # a student's URL with a forged secret (and its own settings) joins as a student, nothing more
        v = class_record(r, code)["v"]
        open_page(forger, f"{other}/classification?class={code}&lang=en&secret=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
                          f"&_cls.secret=x&teacher=1&activation=sigmoid")
        forger.get_by_text(EN["cls.title"]).first.wait_for(timeout=60_000)
        query_has(forger, "activation=linear", 15_000)  # it follows the class, like any student
        # its own change shows in its own URL, the first time (no timed fragment rerun swallows it any more: the
        # class is pushed, tests/test_classroom_board_browser.py picks many times under load)
        choose(forger, "cls.activation", EN["cls.activation.sigmoid"])
        query_has(forger, "activation=sigmoid", 15_000)
        # the forger's own page changed; the class must not: watched for longer than the forger's page takes to
        # write its tile (REPORT_S), in which a change it could make would have reached the store
        settings = stays(lambda: (class_record(r, code)["params"]["activation"], class_record(r, code)["v"]),
                         2.5 * REPORT_S, "a student's change reached the class")
        assert settings == ("linear", v)
        assert "activation=linear" in student.url
        no_exception(forger)
        print(f"student followed in {followed:.2f} s")
    finally:
        for c in contexts:
            c.close()


def test_presenter_view_type_sizes_hidden_controls_and_keys(class_servers, page):
    base, _, _ = class_servers
    open_page(page, f"{base}/classification?lang=en&present=1&hide=lr,seed")
    page.locator("h1").filter(has_text=EN["cls.title"]).first.wait_for(timeout=60_000)
    play = page.get_by_role("button", name=EN["cls.play"])
    play.first.wait_for(timeout=60_000)
    # the presenter style comes with the page's run (its CSS element), which a loaded machine may draw after the buttons
    page.wait_for_function("() => getComputedStyle(document.querySelector('.stApp')).backgroundColor"
                           " === 'rgb(0, 0, 0)'", timeout=30_000)
    sizes = page.evaluate("""() => ({
        h1: parseFloat(getComputedStyle(document.querySelector('h1')).fontSize),
        p: parseFloat(getComputedStyle(document.querySelector('[data-testid="stCaptionContainer"]')).fontSize),
        sidebar: (() => { const s = document.querySelector('[data-testid="stSidebar"]');
                          return s ? s.getBoundingClientRect().width : 0; })(),
        bg: getComputedStyle(document.querySelector('.stApp')).backgroundColor })""")
    # projector-sized (the normal view: 28 px, 14 px); the title one line, so no larger than the figure allows
    assert sizes["h1"] >= 40 and sizes["p"] >= 24, sizes
    assert sizes["sidebar"] == 0 and sizes["bg"] == "rgb(0, 0, 0)", sizes
    # the main controls beside the figure, the rest behind one button; hidden ones are nowhere
    assert page.get_by_text(EN["cls.activation"], exact=True).first.is_visible()
    assert page.get_by_text(EN["cls.optimizer"], exact=True).count() == 0
    page.get_by_role("button", name=EN["present.controls"]).click()
    page.get_by_text(EN["cls.optimizer"], exact=True).first.wait_for(timeout=10_000)
    assert page.get_by_text(EN["cls.lr"], exact=True).count() == 0
    assert page.get_by_text(EN["cls.seed"], exact=True).count() == 0
    page.keyboard.press("Escape")
    # space plays, space again pauses
    page.locator("h1").first.click()
    page.keyboard.press(" ")
    page.get_by_role("button", name=EN["cls.pause"]).first.wait_for(timeout=20_000)
    page.keyboard.press(" ")
    play.first.wait_for(timeout=20_000)
    no_exception(page)
    query = parse_qs(urlparse(page.url).query)
    assert (query.get("present"), query.get("hide")) == (["1"], ["lr,seed"]), query


def tab_storage(page) -> dict:
    """What the keeper (ui/classroom_keeper.js) keeps in this tab (the teacher's pair), and what the app keeps in the
    browser's localStorage (nothing: a student is known by the HttpOnly cookie; Streamlit's own keys aside)."""
    return page.evaluate("() => ({pair: sessionStorage.getItem('mlsim.class'), "
                         "local: Object.keys(localStorage).filter((k) => k.startsWith('mlsim'))})")


def kept_pair(page, r, code: str) -> dict:
    """The pair the teacher's tab keeps, once the keeper wrote it; checked against the class's stored hash."""
    import hashlib

    page.wait_for_function("c => (sessionStorage.getItem('mlsim.class') || '').includes(c)", arg=code,
                           timeout=15_000)
    pair = json.loads(tab_storage(page)["pair"])
    assert pair["code"] == code
    assert hashlib.sha256(pair["secret"].encode()).hexdigest() == class_record(r, code)["secret"]
    assert pair["secret"] not in page.url and code not in page.url  # the teacher's URL carries neither
    return pair


def test_a_reloaded_teacher_tab_is_still_the_teacher(class_servers, browser):
    base, other, r = class_servers
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(2)]
    teacher, student = (c.new_page() for c in contexts)
    try:
        code = start_class(teacher, base)
        pair = kept_pair(teacher, r, code)
        teacher.locator('[data-testid="stSidebarNav"] a[href$="/classification"]').click()
        teacher.get_by_text(EN["cls.title"]).first.wait_for(timeout=60_000)
        wait_until(lambda: class_record(r, code)["lab"] == "classification", 20, "the class to follow the lab")
        open_page(student, f"{other}/?class={code}&lang=en")
        student.wait_for_url(re.compile(r"/classification"), timeout=30_000)
        assert not any(pair["secret"] in json.dumps(v) for v in tab_storage(student).values())

        teacher.reload()  # a new Streamlit session: the tab hands its pair back and is the teacher again
        teacher.get_by_text(re.compile(f"still teaching class {code}")).first.wait_for(timeout=30_000)
        again = kept_pair(teacher, r, code)
        assert again["secret"] != pair["secret"]  # a new secret: the old pair steers nothing now
        no_exception(teacher)

        # a second tab of the teacher's browser is not a second teacher
        second = contexts[0].new_page()
        open_page(second, f"{base}/classroom?lang=en")
        second.get_by_role("button", name=EN["room.start"]).wait_for(timeout=30_000)
        assert tab_storage(second) == {"pair": None, "local": []}
        second.close()

        teacher.get_by_text(EN["cls.title"]).first.wait_for(timeout=60_000)
        choose(teacher, "cls.activation", EN["cls.activation.linear"])
        query_has(teacher, "activation=linear", 15_000)
        t0 = time.time()
        query_has(student, "activation=linear", 10_000)
        followed_setting = time.time() - t0
        teacher.locator('[data-testid="stSidebarNav"] a[href$="/regression"]').click()
        teacher.wait_for_url(re.compile(r"/regression"), timeout=30_000)
        t0 = time.time()
        student.wait_for_url(re.compile(r"/regression"), timeout=10_000)
        followed_lab = time.time() - t0
        assert class_record(r, code)["lab"] == "regression"
        no_exception(student)
        print(f"after the reload the student followed a setting in {followed_setting:.2f} s, "
              f"the lab in {followed_lab:.2f} s")

        # ending the class clears the tab's storage
        teacher.locator('[data-testid="stSidebarNav"] a[href$="/classroom"]').click()
        teacher.get_by_role("button", name=EN["room.end"]).click()
        teacher.wait_for_function("() => sessionStorage.getItem('mlsim.class') === null", timeout=15_000)
        assert r.get(f"mlsim:class:{code}") is None
        logs = class_logs()
        assert "Uncaught" not in logs and pair["secret"] not in logs and again["secret"] not in logs
        assert not any(again["secret"] in u for u in (teacher.url, student.url))
    finally:
        for c in contexts:
            c.close()


def test_two_tabs_of_one_browser_answer_once(class_servers, browser):
    """Two tabs of one browser are one student (the class's id for the browser's cookie), another browser another:
    two students in the class, whose answers replace their own."""
    base, other, r = class_servers
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(3)]
    teacher = contexts[0].new_page()
    tabs = [contexts[1].new_page(), contexts[1].new_page(), contexts[2].new_page()]  # two tabs of A, one of B
    try:
        code = start_class(teacher, base)
        teacher.locator(".st-key-room-pose_bank button").click()
        wait_until(lambda: class_record(r, code)["question"] is not None, 15, "the question")
        for tab in tabs:
            open_page(tab, f"{other}/classroom?class={code}&lang=en")
            tab.get_by_text(EN["room.q.linear_deep"]).first.wait_for(timeout=60_000)
        members, seen = f"mlsim:class:{code}:members", f"mlsim:class:{code}:seen"
        ids = set(r.hgetall(members).values())
        assert len(ids) == 2 and all(re.fullmatch(r"[A-Za-z0-9_-]{16}", i) for i in ids)
        wait_until(lambda: set(r.hgetall(seen)) == ids, 20, "both students' polls to reach the class")
        answers = f"mlsim:class:{code}:answers"
        tabs[0].locator(".st-key-room-opt-0 button").click()
        wait_until(lambda: len(r.hgetall(answers)) == 1, 15, "the first answer")
        (a,) = r.hgetall(answers)
        tabs[1].locator(".st-key-room-opt-1 button").click()  # the same browser's other tab: replaces it
        wait_until(lambda: '.straight"' in r.hgetall(answers).get(a, ""), 15, "the second tab's answer")
        tabs[2].locator(".st-key-room-opt-0 button").click()
        wait_until(lambda: len(r.hgetall(answers)) == 2, 15, "the other browser's answer")
        got = sorted(json.loads(v)["a"] for v in r.hgetall(answers).values())
        assert got == ["room.q.linear_deep.curved", "room.q.linear_deep.straight"]
        assert {k.partition(":")[2] for k in r.hgetall(answers)} == ids  # "<question>:<student>"
        for tab in tabs:
            no_exception(tab)
    finally:
        for c in contexts:
            c.close()


def test_the_teacher_tab_is_the_teacher_again_after_the_server_restarts(redis_url, browser, tmp_path):
    """The browser reconnects to a new Streamlit session without reloading the page (here: the app process
    restarted on the same port; a long sleep past the session's lifetime is the same): the keeper hands the
    pair back to the new session, and the class, in the shared store, goes on."""
    import subprocess
    import sys
    import urllib.request

    from deploy.classroom import free_port

    port, log = free_port(), (tmp_path / "app.log").open("w")

    def start() -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                                 "--server.headless", "true"], cwd=Path(__file__).resolve().parent.parent,
                                stdout=log, stderr=subprocess.STDOUT, env={**os.environ, STORE_ENV: redis_url})

        def healthy() -> bool:
            assert proc.poll() is None, "the app stopped"
            try:
                return bool(urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2))
            except OSError:
                return False

        wait_until(healthy, 90, "the app to start")
        return proc

    procs = [start()]
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        teacher = ctx.new_page()
        code = start_class(teacher, f"http://127.0.0.1:{port}")
        teacher.wait_for_function("c => (sessionStorage.getItem('mlsim.class') || '').includes(c)", arg=code,
                                  timeout=15_000)
        before = json.loads(tab_storage(teacher)["pair"])
        procs[0].terminate()
        procs[0].wait(30)
        procs.append(start())
        teacher.get_by_text(re.compile(f"still teaching class {code}")).first.wait_for(timeout=60_000)
        after = json.loads(tab_storage(teacher)["pair"])
        assert after["code"] == code and after["secret"] != before["secret"]
        teacher.get_by_role("button", name=EN["room.end"]).wait_for(timeout=30_000)  # the teacher's view
        no_exception(teacher)
    finally:
        ctx.close()
        for proc in procs:
            proc.terminate()
            proc.wait(30)
        log.close()
