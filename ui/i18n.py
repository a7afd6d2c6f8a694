"""One t(key) for every visible string; catalogues live in assets/i18n/{zh,en}/*.json.

Each lab keeps its strings in its own file (classification.json, ...); common.json holds the shared
ones. The files of one language are merged into one catalogue; a key may appear in one file only.
"""
from __future__ import annotations

import functools
import json
import logging
import numbers
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import streamlit as st

from sim.core.text import Markup, markup, md, plain

LANGS = ("zh", "en")
I18N_DIR = Path(__file__).resolve().parent.parent / "assets" / "i18n"
_log = logging.getLogger(__name__)  # a key without a text is shown as itself, and said here (the tests fail on it)


@functools.cache
def catalogue(lang: str) -> dict[str, str]:
    merged: dict[str, str] = {}
    for path in sorted((I18N_DIR / lang).glob("*.json")):
        part = json.loads(path.read_text(encoding="utf-8"))
        clash = merged.keys() & part.keys()
        if clash:
            raise ValueError(f"{path.name} repeats keys {sorted(clash)[:5]}")
        merged.update(part)
    return merged


def pick_lang(url_value: str | None, locale: str | None) -> str:
    """The URL wins; otherwise Chinese browsers get zh and everyone else en."""
    if url_value in LANGS:
        return url_value
    return "zh" if (locale or "").lower().startswith("zh") else "en"


def init_lang() -> None:
    """Decide the language once per session; the sidebar switch changes it afterwards."""
    if st.session_state.get("lang") not in LANGS:
        st.session_state["lang"] = pick_lang(st.query_params.get("lang"), st.context.locale)


_thread = threading.local()  # a language set for this thread (a live run's own thread drawing its frames)


def lang() -> str:
    return getattr(_thread, "lang", None) or st.session_state.get("lang", "en")


@contextmanager
def language(code: str | None) -> Iterator[None]:
    """t() in language `code` on this thread for the block: a thread that is not a script run has no session."""
    before = getattr(_thread, "lang", None)
    _thread.lang = code
    try:
        yield
    finally:
        _thread.lang = before


def _fill(text: str, params: dict, escape) -> Markup:
    """`text` with its {placeholders} filled: numbers as they are (format specs apply), every other value
    through `escape` (a Markup passes plain() as it is), a list's items one by one, read "a, b, c"."""
    def one(v):
        if isinstance(v, (list, tuple)):
            return ", ".join(str(one(x)) for x in v)
        return v if isinstance(v, numbers.Number) else escape(v)

    return markup(text.format(**{k: one(v) for k, v in params.items()}))


def _text(key: str) -> str:
    """The catalogue's text of `key` in the user's language; a key without one is shown as itself, and logged."""
    text = catalogue(lang()).get(key)
    if text is None:
        _log.warning("no text for key %r in %s", key, lang())
        return key
    return text


def t_md(key: str, **params) -> Markup:
    """t() for a Markdown message whose text params all come from a file (its cells, column names): each is
    shown as code (sim.core.text.md), as the characters it is."""
    return _fill(_text(key), params, md)


def t(key: str, **params) -> Markup:
    """The text of `key` in the user's language, with {placeholders} filled; lists read "a, b, c".

    Every param that is not a number or a Markup is escaped (sim.core.text.plain): a user's, a URL's or a
    file's text shows as the characters it is, never as a link, an image or formatting. Markdown the app
    builds itself is passed as a Markup (markup(), md(), another t()).
    """
    text = _text(key)
    return _fill(text, params, plain) if params else markup(text)


def large(n: float) -> str:
    """A large count in the words of the page's language: 7e10 is "70 billion" in English, "700 亿" in Chinese (where
    a B beside a count of parameters would read as bytes)."""
    return f"{n / float(t('num.large.scale')):g} {t('num.large.unit')}"

