"""Helpers of the headless-Chromium tests: open a page and wait for it, read a canvas's pixels, and the checks every
live run shares (it trains on screen; Pause stops it)."""
import io

import numpy as np
from PIL import Image
from waits import eventually, stays

from ui.live_run import POLL_S

# a live view's status, as the canvas components mark it (ui/live_plots.js, labs/classification/live_view.js)
PAUSED = ".lp-caption.paused, .lv-status.paused"


def open_page(page, url: str) -> None:
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
    """Wait until the page's script run is over. A click while a run still goes can be lost (Streamlit 1.67: a
    Step pressed during the run that Pause started did nothing 8 times in 9 on the assistant pipeline, buttons in
    the fragment or on the page alike; pressed after it, 9 of 9 worked), and a person waits for the page too."""
    page.wait_for_function("() => document.querySelector('[data-testid=\"stApp\"]').dataset.testScriptState"
                           " === 'notRunning'", timeout=timeout_ms)


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
    pause.click()
    page.wait_for_selector(PAUSED, timeout=30_000)
    page_idle(page)  # the run Pause started is over: the next click is not lost
    # a paused view is sent nothing more; one that still reran on its safety-net timer (POLL_S) would show a
    # later epoch within 1.5 polls, so this is the shortest window that can see that bug
    return stays(lambda: live_stats(page)["epoch"], 1.5 * POLL_S, "Pause stops training")
