"""Language-model lab: tokens (a byte-level BPE trained live), a tiny GPT trained live on a language with a known
entropy floor (or the teacher's text), and scaling laws, published and measured here."""
import pandas as pd
import streamlit as st

from labs.lm.examples import next_token_view
from labs.lm.laws import laws_section, measured_section
from labs.lm.schema import PAGE, SCHEMA
from labs.lm.training import train_section
from sim.core.text import md
from sim.language.grammar import grammar
from sim.language.lm import MAX_UPLOAD_BYTES, SYNTHETIC_CHARS, TextError, check_text, read_text, synthetic_text
from sim.language.tokenizer import BPE, byte_pieces, make_tokenizer, tokens_per_char
from sim.plots.lm import token_html
from ui.i18n import t, t_md
from ui.upload import upload_box
from ui.urlstate import PageState

SHOWN_CHARS = 300  # characters of the coloured text
ss = st.session_state


@st.cache_data(max_entries=8, show_spinner=False)
def cached_synthetic(lang: str, seed: int) -> tuple[str, float]:
    return synthetic_text(lang, SYNTHETIC_CHARS, seed)


@st.cache_data(max_entries=8, show_spinner=False)
def cached_tokenizer(kind: str, text: str, vocab: int):
    return make_tokenizer(kind, text, vocab)


def chosen_text(state: PageState) -> tuple[str | None, float | None]:
    """(the text to learn from, its entropy per character or None); (None, None) when the user's text is unusable."""
    c1, c2, c3 = st.columns([2, 2, 2])
    source = state.widget("source", container=c1)
    if source == "synthetic":
        lang = state.widget("language", container=c2)
        state.widget("seed", container=c3)
        text, floor = cached_synthetic(lang, state.values["seed"])
        st.caption(t("lm.synthetic_help", h=f"{floor:.4f}", bits=f"{floor / 0.6931471805599453:.3f}"))
        return text, floor
    typed = st.text_area(t("lm.own_text"), key="lm.own_text", height=120, placeholder=t("lm.own_placeholder"))
    uploaded = upload_box("lm", read_text, lambda s: t("lm.upload_used", n=len(s)), errors="lm.text_error")
    raw = uploaded if uploaded is not None else typed
    try:
        if len(raw.encode("utf-8")) > MAX_UPLOAD_BYTES:
            raise TextError("too_large", {"size": len(raw.encode("utf-8")), "limit": MAX_UPLOAD_BYTES})
        return check_text(raw), None
    except TextError as e:
        (st.info if not raw.strip() else st.error)(t_md(f"lm.text_error.{e.code}", **e.params))
        return None, None


def tokens_section(state: PageState) -> None:
    st.markdown(t("lm.tokens_intro"))
    text, _ = chosen_text(state)
    if text is None:
        return
    with state.controls():
        c1, c2, c3 = st.columns([2, 2, 3])
        kind = state.widget("tokenizer", container=c1)
        if kind == "char":
            tok = cached_tokenizer("char", text, 0)
            shown = tok
        else:
            vocab = state.widget("vocab", container=c2)
            tok = cached_tokenizer("bpe", text, vocab)
            k = merges_shown(state, len(tok.merges), c3)
            shown = BPE(dict(list(tok.merges.items())[:k]), tok.counts[:k])
    sample = text[:SHOWN_CHARS]
    ids = shown.encode(sample)
    st.markdown(token_html(shown.pieces(ids)), unsafe_allow_html=True)
    c = st.columns(4)
    c[0].metric(t("lm.m.chars"), len(sample))
    c[1].metric(t("lm.m.bytes"), len(sample.encode("utf-8")))
    c[2].metric(t("lm.m.tokens"), len(ids))
    c[3].metric(t("lm.m.vocab"), len(shown))
    st.caption(t("lm.colour_help"))
    if kind == "bpe":
        merges_table(shown)
    st.subheader(t("lm.compare_title"))
    st.dataframe(compare_languages(text, state.values["vocab"], state.values["seed"]), hide_index=True)
    st.caption(t("lm.compare_help", vocab=state.values["vocab"]))
    pitfall(cached_tokenizer("bpe", text, state.values["vocab"]))


