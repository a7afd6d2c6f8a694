"""The presenter view in headless Chromium: whole control blocks behind one wide button, and the → / r shortcuts.

(Type sizes, hidden controls and space Play/Pause are in tests/test_classroom_browser.py.)"""
import pytest
from playwright.sync_api import Error as PlaywrightError

from browsertools import open_page, page_idle, page_state, press, wait_live
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
EN = catalogue("en")
EPOCH = "parseInt(document.querySelector('.lv-epoch').textContent.replace(/\\D/g, '') || '0')"


def visible(page, text: str) -> bool:
    return any(el.is_visible() for el in page.get_by_text(text, exact=True).all())


def test_controls_fold_as_blocks_and_arrow_steps_and_r_resets(server, page):
    page.set_viewport_size({"width": 1600, "height": 1000})
    open_page(page, f"{server}/classification?lang=en&present=1")
    play = page.get_by_role("button", name=EN["cls.play"])
    play.first.wait_for(timeout=60_000)
    page.wait_for_selector(".lv-epoch", timeout=60_000)
    # a control's caption goes with it: not on the projected page until the controls are opened
    caption = EN["cls.weight_decay_off"]
    assert not visible(page, caption) and not visible(page, EN["cls.data"])
    page.get_by_role("button", name=EN["present.controls"]).click()
    page.get_by_text(caption).first.wait_for(state="visible", timeout=10_000)
    width = page.evaluate(
        "() => document.querySelector('[data-testid=\"stPopoverBody\"]').getBoundingClientRect().width")
    assert width > 0.8 * 1600, width  # wide enough for the rows of controls to keep their columns
    assert visible(page, EN["cls.data"])
    page.keyboard.press("Escape")
    page.get_by_text(caption).first.wait_for(state="hidden", timeout=10_000)

    page.locator("h1").first.click()  # the page has the focus, not a widget
    assert page.evaluate(f"() => {EPOCH}") == 0
    page_idle(page)
    press(page, lambda: page.keyboard.press("ArrowRight"), "→")  # → is Step: the epoch grows, nothing keeps running
    page.wait_for_function(f"() => {EPOCH} > 0", timeout=20_000)
    assert page.get_by_role("button", name=EN["cls.pause"]).count() == 0
    page_idle(page)
    press(page, lambda: page.keyboard.press("ArrowRight"), "→ (Step)")
    stepped = page.evaluate(f"() => {EPOCH}")
    page_idle(page)
    press(page, lambda: page.keyboard.press(" "), "space (Play)")  # space runs ...
    page.wait_for_function(f"() => {EPOCH} > {stepped}", timeout=20_000)
    page_idle(page)
    press(page, lambda: page.keyboard.press("r"), "r (Reset)")  # ... and r resets, from a run too
    wait_live(page, f"() => {EPOCH} == 0", None, 20_000, "r resets")
    try:
        play.first.wait_for(timeout=20_000)
    except PlaywrightError:
        raise AssertionError(f"Play is back after r: {page_state(page)}") from None
    assert page.locator('[data-testid="stException"]').count() == 0
