"""The optimiser race in headless Chromium: Play draws every racer's loss curve in its colour on the live canvas,
the curves move, Pause stops them, Reset starts again from step 0; the schedules race plays in Chinese."""
import os
import re

import numpy as np
import pytest
from waits import eventually

from browsertools import no_exception, open_page, pause_stops, pixels, press_button, trains_on_screen
from sim.plots.optimizers import COLOURS, SCHEDULE_COLOURS
from sim.plots.palette import rgb
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
EN, ZH = catalogue("en"), catalogue("zh")
PANEL = '[data-testid="live-panel-0"]'


def share(px: np.ndarray, colour: str, tol: int = 30) -> float:
    return float((np.abs(px - np.array(rgb(colour))).max(axis=-1) <= tol).mean())


def test_race_plays_every_racer_in_its_colour_and_pause_and_reset_work(server, page):
    page.set_viewport_size({"width": 1400, "height": 1400})
    open_page(page, f"{server}/optimizers?lang=en&section=race&r_opts=sgd,adam,lion,muon&r_width=16&r_speed=4")
    page.wait_for_selector(PANEL, timeout=60_000)
    press_button(page, EN["opt.race.play"])
    page.wait_for_function("() => (window.__mlsimLive || {}).epoch > 60", timeout=60_000)
    trains_on_screen(page, page.locator(PANEL), change=0.02)  # the curves grow on screen
    if os.environ.get("SHOTS"):
        page.screenshot(path=os.path.join(os.environ["SHOTS"], "race.png"), full_page=True)

    def racers_in_their_colours():
        b = pixels(page.locator(PANEL))
        seen = {o: share(b, COLOURS[o]) for o in ("sgd", "adam", "lion", "muon")}
        assert sum(v > 0.001 for v in seen.values()) >= 3, seen  # more than one colour: the racers' own
        assert share(b, COLOURS["adamw"]) < 0.001  # not in this race

    eventually(racers_in_their_colours)
    pause_stops(page, page.get_by_role("button", name=re.compile(re.escape(EN["opt.race.pause"]))).first)
    press_button(page, EN["opt.race.reset"])
    page.wait_for_function("() => (window.__mlsimLive || {}).epoch === 0", timeout=30_000)
    table = page.locator('[data-testid="stDataFrame"]').first
    table.wait_for(timeout=30_000)
    no_exception(page)


def test_schedules_race_in_chinese(server, page):
    page.set_viewport_size({"width": 1400, "height": 1400})
    open_page(page, f"{server}/optimizers?lang=zh&section=schedules&s_steps=300&s_warmup=30&r_width=8&r_speed=10")
    page.get_by_text(ZH["opt.sched.race"]).first.wait_for(timeout=60_000)
    page.wait_for_selector(PANEL, timeout=60_000)
    press_button(page, ZH["opt.race.play"])
    page.wait_for_function("() => (window.__mlsimLive || {}).epoch > 100", timeout=60_000)

    def every_schedule_drawn():
        rates = pixels(page.locator('[data-testid="live-panel-1"]'))
        seen = {s: share(rates, SCHEDULE_COLOURS[s]) for s in ("step", "cosine", "wsd")}
        assert all(v > 0.0005 for v in seen.values()), seen

    eventually(every_schedule_drawn)
    no_exception(page)


def altair(page, nth: int = 0):
    chart = page.locator('[data-testid="stVegaLiteChart"]').nth(nth)
    chart.wait_for(timeout=60_000)
    chart.scroll_into_view_if_needed()
    page.wait_for_function("(n) => { const c = document.querySelectorAll('[data-testid=\"stVegaLiteChart\"]')[n];"
                           " return c && c.querySelector('canvas, svg .mark-rect, svg .mark-line'); }", arg=nth,
                           timeout=60_000)
    return chart


def test_dragging_steps_on_the_loss_chart_highlights_them_on_the_paths(server, page):
    page.set_viewport_size({"width": 1400, "height": 1400})
    open_page(page, f"{server}/optimizers?lang=en&opts=sgd,adam&steps=100")
    chart = altair(page)
    paths = page.locator(".js-plotly-plot").first
    paths.wait_for(timeout=60_000)
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .scatterlayer .trace').length >= 2",
                           timeout=60_000)  # both optimisers' paths are drawn
    before = pixels(paths)
    box = chart.bounding_box()
    y = box["y"] + box["height"] * 0.5
    page.mouse.move(box["x"] + box["width"] * 0.25, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.45, y, steps=8)
    page.mouse.move(box["x"] + box["width"] * 0.6, y, steps=8)
    page.mouse.up()
    hint = EN["opt.paths.brushed"].split("{")[0].strip()
    page.get_by_text(hint).first.wait_for(timeout=30_000)

    def highlighted():  # Plotly redraws the paths with the highlight
        after = pixels(page.locator(".js-plotly-plot").first)
        grown = {o: share(after, COLOURS[o], 60) - share(before, COLOURS[o], 60) for o in ("sgd", "adam")}
        assert np.abs(after - before).mean() > 0.05 and any(v > 0 for v in grown.values()), grown

    eventually(highlighted)
    if os.environ.get("SHOTS"):
        page.screenshot(path=os.path.join(os.environ["SHOTS"], "brush.png"), full_page=True)
    no_exception(page)


def test_clicking_the_phase_diagram_sets_alpha_and_beta(server, page):
    page.set_viewport_size({"width": 1400, "height": 1400})
    open_page(page, f"{server}/optimizers?lang=en&section=momentum&m_step=1&m_beta=0.5")
    chart = altair(page)
    box = chart.bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.75)
    page.wait_for_function("() => !location.search.includes('m_beta=0.5&') && location.search.includes('m_beta=')",
                           timeout=30_000)
    if os.environ.get("SHOTS"):
        page.screenshot(path=os.path.join(os.environ["SHOTS"], "phase.png"), full_page=True)
    query = dict(q.split("=") for q in page.evaluate("location.search")[1:].split("&"))
    assert (float(query["m_step"]), float(query["m_beta"])) != (1.0, 0.5)
    no_exception(page)
