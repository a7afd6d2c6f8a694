"""Shared fixtures: a real Streamlit server and headless Chromium for the browser tests."""
import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerLog:
    """The app server's output (stdout and stderr), read in pieces: new() is what came since the last call."""

    def __init__(self, path: Path):
        self.path, self.seen = path, 0

    def new(self) -> str:
        text = self.path.read_text(encoding="utf-8", errors="replace")
        piece, self.seen = text[self.seen:], len(text)
        return piece


@pytest.fixture(scope="session")
def server_log(tmp_path_factory) -> ServerLog:
    return ServerLog(tmp_path_factory.mktemp("server") / "streamlit.log")


@contextmanager
def running_app(stdout=subprocess.DEVNULL, timeout_s: float = 90):
    """`streamlit run app.py` on a free port, its output to `stdout`; yields (base URL, process) once healthy.

    The browser tests and the browser benchmarks start their server with it.
    """
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                             "--server.headless", "true"], cwd=ROOT, stdout=stdout, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + timeout_s
        while True:
            try:
                urllib.request.urlopen(f"{base}/_stcore/health", timeout=2)
                break
            except OSError:
                if time.time() > deadline or proc.poll() is not None:
                    raise RuntimeError("the Streamlit server did not start")
                time.sleep(0.3)
        yield base, proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="session")
def server(server_log):
    """The app server of the browser tests, its output in server_log; yields its base URL."""
    with server_log.path.open("w", encoding="utf-8") as log, running_app(log) as (base, _):
        yield base


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: .ci/run should have installed Debian's chromium")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    yield pg
    ctx.close()



@contextmanager
def running_redis(folder: Path):
    """deploy.classroom.running_redis (a redis-server of its own); skipped where redis-server is missing."""
    from deploy.classroom import find_redis, running_redis as start

    if find_redis() is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is missing: .ci/run should have installed Debian's redis-server")
        pytest.skip("redis-server is missing (apt-get install redis-server)")
    with start(folder) as (url, proc):
        yield url, proc


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory):
    """The class-store tests' redis-server (started once, stopped at the end); its URL."""
    with running_redis(tmp_path_factory.mktemp("redis")) as (url, _):
        yield url
