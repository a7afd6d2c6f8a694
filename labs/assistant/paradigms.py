"""The 'paradigms' section of the assistant lab: discriminative against generative trained on the same data (the
section's stage), the nested map of AI, and three sources of a training signal (labels, the text itself, a reward)."""
import numpy as np
import streamlit as st

from labs.assistant.say import say
from sim.paradigms.bandit import PAYOUTS, result, train_bandit
from sim.paradigms.generative import fit_gaussians, fit_logistic, fit_result, grid, two_classes
from sim.paradigms.selfsup import SHOWN, count, next_token_examples
from sim.plots.assistant import MAP_LEVELS, bandit_figure, boundary_figure, paradigm_map
from ui import charts
from ui.i18n import lang, t
from ui.schema import Param
from ui.urlstate import PageState

PARAMS = [
    Param("p_n", "int", 100, lo=5, hi=500, step=5),  # training points per class
    Param("p_sep", "float", 2.0, lo=0.0, hi=5.0, step=0.25),  # distance between the class centres
    Param("p_shared", "bool", False),  # the generative model: one covariance for both classes (a straight boundary)
    Param("p_samples", "int", 100, lo=0, hi=500, step=10),  # new points the generative model draws
    Param("p_seed", "int", 0, lo=0, hi=999_999, step=1),
    Param("p_lr", "choice", 0.2, choices=(0.05, 0.1, 0.2, 0.5, 1.0)),  # the bandit's learning rate
    Param("p_steps", "int", 300, lo=20, hi=2000, step=20),  # the bandit's plays
]
LINKS = {"ml": "classification", "dl": "blocks", "genai": "lm", "llm": "assistant"}  # a level -> the lab showing it
SENTENCE = {"zh": "我今天吃了一碗面", "en": "the cat sat on the mat"}


def map_view() -> None:
    """The nested map of AI beside the section's intro and the links to the labs that show each level (the map in
    two fifths of the page's width: smaller than the two models' figures above it)."""
    names = {k: str(t(f"asst.map.{k}")) for k in MAP_LEVELS}
    notes = {k: str(t(f"asst.map.{k}.note")) for k in MAP_LEVELS}
    links = {k: f"/{lab}?lang={lang()}" for k, lab in LINKS.items()}
    picture, words = st.columns([2, 3], gap="medium")
    charts.plotly_chart(picture, paradigm_map(names, notes, links), key="asst.fig.map")
    words.markdown(t("asst.par.intro"))
    for lab in LINKS.values():
        words.page_link(f"labs/{lab}/page.py", label=t("asst.map.open", lab=t(f"nav.{lab}")), icon=":material/link:")


def models_view(state: PageState, figure, side) -> None:
    """The stage: the discriminative and the generative model's boundaries side by side, the settings of their data
    beside them; below, what each learned and how the two kinds of model differ."""
    with side:
        for n in ("p_sep", "p_n", "p_samples", "p_shared"):
            state.widget(n, fold=False)
        with state.more(side):
            state.widget("p_seed")
    v = state.values
    X, y = two_classes(v["p_n"], v["p_sep"], v["p_seed"])
    logistic, gauss = fit_logistic(X, y), fit_gaussians(X, y, shared=v["p_shared"])
    samples = gauss.sample(v["p_samples"], v["p_seed"] + 1)
    xs, ys, points = grid(np.concatenate([X, samples[0]]) if v["p_samples"] else X)
    labels = {k: str(t(f"asst.gen.fig.{k}")) for k in ("class0", "class1", "sample0", "sample1", "x1", "x2")}
    with figure:
        left, right = st.columns(2)
        for col, model, name, drawn in ((left, logistic, "disc", None), (right, gauss, "gen", samples)):
            fig = boundary_figure(xs, ys, model.proba(points).reshape(len(ys), len(xs)), X, y,
                                  {**labels, "title": str(t(f"asst.gen.fig.{name}"))}, drawn)
            charts.plotly_chart(col, fig, key=f"asst.fig.{name}")
    st.subheader(t("asst.gen.title"))
    st.markdown(say(fit_result(X, y, logistic, gauss, v["p_samples"])))
    st.markdown(t("asst.gen.intro"))
    st.markdown(t("asst.gen.compare"))


def signals_view(state: PageState) -> None:
    """Three sources of a training signal: labels, the text itself (a sentence cut into next-token examples) and a
    reward (a three-armed bandit), each figure in half the page's width."""
    st.subheader(t("asst.sig.title"))
    st.markdown(t("asst.sig.supervised"))
    words, pairs_col = st.columns(2, gap="medium")
    words.markdown(t("asst.sig.self"))
    text = words.text_input(t("asst.sig.sentence"), value=SENTENCE[lang()], max_chars=60,
                            key=f"asst.sentence.{lang()}")
    pairs = next_token_examples(text, SHOWN)
    if len(text) < 2:
        pairs_col.warning(t("asst.sig.too_short"))
    else:
        pairs_col.dataframe({str(t("asst.sig.context")): [c for c, _ in pairs],  # a table cell shows text as it is
                             str(t("asst.sig.next")): [n if n.strip() else "␣" for _, n in pairs]}, hide_index=True,
                            height=240)
        pairs_col.caption(say(count(text)))
    st.markdown(t("asst.sig.rl"))
    picture, controls = st.columns(2, gap="medium")
    with state.controls(controls):
        for n in ("p_lr", "p_steps"):
            state.widget(n)
    v = state.values
    run = train_bandit(v["p_steps"], v["p_lr"], v["p_seed"])
    labels = {"arm": str(t("asst.sig.arm")), **{k: str(t(f"asst.sig.{k}")) for k in ("reward", "step", "prob")}}
    charts.plotly_chart(picture, bandit_figure(run.probs, run.mean_reward(), PAYOUTS, labels), key="asst.fig.bandit")
    controls.markdown(say(result(run)))


def paradigms_section(state: PageState) -> None:
    figure, side = state.stage()
    models_view(state, figure, side)
    map_view()
    signals_view(state)
