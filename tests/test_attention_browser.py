"""The attention lab in headless Chromium: the pipeline's heatmaps are drawn, and the live maps really move."""
import re
import time

import numpy as np
import pytest

from browsertools import open_page, pixels
from sim.plots.attention import MASKED_COLOR
from sim.plots.palette import rgb
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
EN, ZH = catalogue("en"), catalogue("zh")


def live_stats(page) -> dict:
    return page.evaluate("() => ({...(window.__mlsimLive || {})})")


def test_pipeline_heatmaps_are_drawn_with_masked_cells(server, page):
    open_page(page, f"{server}/attention?lang=en&preset=cat&mask=causal&heads=2&d_model=8")
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 11", timeout=60_000)
    assert page.locator('[data-testid="stException"]').count() == 0
    weights = page.locator(".js-plotly-plot").filter(has_text=re.compile("softmax")).first
    weights.scroll_into_view_if_needed()
    time.sleep(0.5)
    img = pixels(weights)
    grey = (np.abs(img - np.array(rgb(MASKED_COLOR))).max(axis=-1) <= 3).mean()  # the masked cells' flat grey
    blue = ((img[..., 2] > 150) & (img[..., 0] < 60)).mean()  # large weights
    assert grey > 0.01 and blue > 0.005, (grey, blue)


def test_tiny_transformer_trains_and_its_maps_move(server, page):
    open_page(page, f"{server}/attention?lang=en&section=train&speed=2")
    page.wait_for_selector('[data-testid="live-panel-1"]', timeout=60_000)
    page.get_by_role("button", name=re.compile(EN["att.play"])).click()
    page.wait_for_function("() => (window.__mlsimLive || {}).epoch > 10", timeout=60_000)
    first, a = live_stats(page), pixels(page.locator('[data-testid="live-panel-1"]'))
    time.sleep(3)
    later, b = live_stats(page), pixels(page.locator('[data-testid="live-panel-1"]'))
    assert later["epoch"] > first["epoch"] and later["frames"] > first["frames"]
    assert np.abs(a - b).mean() > 0.05, "the attention map changed on screen"
    page.get_by_role("button", name=re.compile(EN["att.pause"])).click()
    time.sleep(2)
    paused = live_stats(page)["epoch"]
    time.sleep(1.5)
    assert live_stats(page)["epoch"] == paused, "Pause stops training"
    assert page.locator('[data-testid="stException"]').count() == 0


def test_comparison_in_chinese(server, page):
    open_page(page, f"{server}/attention?lang=zh&section=compare&task=sort")
    page.get_by_text(ZH["att.compare_settings"]).first.wait_for(timeout=60_000)
    page.wait_for_selector('[data-testid="live-panel-0"]', timeout=60_000)
    loss = pixels(page.locator('[data-testid="live-panel-0"]'))
    assert loss.std() > 10, "the loss panel is drawn"
    assert page.locator('[data-testid="stException"]').count() == 0


def test_bad_url_value_gets_a_notice(server, page):
    open_page(page, f"{server}/attention?lang=en&heads=5&d_model=banana")
    page.get_by_text("is not valid here").first.wait_for(timeout=30_000)
    assert page.locator('[data-testid="stException"]').count() == 0
