"""The attention lab's permutation check: the article's "invariant" claim next to the correction, on the user's
tokens (the pipeline's layer without position encoding and without a mask)."""
import streamlit as st

from sim.core.text import html
from sim.plots.attention import permutation_figures
from sim.transformers.attention import permutation_check, permutation_stats
from sim.transformers.claims import PermutationReading, permutation_reading
from ui import charts
from ui.i18n import t
from ui.urlstate import PageState

GAPS = ("equivariance", "invariance", "positions")


def permutation_section(state: PageState, tokens: list[str]) -> None:
    """The course's statement and the correction side by side, then the check on `tokens` with the pipeline's
    width, heads, seed, scaling and temperature."""
    v = state.values
    st.subheader(t("att.perm_title"))
    course, fix = st.columns(2)
    course.info(t("att.perm_course"))
    fix.success(t("att.perm_fix"))
    kind = state.widget("perm", container=st.columns([2, 1])[0])
    check = permutation_check(tokens, v["d_model"], v["heads"], v["seed"], kind, v["scale"], v["temperature"])
    r = permutation_reading(check)
    if r.same:
        st.info(t("att.perm_same"))
    stats = permutation_stats(check)
    for col, key in zip(st.columns(len(GAPS)), GAPS, strict=True):
        col.metric(t(f"att.perm_metric.{key}"), stats[key], help=t(f"att.perm_metric.{key}_help"))
    if not r.same:  # the same sequence: every gap is rounding, and the notice above says why
        st.markdown(verdict(r))
    figs = permutation_figures(check.output.numpy(), check.permuted_output.numpy(), [html(x, 20) for x in tokens],
                               [html(x, 20) for x in check.permuted_tokens],
                               {k: t(f"att.perm_fig.{k}") for k in ("before", "after")})
    for col, fig, key in zip(st.columns(2), figs, ("before", "after"), strict=True):
        charts.plotly_chart(col, fig, key=f"att.fig.perm_{key}")
    st.caption(t("att.perm_help"))


def verdict(r: PermutationReading) -> str:
    """What the three gaps show, each read against float rounding."""
    return " ".join((t(f"att.perm_verdict.eq.{'yes' if r.equivariant else 'no'}"),
                     t(f"att.perm_verdict.inv.{'moved' if r.moved else 'kept'}"),
                     t(f"att.perm_verdict.pos.{'broken' if r.broken else 'kept'}")))
