"""Every lab in a real browser: every button, toggle, section and expander pressed, and every view in the other
language read for its labels.

AppTest reruns the whole script on a click; a real browser reruns only the fragment the button is in.
Bugs that live in that difference (a fragment reading state a callback just deleted) are only seen
here. The buttons are found on the page, not listed: a new button is pressed without a new test.
Run controls are pressed in the states where they matter: while playing, after Pause, after Reset,
and after a run diverged. Any exception on the page, any error in the browser, any traceback in
the server's log and any text missing from the catalogue (ui.i18n logs it) fails the test, with the
clicks that led to it.

Each lab is pressed through in one language, the labs alternating between Chinese and English; the
other language's pass switches through every view of the lab and reads its labels. The code behind a
button is the same in both languages (the catalogues are checked key for key by tests/test_i18n.py),
so pressing everything twice found nothing once more.
"""
import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from waits import wait_until

from browsertools import open_page
from labs import LABS
from ui.i18n import LANGS, catalogue

pytestmark = pytest.mark.browser
EN = catalogue("en")

MAX_CLICKS = 100  # per page visit
# a lab's main switch (the URL parameter): Play of one view is another run than Play of the next (the
# train and the compare section of the attention lab), so run controls are pressed once per view;
# any other button once per page (the GPU lab's presets are the same buttons in each of its views)
VIEW_PARAMS = ("section", "view", "solver")
# what the user can press, outside the sidebar (whose language switch is tested elsewhere); the file
# uploaders' own "Browse" buttons open a file dialog and are left out. Marked and read in one go, each with
# whether pressing it starts a script run (opening a popover, a tab or an expander does not, nor does the chosen
# option of a segmented control (a radio button), which the app's controls all make required)
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
      : e.closest('[data-testid="stCheckbox"]') ? 'toggle' : e.tagName === 'SUMMARY' ? 'expander'
      : e.dataset.testid === 'stPopoverButton' ? 'popover' : e.getAttribute('role') === 'tab' ? 'tab' : 'button';
    const chosen = e.getAttribute('role') === 'radio' && e.getAttribute('aria-checked') === 'true';
    const reruns = ['button', 'toggle', 'switch'].includes(kind) && !chosen;
    e.dataset.press = String(i);
    out.push([String(i), kind, text, reruns]);
  });
  return out;
}"""
# the app's script runs: Streamlit marks its root while a run is on (data-test-script-state on stApp), and while
# it is not connected (data-test-connection-state: its widgets are disabled then); runs are counted as they start
# (the root is looked up afresh: it may be drawn anew)
APP = "(document.querySelector('[data-testid=\"stApp\"]') || {dataset: {}}).dataset"
SCRIPT_STATE = f"{APP}.testScriptState"
TRACK_RUNS = """() => {
  if (window.__runs) return;
  const runs = window.__runs = { started: 0 }, running = () => SCRIPT_STATE === 'running';
  let was = running();
  new MutationObserver(() => { const now = running(); if (now && !was) runs.started++; was = now; })
    .observe(document.body, { attributes: true, subtree: true, attributeFilter: ['data-test-script-state'] });
}""".replace("SCRIPT_STATE", SCRIPT_STATE)
# Idle: the run has ended (before the first has, the root says "initial"), the app is connected, and no element is
# still a placeholder (stSkeleton: a widget's or a component's code loads after the run that placed it)
IDLE = (f"() => {SCRIPT_STATE} === 'notRunning' && {APP}.testConnectionState === 'CONNECTED'"
        " && !document.querySelector('[data-testid=\"stSkeleton\"]')")
# a traceback, LAPACK complaining on the server's output (huge values reaching a solver), or a catalogue key
# without a text in the page's language (ui.i18n says so)
SERVER_TROUBLE = re.compile(r"Traceback|had an illegal value|^no text for key", re.M)
# settings under which a live run diverges, and the start of the message that says so: the buttons are
# also pressed on a diverged run (the generalisation and attention labs' Adam rates cannot diverge)
DIVERGING = {
    "classification": ("lr=10&activation=relu&speed=10", "cls.diverged.blowup"),
    "regression": ("solver=gd&lr=10&degree=3&speed=20", "reg.diverged"),
    "optimizers": ("section=race&r_opts=sgd&r_sgd_lr=10", "opt.race.diverged"),  # the race on a real model
}
# the language each lab is pressed through in; the other one reads its labels
PRESSED_IN = {lab.url_path: LANGS[i % 2] for i, lab in enumerate(LABS)}
# live updates a playing view receives before the next button (each one a rerun of the view's fragment)
PLAYED_UPDATES = 3


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
        page.evaluate(TRACK_RUNS)
        self.settle(rerun=False)

    def runs(self) -> int:
        return self.page.evaluate("() => window.__runs.started")

    def settle(self, rerun: bool, runs_before: int = 0) -> None:
        """Until the run a press started (if it starts one) has ended, then check the page and the server's log."""
        if rerun:
            try:
                self.page.wait_for_function("n => window.__runs.started > n", arg=runs_before, timeout=3_000)
            except PlaywrightTimeout:
                pass  # nothing reran: the press landed on a control that was redrawn away, or changed nothing
        try:
            self.page.wait_for_function(IDLE, timeout=60_000)
        except PlaywrightTimeout:
            state = self.page.evaluate(f"() => [{SCRIPT_STATE}, {APP}.testConnectionState,"
                                       " document.querySelectorAll('[data-testid=\"stSkeleton\"]').length]")
            self.problems.append(f"not idle a minute after the press (run, connection, placeholders): {state}")
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
        """(signature, locator, whether pressing it reruns) of every visible, enabled thing to press, in page order."""
        view = self.view()
        return [((kind, text, view if text in self.run_texts else None), self.page.locator(f'[data-press="{i}"]'),
                 reruns) for i, kind, text, reruns in self.page.evaluate(FIND)]

    def press(self, loc, name: str, reruns: bool = True) -> bool:
        """Click; False when the element was redrawn away before the click landed (then nothing happened)."""
        before = self.runs()
        try:
            popover = loc.evaluate("e => e.dataset.testid === 'stPopoverButton'")
            loc.scroll_into_view_if_needed(timeout=5000)
            loc.click(timeout=5000)
        except PlaywrightError:
            return False
        self.clicks.append(name)
        self.settle(reruns, before)
        if popover:
            self.page.keyboard.press("Escape")  # close it again: an open popover covers what is below it
        return True

    def button(self, labels: set[str]):
        """The first visible button whose text is one of `labels`, or None."""
        return next((loc for (kind, text, _), loc, _ in self.candidates() if kind == "button" and text in labels),
                    None)

    def played(self, updates_before: int) -> None:
        """Until a playing view has received a few updates (its fragment reran), or it got one and is not playing
        (the run stopped by itself)."""
        self.page.wait_for_function(
            "([n, more]) => { const got = (window.__mlsimLive || {}).updates || 0; return got >= n + more"
            " || (got > n && !document.querySelector('.lp-caption.playing, .lv-status.playing')); }",
            arg=[updates_before, PLAYED_UPDATES], timeout=60_000)
        self.check()

    def run_sequence(self) -> None:
        """Play, then Step and Reset while playing, Play again, Pause, Step and Reset after Pause."""
        for name in ("play", "step", "play", "reset", "play", "pause", "step", "reset", "step", "reset"):
            updates = self.page.evaluate("() => (window.__mlsimLive || {}).updates || 0")
            pressed = False
            for _ in range(3):  # a live panel redraws its buttons; find them again if one went away
                loc = self.button(self.labels[name])
                if loc is None:  # e.g. Play is disabled on a diverged run
                    break
                if self.press(loc, name):
                    pressed = True
                    break
            if name == "play" and pressed:
                self.played(updates)

    def press_everything(self, kinds: tuple[str, ...] = ("button", "popover", "toggle", "expander", "tab",
                                                         "switch")) -> int:
        """Press every button of `kinds` once per view: the page's own buttons first, the view switches last."""
        done: set = set()
        tries: dict = {}
        play = self.labels["play"]
        for _ in range(MAX_CLICKS):
            todo = [c for c in self.candidates() if c[0] not in done and c[0][0] in kinds]
            if not todo:  # done, or a page between two runs: look again once the app is idle
                self.settle(rerun=False)
                todo = [c for c in self.candidates() if c[0] not in done and c[0][0] in kinds]
            if not todo:
                return len(done)
            # buttons, toggles and expanders before view switches (button groups), the lowest switch
            # first: its options change the least of the page
            switches = [c for c in todo if c[0][0] == "switch"]
            others = [c for c in todo if c[0][0] != "switch"]
            sig, loc, reruns = others[0] if others else switches[-1]
            if sig[1] in play:
                done.add(sig)
                self.run_sequence()
                done |= {s for s, _, _ in self.candidates() if s[1] in self.run_texts}
            elif self.press(loc, sig[1] or sig[0], reruns) or tries.setdefault(sig, 0) >= 2:
                done.add(sig)
            else:
                tries[sig] += 1
        pytest.fail(f"{self.url}: more than {MAX_CLICKS} things to press; raise MAX_CLICKS if that is right")


