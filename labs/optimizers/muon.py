"""The optimiser lab's Muon section: a momentum matrix's singular values through the Newton–Schulz iteration, and
Muon (hidden matrix) + AdamW (the rest) against AdamW alone training the same small network."""
import numpy as np
import streamlit as st

from sim.optim.claims import APART, LEVEL, NEAR_ONE, Spectrum, final_losses, spectrum_reading
from sim.optim.muon import SCALED_FLOPS_SHARE, steps_to_reach
from sim.optim.optimizers import NS_COEFFICIENTS, NS_STEPS, low_rank_matrix, ns_spectrum
from sim.plots.optimizers import fmt, loss_figure, orthogonality_figure, singular_values_figure, spread
from ui import charts
from ui.course import course_note
from ui.i18n import t
from ui.urlstate import PageState

ss = st.session_state
TRAINED = "_opt.mu_trained"  # this session pressed "train" once: later setting changes retrain (cached)


@st.cache_data(max_entries=64, show_spinner=False)
def spectrum(rows: int, cols: int, rank: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    return ns_spectrum(low_rank_matrix(rows, cols, rank, noise, seed), NS_STEPS)


@st.cache_data(max_entries=32, show_spinner=False)
def training(dataset: str, seed: int, steps: int, muon_lr: float, adam_lr: float) -> dict:
    from sim.core.threads import configure_threads
    from sim.optim.muon import compare  # torch: loaded only when this section trains

    configure_threads()
    return compare(dataset, seed, steps, muon_lr, adam_lr)


def ns_latex(sv: np.ndarray, err: np.ndarray) -> str:
    a, b, c = NS_COEFFICIENTS
    return (r"\begin{aligned}X_0 &= M / \lVert M\rVert_F,\qquad X_{k+1} = aX_k + (bA_k + cA_k^2)X_k,\quad "
            rf"A_k = X_kX_k^\top,\quad (a, b, c) = ({a}, {fmt(b)}, {c}) \\ "
            rf"\sigma(X_0) &\in [{fmt(sv[0].min(), 3)},\ {fmt(sv[0].max(), 3)}],\quad "
            rf"\lVert X_0X_0^\top - I\rVert_F = {fmt(err[0], 3)} \\ "
            rf"\sigma(X_{NS_STEPS}) &\in [{fmt(sv[-1].min(), 3)},\ {fmt(sv[-1].max(), 3)}],\quad "
            rf"\lVert X_{NS_STEPS}X_{NS_STEPS}^\top - I\rVert_F = {fmt(err[-1], 3)}\end{{aligned}}")


def spectrum_caption(read: Spectrum) -> str:
    """The figure's caption: what its lines are, then what they show at step 0 and after the last step."""
    f = {k: fmt(v, 3) for k, v in (("top_lo", read.top[0]), ("top_hi", read.top[1]), ("rest", read.rest),
                                   ("lo", read.lo), ("hi", read.hi))}
    return " ".join((t("opt.mu.sv_help", n=read.n),
                     t(f"opt.mu.sv_start.{read.start}", rank=read.rank, apart=APART, **f),
                     t(f"opt.mu.sv_end.{read.end}", reached=read.n - read.low, low=read.low, near=NEAR_ONE, **f)))


def muon_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:
        rows, cols, rank = (state.widget(n, fold=False) for n in ("mu_rows", "mu_cols", "mu_rank"))
        with state.more(side):
            noise = state.widget("mu_noise", help=t("opt.mu_noise.help"))
            seed = state.widget("mu_seed")
    sv, err = spectrum(rows, cols, rank, noise, seed)
    lab = {"step": t("opt.mu.ns_step"), "sigma": t("opt.mu.sigma"), "one": t("opt.mu.one"),
           "error": t("opt.mu.error"), "spread": t("opt.mu.spread")}
    with figure:
        if rank > min(rows, cols):
            st.info(t("opt.mu.rank_capped", rank=rank, most=min(rows, cols)), icon=":material/info:")
        charts.plotly_chart(st, singular_values_figure(sv, lab), key="opt.fig.mu_sv")
        read = spectrum_reading(sv, rank)
        st.caption(spectrum_caption(read))
    if read.low:
        st.warning(t("opt.mu.not_reached", n=read.low, start=fmt(read.low_start, 3), near=NEAR_ONE),
                   icon=":material/warning:")
    left, right = st.columns(2, gap="medium")  # below the stage, smaller than the singular values
    charts.plotly_chart(left, orthogonality_figure(err, spread(sv), lab), key="opt.fig.mu_err")
    left.caption(t("opt.mu.err_help", lo=fmt(read.lo, 3), hi=fmt(read.hi, 3)))
    with right:
        st.markdown(t("opt.mu.intro"))
        st.latex(ns_latex(sv, err))
    st.markdown(t("opt.mu.why"))
    muon_note(training_part(state))


def muon_note(curves: dict | None) -> None:
    """The article's Muon attribution and FLOP saving beside the papers', and the same ratio measured here."""
    if curves is None:
        here = t("opt.course.muon.here_press")
    else:
        target, steps = float(curves["adamw"][-1]), len(curves["muon"]) - 1
        step = steps_to_reach(curves["muon"], target)
        here = (t("opt.course.muon.here_not", loss=fmt(target, 3), steps=steps) if step is None else
                t("opt.course.muon.here", loss=fmt(target, 3), step=step, steps=steps, share=f"{step / steps:.0%}"))
    course_note(t("opt.course.muon.says"), t("opt.course.muon.shows", share=f"{SCALED_FLOPS_SHARE:.0%}",
                                              saved=f"{1 - SCALED_FLOPS_SHARE:.0%}", here=here))


def training_caption(curves: dict) -> str:
    """The two final losses, which one ends lower (read off them; nothing where one is not a number: the warning
    says so), and what could change that."""
    adamw, muon = float(curves["adamw"][-1]), float(curves["muon"][-1])
    case = final_losses(adamw, muon)
    parts = [t("opt.mu.train_help", adamw=fmt(adamw, 3), muon=fmt(muon, 3), start=fmt(curves["adamw"][0], 3))]
    if case != "failed":
        parts.append(t(f"opt.mu.ends.{case}", level=LEVEL))
    return " ".join((*parts, t("opt.mu.train_try")))


def training_part(state: PageState) -> dict | None:
    """Muon + AdamW against AdamW trained on a click: the two loss curves (None before the first click)."""
    st.subheader(t("opt.mu.train"))
    st.markdown(t("opt.mu.train_intro"))
    with state.controls():
        c1, c2, c3, c4 = st.columns(4)
        dataset = state.widget("mu_data", container=c1)
        steps = state.widget("mu_steps", container=c2)
        muon_lr = state.widget("mu_lr", container=c3)
        adam_lr = state.widget("mu_adam_lr", container=c4)
    if st.button(t("opt.mu.run"), key="opt.mu_run", icon=":material/play_arrow:"):
        ss[TRAINED] = True
    if not ss.get(TRAINED):
        st.info(t("opt.mu.press"), icon=":material/info:")
        return None
    with st.spinner(t("opt.mu.training")):
        curves = training(dataset, state.values["mu_seed"], steps, muon_lr, adam_lr)
    names = {"adamw": t("opt.mu.adamw_only"), "muon": t("opt.mu.mixed")}
    bad = [names[k] for k, v in curves.items() if not np.isfinite(v).all()]
    if bad:
        st.warning(t("opt.mu.nan", names=", ".join(bad)), icon=":material/trending_up:")
    lab = {"step": t("opt.fig.step"), "loss": t("opt.mu.loss"), "diverged": t("opt.fig.diverged")}
    left, right = st.columns(2, gap="medium")  # below the stage: smaller than its figure
    charts.plotly_chart(left, loss_figure(curves, names, lab), key="opt.fig.mu_train")
    right.caption(training_caption(curves))
    return curves
