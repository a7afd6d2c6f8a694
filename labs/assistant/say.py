"""Sayings in the user's language: the engine picks what a run shows as (i18n key, params) pairs from the run's own
figures (sim.alignment.report, sim.dedup.clean, ...); a param may itself be a saying or a list of them."""
from __future__ import annotations

from sim.core.text import Markup, markup
from ui.i18n import lang, t


def _is_said(v: object) -> bool:
    return isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str) and isinstance(v[1], dict)


def _filled(v: object) -> object:
    if _is_said(v):
        return say(v)
    if isinstance(v, list) and all(_is_said(x) for x in v):
        return markup(str(t("asst.sep")).join(say(x) for x in v))  # "a, b, c" or "a、b、c"
    return v


def say(said: tuple[str, dict]) -> Markup:
    """One saying's text, its params filled (sayings among them said first)."""
    key, params = said
    return t(key, **{k: _filled(v) for k, v in params.items()})


def said(sayings: list[tuple[str, dict]], sep: str | None = None) -> Markup:
    """Several sayings as one text, joined by `sep` (default: a space between English sentences, none between
    Chinese ones)."""
    sep = ("" if lang() == "zh" else " ") if sep is None else sep
    return markup(sep.join(say(s) for s in sayings))
