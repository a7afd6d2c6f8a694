"""GPU memory hierarchy lab: the bytes one attention pass moves, simulated tile by tile and measured here."""
import streamlit as st

from labs.gpu.controls import controls
from labs.gpu.course import roof_note, sram_correction
from labs.gpu.measure import measure_section
from labs.gpu.memsim_view import show_animation
from labs.gpu.schema import PAGE, SCHEMA
from labs.gpu.simulated import (
    SWEEP_N,
    SWEEP_SRAM,
    below,
    n_sweep_text,
    problems,
    simulate,
    simulation,
    sram_text,
    summary,
)
from sim.gpu.memsim import GPUS, MemsimError, gpu_for, query_block_cap_sram, roofline
from sim.gpu.sweeps import Chip, SweepPoint, n_sweep, sram_sweep
from sim.plots.gpu import bytes_vs_n_figure, bytes_vs_sram_figure, roofline_figure
from sim.plots.shapes import human_count
from ui import charts
from ui.i18n import t
from ui.sidebar import cached_device
from ui.urlstate import PageState

# each simulated view's main controls, beside its figure: what changes that figure most
MAIN = {"animate": ("algo", "N", "causal", "speed"), "sweep": ("N", "d", "sram_kib", "l2"),
        "roofline": ("gpu", "N", "d", "l2")}
STAGE_HEIGHT = 400  # px: a view's main Plotly figure (its legend takes two rows), taller than those below it


def animate_view(state: PageState) -> None:
    figure, side = state.stage()
    controls(state, side, MAIN["animate"])
    sim = simulation(state.values)
    v = sim.v
    with figure:
        problems(sim)
        try:
            report = simulate(v["algo"], v["N"], v["d"], sim.key, sim.chip, sim.chip.l2_bytes is not None,
                              animate=True)
        except MemsimError:  # the message is already shown above
            st.info(t("gpu.anim_refused"), icon=":material/block:")
        else:
            show_animation(report, speed=v["speed"], key="gpu.anim")
    below(sim)


def sweep_view(state: PageState) -> None:
    figure, side = state.stage()
    controls(state, side, MAIN["sweep"])
    sim = simulation(state.values)
    v, config, chip, reports = sim.v, sim.config, sim.chip, sim.reports
    labels = {k: t(f"gpu.sweep.{k}") for k in ("naive", "tiled", "naive_l2", "tiled_l2", "tiled_l2_traffic", "n2",
                                               "n1", "x_n", "y_bytes", "title_n", "paper_blocks", "square_blocks",
                                               "law", "x_sram", "title_sram")}
    points = [sweep_point(N, v["d"], sim.key, chip) for N in sorted({*SWEEP_N, v["N"]})]
    with figure:
        problems(sim)
        charts.plotly_chart(st, bytes_vs_n_figure(points, labels, STAGE_HEIGHT), key="gpu.sweep_n")
        modelled = [p.value for p in points if p.naive_hbm_l2 is not None]
        if chip.l2_bytes and len(modelled) < len(points):
            st.caption(t("gpu.sweep.l2_cut", N=f"{max(modelled):,}" if modelled else "—"))
        if reports["tiled"]:
            st.caption(" ".join([t("gpu.sweep.n_note", factor=f"{2 * reports['tiled'].block_m / v['d']:g}"),
                                 *n_sweep_text(points, v, chip, reports["tiled"].block_m)]))
    left, right = st.columns(2, gap="medium")  # below the stage: half as wide as the sweep over N
    sizes = sorted({*SWEEP_SRAM, chip.sram_bytes})
    points = sram_sweep(sizes, v["N"], v["d"], config["batch_heads"], config["dtype_bytes"], config["causal"])
    charts.plotly_chart(left, bytes_vs_sram_figure(points, reports["naive"].hbm_bytes, labels), key="gpu.sweep_sram")
    left.caption(sram_text(points, v, query_block_cap_sram(v["d"], config["dtype_bytes"])))
    with right:
        sram_correction()
    summary(v, reports, sim.with_l2, chip)


@st.cache_data(max_entries=512, show_spinner=False)
def sweep_point(N: int, d: int, config: tuple, chip: Chip) -> SweepPoint:
    """One N of the sweep, cached alone: a new N costs one point, not the whole sweep."""
    return n_sweep([N], d, dict(config), chip)[0]


def roofline_view(state: PageState) -> None:
    figure, side = state.stage()
    controls(state, side, MAIN["roofline"])
    sim = simulation(state.values)
    spec = GPUS[sim.v["gpu"]]
    reports = sim.reports
    points = {algo: roofline(r, spec.hbm_bytes_per_s, spec.peak_flops) for algo, r in reports.items() if r}
    points |= {f"{algo}_l2": roofline(r, spec.hbm_bytes_per_s, spec.peak_flops) for algo, r in sim.with_l2.items()
               if r}
    labels = {k: t(f"gpu.roof.{k}") for k in ("roof", "ridge", "x_intensity", "y_flops", "naive", "tiled",
                                              "naive_l2", "tiled_l2")}
    labels["title_roofline"] = t("gpu.roof.title", gpu=spec.name, bw=f"{spec.hbm_bytes_per_s / 1e12:.2f}",
                                 peak=f"{spec.peak_flops / 1e12:.0f}")
    with figure:
        problems(sim)
        charts.plotly_chart(st, roofline_figure(spec, points, labels, STAGE_HEIGHT), key="gpu.roofline")
        here = cached_device()
        mine = gpu_for(here.name) if here.kind == "cuda" else None
        if mine and mine is not spec:  # a roofline of the device this page runs on is one click away
            st.caption(t("gpu.roof.this_device", device=here.name,
                         gpu=next(k for k, g in GPUS.items() if g is mine)))
    col = {k: t(f"gpu.roof.col.{k}") for k in ("pass", "flops", "intensity", "memory_ms", "compute_ms", "bound")}
    rows = [{col["pass"]: labels[name], col["flops"]: human_count(reports[name.split("_")[0]].flops),
             col["intensity"]: f"{r.intensity:.1f}", col["memory_ms"]: f"{r.memory_time_s * 1e3:.3f}",
             col["compute_ms"]: f"{r.compute_time_s * 1e3:.3f}", col["bound"]: t(f"gpu.roof.bound.{r.bound}")}
            for name, r in points.items()]
    left, right = st.columns([3, 2], gap="medium")
    left.dataframe(rows, key="gpu.roof_table", hide_index=True)
    right.caption(roof_note())
    below(sim)


VIEWS = {"animate": animate_view, "sweep": sweep_view, "roofline": roofline_view, "measure": measure_section}


def main() -> None:
    PageState(PAGE, SCHEMA).sections(t("gpu.title"), t("gpu.intro"), VIEWS, t("gpu.about"), switch="view")


main()
