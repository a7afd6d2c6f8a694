"""One mischievous student and a careless deployment against one app process (issue 40's probe, repeatable).

    python -m benchmarks reliability [--only identity,channel] [--seconds 10]

identity (headless Chromium, a real redis-server as the class store): a teacher poses a question; one student answers
and sends their settings, then six times changes the browser id the page keeps in localStorage, reloads and does it
again; then six times more as a new browser (cookies and storage cleared). Prints the answers on the teacher's screen
and the inbox entries after each series.
channel (no browser: Streamlit sessions driven over their sockets, deploy.local.StreamlitSession): how many sockets
one live view's token opens; another session's rerun time quiet, under 50 sockets asking for frames in a loop and
under 200 clients opening refused handshakes in a loop; the server's memory after four 100 MiB messages on a socket.
Prints one JSON line per figure, with the load average beside every timing.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from deploy.local import StreamlitSession, browser_cookie, running_app  # noqa: E402

CHANNEL = "/_mlsim/live"  # server.live_channel.PATH and PROTOCOL (not imported: this runs against older code too)
PROTOCOL = "mlsim.live"
LIVE_LAB = "classification"  # a live view on its first run
QUIET_PAGE = ""  # the page another student reruns (the home page)
TOKEN = re.compile(r'"token":\s*"([A-Za-z0-9_-]+)"')


def load() -> float:
    return round(os.getloadavg()[0], 1)


def rss_mb(pid: int) -> float:
    return int(re.search(r"VmRSS:\s+(\d+)", Path(f"/proc/{pid}/status").read_text()).group(1)) / 1024


def emit(**figure) -> None:
    print(json.dumps({**figure, "load": load()}), flush=True)


# ---------------------------------------------------------------- the class: who is a student -----------------------

def identity(base: str, redis_url: str) -> None:
    import redis
    from playwright.sync_api import sync_playwright

    from deploy.local import CHROMIUM, CHROMIUM_ARGS
    from ui.i18n import catalogue

    en, r = catalogue("en"), redis.Redis.from_url(redis_url, decode_responses=True)
    answers_text = re.compile(re.escape(en["room.answers"]).replace(re.escape("{n}"), r"(\d+)"))
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        teacher = b.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        teacher.goto(f"{base}/classroom?lang=en")
        teacher.get_by_role("button", name=en["room.start"]).click(timeout=180_000)
        big = teacher.locator('[data-testid="room-big"]').first
        big.wait_for(timeout=60_000)
        code = big.inner_text().strip()
        teacher.locator(".st-key-room-pose_bank button").click(timeout=60_000)
        teacher.get_by_text(en["room.reveal"]).first.wait_for(timeout=60_000)

        def on_screen() -> int:
            time.sleep(2.5)  # the teacher's histogram refreshes every second
            found = answers_text.search(teacher.locator("body").inner_text())
            return int(found.group(1)) if found else -1

        def act(page, i: int) -> None:
            page.goto(f"{base}/classroom?class={code}&lang=en") if page.url == "about:blank" else page.reload()
            page.locator(".st-key-room-opt-0 button").wait_for(timeout=60_000)
            page.locator(f".st-key-room-opt-{i % 2} button").click()
            page.get_by_text(re.compile("Your answer|Too many|full|joined")).first.wait_for(timeout=30_000)
            page.locator(".st-key-room-send button").click()
            page.get_by_text(re.compile("Sent|Too many|full|joined")).first.wait_for(timeout=30_000)

        inbox = f"mlsim:class:{code}:inbox"
        for series, rotate in (("localStorage id", "ids"), ("new browser", "cookies")):
            before = on_screen(), r.hlen(inbox)
            ctx = b.new_context(viewport={"width": 1400, "height": 1000})
            student = ctx.new_page()
            for i in range(7):
                if i and rotate == "ids":
                    student.evaluate("id => localStorage.setItem('mlsim.browser', id)",
                                     secrets.token_urlsafe(16)[:22])
                elif i:
                    ctx.clear_cookies()
                    student.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
                act(student, i)
            emit(figure=f"one student after 6 rotations ({series}): answers on the teacher's screen",
                 value=on_screen() - before[0], inbox_entries=r.hlen(inbox) - before[1])
            ctx.close()
        b.close()


# ---------------------------------------------------------------- the live channel ----------------------------------

def live_token(session: StreamlitSession) -> str:
    """The token of the live view of `session` (a token lives while its session does)."""
    _, components = session.rerun(LIVE_LAB)
    return TOKEN.search(components["mlsim_live_view"]).group(1)


def open_socket(base: str, token: str, cookie: str):
    import websockets

    return websockets.connect(f"ws://{base.split('//', 1)[1]}{CHANNEL}", subprotocols=[PROTOCOL, token],
                              origin=base, additional_headers={"Cookie": cookie}, open_timeout=30, max_size=None)


async def sockets_per_token(base: str, token: str, cookie: str, n: int = 200) -> int:
    opened = []
    for _ in range(n):
        try:
            opened.append(await open_socket(base, token, cookie))
        except Exception:  # noqa: BLE001 - refused (403) or dropped: not accepted
            pass
    for ws in opened:
        await ws.close()
    return len(opened)


def rerun_times(base: str, seconds: float) -> list[float]:
    """Another student's page reruns, one after another, for `seconds`."""
    times = []
    with StreamlitSession(base, browser_cookie(base)) as s:
        s.rerun(QUIET_PAGE)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            times.append(s.rerun(QUIET_PAGE)[0])
    return times


