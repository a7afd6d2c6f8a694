"""The teacher sees the class, in headless Chromium on the browser tests' app server (one process, the in-process
class store): the follow pushed over the live channel (no timer reruns a student's page), the class at a glance with
two students' tiles and thumbnails, a click on a tile, back to the teacher, the hidden counts, a closed question after
a reload, the answers as CSV, and a following student's own picks while CPU hogs run."""
import csv
import io
import multiprocessing as mp
import re
import time

import pytest

from browsertools import choose, no_exception, open_page, page_idle, pixels, query_has, start_class
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
EN = catalogue("en")
WIDE = {"viewport": {"width": 1400, "height": 1000}}
CHART = '[data-testid="stMain"] [data-testid="stVegaLiteChart"]'  # the count per option (ui.charts.bar_chart)


def join(student, base: str, code: str) -> None:
    open_page(student, f"{base}/?class={code}&lang=en")
    student.wait_for_url(re.compile(r"/classification"), timeout=30_000)
    student.get_by_text(EN["cls.title"]).first.wait_for(timeout=60_000)
    student.wait_for_function("() => (window.__mlsimClassWatch || {}).opened >= 1", timeout=30_000)


def to_lab(teacher) -> None:
    teacher.locator('[data-testid="stSidebarNav"] a[href$="/classification"]').click()
    teacher.get_by_text(EN["cls.title"]).first.wait_for(timeout=60_000)
    page_idle(teacher)


def script_runs(page) -> int:
    """Script runs this page has asked for so far: Streamlit's status widget shows while a run is on; the counter is
    kept by a MutationObserver installed by watch_runs."""
    return page.evaluate("() => window.__runs || 0")


def watch_runs(page) -> None:
    page.evaluate("""() => {
        window.__runs = 0;
        new MutationObserver(() => {
            const running = !!document.querySelector('[data-testid="stStatusWidget"]');
            if (running && !window.__wasRunning) window.__runs += 1;
            window.__wasRunning = running;
        }).observe(document.body, {subtree: true, childList: true});
    }""")


def test_follow_is_pushed_and_the_board_shows_two_students(server, browser):
    contexts = [browser.new_context(**WIDE) for _ in range(3)]
    teacher, one, two = (c.new_page() for c in contexts)
    try:
        code = start_class(teacher, server)
        to_lab(teacher)
        join(one, server, code)
        join(two, server, code)
        # idle: no timer reruns a student's page (the old follow polled in a fragment every 0.5 s)
        page_idle(one)
        watch_runs(one)
        time.sleep(3)
        assert script_runs(one) == 0
        # the teacher's change reaches both students over the channel
        choose(teacher, "cls.activation", EN["cls.activation.linear"])
        for s in (one, two):
            query_has(s, "activation=linear", 15_000)
            s.wait_for_function("() => window.__mlsimClassWatch.pushes >= 1", timeout=10_000)
        # a name, typed by the second student; the first plays its run a little, the second explores
        two.locator(".st-key-room-name input").fill("Ada")
        two.locator(".st-key-room-name input").press("Enter")
        one.get_by_role("button", name=EN["cls.step"]).first.click()
        two.get_by_role("button", name=EN["room.explore"]).click()
        two.get_by_role("button", name=EN["room.snap_back"]).wait_for(timeout=15_000)
        choose(two, "cls.activation", EN["cls.activation.sigmoid"])
        query_has(two, "activation=sigmoid", 15_000)
        # the teacher's own screen: two tiles, one named, each with its thumbnail drawn
        teacher.get_by_role("button", name=EN["room.to_board"]).click()  # the class stays on the lab
        board = teacher.locator(".mlsim-board")
        board.wait_for(timeout=60_000)
        teacher.wait_for_function("() => document.querySelector('.mlsim-board').dataset.tiles === '2'", timeout=20_000)
        teacher.wait_for_function("() => [...document.querySelectorAll('.mlsim-tile')].some(t => t.textContent"
                                  ".includes('activation=sigmoid'))", timeout=20_000)
        assert "/classification" in one.url and "/classification" in two.url
        tiles = board.locator(".mlsim-tile")
        texts = [tiles.nth(i).inner_text() for i in range(2)]
        assert "Student 1" in texts[0] and "Ada" in texts[1], texts
        assert EN["room.tile_explore"] in texts[1] and "activation=sigmoid" in texts[1], texts
        for i in range(2):
            thumb = pixels(tiles.nth(i).locator("canvas"))
            assert thumb[..., :3].std() > 5, "a blank thumbnail"
        # a click on Ada's tile shows her run to the class: the teacher's lab with her settings, and the class
        # (the first student) follows
        tiles.nth(1).click()
        teacher.wait_for_url(re.compile(r"/classification"), timeout=30_000)
        query_has(teacher, "activation=sigmoid", 15_000)
        query_has(one, "activation=sigmoid", 15_000)
        # back to the teacher: the explorer takes the teacher's settings at once
        choose(teacher, "cls.activation", EN["cls.activation.tanh"])
        query_has(one, "activation=tanh", 15_000)
        time.sleep(1)
        assert "activation=sigmoid" in two.url  # exploring: not taken
        two.get_by_role("button", name=EN["room.snap_back"]).click()
        query_has(two, "activation=tanh", 15_000)
        two.get_by_role("button", name=EN["room.explore"]).wait_for(timeout=15_000)
        for p in (teacher, one, two):
            no_exception(p)
    finally:
        for c in contexts:
            c.close()


