"""Show me the code in headless Chromium: pressing Code beside Copy link downloads the run's file, whose first lines
name the page's link (the one Copy link gives), on two labs."""
import pytest

from browsertools import no_exception, open_page, page_idle
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
EN, ZH = catalogue("en"), catalogue("zh")


def download_code(page, label: str) -> tuple[str, str]:
    """Press the Code button; the downloaded file's name and text."""
    button = page.get_by_role("button", name=label, exact=True).first
    button.wait_for(timeout=60_000)
    page_idle(page)
    with page.expect_download(timeout=30_000) as download:
        button.click()
    path = download.value.path()
    return download.value.suggested_filename, path.read_text(encoding="utf-8")


def copied_link(page, label: str) -> str:
    """The link in the Copy link box."""
    page.get_by_role("button", name=label).first.click()
    box = page.locator('[data-testid="stPopoverBody"] [data-testid="stCode"]').first
    box.wait_for(timeout=30_000)
    text = box.inner_text().strip()
    page.keyboard.press("Escape")
    return text


def test_code_downloads_the_classification_run_with_its_link(server, page):
    open_page(page, f"{server}/classification?lang=en&dataset=spiral&seed=3&hidden=6,6")
    name, text = download_code(page, EN["code.button"])
    head = "\n".join(text.splitlines()[:3])
    assert name == "classification_run.py"
    assert f"{server}/classification?" in head and "dataset=spiral" in head and "seed=3" in head
    assert "hidden=6,6" in head
    assert copied_link(page, EN["url.copy_link"]) in head  # the very link Copy link gives
    assert "import torch" in text
    no_exception(page)


def test_code_downloads_the_regression_run_in_chinese(server, page):
    open_page(page, f"{server}/regression?lang=zh&solver=gd&dataset=sine&degree=3&seed=7")
    name, text = download_code(page, ZH["code.button"])
    head = "\n".join(text.splitlines()[:3])
    assert name == "regression_run.py"
    assert f"{server}/regression?" in head and "lang=zh" in head and "dataset=sine" in head and "seed=7" in head
    assert "DEGREE, STANDARDIZE = 3, False" in text
    no_exception(page)
