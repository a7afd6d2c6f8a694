"""The optimiser lab's Adam-against-AdamW section: L2 added to Adam's gradient against AdamW's decoupled weight
decay, on a loss whose two parameters have gradients of very different sizes."""
import numpy as np
import streamlit as st

from sim.optim.claims import GAP, ends
from sim.optim.optimizers import decay_comparison, gradient_ratio, scaled_quadratic
from sim.plots.optimizers import decay_figure, fmt, weights_figure
from ui import charts
from ui.i18n import t
from ui.urlstate import PageState

RULES = (r"\begin{aligned}\text{Adam + L2:}\quad g_t &\leftarrow \nabla L(\theta_{t-1}) + \lambda\theta_{t-1},\quad "
         r"\theta_t = \theta_{t-1} - \eta\,\hat m_t / (\sqrt{\hat v_t} + \epsilon)"
         r"\ \Rightarrow\ \text{decay} \approx \eta\lambda\theta_{t-1} / \sqrt{\hat v_t} \\ "
         r"\text{AdamW:}\quad \theta_t &= (1 - \eta\lambda)\,\theta_{t-1} - \eta\,\hat m_t / (\sqrt{\hat v_t} + "
         r"\epsilon)\ \Rightarrow\ \text{decay} = \eta\lambda\theta_{t-1}\end{aligned}")

THETA = {1: "θ₁", 2: "θ₂"}


@st.cache_data(max_entries=64, show_spinner=False)
def runs(scale: float, lr: float, weight_decay: float, steps: int) -> dict:
    return decay_comparison(scale, lr, weight_decay, steps)


def ends_text(adam: np.ndarray, adamw: np.ndarray) -> str:
    """Where each run's two weights end, and whether they end alike or apart (read off those numbers)."""
    parts = [t("opt.dec.ends", a1=fmt(adam[0], 3), a2=fmt(adam[1], 3), w1=fmt(adamw[0], 3), w2=fmt(adamw[1], 3))]
    for opt, theta in (("adam", adam), ("adamw", adamw)):
        e = ends(theta)
        parts.append(t(f"opt.dec.{opt}_ends.{e.case}", low=THETA[e.low], high=THETA[3 - e.low], gap=fmt(e.gap, 3),
                       near=GAP))
    return " ".join(parts)


def decay_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:
        scale = state.widget("d_scale", help=t("opt.d_scale.help"), fold=False)
        lam = state.widget("d_lambda", fold=False)
        lr = state.widget("d_lr", fold=False)
        with state.more(side):
            steps = state.widget("d_steps")
    out = runs(scale, lr, lam, steps)
    names = {"adam": t("opt.dec.adam"), "adamw": t("opt.opts.adamw")}
    lab = {"step": t("opt.fig.step"), "weight": t("opt.dec.weight"), "theta1": t("opt.dec.theta1"),
           "theta2": t("opt.dec.theta2"), "target": t("opt.dec.target"), "decay": t("opt.dec.decay"),
           "reference": t("opt.dec.reference", ref=fmt(lr * lam))}
    charts.plotly_chart(figure, decay_figure({o: r["effective"] for o, r in out.items()}, names, lab, lr * lam),
                        key="opt.fig.dec_decay")
    figure.caption(t("opt.dec.decay_help"))
    a, w = out["adam"], out["adamw"]
    ratio = a["effective"].max() / max(a["effective"].min(), 1e-300)
    if scale == 1.0:
        st.info(t("opt.dec.same_scale"), icon=":material/info:")
    st.markdown(t("opt.dec.numbers", a1=fmt(a["effective"][0], 3), a2=fmt(a["effective"][1], 3),
                  ratio=f"{ratio:,.3g}", w=fmt(w["effective"][0], 3), ref=fmt(lr * lam)))
    left, right = st.columns(2, gap="medium")  # below the stage, each smaller than the decay figure
    charts.plotly_chart(left, weights_figure({o: r["path"] for o, r in out.items()}, names, lab),
                        key="opt.fig.dec_weights")
    left.caption(t("opt.dec.weights_help"))
    left.markdown(ends_text(a["path"][-1], w["path"][-1]))
    with right:
        st.markdown(t("opt.dec.intro"))
        st.latex(rf"L(\theta) = \tfrac12\big(s^2(\theta_1 - 1)^2 + (\theta_2 - 1)^2 / s^2\big),"
                 rf"\quad s = {fmt(scale)},\quad "
                 rf"\frac{{|\partial L / \partial\theta_1|}}{{|\partial L / \partial\theta_2|}}"
                 rf"\Big|_{{\theta = (0, 0)}} = s^4 = "
                 rf"{fmt(gradient_ratio(scaled_quadratic(scale)))}")
        st.latex(RULES)
    st.markdown(t("opt.dec.why"))
