"""The real app in headless Chromium: pages render, the boundary is drawn and really moves."""
import re
import time

import numpy as np
import pytest

from browsertools import open_page, pixels
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
    assert page.locator('[data-testid="stException"]').count() == 0
    page.get_by_text(cat["nav.classification"]).first.wait_for()


def test_boundary_is_drawn_and_moves_while_training(server, page):
    open_page(page, f"{server}/classification?lang=en&dataset=xor&seed=1")
    page.wait_for_selector('[data-testid="live-boundary"]', timeout=60_000)
    time.sleep(0.5)
    still = canvas_pixels(page, "live-boundary")
    orange = ((still[..., 0] > 200) & (still[..., 2] < 120)).mean()
    blue = ((still[..., 2] > 150) & (still[..., 0] < 80)).mean()
    assert orange > 0.001 and blue > 0.001, "both classes' points are drawn"
    assert page.locator('[data-testid="stException"]').count() == 0

    page.get_by_role("button", name=re.compile(EN["cls.play"])).click()
    page.wait_for_function("() => /[1-9]/.test(document.querySelector('.lv-epoch').textContent)", timeout=30_000)
    time.sleep(2)
    first_epoch, a = epoch(page), canvas_pixels(page, "live-boundary")
    time.sleep(1.5)
    later_epoch, b = epoch(page), canvas_pixels(page, "live-boundary")
    assert later_epoch > first_epoch > 0
    assert np.abs(a - b).mean() > 0.05, "the boundary picture changed on screen"

    page.get_by_role("button", name=re.compile(EN["cls.pause"])).click()
    time.sleep(1.5)
    paused = epoch(page)
    time.sleep(1.0)
    assert epoch(page) == paused, "Pause stops training"
    assert page.locator('[data-testid="stException"]').count() == 0


def test_classification_in_chinese_with_url_state(server, page):
    open_page(page, f"{server}/classification?lang=zh&dataset=spiral3&hidden=8,8,8&lr=0.1")
    page.get_by_text(ZH["cls.title"]).first.wait_for()
    page.wait_for_selector('[data-testid="live-network"]', timeout=60_000)
    assert page.locator('[data-testid="stException"]').count() == 0
    net = canvas_pixels(page, "live-network")
    assert net.std() > 10, "the network diagram is drawn"
    assert "spiral3" in page.url and "hidden=8%2C8%2C8" in page.url or "hidden=8,8,8" in page.url


def test_bad_url_value_gets_a_notice_not_a_traceback(server, page):
    open_page(page, f"{server}/classification?lang=en&lr=banana&n=-5")
    page.get_by_text("is not valid here").first.wait_for(timeout=30_000)
    assert page.locator('[data-testid="stException"]').count() == 0
