"""The GPU lab's animation in headless Chromium: it plays and moves, pauses, steps one step at a time, and
keeps its place (with new labels) when the page reruns in Chinese."""
import numpy as np
import pytest
from waits import eventually, stays

from browsertools import no_exception, open_page, pixels
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
EN, ZH = catalogue("en"), catalogue("zh")
ANIM, PLAY, STEP = '[data-testid="memsim-anim"]', '[data-testid="memsim-play"]', '[data-testid="memsim-step"]'


def open_animation(page, server: str, lang: str) -> None:
    # 5 steps/s: slow enough that the tiles' trips are drawn, and the run (32 steps) lasts past the checks
    open_page(page, f"{server}/gpu?lang={lang}&view=animate&N=256&algo=tiled&speed=5")
    page.wait_for_selector('[data-testid="memsim-grid"]', timeout=60_000)
    page.locator(ANIM).scroll_into_view_if_needed()
    at_step(page, 0)  # painted once


def at_step(page, n: int) -> None:
    """Until the animation has painted step n (labs/gpu/memsim_view.js marks the step it painted)."""
    page.wait_for_function(f"() => document.querySelector('{ANIM}').dataset.step === '{n}'", timeout=10_000)


def landed(page) -> None:
    """Until the animation draws no more: two animation frames in a row paint nothing (a tile in flight paints
    every frame)."""
    page.wait_for_function("() => { const f = (window.__mlsimLive || {}).frames, same = f === window.__lastFrames;"
                           " window.__lastFrames = f; return same; }", polling="raf", timeout=10_000)


def step_index(page) -> int:
    return int(page.get_attribute(ANIM, "data-step"))


def frames(page) -> int:
    return page.evaluate("() => (window.__mlsimLive || {}).frames || 0")


def test_play_moves_the_pictures_and_pause_stops_them(server, page):
    open_animation(page, server, "en")
    grid, diagram = page.locator('[data-testid="memsim-grid"]'), page.locator('[data-testid="memsim-diagram"]')
    grid0, diagram0, frames0 = pixels(grid), pixels(diagram), frames(page)
    assert step_index(page) == 0 and grid0.std() > 10, "the empty grid and the diagram are drawn"
    page.click(PLAY)
    assert page.inner_text(PLAY) == EN["gpu.anim.pause"]
    page.wait_for_function(f"() => +document.querySelector('{ANIM}').dataset.step >= 5", timeout=30_000)
    drawn, steps = frames(page) - frames0, step_index(page)
    assert 5 <= steps < 32 and drawn > 2 * steps, (drawn, steps)  # the tiles travel between steps

    def moved():
        assert np.abs(pixels(grid) - grid0).mean() > 0.5, "blocks changed state"
        assert np.abs(pixels(diagram) - diagram0).mean() > 0.2, "tiles moved in the diagram"

    eventually(moved)
    page.click(PLAY)
    landed(page)  # the last tile lands
    # a playing animation takes a step every 0.2 s (5 steps/s): in 1 s it would have taken five
    stays(lambda: (step_index(page), frames(page)), 1.0, "Pause stops the animation")
    assert page.inner_text(PLAY) == EN["gpu.anim.play"]
    no_exception(page)


def test_step_back_reset_and_scrubber_move_exactly(server, page):
    open_animation(page, server, "en")
    for expected in (1, 2, 3):
        page.click(STEP)
        at_step(page, expected)  # one step per press: a press that skipped a step never paints this one
    caption = page.inner_text('[data-testid="memsim-caption"]')
    assert caption.startswith(EN["gpu.anim.kernel.fused"].split("{")[0]), caption
    page.click('[data-testid="memsim-back"]')
    at_step(page, 2)
    page.locator('[data-testid="memsim-scrub"]').fill("20")
    at_step(page, 20)
    page.click('[data-testid="memsim-reset"]')
    at_step(page, 0)


def test_chinese_labels_and_the_position_survives_a_rerun(server, page):
    open_animation(page, server, "en")
    for _ in range(4):
        page.click(STEP)
    at_step(page, 4)
    page.get_by_text("中文").first.click()  # the sidebar's language switch: the page reruns, same report
    page.wait_for_function(f"() => document.querySelector('{PLAY}').textContent === '{ZH['gpu.anim.play']}'",
                           timeout=30_000)
    assert step_index(page) == 4, "the same report keeps its position"
    text = page.inner_text(ANIM)
    assert ZH["gpu.anim.state.skipped"] in text or ZH["gpu.anim.state.computed"] in text
    assert page.inner_text('[data-testid="memsim-caption"]').startswith(ZH["gpu.anim.kernel.fused"].split("{")[0])


def test_chinese_page(server, page):
    open_animation(page, server, "zh")
    assert page.inner_text(PLAY) == ZH["gpu.anim.play"]
    assert ZH["gpu.anim.counters"] in page.inner_text(ANIM)
    no_exception(page)


def test_sweep_view_draws_both_log_log_charts(server, page):
    open_page(page, f"{server}/gpu?lang=en&view=sweep")
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .scatterlayer .trace').length >= 8",
                           timeout=60_000)
    charts = page.locator(".js-plotly-plot")
    assert charts.count() == 2
    no_exception(page)
    for i in range(2):
        charts.nth(i).scroll_into_view_if_needed()

        def both_lines(i=i):
            img = pixels(charts.nth(i))
            red = ((img[..., 0] > 180) & (img[..., 1] < 80) & (img[..., 2] < 80)).mean()  # naive's line
            blue = ((img[..., 2] > 150) & (img[..., 0] < 60)).mean()  # tiled's line
            assert red > 0.001 and blue > 0.001, (i, red, blue)

        eventually(both_lines)
