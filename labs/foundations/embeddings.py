"""The word-embeddings section: skip-gram with negative sampling trained live on the synthetic language
(sim.language.embeddings.EmbedRun), the vectors' projection and cosines as they move, a word's nearest neighbours."""
from collections.abc import Callable

import numpy as np
import streamlit as st

from labs.foundations.schema import SCHEMA
from sim.core.live import Cursor, LiveSpec
from sim.language.embeddings import POS_NAMES, SENSIBLE, EmbedConfig, EmbedRun, nearest, vocabulary
from sim.plots.embeddings import embed_panels
from ui import live_plots, live_run
from ui.i18n import lang, t
from ui.urlstate import PageState

KEY = "fnd.emb"
SETTINGS = ("emb_dim", "emb_lr", "emb_seed")
NEIGHBOURS = 5
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


def drawn(frame: dict, language: str, word: int) -> dict:
    """A frame as the live view draws it: three panels and a caption with the word's nearest neighbours."""
    names, pos = word_names(language), vocabulary(language)[1]
    labels = {k: str(t(f"fnd.emb.fig.{k}")) for k in PANEL_LABELS}
    since = frame["sensible_from"]
    caption = t("fnd.emb.caption", step=frame["steps"], agree=f"{frame['agree']:.0%}", chance=f"{frame['chance']:.0%}",
                word=names[word], near=neighbours_text(np.asarray(frame["cos"], dtype=float), word, names),
                since=t("fnd.emb.since", step=since) if since is not None else t("fnd.emb.not_yet",
                                                                                  share=f"{SENSIBLE:.0%}"))
    pos_labels = [str(t(f"fnd.emb.pos.{p}")) for p in POS_NAMES]
    return {"epoch": frame["steps"], "caption": str(caption),
            "panels": embed_panels(frame, names, pos, pos_labels, labels)}


def embeddings_section(state: PageState) -> None:
    st.markdown(t("fnd.emb.intro"))
    language = lang()
    names = word_names(language)
    with state.controls():
        cols = st.columns(5)
        for col, n in zip(cols[:4], ("emb_dim", "emb_lr", "emb_speed", "emb_seed"), strict=True):
            state.widget(n, container=col)
        word = min(state.values["emb_word"], len(names) - 1)
        key = state.key("emb_word")
        if st.session_state.get(key) not in range(len(names)):
            st.session_state[key] = word
        state.set("emb_word", cols[4].selectbox(t(key), range(len(names)), key=key, format_func=names.__getitem__))
    v = state.values
    spec = embed_spec(v, language)

    def messages(cursor: Cursor) -> None:
        if cursor.frame()["diverged"]:
            st.error(t("fnd.emb.diverged", step=cursor.frame()["steps"]))

    word = v["emb_word"]
    live_run.live_lab(spec, live_plots.frames_view(spec, lambda f: drawn(f, language, word), word), prefix=KEY,
                      messages=messages, bad_settings=lambda e: st.error(t("fnd.emb.bad_settings")), n=v["emb_speed"])
    st.markdown(t("fnd.emb.explain", share=f"{SENSIBLE:.0%}"))


def bench_spec(language: str = "en", seed: int | None = None) -> tuple[LiveSpec, Callable[[list[dict]], object]]:
    """The section's default run (seed: another one) and what a playing page does with its frames (benchmarks)."""
    v = {p.name: p.default for p in SCHEMA}
    if seed is not None:
        v["emb_seed"] = seed
    spec = embed_spec(v, language)
    return spec, lambda frames: live_run.drawn_once(spec, frames, lambda f: drawn(f, language, v["emb_word"]))

