"""The language-model lab in headless Chromium: tokens drawn in colour, the tiny GPT's live curves really move, the
published laws' chart in Chinese, and a brush on the IsoFLOP chart greys out the other runs' loss curves."""
import re

import numpy as np
import pytest
from waits import eventually

from browsertools import click, no_exception, open_page, pixels, trains_on_screen
from sim.plots.lm import TOKEN_TINTS
from sim.plots.palette import rgb
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
EN, ZH = catalogue("en"), catalogue("zh")


def share(px: np.ndarray, colour: str, tol: int = 6) -> float:
    return float((np.abs(px - np.array(rgb(colour))).max(axis=-1) <= tol).mean())


def colourful(px: np.ndarray) -> float:
    """Share of clearly coloured pixels (the runs' own colours; the greyed-out runs and the axes are grey)."""
    return float((px.max(axis=-1) - px.min(axis=-1) > 60).mean())


def drawn_curves(chart) -> float:
    share = colourful(pixels(chart))
    assert share > 0.002, "the loss curves are drawn in their colours"
    return share


def test_tokens_are_coloured(server, page):
    open_page(page, f"{server}/lm?lang=en&section=tokens&tokenizer=bpe&vocab=320&shown=64")
    text = page.locator('[data-testid="stMarkdownContainer"]').filter(has=page.locator("span[style*=background]"))
    text.first.wait_for(timeout=60_000)
    text.first.scroll_into_view_if_needed()

    def coloured():
        px = pixels(text.first)
        tints = [share(px, c) for c in TOKEN_TINTS]
        assert sum(v > 0.01 for v in tints) >= 3, tints  # neighbouring tokens in different colours

    eventually(coloured)
    no_exception(page)


def test_tiny_gpt_trains_and_its_curves_move(server, page):
    open_page(page, f"{server}/lm?lang=en&section=train&speed=5")
    page.wait_for_selector('[data-testid="live-panel-0"]', timeout=60_000)
    click(page, page.get_by_role("button", name=re.compile(EN["lm.play"])))
    page.wait_for_function("() => (window.__mlsimLive || {}).epoch > 20", timeout=60_000)
    trains_on_screen(page, page.locator('[data-testid="live-panel-0"]'))  # the loss curves change
    click(page, page.get_by_role("button", name=re.compile(EN["lm.pause"])))
    no_exception(page)


def test_published_laws_in_chinese(server, page):
    open_page(page, f"{server}/lm?lang=zh&section=laws&log_c=22")
    page.get_by_text(ZH["lm.inference_title"]).first.wait_for(timeout=60_000)
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 3", timeout=60_000)
    chart = page.locator(".js-plotly-plot").first
    chart.scroll_into_view_if_needed()

    def drawn():
        assert pixels(chart).std() > 10

    eventually(drawn)
    no_exception(page)


def test_isoflop_brush_greys_out_the_other_runs(server, page):
    page.set_viewport_size({"width": 1400, "height": 1200})
    open_page(page, f"{server}/lm?lang=en&section=measured")
    page.get_by_text(EN["lm.isoflop_help"].split(";")[0]).first.wait_for(timeout=60_000)
    charts = page.locator('[data-testid="stVegaLiteChart"]')
    page.wait_for_function("() => document.querySelectorAll('[data-testid=\"stVegaLiteChart\"] canvas, "
                           "[data-testid=\"stVegaLiteChart\"] svg').length >= 2", timeout=60_000)
    iso, curves = charts.nth(0), charts.nth(1)
    iso.scroll_into_view_if_needed()
    before = eventually(lambda: drawn_curves(curves))
    box = iso.bounding_box()
    x0, y0 = box["x"] + box["width"] * 0.15, box["y"] + box["height"] * 0.15
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(x0 + box["width"] * 0.2, y0 + box["height"] * 0.6, steps=8)
    page.mouse.up()
    page.wait_for_function("() => document.body.innerText.includes('inside the rectangle')", timeout=30_000)

    def greyed_out():
        after = colourful(pixels(page.locator('[data-testid="stVegaLiteChart"]').nth(1)))
        assert 0 < after < 0.8 * before, (before, after)  # the brushed runs keep their colours, the others go grey

    eventually(greyed_out)
    no_exception(page)
