"""The regression lab in headless Chromium: the fit is drawn, gradient descent really moves the curve and
the (w, b) path on screen, divergence is shown, and the worked example appears with the notes' numbers."""
import re
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
from waits import eventually

from browsertools import click, no_exception, open_page, pause_stops, pixels
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
ZH, EN = catalogue("zh"), catalogue("en")


def orange(img: np.ndarray) -> float:
    """Share of the fitted curve's and the path's orange (sim.plots.regression.FIT_COLOR) among the pixels."""
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    return float(((r > 200) & (g > 100) & (g < 190) & (b < 120)).mean())


def blue(img: np.ndarray) -> float:
    """Share of the data points' blue, also where they are drawn translucent."""
    r, b = img[..., 0], img[..., 2]
    return float(((b > 150) & (r < 120)).mean())


def test_fit_is_drawn_in_chinese_with_url_state(server, page):
    open_page(page, f"{server}/regression?lang=zh&dataset=quadratic&degree=2&outliers=1")
    page.get_by_text(ZH["reg.title"]).first.wait_for()
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    chart.wait_for(timeout=60_000)

    def drawn():
        img = pixels(chart)
        assert orange(img) > 0.001, "the fitted curve is drawn"
        assert blue(img) > 0.001, "the data points are drawn"

    eventually(drawn)
    query = parse_qs(urlparse(page.url).query)
    assert (query.get("dataset"), query.get("degree")) == (["quadratic"], ["2"]), query
    no_exception(page)


def still_drawn(fit, path) -> tuple[np.ndarray, np.ndarray]:
    """The fit panel and the (w, b) path panel before training, once both are painted."""
    drawn = pixels(fit), pixels(path)
    assert min(img.std() for img in drawn) > 10, "both panels are painted"
    return drawn


def test_gradient_descent_moves_the_curve_and_the_path(server, page):
    open_page(page, f"{server}/regression?lang=en&solver=gd&lr=0.5&seed=3")
    fit, path = page.locator('[data-testid="live-panel-0"]'), page.locator('[data-testid="live-panel-2"]')
    path.wait_for(timeout=60_000)
    before, path_before = eventually(lambda: still_drawn(fit, path))
    click(page, page.get_by_role("button", name=re.compile(EN["reg.play"])).first)
    page.wait_for_function("() => window.__mlsimLive && window.__mlsimLive.epoch > 3", timeout=30_000)

    def moved():
        assert np.abs(before - pixels(fit)).mean() > 0.2, "the fitted curve moved on screen"
        assert orange(pixels(path)) > orange(path_before) + 0.001, "the path is drawn over the contours"

    eventually(moved)
    pause_stops(page, page.get_by_role("button", name=re.compile(EN["reg.pause"])).first)
    click(page, page.get_by_role("button", name=re.compile(EN["reg.reset"])).first)
    page.wait_for_function("() => window.__mlsimLive.epoch === 0", timeout=30_000)
    no_exception(page)


def test_divergence_is_visible_with_a_message(server, page):
    open_page(page, f"{server}/regression?lang=en&solver=gd&lr=100")
    page.get_by_text(EN["reg.lr.diverge"].split("{")[0]).first.wait_for(timeout=60_000)
    click(page, page.get_by_role("button", name=re.compile(EN["reg.play"])).first)
    page.get_by_text(EN["reg.diverged"].split("{")[0]).first.wait_for(timeout=30_000)
    page.locator(".lp-caption.diverged").wait_for(timeout=10_000)
    no_exception(page)


def test_worked_example_on_the_page(server, page):
    open_page(page, f"{server}/regression?lang=en&panel=step")
    page.get_by_text(EN["reg.step_example_done"].format(w="0.4", b="0.25")).wait_for(timeout=60_000)
    page.locator(".katex").nth(3).wait_for(timeout=30_000)  # the update is typeset
    no_exception(page)
