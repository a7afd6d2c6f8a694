"""Helpers of the headless-Chromium tests: open a page and wait for it, read a canvas's pixels, and the checks every
live run shares (it trains on screen; Pause stops it)."""
import io
import time
import warnings

import numpy as np
from PIL import Image
from waits import eventually, stays

from ui.i18n import catalogue
from ui.live_run import POLL_S

# a live view's status, as the canvas components mark it (ui/live_plots.js, labs/classification/live_view.js)
PAUSED = ".lp-caption.paused, .lv-status.paused"


STREAM = "/_stcore/stream"  # the page's socket to its Streamlit session (a press is a message sent on it)
_sent: dict[int, list[int]] = {}  # id(page) -> [messages the page has sent on it]


def watch_sends(page) -> None:
    """Count the messages `page` sends to its Streamlit session from now on (sent); once per page."""
    if id(page) in _sent:
        return
    count = _sent[id(page)] = [0]

    def on_socket(ws):
        if STREAM in ws.url:
            ws.on("framesent", lambda _payload: count.__setitem__(0, count[0] + 1))

    page.on("websocket", on_socket)
    page.on("close", lambda _page: _sent.pop(id(page), None))


def sent(page) -> int:
    return _sent[id(page)][0]


def press(page, act, what: str, tries: int = 3, told_s: float = 8.0) -> None:
    """act() (a click or a key on `page`), again only if the page sent its session nothing within told_s: then the
    app never heard of the press, and a person would press again. A press the page did send is never repeated (with
    the server logging every rerun request, all 243 presses of live buttons that a browser lane sent reached their
    callbacks). A mouse press the page did not send was one that landed beside its button while a rerun moved it
    (a live view's Play and Pause were two buttons, swapped by a rerun: Step, clicked during the run Pause started,
    sent nothing 3 times in 4; a click dispatched on the button itself was sent 4 times in 4); the live views now have
    one Play/Pause button (ui.live_run), and Step clicked that way is sent 4 in 4. Each retry is a warning in the
    run's summary. Fails, saying so, when none of `tries` reached the session."""
    if id(page) not in _sent:  # not opened by open_page: its socket is not watched
        act()
        return
    for i in range(tries):
        before = sent(page)
        act()
        deadline = time.monotonic() + told_s
        while time.monotonic() < deadline:
            if sent(page) > before:
                if i:  # in the run's warnings summary: how often this happens
                    warnings.warn(f"{what}: the app was told on press {i + 1}", stacklevel=2)
                return
            page.wait_for_timeout(50)
    raise AssertionError(f"{what}: pressed {tries} times, none reached the app: {page_state(page)}")


def click(page, locator, what: str = "") -> None:
    """locator.click(), through press()."""
    press(page, locator.click, what or f"click on {locator}")


def press_button(page, label: str, exact: bool = False) -> None:
    """Click the first button whose name has `label` in it (is `label`: exact), through press()."""
    click(page, page.get_by_role("button", name=label, exact=exact).first, label)


def open_page(page, url: str) -> None:
    watch_sends(page)
    page.goto(url)
    page.wait_for_selector('[data-testid="stApp"]')
    page.wait_for_function("() => document.querySelectorAll('[data-testid=\"stElementContainer\"]').length > 3",
                           timeout=60_000)


def pixels(locator) -> np.ndarray:
    """RGB pixels (H, W, 3) of an element as it is on screen."""
    return np.asarray(Image.open(io.BytesIO(locator.screenshot())).convert("RGB")).astype(int)


def no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0


def page_idle(page, timeout_ms: float = 60_000) -> None:
    """Wait until the page's script run is over (as a person waits for the page before the next press; while a
    run redraws the page, what is on it may still move)."""
    page.wait_for_function("() => document.querySelector('[data-testid=\"stApp\"]').dataset.testScriptState"
                           " === 'notRunning'", timeout=timeout_ms)


def open_more(page, lang: str = "en") -> None:
    """Open the section's "More settings" fold (a click while the first run still draws the page can land on a box it
    then redraws closed)."""
    page_idle(page)
    page.get_by_text(catalogue(lang)["layout.more"]).first.click()


def start_class(page, base: str) -> str:
    """A teacher starts a class on the classroom page (English); its code."""
    open_page(page, f"{base}/classroom?lang=en")
    page.get_by_role("button", name=catalogue("en")["room.start"]).click()
    big = page.locator('[data-testid="room-big"]').first
    big.wait_for(timeout=30_000)
    return big.inner_text().strip()


def page_state(page) -> dict:
    """What a failed wait reports: the live views' counters, the buttons on screen, the views' steps and status."""
    return page.evaluate("""() => ({
        live: {...(window.__mlsimLive || {})},
        buttons: [...document.querySelectorAll('button')].filter((b) => b.offsetParent).map((b) => b.innerText.trim())
                 .filter((t) => t && t.length < 40),
        steps: [...document.querySelectorAll('[data-live-step]')].map((e) => e.dataset.liveStep),
        status: [...document.querySelectorAll('.lp-caption, .lv-status')].map((e) => e.className),
        stale: document.querySelectorAll('[data-stale="true"]').length,
        script: document.querySelector('[data-testid="stApp"]').dataset.testScriptState,
    })""")


def wait_live(page, condition: str, arg=None, timeout_ms: float = 30_000, what: str = "") -> None:
    """page.wait_for_function(condition, arg), failing with the page's state (page_state) instead of a bare
    timeout: a live view that missed an update says what it showed and which buttons were there."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(condition, arg=arg, timeout=timeout_ms)
    except PlaywrightTimeout:
        raise AssertionError(f"{what or condition} (arg {arg}) not within {timeout_ms / 1000:.0f} s: "
                             f"{page_state(page)}") from None


def live_stats(page) -> dict:
    """The canvas components' counters (ui/live_common.js): updates, frames drawn, the last epoch shown."""
    return page.evaluate("() => ({...(window.__mlsimLive || {})})")


def trains_on_screen(page, panel, change: float = 0.05, timeout: float = 60.0) -> None:
    """A playing run goes on: later epochs arrive, more frames are drawn and `panel` changes on screen."""
    first, before = live_stats(page), pixels(panel)
    page.wait_for_function("s => { const n = window.__mlsimLive; return n.epoch > s.epoch && n.frames > s.frames; }",
                           arg=first, timeout=timeout * 1000)

    def changed():
        assert np.abs(before - pixels(panel)).mean() > change, f"{panel} changed on screen"

    eventually(changed, timeout)


def pause_stops(page, pause) -> int:
    """Press `pause`: the live view says it is paused and shows no later epoch; returns the epoch it stopped at."""
    click(page, pause, "Pause")
    page.wait_for_selector(PAUSED, timeout=30_000)
    page_idle(page)  # the run Pause started is over
    # a paused view is sent nothing more; one that still reran on its safety-net timer (POLL_S) would show a
    # later epoch within 1.5 polls, so this is the shortest window that can see that bug
    return stays(lambda: live_stats(page)["epoch"], 1.5 * POLL_S, "Pause stops training")


def choose(page, key: str, option: str) -> None:
    """Pick `option` in the selectbox of widget key `key` (Streamlit marks it with the class st-key-<key>)."""
    box = page.locator(f'.st-key-{key.replace(".", "-")} input[role="combobox"]').first
    box.scroll_into_view_if_needed()
    box.click()
    page.get_by_role("option", name=option, exact=True).click()


def query_has(page, text: str, timeout_ms: int) -> None:
    page.wait_for_function("t => location.search.includes(t)", arg=text, timeout=timeout_ms)
