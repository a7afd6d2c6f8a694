"""AppTest helpers shared by the page tests: open a lab with URL values, collect visible text."""
import contextlib
import functools

from streamlit.testing.v1 import AppTest

from deploy import local

open_app, open_lab = local.open_app, local.open_lab  # the page tests open their sessions as the benchmarks do


@functools.cache
def shared_lab(file: str, lang: str = "en", **query) -> AppTest:
    """open_lab, run once per test process for all the tests that only read that page (same lab, language and URL
    values). A test that clicks, changes a widget or runs the page again opens its own with open_lab."""
    return open_lab(file, lang, **query)


def metrics(at: AppTest) -> dict[str, str]:
    """Every metric on the page: label -> value."""
    return {m.label: m.value for m in at.metric}


def texts(at: AppTest) -> str:
    """Every piece of visible text of the common kinds, joined by newlines."""
    parts = [e.value for kind in ("markdown", "caption", "warning", "error", "info", "success", "title", "subheader")
             for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


def table(at: AppTest, column: str):
    """The first dataframe on the page that has this column (AppTest does not keep a dataframe's key)."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def schema_choices(page: str, schema) -> dict[str, tuple]:
    """Raw values of every choice widget by its key (AppTest cannot map translated labels back)."""
    return {f"{page}.{p.name}": p.choices for p in schema if p.choices}


def fuzz_widget(w, rng, choices: dict[str, tuple], strings: tuple[str, ...] = ("",)):
    """Set a widget to a random value, favouring the ends of its range (where things break)."""
    kind = type(w).__name__
    ends = lambda values: rng.choice([values[0], values[-1], rng.choice(values)])  # noqa: E731
    if kind == "ButtonGroup" and w.proto.click_mode == w.proto.MULTI_SELECT and w.key in choices:
        return w.set_value(rng.sample(choices[w.key], rng.randint(1, len(choices[w.key]))))  # a list, as the pills give
    if kind in ("Selectbox", "ButtonGroup", "SelectSlider") and w.key in choices:
        return w.set_value(ends(choices[w.key]))
    if kind == "SelectSlider":
        return w.set_value(type(w.value)(ends(w.options)))
    if kind == "Toggle":
        return w.set_value(rng.random() < 0.5)
    if kind in ("TextInput", "TextArea"):
        return w.set_value(rng.choice(strings))
    if kind == "Button":
        return w.click()
    lo, hi = w.min, w.max
    if isinstance(w.value, float):
        value = ends([lo, round(rng.uniform(lo, hi) / w.step) * w.step if w.step else rng.uniform(lo, hi), hi])
        return w.set_value(min(hi, max(lo, value)))
    return w.set_value(ends([int(lo), rng.randint(int(lo), int(hi)), int(hi)]))


# ---------- live labs (ui.live_run.live_lab): this session's cursor on a shared run ----------
def cursor(at: AppTest, key: str):
    """The session's cursor of live run `key` (sim.core.live.Cursor)."""
    return at.session_state[f"{key}.cursor"]


def live_model(at: AppTest, key: str):
    """`with live_model(at, key) as run:` the run at the cursor's step (a replayed copy when it is behind)."""
    return cursor(at, key).model()


def live_advance(at: AppTest, key: str, n: int) -> None:
    """What Play would do to this session, without the browser's timer: n more steps (the page is not rerun)."""
    cursor(at, key).advance(n)


@contextlib.contextmanager
def one_thread():
    """Small torch runs on a shared, loaded machine: one thread is fastest and steadiest."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def both(key: str) -> None:
    """A chosen catalogue key (a claim's case) has a text in both languages."""
    from ui.i18n import catalogue

    assert key in catalogue("en") and key in catalogue("zh"), key
