"""The assistant lab's pipeline section in headless Chromium: the pipeline plays on screen (the shares panel moves),
Pause stops it, Step moves it on by ten steps a speed unit and Reset takes it back to step 0; the mask figure and the
side-by-side table are drawn (Chinese)."""
import re

import numpy as np
import pytest
from waits import eventually

from browsertools import (
    no_exception,
    open_page,
    page_idle,
    pause_stops,
    pixels,
    press_button,
    trains_on_screen,
    wait_live,
)
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
EN, ZH = catalogue("en"), catalogue("zh")
PANEL = '[data-testid="live-panel-0"]'  # the shares (format, rule-following, the reward model's accuracy)


def test_the_pipeline_plays_pauses_steps_and_resets(server, page):
    page.set_viewport_size({"width": 1400, "height": 1300})
    open_page(page, f"{server}/assistant?lang=en&section=pipeline&pipe_speed=10")
    page.wait_for_selector(PANEL, timeout=60_000)
    panel = page.locator(PANEL)
    start = pixels(panel)
    press_button(page, EN["asst.pipe.play"])
    page.wait_for_function("() => (window.__mlsimLive || {}).epoch > 30", timeout=60_000)
    trains_on_screen(page, panel, change=0.02)
    stopped = pause_stops(page, page.get_by_role("button", name=re.compile(EN["asst.pipe.pause"])).first)
    press_button(page, EN["asst.pipe.step"].split("(")[0].strip())
    wait_live(page, "s => (window.__mlsimLive || {}).epoch === s + 100", stopped, 30_000, "Step moves on 100 steps")
    page_idle(page)
    press_button(page, EN["asst.pipe.reset"])
    wait_live(page, "() => (window.__mlsimLive || {}).epoch === 0", None, 30_000, "Reset goes back to step 0")

    def back_at_the_start():
        assert np.abs(pixels(panel) - start).mean() < 0.5
    eventually(back_at_the_start)
    no_exception(page)


def test_the_mask_and_the_table_are_drawn_in_chinese(server, page):
    open_page(page, f"{server}/assistant?lang=zh&section=pipeline")
    page.wait_for_selector(".js-plotly-plot", timeout=60_000)
    assert page.get_by_text(ZH["asst.pipe.mask.title"]).count()
    assert page.get_by_text(ZH["asst.pipe.side.title"]).count()
    page.wait_for_selector('[data-testid="stDataFrame"]', timeout=30_000)
    no_exception(page)
