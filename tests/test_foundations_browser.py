"""The foundations lab in headless Chromium: the computational graph is drawn and changes colour as the passes are
stepped through; the vectors and the 2×2 maps redraw when their settings change; a timing shows its numbers."""
import numpy as np
import pytest
from playwright.sync_api import Error as PlaywrightError
from waits import eventually

from browsertools import no_exception, open_more, open_page, page_idle, pixels, press_button
from sim.linalg.vectors import analyse
from sim.plots.foundations import term
from sim.plots.palette import BLUE, GOOD, INK, NEUTRAL, ORANGE, rgb, tint
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


def test_the_graph_fills_in_as_the_passes_are_stepped(server, page):
    open_page(page, f"{server}/foundations?lang=zh")
    page.get_by_text(ZH["fnd.title"]).first.wait_for()
    blue_fill, green_fill = tint(BLUE, 0.25), tint(GOOD, 0.25)  # value known; gradient known
    before = eventually(lambda: colour_share(page, tint(tint(NEUTRAL, 0.4), 0.25), 0.02))  # grey: nothing computed yet
    assert share(before, blue_fill) == 0
    for i in range(1, 7):
        press_button(page, ZH["fnd.bp.next"])
        page.wait_for_function("k => new URLSearchParams(location.search).get('k') === String(k)", arg=i)
    eventually(lambda: colour_share(page, blue_fill, 0.008))  # six nodes turned blue
    press_button(page, ZH["fnd.bp.end"])
    press_button(page, ZH["fnd.bp.next"])  # into the backward pass
    press_button(page, ZH["fnd.bp.end"])
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
    press_button(page, EN["fnd.vec.preset.opposite"])
    eventually(lambda: changed(pixels(pad), before))
    press_button(page, EN["fnd.vec.preset.zero"])
    page.get_by_text(EN["fnd.vec.zero"].split(":")[1].strip()[:30]).first.wait_for(timeout=30_000)
    no_exception(page)
    open_page(page, f"{server}/foundations?lang=en&section=matrices&mm_n=512")
    maps = eventually(lambda: shot(page))
    open_more(page)  # the matrices' examples sit under More settings
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
    page.mouse.move(*handle_xy(still_box(page, pad), (-2, 2)))  # the last point again once the page is still
    page.mouse.up()
    page.wait_for_function("() => { const q = new URLSearchParams(location.search);"
                           " return q.get('ax') === '-2' && q.get('ay') === '2'; }", timeout=30_000)
    main = page.locator('[data-testid="stMain"]')
    eventually(lambda: _shows(main, "a = (−2, 2)".replace("−", "-")))
    assert np.abs(pixels(pad) - before).mean() > 0.5  # the picture moved with it
    open_more(page)  # the coordinates' sliders sit under More settings
    assert page.locator('[data-testid="stSlider"]').filter(has_text=EN["fnd.ax"]).inner_text().find("-2") >= 0
    no_exception(page)


def _shows(locator, text: str) -> None:
    assert text in locator.inner_text().replace("\\", ""), text


def expected_numbers(a, b, k, cat) -> list[str]:
    """What the pad must write for a, b and k: the catalogue's texts filled with sim.linalg.vectors.analyse's numbers
    in Python's formats, Markdown as read on screen (bold gone, "  \\n" a line break)."""
    r = analyse(a, b, k)
    pair = lambda v: f"({v[0]:.3g}, {v[1]:.3g})"  # noqa: E731
    shown = lambda text: text.replace("**", "").replace("  \n", "\n")  # noqa: E731
    out = [shown(cat["fnd.vec.numbers"].format(
        a=pair(r.a), b=pair(r.b), sum=pair(r.total), k=f"{r.k:g}", scaled=pair(r.scaled), na=f"{r.norm_a:.4g}",
        nb=f"{r.norm_b:.4g}", ax=term(f"{r.a[0]:g}"), ay=term(f"{r.a[1]:g}"), bx=term(f"{r.b[0]:g}"),
        by=term(f"{r.b[1]:g}"), dot=f"{r.dot:.4g}"))]
    if r.zero:
        return [*out, shown(cat["fnd.vec.zero"].format(which=", ".join(r.zero)))]
    return [*out, shown(cat["fnd.vec.angle"].format(
        dot=f"{r.dot:.4g}", na=f"{r.norm_a:.4g}", nb=f"{r.norm_b:.4g}", cos=f"{r.cos:.4f}", angle=f"{r.angle_deg:.1f}",
        proj=pair(r.projection), coef=f"{r.dot / r.norm_b ** 2:.4g}")), shown(cat[f"fnd.vec.kind.{r.kind}"])]


