"""The app run on this machine for a test or a benchmark, not for a class: one server on a free port
(`running_app`), the headless Chromium that drives it, and AppTest sessions of a page (`open_app`, `open_lab`).

The browser tests, the page tests and the benchmarks share these, so a benchmark does not reach into tests/.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from deploy.classroom import free_port

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"  # Debian's chromium (Playwright's own browser download cannot work here)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
APPTEST_TIMEOUT_S = 60


@contextmanager
def running_app(stdout=subprocess.DEVNULL, timeout_s: float = 90, env: dict[str, str] | None = None,
                script: str = "app.py"):
    """`streamlit run <script>` (the app, or a test's page, relative to the repository) on a free port, its output
    to `stdout`, `env` added to its environment; yields (base URL, process) once healthy."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port),
                             "--server.headless", "true"], cwd=ROOT, stdout=stdout, stderr=subprocess.STDOUT,
                            env={**os.environ, **(env or {})})
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + timeout_s
        while True:
            try:
                urllib.request.urlopen(f"{base}/_stcore/health", timeout=2)
                break
            except OSError as err:
                if time.time() > deadline or proc.poll() is not None:
                    raise RuntimeError("the Streamlit server did not start") from err
                time.sleep(0.3)
        yield base, proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def open_app(lang: str = "en"):
    """An AppTest session of the app's page script (main.py) in `lang` (not run yet)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "main.py"), default_timeout=APPTEST_TIMEOUT_S)
    at.query_params["lang"] = lang
    return at


def open_lab(file: str, lang: str = "en", **query):
    """Run the app, then switch to a lab's page (e.g. "labs/classification/page.py") with URL values."""
    at = open_app(lang).run()  # AppTest needs one run before it can switch pages
    at.query_params.update({"lang": lang, **query})
    at.switch_page(file).run()
    assert not at.exception, at.exception
    return at


def browser_cookie(base: str) -> str:
    """The browser cookie the app's first response sets (server.live_channel.BROWSER_COOKIE), as `name=value`."""
    with urllib.request.urlopen(f"{base}/") as r:
        return next(h.split(";")[0] for h in r.headers.get_all("set-cookie") or [] if h.startswith("mlsim_"))


class StreamlitSession:
    """A Streamlit session driven over its own socket as a browser's page drives it, without a browser (a student the
    tests and benchmarks can time): `rerun(page)` runs a page and returns its seconds and the custom components'
    data it sent. Use as `with StreamlitSession(base, cookie) as s:`."""

    def __init__(self, base: str, cookie: str):
        self.base, self.cookie, self.ws = base, cookie, None

    def __enter__(self) -> StreamlitSession:
        from websockets.sync.client import connect

        self.ws = connect(f"ws://{self.base.split('//', 1)[1]}/_stcore/stream", subprotocols=["streamlit"],
                          origin=self.base, max_size=None, additional_headers={"Cookie": self.cookie},
                          open_timeout=120).__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.ws.__exit__(*exc)

    def rerun(self, page: str = "", query: str = "lang=en", timeout_s: float = 300) -> tuple[float, dict[str, str]]:
        """Run `page` (its url path; "" the home page): (seconds until the script finished, {component name: its
        data as sent})."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = BackMsg()
        msg.rerun_script.query_string, msg.rerun_script.page_name = query, page
        t0 = time.perf_counter()
        self.ws.send(msg.SerializeToString())
        components = {}
        while True:
            fm = ForwardMsg()
            fm.ParseFromString(self.ws.recv(timeout=timeout_s))
            kind = fm.WhichOneof("type")
            if kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                element = fm.delta.new_element
                if element.WhichOneof("type") == "bidi_component":
                    c = element.bidi_component
                    components[c.component_name] = c.json or c.mixed.json
            elif kind == "script_finished":
                return time.perf_counter() - t0, components
