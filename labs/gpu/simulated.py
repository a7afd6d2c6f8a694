"""The GPU lab's simulated views' shared part: the IO model of the page's sizes on the chip modelled (every report
cached across sessions), why an algorithm has no figures, and the bytes of both with their arithmetic."""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from labs.gpu.course import sram_correction, tiling_text
from sim.gpu.claims import n_sweep_reading, sram_reading
from sim.gpu.measure import DTYPE_BYTES
from sim.gpu.memsim import GPUS, IOReport, MemsimError
from sim.gpu.sweeps import Chip, SramPoint, SweepPoint, io_report, lab_reports
from sim.plots.shapes import human_bytes
from ui.i18n import t

SWEEP_N = [2**k for k in range(8, 18)]  # the sweep over N: 256 … 131,072 tokens
SWEEP_SRAM = [2**k * 1024 for k in range(2, 11)]  # the sweep over the SRAM: 4 KiB … 1 MiB


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


@dataclass
class Sim:
    """The IO model of the page's sizes on the chip modelled: each algorithm's report (None: it cannot run, the
    message says why), and with the L2 modelled too."""

    v: dict
    chip: Chip
    config: dict
    reports: dict[str, IOReport | None]
    with_l2: dict[str, IOReport | None]
    errors: list[MemsimError]
    l2_skipped: tuple[str, ...]

    @property
    def key(self) -> tuple:
        return tuple(self.config.items())


def simulation(v: dict) -> Sim:
    """The IO model of the page's values `v` (cached per report: every view and session shares them)."""
    spec = GPUS[v["gpu"]]
    chip = Chip(v["sram_kib"] * 1024, spec.l2_bytes if v["l2"] else None, spec.n_sm)
    config = io_config(v)
    key = tuple(config.items())
    lab = lab_reports(v["N"], v["d"], config, chip, lambda algo, l2: simulate(algo, v["N"], v["d"], key, chip, l2))
    reports = {algo: r if isinstance(r, IOReport) else None for algo, r in lab.two_level.items()}
    errors = [r for r in lab.two_level.values() if isinstance(r, MemsimError)]
    return Sim(v, chip, config, reports, lab.with_l2, errors, tuple(lab.l2_skipped))


def problems(sim: Sim) -> None:
    """Why an algorithm has no figures (tiles too large for the SRAM, ...) or no L2 model (too long to replay)."""
    for e in sim.errors:
        st.error(error_text(e), icon=":material/error:")
    for algo in sim.l2_skipped:
        st.info(t("gpu.l2_skipped", algo=t(f"gpu.algo.{algo}"), bh=sim.config["batch_heads"]),
                icon=":material/hourglass_disabled:")


def below(sim: Sim) -> None:
    """Under every simulated view: the bytes of both algorithms, their arithmetic, and the article's SRAM."""
    summary(sim.v, sim.reports, sim.with_l2, sim.chip)
    sram_correction()


def n_sweep_text(points: list[SweepPoint], v: dict, chip: Chip, block_m: int) -> list[str]:
    """What the sweep over N shows, read off its points (sim.gpu.claims.n_sweep_reading): the two-level ratio, what
    the L2 does to the tiled line and to the naive one."""
    r = n_sweep_reading(points, v["d"], v["B"] * v["H"], DTYPE_BYTES[v["dtype"]], chip.l2_bytes is not None)
    out = []
    if r.N:
        ratio = r.ratio if r.case != "more" else 1 / r.ratio
        out.append(t(f"gpu.sweep.two.{r.case}", N=f"{r.N:,}", ratio=f"{ratio:,.1f}", bm=block_m))
    if r.l2 != "none":
        out.append(t(f"gpu.sweep.l2.{r.l2}", N=f"{r.gap_N:,}", gap=f"{r.gap:,.0f}", upto=f"{r.linear_upto:,}"))
    if r.l2 not in ("off", "none"):
        out.append(t("gpu.sweep.naive_l2.fits", N=f"{r.naive_upto:,}", saved=f"{r.naive_saved:.0%}")
                   if r.naive_upto else t("gpu.sweep.naive_l2.never"))
    return out


def sram_text(points: list[SramPoint], v: dict, knee: int) -> str:
    """What the sweep over the SRAM size shows, read off its points (sim.gpu.claims.sram_reading)."""
    r = sram_reading(points, v["N"], knee)
    return " ".join([t("gpu.sweep.sram_note", d=v["d"], knee=human_bytes(knee)),
                     t(f"gpu.sweep.sram.{r.past}", first=human_bytes(r.at_knee), last=human_bytes(r.at_end)),
                     t("gpu.sweep.sram.covers", m=human_bytes(r.covers), N=f"{v['N']:,}") if r.covers
                     else t("gpu.sweep.sram.short", N=f"{v['N']:,}")])
