"""Accessibility in headless Chromium, checked with axe-core (the WCAG checker, pinned in package.json): every page (the
home page and every lab) in Chinese and English on a 1366x768 laptop has no serious or critical violation of WCAG 2 A
and AA, and declares its language in <html lang> (a screen reader picks its voice by it), also after the sidebar's
language switch and a page switch; the presenter view's alerts are readable; the keyboard's focus is visible.

Streamlit's own markup had two such violations, both fixed by the app (ui/page_a11y.js): every page said
<html lang="en">, and the sidebar's sectioned menu is an invalid list (axe's "list" and "listitem": each section's
<li>s sit in a <div> inside the <ul>). A bare Streamlit 1.67 app has the menu's, with nothing of ours (reported
upstream with it):

    import streamlit as st
    pages = {"": [st.Page(lambda: st.write("home"), title="Home", url_path="home", default=True)],
             "Section": [st.Page(lambda: st.write("a"), title="A", url_path="a"),
                         st.Page(lambda: st.write("b"), title="B", url_path="b")]}
    st.navigation(pages).run()
"""
import os
from pathlib import Path

import pytest

from browsertools import open_page, page_idle
from labs import LABS
from ui.i18n import catalogue
from ui.layout import HTML_LANG
from ui.sidebar import LANG_NAMES

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parent.parent
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"  # `npm ci` installs it (package.json)
LAPTOP = {"width": 1366, "height": 768}
PAGES = [""] + [lab.url_path for lab in LABS]  # "" is the home page
FAILS = ("serious", "critical")
# a library's markup the app cannot name: Vega-Lite draws an interval selection's brush (the optimiser lab's loss chart
# lets you drag a range of steps) as two rects with a graphics role and no name, and its BrushConfig has no aria
# property; the chart itself is named by its summary (ui.charts.altair_chart: description), its marks hidden (aria)
LIBRARY = {("svg-img-alt", "_brush_bg"): "Vega-Lite's interval brush", ("svg-img-alt", "_brush"): "the same"}
# axe over the whole document, WCAG 2 A and AA only; each violation as its rule, impact, and its elements with why
RUN_AXE = """async () => {
  const r = await axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa']},
                                     resultTypes: ['violations']});
  return r.violations.map((v) => ({id: v.id, impact: v.impact, nodes: v.nodes.map((n) => ({
    target: n.target.join(' '), why: (n.failureSummary || '').split('\\n').slice(1, 3).join(' ').trim()}))}));
}"""


@pytest.fixture(scope="module")
def axe() -> Path:
    if not AXE.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{AXE} is missing: .ci/run's `npm ci` should have installed axe-core (package.json)")
        pytest.skip(f"{AXE} is missing (npm ci)")
    return AXE


def wait_lang(page, lang: str) -> None:
    """Until <html lang> is `lang`'s (ui/page_a11y.js sets it once its component has loaded)."""
    page.wait_for_function("(want) => document.documentElement.lang === want", arg=HTML_LANG[lang], timeout=60_000)


def drawn(page) -> None:
    """The page's run is over and every element it drew has loaded (Streamlit shows a skeleton until then)."""
    page_idle(page)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=60_000)


def violations(page, axe: Path) -> list[str]:
    """axe's serious and critical violations on the page as it is now, one line per element."""
    page.add_script_tag(path=str(axe))
    return [f"{v['id']} ({v['impact']}) at {n['target']}: {n['why']}" for v in page.evaluate(RUN_AXE)
            if v["impact"] in FAILS for n in v["nodes"]
            if not any(v["id"] == rule and n["target"].endswith(end) for rule, end in LIBRARY)]


@pytest.mark.parametrize("lang", HTML_LANG)
@pytest.mark.parametrize("path", PAGES, ids=lambda p: p or "home")
def test_every_page_declares_its_language_and_passes_axe(server, page, axe, path, lang):
    page.set_viewport_size(LAPTOP)
    open_page(page, f"{server}/{path}?lang={lang}")
    wait_lang(page, lang)
    drawn(page)
    found = violations(page, axe)
    assert not found, f"{len(found)} serious or critical axe violations:\n" + "\n".join(found)


def test_the_language_switch_and_a_page_switch_keep_html_lang(server, page, axe):
    """zh → en → zh on a lab with choice boxes: <html lang> follows, and the boxes keep their choices (a box used to
    send its label of the other language back, which counted as a refused value: the dataset fell to the first)."""
    page.set_viewport_size(LAPTOP)
    open_page(page, f"{server}/classification?lang=zh&dataset=circle")
    wait_lang(page, "zh")
    drawn(page)
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text(LANG_NAMES["en"], exact=True).click()
    wait_lang(page, "en")
    page_idle(page)
    sidebar.get_by_text(LANG_NAMES["zh"], exact=True).click()
    wait_lang(page, "zh")
    page_idle(page)
    page.wait_for_url("**dataset=circle**")
    assert "invalid" not in page.locator('[data-testid="stMain"]').inner_text()
    assert page.locator('[data-testid="stException"]').count() == 0
    page.locator('[data-testid="stSidebarNav"]').get_by_text(catalogue("zh")["nav.regression"]).click()
    page.wait_for_url("**/regression**")
    drawn(page)
    assert page.evaluate("document.documentElement.lang") == HTML_LANG["zh"]
    found = violations(page, axe)  # the menu drawn again for the new page is still a valid list
    assert not found, "\n".join(found)


def test_the_presenter_views_alerts_are_readable_and_the_focus_is_visible(server, page, axe):
    """The presenter view (white text on black) with a refused URL value: its warning's text on the warning's light box
    passes axe's contrast check; the keyboard's focus has a visible outline."""
    page.set_viewport_size(LAPTOP)
    open_page(page, f"{server}/attention?lang=zh&present=1&d_model=7")  # 7 is no width the lab offers: a warning
    wait_lang(page, "zh")
    drawn(page)
    page.locator('[data-testid="stAlertContentWarning"]').first.wait_for()
    found = violations(page, axe)
    assert not found, "\n".join(found)
    page.locator('[data-testid="stMain"]').click(position={"x": 5, "y": 5})  # the keyboard starts on the page
    page.keyboard.press("Tab")
    ring = page.evaluate("""() => { const s = getComputedStyle(document.activeElement);
      return {tag: document.activeElement.tagName, style: s.outlineStyle, width: parseFloat(s.outlineWidth)}; }""")
    assert ring["tag"] != "BODY", "Tab reached no control"
    assert ring["style"] == "solid" and ring["width"] >= 2, f"no visible focus ring on the focused {ring}"
