"""The optimiser lab's other sections: momentum's theory on the quadratic, learning-rate schedules, state memory;
and the widgets whose range depends on other settings."""
import math

import numpy as np
import streamlit as st

from labs.optimizers.sched_race import schedules_race
from labs.optimizers.schema import PAGE, SCHEMA
from sim.core.data import n_classes
from sim.optim.claims import held_until, verdict
from sim.optim.optimizers import (
    OPTIMIZERS,
    SCHEDULES,
    STATE_BYTES,
    critical_beta,
    diverged_at,
    gd_optimal_rate,
    mlp_muon_split,
    momentum_rate,
    muon_state_bytes,
    optimal_momentum,
    path,
    phase_grid,
    schedule,
    schedule_args,
    surface,
)
from sim.plots.optimizers import (
    PICK,
    gb,
    memory_rows,
    momentum_latex,
    paths_figure,
    phase_chart,
    picked_point,
    schedule_figure,
    state_bytes_figure,
    steps_to,
)
from sim.plots.shapes import human_count
from sim.transformers.shapes import (
    ARTICLE_70B,
    PRESETS,
    TRAINING_STATE,
    bytes_per_param,
    hidden_matrix_params,
    param_counts,
    training_memory,
)
from ui import charts
from ui.i18n import large, t
from ui.urlstate import PageState, set_values

ss = st.session_state
PARTS = ("weights", "grads", "master", "optimizer", "total")  # the article gives the two moments as one
PHASE_GRID = (80, 45)  # cells of the phase diagram along α λₙ and β (clickable: each a mark in the browser)


def bounded(state: PageState, name: str, lo: float, hi: float, step: float, container=st, **kw):
    """A slider for a parameter whose range depends on other settings (the start within the surface's bounds)."""
    key, kind = state.key(name), type(lo)
    value = kind(min(hi, max(lo, state.values[name])))
    if key not in ss or not lo <= ss[key] <= hi:
        ss[key] = value
    value = container.slider(t(key), lo, hi, step=step, key=key, **kw)
    state.set(name, value)
    return value


def opt_names(opts) -> dict[str, str]:
    return {o: t(f"opt.opts.{o}") if o in OPTIMIZERS else t(f"opt.name.{o}") for o in opts}


def use_optimum(kappa: float) -> None:
    alpha, beta, _ = optimal_momentum(1.0, kappa)
    set_values(PAGE, SCHEMA, {"m_step": round(alpha * kappa, 2), "m_beta": round(beta, 2)})


def pick_phase() -> None:
    """A click on the phase diagram: its cell's α λₙ and β become the section's (and the URL's)."""
    step, beta = (p for p in SCHEMA if p.name in ("m_step", "m_beta"))
    point = picked_point(ss.get("opt.fig.phase"), (step.lo, beta.lo), (step.hi, beta.hi))
    if point is not None:
        set_values(PAGE, SCHEMA, {"m_step": point[0], "m_beta": point[1]})


def steps_text(rate: float) -> str:
    """Steps for the error to shrink 1000× at this rate; "never" where it does not shrink (ρ ≥ 1)."""
    steps = steps_to(rate)
    return f"{steps:,.0f}" if math.isfinite(steps) else t("opt.mom.never")


