"""In the real browser: no text from a user, a link or a file becomes a link, an image or formatting; nothing is
fetched from outside the app; oversized uploads never reach the server."""
import re
import time
from collections import Counter
from urllib.parse import quote, urlparse

import pytest
from hostile import HOSTILE, param_texts

from browsertools import open_more, open_page
from conftest import running_app
from labs import LABS
from sim.core.text import JOINER
from sim.core.upload import MAX_BYTES
from ui.i18n import LANGS, catalogue

pytestmark = pytest.mark.browser
EN = catalogue("en")
LOCAL = {"127.0.0.1", "localhost"}
# every attribute through which an element can make the browser fetch or go somewhere
OUTSIDE_JS = """() => {
  const out = [];
  for (const el of document.querySelectorAll('*')) {
    for (const name of ['href', 'src', 'xlink:href', 'srcset', 'action', 'poster', 'data']) {
      const v = el.getAttribute(name);
      if (!v) continue;
      for (const part of name === 'srcset' ? v.split(',').map(s => s.trim().split(' ')[0]) : [v]) {
        try {
          const u = new URL(part, location.href);
          const local = ['127.0.0.1', 'localhost'].includes(u.hostname);
          if (!local && !['data:', 'blob:', 'about:', 'javascript:'].includes(u.protocol))
            out.push(`<${el.tagName.toLowerCase()} ${name}="${v}">`);
        } catch (e) {}
      }
    }
  }
  return out;
}"""


def outside(url: str) -> bool:
    """A request that leaves this machine (data:, blob: and the like go nowhere)."""
    u = urlparse(url)
    return u.scheme not in ("data", "blob", "about", "chrome-extension") and u.hostname not in LOCAL


def recording(context) -> list[str]:
    """Every URL the pages of `context` request from outside the machine, from now on."""
    seen: list[str] = []
    context.on("request", lambda r: seen.append(r.url) if outside(r.url) else None)
    return seen


def outside_refs(page) -> list[str]:
    """Elements of the page that link to or load from another host."""
    return page.evaluate(OUTSIDE_JS)


SHOWS = f"m => document.body.innerText.replaceAll('{JOINER}', '').includes(m)"  # the page shows text m


def alerts(page) -> str:
    return " ".join(page.locator('[data-testid="stAlert"]').all_inner_texts()).replace(JOINER, "")


def test_url_values_cannot_inject_a_link_or_an_image(server, page):
    outside_requests = recording(page.context)
    link, image = "[Log in again](https://evil.example/x)", "![](https://evil.example/t.png)"
    open_page(page, f"{server}/classification?lang=en&dataset={quote(link)}&seed={quote(image)}")
    # both values are shown as typed (the notices are drawn, and with them any link or image they would make)
    page.locator('[data-testid="stAlert"]').filter(has_text="[Log in again](https://evil").first.wait_for()
    page.locator('[data-testid="stAlert"]').filter(has_text="![](https://evil").first.wait_for()
    assert page.locator('a[href*="evil.example"]').count() == 0
    assert page.locator('img[src*="evil.example"]').count() == 0
    assert not outside_refs(page)
    assert not outside_requests, outside_requests


# ---------- every catalogue text with hostile params, as Streamlit renders it ----------
@pytest.fixture(scope="module")
def catalogue_page(tmp_path_factory):
    """tests/catalogue_page.py served by its own Streamlit server; yields its base URL."""
    log = tmp_path_factory.mktemp("catalogue") / "streamlit.log"
    with log.open("w") as out, running_app(out, script="tests/catalogue_page.py") as (base, _):
        yield base


def rendered(page, url: str, n: int) -> list[dict]:
    """Each message of the catalogue page: its HTML elements (tag names, in order) and its text."""
    open_page(page, url)
    page.locator(".st-key-done").wait_for(timeout=120_000)
    page.wait_for_function(f"() => document.querySelectorAll('[data-testid=\"stMarkdownContainer\"]').length >= {n}",
                           timeout=60_000)
    time.sleep(1)  # maths and emoji are rendered by plug-ins loaded on demand
    return page.evaluate("""() => [...document.querySelectorAll('[data-testid="stMarkdownContainer"]')].map(m => ({
        tags: [...m.querySelectorAll('*')].map(e => e.tagName.toLowerCase()).join(' '),
        text: m.innerText}))""")


