"""Shared fixtures: a real Streamlit server and headless Chromium for the browser tests."""
import os
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from deploy.local import CHROMIUM, CHROMIUM_ARGS, running_app  # noqa: E402  (re-exported to the tests)


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
    from deploy.classroom import find_redis
    from deploy.classroom import running_redis as start

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