def momentum_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:
        kappa = state.widget("kappa", help=t("opt.kappa.help"), fold=False)
        step = state.widget("m_step", help=t("opt.m_step.help"), fold=False)
        beta = state.widget("m_beta", fold=False)
        st.button(t("opt.mom.optimum"), on_click=use_optimum, args=(kappa,), key="opt.optimum", width="stretch")
        with state.more(side):
            state.widget("angle")
            steps = state.widget("steps")
    alpha, ln = step / kappa, kappa
    with figure:
        momentum_path(kappa, alpha, beta, state.values["angle"], steps)
    st.markdown(t("opt.mom.intro"))
    best = optimal_momentum(1.0, ln)
    rates = (max(momentum_rate(alpha, beta, 1.0), momentum_rate(alpha, beta, ln)),
             max(momentum_rate(alpha, 0.0, 1.0), momentum_rate(alpha, 0.0, ln)))
    tex = momentum_latex(alpha, beta, kappa, best, gd_optimal_rate(1.0, ln),
                         (critical_beta(alpha, 1.0), critical_beta(alpha, ln)), rates)
    spiral = {True: t("opt.mom.spiral"), False: t("opt.mom.real")}
    left, right = st.columns(2, gap="medium")
    with left:
        st.latex(tex["eigen"])
        for key, b in (("gd", 0.0), ("momentum", beta)):  # each verdict read off the rate ρ written below
            st.markdown(t(f"opt.mom.{key}", verdict=t(f"opt.mom.verdict.{verdict(alpha, b, (1.0, ln))}")))
            st.latex(tex[key])
        st.markdown(t("opt.mom.critical", l1=spiral[beta > critical_beta(alpha, 1.0)],
                      ln=spiral[beta > critical_beta(alpha, ln)]))
        st.latex(tex["critical"])
        st.markdown(t("opt.mom.optimal"))
        st.latex(tex["optimal"])
        st.latex(tex["rates"])
        st.markdown(t("opt.mom.now", mom=steps_text(rates[0]), gd=steps_text(rates[1]), best=steps_text(best[2])))
        st.latex(tex["now"])
    alphas, betas = np.linspace(0.01, 4.0, PHASE_GRID[0]) / kappa, np.linspace(0.0, 0.99, PHASE_GRID[1])
    lab = {k: t(f"opt.phase.{k}") for k in ("alpha", "beta", "rate", "current", "optimum")}
    chart = phase_chart(alphas, betas, phase_grid(1.0, ln, alphas, betas), (alpha, beta), best[:2], lab, x_scale=kappa)
    charts.altair_chart(right, chart, key="opt.fig.phase", on_select=pick_phase, selection_mode=PICK, width="stretch")
    right.caption(t("opt.phase.help") + " " + t("opt.phase.click"))


def momentum_path(kappa: float, alpha: float, beta: float, angle: float, steps: int) -> None:
    """Heavy ball against plain gradient descent at this step size on the quadratic of condition number kappa."""
    surf = surface("quadratic", kappa, angle)
    runs = {"momentum": path("momentum", surf, None, steps, lr=alpha, beta=beta),
            "sgd": path("sgd", surf, None, steps, lr=alpha)}
    ends = {o: diverged_at(p) for o, p in runs.items()}
    names = {"momentum": t("opt.mom.heavy", beta=f"{beta:g}"), "sgd": t("opt.mom.plain")}
    lab = {k: t(f"opt.fig.{k}") for k in ("x", "y", "start", "minimum", "diverged", "play", "pause", "step")}
    charts.plotly_chart(st, paths_figure(surf, runs, names, lab, ends), key="opt.fig.mom_path")
    st.caption(t("opt.mom.path"))
    for o, k in ends.items():
        if k is not None:
            st.warning(t("opt.diverged", name=names[o], step=k, lr=f"{alpha:.4g}"), icon=":material/trending_up:")


def schedules_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:
        steps = state.widget("s_steps", fold=False)
        warmup = min(state.widget("s_warmup", fold=False), steps - 1)
        floor = state.widget("s_floor", help=t("opt.s_floor.help"), fold=False)
        decay = state.widget("s_decay", help=t("opt.s_decay.help"), fold=False)
    args = schedule_args(steps, warmup, floor, decay)
    curves = {name: schedule(name, steps, 1.0, **args[name]) for name in SCHEDULES}
    names = {name: t(f"opt.sched.{name}") for name in SCHEDULES}
    charts.plotly_chart(figure, schedule_figure(curves, names, {"step": t("opt.fig.step"), "lr": t("opt.sched.lr")}),
                        key="opt.fig.schedules")
    st.markdown(t("opt.sched.intro"))
    for name in SCHEDULES:
        st.markdown(f"**{names[name]}**: {t(f'opt.sched.{name}.when')}")
    schedules_race(state, steps, warmup, floor, decay, held_until(curves["wsd"]))