def test_no_param_of_any_catalogue_text_becomes_markup(catalogue_page, page):
    """Each of the 316 texts with params, in both languages, filled with each hostile value: no HTML element that
    the text filled with a harmless "x" does not have, the value shown as the characters it is, and nothing
    fetched from outside. (Fewer may be: in a Chinese text "**{v}**是", a value ending in punctuation leaves the
    ** as typed, CommonMark's rule for emphasis next to punctuation and letters.)"""
    outside_requests = recording(page.context)
    keys = [(lang, key) for lang in LANGS for key in param_texts(catalogue(lang))]
    n = len(keys) + 1  # and the "done" mark
    benign = rendered(page, catalogue_page, n)
    assert len(benign) == n
    bad = []
    for i, value in enumerate(HOSTILE):
        shown = rendered(page, f"{catalogue_page}/?v={i}", n)
        assert len(shown) == n
        # the last markdown is the "done" mark, which has no key
        for (lang, key), b, h in zip(keys, benign[:-1], shown[:-1], strict=True):
            added = Counter(h["tags"].split()) - Counter(b["tags"].split())
            if added:
                bad.append(f"{lang} {key} with {value!r}: {dict(added)} more than with 'x' ({h['tags']!r})")
            elif " ".join(value.split()) not in " ".join(h["text"].replace(JOINER, "").split()):
                bad.append(f"{lang} {key} with {value!r}: shows {h['text'][:160]!r}")
        assert not outside_refs(page), (value, outside_refs(page)[:5])
    assert not bad, f"{len(bad)} texts turned a param into markup, e.g.\n" + "\n".join(bad[:12])
    assert not outside_requests, outside_requests


# ---------- the classroom: class codes, shared links and typed questions ----------
CODES = ("[a](//ev.il)", "![](//e.vil)", ":red[XXXXX]")  # at most 12 characters, as the field takes


def body_text(page) -> str:
    return page.evaluate("() => document.body.innerText").replace(JOINER, "")


