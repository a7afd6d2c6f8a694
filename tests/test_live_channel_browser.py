"""A live view's own channel in the real app (`streamlit run app.py`, headless Chromium): frames arrive on it while
playing, without a Streamlit rerun each; another browser cannot read them with the token, a forged token and another
origin get HTTP 403."""
import json
import re
from urllib.parse import urlparse

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from browsertools import click, live_stats, no_exception, open_page, pixels, trains_on_screen
from server.live_channel import BROWSER_COOKIE, PATH, PROTOCOL
from ui.i18n import catalogue

pytestmark = pytest.mark.browser

EN = catalogue("en")
LAB = "classification?lang=en&dataset=xor&seed=2"
# the channel's token and state, from the live view's root element (ui/live_common.js keeps its state there)
VIEW_STATE = """() => { const el = Array.from(document.querySelectorAll('*')).find((e) => e.__live);
  return el ? {token: el.__live.wsToken || null, open: !!el.__live.ws && el.__live.ws.readyState === 1} : null; }"""
# opens a socket to the channel with a given token from this page; resolves to "open: <first update>" or "refused"
TRY_TOKEN = """([path, token]) => new Promise((resolve) => {
  const ws = new WebSocket('ws://' + location.host + path, ['mlsim.live', token]);
  ws.onopen = () => ws.send('next');
  ws.onmessage = (ev) => { resolve('open: ' + ev.data); ws.close(); };
  ws.onclose = () => resolve('refused');
  setTimeout(() => resolve('timeout'), 15000);
})"""


def channel_of(page) -> dict:
    page.wait_for_function(f"() => {{ const s = ({VIEW_STATE})(); return s && s.open; }}", timeout=60_000)
    return page.evaluate(VIEW_STATE)


def socket(server, token, browser, origin=None):
    host = urlparse(server).netloc
    return connect(f"ws://{host}{PATH}", subprotocols=[PROTOCOL, token], origin=origin or server,
                   additional_headers={"Cookie": f"{BROWSER_COOKIE}={browser}"}, open_timeout=20)


def refused(server, token, browser, origin=None) -> int:
    with pytest.raises(InvalidStatus) as err:
        socket(server, token, browser, origin).close()
    return err.value.response.status_code


def test_the_live_view_draws_through_its_channel_and_only_its_browser_can_read_it(server, browser):
    one, two = (browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(2))
    try:
        a, b = one.new_page(), two.new_page()
        open_page(a, f"{server}/{LAB}")
        boundary = a.locator('[data-testid="live-boundary"]')
        boundary.wait_for(timeout=60_000)
        mine = channel_of(a)["token"]
        click(a, a.get_by_role("button", name=re.compile(EN["cls.play"])))
        before = live_stats(a)
        trains_on_screen(a, boundary)
        # the frames came on the channel: many updates, each one answer on the socket, not a fragment rerun
        a.wait_for_function("s => window.__mlsimLive.channelUpdates > s.channelUpdates + 30",
                            arg={"channelUpdates": before.get("channelUpdates", 0)}, timeout=60_000)
        assert channel_of(a)["token"] == mine  # reruns of the same view keep the socket
        # the socket drops (a network blip): the view asks through Streamlit meanwhile and opens its channel again
        opened = live_stats(a)["channels"]
        a.evaluate("() => Array.from(document.querySelectorAll('*')).find((e) => e.__live).__live.ws.close()")
        a.wait_for_function("n => window.__mlsimLive.channels > n", arg=opened, timeout=30_000)
        trains_on_screen(a, boundary)
        no_exception(a)

        open_page(b, f"{server}/{LAB}")
        b.locator('[data-testid="live-boundary"]').wait_for(timeout=60_000)
        theirs = channel_of(b)["token"]
        assert theirs != mine
        # the second browser, with the first one's token: nothing; with a forged one: nothing
        assert b.evaluate(TRY_TOKEN, [PATH, mine]) == "refused"
        assert b.evaluate(TRY_TOKEN, [PATH, mine[:-2] + ("AA" if not mine.endswith("AA") else "BB")]) == "refused"
        # its own token reads its own view: its own cursor, paused at the start, not the first browser's run
        got = b.evaluate(TRY_TOKEN, [PATH, theirs])
        assert got.startswith("open: "), got
        update = json.loads(got.removeprefix("open: "))
        assert update["status"] == "paused" and [f["step"] for f in update["frames"]] == [0]

        # over HTTP: the handshake is refused (403) for a forged token, another browser's cookie, another origin
        cookie_a = next(c["value"] for c in one.cookies() if c["name"] == BROWSER_COOKIE)
        cookie_b = next(c["value"] for c in two.cookies() if c["name"] == BROWSER_COOKIE)
        assert cookie_a != cookie_b
        assert refused(server, "forged-" + mine[7:], cookie_a) == 403
        assert refused(server, mine, cookie_b) == 403
        assert refused(server, mine, cookie_a, origin="http://evil.example") == 403
        with socket(server, mine, cookie_a) as ws:  # the first browser's own credentials: its own run, playing
            ws.send("next")
            update = json.loads(ws.recv(timeout=20))
            assert update["status"] == "playing" and update["frames"][-1]["step"] > 0
        assert pixels(boundary).std() > 0
    finally:
        one.close()
        two.close()
