"""Classroom mode in headless Chromium: a teacher and a student in two browser contexts, on two app processes
whose class store is one real redis-server (so the test can read the class), a student URL with a forged
secret, and the presenter view (type sizes, hidden controls, controls behind one button, keyboard shortcuts)."""
import json
import os
import re
import time

import pytest
from browsertools import open_page
from conftest import running_app

from ui.classroom import STORE_ENV
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
EN = catalogue("en")


@pytest.fixture(scope="module")
def class_servers(redis_url):
    """Two app processes sharing the test's redis-server as their class store, as behind the load balancer;
    yields (base URL of one, base URL of the other, redis client)."""
    import redis

    before = os.environ.get(STORE_ENV)
    os.environ[STORE_ENV] = redis_url
    try:
        with running_app() as (one, _), running_app() as (other, _):
            yield one, other, redis.Redis.from_url(redis_url, decode_responses=True)
    finally:
        if before is None:
            os.environ.pop(STORE_ENV)
        else:
            os.environ[STORE_ENV] = before


def no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0


def class_record(r, code: str) -> dict:
    return json.loads(r.get(f"mlsim:class:{code}"))


def choose(page, key: str, option: str) -> None:
    """Pick `option` in the selectbox of widget key `key` (Streamlit marks it with the class st-key-<key>)."""
    box = page.locator(f'.st-key-{key.replace(".", "-")} input[role="combobox"]').first
    box.scroll_into_view_if_needed()
    box.click()
    page.get_by_role("option", name=option, exact=True).click()


def query_has(page, text: str, timeout_ms: int) -> None:
    page.wait_for_function("t => location.search.includes(t)", arg=text, timeout=timeout_ms)


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
        deadline = time.time() + 20
        while class_record(r, code)["lab"] != "classification" and time.time() < deadline:
            time.sleep(0.2)
        if class_record(r, code)["lab"] != "classification":
            teacher.screenshot(path="/tmp/teacher_fail.png", full_page=True)
        assert class_record(r, code)["lab"] == "classification", class_record(r, code)
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
        student.get_by_text(EN["cls.activation.linear"]).first.wait_for(timeout=10_000)
        no_exception(student)
        # a student's URL with a forged secret (and its own settings) joins as a student, nothing more
        v = class_record(r, code)["v"]
        open_page(forger, f"{other}/classification?class={code}&lang=en&secret=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
                          f"&_cls.secret=x&teacher=1&activation=sigmoid")
        forger.get_by_text(EN["cls.title"]).first.wait_for(timeout=60_000)
        query_has(forger, "activation=linear", 15_000)  # it follows the class, like any student
        choose(forger, "cls.activation", EN["cls.activation.relu"])
        query_has(forger, "activation=relu", 10_000)
        time.sleep(3)  # longer than a poll: a change would have reached the store and the student
        record = class_record(r, code)
        assert record["params"]["activation"] == "linear" and record["v"] == v
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
    sizes = page.evaluate("""() => ({
        h1: parseFloat(getComputedStyle(document.querySelector('h1')).fontSize),
        p: parseFloat(getComputedStyle(document.querySelector('[data-testid="stCaptionContainer"]')).fontSize),
        sidebar: (() => { const s = document.querySelector('[data-testid="stSidebar"]');
                          return s ? s.getBoundingClientRect().width : 0; })(),
        bg: getComputedStyle(document.querySelector('.stApp')).backgroundColor })""")
    assert sizes["h1"] >= 60 and sizes["p"] >= 24, sizes  # projector-sized (the normal view: 44 px, 14 px)
    assert sizes["sidebar"] == 0 and sizes["bg"] == "rgb(0, 0, 0)", sizes
    # the controls are folded behind one button; hidden ones are nowhere
    assert page.get_by_text(EN["cls.activation"], exact=True).count() == 0
    page.get_by_role("button", name=EN["present.controls"]).click()
    page.get_by_text(EN["cls.activation"], exact=True).first.wait_for(timeout=10_000)
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
    assert "present=1" in page.url and "hide=lr%2Cseed" in page.url or "hide=lr,seed" in page.url
