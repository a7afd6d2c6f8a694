"""What an idle class costs the server: a teacher and K students in real browsers, nobody touching anything.

One app server (deploy.local.running_app) and one headless Chromium at the lowest CPU priority (`nice -n 19`: in
a class the browsers run on the students' laptops) with K + 1 browser contexts, each its own cookie, so its own
person. The teacher starts a class on /classroom, reads the class code and opens the classification lab from the
sidebar (the class follows it); K students open the join link (/?class=CODE) and wait until their page shows the
lab; then nothing changes. After --settle seconds the server's CPU (utime + stime from /proc, of the server process
and its children) is read over --seconds and printed as cores; then, with the dashboard (--dashboard, on unless
--no-dashboard), the teacher opens the class at a glance (the button of the teacher's panel; the class stays on the
lab) and the same is measured again.
It drives the app only through the browser (a student page learns of the teacher's changes over the live channel,
server/class_push.py; before that it polled the class every 0.5 s, which this measured at 0.116 cores for 10
students, 0.15-0.19 for 30).
Each page counts its WebSocket messages (a wrapper in the page), printed per student per second as a check of
what the server is asked to do.

    python -m benchmarks classroom_idle [--students 30] [--seconds 20] [--settle 5] [--no-dashboard]
"""
import argparse
import importlib
import os
import re
import stat
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# classroom_browser.py is a script that imports its neighbour as `browser`: the same module, under that name
sys.modules.setdefault("browser", importlib.import_module("benchmarks.browser"))
from benchmarks.browser import LIVE_CANVAS  # noqa: E402
from benchmarks.classroom_browser import cpu_s, rss_mb  # noqa: E402
from deploy.local import CHROMIUM, CHROMIUM_ARGS, running_app  # noqa: E402

START_BTN = ".st-key-room-start_btn button"  # the "Start a class" button (key room.start_btn), in any language
CODE = '[data-testid="room-big"]'  # the class code, projector-sized
DASHBOARD = ".mlsim-board"  # the class at a glance (labs/classroom/board.js)
# every WebSocket of the page counts its messages (in: from the server, out: to it); a subclass, so the page's own
# code sees the WebSocket it expects (its constants, its events)
COUNT_WS = """(() => {
  const W = window.WebSocket, n = window.__benchWs = {in: 0, out: 0};
  window.WebSocket = class extends W {
    constructor(...a) { super(...a); this.addEventListener('message', () => { n.in += 1; }); }
    send(d) { n.out += 1; return super.send(d); }
  };
})();"""
WS_COUNTS = "() => ({...(window.__benchWs || {in: 0, out: 0}), t: performance.now() / 1000})"  # t: the page's clock


def family(pid: int) -> list[int]:
    """The process and its live descendants."""
    parents: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(parents.get(p, []))
    return out


