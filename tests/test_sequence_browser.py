"""The sequence-models lab in headless Chromium: the race plays on screen (the accuracy-by-distance panel moves),
Pause stops it, Step moves it on by a tick of every model and Reset takes it back to step 0; the why section's
figures are redrawn at the new step; the sparse masks change with the window slider; the Mamba section draws its
table and both measured figures (Chinese); the trained window plays, pauses and steps under the masks; the encoder and
decoder train on screen and answer the user's blank (a bad one refused in Chinese)."""
import re

import numpy as np
import pytest
from waits import eventually

from browsertools import live_stats, no_exception, open_page, pause_stops, pixels, press_button, trains_on_screen
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
EN, ZH = catalogue("en"), catalogue("zh")
PANEL = '[data-testid="live-panel-0"]'  # accuracy against distance


def epoch(page) -> int:
    return live_stats(page).get("epoch", -1)


def test_the_race_plays_pauses_steps_and_resets(server, page):
    page.set_viewport_size({"width": 1400, "height": 1300})
    open_page(page, f"{server}/sequence?lang=en&section=memory&m_distance=16&m_hidden=32&m_speed=10")
    page.wait_for_selector(PANEL, timeout=60_000)
    panel = page.locator(PANEL)
    start = pixels(panel)
    press_button(page, EN["seq.play"])
    page.wait_for_function("() => (window.__mlsimLive || {}).epoch > 30", timeout=60_000)
    trains_on_screen(page, panel, change=0.02)
    stopped = pause_stops(page, page.get_by_role("button", name=re.compile(EN["seq.pause"])).first)
    press_button(page, EN["seq.step"].split("(")[0].strip())
    page.wait_for_function("s => (window.__mlsimLive || {}).epoch === s + 10", arg=stopped, timeout=30_000)
    press_button(page, EN["seq.reset"])
    page.wait_for_function("() => (window.__mlsimLive || {}).epoch === 0", timeout=30_000)

    def back_at_the_start():
        assert np.abs(pixels(panel) - start).mean() < 0.5
    eventually(back_at_the_start)
    no_exception(page)


def plotly(page, i: int):
    page.wait_for_function(f"() => document.querySelectorAll('.js-plotly-plot').length > {i}", timeout=60_000)
    fig = page.locator(".js-plotly-plot").nth(i)
    fig.scroll_into_view_if_needed()
    return fig


def test_the_why_figures_are_redrawn_at_the_next_step(server, page):
    page.set_viewport_size({"width": 1400, "height": 1300})
    open_page(page, f"{server}/sequence?lang=zh&section=why&m_distance=12&m_hidden=16&m_speed=10")
    fig = plotly(page, 0)
    page.wait_for_timeout(1000)
    before = pixels(fig)
    for _ in range(3):
        press_button(page, ZH["seq.step"].split("（")[0])
        page.wait_for_timeout(1500)

    def redrawn():
        assert np.abs(pixels(plotly(page, 0)) - before).mean() > 0.2
    eventually(redrawn, 60)
    assert page.get_by_text(ZH["seq.why.at_step"].format(step=120, per_model=30)).count()
    no_exception(page)


def test_the_masks_follow_the_window_slider(server, page):
    open_page(page, f"{server}/sequence?lang=en&section=sparse&s_T=64&s_w=3")
    fig = plotly(page, 0)
    page.wait_for_timeout(1000)
    before = pixels(fig)
    thumb = page.locator('.st-key-seq-s_w input[type="range"]')
    thumb.focus()
    for _ in range(4):
        thumb.press("ArrowRight")
    page.wait_for_function("() => new URL(location.href).searchParams.get('s_w') === '7'", timeout=30_000)

    def wider():
        assert np.abs(pixels(plotly(page, 0)) - before).mean() > 0.5
    eventually(wider, 60)
    assert page.get_by_text(f"{masks_share(64, 7):.1%} of T²").count()
    no_exception(page)


def masks_share(T: int, w: int) -> float:
    from sim.sequence.masks import share_computed, window

    return share_computed(window(T, w))


def test_the_mamba_section_draws_its_table_and_figures_in_chinese(server, page):
    open_page(page, f"{server}/sequence?lang=zh&section=mamba&z_longest=512")
    page.get_by_text(ZH["seq.mb.intro"][:12]).first.wait_for(timeout=60_000)
    page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=60_000)
    for i in (0, 1):
        fig = plotly(page, i)
        eventually(lambda fig=fig: np.testing.assert_array_less(0.01, (pixels(fig).std(axis=-1) > 20).mean()))
    assert page.get_by_text(ZH["seq.mb.fig.title"]).count()
    no_exception(page)


def test_the_trained_window_plays_and_steps_under_the_masks(server, page):
    page.set_viewport_size({"width": 1400, "height": 1300})
    open_page(page, f"{server}/sequence?lang=en&section=sparse&w_distance=16&w_window=4&w_layers=1&w_speed=10")
    page.get_by_text(EN["seq.win.title"]).first.wait_for(timeout=60_000)
    page.wait_for_selector(PANEL, timeout=60_000)
    panel = page.locator(PANEL)
    panel.scroll_into_view_if_needed()
    press_button(page, EN["seq.play"])
    page.wait_for_function("() => (window.__mlsimLive || {}).epoch > 20", timeout=60_000)
    trains_on_screen(page, panel, change=0.02)
    stopped = pause_stops(page, page.get_by_role("button", name=re.compile(EN["seq.pause"])).first)
    press_button(page, EN["seq.step"].split("(")[0].strip())
    page.wait_for_function("s => (window.__mlsimLive || {}).epoch === s + 10", arg=stopped, timeout=30_000)
    assert page.get_by_text(EN["seq.win.guide"].format(reach=4)).count()
    no_exception(page)


def test_the_encoder_and_decoder_train_and_answer_the_users_text(server, page):
    page.set_viewport_size({"width": 1400, "height": 1300})
    open_page(page, f"{server}/sequence?lang=zh&section=encdec&e_text=zh&e_layers=1&e_width=16&e_speed=10")
    page.wait_for_selector('[data-testid="live-panel-0"]', timeout=60_000)
    panel = page.locator('[data-testid="live-panel-0"]')
    panel.scroll_into_view_if_needed()
    press_button(page, ZH["seq.play"])
    page.wait_for_function("() => (window.__mlsimLive || {}).epoch > 20", timeout=60_000)
    trains_on_screen(page, panel, change=0.02)
    pause_stops(page, page.get_by_role("button", name=re.compile(ZH["seq.pause"])).first)
    box = page.locator(".st-key-seq-ed-blank-zh input")
    box.fill("the cat s_t")
    box.press("Enter")
    page.get_by_text(ZH["seq.ed.bad_chars"].split("{chars}")[0]).first.wait_for(timeout=30_000)
    box.fill("猫追_")
    box.press("Enter")
    page.get_by_text(ZH["seq.ed.filled"].split("{model}")[1].split("{text}")[0] + "猫追").first.wait_for(
        timeout=30_000)
    no_exception(page)
