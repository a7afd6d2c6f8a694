"""Helpers of the headless-Chromium tests: open a page and wait for it, read a canvas's pixels."""
import io

import numpy as np
from PIL import Image


def open_page(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector('[data-testid="stApp"]')
    page.wait_for_function("() => document.querySelectorAll('[data-testid=\"stElementContainer\"]').length > 3",
                           timeout=60_000)


def pixels(locator) -> np.ndarray:
    """RGB pixels (H, W, 3) of an element as it is on screen."""
    return np.asarray(Image.open(io.BytesIO(locator.screenshot())).convert("RGB")).astype(int)
