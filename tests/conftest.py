"""Shared fixtures: a real Streamlit server and headless Chromium for the browser tests; a deprecated call fails
the test that made it (Streamlit reports its own in its log, not as a Python warning)."""
import logging
import os
import re
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
        text = self.text()
        piece, self.seen = text[self.seen:], len(text)
        return piece

    def text(self) -> str:
        return self.path.read_text(encoding="utf-8", errors="replace") if self.path.exists() else ""


# what fails the test in whose run it was logged: Streamlit's deprecation notices (streamlit.deprecation_util logs
# every one; it shows some on the page too) and a catalogue key without a text (ui.i18n); in the browser tests' app
# server's log also Python's deprecation warnings that name a file of ours (the server shows them: see `server`)
NOTICES = ("streamlit.deprecation_util", "ui.i18n")
OURS = re.escape(str(ROOT)) + r"/(?!\.venv/)\S+\.py"
IN_SERVER_LOG = re.compile(rf"(?:{'|'.join(map(re.escape, NOTICES))}): .*|^no text for key .*"
                           rf"|{OURS}:\d+: (?:Pending)?(?:Deprecation|Future)Warning: .*", re.M)


class _Notices(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(f"{record.name}: {record.getMessage()}")


@pytest.fixture(autouse=True)
def _own_live_runs():
    """Each test its own shared live runs (ui.live_run.RUNS): a run one test broke on purpose is not another's."""
    from sim.core.live import Runs
    from ui import live_run

    live_run.RUNS = Runs()
    yield
    live_run.RUNS.scheduler.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Fail a test in whose run a deprecated call or a missing text was reported: in this process (AppTest) or in
    the browser tests' app server (its log)."""
    notices, loggers = _Notices(), [logging.getLogger(name) for name in NOTICES]
    log = item.funcargs.get("server_log") if "server" in item.fixturenames else None
    start = len(log.text()) if log else 0
    for logger in loggers:
        logger.addHandler(notices)
    try:
        result = yield
    finally:
        for logger in loggers:
            logger.removeHandler(notices)
    found = notices.messages + (IN_SERVER_LOG.findall(log.text()[start:]) if log else [])
    assert not found, "reported while the test ran:\n" + "\n".join(dict.fromkeys(found))
    return result


@pytest.fixture(scope="session")
def server_log(tmp_path_factory) -> ServerLog:
    return ServerLog(tmp_path_factory.mktemp("server") / "streamlit.log")


@pytest.fixture(scope="session")
def server(server_log):
    """The app server of the browser tests, its output in server_log; yields its base URL. It shows Python's
    deprecation warnings (once per place) and names the logger of each line, for pytest_runtest_call."""
    env = {"PYTHONWARNINGS": "default::DeprecationWarning,default::PendingDeprecationWarning,default::FutureWarning",
           "STREAMLIT_LOGGER_MESSAGE_FORMAT": "%(asctime)s %(levelname)s %(name)s: %(message)s"}
    with server_log.path.open("w", encoding="utf-8") as log:
        with running_app(log, env=env) as (base, _):
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