def drawn_numbers(page) -> tuple[tuple[float, float], tuple[float, float], list[str]]:
    """The pad's a and b as it drew them, and the paragraphs it wrote beside the picture."""
    return page.evaluate("""() => {
        const pad = document.querySelector('[data-testid="vector-pad"]');
        const p = [...pad.querySelectorAll('[data-testid="vector-pad-numbers"] p')].map((e) => e.innerText);
        return [pad.dataset.a.split(',').map(Number), pad.dataset.b.split(',').map(Number), p]; }""")


def steady_box(page, locator, tries: int = 50) -> dict:
    """The locator's bounding box once two reads 100 ms apart agree."""
    box = locator.bounding_box()
    for _ in range(tries):
        page.wait_for_timeout(100)
        now = locator.bounding_box()
        if now == box:
            break
        box = now
    return box


def still_box(page, locator) -> dict:
    """The locator's box once the rerun a drag started is over: while a run redraws the page, the page's header is a
    few px shorter for a moment (its Copy-link button is drawn last), and everything below it moves up, so a point
    reached while it reruns may be a grid step off."""
    page.wait_for_timeout(200)  # the pad sends its last move at most 120 ms after the pointer stopped
    page_idle(page)
    return steady_box(page, locator)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_numbers_written_while_dragging_are_the_engines(server, page, lang):
    """Drag a and b through several places (the mouse held down: the server has not answered) and read what the
    browser wrote: every number equals sim.linalg.vectors.analyse's, formatted as the page's texts ask."""
    cat = catalogue(lang)
    k = -1.5
    open_page(page, f"{server}/foundations?lang={lang}&section=vectors&ax=3&ay=1&bx=1&by=3&scalar={k}")
    pad = page.locator('[data-testid="vector-pad"] canvas')
    pad.wait_for(timeout=60_000)
    pad.scroll_into_view_if_needed()
    a, b = drawn_numbers(page)[:2]
    assert drawn_numbers(page)[2] == expected_numbers(a, b, k, cat)  # as first drawn: (3, 1), (1, 3)
    for name, start, stops in (("a", (3, 1), [(-2, 2), (-1.3, 0.7), (4.4, -3.9)]),
                               ("b", (1, 3), [(2.6, -2.2), (0.5, 0.1), (0, 0)])):
        box = steady_box(page, pad)  # where the handle is now: the page may still be laying out around the pad
        page.mouse.move(*handle_xy(box, start))
        page.mouse.down()
        for stop in stops:
            page.mouse.move(*handle_xy(box, stop), steps=3)  # dragged there, while the page reruns
            page.mouse.move(*handle_xy(still_box(page, pad), stop))  # and onto the point once the page is still
            a, b, shown = drawn_numbers(page)
            assert (a if name == "a" else b) == list(stop)
            assert shown == expected_numbers(a, b, k, cat), (a, b)
        page.mouse.up()
    assert drawn_numbers(page)[2][1] == cat["fnd.vec.zero"].format(which="b")  # b = 0: no angle, no cosine
    page.wait_for_function("() => new URLSearchParams(location.search).get('bx') === '0'", timeout=30_000)
    page.wait_for_function("() => new URLSearchParams(location.search).get('ax') === '4.4'", timeout=30_000)
    no_exception(page)


def test_the_cpu_sweep_draws_its_throughput_and_the_roofline(server, page):
    open_page(page, f"{server}/foundations?lang=zh&section=hardware&hw_max=256")
    page.locator(".st-key-fnd-hw_run button").click(timeout=60_000)
    # once the sweep is done: the roofline in place of the published peaks, and the throughput chart below it
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length === 2", timeout=120_000)
    roofline = eventually(lambda: shot(page, 0), timeout=120)
    assert share(roofline, INK, 40) > 0.002  # the roof, drawn in ink
    assert share(shot(page, 1), ORANGE, 40) > 0.001  # the 1-thread line of the throughput chart
    assert page.locator(".st-key-fnd-hw_run").count() == 0  # measured: nothing to press again
    no_exception(page)
