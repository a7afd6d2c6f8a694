"""GPU memory hierarchy lab: the bytes one attention pass moves, simulated tile by tile and measured here."""
import streamlit as st

from labs.gpu.course import roof_note, sram_correction, tiling_text
from labs.gpu.measure import measure_section
from labs.gpu.memsim_view import show_animation
from labs.gpu.schema import PAGE, SCHEMA
from sim.gpu.bench import PRESETS as BENCH_PRESETS
from sim.gpu.measure import DTYPE_BYTES
from sim.gpu.memsim import GPUS, IOReport, MemsimError, gpu_for, query_block_cap_sram, roofline
from sim.gpu.sweeps import Chip, SweepPoint, io_report, lab_reports, n_sweep, sram_sweep
from sim.plots.gpu import bytes_vs_n_figure, bytes_vs_sram_figure, roofline_figure
from sim.plots.shapes import human_bytes, human_count
from ui import charts
from ui.i18n import t
from ui.sidebar import cached_device
from ui.urlstate import PageState, set_values

SIZES = ("B", "H", "N", "d", "dtype", "causal")  # what a preset sets
PRESETS = {"default": {p.name: p.default for p in SCHEMA if p.name in SIZES},
           **{name: {k: BENCH_PRESETS[name][k] for k in SIZES} for name in ("naive_dies", "flash_fig2")}}
SWEEP_N = [2**k for k in range(8, 18)]  # 256 … 131,072 tokens
SWEEP_SRAM = [2**k * 1024 for k in range(2, 11)]  # 4 KiB … 1 MiB
SMEM = {key: human_bytes(g.smem_per_sm_bytes) for key, g in GPUS.items()}  # the SRAM help's figures, per SM
ss = st.session_state


def apply_preset(name: str) -> None:
    set_values(PAGE, SCHEMA, PRESETS[name])


def controls(state: PageState) -> None:
    bar = st.container(horizontal=True, vertical_alignment="center")
    bar.caption(t("gpu.presets"))
    for name in PRESETS:
        bar.button(t(f"gpu.preset.{name}"), on_click=apply_preset, args=(name,), key=f"gpu.preset_{name}")
    auto = {"format_func": lambda b: t("gpu.auto") if b == 0 else str(b)}
    rows = (((("N", {}), ("d", {}), ("B", {}), ("H", {}), ("dtype", {}), ("causal", {})), [1] * 6),
            ((("gpu", {}), ("l2", {}), ("sram_kib", {}), ("block_m", auto), ("block_n", auto)), [5, 4, 4, 4, 4]))
    for row, widths in rows:
        for col, (name, kw) in zip(st.columns(widths, vertical_alignment="bottom"), row, strict=True):
            state.widget(name, container=col, help=t(f"gpu.{name}.help", **SMEM), **kw)


def io_config(v: dict) -> dict:
    """attention_io's keywords for the page's sizes (the SRAM and L2 come from the Chip)."""
    return {"batch_heads": v["B"] * v["H"], "dtype_bytes": DTYPE_BYTES[v["dtype"]], "causal": v["causal"],
            "block_m": v["block_m"] or None, "block_n": v["block_n"] or None}


@st.cache_data(max_entries=128, show_spinner=False)
def simulate(algo: str, N: int, d: int, config: tuple, chip: Chip, l2: bool, animate: bool = False) -> IOReport:
    """sim.gpu.sweeps.io_report, cached per session-independent key (config as a tuple of items)."""
    return io_report(algo, N, d, dict(config), chip, l2, animate)


def error_text(e: MemsimError) -> str:
    params = {k: human_bytes(v) if k in ("needed", "available") else v for k, v in e.params.items()}
    return t(f"gpu.error.{e.code}", **params)


