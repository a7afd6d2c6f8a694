"""The 'data' section of the assistant lab: a generated raw corpus with known problems, cleaned step by step (quality
filters, exact dedup, MinHash + LSH, the contamination check), each step scored against the truth, and a tiny GPT
trained live on the raw against the cleaned corpus."""
from collections.abc import Callable

import numpy as np
import streamlit as st

from labs.assistant.say import said, say
from sim.core.live import Cursor, LiveSpec
from sim.core.text import md
from sim.dedup import clean as cl
from sim.dedup.clean import STEPS, CleanConfig, Cleaned, clean
from sim.dedup.corpus import Corpus, make_corpus
from sim.dedup.live import MODELS, cleaning_run, read
from sim.dedup.minhash import candidate_probability
from sim.plots.assistant import cleaning_frame, estimate_figure, lsh_figure, removed_figure
from ui import charts, live_plots, live_run
from ui.i18n import t
from ui.schema import Param
from ui.urlstate import PageState

PARAMS = [
    Param("d_steps", "multi", STEPS, choices=STEPS),  # the cleaning steps switched on
    Param("d_min_words", "int", 5, lo=1, hi=12, step=1),
    Param("d_threshold", "float", 0.55, lo=0.3, hi=0.95, step=0.05),
    Param("d_perm", "choice", 128, choices=(16, 32, 64, 128, 256)),
    Param("d_ngram", "int", 13, lo=3, hi=20, step=1),
    Param("d_seed", "int", 0, lo=0, hi=999_999, step=1),  # the corpus, MinHash's hashes and the models
    Param("d_speed", "choice", 2, choices=(1, 2, 5, 10)),  # steps of both models a frame
]
KEY = "asst.data.train"
KINDS = ("junk", "exact", "near", "test", "clean")
FRAME_LABELS = ("raw", "clean", "train", "heldout", "test", "leaked", "step", "loss")


def config(v: dict) -> CleanConfig:
    return CleanConfig(steps=tuple(v["d_steps"]), min_words=v["d_min_words"], threshold=v["d_threshold"],
                       num_perm=v["d_perm"], ngram=v["d_ngram"], seed=v["d_seed"])


@st.cache_data(max_entries=32, show_spinner=False)
def cleaned(v_items: tuple) -> tuple[Corpus, Cleaned]:
    v = dict(v_items)
    corpus = make_corpus(v["d_seed"])
    return corpus, clean(corpus, config(v))


def kind_of(corpus: Corpus, i: int) -> str:
    for kind in ("junk", "test", "exact", "near"):
        if getattr(corpus, kind)[i]:
            return kind
    return "clean"


def steps_view(corpus: Corpus, result: Cleaned) -> None:
    """The stage's figure: what each step removed, by what the lines truly were, and the steps' scores under it."""
    if not result.steps:
        st.info(t("asst.data.no_steps"))
        return
    rows = [(str(t(f"asst.d_steps.{s.name}")), _count(corpus, s.removed)) for s in result.steps]
    kinds = {k: str(t(f"asst.data.kind.{k}")) for k in KINDS}
    charts.plotly_chart(st, removed_figure(rows, kinds, {"lines": str(t("asst.data.fig.lines"))}),
                        key="asst.fig.removed")
    pct = lambda x: "–" if x is None else f"{x:.1%}"  # noqa: E731
    st.dataframe({str(t("asst.data.col.step")): [str(t(f"asst.d_steps.{s.name}")) for s in result.steps],
                  str(t("asst.data.col.seen")): [s.seen for s in result.steps],
                  str(t("asst.data.col.removed")): [len(s.removed) for s in result.steps],
                  str(t("asst.data.col.precision")): [pct(s.precision) for s in result.steps],
                  str(t("asst.data.col.recall")): [pct(s.recall) for s in result.steps],
                  str(t("asst.data.col.target")): [str(t(f"asst.data.target.{s.name}")) for s in result.steps]},
                 hide_index=True)


def steps_words(corpus: Corpus, result: Cleaned) -> None:
    """Below the stage: the raw corpus and what is left of its problems, the lines each step removed, what the
    section does."""
    st.markdown(say(cl.summary(corpus, result)))
    if result.steps:
        st.markdown(say(cl.left(result)))
        with st.expander(t("asst.data.examples")):
            for s in result.steps:
                shown = s.removed[:4]
                st.markdown(t("asst.data.example_head", step=t(f"asst.d_steps.{s.name}"), n=len(s.removed)))
                for i in shown:
                    st.markdown(t("asst.data.example", line=md(corpus.lines[i], 120),
                                  kind=t(f"asst.data.kind.{kind_of(corpus, i)}")))
    st.markdown(t("asst.data.intro"))


def _count(corpus: Corpus, removed: list[int]) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in removed:
        out[kind_of(corpus, i)] = out.get(kind_of(corpus, i), 0) + 1
    return out


