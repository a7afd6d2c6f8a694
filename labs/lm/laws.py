"""The language-model lab's scaling laws: the published fits for a budget the user picks (the sweep measured here is
labs/lm/measured.py)."""
import math

import numpy as np
import pandas as pd
import streamlit as st

from labs.lm.examples import plans_view
from sim.language.claims import tokens_per_param
from sim.language.scaling import (
    FITS,
    GPT3_MIX,
    MODELS,
    RULES,
    article_rule,
    compute_optimal,
    inference_optimal,
    kaplan_loss,
    model_flops,
    serving_flops,
    training_flops,
)
from sim.plots.lm import inference_figure, kaplan_figure, laws_figure
from ui import charts
from ui.course import course_note
from ui.i18n import t
from ui.urlstate import PageState


def sci(x: float) -> str:
    """A budget or count in three significant digits (1e+21)."""
    return f"{x:.3g}"


# ---------- published ----------
def laws_section(state: PageState) -> None:
    """The fits' compute-optimal N and D for a budget (the figure, the budget beside it), then the table, the course
    texts' figures and the inference-aware law below."""
    figure, side = state.stage()
    with side:
        log_c = state.widget("log_c", help=t("lm.log_c.help"), fold=False)
        C = 10 ** log_c
        st.markdown(t("lm.budget", c=sci(C)))
    rows, current = [], {}
    for fit in RULES:
        N, D = compute_optimal(C, fit)
        current[fit] = (N, D)
        loss = f"{FITS[fit].loss(N, D):.3f}" if fit in FITS else "–"
        rows.append({t("lm.col.fit"): t(f"lm.fit.{fit}"), "N": sci(N), "D": sci(D), "D/N": f"{D / N:.1f}",
                     "6ND": sci(6 * N * D), t("lm.col.loss"): loss})
    art = article_rule(C)
    current["article"] = (art["N"], art["D"])
    rows.append({t("lm.col.fit"): t("lm.fit.article"), "N": sci(art["N"]), "D": sci(art["D"]), "D/N": "20.0",
                 "6ND": sci(art["spent"]), t("lm.col.loss"): "–"})
    Cs = np.logspace(18, 27, 60)
    frontiers = {fit: tuple(np.array([compute_optimal(c, fit)[i] for c in Cs]) for i in (0, 1)) for fit in RULES}
    names = {k: t(f"lm.fit.{k}") for k in (*RULES, "article")}
    labels = {"N": t("lm.axis.N"), "D": t("lm.axis.D"), "models": t("lm.models")}
    with figure:
        charts.plotly_chart(st, laws_figure(frontiers, current, MODELS, names, labels), key="lm.fig.laws")
        st.caption(t("lm.laws_help"))
    st.markdown(t("lm.laws_intro"))
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    st.caption(ratio_text(C))
    st.warning(t("lm.article_explain", n=sci(art["N"]), d=sci(art["D"]), spent=sci(art["spent"]),
                 n120=sci(current["rule20"][0]), d_kept=sci(art["D_if_budget_kept"])), icon=":material/calculate:")
    course_notes()
    inference_view(state, C)


def ratio_text(C: float) -> str:
    """The fits' tokens per parameter at budget C against the rule of 20 (sim.language.claims.tokens_per_param)."""
    items = []
    for fit in FITS:
        case, r = tokens_per_param(C, fit)
        items.append(t(f"lm.ratio.{case}", fit=t(f"lm.fit.{fit}"), r=f"{r:.1f}"))
    return " ".join([*items, t("lm.laws_ratio")])


def course_notes() -> None:
    """The article's Chinchilla and GPT-3 figures beside the published models' own, computed."""
    c, g3, go = (model_flops(name) for name in ("Chinchilla", "GPT-3", "Gopher"))
    course_note(t("lm.course.chinchilla.says"), t("lm.course.chinchilla.shows", chinchilla=sci(c), gpt3=sci(g3),
                                                  gopher=sci(go), r_gpt3=f"{c / g3:.2f}", r_gopher=f"{c / go:.2f}"))
    (_, N, D), pool = next(m for m in MODELS if m[0] == "GPT-3"), sum(GPT3_MIX.values())
    course_note(t("lm.course.gpt3.says"), t("lm.course.gpt3.shows", pool=pool, trained=f"{D / 1e9:g}", flops=sci(g3),
                                            share=f"{D / 1e9 / pool:.0%}", per_param=f"{D / N:.2f}",
                                            mix=t("lm.list_sep").join(f"{k} {b}" for k, b in GPT3_MIX.items())))


def inference_view(state: PageState, C: float) -> None:
    st.subheader(t("lm.inference_title"))
    c1, c2 = st.columns(2)
    fit = state.widget("fit", container=c1, options=("hoffmann", "epoch"))
    served = 10 ** state.widget("log_served", container=c2, help=t("lm.log_served.help"))
    r = inference_optimal(C, fit, served)
    c = st.columns(4)
    c[0].metric(t("lm.m.n_best"), sci(r["N"]), delta=f"{r['N'] / r['N_chinchilla'] - 1:+.0%}", delta_color="off")
    c[1].metric(t("lm.m.d_best"), sci(r["D"]), delta=f"{r['D'] / r['N']:.0f} D/N", delta_color="off")
    c[2].metric(t("lm.m.total"), sci(r["total"]))
    c[3].metric(t("lm.m.saved"), f"{1 - r['total'] / r['total_chinchilla']:.1%}")
    f = FITS[fit]
    N = np.logspace(math.log10(r["N_chinchilla"]) - 2.5, math.log10(r["N_chinchilla"]) + 0.7, 200)
    D = f.tokens_for(N, r["loss"])
    N, D = N[np.isfinite(D)], D[np.isfinite(D)]
    left, right = st.columns(2, gap="medium")  # each smaller than the laws figure above
    charts.plotly_chart(left, inference_figure(N, training_flops(N, D), serving_flops(N, served), r["N"],
                                               r["N_chinchilla"], {
        "N": t("lm.axis.N"), "flops": t("lm.axis.flops"), "train": t("lm.cost.train"), "serve": t("lm.cost.serve"),
        "total": t("lm.cost.total"), "best": t("lm.cost.best"), "chinchilla": t("lm.cost.chinchilla")}),
        key="lm.fig.inference")
    left.caption(t("lm.inference_help", loss=f"{r['loss']:.3f}"))
    with right:
        kaplan_view()
    plans_view(fit, served)


def kaplan_view() -> None:
    """Kaplan's L(N) beside Chinchilla's at 20 tokens per parameter."""
    st.subheader(t("lm.kaplan_title"))
    N = np.logspace(6, 12, 80)
    f = FITS["hoffmann"]
    charts.plotly_chart(st, kaplan_figure(N, kaplan_loss(N), f.loss(N, 20 * N), {
        "N": t("lm.axis.N"), "loss": t("lm.axis.loss"), "kaplan": t("lm.kaplan"), "chinchilla": t("lm.hoffmann20")}),
        key="lm.fig.kaplan")
    st.caption(t("lm.kaplan_help"))
