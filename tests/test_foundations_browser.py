"""The foundations lab in headless Chromium: the computational graph is drawn and changes colour as the passes are
stepped through; the vectors and the 2×2 maps redraw when their settings change; a timing shows its numbers."""
import numpy as np
import pytest
from playwright.sync_api import Error as PlaywrightError
from waits import eventually

from browsertools import no_exception, open_page, pixels
from sim.plots.palette import BLUE, GOOD, NEUTRAL, rgb, tint
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
EN, ZH = catalogue("en"), catalogue("zh")


def share(px: np.ndarray, colour: str, tol: int = 10) -> float:
    return float((np.abs(px - np.array(rgb(colour))).max(axis=-1) <= tol).mean())


def chart(page, i: int = 0):
    loc = page.locator(".js-plotly-plot").nth(i)
    loc.wait_for(timeout=60_000)
    loc.scroll_into_view_if_needed()
    return loc


def shot(page, i: int = 0) -> np.ndarray:
    """The pixels of the i-th chart; an AssertionError (so that `eventually` looks again) while it is redrawn."""
    try:
        return pixels(chart(page, i))
    except PlaywrightError as e:
        raise AssertionError(f"chart {i} is being redrawn: {e}") from e


def colour_share(page, colour: str, least: float) -> np.ndarray:
    px = shot(page)
    assert share(px, colour) > least, f"{share(px, colour):.4f} of the graph in {colour}"
    return px


def press(page, text: str) -> None:
    page.get_by_role("button", name=text).first.click()


def test_the_graph_fills_in_as_the_passes_are_stepped(server, page):
    open_page(page, f"{server}/foundations?lang=zh")
    page.get_by_text(ZH["fnd.title"]).first.wait_for()
    blue_fill, green_fill = tint(BLUE, 0.25), tint(GOOD, 0.25)  # value known; gradient known
    before = eventually(lambda: colour_share(page, tint(tint(NEUTRAL, 0.4), 0.25), 0.02))  # grey: nothing computed yet
    assert share(before, blue_fill) == 0
    for i in range(1, 7):
        press(page, ZH["fnd.bp.next"])
        page.wait_for_function("k => new URLSearchParams(location.search).get('k') === String(k)", arg=i)
    eventually(lambda: colour_share(page, blue_fill, 0.008))  # six nodes turned blue
    press(page, ZH["fnd.bp.end"])
    press(page, ZH["fnd.bp.next"])  # into the backward pass
    press(page, ZH["fnd.bp.end"])
    done = eventually(lambda: colour_share(page, green_fill, 0.01))
    assert share(done, blue_fill) < 0.001  # every node now has its gradient: green, none left blue
    assert "∂L/∂" in page.locator('[data-testid="stMain"]').inner_text()
    no_exception(page)


def changed(now: np.ndarray, before: np.ndarray) -> None:
    assert now.shape != before.shape or np.abs(now - before).mean() > 0.5, "the picture changed"


def test_vectors_and_maps_redraw_and_a_zero_vector_is_a_message(server, page):
    open_page(page, f"{server}/foundations?lang=en&section=vectors")
    pad = page.locator('[data-testid="vector-pad"] canvas')
    pad.wait_for(timeout=60_000)
    before = pixels(pad)
    press(page, EN["fnd.vec.preset.opposite"])
    eventually(lambda: changed(pixels(pad), before))
    press(page, EN["fnd.vec.preset.zero"])
    page.get_by_text(EN["fnd.vec.zero"].split(":")[1].strip()[:30]).first.wait_for(timeout=30_000)
    no_exception(page)
    open_page(page, f"{server}/foundations?lang=en&section=matrices&mm_n=512")
    maps = eventually(lambda: shot(page))
    page.locator(".st-key-fnd-mat_a_stretch button").click()
    eventually(lambda: changed(shot(page), maps))
    page.locator(".st-key-fnd-measure button").click()
    page.get_by_text("GFLOP/s").first.wait_for(timeout=60_000)
    no_exception(page)


def handle_xy(box: dict, p: tuple[float, float], R: float = 5.5) -> tuple[float, float]:
    """The screen point of plane point p on the pad (it shows [−R, R]²)."""
    return box["x"] + (p[0] + R) / (2 * R) * box["width"], box["y"] + (R - p[1]) / (2 * R) * box["height"]


def test_dragging_a_vector_moves_it_and_the_server_recomputes_the_numbers(server, page):
    open_page(page, f"{server}/foundations?lang=en&section=vectors&ax=3&ay=1&bx=1&by=3")
    pad = page.locator('[data-testid="vector-pad"] canvas')
    pad.wait_for(timeout=60_000)
    pad.scroll_into_view_if_needed()
    before = pixels(pad)
    box = pad.bounding_box()
    page.mouse.move(*handle_xy(box, (3, 1)))
    page.mouse.down()
    for i in range(1, 11):  # to (−2, 2) in ten moves
        page.mouse.move(*handle_xy(box, (3 - 0.5 * i, 1 + 0.1 * i)))
    page.mouse.up()
    page.wait_for_function("() => { const q = new URLSearchParams(location.search);"
                           " return q.get('ax') === '-2' && q.get('ay') === '2'; }", timeout=30_000)
    main = page.locator('[data-testid="stMain"]')
    eventually(lambda: _shows(main, "a = (−2, 2)".replace("−", "-")))
    assert np.abs(pixels(pad) - before).mean() > 0.5  # the picture moved with it
    assert page.locator('[data-testid="stSlider"]').filter(has_text=EN["fnd.ax"]).inner_text().find("-2") >= 0
    no_exception(page)


def _shows(locator, text: str) -> None:
    assert text in locator.inner_text().replace("\\", ""), text