def summary(v: dict, reports: dict[str, IOReport | None], with_l2: dict[str, IOReport | None], chip: Chip) -> None:
    naive, tiled = reports["naive"], reports["tiled"]
    cols = st.columns(4)
    cols[0].metric(t("gpu.metric.naive"), human_bytes(naive.hbm_bytes),
                   help=t("gpu.metric.naive_help", reads=human_bytes(naive.hbm_read_bytes),
                          writes=human_bytes(naive.hbm_write_bytes)))
    if tiled:
        cols[1].metric(t("gpu.metric.tiled"), human_bytes(tiled.hbm_bytes),
                       help=t("gpu.metric.tiled_help", reads=human_bytes(tiled.hbm_read_bytes),
                              writes=human_bytes(tiled.hbm_write_bytes)))
        cols[2].metric(t("gpu.metric.ratio"), f"{naive.hbm_bytes / tiled.hbm_bytes:,.1f}×")
        cols[3].metric(t("gpu.metric.sram", m=human_bytes(chip.sram_bytes)), human_bytes(tiled.sram_bytes_needed),
                       help=t("gpu.metric.sram_help", bm=tiled.block_m, bn=tiled.block_n, d=v["d"]))
    if any(with_l2.values()):
        cols = st.columns(4)
        for col, algo in zip(cols, ("naive", "tiled"), strict=False):
            r = with_l2[algo]
            if r:
                col.metric(t(f"gpu.metric.{algo}_l2"), human_bytes(r.hbm_bytes),
                           help=t("gpu.metric.l2_help", l2=human_bytes(chip.l2_bytes), sms=chip.n_sm))
        if with_l2["tiled"]:
            cols[2].metric(t("gpu.metric.l2_traffic"), human_bytes(with_l2["tiled"].l2_read_bytes),
                           help=t("gpu.metric.l2_traffic_help"))
        if all(with_l2.values()):
            ratio = with_l2["naive"].hbm_bytes / with_l2["tiled"].hbm_bytes
            cols[3].metric(t("gpu.metric.ratio_l2"), f"{ratio:,.1f}×")
    st.caption(t("gpu.simulated_note", bh=v["B"] * v["H"], B=v["B"], H=v["H"]))
    with st.expander(t("gpu.arithmetic")):
        key = "gpu.arithmetic.naive_causal" if v["causal"] else "gpu.arithmetic.naive"
        st.markdown(t(key, N=f"{v['N']:,}", d=v["d"], bh=v["B"] * v["H"],
                      bytes=DTYPE_BYTES[v["dtype"]], reads=f"{naive.read_elements_per_head:,}",
                      writes=f"{naive.write_elements_per_head:,}", total=human_bytes(naive.hbm_bytes)))
        if tiled:
            kv = tiled.hbm_read_by_tensor["K"] // (tiled.dtype_bytes * tiled.batch_heads * v["d"])
            st.markdown(t("gpu.arithmetic.tiled", N=f"{v['N']:,}", d=v["d"], bm=tiled.block_m, bn=tiled.block_n,
                          t_r=tiled.t_r, kv=f"{kv:,}", total=human_bytes(tiled.hbm_bytes)))
            st.markdown(tiling_text(tiled, chip.sram_bytes))


def animate(state: PageState, v: dict, config: tuple, chip: Chip) -> None:
    left, right = st.columns([1, 3], vertical_alignment="bottom")
    state.widget("algo", container=left)
    state.widget("speed", container=right, help=t("gpu.speed.help"))
    try:
        report = simulate(v["algo"], v["N"], v["d"], config, chip, chip.l2_bytes is not None, animate=True)
    except MemsimError:  # the message is already shown above the views
        st.info(t("gpu.anim_refused"), icon=":material/block:")
        return
    show_animation(report, speed=v["speed"], key="gpu.anim")


def sweeps(v: dict, config: dict, chip: Chip, reports: dict) -> None:
    labels = {k: t(f"gpu.sweep.{k}") for k in ("naive", "tiled", "naive_l2", "tiled_l2", "tiled_l2_traffic", "n2",
                                               "n1", "x_n", "y_bytes", "title_n", "paper_blocks", "square_blocks",
                                               "law", "x_sram", "title_sram")}
    points = [sweep_point(N, v["d"], tuple(config.items()), chip) for N in sorted({*SWEEP_N, v["N"]})]
    left, right = st.columns(2, gap="medium")
    charts.plotly_chart(left, bytes_vs_n_figure(points, labels), key="gpu.sweep_n")
    modelled = [p.value for p in points if p.naive_hbm_l2 is not None]
    if chip.l2_bytes and len(modelled) < len(points):
        left.caption(t("gpu.sweep.l2_cut", N=f"{max(modelled):,}" if modelled else "—"))
    if reports["tiled"]:
        left.caption(t("gpu.sweep.n_note", factor=f"{2 * reports['tiled'].block_m / v['d']:g}"))
    sizes = sorted({*SWEEP_SRAM, chip.sram_bytes})
    points = sram_sweep(sizes, v["N"], v["d"], config["batch_heads"], config["dtype_bytes"], config["causal"])
    charts.plotly_chart(right, bytes_vs_sram_figure(points, reports["naive"].hbm_bytes, labels), key="gpu.sweep_sram")
    knee = query_block_cap_sram(v["d"], config["dtype_bytes"])
    right.caption(t("gpu.sweep.sram_note", d=v["d"], knee=human_bytes(knee)))


