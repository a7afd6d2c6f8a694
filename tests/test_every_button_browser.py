"""Every lab, in both languages, in a real browser: every button, toggle, section and expander pressed.

AppTest reruns the whole script on a click; a real browser reruns only the fragment the button is in.
Bugs that live in that difference (a fragment reading state a callback just deleted) are only seen
here. The buttons are found on the page, not listed: a new button is pressed without a new test.
Run controls are pressed in the states where they matter: while playing, after Pause, after Reset,
and after a run diverged. Any exception on the page, any error in the browser and any traceback in
the server's log fails the test, with the clicks that led to it.
"""
import re
import time
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Error as PlaywrightError

from browsertools import open_page
from labs import LABS
from ui.i18n import catalogue

pytestmark = pytest.mark.browser
EN = catalogue("en")

MAX_CLICKS = 100  # per page visit
# a lab's main switch (the URL parameter): Play of one view is another run than Play of the next (the
# train and the compare section of the attention lab), so run controls are pressed once per view;
# any other button once per page (the GPU lab's presets are the same buttons in each of its views)
VIEW_PARAMS = ("section", "view", "solver")
# what the user can press, outside the sidebar (whose language switch is tested elsewhere); the file
# uploaders' own "Browse" buttons open a file dialog and are left out. Marked and read in one go.
FIND = """() => {
  const sel = '[data-testid="stButton"] button, [data-testid="stDownloadButton"] button,'
    + ' button[data-testid="stPopoverButton"], [data-testid="stButtonGroup"] button, [data-testid="stCheckbox"] label,'
    + ' [data-testid="stExpander"] summary, button[role="tab"]';
  const out = [];
  document.querySelectorAll(sel).forEach((e, i) => {
    if (e.closest('[data-testid="stSidebar"], [data-testid="stFileUploaderDropzone"], [data-testid="stHeader"]'))
      return;
    const box = e.getBoundingClientRect();
    if (!box.width || !box.height || e.disabled || e.closest('[disabled]')) return;
    const md = e.querySelector('[data-testid="stMarkdownContainer"]');
    const text = (md ? md.innerText : e.innerText).trim().replace(/\\s+/g, ' ').slice(0, 60);
    const kind = e.closest('[data-testid="stButtonGroup"]') ? 'switch'
      : e.closest('[data-testid="stCheckbox"]') ? 'toggle' : e.tagName === 'SUMMARY' ? 'expander' : 'button';
    e.dataset.press = String(i);
    out.push([String(i), kind, text]);
  });
  return out;
}"""
# a traceback, or LAPACK complaining on the server's output (huge values reaching a solver)
SERVER_TROUBLE = re.compile(r"Traceback|had an illegal value")
# settings under which a live run diverges, and the start of the message that says so: the buttons are
# also pressed on a diverged run (the generalisation and attention labs' Adam rates cannot diverge)
DIVERGING = {
    "classification": ("lr=10&activation=relu&speed=10", "cls.diverged.blowup"),
    "regression": ("solver=gd&lr=10&degree=3&speed=20", "reg.diverged"),
    "optimizers": ("section=race&r_opts=sgd&r_sgd_lr=10", "opt.race.diverged"),  # the race on a real model
}


def run_labels(lang: str) -> dict[str, set[str]]:
    """The texts of every lab's Play, Pause, Step and Reset buttons in `lang`."""
    cat = catalogue(lang)
    return {name: {re.sub(r"\{.*?\}", "", v).strip() for k, v in cat.items() if k.endswith("." + name)}
            for name in ("play", "pause", "step", "reset")}