def test_bad_class_codes_are_shown_as_typed(server, browser):
    """Typed into "Class code", or in a shared link's ?class=: the clear message, with the code as its characters."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    outside_requests = recording(ctx)
    tail = EN["room.problem.bad_code"].split("}", 1)[1]  # the message after the code
    try:
        page = ctx.new_page()
        for raw in CODES:
            open_page(page, f"{server}/classroom?lang=en")
            field = page.locator(".st-key-room-code_in input")
            field.fill(raw)
            field.press("Enter")
            time.sleep(0.5)
            page.locator(".st-key-room-join_btn button").click()
            page.wait_for_function(SHOWS, arg=tail, timeout=30_000)
            assert not outside_refs(page), outside_refs(page)
            assert EN["room.problem.bad_code"].format(code=raw) in alerts(page)
        for raw in ("[a](//ev.il)", "![](//e.vil/x.png)"):
            open_page(page, f"{server}/classification?lang=en&class={quote(raw)}")
            page.wait_for_function(SHOWS, arg=tail, timeout=30_000)
            assert not outside_refs(page), outside_refs(page)
            assert EN["room.problem.bad_code"].format(code=raw[:12]) in alerts(page)
        time.sleep(1)
        assert not outside_requests, outside_requests
    finally:
        ctx.close()


QUESTION = "![](//e.vil/q.png) [a](//ev.il) :red[Q] <img src=//e.vil/h.png>"
OPTIONS = ("![](//e.vil/o.png)", "[b](//ev.il) **B**")


def test_a_typed_question_reaches_teacher_and_students_as_typed(server, browser):
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(2)]
    outside_requests = [recording(c) for c in contexts]
    try:
        teacher, student = (c.new_page() for c in contexts)
        open_page(teacher, f"{server}/classroom?lang=en")
        teacher.get_by_role("button", name=EN["room.start"]).click()
        big = teacher.locator('[data-testid="room-big"]').first
        big.wait_for(timeout=30_000)
        code = big.inner_text().strip()
        teacher.locator(".st-key-room-own_q input").fill(QUESTION)
        teacher.locator(".st-key-room-own_q input").press("Enter")
        teacher.locator(".st-key-room-own_opts textarea").fill("\n".join(OPTIONS))
        teacher.locator(".st-key-room-own_opts textarea").press("Control+Enter")
        time.sleep(0.5)
        teacher.locator(".st-key-room-pose_own button").click()
        teacher.wait_for_function(SHOWS, arg=EN["room.answers"].format(n=0), timeout=30_000)  # the question is open
        open_page(student, f"{server}/classroom?lang=en&class={code}")
        student.locator(".st-key-room-opt-1 button").wait_for(timeout=30_000)
        for page in (teacher, student):  # the teacher's heading; the student's projector text and answer buttons
            page.wait_for_function(SHOWS, arg=QUESTION, timeout=30_000)  # the buttons may be drawn before the text
            assert not outside_refs(page), outside_refs(page)
        assert all(option in body_text(student) for option in OPTIONS)
        student.locator(".st-key-room-opt-1 button").click()
        student.wait_for_function(SHOWS, arg=EN["room.your_answer"].format(a=OPTIONS[1]), timeout=15_000)
        time.sleep(2)  # the teacher's histogram refreshes
        for page in (teacher, student):
            assert not outside_refs(page), outside_refs(page)
            assert page.locator('[data-testid="stMain"] strong').filter(has_text="B").count() == 0
        assert not any(outside_requests), outside_requests
    finally:
        for c in contexts:
            c.close()


# ---------- a lab: an uploaded file's header and cells in messages and figures ----------
def test_an_uploaded_files_names_stay_text_in_messages_and_figures(server, page):
    outside_requests = recording(page.context)
    open_page(page, f"{server}/regression?lang=en")
    open_more(page)  # the upload box sits under More settings
    page.get_by_text(EN["reg.upload"]).first.click()
    chooser = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    bad = "![](//e.vil/v.png)"
    chooser.set_input_files(files=[{"name": "bad.csv", "mimeType": "text/csv",
                                    "buffer": f"x,y\n1,2\n{bad},3\n".encode() + b"2,4\n" * 10}])
    page.wait_for_function("m => document.body.innerText.includes(m)", arg=bad, timeout=30_000)
    header = ("[a](//ev.il)", "<b>![](//e.vil/c.png)</b>")
    rows = "\n".join(f"{40 + 3 * i},{(40 + 3 * i) * 1.5 + (i * 7) % 5}" for i in range(30))
    chooser.set_input_files(files=[{"name": "good.csv", "mimeType": "text/csv",
                                    "buffer": (",".join(header) + "\n" + rows).encode()}])
    page.wait_for_function("m => document.body.innerText.includes(m)", arg=header[1], timeout=30_000)
    time.sleep(2)  # the figures redraw with the file's names
    plots = " ".join(page.locator(".js-plotly-plot").all_inner_texts())
    assert header[0] in plots and header[1] in plots  # the axis titles show the names as typed
    assert not outside_refs(page), outside_refs(page)
    assert not outside_requests, outside_requests


# ---------- nothing is fetched from outside ----------
def test_a_tour_of_every_page_fetches_nothing_from_outside(server, browser):
    """Home, every lab and a started class, in both languages: every request the browser makes stays on this
    machine (no web fonts, icons, scripts, images or usage statistics from anywhere else)."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    outside_requests = recording(ctx)
    try:
        page = ctx.new_page()
        for lang in LANGS:
            for path in ["", *(lab.url_path for lab in LABS)]:
                open_page(page, f"{server}/{path}?lang={lang}")
                page.wait_for_load_state("networkidle")
                assert not outside_refs(page), (path, outside_refs(page))
        page.get_by_role("button", name=catalogue(LANGS[-1])["room.start"]).click()
        page.locator('img[src*="/media/"]').first.wait_for(timeout=30_000)  # the QR code, from the app itself
        page.wait_for_load_state("networkidle")
        assert not outside_refs(page), outside_refs(page)
        assert page.evaluate("() => document.querySelector('link[rel=\"shortcut icon\"]').href").startswith("data:")
        assert not outside_requests, sorted(set(outside_requests))
    finally:
        ctx.close()


def test_a_csv_over_the_limit_is_refused_in_the_browser(server, server_log, page):
    uploads = []
    page.on("request", lambda r: uploads.append(r.url) if "upload_file" in r.url else None)
    open_page(page, f"{server}/classification?lang=en")
    open_more(page)  # the upload box sits under More settings
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
