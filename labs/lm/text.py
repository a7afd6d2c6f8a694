"""The language-model lab's text: the built-in language (a seed draws it) or the user's own, typed or uploaded, and
the tokenizers trained on it (cached: every section and session with the same text shares them)."""
from collections.abc import Callable

import streamlit as st

from sim.language.lm import MAX_UPLOAD_BYTES, SYNTHETIC_CHARS, TextError, check_text, read_text, synthetic_text
from sim.language.tokenizer import make_tokenizer
from ui.i18n import t, t_md
from ui.upload import upload_box
from ui.urlstate import PageState


@st.cache_data(max_entries=8, show_spinner=False)
def cached_synthetic(lang: str, seed: int) -> tuple[str, float]:
    return synthetic_text(lang, SYNTHETIC_CHARS, seed)


@st.cache_data(max_entries=8, show_spinner=False)
def cached_tokenizer(kind: str, text: str, vocab: int):
    return make_tokenizer(kind, text, vocab)


Problem = Callable[[], None] | None  # draws why the user's text cannot be used


def text_source(state: PageState, language: bool = True) -> tuple[str | None, float | None, Problem]:
    """The text source's controls (in a section's "More settings"; `language`: the built-in language's choice too,
    unless the section shows it beside its figure): (the text to learn from, its entropy per character or None,
    None), or (None, None, a call that says why the user's text is unusable, drawn where the figure would be)."""
    if state.widget("source") == "synthetic":
        if language:
            state.widget("language")
        state.widget("seed")
        text, floor = cached_synthetic(state.values["language"], state.values["seed"])
        return text, floor, None
    typed = st.text_area(t("lm.own_text"), key="lm.own_text", height=120, placeholder=t("lm.own_placeholder"),
                         max_chars=MAX_UPLOAD_BYTES)  # the browser stops typing and pasting there
    uploaded = upload_box("lm", read_text, lambda s: t("lm.upload_used", n=len(s)), errors="lm.text_error")
    raw = uploaded if uploaded is not None else typed
    try:
        if len(raw.encode("utf-8")) > MAX_UPLOAD_BYTES:
            raise TextError("too_large", {"size": len(raw.encode("utf-8")), "limit": MAX_UPLOAD_BYTES})
        return check_text(raw), None, None
    except TextError as e:
        message = t_md(f"lm.text_error.{e.code}", **e.params)
        return None, None, lambda: (st.info if not raw.strip() else st.error)(message)


def synthetic_note(floor: float | None) -> None:
    """What the built-in language is and its entropy (nothing for the user's own text)."""
    if floor is not None:
        st.caption(t("lm.synthetic_help", h=f"{floor:.4f}", bits=f"{floor / 0.6931471805599453:.3f}"))
