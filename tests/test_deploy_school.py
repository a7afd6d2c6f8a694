"""Serving a school (deploy/classroom.py): more students than one machine holds. Two groups of app processes, each
started by the launcher with --apps-only on an address of its own (127.0.0.2 and 127.0.0.3 stand for two
machines), one class store started with --store-only, and one HAProxy in front of all of them (the launcher with
--processes 0 and a --remote per app process). A teacher on the first machine starts a class; a student on each
machine follows the teacher's change; every request of a browser went to the one process its cookie names."""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from waits import wait_until

from browsertools import no_exception, open_page, start_class
from deploy.classroom import find_haproxy, find_redis, free_port
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parent.parent
EN = catalogue("en")
MACHINES = ("127.0.0.2", "127.0.0.3")  # loopback addresses: two machines' LAN addresses, as far as the apps know
PROCESSES = 2  # app processes on each machine
# the front's --log-requests: client, backend/process, status, method, path, "user agent"
REQUEST = re.compile(r'^\S+ apps/(\S+) (\d+) (\S+) (\S+) "(.*)"$', re.M)


class Launched:
    """One launcher (python deploy/classroom.py ARGS), its output in a file."""

    def __init__(self, args: list[str], out: Path):
        self.args, self.out = args, out
        with out.open("w", encoding="utf-8") as log:
            self.proc = subprocess.Popen([sys.executable, "deploy/classroom.py", *args], cwd=ROOT, stdout=log,
                                         stderr=subprocess.STDOUT)

    def text(self) -> str:
        return self.out.read_text(encoding="utf-8")

    def wait_for(self, line: str, timeout: float = 180) -> str:
        """Until the launcher has printed `line` (it still running); its output then."""

        def printed() -> bool:
            assert self.proc.poll() is None, f"the launcher {self.args} stopped:\n{self.text()}"
            return line in self.text()

        wait_until(printed, timeout, f"{line!r} from the launcher {self.args} (its output: {self.out})")
        return self.text()

    def stop(self) -> int:
        """SIGTERM, as Ctrl-C; its exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def listening(address: str, port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex((address, port)) == 0


@pytest.fixture
def school(tmp_path):
    """The store, the two app machines and the front, each by its own launcher; yields (the front's base URL,
    {backend name: HOST:PORT}, the store's URL, the front's launcher). Stopped front first, the store last: each
    launcher exits 0 and leaves nothing listening."""
    for name, found in (("haproxy", find_haproxy()), ("redis-server", find_redis())):
        if found is None:
            if os.environ.get("CI"):
                pytest.fail(f"{name} is missing: .ci/run should have installed Debian's {name}")
            pytest.skip(f"{name} is missing (apt-get install {name})")
    launched: list[Launched] = []
    try:
        store_port = free_port()
        store = Launched(["--store-only", "--bind", "127.0.0.1", "--store-port", str(store_port)],
                         tmp_path / "store.log")
        launched.append(store)
        store.wait_for("Class store ready", 30)
        url = f"redis://127.0.0.1:{store_port}/0"
        assert f"--store {url}" in store.text()
        groups = [Launched(["--apps-only", "--processes", str(PROCESSES), "--bind", m, "--store", url],
                           tmp_path / f"apps-{m}.log") for m in MACHINES]
        launched += groups
        remotes = []
        for m, g in zip(MACHINES, groups, strict=True):
            said = g.wait_for("For the front's launcher:")
            mine = re.findall(r"--remote (\S+)", said)
            assert len(mine) == PROCESSES and all(a.startswith(f"{m}:") for a in mine), said
            assert f"class store {url}" in said
            remotes += mine
        port = free_port()
        front = Launched(["--processes", "0", *[x for a in remotes for x in ("--remote", a)], "--port", str(port),
                          "--address", "127.0.0.1", "--log-requests"], tmp_path / "front.log")
        launched.append(front)
        said = front.wait_for("Students open", 60)
        servers = dict(re.findall(r"(remote\d+)=(\S+?)[,)]", said))
        assert sorted(servers.values()) == sorted(remotes), said
        yield f"http://127.0.0.1:{port}", servers, url, front
    finally:
        codes = [(x.args[0], x.stop()) for x in reversed(launched)]  # the front, the app machines, the store
    assert all(code == 0 for _, code in codes), codes
    for addr in [*remotes, f"127.0.0.1:{store_port}", f"127.0.0.1:{port}"]:
        host, p = addr.rsplit(":", 1)
        assert not listening(host, int(p)), f"{addr} still answers after its launcher stopped"


def choose(page, key: str, option: str) -> None:
    """Pick `option` in the selectbox of widget key `key` (Streamlit marks it with the class st-key-<key>)."""
    box = page.locator(f'.st-key-{key.replace(".", "-")} input[role="combobox"]').first
    box.scroll_into_view_if_needed()
    box.click()
    page.get_by_role("option", name=option, exact=True).click()


def test_a_student_on_each_machine_follows_one_teacher(school, browser):
    import redis

    base, servers, url, front = school
    on = {name: addr.rsplit(":", 1)[0] for name, addr in servers.items()}
    first, second = ([n for n in sorted(servers) if on[n] == m] for m in MACHINES)
    # where each browser lands: its SERVERID cookie names a process (HAProxy honours a cookie it recognises), so
    # the teacher and one student share the first machine (on two processes) and the other student is on the second
    where = {"teacher": first[0], "student-a": first[1], "student-b": second[0]}
    contexts = {}
    for who, server in where.items():
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000},
                                  user_agent=f"Mozilla/5.0 (X11; Linux x86_64) Chrome/120 school-test-{who}")
        ctx.add_cookies([{"name": "SERVERID", "value": server, "url": base}])
        contexts[who] = ctx
    store = redis.Redis.from_url(url, decode_responses=True)
    try:
        teacher = contexts["teacher"].new_page()
        code = start_class(teacher, base)
        assert re.fullmatch(r"[A-Z0-9]{5}", code)
        record = lambda: json.loads(store.get(f"mlsim:class:{code}") or "{}")  # noqa: E731
        assert record().get("lab") == "classroom"  # the class is in the one store
        teacher.locator('[data-testid="stSidebarNav"] a[href$="/classification"]').click()
        teacher.get_by_text(EN["cls.title"]).first.wait_for(timeout=60_000)
        wait_until(lambda: record().get("lab") == "classification", 30, "the class to follow the teacher's lab")
        students = {}
        for who in ("student-a", "student-b"):  # each joins with the class's link and lands on the teacher's lab
            students[who] = page = contexts[who].new_page()
            open_page(page, f"{base}/?class={code}&lang=en")
            page.wait_for_url(re.compile(r"/classification"), timeout=60_000)
            page.get_by_text(EN["cls.title"]).first.wait_for(timeout=60_000)
        choose(teacher, "cls.activation", EN["cls.activation.linear"])
        teacher.wait_for_function("t => location.search.includes(t)", arg="activation=linear", timeout=15_000)
        t0 = time.monotonic()
        for page in students.values():  # both follow: the one on the teacher's machine and the one on the other
            page.wait_for_function("t => location.search.includes(t)", arg="activation=linear", timeout=30_000)
            page.wait_for_function(
                "v => (document.querySelector('.st-key-cls-activation input') || {}).value === v",
                arg=EN["cls.activation.linear"], timeout=30_000)
        print(f"both students followed {time.monotonic() - t0:.1f} s after the teacher's change")
        for page in [teacher, *students.values()]:
            no_exception(page)
            assert page.get_by_text("Connection error").count() == 0
    finally:
        for ctx in contexts.values():
            ctx.close()

    requests = REQUEST.findall(front.text())
    for who, server in where.items():
        went = {s for s, _, _, _, agent in requests if agent.endswith(f"school-test-{who}")}
        assert went == {server}, f"{who}: every request went to {server} ({servers[server]}), not {went}"
    assert on[where["student-b"]] != on[where["teacher"]], "a student on the other machine than the teacher's"
