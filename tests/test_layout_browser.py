"""The figure-first layout in headless Chromium, every lab at its first section: on a laptop the stage (ui.layout) is
on the first screen with its figure beside its controls; on a phone the figure's column comes first at the screen's
width, nothing scrolls sideways, and every button of the app is at least 24x24 CSS px (WCAG 2.2's minimum target).

How much of each section's figure each screen shows is measured by ../shared/tools/measure_fold.py; this test holds
what must never break."""
import pytest

from browsertools import open_page
from labs import LABS
from ui.layout import STAGE_KEY

pytestmark = pytest.mark.browser
LAPTOP, PHONE = (1366, 768), (390, 844)
STAGE = f".st-key-{STAGE_KEY}"
# the stage's two columns, each's box; the widest content of the main area; buttons smaller than 24 px
READ = """(stage) => {
  const box = (e) => { const r = e.getBoundingClientRect(); return {top: r.top, left: r.left, width: r.width,
                                                                       height: r.height}; };
  const s = document.querySelector(stage);
  const cols = s ? [...s.querySelectorAll('[data-testid="stColumn"]')].filter((c) => c.parentElement.closest(
    '[data-testid="stColumn"]') === null).slice(0, 2).map(box) : [];
  const main = document.querySelector('[data-testid="stMain"]');
  const small = [...main.querySelectorAll('button')].filter((b) => {
    const r = b.getBoundingClientRect(), st = getComputedStyle(b);
    return r.width > 0 && r.height > 0 && st.visibility !== 'hidden' && st.opacity !== '0'
      && (r.width < 24 || r.height < 24);
  }).map((b) => (b.innerText || b.getAttribute('aria-label') || b.className).slice(0, 40));
  return {cols, scroll: main.scrollWidth - main.clientWidth, page: document.documentElement.scrollWidth - innerWidth,
          small, height: innerHeight, width: innerWidth};
}"""


def read(page, server, lab, size) -> dict:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_page(page, f"{server}/{lab.url_path}?lang=en")
    page.locator(STAGE).first.wait_for(timeout=60_000)
    page.wait_for_function("(s) => document.querySelectorAll(s + ' [data-testid=\"stColumn\"]').length >= 2",
                           arg=STAGE, timeout=30_000)
    return page.evaluate(READ, STAGE)


@pytest.mark.parametrize("lab", [lab for lab in LABS if lab.name != "classroom"], ids=lambda lab: lab.url_path)
def test_the_stage_is_on_the_first_screen_and_a_phone_shows_its_figure_first(server, page, lab):
    r = read(page, server, lab, LAPTOP)
    figure, controls = r["cols"]
    assert figure["top"] < 0.4 * r["height"], f"the stage starts {figure['top']:.0f} px down on a laptop"
    assert controls["left"] > figure["left"] and abs(controls["top"] - figure["top"]) < 2, "side by side"
    assert figure["width"] > 2 * controls["width"]

    r = read(page, server, lab, PHONE)
    figure, controls = r["cols"]
    assert figure["top"] < 0.5 * r["height"], f"the figure's column starts {figure['top']:.0f} px down on a phone"
    assert controls["top"] >= figure["top"] + figure["height"] - 1, "on a phone the controls follow the figure"
    assert figure["width"] >= 0.85 * r["width"]
    assert r["scroll"] <= 1 and r["page"] <= 1, f"the page scrolls sideways on a phone ({r['scroll']} px)"
    assert not r["small"], f"buttons smaller than 24x24 px on a phone: {r['small']}"
