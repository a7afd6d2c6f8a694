"""deploy/classroom.py: two app processes behind HAProxy; two browsers land on different processes and stay there; the
launcher watches what it started: a process that dies is reaped, said and started again."""
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
from waits import wait_until

from browsertools import open_page
from deploy.classroom import find_haproxy, free_port
from server.live_channel import PATH as CHANNEL
from ui.i18n import catalogue

ROOT = Path(__file__).resolve().parent.parent
EN = catalogue("en")
# one line per request, printed by the launcher's --log-requests:
# client, backend/process, status, method, path, "user agent"
REQUEST = re.compile(r'^\S+ apps/(\S+) (\d+) (\S+) (\S+) "(.*)"$', re.M)


@pytest.fixture
def classroom(tmp_path):
    """The launcher with 2 app processes on a free port; yields (base URL, its output file); stopped by SIGTERM."""
    if find_haproxy() is None:
        if os.environ.get("CI"):
            pytest.fail("haproxy is missing: .ci/run should have installed Debian's haproxy")
        pytest.skip("haproxy is missing (apt-get install haproxy)")
    port, out = free_port(), tmp_path / "classroom.log"
    with out.open("w", encoding="utf-8") as log:
        proc = subprocess.Popen([sys.executable, "deploy/classroom.py", "--processes", "2", "--port", str(port),
                                 "--address", "127.0.0.1", "--log-requests"],
                                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:

        def ready() -> bool:
            assert proc.poll() is None, f"the launcher stopped:\n{out.read_text(encoding='utf-8')}"
            return "Students open" in out.read_text(encoding="utf-8")

        wait_until(ready, 120, f"the launcher to get ready (its output: {out})")
        yield f"http://127.0.0.1:{port}", out
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, out.read_text(encoding="utf-8")
    backends = re.findall(r"app\d=127\.0\.0\.1:(\d+)", out.read_text(encoding="utf-8"))
    for p in [port, *map(int, backends)]:
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", p)) != 0, f"port {p} still answers after the launcher stopped"


def epoch(page) -> int:
    return int(re.sub(r"\D", "", page.locator(".lv-epoch").inner_text()) or 0)


@pytest.mark.browser
def test_two_browsers_train_on_different_processes_and_stay_there(browser, classroom):
    base, out = classroom
    names = ["a", "b"]
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000},
                                    user_agent=f"Mozilla/5.0 (X11; Linux x86_64) Chrome/120 classroom-test-{n}")
                for n in names]
    try:
        pages, sockets = [], {n: [] for n in names}
        # one after the other: the second browser arrives while the first holds its websocket
        for n, ctx in zip(names, contexts, strict=True):
            pg = ctx.new_page()
            pg.on("websocket", lambda ws, n=n: sockets[n].append(ws.url))
            open_page(pg, f"{base}/classification?lang=en")
            pg.wait_for_selector(".lv-epoch", timeout=60_000)
            pages.append(pg)
        for pg in pages:
            pg.get_by_role("button", name=re.compile(EN["cls.play"])).click()
        for pg in pages:
            pg.wait_for_function("() => /[1-9]/.test(document.querySelector('.lv-epoch').textContent)", timeout=60_000)
        first = [epoch(pg) for pg in pages]
        assert min(first) > 0
        for pg, f in zip(pages, first, strict=True):  # both browsers go on training
            pg.wait_for_function("f => +document.querySelector('.lv-epoch').textContent.replace(/\\D/g, '') > f",
                                 arg=f, timeout=30_000)

        # each live view's token (ui/live_common.js keeps it on the view's root element): it must not reach a log
        tokens = [pg.evaluate("() => Array.from(document.querySelectorAll('*')).find((e) => e.__live).__live.wsToken")
                  for pg in pages]
        assert all(tokens), tokens
        cookies = {n: [c["value"] for c in ctx.cookies() if c["name"] == "SERVERID"]
                   for n, ctx in zip(names, contexts, strict=True)}
        assert all(len(v) == 1 for v in cookies.values()), cookies
        assert cookies["a"] != cookies["b"], "the two browsers landed on different app processes"
        for n, pg in zip(names, pages, strict=True):
            # Streamlit's websocket and the live view's channel, each opened once
            assert len(sockets[n]) == 2, f"{n}: two websockets, never reopened: {sockets[n]}"
            assert sorted(urlparse(u).path for u in sockets[n]) == sorted(["/_stcore/stream", CHANNEL]), sockets[n]
            assert pg.locator('[data-testid="stException"]').count() == 0
            assert pg.get_by_text("Connection error").count() == 0
    finally:
        for ctx in contexts:
            ctx.close()

    requests = REQUEST.findall(out.read_text(encoding="utf-8"))
    for n in names:
        mine = [(server, status, path) for server, status, _, path, agent in requests
                if agent.endswith(f"classroom-test-{n}")]
        assert {server for server, _, _ in mine} == {cookies[n][0]}, f"{n}: every request went to its cookie's process"
        for path, status in [("/classification", "200"), ("/_stcore/health", "200"), ("/_stcore/host-config", "200"),
                             ("/_stcore/stream", "101"), (CHANNEL, "101"), ("/static/", "200")]:
            assert any(p.startswith(path) and s == status for _, s, p in mine), f"{n}: {path} {status} seen"
    log = out.read_text(encoding="utf-8")
    assert not any(token in log for token in tokens), "a channel's token is never logged"


