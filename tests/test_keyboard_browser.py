"""The keyboard and reduced motion in headless Chromium: the foundations lab's vector pad is reached with Tab and its
points move with the arrow keys (the server's values follow, as after a drag); the presenter view's shortcuts leave
a focused pad alone and work elsewhere; with prefers-reduced-motion the GPU lab's animation moves only when asked,
and draws each step without the tiles' trips."""
import pytest
from waits import stays

from browsertools import no_exception, open_more, open_page, page_idle
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
EN = catalogue("en")
PAD = '[data-testid="vector-pad"]'
ON_PAD = f"() => document.activeElement === document.querySelector('{PAD} canvas')"


def url_values(page) -> dict[str, float]:
    """The vectors' coordinates in the address bar (the server writes them: ui.urlstate.set_values)."""
    return page.evaluate("() => Object.fromEntries(['ax', 'ay', 'bx', 'by'].map("
                         "(k) => [k, +new URLSearchParams(location.search).get(k)]))")


def wait_url(page, **want: float) -> None:
    page.wait_for_function("want => Object.entries(want).every(([k, v]) => "
                           "+new URLSearchParams(location.search).get(k) === v)", arg=want, timeout=30_000)


def tab_to_pad(page, most: int = 120) -> int:
    """Press Tab until the pad has the focus; how many presses it took."""
    for n in range(1, most + 1):
        page.keyboard.press("Tab")
        if page.evaluate(ON_PAD):
            return n
    raise AssertionError(f"the pad is not reached with {most} presses of Tab")


def slider_value(page, label: str) -> float:
    """The value of the slider labelled `label`, as the server rendered it."""
    slider = page.locator('[data-testid="stSlider"]').filter(has_text=label).locator('input[type="range"]')
    return float(slider.get_attribute("value"))


def test_the_vector_pad_moves_with_the_arrow_keys_and_the_server_follows(server, page):
    open_page(page, f"{server}/foundations?lang=en&section=vectors&ax=3&ay=1&bx=1&by=3")
    page.locator(f"{PAD} canvas").wait_for(timeout=60_000)
    page_idle(page)
    tab_to_pad(page)
    ring = page.evaluate(f"() => {{ const s = getComputedStyle(document.querySelector('{PAD} canvas'));"
                         " return [s.outlineStyle, parseFloat(s.outlineWidth)]; }")
    assert ring[0] != "none" and ring[1] >= 2, f"a visible focus ring: {ring}"
    assert page.get_attribute(PAD, "data-selected") == "a"  # a moves first
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")  # two grid steps of 0.1
    page.keyboard.press("Shift+ArrowUp")  # one unit
    wait_url(page, ax=3.2, ay=2)
    assert url_values(page) == {"ax": 3.2, "ay": 2, "bx": 1, "by": 3}
    page.keyboard.press("b")  # now b
    page.keyboard.press("ArrowDown")
    wait_url(page, by=2.9)
    assert url_values(page) == {"ax": 3.2, "ay": 2, "bx": 1, "by": 2.9}
    assert page.get_attribute(PAD, "data-selected") == "b" and page.evaluate(ON_PAD)
    page.keyboard.press("Enter")  # Enter switches back to a
    assert page.get_attribute(PAD, "data-selected") == "a"
    page_idle(page)
    open_more(page)  # the sliders the server drew from the new values
    assert [slider_value(page, EN[f"fnd.{k}"]) for k in ("ax", "ay", "bx", "by")] == [3.2, 2, 1, 2.9]
    no_exception(page)


def test_the_presenter_keys_leave_a_focused_pad_alone(server, page):
    """→ and space press a live view's Step and Play unless the pad has the focus: then they move and switch its
    points. (The vectors section has no live view: a stand-in for its buttons counts the presses.)"""
    open_page(page, f"{server}/foundations?lang=en&section=vectors&ax=3&ay=1&bx=1&by=3&present=1")
    pad = page.locator(f"{PAD} canvas")
    pad.wait_for(timeout=60_000)
    page_idle(page)
    page.evaluate("""() => { window.__pressed = [];
        for (const kind of ['play', 'step']) {
            const box = document.createElement('div'), b = document.createElement('button');
            box.className = 'st-key-standin-' + kind; b.onclick = () => window.__pressed.push(kind);
            box.appendChild(b); document.body.prepend(box);
        } }""")
    pad.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Space")  # switches the pad to b
    wait_url(page, ax=3.1)
    assert page.evaluate("() => window.__pressed") == []
    assert page.get_attribute(PAD, "data-selected") == "b"
    page.locator("h1").first.click()  # the page has the focus, not the pad
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Space")
    assert page.evaluate("() => window.__pressed") == ["step", "play"]
    assert url_values(page)["ax"] == 3.1 and url_values(page)["bx"] == 1
    no_exception(page)


ANIM, PLAY, STEP = '[data-testid="memsim-anim"]', '[data-testid="memsim-play"]', '[data-testid="memsim-step"]'


def step_and_frames(page) -> tuple[int, int]:
    return page.evaluate(f"() => [+document.querySelector('{ANIM}').dataset.step, (window.__mlsimLive || {{}}).frames]")


def test_with_reduced_motion_the_animation_waits_for_play_and_steps_without_trips(server, browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, reduced_motion="reduce")
    try:
        page = ctx.new_page()
        assert page.evaluate("() => matchMedia('(prefers-reduced-motion: reduce)').matches")
        open_page(page, f"{server}/gpu?lang=en&view=animate&N=256&algo=tiled&speed=5")
        page.wait_for_function(f"() => document.querySelector('{ANIM}')?.dataset.step === '0'", timeout=60_000)
        page.locator(ANIM).scroll_into_view_if_needed()
        page_idle(page)  # a rerun still drawing the page would mount the animation again, and paint it once more
        step0, frames0 = stays(lambda: step_and_frames(page), 2.0, "nothing moves before a press")
        assert step0 == 0
        page.click(STEP)  # a step is drawn at once, as it ends: one frame, no tile on its way (else ~25 frames)
        page.wait_for_function(f"() => document.querySelector('{ANIM}').dataset.step === '1'", timeout=10_000)
        step1, frames1 = stays(lambda: step_and_frames(page), 1.0, "a step is one picture")
        assert step1 == 1 and frames1 - frames0 == 1, (frames0, frames1)
        page.click(PLAY)  # Play moves it: one picture a step
        page.wait_for_function(f"() => +document.querySelector('{ANIM}').dataset.step >= 5", timeout=30_000)
        page.click(PLAY)
        steps, frames = stays(lambda: step_and_frames(page), 1.0, "Pause stops it")
        assert steps >= 5 and frames - frames1 <= steps - step1 + 1, (steps, frames, step1, frames1)
        assert page.inner_text(PLAY) == EN["gpu.anim.play"]
        no_exception(page)
    finally:
        ctx.close()
