"""The attention lab in headless Chromium: the pipeline's heatmaps are drawn, and the live maps really move."""
import re

import numpy as np
import pytest
from waits import eventually

from browsertools import click, no_exception, open_page, pause_stops, pixels, trains_on_screen
from sim.plots.attention import MASKED_COLOR
from sim.plots.palette import rgb
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
EN, ZH = catalogue("en"), catalogue("zh")


def test_pipeline_heatmaps_are_drawn_with_masked_cells(server, page):
    open_page(page, f"{server}/attention?lang=en&preset=cat&mask=causal&heads=2&d_model=8")
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 11", timeout=60_000)
    no_exception(page)
    weights = page.locator(".js-plotly-plot").filter(has_text=re.compile("softmax")).first
    weights.scroll_into_view_if_needed()

    def drawn():
        img = pixels(weights)
        grey = (np.abs(img - np.array(rgb(MASKED_COLOR))).max(axis=-1) <= 3).mean()  # the masked cells' flat grey
        blue = ((img[..., 2] > 150) & (img[..., 0] < 60)).mean()  # large weights
        assert grey > 0.01 and blue > 0.005, (grey, blue)

    eventually(drawn)


def test_tiny_transformer_trains_and_its_maps_move(server, page):
    open_page(page, f"{server}/attention?lang=en&section=train&speed=2")
    page.wait_for_selector('[data-testid="live-panel-1"]', timeout=60_000)
    click(page, page.get_by_role("button", name=re.compile(EN["att.play"])))
    page.wait_for_function("() => (window.__mlsimLive || {}).epoch > 10", timeout=60_000)
    trains_on_screen(page, page.locator('[data-testid="live-panel-1"]'))  # the attention map changes
    pause_stops(page, page.get_by_role("button", name=re.compile(EN["att.pause"])))
    no_exception(page)


def test_comparison_in_chinese(server, page):
    open_page(page, f"{server}/attention?lang=zh&section=compare&task=sort")
    page.get_by_text(ZH["att.compare_intro"][:12]).first.wait_for(timeout=60_000)
    page.wait_for_selector('[data-testid="live-panel-0"]', timeout=60_000)
    loss = pixels(page.locator('[data-testid="live-panel-0"]'))
    assert loss.std() > 10, "the loss panel is drawn"
    no_exception(page)


def test_bad_url_value_gets_a_notice(server, page):
    open_page(page, f"{server}/attention?lang=en&heads=5&d_model=banana")
    page.get_by_text("is not valid here").first.wait_for(timeout=30_000)
    no_exception(page)
