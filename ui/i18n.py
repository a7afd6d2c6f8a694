"""One t(key) for every visible string; catalogues live in assets/i18n/{zh,en}.json."""
from __future__ import annotations

import functools
import json
from pathlib import Path

import streamlit as st

LANGS = ("zh", "en")
I18N_DIR = Path(__file__).resolve().parent.parent / "assets" / "i18n"


@functools.cache
def catalogue(lang: str) -> dict[str, str]:
    return json.loads((I18N_DIR / f"{lang}.json").read_text(encoding="utf-8"))


def pick_lang(url_value: str | None, locale: str | None) -> str:
    """The URL wins; otherwise Chinese browsers get zh and everyone else en."""
    if url_value in LANGS:
        return url_value
    return "zh" if (locale or "").lower().startswith("zh") else "en"


def init_lang() -> None:
    """Decide the language once per session; the sidebar switch changes it afterwards."""
    if st.session_state.get("lang") not in LANGS:
        st.session_state["lang"] = pick_lang(st.query_params.get("lang"), st.context.locale)


def lang() -> str:
    return st.session_state.get("lang", "en")


def t(key: str, **params) -> str:
    text = catalogue(lang()).get(key, key)
    return text.format(**params) if params else text
