"""The transformer-block lab in headless Chromium: the normalised tensor is drawn with its outlined group, and the
Pre/Post-LN and MoE live views really move on screen."""
import re

import pytest
from waits import eventually

from browsertools import click, no_exception, open_page, pause_stops, pixels, trains_on_screen
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
EN, ZH = catalogue("en"), catalogue("zh")


def test_norm_tensor_is_drawn_with_numbers(server, page):
    open_page(page, f"{server}/blocks?lang=en&section=norm&n_kind=batch&n_B=2&n_T=3&n_d=4")
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 1", timeout=60_000)
    fig = page.locator(".js-plotly-plot").first
    fig.scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .heatmaplayer image, "
                           ".js-plotly-plot .hm image').length >= 4", timeout=30_000)

    def drawn():
        img = pixels(fig)
        red = ((img[..., 0] > 150) & (img[..., 2] < 120)).mean()
        blue = ((img[..., 2] > 150) & (img[..., 0] < 120)).mean()
        dark = (img.max(axis=-1) < 60).mean()  # the outlines and the numbers
        assert red > 0.005 and blue > 0.005 and dark > 0.002, (red, blue, dark)

    eventually(drawn)
    no_exception(page)


@pytest.mark.parametrize("section,lang", [("residual", "en"), ("moe", "zh")])
def test_live_runs_move(server, page, section, lang):
    cat = EN if lang == "en" else ZH
    extra = "&r_layers=4&r_width=16" if section == "residual" else "&m_speed=5"
    open_page(page, f"{server}/blocks?lang={lang}&section={section}{extra}")
    page.wait_for_selector('[data-testid="live-panel-0"]', timeout=60_000)
    click(page, page.get_by_role("button", name=re.compile(cat["blk.play"])))
    page.wait_for_function("() => (window.__mlsimLive || {}).epoch > 10", timeout=60_000)
    trains_on_screen(page, page.locator('[data-testid="live-panel-1"]'))  # the second panel changes
    pause_stops(page, page.get_by_role("button", name=re.compile(cat["blk.pause"])))
    no_exception(page)