class Visit:
    """One page visit: clicks, waits for the app to settle, and records everything that went wrong."""

    def __init__(self, page, server_log, url: str, labels: dict[str, set[str]]):
        self.page, self.log, self.url, self.labels = page, server_log, url, labels
        self.run_texts = set().union(*labels.values())
        self.clicks: list[str] = []
        self.problems: list[str] = []
        page.on("pageerror", lambda e: self.problems.append(f"browser error: {e}"))
        server_log.new()
        open_page(page, url)
        self.settle()
        self.wait_rendered()

    def wait_rendered(self, timeout: float = 60.0) -> None:
        """Until the number of things to press has stayed the same for a second (a busy machine draws late)."""
        deadline, last, since = time.time() + timeout, -1, time.time()
        while time.time() < deadline:
            n = len(self.page.evaluate(FIND))
            if n != last:
                last, since = n, time.time()
            elif time.time() - since >= 1.0 and n > 1:
                return
            time.sleep(0.25)

    def settle(self, at_least: float = 0.3, at_most: float = 4.0) -> None:
        time.sleep(at_least)
        deadline = time.time() + at_most
        while time.time() < deadline and self.page.locator('[data-testid="stStatusWidget"]').count():
            time.sleep(0.1)
        self.check()

    def check(self) -> None:
        if self.page.locator('[data-testid="stException"]').count():
            text = self.page.locator('[data-testid="stException"]').first.inner_text()[:300]
            self.problems.append(f"exception on the page: {text}")
        log = self.log.new()
        if SERVER_TROUBLE.search(log):
            self.problems.append("server log: " + log[-1500:])
        assert not self.problems, f"{self.url}\nafter {' → '.join(self.clicks)}\n" + "\n".join(self.problems)

    def view(self) -> tuple:
        query = parse_qs(urlparse(self.page.url).query)
        return tuple(query.get(p, [""])[0] for p in VIEW_PARAMS)

    def candidates(self) -> list:
        """(signature, locator) of every visible, enabled thing to press, in the page's order."""
        view = self.view()
        return [((kind, text, view if text in self.run_texts else None), self.page.locator(f'[data-press="{i}"]'))
                for i, kind, text in self.page.evaluate(FIND)]

    def press(self, loc, name: str, settle: bool = True) -> bool:
        """Click; False when the element was redrawn away before the click landed (then nothing happened)."""
        try:
            popover = loc.evaluate("e => e.dataset.testid === 'stPopoverButton'")
            loc.scroll_into_view_if_needed(timeout=5000)
            loc.click(timeout=5000)
        except PlaywrightError:
            return False
        self.clicks.append(name)
        if settle:
            self.settle()
        if popover:
            self.page.keyboard.press("Escape")  # close it again: an open popover covers what is below it
        return True

    def button(self, labels: set[str]):
        """The first visible button whose text is one of `labels`, or None."""
        return next((loc for (kind, text, _), loc in self.candidates() if kind == "button" and text in labels), None)

    def run_sequence(self) -> None:
        """Play, then Step and Reset while playing, Play again, Pause, Step and Reset after Pause."""
        for name, wait in (("play", 1.5), ("step", 0), ("play", 1.0), ("reset", 0), ("play", 1.5), ("pause", 0.5),
                           ("step", 0), ("reset", 0), ("step", 0), ("reset", 0)):
            for _ in range(3):  # a live panel redraws its buttons; find them again if one went away
                loc = self.button(self.labels[name])
                if loc is None or self.press(loc, name):  # None: e.g. Play is disabled on a diverged run
                    break
            time.sleep(wait)
            self.check()

    def press_everything(self) -> int:
        """Press every button once per view: the page's own buttons first, the view switches last."""
        done: set = set()
        tries: dict = {}
        play = self.labels["play"]
        for _ in range(MAX_CLICKS):
            todo = [(sig, loc) for sig, loc in self.candidates() if sig not in done]
            if not todo:
                return len(done)
            # buttons, toggles and expanders before view switches (button groups), the lowest switch
            # first: its options change the least of the page
            switches = [c for c in todo if c[0][0] == "switch"]
            others = [c for c in todo if c[0][0] != "switch"]
            sig, loc = others[0] if others else switches[-1]
            if sig[1] in play:
                done.add(sig)
                self.run_sequence()
                done |= {s for s, _ in self.candidates() if s[1] in self.run_texts}
            elif self.press(loc, sig[1] or sig[0]) or tries.setdefault(sig, 0) >= 2:
                done.add(sig)
            else:
                tries[sig] += 1
        pytest.fail(f"{self.url}: more than {MAX_CLICKS} things to press; raise MAX_CLICKS if that is right")


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("lab", [lab.url_path for lab in LABS])
def test_every_button(server, server_log, page, lab, lang):
    visit = Visit(page, server_log, f"{server}/{lab}?lang={lang}", run_labels(lang))
    pressed = visit.press_everything()
    assert pressed >= 3, f"{lab}: only {pressed} things found to press"


@pytest.mark.parametrize("lab", sorted(DIVERGING))
def test_every_run_button_after_divergence(server, server_log, page, lab):
    query, message = DIVERGING[lab]
    visit = Visit(page, server_log, f"{server}/{lab}?lang=en&{query}", run_labels("en"))
    deadline = time.time() + 60
    while visit.button(visit.labels["play"]) is None and time.time() < deadline:  # the live panel is drawn last
        time.sleep(0.5)
    assert visit.press(visit.button(visit.labels["play"]), "play", settle=False)
    words = next(w.strip() for w in re.split(r"\{.*?\}", EN[message]) if w.strip())  # its first literal words
    page.get_by_text(words).first.wait_for(timeout=30_000)
    visit.check()
    visit.run_sequence()
    visit.press_everything()
