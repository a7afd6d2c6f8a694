"""In the real browser: links cannot inject links or images, and oversized uploads never reach the server."""
import re
from urllib.parse import quote, urlparse

import pytest
from browsertools import open_page

from sim.core.upload import MAX_BYTES
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
EN = catalogue("en")


def test_url_values_cannot_inject_a_link_or_an_image(server, page):
    outside = []
    page.on("request", lambda r: outside.append(r.url) if urlparse(r.url).hostname == "evil.example" else None)
    link, image = "[Log in again](https://evil.example/x)", "![](https://evil.example/t.png)"
    open_page(page, f"{server}/classification?lang=en&dataset={quote(link)}&seed={quote(image)}")
    # both values are shown as typed (the notices are drawn, and with them any link or image they would make)
    page.locator('[data-testid="stAlert"]').filter(has_text="[Log in again](https://evil").first.wait_for()
    page.locator('[data-testid="stAlert"]').filter(has_text="![](https://evil").first.wait_for()
    assert page.locator('a[href*="evil.example"]').count() == 0
    assert page.locator('img[src*="evil.example"]').count() == 0
    assert not outside, outside


def test_a_csv_over_the_limit_is_refused_in_the_browser(server, server_log, page):
    uploads = []
    page.on("request", lambda r: uploads.append(r.url) if "upload_file" in r.url else None)
    open_page(page, f"{server}/classification?lang=en")
    page.get_by_text(EN["cls.upload"]).first.click()
    chooser = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    chooser.set_input_files(files=[{"name": "big.csv", "mimeType": "text/csv",
                                    "buffer": b"x1,x2,label\n" + b"1,2,0\n" * (MAX_BYTES // 6 + 1000)}])
    page.get_by_text(re.compile(r"must be 2\.0 ?MB or smaller|too large|exceeds", re.I)).first.wait_for(timeout=20_000)
    assert not uploads, uploads  # the browser refuses it in the same step as it would have sent it
    # the app never saw the file: its own "too large" message (which it shows when a file arrives) is absent
    assert page.get_by_text(EN["upload.too_large"].split("{")[0]).count() == 0
    assert page.locator('[data-testid="stException"]').count() == 0
    assert "Traceback" not in server_log.new()
