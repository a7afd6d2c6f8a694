"""Language-model lab: tokens (a byte-level BPE trained live), a tiny GPT trained live on a language with a known
entropy floor (or the teacher's text), and scaling laws, published and measured here."""
import pandas as pd
import streamlit as st

from labs.lm.examples import next_token_view
from labs.lm.laws import laws_section
from labs.lm.measured import measured_section
from labs.lm.schema import PAGE, SCHEMA
from labs.lm.text import cached_synthetic, cached_tokenizer, synthetic_note, text_source
from labs.lm.training import train_section
from sim.core.text import markup
from sim.language.claims import PREFIXES, savings, split_prefix
from sim.language.lm import language_costs
from sim.language.tokenizer import BPE, byte_pieces
from sim.plots.lm import compression_figure, token_html
from ui import charts
from ui.i18n import t
from ui.urlstate import PageState

SHOWN_CHARS = 300  # characters of the coloured text
COMPRESSION = ("vocab", "per_char", "bpe", "char", "now")  # the compression figure's words: lm.chart.<name>
ss = st.session_state


def tokens_section(state: PageState) -> None:
    """How many tokens a character costs as BPE's merges replay (the figure) and the text they cut, beside the
    tokenizer; below, the merges, the two languages compared, the UTF-8 pitfall and next-token pairs."""
    figure, side = state.stage()
    with side:
        kind = state.widget("tokenizer", fold=False)
        vocab = state.widget("vocab", fold=False)
        slot = st.container()  # the merges slider: its end, the merges learned, is known once the text is chosen
        if state.values["source"] == "synthetic":
            state.widget("language", fold=False)
        with state.more(side):
            text, floor, problem = text_source(state, language=False)
    if text is None:
        with figure:
            problem()
        return
    bpe = cached_tokenizer("bpe", text, vocab)
    if kind == "char":
        shown, k = cached_tokenizer("char", text, 0), 0
    else:
        with slot:
            k = merges_shown(state, len(bpe.merges))
        shown = BPE(dict(list(bpe.merges.items())[:k]), bpe.counts[:k])
    sample = text[:SHOWN_CHARS]
    ids = shown.encode(sample)
    with figure:
        chars = len(cached_tokenizer("char", text, 0))
        labels = {w: t(f"lm.chart.{w}", chars=chars) for w in COMPRESSION}
        charts.plotly_chart(st, compression_figure(bpe.lengths(sample), len(sample), kind, k, labels),
                            key="lm.fig.compression")
        st.markdown(token_html(shown.pieces(ids)), unsafe_allow_html=True)
        st.caption(t("lm.colour_help"))
        st.caption(t("lm.compression_help", n=len(sample)))
    st.markdown(t("lm.tokens_intro"))
    synthetic_note(floor)
    c = st.columns(4)
    c[0].metric(t("lm.m.chars"), len(sample))
    c[1].metric(t("lm.m.bytes"), len(sample.encode("utf-8")))
    c[2].metric(t("lm.m.tokens"), len(ids))
    c[3].metric(t("lm.m.vocab"), len(shown))
    cols = iter(st.columns(2, gap="medium"))  # below the stage, each smaller than the figure
    if kind == "bpe":
        with next(cols):
            merges_table(shown)
    with next(cols):
        st.subheader(t("lm.compare_title"))
        costs = language_costs(text, vocab, state.values["seed"], lambda lang, s: cached_synthetic(lang, s)[0],
                               lambda source, size: cached_tokenizer("bpe", source, size))
        st.dataframe(compare_table(costs), hide_index=True)
        st.caption(compare_text(costs, vocab))
    left, right = st.columns(2, gap="medium")
    with left:
        pitfall(bpe)
    with right:
        next_token_view()


def merges_shown(state: PageState, n: int) -> int:
    """How many of the n learned merges the coloured text applies: a slider whose end is n (the vocabulary set)."""
    if n == 0:
        return 0
    key = state.key("shown")
    if key not in ss or not 0 <= ss[key] <= n:
        ss[key] = min(n, state.values["shown"])
    k = st.slider(t(key), 0, n, key=key, help=t("lm.shown.help"))
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


def compare_table(costs: dict[str, dict[str, float]]) -> pd.DataFrame:
    """Tokens per character of each built-in language: UTF-8 bytes, its own BPE, the chosen text's BPE."""
    return pd.DataFrame([{t("lm.col.language"): t(f"lm.language.{lang}"),
                          **{t(f"lm.col.{col}"): f"{c[col]:.2f}" for col in ("bytes", "own", "this")}}
                         for lang, c in costs.items()])


def compare_text(costs: dict[str, dict[str, float]], vocab: int) -> str:
    """The table read: what bytes cost each language, and which languages each BPE lowers (sim.language.claims)."""
    b = {lang: c["bytes"] for lang, c in costs.items()}
    sep = t("lm.list_sep")
    out = [t("lm.compare_help", vocab=vocab),
           t("lm.compare.bytes", zh=f"{b['zh']:.2f}", en=f"{b['en']:.2f}", ratio=f"{b['zh'] / b['en']:.1f}")]
    for col in ("own", "this"):
        saved = savings(b, {lang: c[col] for lang, c in costs.items()})
        if saved.lower:
            out.append(t(f"lm.compare.{col}.lower", list=markup(sep.join(
                t("lm.compare.item", lang=t(f"lm.language.{lang}"), before=f"{b[lang]:.2f}",
                  after=f"{costs[lang][col]:.2f}") for lang in saved.lower))))
        if saved.same:
            names = sep.join(t(f"lm.language.{lang}") for lang in saved.same)
            out.append(t(f"lm.compare.{col}.same", list=markup(names)))
    return " ".join(out)


def pitfall(tok: BPE) -> None:
    """The 3-byte UTF-8 pitfall: a Chinese character split between tokens decodes to "�"."""
    st.subheader(t("lm.pitfall_title"))
    word = st.text_input(t("lm.pitfall_input"), value="猫追狗", key="lm.pitfall", max_chars=20) or "猫"
    ids = tok.encode(word)
    lines = [f"UTF-8: {' '.join(f'{b:02x}' for b in word.encode('utf-8'))}",
             f"{t('lm.pitfall_bytes')}: {' | '.join(byte_pieces(word[0]))}",
             f"ids: {ids}", f"{t('lm.pitfall_pieces')}: {' | '.join(tok.pieces(ids))}"]
    lines += [f"decode(ids[:{k}]) = {tok.decode(ids[:k])!r}" for k in range(1, min(len(ids), PREFIXES) + 1)]
    st.code("\n".join(lines), language=None)
    k = split_prefix([tok.token_bytes(i) for i in ids])
    st.caption(" ".join([t("lm.pitfall_help"), t("lm.pitfall.split", k=k) if k else t("lm.pitfall.whole")]))


def main() -> None:
    PageState(PAGE, SCHEMA).sections(t("lm.title"), t("lm.intro"), {
        "tokens": tokens_section, "train": train_section, "laws": laws_section, "measured": measured_section},
        t("lm.about"))


main()
