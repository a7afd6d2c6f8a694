"""The GPU lab's simulated views' shared part: the IO model of the page's sizes on the chip modelled (every report
cached across sessions), why an algorithm has no figures, and the bytes of both with their arithmetic."""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from labs.gpu.course import sram_correction, tiling_text
from sim.gpu.measure import DTYPE_BYTES
from sim.gpu.memsim import GPUS, IOReport, MemsimError
from sim.gpu.sweeps import Chip, io_report, lab_reports
from sim.plots.shapes import human_bytes
from ui.i18n import t


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