def server_cpu_s(pid: int) -> float:
    """CPU seconds of the server, its live children and the children it has waited for (cutime + cstime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    total = (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")
    for p in family(pid):
        try:
            total += cpu_s(p)
        except OSError:  # a child that ended meanwhile
            pass
    return total


def server_rss_mb(pid: int) -> float:
    total = 0.0
    for p in family(pid):
        try:
            total += rss_mb(p)
        except (OSError, AttributeError):
            pass
    return round(total, 1)


def niced_chromium() -> str:
    """A wrapper that starts Chromium under `nice -n 19` (Playwright's launch cannot nice the browser itself)."""
    path = Path(tempfile.mkdtemp()) / "chromium-nice"
    path.write_text(f'#!/bin/sh\nexec nice -n 19 {CHROMIUM} "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def goto(page, url: str, tries: int = 5, wait_until: str = "load") -> None:
    for i in range(tries):
        try:
            page.goto(url, timeout=120_000, wait_until=wait_until)
            return
        except Exception:
            if i == tries - 1:
                raise
            time.sleep(1.0)


def on_lab(page, timeout_s: float) -> None:
    """The page shows the classification lab: its URL, and its live canvas drawn."""
    page.wait_for_url(re.compile(r"/classification"), timeout=timeout_s * 1000)
    page.locator(LIVE_CANVAS).first.wait_for(timeout=timeout_s * 1000)


def server_cpu(pid: int, seconds: float, students: list, teacher) -> dict:
    """The server's cores over `seconds`, and the WebSocket messages per second of a student page and the teacher's."""
    w0 = [p.evaluate(WS_COUNTS) for p in [*students, teacher]]
    c0, t0 = server_cpu_s(pid), time.perf_counter()
    time.sleep(seconds)
    c1, t1 = server_cpu_s(pid), time.perf_counter()
    w1 = [p.evaluate(WS_COUNTS) for p in [*students, teacher]]
    dt = t1 - t0
    # per page over its own window (reading K pages on a loaded machine takes a while: not the CPU's window)
    per = [{k: (b[k] - a[k]) / max(b["t"] - a["t"], 1e-9) for k in ("in", "out")} for a, b in zip(w0, w1, strict=True)]
    n = max(len(students), 1)
    return {"cores": (c1 - c0) / dt, "dt": dt,
            "student_in": sum(p["in"] for p in per[:-1]) / n, "student_out": sum(p["out"] for p in per[:-1]) / n,
            "teacher_in": per[-1]["in"], "teacher_out": per[-1]["out"]}


def print_cpu(label: str, m: dict, students: int) -> None:
    print(f"{label}: {students} students, {m['cores']:.3f} cores of server (over {m['dt']:.0f} s)")
    print(f"  the machine's load average (1 min) after it: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"  websocket messages per second: a student page {m['student_out']:.2f} sent / {m['student_in']:.2f} "
          f"received; the teacher's page {m['teacher_out']:.2f} sent / {m['teacher_in']:.2f} received")
    sent = students * m["student_out"] + m["teacher_out"]  # what the browsers asked of the server, per second
    if sent > 0:  # a loaded machine slows the pages' timers: fewer polls, fewer cores; this stays comparable
        print(f"  server CPU per message from a browser: {1000 * m['cores'] / sent:.2f} ms")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks classroom_idle", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--seconds", type=float, default=20.0, help="the measured window")
    ap.add_argument("--settle", type=float, default=5.0, help="seconds of quiet before each measure")
    ap.add_argument("--dashboard", action=argparse.BooleanOptionalAction, default=None,
                    help="measure again with the teacher's class at a glance open (default: on)")
    ap.add_argument("--lang", default="en")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds the students' pages may take to open")
    a = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    started = time.perf_counter()
    with running_app() as (base, server), sync_playwright() as pw:
        pid = server.pid
        browser = pw.chromium.launch(executable_path=niced_chromium(), args=CHROMIUM_ARGS)
        try:
            def person():
                ctx = browser.new_context(viewport={"width": 1200, "height": 800})
                ctx.add_init_script(COUNT_WS)
                return ctx.new_page()

            teacher = person()
            goto(teacher, f"{base}/classroom?lang={a.lang}")
            teacher.locator(START_BTN).first.click(timeout=120_000)
            code = teacher.locator(CODE).first.inner_text(timeout=60_000).strip()
            nav = teacher.locator('[data-testid="stSidebarNav"] a[href$="/classification"]')
            if nav.count():
                nav.first.click()  # the same session: the class follows the teacher onto the lab
            else:
                goto(teacher, f"{base}/classification?lang={a.lang}")
            on_lab(teacher, 120)
            print(f"class {code}: the teacher is on the classification lab "
                  f"({time.perf_counter() - started:.0f} s since start)", flush=True)
            rss_none = server_rss_mb(pid)
            students = []
            for _ in range(a.students):
                page = person()
                goto(page, f"{base}/?class={code}&lang={a.lang}", wait_until="commit")  # they load side by side
                students.append(page)
            deadline = time.monotonic() + a.timeout
            for i, page in enumerate(students):
                try:
                    on_lab(page, max(1.0, deadline - time.monotonic()))
                except Exception as err:
                    raise RuntimeError(f"student {i} did not reach the lab: {page.url}") from err
            print(f"{a.students} students on the lab ({time.perf_counter() - started:.0f} s since start)", flush=True)
            time.sleep(a.settle)
            rss0 = server_rss_mb(pid)
            print_cpu("idle class", server_cpu(pid, a.seconds, students, teacher), a.students)
            if a.dashboard is not False:
                # the teacher's panel's button: the class at a glance, while the class stays on the lab
                teacher.locator(".st-key-room-to_board button").first.click()
                try:
                    teacher.locator(DASHBOARD).first.wait_for(timeout=60_000)
                    found = True
                except Exception:
                    found = False
                if found:
                    time.sleep(a.settle)
                    print_cpu("with the teacher's dashboard open", server_cpu(pid, a.seconds, students, teacher),
                           a.students)
                else:
                    print("with the teacher's dashboard open: skipped (the teacher's /classroom page shows no "
                          f"class dashboard: none of {DASHBOARD})")
            rss1 = server_rss_mb(pid)
            errors = sum(p.locator('[data-testid="stException"]').count() for p in [*students, teacher])
        finally:
            browser.close()
    print(f"server VmRSS: {rss_none:.1f} MB with the teacher alone, {rss0:.1f} MB before the measures "
          f"({a.students} students in), {rss1:.1f} MB after them")
    if errors:
        print(f"exceptions shown on the pages: {errors}")
    print(f"run time: {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
