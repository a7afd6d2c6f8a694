"""The language-model lab's worked examples from the article: the training pairs one sentence holds, and its two
plans of equal training compute (7 B parameters on 2 T tokens against 14 B on 1 T)."""
import pandas as pd
import streamlit as st

from sim.language.lm import ARTICLE_SENTENCE, next_token_pairs
from sim.language.scaling import article_plans
from sim.language.tokenizer import make_tokenizer
from ui.i18n import t

MAX_SENTENCE = 24  # characters of the sentence cut into pairs


def _e(x: float) -> str:
    return f"{x:.3g}"


def next_token_view() -> None:
    """A sentence, one token per character, as the (input, target) pairs next-token prediction trains on."""
    st.subheader(t("lm.pairs.title"))
    st.markdown(t("lm.pairs.intro"))
    text = st.text_input(t("lm.pairs.sentence"), value=ARTICLE_SENTENCE, key="lm.pairs_text",
                         max_chars=MAX_SENTENCE).strip() or ARTICLE_SENTENCE
    tok = make_tokenizer("char", text, 0)
    pairs = next_token_pairs(tok, text)
    if not pairs:
        st.info(t("lm.pairs.too_short"), icon=":material/info:")
        return
    st.dataframe(pd.DataFrame({t("lm.pairs.col.input"): [tok.decode(x) for x, _ in pairs],
                               t("lm.pairs.col.input_ids"): [str(x) for x, _ in pairs],
                               t("lm.pairs.col.target"): [tok.decode([y]) for _, y in pairs],
                               t("lm.pairs.col.target_id"): [y for _, y in pairs]}),
                 hide_index=True, key="lm.pairs_df")
    st.caption(t("lm.pairs.help", n=len(tok.encode(text)), pairs=len(pairs)))


def plans_view(fit: str, served: float) -> None:
    """The article's plans A and B under the chosen fit, serving the chosen number of tokens."""
    st.subheader(t("lm.plans.title"))
    r = article_plans(fit, served)
    cols = ("N", "D", "train", "per_token", "serve", "total", "loss")
    rows = [{t("lm.plans.col.plan"): t("lm.plans.plan", name=name, n=f"{p['N'] / 1e9:g} B", d=f"{p['D'] / 1e12:g} T"),
             **{t(f"lm.plans.col.{c}"): f"{p[c]:.3f}" if c == "loss" else _e(p[c]) for c in cols}}
            for name, p in r["plans"].items()]
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="lm.plans_df")
    a, b = r["plans"]["A"], r["plans"]["B"]
    st.markdown(t("lm.plans.explain", fit=t(f"lm.fit.{fit}"), train=_e(a["train"]), la=f"{a['loss']:.3f}",
                  lb=f"{b['loss']:.3f}", ratio=f"{b['per_token'] / a['per_token']:g}", served=_e(served),
                  saved=_e(b["serve"] - a["serve"])))
    st.caption(t("lm.plans.match", d=_e(r["D_match"]), extra=_e(r["extra"]), even=_e(r["break_even"]),
                 lb=f"{b['loss']:.3f}"))
