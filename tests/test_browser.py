"""The real app in headless Chromium: pages render, the boundary is drawn and really moves."""
import re
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
from waits import eventually

from browsertools import click, no_exception, open_page, pause_stops, pixels, trains_on_screen
from ui.i18n import catalogue

pytestmark = pytest.mark.browser

ZH, EN = catalogue("zh"), catalogue("en")


def canvas_pixels(page, testid) -> np.ndarray:
    return pixels(page.locator(f'[data-testid="{testid}"]'))


def epoch(page) -> int:
    return int(re.sub(r"\D", "", page.locator(".lv-epoch").inner_text()) or 0)


@pytest.mark.parametrize("lang,cat", [("en", EN), ("zh", ZH)])
def test_home_page(server, page, lang, cat):
    open_page(page, f"{server}/?lang={lang}")
    page.get_by_text(cat["home.title"]).first.wait_for()
    no_exception(page)
    page.get_by_text(cat["nav.classification"]).first.wait_for()


def test_boundary_is_drawn_and_moves_while_training(server, page):
    open_page(page, f"{server}/classification?lang=en&dataset=xor&seed=1")
    boundary = page.locator('[data-testid="live-boundary"]')
    boundary.wait_for(timeout=60_000)

    def both_classes_drawn():
        still = pixels(boundary)
        orange = ((still[..., 0] > 200) & (still[..., 2] < 120)).mean()
        blue = ((still[..., 2] > 150) & (still[..., 0] < 80)).mean()
        assert orange > 0.001 and blue > 0.001, ("both classes' points are drawn", orange, blue)

    eventually(both_classes_drawn)
    no_exception(page)

    click(page, page.get_by_role("button", name=re.compile(EN["cls.play"])))
    page.wait_for_function("() => /[1-9]/.test(document.querySelector('.lv-epoch').textContent)", timeout=30_000)
    first_epoch = epoch(page)
    trains_on_screen(page, boundary)
    assert epoch(page) > first_epoch > 0
    paused = pause_stops(page, page.get_by_role("button", name=re.compile(EN["cls.pause"])))
    assert epoch(page) == paused, "the epoch on screen is the one the run stopped at"
    no_exception(page)


def test_classification_in_chinese_with_url_state(server, page):
    open_page(page, f"{server}/classification?lang=zh&dataset=spiral3&hidden=8,8,8&lr=0.1")
    page.get_by_text(ZH["cls.title"]).first.wait_for()
    page.wait_for_selector('[data-testid="live-network"]', timeout=60_000)
    no_exception(page)
    net = canvas_pixels(page, "live-network")
    assert net.std() > 10, "the network diagram is drawn"

    def url_keeps_the_settings():
        query = parse_qs(urlparse(page.url).query)
        assert "activation" in query, f"the app writes all its settings into the address bar: {page.url}"
        assert [query.get(k) for k in ("dataset", "hidden", "lr")] == [["spiral3"], ["8,8,8"], ["0.1"]], query

    eventually(url_keeps_the_settings)


def test_bad_url_value_gets_a_notice_not_a_traceback(server, page):
    open_page(page, f"{server}/classification?lang=en&lr=banana&n=-5")
    page.get_by_text("is not valid here").first.wait_for(timeout=30_000)
    no_exception(page)