def muon_mixes(state: PageState) -> dict[str, tuple[int, int, float]]:
    """(parameters on Muon, all parameters, state bytes per parameter) of the race's model at its settings and of
    GPT-2 small: Muon takes the hidden matrices, AdamW the rest."""
    v, gpt2 = state.values, PRESETS["gpt2"]
    out = {"race": mlp_muon_split([2, v["r_width"], v["r_width"], n_classes(v["r_data"])]),
           "gpt2": (hidden_matrix_params(gpt2), param_counts(gpt2)["total"])}
    return {k: (a, b, muon_state_bytes(a, b)) for k, (a, b) in out.items()}


def memory_section(state: PageState) -> None:
    figure, side = state.stage()
    key = state.key("billions")
    if key not in ss:
        ss[key] = state.values["billions"]
    billions = side.number_input(t(key), 0.001, 10_000.0, step=1.0, format="%g", key=key,
                                 help=t("opt.billions.help"))
    state.set("billions", billions)
    n = billions * 1e9
    names = opt_names(STATE_BYTES)
    charts.plotly_chart(figure, state_bytes_figure(STATE_BYTES, names, {"bytes": t("opt.mem.bytes")}),
                        key="opt.fig.state")
    figure.caption(t("opt.mem.state_help"))
    st.markdown(t("opt.mem.intro"))
    mixes = muon_mixes(state)
    names["muon"] = t("opt.mem.muon_row")
    base = sum(b for k, b in TRAINING_STATE["mixed"].items() if not k.startswith("adam_"))
    rows = memory_rows(n, {**STATE_BYTES, "muon": round(mixes["gpt2"][2], 2)}, base)
    left, right = st.columns(2, gap="medium")  # below the stage: each table narrower than its figure
    left.dataframe({t("opt.mem.col.opt"): [names[r["optimizer"]] for r in rows],
                    t("opt.mem.col.bytes"): [r["bytes"] for r in rows],
                    t("opt.mem.col.state"): [r["state_gb"] for r in rows],
                    t("opt.mem.col.total", base=f"{base:g}"): [r["total_gb"] for r in rows]},
                   hide_index=True, key="opt.mem_df")
    right.markdown(t("opt.mem.muon_intro"))
    right.dataframe({t("opt.mem.col.model"): [t(f"opt.mem.model.{k}") for k in mixes],
                     t("opt.mem.col.params"): [human_count(m[1]) for m in mixes.values()],
                     t("opt.mem.col.on_muon"): [f"{m[0] / m[1]:.1%}" for m in mixes.values()],
                     t("opt.mem.col.bytes"): [f"{m[2]:.2f}" for m in mixes.values()]}, hide_index=True,
                    key="opt.muon_df")
    right.subheader(t("opt.mem.article", params=large(n)))
    article, mixed = training_memory(int(n), "article"), training_memory(int(n), "mixed")
    said = n == ARTICLE_70B["params"]
    table = {t("opt.mem.col.part"): [t(f"opt.mem.{k}") for k in PARTS],
             t("opt.mem.col.article", b=bytes_per_param("article")): [gb(article[k]) for k in PARTS],
             t("opt.mem.col.mixed", b=bytes_per_param("mixed")): [gb(mixed[k]) for k in PARTS]}
    if said:
        table[t("opt.mem.col.said")] = [gb(ARTICLE_70B[k]) if k in ARTICLE_70B else "–" for k in PARTS]
    right.dataframe(table, hide_index=True, key="opt.article_df")
    right.caption(t("opt.mem.note", article=gb(article["total"]), mixed=gb(mixed["total"]),
                 moments=gb(mixed["optimizer"]), said=gb(ARTICLE_70B["total"])))