def merges_shown(state: PageState, n: int, container) -> int:
    """How many of the n learned merges the coloured text applies: a slider whose end is n (the vocabulary set)."""
    if n == 0:
        return 0
    key = state.key("shown")
    if key not in ss or not 0 <= ss[key] <= n:
        ss[key] = min(n, state.values["shown"])
    k = container.slider(t(key), 0, n, key=key, help=t("lm.shown.help"))
    state.set("shown", k)
    return k


def merges_table(tok: BPE) -> None:
    st.subheader(t("lm.merges_title"))
    vocab = tok.vocab
    rows = [{t("lm.col.id"): new, t("lm.col.left"): repr(vocab[a].decode("utf-8", "replace")),
             t("lm.col.right"): repr(vocab[b].decode("utf-8", "replace")),
             t("lm.col.token"): repr(vocab[new].decode("utf-8", "replace")), t("lm.col.count"): count}
            for ((a, b), new), count in zip(tok.merges.items(), tok.counts, strict=True)]
    if rows:
        st.dataframe(pd.DataFrame(rows[::-1]), hide_index=True, height=240)
    st.caption(t("lm.merges_help"))


def compare_languages(text: str, vocab: int, seed: int) -> pd.DataFrame:
    """Tokens per character of each built-in language (a fresh sample): UTF-8 bytes, a BPE trained on that language,
    and a BPE of the same size trained on the chosen text."""
    chosen = cached_tokenizer("bpe", text, vocab)
    rows = []
    for lang in ("en", "zh"):
        own = cached_tokenizer("bpe", cached_synthetic(lang, seed)[0], vocab)
        probe = cached_synthetic(lang, seed + 1)[0][:3000]
        rows.append({t("lm.col.language"): t(f"lm.language.{lang}"),
                     t("lm.col.bytes"): f"{len(probe.encode('utf-8')) / len(probe):.2f}",
                     t("lm.col.own"): f"{tokens_per_char(own, probe):.2f}",
                     t("lm.col.this"): f"{tokens_per_char(chosen, probe):.2f}"})
    return pd.DataFrame(rows)


def pitfall(tok: BPE) -> None:
    """The 3-byte UTF-8 pitfall: a Chinese character split between tokens decodes to "�"."""
    st.subheader(t("lm.pitfall_title"))
    word = st.text_input(t("lm.pitfall_input"), value="猫追狗", key="lm.pitfall", max_chars=20) or "猫"
    ids = tok.encode(word)
    lines = [f"UTF-8: {' '.join(f'{b:02x}' for b in word.encode('utf-8'))}",
             f"{t('lm.pitfall_bytes')}: {' | '.join(byte_pieces(word[0]))}",
             f"ids: {ids}", f"{t('lm.pitfall_pieces')}: {' | '.join(tok.pieces(ids))}"]
    lines += [f"decode(ids[:{k}]) = {tok.decode(ids[:k])!r}" for k in range(1, min(len(ids), 4) + 1)]
    st.code("\n".join(lines), language=None)
    st.caption(t("lm.pitfall_help"))


def tokens_view(state: PageState) -> None:
    tokens_section(state)
    next_token_view()


def train_view(state: PageState) -> None:
    text, floor = chosen_text(state)
    with state.controls():
        c1, c2 = st.columns(2)
        if state.widget("tokenizer", container=c1) == "bpe":
            state.widget("vocab", container=c2)
    if floor is not None:
        st.caption(t("lm.floor_note", lang=md(grammar(state.values["language"]).sample(60, 5))))
    train_section(state, text, floor)


def main() -> None:
    PageState(PAGE, SCHEMA).sections(t("lm.title"), t("lm.intro"), {
        "tokens": tokens_view, "train": train_view, "laws": laws_section, "measured": measured_section})


main()
