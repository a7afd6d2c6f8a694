"""The GPU lab's measure view: attention timed on this machine (one size, a sweep over N), the measurement
reports (bundled or uploaded, labs.gpu.measure_reports) and the two presets (labs.gpu.measure_presets), every
number with the label of where it came from."""
from __future__ import annotations

import streamlit as st

from labs.gpu.controls import controls
from labs.gpu.measure_common import P, measure_all, run_table, scaling, show_guard, show_refusals, simulated
from labs.gpu.measure_presets import fig2_preset, naive_dies
from labs.gpu.measure_reports import bundled_pick, reports, sweep_runs, uploaded
from sim.core.text import md
from sim.gpu.report import run_config
from ui import layout
from ui.i18n import t
from ui.schema import parse_value
from ui.sidebar import cached_device
from ui.urlstate import PageState

ss = st.session_state
MAIN_HEIGHT = 460  # px: the stage's time figure, as tall as the first screen allows (the others are 360-440)


def ns_input(state: PageState) -> tuple[int, ...]:
    """The list of N for the sweep, typed as "256, 512, 1024"; a bad list is reported and the last good one kept."""
    param, key = state.params["ns"], state.key("ns")
    if key not in ss:
        ss[key] = ", ".join(map(str, state.values["ns"]))
    text = st.text_input(t("gpu.ns"), key=key, help=t(f"{P}.ns_help", lo=param.lo, hi=f"{param.hi:,}",
                                                     n=param.max_len), max_chars=8 * param.max_len)
    try:
        ns = parse_value(param, text.replace(" ", "")) if text.strip() else ()
        if not ns:
            raise ValueError(text)
    except (ValueError, OverflowError):
        st.error(t(f"{P}.ns_bad", text=md(text[:60]), lo=param.lo, hi=f"{param.hi:,}", n=param.max_len,
                   kept=", ".join(map(str, state.values["ns"]))), icon=":material/error:")
        return state.values["ns"]
    state.set("ns", tuple(sorted(set(ns))))
    return state.values["ns"]


def measure_now(state: PageState, c: dict) -> None:
    st.subheader(t(f"{P}.now"))
    st.caption(t(f"{P}.now_help", B=c["B"], H=c["H"], N=f"{c['N']:,}", d=c["d"], dtype=c["dtype"],
                 causal=t(f"{P}.causal.{c['causal']}"), bm=c["block_m"], bn=c["block_n"]))
    impls = state.values["impls"]
    if st.button(t(f"{P}.run"), icon=":material/speed:", type="primary", key=f"{P}.run", disabled=not impls):
        ss[f"{P}.now"] = {**measure_all([(impl, c, False) for impl in impls]), "config": c}
    done = ss.get(f"{P}.now")
    if done:
        show_guard(done)
        show_refusals(done["runs"])
        st.dataframe(run_table(done["runs"], simulated(tuple(done["config"].items()))), hide_index=True,
                     key=f"{P}.now_table")


def measure_section(state: PageState) -> None:
    """The measure view of the GPU lab, for the page's configuration in `state`: time against N on the stage (this
    session's sweep once it has one, else the report shown), the report's choice and the sweep's controls beside it;
    one size measured now, the report's other figures and the two presets below."""
    device = cached_device()
    cuda = device.kind == "cuda"
    figure, side = state.stage()
    main = side.container()  # the main controls, above "More settings" (which holds the upload they depend on)
    loaded = controls(state, side, (), more=uploaded)
    with main:
        shown = loaded or bundled_pick()
        state.widget("impls", fold=False)
        ns = ns_input(state)
        impls = state.values["impls"]
        clicked = st.button(t(f"{P}.sweep_run", n=len(ns)), icon=":material/stacked_line_chart:",
                            key=f"{P}.sweep_run", disabled=not impls)
    c = run_config(state.values, cuda)
    memory, notes = st.columns(2, gap="medium")  # below the stage: the sweep's memory figure, the device
    with figure:
        if clicked:
            configs = [{**c, "N": N} for N in ns]
            ss[f"{P}.sweep"] = {**measure_all([(impl, cfg, False) for cfg in configs for impl in impls]),
                                "configs": configs}
        done = ss.get(f"{P}.sweep")
        if done:
            show_guard(done)
            show_refusals([r for r in done["runs"] if r["error"] not in (None, "unavailable")])
            sims = [row for cfg in done["configs"] for row in simulated(tuple(cfg.items()))]
            scaling(done["runs"], sims, device.name, "sweep", (figure, memory), MAIN_HEIGHT)
            st.caption(t(f"{P}.stage_own", device=md(device.name)))
        elif shown is not None and sweep_runs(shown):
            scaling(*sweep_runs(shown), shown.device, "stage", (figure, memory), MAIN_HEIGHT)
            st.caption(t(f"{P}.stage_report", device=md(shown.device), date=md(shown.date),
                         button=t(f"{P}.sweep_run", n=len(ns))))
        else:
            st.info(t(f"{P}.stage_none"), icon=":material/info:")
    with notes:
        st.info(t(f"{P}.device_{device.kind}", name=md(device.name)), icon=":material/memory:")
        if not cuda and state.values["dtype"] != "float32":
            st.caption(t(f"{P}.cpu_float32", dtype=state.values["dtype"]))
    measure_now(state, c)
    reports(shown, "upload" if loaded else "bundled", sweep=bool(done))
    st.subheader(t(f"{P}.presets"))
    wide, _ = st.columns(layout.STAGE, gap="medium")  # Fig. 2's figure as wide as the main one, and shorter
    with wide.expander(t(f"{P}.dies.title"), expanded=True):
        naive_dies()
    with wide.expander(t(f"{P}.fig2.title"), expanded=True):
        fig2_preset(shown)
