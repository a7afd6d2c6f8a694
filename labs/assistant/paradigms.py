"""The 'paradigms' section of the assistant lab: the nested map of AI, discriminative against generative trained on
the same data, and three sources of a training signal (labels, the text itself, a reward)."""
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
    names = {k: str(t(f"asst.map.{k}")) for k in MAP_LEVELS}
    notes = {k: str(t(f"asst.map.{k}.note")) for k in MAP_LEVELS}
    links = {k: f"/{lab}?lang={lang()}" for k, lab in LINKS.items()}
    charts.plotly_chart(st, paradigm_map(names, notes, links), key="asst.fig.map")
    cols = st.columns(len(LINKS))
    for col, lab in zip(cols, LINKS.values(), strict=True):
        col.page_link(f"labs/{lab}/page.py", label=t("asst.map.open", lab=t(f"nav.{lab}")), icon=":material/link:")


def models_view(state: PageState) -> None:
    st.subheader(t("asst.gen.title"))
    st.markdown(t("asst.gen.intro"))
    with state.controls():
        for col, n in zip(st.columns(5), ("p_n", "p_sep", "p_samples", "p_seed", "p_shared"), strict=True):
            state.widget(n, container=col)
    v = state.values
    X, y = two_classes(v["p_n"], v["p_sep"], v["p_seed"])
    logistic, gauss = fit_logistic(X, y), fit_gaussians(X, y, shared=v["p_shared"])
    samples = gauss.sample(v["p_samples"], v["p_seed"] + 1)
    xs, ys, points = grid(np.concatenate([X, samples[0]]) if v["p_samples"] else X)
    labels = {k: str(t(f"asst.gen.fig.{k}")) for k in ("class0", "class1", "sample0", "sample1", "x1", "x2")}
    left, right = st.columns(2)
    for col, model, name, drawn in ((left, logistic, "disc", None), (right, gauss, "gen", samples)):
        fig = boundary_figure(xs, ys, model.proba(points).reshape(len(ys), len(xs)), X, y,
                              {**labels, "title": str(t(f"asst.gen.fig.{name}"))}, drawn)
        charts.plotly_chart(col, fig, key=f"asst.fig.{name}")
    st.markdown(say(fit_result(X, y, logistic, gauss, v["p_samples"])))
    st.markdown(t("asst.gen.compare"))


def signals_view(state: PageState) -> None:
    st.subheader(t("asst.sig.title"))
    st.markdown(t("asst.sig.supervised"))
    st.markdown(t("asst.sig.self"))
    text = st.text_input(t("asst.sig.sentence"), value=SENTENCE[lang()], max_chars=60, key=f"asst.sentence.{lang()}")
    pairs = next_token_examples(text, SHOWN)
    if len(text) < 2:
        st.warning(t("asst.sig.too_short"))
    else:
        st.dataframe({str(t("asst.sig.context")): [c for c, _ in pairs],  # a table cell shows text as it is
                      str(t("asst.sig.next")): [n if n.strip() else "␣" for _, n in pairs]}, hide_index=True,
                     height=240)
        st.caption(say(count(text)))
    st.markdown(t("asst.sig.rl"))
    with state.controls():
        for col, n in zip(st.columns(2), ("p_lr", "p_steps"), strict=True):
            state.widget(n, container=col)
    v = state.values
    run = train_bandit(v["p_steps"], v["p_lr"], v["p_seed"])
    labels = {"arm": str(t("asst.sig.arm")), **{k: str(t(f"asst.sig.{k}")) for k in ("reward", "step", "prob")}}
    charts.plotly_chart(st, bandit_figure(run.probs, run.mean_reward(), PAYOUTS, labels), key="asst.fig.bandit")
    st.markdown(say(result(run)))


def paradigms_section(state: PageState) -> None:
    st.markdown(t("asst.par.intro"))
    map_view()
    models_view(state)
    signals_view(state)