def zombie_or_gone(pid: int) -> str:
    """The state of process `pid` ("Z" a zombie: exited, never reaped), or "" once it has gone entirely."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return ""


def exited(pid: int) -> bool:
    """Whether child `pid` can be reaped now, without reaping it. A killed multi-threaded process (redis-server) shows
    "Z" while its other threads are still going, and waitpid does not take it until they have: waiting for "Z" alone
    raced the launcher's one look."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def test_the_launcher_reaps_restarts_and_says_when_its_class_store_dies(tmp_path, monkeypatch):
    """Issue 40, D7: a private redis-server killed under the launcher is said (with its last lines), reaped (no
    zombie) and started again on its port, where a class can start again; an app process likewise; one that keeps
    dying stops everything with a message."""
    import argparse

    from deploy import classroom as launcher
    from server.classroom import Classroom, open_store

    if launcher.find_redis() is None:
        pytest.skip("redis-server is missing")
    monkeypatch.setenv(launcher.STORE_ENV, "")
    store = launcher.class_store(argparse.Namespace(processes=2, remote=[]), tmp_path)
    app = launcher.Child("app1", lambda: launcher.spawn([sys.executable, "-c", "import time; time.sleep(600)"], None))
    children, said = [app, store], []
    try:
        room = Classroom(open_store(os.environ[launcher.STORE_ENV]))
        room.create("classification", {})
        dead = store.proc.pid
        os.kill(dead, signal.SIGKILL)
        wait_until(lambda: exited(dead), 10, "redis-server to die")
        assert launcher.watch(children, said.append) is None
        assert zombie_or_gone(dead) == "" and store.proc.pid != dead  # reaped, and a new one started
        assert len(said) == 1 and said[0].startswith(f"{launcher.STORE_NAME} exited with code -9")
        assert "classes it held are gone" in said[0] and said[0].endswith("Starting it again.")
        port = int(os.environ[launcher.STORE_ENV].rsplit(":", 1)[1].split("/")[0])
        launcher.wait_listening(port, store.proc)
        assert room.state(room.create("classification", {})[0]).lab == "classification"  # the same URL works again
        assert launcher.watch(children, said.append) is None and len(said) == 1  # nothing new: nothing said
        for i in range(launcher.MAX_RESTARTS):  # an app process that keeps dying
            before = app.proc.pid
            os.kill(before, signal.SIGKILL)
            wait_until(lambda before=before: exited(before), 10, "the app to die")
            why = launcher.watch(children, said.append)
            assert zombie_or_gone(before) == ""
            if i < launcher.MAX_RESTARTS - 1:
                assert why is None and app.proc.pid != before
        assert why.startswith("app1 exited with code -9") and "not starting it again" in why
    finally:
        launcher.stop_all([c.proc for c in children])
