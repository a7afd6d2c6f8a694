"""What a screen reader gets of the live views, in headless Chromium: every canvas of a lab's main area is a named
picture, and each live view's polite live text follows its run. The classification lab is trained with the keyboard
alone (Tab to Play, Space) and read from that text: its epoch and losses are the view's."""
import re

import pytest

from browsertools import no_exception, open_page, page_idle, press, press_button, wait_live
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
MAIN = '[data-testid="stMain"]'
LIVE = f'{MAIN} [data-testid="live-text"]'

# The canvases of Streamlit's own tables (st.dataframe: Glide Data Grid draws the cells on a canvas, and keeps them as
# an accessible table inside it, its fallback content) are Streamlit's markup, not a figure of ours: counted apart.
# An Altair chart's canvas is the picture of its Vega element (role graphics-document), named by ui.charts with the
# chart's summary (the spec's description): named there.
STREAMLIT_TABLE = '[data-testid="stDataFrame"]'
UNNAMED = """() => [...document.querySelectorAll('[data-testid="stMain"] canvas')]
    .filter((c) => !c.closest('%s'))
    .filter((c) => !(c.getAttribute('aria-label') || '').trim() && !c.getAttribute('aria-labelledby'))
    .filter((c) => !(c.closest('[role="graphics-document"]')?.getAttribute('aria-label') || '').trim())
    .map((c) => c.dataset.testid || c.className)""".replace("%s", STREAMLIT_TABLE)
COUNT, NUMBER = r"([\d,]+)", r"(-?[\d.]+(?:e[-+]\d+)?|–)"  # an epoch "1,234"; a loss "0.314", "1.2e-4"


def names(page) -> dict[str, str]:
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('[data-testid="stMain"] canvas')]
        .map((c, i) => [c.dataset.testid || 'canvas-' + i, c.getAttribute('aria-label') || '']))""")


def live_pattern(lang: str) -> re.Pattern:
    """The classification lab's live text (cls.a11y.live) as a pattern: epoch, training and validation loss."""
    text = re.escape(catalogue(lang)["cls.a11y.live"])
    for name in ("epoch", "train", "val"):
        text = text.replace(re.escape("{" + name + "}"), COUNT if name == "epoch" else NUMBER)
    return re.compile(text.replace(re.escape("{acc}"), ".*"))


def tab_to(page, label: str, limit: int = 250) -> None:
    """Press Tab until the focus is on a button of the main area whose text has `label` (no mouse)."""
    focused = """(label) => { const b = document.activeElement;
        return !!b && b.tagName === 'BUTTON' && !!b.closest('[data-testid="stMain"]')
            && b.innerText.includes(label); }"""
    for _ in range(limit):
        if page.evaluate(focused, label):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"{label!r} not reached with {limit} Tabs")


def live_text(page) -> str:
    return page.locator(LIVE).first.text_content() or ""


def epoch_shown(page) -> int:
    return int(re.sub(r"\D", "", page.locator(f"{MAIN} .lv-epoch").text_content()))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_classification_is_named_and_trained_and_read_with_the_keyboard(server, page, lang):
    cat = catalogue(lang)
    page.set_viewport_size({"width": 1366, "height": 768})
    open_page(page, f"{server}/classification?lang={lang}&dataset=circle&hidden=4&speed=1")
    page.wait_for_selector(f'{MAIN} [data-testid="live-boundary"][aria-label]', timeout=60_000)
    page_idle(page)
    assert page.evaluate(UNNAMED) == []  # every canvas of the main area is named
    named = names(page)
    template = cat["cls.a11y.boundary.classification"]
    expected = (template.replace("{arch}", "2-4-1").replace("{dataset}", cat["cls.dataset.circle"])
                .replace("{epoch}", "0"))
    assert named["live-boundary"] == expected, named  # x₁, x₂; 4 neurons; P(class 1), at epoch 0, in the page's words
    assert page.locator(LIVE).count() == 1  # one live region per view
    assert page.locator(LIVE).first.get_attribute("aria-live") == "polite"
    pattern = live_pattern(lang)
    first = live_text(page)
    assert pattern.search(first), first  # paused at epoch 0, already said

    tab_to(page, cat["cls.play"])
    press(page, lambda: page.keyboard.press("Space"), "Space on Play")
    wait_live(page, "() => document.querySelector('.lv-status.playing')", what="playing after Space")
    heard = [first]
    for _ in range(40):  # about 8 s: the live text follows the run at most once a second
        page.wait_for_timeout(200)
        text = live_text(page)
        if text != heard[-1]:
            heard.append(text)
        if len(heard) >= 4:
            break
    epochs = [int(re.sub(r"\D", "", pattern.search(h).group(1))) for h in heard]
    assert len(heard) >= 3 and epochs == sorted(epochs) and epochs[-1] > 0, heard  # it changed while playing

    tab_to(page, cat["cls.pause"])
    press(page, lambda: page.keyboard.press("Space"), "Space on Pause")
    wait_live(page, "() => document.querySelector('.lv-status.paused')", what="paused after Space")

    def said_as_shown():  # paused: the live text says the frame on screen, at once
        m = pattern.search(live_text(page))
        return m is not None and int(re.sub(r"\D", "", m.group(1))) == epoch_shown(page)

    deadline = 0
    while not said_as_shown() and deadline < 50:
        page.wait_for_timeout(100)
        deadline += 1
    m = pattern.search(live_text(page))
    assert m and int(re.sub(r"\D", "", m.group(1))) == epoch_shown(page) > 0, (live_text(page), epoch_shown(page))
    shown = [float(x) for x in re.findall(r"\d+\.\d+", page.locator(f"{MAIN} .lv-loss").text_content())]
    heard_losses = [float(m.group(2)), float(m.group(3))]
    assert heard_losses == pytest.approx(shown, rel=0.01, abs=1e-3)  # the losses the view shows
    assert page.evaluate(UNNAMED) == []
    no_exception(page)


def test_the_optimiser_race_says_what_it_does_while_playing(server, page):
    cat = catalogue("en")
    page.set_viewport_size({"width": 1366, "height": 768})
    open_page(page, f"{server}/optimizers?lang=en&section=race&r_opts=sgd,adam&r_width=8&r_speed=4")
    page.wait_for_selector(f'{MAIN} [data-testid="live-panel-0"][aria-label]', timeout=60_000)
    page_idle(page)
    assert page.evaluate(UNNAMED) == []
    assert cat["opt.race.fig.loss_title"] in names(page)["live-panel-0"]
    before = live_text(page)
    press_button(page, cat["opt.race.play"])
    heard = [before]
    for _ in range(60):
        page.wait_for_timeout(200)
        text = live_text(page)
        if text != heard[-1]:
            heard.append(text)
        if len(heard) >= 3:
            break
    assert len(heard) >= 3, heard  # the text follows the race
    steps = [int(re.search(r"\d+", h).group()) for h in heard[1:]]
    assert steps == sorted(steps) and steps[-1] > 0, heard
    assert cat["opt.r_opts.adam"] in heard[-1] and cat["opt.r_opts.sgd"] in heard[-1], heard  # each racer's loss
    no_exception(page)
