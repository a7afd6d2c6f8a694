"""The optimiser lab in headless Chromium: the paths figure is drawn with each optimiser's colour, its
animation plays in the browser, and a diverging learning rate shows its message without an exception."""
import numpy as np
import pytest
from waits import eventually

from browsertools import open_page, pixels
from sim.plots.optimizers import COLOURS
from sim.plots.palette import rgb
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
EN = catalogue("en")


def share(px: np.ndarray, colour: str, tol: int = 14) -> float:
    return float((np.abs(px - np.array(rgb(colour))).max(axis=-1) <= tol).mean())


def paths_chart(page):
    chart = page.locator(".js-plotly-plot").first
    chart.wait_for(timeout=60_000)
    chart.scroll_into_view_if_needed()
    return chart


def test_paths_figure_draws_each_optimisers_colour(server, page):
    page.set_viewport_size({"width": 1400, "height": 1400})
    open_page(page, f"{server}/optimizers?lang=en&opts=sgd,momentum,adam")
    page.get_by_text(EN["opt.title"]).first.wait_for()
    chart = paths_chart(page)
    assert page.locator('[data-testid="stException"]').count() == 0

    def colours_drawn():
        px = pixels(chart)
        seen = {o: share(px, COLOURS[o]) for o in ("sgd", "momentum", "adam")}
        assert sum(v > 0.0005 for v in seen.values()) >= 2, seen
        assert share(px, COLOURS["lion"]) < 0.0005  # not chosen, not drawn
        return px

    px = eventually(colours_drawn)
    # the play button runs the frames in the browser: the paths are redrawn from step 0
    page.locator(".updatemenu-button").first.click()

    def redrawn():
        assert np.abs(pixels(chart) - px).mean() > 0.01, "the animation redrew the paths"

    eventually(redrawn)
    assert page.locator('[data-testid="stException"]').count() == 0


def test_a_diverging_rate_shows_the_message(server, page):
    open_page(page, f"{server}/optimizers?lang=en&opts=sgd&sgd_lr=10")
    page.get_by_text(EN["opt.diverged"].split("{")[1].split("}")[1].strip()[:12]).first.wait_for(timeout=30_000)
    paths_chart(page)
    assert page.locator('[data-testid="stException"]').count() == 0