def minhash_view(corpus: Corpus, result: Cleaned, v: dict) -> None:
    """The LSH S-curve and MinHash's estimates side by side, each half the page's width (smaller than the stage's
    figure), each with what it shows under it."""
    st.subheader(t("asst.data.mh.title"))
    near = next((s for s in result.steps if s.name == "near"), None)
    exact, est = cl.pair_estimates(corpus, config(v))
    curve, estimates = st.columns(2, gap="medium")
    if near is None:
        curve.info(t("asst.data.mh.off"))
    else:
        bands, rows = near.detail["bands"], near.detail["rows"]
        grid = np.linspace(0, 1, 101)
        labels = {k: str(t(f"asst.data.mh.{k}")) for k in ("curve", "threshold", "pairs", "jaccard", "chance")}
        charts.plotly_chart(curve, lsh_figure(grid, candidate_probability(grid, bands, rows), v["d_threshold"], exact,
                                              labels), key="asst.fig.lsh")
        curve.markdown(say(cl.lsh(near, v["d_perm"])))
    labels = {k: str(t(f"asst.data.mh.{k}")) for k in ("pairs", "band", "jaccard", "estimate")}
    charts.plotly_chart(estimates, estimate_figure(exact, est, labels), key="asst.fig.estimate")
    estimates.markdown(say(cl.estimate_error(exact, est, v["d_perm"])))


def live_spec(v: dict, corpus: Corpus, result: Cleaned) -> LiveSpec:
    settings = tuple(sorted((k, v[k]) for k in ("d_steps", "d_min_words", "d_threshold", "d_perm", "d_ngram",
                                                  "d_seed")))
    return LiveSpec(KEY, settings, lambda: cleaning_run(corpus, result, v["d_seed"]), speed=v["d_speed"])


def frame_labels() -> dict[str, str]:
    return {k: str(t(f"asst.data.live.{k}")) for k in FRAME_LABELS}


def drawn(frame: dict, labels: dict) -> dict:
    m = frame["models"]
    last = {n: {k: (float(m[n][k][-1]) if len(m[n][k]) else None) for k in ("heldout", "test")} for n in MODELS}
    caption = str(t("asst.data.live.caption", step=frame["steps"], **{f"{n}_{k}": _fmt(last[n][k]) for n in MODELS
                                                                       for k in ("heldout", "test")}))
    return {**cleaning_frame(frame, {**labels, "caption": caption}), "step": frame["step"], "run": frame["run"],
            "n": frame["n"]}


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def show_view(spec: LiveSpec) -> live_run.Show:
    labels = frame_labels()
    return live_plots.frames_view(spec, lambda f: drawn(f, labels))


def training_view(state: PageState, corpus: Corpus, result: Cleaned) -> None:
    st.subheader(t("asst.data.live.title"))
    st.markdown(t("asst.data.live.intro"))
    state.widget("d_speed")
    v = state.values
    spec = live_spec(v, corpus, result)

    def messages(cursor: Cursor) -> None:
        f = cursor.frame()
        if cursor.stopped and any(not np.isfinite(m["loss"] or 0.0) for m in f["models"].values()):
            st.error(t("asst.data.live.diverged"))
        # while the view plays on its own channel this reruns only now and then: its step would lag the frame shown,
        # whose caption carries the live numbers; the reading is for the step the run is paused at
        if not cursor.playing and (sayings := read(f)):
            st.markdown(said(sayings))

    live_run.live_lab(spec, show_view(spec), prefix="asst.data", messages=messages,
                      bad_settings=lambda e: st.error(t("asst.data.live.too_little")), n=v["d_speed"])


def data_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:  # sliders first: the steps' pills wrap to several rows in the narrow column
        for n in ("d_threshold", "d_min_words"):
            state.widget(n, fold=False)
        state.widget("d_steps")  # the presenter view's type makes a pill wider than this column: there, behind the
        # controls button, whose box is nearly as wide as the screen
        with state.more(side):
            for n in ("d_perm", "d_ngram", "d_seed"):
                state.widget(n)
    v = state.values
    corpus, result = cleaned(tuple(sorted((k, v[k]) for k in ("d_steps", "d_min_words", "d_threshold", "d_perm",
                                                                "d_ngram", "d_seed"))))
    with figure:
        steps_view(corpus, result)
    steps_words(corpus, result)
    minhash_view(corpus, result, v)
    training_view(state, corpus, result)


def bench_spec(seed: int | None = None) -> tuple[LiveSpec, Callable[[list[dict]], object]]:
    """The section's default run (seed: another corpus and training seed) and what a playing page does with its
    frames, for benchmarks/classroom.py."""
    v = {p.name: p.default for p in PARAMS}
    if seed is not None:
        v["d_seed"] = seed
    corpus = make_corpus(v["d_seed"])
    spec = live_spec(v, corpus, clean(corpus, config(v)))
    return spec, lambda frames: live_run.drawn_once(spec, frames, lambda f: drawn(f, frame_labels()))
