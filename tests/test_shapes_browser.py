"""The shape chain lab in headless Chromium: the flow diagram is drawn, with Q's path in red, and it follows
the widgets."""
import io

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from waits import eventually

from sim.plots.palette import rgb
from sim.plots.shapes import COLOURS, HIGHLIGHT
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
ZH, EN = catalogue("zh"), catalogue("en")
RED = rgb(HIGHLIGHT)  # the highlighted path
BLUE_FILL = rgb(COLOURS["matmul"][0])  # matrix-product boxes


def open_shapes(page, server, query):
    page.goto(f"{server}/shapes?{query}")
    page.wait_for_selector('[data-testid="stApp"]')
    page.wait_for_selector(".js-plotly-plot", timeout=60_000)


def wait_until_drawn(page, script: str, arg=None) -> None:
    """Streamlit draws a page top to bottom while the script runs: wait for the later part before reading it.
    A timeout is not raised here; the assertion after it says what is missing."""
    try:
        page.wait_for_function(script, arg=arg, timeout=30_000)
    except PlaywrightTimeout:
        pass


def share(pixels: np.ndarray, rgb: tuple[int, int, int], tol: int = 12) -> float:
    return float((np.abs(pixels - np.array(rgb)).max(axis=-1) <= tol).mean())


def flow_pixels(page) -> np.ndarray:
    chart = page.locator(".js-plotly-plot").first
    chart.scroll_into_view_if_needed()
    png = chart.screenshot()
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def drawn_flow(page) -> np.ndarray:
    """The flow diagram's pixels once Plotly has drawn it: Q's path in red, the matrix products' boxes."""
    pixels = flow_pixels(page)
    assert share(pixels, RED) > 0.001, "Q's path is drawn in red"
    assert share(pixels, BLUE_FILL) > 0.01, "the matrix-product boxes are drawn"
    return pixels


def test_flow_diagram_is_drawn_with_the_notes_chain(server, page):
    page.set_viewport_size({"width": 1400, "height": 2200})  # the whole diagram on screen
    open_shapes(page, server, "lang=en")
    page.get_by_text(EN["shp.title"]).first.wait_for()
    assert page.locator('[data-testid="stException"]').count() == 0
    pixels = eventually(lambda: drawn_flow(page))
    assert pixels.std() > 20
    wait_until_drawn(page, "() => document.querySelectorAll('[data-testid=\"stDataFrame\"]').length >= 4")
    body = page.locator('[data-testid="stMain"]').inner_text()
    assert "[2, 4, 5, 5]" in body and "[2, 5, 4, 2]" in body
    # the step table, the notes' embedding lookup, and the training-memory table with the article's 70 B example
    assert page.locator('[data-testid="stDataFrame"]').count() == 4


def test_typing_sizes_redraws_and_a_bad_combination_gets_a_message(server, page):
    page.set_viewport_size({"width": 1400, "height": 2200})
    open_shapes(page, server, "lang=en")
    before = eventually(lambda: drawn_flow(page))
    box = page.get_by_role("spinbutton", name=EN["shp.d_model"])
    box.fill("10")
    box.press("Enter")
    words = EN["shp.error.heads_divide"].split("}")[1].split("{")[0].strip()  # "heads cannot split d_model ="
    page.get_by_text(words).first.wait_for(timeout=30_000)
    assert page.locator('[data-testid="stException"]').count() == 0
    box = page.get_by_role("spinbutton", name=EN["shp.d_model"])
    box.fill("12")
    box.press("Enter")
    page.wait_for_function("() => document.body.innerText.includes('[2, 4, 5, 3]')", timeout=30_000)

    def redrawn():
        after = drawn_flow(page)
        assert before.shape != after.shape or np.abs(before - after).mean() > 0.01, "the diagram was redrawn"

    eventually(redrawn)


def test_chinese_page_with_gpt2_sizes(server, page):
    open_shapes(page, server, "lang=zh&batch=1&seq_len=1024&d_model=768&n_head=12&n_kv_head=4&d_ff=3072"
                              "&vocab_size=50257&n_layer=12")
    page.get_by_text(ZH["shp.title"]).first.wait_for()
    page.wait_for_function("() => document.body.innerText.includes('[1, 12, 1024, 1024]')", timeout=30_000)
    # K and V, 12 layers × 1024 tokens × (4 KV heads × d_h 64) × 4 bytes = 24 MiB; all 12 heads would need 3× that
    kv, mha = f"{2 * 12 * 1024 * 4 * 64 * 4 / 2**20:.1f} MiB", f"{2 * 12 * 1024 * 12 * 64 * 4 / 2**20:.1f} MiB"
    wait_until_drawn(page, "([title, mha]) => document.body.innerText.includes(title)"
                           " && document.body.innerText.includes(mha)", [ZH["shp.kv.title"], mha])
    body = page.locator('[data-testid="stMain"]').inner_text()
    assert ZH["shp.kv.title"] in body and kv in body and mha in body, "GQA: 4 of 12 KV heads"
    assert page.locator('[data-testid="stException"]').count() == 0