@pytest.mark.parametrize("lab", [lab.url_path for lab in LABS])
def test_every_button(server, server_log, page, lab):
    lang = PRESSED_IN[lab]
    visit = Visit(page, server_log, f"{server}/{lab}?lang={lang}", run_labels(lang))
    pressed = visit.press_everything()
    assert pressed >= 3, f"{lab}: only {pressed} things found to press"


@pytest.mark.parametrize("lab", [lab.url_path for lab in LABS])
def test_every_view_in_the_other_language(server, server_log, page, lab):
    """The language the lab is not pressed through in: every view switch pressed, every label read."""
    lang = next(other for other in LANGS if other != PRESSED_IN[lab])
    visit = Visit(page, server_log, f"{server}/{lab}?lang={lang}", run_labels(lang))
    title = catalogue(lang)[f"nav.{next(x.stem for x in LABS if x.url_path == lab)}"]
    assert page.get_by_text(title).count(), f"{lab}: the page is not in {lang}"
    visit.press_everything(kinds=("switch",))


@pytest.mark.parametrize("lab", sorted(DIVERGING))
def test_every_run_button_after_divergence(server, server_log, page, lab):
    query, message = DIVERGING[lab]
    visit = Visit(page, server_log, f"{server}/{lab}?lang=en&{query}", run_labels("en"))
    play = visit.labels["play"]
    wait_until(lambda: visit.button(play) is not None, 60, "the live panel's Play")  # the live panel is drawn last
    assert visit.press(visit.button(play), "play")
    words = next(w.strip() for w in re.split(r"\{.*?\}", EN[message]) if w.strip())  # its first literal words
    page.get_by_text(words).first.wait_for(timeout=30_000)
    visit.check()
    visit.run_sequence()
    visit.press_everything()