@st.cache_data(max_entries=512, show_spinner=False)
def sweep_point(N: int, d: int, config: tuple, chip: Chip) -> SweepPoint:
    """One N of the sweep, cached alone: a new N costs one point, not the whole sweep."""
    return n_sweep([N], d, dict(config), chip)[0]


def roofline_view(v: dict, reports: dict, with_l2: dict) -> None:
    spec = GPUS[v["gpu"]]
    points = {algo: roofline(r, spec.hbm_bytes_per_s, spec.peak_flops) for algo, r in reports.items() if r}
    points |= {f"{algo}_l2": roofline(r, spec.hbm_bytes_per_s, spec.peak_flops) for algo, r in with_l2.items() if r}
    labels = {k: t(f"gpu.roof.{k}") for k in ("roof", "ridge", "x_intensity", "y_flops", "naive", "tiled",
                                              "naive_l2", "tiled_l2")}
    labels["title_roofline"] = t("gpu.roof.title", gpu=spec.name, bw=f"{spec.hbm_bytes_per_s / 1e12:.2f}",
                                 peak=f"{spec.peak_flops / 1e12:.0f}")
    left, right = st.columns([3, 2], gap="medium")
    charts.plotly_chart(left, roofline_figure(spec, points, labels), key="gpu.roofline")
    here = cached_device()
    mine = gpu_for(here.name) if here.kind == "cuda" else None
    if mine and mine is not spec:  # a roofline of the device this page runs on is one click away
        left.caption(t("gpu.roof.this_device", device=here.name, gpu=next(k for k, g in GPUS.items() if g is mine)))
    col = {k: t(f"gpu.roof.col.{k}") for k in ("pass", "flops", "intensity", "memory_ms", "compute_ms", "bound")}
    rows = [{col["pass"]: labels[name], col["flops"]: human_count(reports[name.split("_")[0]].flops),
             col["intensity"]: f"{r.intensity:.1f}", col["memory_ms"]: f"{r.memory_time_s * 1e3:.3f}",
             col["compute_ms"]: f"{r.compute_time_s * 1e3:.3f}", col["bound"]: t(f"gpu.roof.bound.{r.bound}")}
            for name, r in points.items()]
    right.dataframe(rows, key="gpu.roof_table", hide_index=True)
    right.caption(roof_note())


def main() -> None:
    state = PageState(PAGE, SCHEMA)
    with state.frame(t("gpu.title"), t("gpu.intro")):
        sram_correction()
        with state.controls():
            controls(state)
        v = state.values
        spec = GPUS[v["gpu"]]
        chip = Chip(v["sram_kib"] * 1024, spec.l2_bytes if v["l2"] else None, spec.n_sm)
        config = io_config(v)
        key = tuple(config.items())
        lab = lab_reports(v["N"], v["d"], config, chip, lambda algo, l2: simulate(algo, v["N"], v["d"], key, chip, l2))
        reports: dict[str, IOReport | None] = {}
        for algo, r in lab.two_level.items():
            if isinstance(r, MemsimError):
                st.error(error_text(r), icon=":material/error:")
            reports[algo] = r if isinstance(r, IOReport) else None
        for algo in lab.l2_skipped:
            st.info(t("gpu.l2_skipped", algo=t(f"gpu.algo.{algo}"), bh=config["batch_heads"]),
                    icon=":material/hourglass_disabled:")
        with_l2 = lab.with_l2
        summary(v, reports, with_l2, chip)
        view = state.widget("view", fold=False)
        if view == "animate":
            animate(state, v, key, chip)
        elif view == "sweep":
            sweeps(v, config, chip, reports)
        elif view == "roofline":
            roofline_view(v, reports, with_l2)
        else:
            measure_section(state)


main()
