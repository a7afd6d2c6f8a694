"""The GPU lab's two presets: the seed's N = 100,000 that the naive implementation cannot hold (the arithmetic,
never run), and FlashAttention's Figure 2 setting measured here, or taken from the report shown."""
from __future__ import annotations

import streamlit as st

from labs.gpu.measure_common import (
    P,
    arithmetic,
    measure_all,
    plot_labels,
    plot_rows,
    run_table,
    show_guard,
    show_refusals,
    simulated,
)
from sim.core.text import md
from sim.gpu.bench import PRESETS
from sim.gpu.measure import free_memory, memory_needed
from sim.gpu.report import Report, fig2_config
from sim.plots.gpu_measure import fig2_figure
from sim.plots.shapes import human_bytes
from ui import charts
from ui.i18n import t
from ui.sidebar import cached_device

ss = st.session_state


def naive_dies() -> None:
    """The seed's N = 100,000: the arithmetic and the refusal, for one layer's heads; never run."""
    p = PRESETS["naive_dies"]
    cuda = cached_device().kind == "cuda"
    need = memory_needed(p["impl"], p["B"], p["H"], p["N"], p["d"], p["dtype"], p["causal"])
    free = free_memory(cuda)
    st.markdown(t(f"{P}.dies.intro", N=f"{p['N']:,}", H=p["H"], dtype=p["dtype"]))
    st.markdown(arithmetic({**need, "free_bytes": free}))
    if need["needed_bytes"] > free:
        st.error(t(f"{P}.dies.refused", needed=human_bytes(need["needed_bytes"]), free=human_bytes(free),
                   device=md(cached_device().name)), icon=":material/block:")


def fig2_preset(report: Report | None) -> None:
    """FlashAttention's Figure 2 setting: the paper's row, measured here (forward, forward + backward)."""
    cuda = cached_device().kind == "cuda"
    c = fig2_config(cuda)
    paper = PRESETS["flash_fig2"]["paper"]
    st.markdown(t(f"{P}.fig2.intro", std_gb=paper["standard"]["hbm_gb"], std_ms=paper["standard"]["runtime_ms"],
                  fa_gb=paper["flashattention"]["hbm_gb"], fa_ms=paper["flashattention"]["runtime_ms"]))
    if not cuda:
        st.info(t(f"{P}.fig2.reduced", B=c["B"], H=c["H"], dtype=c["dtype"]), icon=":material/computer:")
    if st.button(t(f"{P}.fig2.run"), icon=":material/speed:", key=f"{P}.fig2_run"):
        impls = ("naive", "sdpa_flash", "sdpa_math")
        ss[f"{P}.fig2"] = {**measure_all([(impl, c, backward) for backward in (False, True) for impl in impls]),
                           "config": c}
    done = ss.get(f"{P}.fig2")
    if done:
        show_guard(done)
    if done and done["runs"]:
        runs = done["runs"]
        show_refusals(runs)
        st.dataframe(run_table(runs, simulated(tuple(done["config"].items()))), hide_index=True,
                     key=f"{P}.fig2_table")
        forward, both = ([r for r in runs if r["backward"] is backward] for backward in (False, True))
        fig = fig2_figure(paper, plot_rows(forward), plot_rows(both), simulated(tuple(done["config"].items())),
                          plot_labels(cached_device().name))
        charts.plotly_chart(st, fig, key=f"{P}.fig2_fig")
    elif report and report.fig2:
        st.caption(t(f"{P}.fig2.from_report", device=md(report.device), date=md(report.date)))
        fig = fig2_figure(paper, plot_rows(report.fig2["forward"]), plot_rows(report.fig2["forward_backward"]),
                          plot_rows(report.fig2["traffic"]), plot_labels(report.device))
        charts.plotly_chart(st, fig, key=f"{P}.fig2_report_fig")
