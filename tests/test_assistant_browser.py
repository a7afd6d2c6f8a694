"""The assistant lab in headless Chromium: the raw-vs-clean training plays on screen, Pause stops it, Step moves both
models on and Reset takes them back; the paradigms section draws its figures, redraws the generative model's samples
when the slider moves, and its map's links open the labs they name; switching a cleaning step off changes the table
(Chinese)."""
import re

import numpy as np
import pytest
from playwright.sync_api import Error as PlaywrightError
from waits import eventually

from browsertools import (
    click,
    live_stats,
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
PANEL = '[data-testid="live-panel-0"]'  # the model trained on the raw corpus


def test_the_training_plays_pauses_steps_and_resets(server, page):
    page.set_viewport_size({"width": 1400, "height": 1300})
    open_page(page, f"{server}/assistant?lang=en&section=data&d_speed=2")
    page.wait_for_selector(PANEL, timeout=90_000)
    panel = page.locator(PANEL)
    panel.scroll_into_view_if_needed()
    press_button(page, EN["asst.data.play"], exact=True)
    page.wait_for_function("() => (window.__mlsimLive || {}).epoch > 30", timeout=90_000)
    trains_on_screen(page, panel, change=0.02, timeout=90)
    stopped = pause_stops(page, page.get_by_role("button", name=EN["asst.data.pause"], exact=True).first)
    press_button(page, EN["asst.data.step"].format(n=2), exact=True)
    wait_live(page, "s => (window.__mlsimLive || {}).epoch > s", stopped, 60_000, "Step moves on")
    stepped = live_stats(page)["epoch"]
    assert stepped - stopped == 2, (stopped, stepped)
    page_idle(page)
    press_button(page, EN["asst.data.reset"], exact=True)
    try:
        page.wait_for_function("() => (window.__mlsimLive || {}).epoch === 0", timeout=60_000)
    except PlaywrightError:
        raise AssertionError(f"after Reset: {live_stats(page)}") from None
    assert live_stats(page)["epoch"] == 0
    no_exception(page)


def plotly(page, key: str):
    """The Plotly figure drawn with this key (the paradigms section: asst.fig.disc, .gen beside it, .map, .bandit)."""
    selector = f".st-key-{key.replace('.', '-')} .js-plotly-plot"
    page.wait_for_selector(selector, timeout=60_000)
    fig = page.locator(selector).first
    fig.scroll_into_view_if_needed()
    return fig


def test_the_generative_model_draws_new_points_and_the_map_links_to_the_labs(server, page):
    page.set_viewport_size({"width": 1400, "height": 1300})
    open_page(page, f"{server}/assistant?lang=en&section=paradigms&p_samples=0")
    plotly(page, "asst.fig.bandit")
    fig = plotly(page, "asst.fig.gen")  # the generative model's figure, on the stage beside its slider
    page.wait_for_timeout(1000)
    before = pixels(fig)
    thumb = page.locator('.st-key-asst-p_samples input[type="range"]')
    thumb.focus()
    for _ in range(10):
        thumb.press("ArrowRight")

    def redrawn():
        try:
            now = pixels(page.locator(".st-key-asst-fig-gen .js-plotly-plot").first)
        except PlaywrightError as e:  # the figure is being replaced by the rerun
            raise AssertionError(str(e)) from None
        assert np.abs(now - before).mean() > 0.2
    eventually(redrawn, 60)
    no_exception(page)
    link = plotly(page, "asst.fig.map").locator("a", has_text=EN["asst.map.ml"]).first
    link.click(force=True)  # the point clicked is the box drawn inside the same link
    page.wait_for_url(re.compile(r"/classification\?lang=en"), timeout=30_000)
    page.wait_for_selector('[data-testid="stApp"]')


def test_switching_a_step_off_changes_the_table_in_chinese(server, page):
    page.set_viewport_size({"width": 1400, "height": 1300})
    open_page(page, f"{server}/assistant?lang=zh&section=data")
    page.wait_for_selector('[data-testid="stDataFrame"]', timeout=60_000)
    page.wait_for_timeout(1000)
    table = page.locator('[data-testid="stDataFrame"]').first
    before = pixels(table)
    click(page, page.get_by_role("button", name=ZH["asst.d_steps.near"]).first)

    def changed():
        now = pixels(page.locator('[data-testid="stDataFrame"]').first)
        assert now.shape != before.shape or np.abs(now - before).mean() > 0.5
    eventually(changed, 60)
    page.wait_for_function("() => !location.search.includes('near') || location.search.includes('d_steps')")
    no_exception(page)
