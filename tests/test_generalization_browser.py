"""The generalisation lab in headless Chromium: charts are drawn, folds and training really move on screen."""
import io
import re

import numpy as np
import pytest
from PIL import Image
from test_browser import canvas_pixels
from waits import eventually

from browsertools import click, no_exception, open_page, pause_stops, trains_on_screen
from sim.plots import palette
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
ZH, EN = catalogue("zh"), catalogue("en")
ORANGE, BLUE, PURPLE = (palette.rgb(c) for c in (palette.ORANGE, palette.BLUE, palette.PURPLE))  # the palette's


def share_of(pixels: np.ndarray, rgb: tuple[int, int, int], tol: int = 40) -> float:
    """Share of the pixels within tol of a colour in every channel."""
    return float((np.abs(pixels - np.array(rgb)).max(axis=-1) < tol).mean())


def chart_pixels(page, index: int) -> np.ndarray:
    png = page.locator(".js-plotly-plot").nth(index).screenshot()
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def caption(page) -> str:
    return page.locator(".lp-caption").first.inner_text()


def test_split_bar_and_cross_validation_play_fold_by_fold(server, page):
    open_page(page, f"{server}/generalization?lang=en&section=split&k=4")
    page.wait_for_selector(".js-plotly-plot", timeout=60_000)
    page.wait_for_selector('[data-testid="live-panel-0"]', timeout=60_000)

    def drawn():
        split = chart_pixels(page, 0)  # the bar over the data: one colour per part
        assert min(share_of(split, c) for c in (ORANGE, BLUE, PURPLE)) > 0.002
        fold = canvas_pixels(page, "live-panel-0")
        assert share_of(fold, ORANGE) > 0.0005 and share_of(fold, BLUE) > 0.0005, "training and validation points"

    eventually(drawn)
    assert "4" in caption(page)

    click(page, page.get_by_role("button", name=re.compile(EN["gen.cv.play"])))
    for i in (1, 4):  # the folds play one by one ...
        page.wait_for_function(f"() => /^Fold {i} of 4/.test(document.querySelector('.lp-caption').textContent)",
                               timeout=30_000)
    page.get_by_role("button", name=re.compile(EN["gen.cv.play"])).wait_for(timeout=30_000)  # ... and stop
    last = canvas_pixels(page, "live-panel-0")
    # Step from the last fold comes back to the first. The pixels are compared on a still view: a screenshot
    # taken while the folds play can land on a later fold than the caption read just before it said.
    click(page, page.get_by_role("button", name=re.compile(EN["gen.cv.step"])))
    page.wait_for_function("() => /^Fold 1 of 4/.test(document.querySelector('.lp-caption').textContent)",
                           timeout=30_000)
    first = canvas_pixels(page, "live-panel-0")
    assert np.abs(first - last).mean() > 0.05, "another fold validates other points"
    no_exception(page)


def test_capacity_training_moves_and_early_stopping_restores_the_best_epoch(server, page):
    open_page(page, f"{server}/generalization?lang=en&section=capacity&patience=150&speed=5")
    page.wait_for_selector('[data-testid="live-panel-1"]', timeout=60_000)
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length == 2",  # sweep and fit
                           timeout=60_000)

    def sweep_drawn():
        sweep = chart_pixels(page, 0)
        assert share_of(sweep, ORANGE) > 0.001 and share_of(sweep, BLUE) > 0.001

    eventually(sweep_drawn)
    click(page, page.get_by_role("button", name=re.compile(EN["gen.play"])))
    page.wait_for_function("() => /Epoch [1-9]/.test(document.querySelector('.lp-caption').textContent)",
                           timeout=30_000)
    trains_on_screen(page, page.locator('[data-testid="live-panel-1"]'))  # the loss curves are drawn
    stopped = EN["gen.run.stopped"].split("{")[0].strip()
    page.get_by_text(stopped).first.wait_for(timeout=90_000)
    epoch, best = (int(v) for v in re.findall(r"\d+", page.get_by_text(stopped).first.inner_text())[:2])
    assert epoch == best + 150
    assert page.get_by_role("button", name=re.compile(EN["gen.play"])).is_disabled()
    no_exception(page)


def test_leakage_scenarios_show_their_bars(server, page):
    for scenario in ("scaling", "group", "time"):  # one at a time: its bars beside its setting, its picture below
        open_page(page, f"{server}/generalization?lang=en&section=leakage&scenario={scenario}")
        page.get_by_text(EN[f"gen.leak.{scenario}.text"][:40]).first.wait_for(timeout=60_000)
        page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length == 2", timeout=60_000)
        pixels = chart_pixels(page, 0)
        assert share_of(pixels, BLUE) > 0.01 and share_of(pixels, (97, 97, 97), 20) > 0.01
    no_exception(page)


def test_label_noise_in_chinese_trains_and_pauses(server, page):
    open_page(page, f"{server}/generalization?lang=zh&section=label_noise&flip=0.3")
    page.get_by_text(ZH["gen.noise.intro"][:10]).first.wait_for(timeout=60_000)
    page.wait_for_selector('[data-testid="live-panel-0"]', timeout=60_000)
    boundary = canvas_pixels(page, "live-panel-0")
    assert share_of(boundary, (251, 217, 176), 12) > 0.02 and share_of(boundary, (181, 211, 234), 12) > 0.02

    click(page, page.get_by_role("button", name=re.compile(ZH["gen.play"])))
    page.wait_for_function("() => /第 [1-9]/.test(document.querySelector('.lp-caption').textContent)",
                           timeout=30_000)
    trains_on_screen(page, page.locator('[data-testid="live-panel-0"]'))
    pause_stops(page, page.get_by_role("button", name=re.compile(ZH["gen.pause"])))
    assert np.abs(boundary - canvas_pixels(page, "live-panel-0")).mean() > 0.05, "the boundary moved"
    no_exception(page)
