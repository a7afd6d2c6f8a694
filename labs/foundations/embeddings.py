"""The word-embeddings section: skip-gram with negative sampling trained live on the synthetic language
(sim.language.embeddings.EmbedRun), the vectors' projection and cosines as they move, a word's nearest neighbours."""
from collections.abc import Callable

import numpy as np
import streamlit as st

from labs.foundations.schema import SCHEMA
from sim.core.live import Cursor, LiveSpec
from sim.core.text import Markup
from sim.language.embeddings import (
    POS_NAMES,
    SENSIBLE,
    EmbedConfig,
    EmbedRun,
    Settling,
    nearest,
    settling,
    vocabulary,
)
from sim.plots.embeddings import embed_panels
from ui import live_plots, live_run
from ui.i18n import lang, t
from ui.urlstate import PageState

KEY = "fnd.emb"
SETTINGS = ("emb_dim", "emb_lr", "emb_seed")
NEIGHBOURS = 5
PENDING_NAMED = 4  # more words than this still without a neighbour of their kind are counted, not named
PANEL_LABELS = ("pca", "pc1", "pc2", "cos", "loss", "step")


def embed_spec(v: dict, language: str) -> LiveSpec:
    """The run of these settings on `language`'s built-in text; a tick trains `emb_speed` steps, and so does Step."""
    config = EmbedConfig(lang=language, dim=v["emb_dim"], lr=v["emb_lr"], seed=v["emb_seed"])
    return LiveSpec(KEY, (language, *(v[n] for n in SETTINGS)), lambda: EmbedRun(config), speed=v["emb_speed"],
                    step_size=v["emb_speed"])


def word_names(language: str) -> list[str]:
    return [w.strip() for w in vocabulary(language)[0]]


def neighbours_text(cos: np.ndarray, word: int, names: list[str]) -> str:
    return ", ".join(f"{names[j]} {c:+.2f}" for j, c in nearest(cos, word, NEIGHBOURS))


def settled_text(s: Settling, names: list[str]) -> Markup:
    """The words that found a neighbour of their kind first, and those still without one (or the last to find it)."""
    at = lambda i, step: t("fnd.emb.word_at", word=names[i], step=step)  # noqa: E731
    first = t("fnd.emb.first", words=[at(i, step) for i, step in s.first]) if s.first else t("fnd.emb.none_found")
    if s.last is not None:
        rest = t("fnd.emb.last", word=at(*s.last))
    elif len(s.pending) > PENDING_NAMED:
        rest = t("fnd.emb.pending_n", n=len(s.pending))
    else:
        rest = t("fnd.emb.pending", words=[t("fnd.emb.word", word=names[i]) for i in s.pending])
    return t("fnd.emb.settled", first=first, rest=rest)


def drawn(frame: dict, language: str, word: int) -> dict:
    """A frame as the live view draws it: three panels and a caption with the word's nearest neighbours."""
    names, pos = word_names(language), vocabulary(language)[1]
    labels = {k: str(t(f"fnd.emb.fig.{k}")) for k in PANEL_LABELS}
    since = frame["sensible_from"]
    caption = t("fnd.emb.caption", step=frame["steps"], agree=f"{frame['agree']:.0%}", chance=f"{frame['chance']:.0%}",
                word=names[word], near=neighbours_text(np.asarray(frame["cos"], dtype=float), word, names),
                since=t("fnd.emb.since", step=since) if since is not None else t("fnd.emb.not_yet",
                                                                                  share=f"{SENSIBLE:.0%}"),
                settled=settled_text(settling(np.asarray(frame["found_from"]), pos), names))
    pos_labels = [str(t(f"fnd.emb.pos.{p}")) for p in POS_NAMES]
    return {"epoch": frame["steps"], "caption": str(caption),
            "panels": embed_panels(frame, names, pos, pos_labels, labels)}


def word_picker(state: PageState, names: list[str]) -> int:
    """The word whose nearest neighbours the caption lists (held to the language's words)."""
    key = state.key("emb_word")
    if st.session_state.get(key) not in range(len(names)):
        st.session_state[key] = min(state.values["emb_word"], len(names) - 1)
    state.set("emb_word", st.selectbox(t(key), range(len(names)), key=key, format_func=names.__getitem__))
    return state.values["emb_word"]


def embeddings_section(state: PageState) -> None:
    language = lang()
    names = word_names(language)
    figure, side = state.stage()
    with side:
        for n in ("emb_dim", "emb_lr"):
            state.widget(n, fold=False)
        word = word_picker(state, names)
        with state.more(side):
            for n in ("emb_speed", "emb_seed"):
                state.widget(n)
    v = state.values
    spec = embed_spec(v, language)

    def messages(cursor: Cursor) -> None:
        if cursor.frame()["diverged"]:
            st.error(t("fnd.emb.diverged", step=cursor.frame()["steps"]))

    with figure:
        live_run.live_lab(spec, live_plots.frames_view(spec, lambda f: drawn(f, language, word), word), prefix=KEY,
                          messages=messages, bad_settings=lambda e: st.error(t("fnd.emb.bad_settings")),
                          n=v["emb_speed"])
    st.markdown(t("fnd.emb.intro"))
    st.markdown(t("fnd.emb.explain", share=f"{SENSIBLE:.0%}", d=v["emb_dim"]))


def bench_spec(language: str = "en", seed: int | None = None) -> tuple[LiveSpec, Callable[[list[dict]], object]]:
    """The section's default run (seed: another one) and what a playing page does with its frames (benchmarks)."""
    v = {p.name: p.default for p in SCHEMA}
    if seed is not None:
        v["emb_seed"] = seed
    spec = embed_spec(v, language)
    return spec, lambda frames: live_run.drawn_once(spec, frames, lambda f: drawn(f, language, v["emb_word"]))