async def reruns(base: str, seconds: float) -> list[float]:
    return await asyncio.to_thread(rerun_times, base, seconds)  # beside the event loop that drives the attackers


async def looper(base: str, token: str, cookie: str, stop: asyncio.Event, counts: dict) -> None:
    """A socket asking for frames in a loop; opened again whenever it is refused or closed."""
    while not stop.is_set():
        try:
            async with open_socket(base, token, cookie) as ws:
                counts["handshakes"] += 1
                while not stop.is_set():
                    await ws.send("next")
                    await ws.recv()
                    counts["replies"] += 1
        except Exception:  # noqa: BLE001 - refused or closed: try again
            counts["refused"] += 1
            await asyncio.sleep(0)


async def forger(base: str, stop: asyncio.Event, counts: dict) -> None:
    """A client opening handshakes with a forged token, over and over."""
    while not stop.is_set():
        try:
            async with open_socket(base, secrets.token_urlsafe(32), "mlsim_browser=forged"):
                counts["accepted"] += 1
        except Exception:  # noqa: BLE001 - refused, as it should be
            counts["refused"] += 1


async def under(base: str, seconds: float, clients) -> tuple[list[float], dict, float]:
    stop, counts = asyncio.Event(), {"handshakes": 0, "replies": 0, "refused": 0, "accepted": 0}
    tasks = [asyncio.create_task(c(stop, counts)) for c in clients]
    await asyncio.sleep(2)  # the flood under way
    counts.update(dict.fromkeys(counts, 0))
    t0 = time.monotonic()
    times = await reruns(base, seconds)
    dt = time.monotonic() - t0
    stop.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return times, {k: round(v / dt) for k, v in counts.items()}, dt


async def big_messages(base: str, token: str, cookie: str, pid: int, mib: int = 100,
                       n: int = 4) -> tuple[float, float, float]:
    """The server's memory (MiB) before, at its peak while n sockets each send a `mib` MiB message at once, and
    3 s after."""
    payload, peak, done = "x" * (mib << 20), [rss_mb(pid)], asyncio.Event()

    async def send() -> None:
        try:
            async with open_socket(base, token, cookie) as ws:
                await ws.send(payload)
                await asyncio.wait_for(ws.recv(), 30)
        except Exception:  # noqa: BLE001 - the server closed the socket: what it read is what counts
            pass

    async def sample() -> None:
        while not done.is_set():
            peak.append(rss_mb(pid))
            await asyncio.sleep(0.05)

    sampler = asyncio.create_task(sample())
    await asyncio.gather(*(send() for _ in range(n)))
    await asyncio.sleep(3)
    done.set()
    await sampler
    return peak[0], max(peak), rss_mb(pid)


async def channel(base: str, pid: int, seconds: float) -> None:
    cookie = browser_cookie(base)
    keep = StreamlitSession(base, cookie).__enter__()
    token = live_token(keep)
    emit(figure="sockets accepted on one token (of 200)", value=await sockets_per_token(base, token, cookie))
    await asyncio.sleep(2)
    quiet = await reruns(base, seconds)
    emit(figure="another session's rerun, quiet (median s)", value=round(statistics.median(quiet), 3), n=len(quiet))
    times, rates, _ = await under(base, seconds, [lambda s, c: looper(base, token, cookie, s, c)] * 50)
    emit(figure="another session's rerun under 50 looping sockets (median s)",
         value=round(statistics.median(times), 3), n=len(times), per_s=rates)
    await asyncio.sleep(2)
    times, rates, _ = await under(base, seconds, [lambda s, c: forger(base, s, c)] * 200)
    emit(figure="another session's rerun under 200 clients' refused handshakes (median s)",
         value=round(statistics.median(times), 3), n=len(times), per_s=rates)
    await asyncio.sleep(2)
    quiet = await reruns(base, seconds)
    emit(figure="another session's rerun, quiet again (median s)", value=round(statistics.median(quiet), 3),
         n=len(quiet))
    before, peak, after = await big_messages(base, token, cookie, pid)
    emit(figure="server memory before / at the peak / 3 s after four 100 MiB messages at once (MiB)",
         value=[round(before), round(peak), round(after)])
    keep.__exit__(None, None, None)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks reliability", description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="identity,channel", help="comma-separated: identity, channel")
    ap.add_argument("--seconds", type=float, default=10.0, help="seconds of reruns per condition (channel)")
    a = ap.parse_args(argv)
    parts = a.only.split(",")
    from deploy.classroom import running_redis

    with tempfile.TemporaryDirectory() as folder, running_redis(Path(folder)) as (redis_url, _), \
            running_app(env={"MLSIM_CLASS_STORE": redis_url}, timeout_s=300) as (base, server):
        if "channel" in parts:
            asyncio.run(channel(base, server.pid, a.seconds))
        if "identity" in parts:
            identity(base, redis_url)


if __name__ == "__main__":
    main()
