"""The foundations lab's embeddings, retrieval and lookup sections in headless Chromium: the word vectors move on
screen while they train, Pause stops them, Step moves them on by a tick and Reset takes them back to step 0; a
question typed redraws the retrieval's scores and an empty one gets a message; new ids redraw the lookup."""
import re

import numpy as np
import pytest
from playwright.sync_api import Error as PlaywrightError
from waits import eventually

from browsertools import live_stats, no_exception, open_page, pause_stops, pixels, press_button, trains_on_screen
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
EN, ZH = catalogue("en"), catalogue("zh")
PANEL = '[data-testid="live-panel-0"]'  # the vectors' projection


def plotly(page, i: int = 0):
    page.wait_for_function(f"() => document.querySelectorAll('.js-plotly-plot').length > {i}", timeout=60_000)
    fig = page.locator(".js-plotly-plot").nth(i)
    fig.scroll_into_view_if_needed()
    return fig


def shot(page) -> np.ndarray:
    """The first chart's pixels; an AssertionError (so that `eventually` looks again) while it is redrawn."""
    try:
        return pixels(plotly(page))
    except PlaywrightError as e:
        raise AssertionError(f"the chart is being redrawn: {e}") from e


def test_the_vectors_play_pause_step_and_reset(server, page):
    page.set_viewport_size({"width": 1400, "height": 1300})
    open_page(page, f"{server}/foundations?lang=en&section=embeddings&emb_speed=10")
    page.wait_for_selector(PANEL, timeout=60_000)
    panel = page.locator(PANEL)
    panel.scroll_into_view_if_needed()
    start = pixels(panel)
    press_button(page, EN["fnd.emb.play"])
    trains_on_screen(page, panel, change=0.02)
    stopped = pause_stops(page, page.get_by_role("button", name=re.compile(EN["fnd.emb.pause"])).first)
    press_button(page, EN["fnd.emb.step"].split("(")[0].strip())
    page.wait_for_function("s => (window.__mlsimLive || {}).epoch === s + 10", arg=stopped, timeout=30_000)
    assert page.get_by_text(re.compile("nearest to “cat”")).count()
    press_button(page, EN["fnd.emb.reset"])
    page.wait_for_function("() => (window.__mlsimLive || {}).epoch === 0", timeout=30_000)

    def back_at_the_start():
        assert np.abs(pixels(panel) - start).mean() < 0.5
    eventually(back_at_the_start)
    assert live_stats(page)["frames"] > 0
    no_exception(page)


def test_a_question_redraws_the_scores_and_new_ids_redraw_the_lookup(server, page):
    page.set_viewport_size({"width": 1400, "height": 1300})
    open_page(page, f"{server}/foundations?lang=zh&section=retrieval")
    before = pixels(plotly(page))
    box = page.get_by_label(ZH["fnd.rag_q"])
    box.fill("反向传播 梯度")
    box.press("Enter")

    def redrawn():
        assert np.abs(shot(page) - before).mean() > 0.2
    eventually(redrawn, 60)
    box.fill("   ")
    box.press("Enter")
    page.get_by_text(ZH["fnd.rag.bad.empty"][:10]).first.wait_for(timeout=60_000)
    no_exception(page)

    open_page(page, f"{server}/foundations?lang=zh&section=lookup")
    before = pixels(plotly(page))
    ids = page.get_by_label(ZH["fnd.lk_ids"])
    ids.fill("0, 1, 2, 3")
    ids.press("Enter")

    def lookup_redrawn():
        assert np.abs(shot(page) - before).mean() > 0.2
    eventually(lookup_redrawn, 60)
    ids.fill("1, 99")
    ids.press("Enter")
    page.get_by_text(re.compile("不是至多")).first.wait_for(timeout=60_000)
    no_exception(page)