def test_questions_hidden_counts_closed_after_reload_and_csv(server, browser):
    contexts = [browser.new_context(**WIDE, accept_downloads=True) for _ in range(2)]
    teacher, student = (c.new_page() for c in contexts)
    try:
        code = start_class(teacher, server)
        open_page(student, f"{server}/classroom?class={code}&lang=en")
        teacher.get_by_role("button", name=EN["room.pose"]).first.click()  # the bank's first question
        question = EN["room.q.linear_deep"]
        student.get_by_text(question).first.wait_for(timeout=30_000)
        student.get_by_role("button", name=EN["room.q.linear_deep.straight"]).click()
        student.get_by_text(EN["room.your_answer"].split("{")[0]).first.wait_for(timeout=15_000)
        # the teacher's page counts one answer, and shows no count per option (no chart) until asked or revealed
        teacher.get_by_text(EN["room.answers"].replace("{n}", "1").split("(")[0].strip()).first.wait_for(
            timeout=15_000)
        assert teacher.locator(CHART).count() == 0
        teacher.get_by_text(EN["room.peek"]).click()
        teacher.locator(CHART).first.wait_for(timeout=15_000)
        # the presenter view of the same class (the teacher's tab, projected) has no peek and no counts
        projector_url = teacher.url + ("&" if "?" in teacher.url else "?") + "present=1"
        teacher.goto(projector_url)
        teacher.get_by_text(question).first.wait_for(timeout=30_000)
        page_idle(teacher)
        assert teacher.locator(CHART).count() == 0 and teacher.get_by_text(EN["room.peek"]).count() == 0
        # closed: the student's buttons go, also after a reload, and their answer stays
        teacher.get_by_role("button", name=EN["room.close_q"]).click()
        closed = EN["room.closed"].split("{")[0]
        student.get_by_text(closed).first.wait_for(timeout=15_000)
        student.reload()
        student.get_by_text(closed).first.wait_for(timeout=60_000)
        page_idle(student)
        assert student.get_by_role("button", name=EN["room.q.linear_deep.curved"]).count() == 0
        assert EN["room.q.linear_deep.straight"] in student.get_by_text(closed).first.inner_text()
        # the answers as a file
        teacher.goto(projector_url.replace("present=1", "present=0"))
        with teacher.expect_download(timeout=30_000) as got:
            teacher.get_by_role("button", name=EN["room.csv"]).click()
        rows = list(csv.DictReader(io.StringIO(open(got.value.path(), encoding="utf-8").read())))
        answers = [r for r in rows if r["row"] == "answer"]
        assert len(answers) == 1 and answers[0]["answer"] == EN["room.q.linear_deep.straight"]
        assert answers[0]["question"] == question and answers[0]["student"] == "Student 1"
        counts = {r["answer"]: r["count"] for r in rows if r["row"] == "count"}
        assert counts[EN["room.q.linear_deep.straight"]] == "1" and counts[EN["room.q.linear_deep.curved"]] == "0"
        for p in (teacher, student):
            no_exception(p)
    finally:
        for c in contexts:
            c.close()


def _hog(stop) -> None:
    x = 0
    while not stop.is_set():
        x += 1


def test_a_following_students_own_picks_all_land_under_load(server, browser):
    """The defect the poll had: a following student's pick that reached the app only inside the poll's fragment rerun
    was never taken by the page and its URL. With nothing rerun by a timer, every pick lands, with CPU hogs running."""
    contexts = [browser.new_context(**WIDE) for _ in range(2)]
    teacher, student = (c.new_page() for c in contexts)
    stop = mp.Event()
    hogs = [mp.Process(target=_hog, args=(stop,), daemon=True) for _ in range(3)]
    try:
        code = start_class(teacher, server)
        to_lab(teacher)
        join(student, server, code)
        for h in hogs:
            h.start()
        picks = (("relu", "sigmoid", "tanh", "linear") * 13)[:50]  # the yardstick: 0 swallowed in 50
        for pick in picks:
            choose(student, "cls.activation", EN[f"cls.activation.{pick}"])
            query_has(student, f"activation={pick}", 15_000)  # taken by the page and its URL, first time
        no_exception(student)
    finally:
        stop.set()
        for h in hogs:
            h.join(5)
        for c in contexts:
            c.close()
