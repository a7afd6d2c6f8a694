"""The GPU lab's sweeps of the IO model: bytes per memory level against N, and against the SRAM size."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sim.gpu.memsim import (
    MAX_EVENTS,
    MAX_REPLAY,
    IOReport,
    MemsimError,
    attention_io,
    block_sizes,
    replay_cost,
    tiled_io_law,
)


@dataclass(frozen=True)
class Chip:
    """The memory levels modelled: SRAM per thread block, and an L2 (None: two levels only)."""

    sram_bytes: int
    l2_bytes: int | None
    n_sm: int


@dataclass(frozen=True)
class SweepPoint:
    """HBM bytes (reads + writes) of both algorithms at one value; None where not computed (and why)."""

    value: int
    naive_hbm: int
    tiled_hbm: int | None  # None: the tiles do not fit in SRAM
    naive_hbm_l2: int | None  # with the L2 model; None without one or when the replay is too long
    tiled_hbm_l2: int | None
    tiled_l2: int | None  # bytes the SMs read through L2 for tiled (it follows the two-level model)


def l2_affordable(algo: str, N: int, d: int, config: dict, chip: Chip, max_replay: int = MAX_REPLAY) -> bool:
    """Whether the L2 replay of this pass costs at most max_replay (see replay_cost); config as attention_io's."""
    blocks = block_sizes(algo, d, config["dtype_bytes"], config.get("block_m"), config.get("block_n"),
                         chip.sram_bytes)
    return replay_cost(algo, N, config["batch_heads"], *blocks, chip.n_sm) <= max_replay


def io_report(algo: str, N: int, d: int, config: dict, chip: Chip, with_l2: bool = False,
              animate: bool = False) -> IOReport:
    """One pass as the lab shows it: config as attention_io's (batch_heads, dtype_bytes, causal, block sizes), the
    SRAM, L2 (when `with_l2`) and SMs from `chip`; `animate`: one (batch, head), with its events."""
    kw = {**config, "sram_bytes": chip.sram_bytes, "n_sm": chip.n_sm, "max_events": MAX_EVENTS if animate else 0}
    if animate:
        kw["batch_heads"] = 1
    return attention_io(algo, N, d, **kw, l2_bytes=chip.l2_bytes if with_l2 else None)


@dataclass(frozen=True)
class LabReports:
    """Both passes at one size: two levels (a MemsimError where a pass cannot run, e.g. tiles over the SRAM), with
    the L2 (None where not asked for or too costly to replay), and the passes whose L2 replay was skipped."""

    two_level: dict[str, IOReport | MemsimError]
    with_l2: dict[str, IOReport | None]
    l2_skipped: tuple[str, ...]


def lab_reports(N: int, d: int, config: dict, chip: Chip,
                report: Callable[[str, bool], IOReport] | None = None) -> LabReports:
    """The naive and tiled passes the GPU lab summarises; the L2 ones when `chip` has an L2 and the replay is
    affordable. report(algo, with_l2) makes one (default io_report; the page passes its cached one)."""
    report = report or (lambda algo, with_l2: io_report(algo, N, d, config, chip, with_l2))
    two_level: dict[str, IOReport | MemsimError] = {}
    for algo in ("naive", "tiled"):
        try:
            two_level[algo] = report(algo, False)
        except MemsimError as e:
            two_level[algo] = e
    runnable = [a for a, r in two_level.items() if isinstance(r, IOReport)] if chip.l2_bytes is not None else []
    skipped = tuple(a for a in runnable if not l2_affordable(a, N, d, config, chip))
    with_l2 = {a: report(a, True) if a in runnable and a not in skipped else None for a in two_level}
    return LabReports(two_level, with_l2, skipped)


def _io(algo: str, N: int, d: int, config: dict, chip: Chip, with_l2: bool, max_replay: int = MAX_REPLAY):
    """One report without events; None when the L2 replay would cost more than max_replay."""
    if with_l2 and not l2_affordable(algo, N, d, config, chip, max_replay):
        return None
    return io_report(algo, N, d, config, chip, with_l2)


def n_sweep(Ns: list[int], d: int, config: dict, chip: Chip, max_replay: int = MAX_REPLAY // 10) -> list[SweepPoint]:
    """Both algorithms at each N; config holds attention_io's batch_heads, dtype_bytes, causal, block sizes.

    The L2 figures are left out (None) at sizes whose replay would cost more than max_replay (by default about
    0.15 s a point, so that a sweep of ten sizes stays quick).
    """
    points = []
    for N in Ns:
        naive = _io("naive", N, d, config, chip, False)
        try:
            tiled = _io("tiled", N, d, config, chip, False)
        except MemsimError:
            tiled = None
        l2 = chip.l2_bytes is not None
        naive_l2 = _io("naive", N, d, config, chip, True, max_replay) if l2 else None
        tiled_l2 = _io("tiled", N, d, config, chip, True, max_replay) if l2 and tiled else None
        points.append(SweepPoint(N, naive.hbm_bytes, tiled and tiled.hbm_bytes, naive_l2 and naive_l2.hbm_bytes,
                                 tiled_l2 and tiled_l2.hbm_bytes, tiled_l2 and tiled_l2.l2_read_bytes))
    return points


@dataclass(frozen=True)
class SramPoint:
    """Tiled HBM bytes at one SRAM size M, with Algorithm 1's blocks and with square blocks B = M/4d."""

    sram_bytes: int
    paper_blocks: tuple[int, int] | None  # (B_m, B_n) of Algorithm 1; None: not even 1×1 tiles fit
    paper_hbm: int | None
    square_block: int | None
    square_hbm: int | None
    law: float  # N²d²/M in bytes, the paper's Θ without its constant


def sram_sweep(sizes: list[int], N: int, d: int, batch_heads: int, dtype_bytes: int, causal: bool) -> list[SramPoint]:
    """Tiled attention's HBM traffic as the SRAM grows (two levels: the law is about HBM ↔ SRAM)."""
    common = {"batch_heads": batch_heads, "dtype_bytes": dtype_bytes, "causal": causal, "max_events": 0}
    points = []
    for M in sizes:
        try:
            paper = attention_io("tiled", N, d, sram_bytes=M, **common)
        except MemsimError:
            paper = None
        square = M // dtype_bytes // (4 * d)  # 2·B·d + 2·B·d elements: Q, O, K and V tiles of B rows
        sq = attention_io("tiled", N, d, block_m=square, block_n=square, **common) if square >= 1 else None
        points.append(SramPoint(M, paper and (paper.block_m, paper.block_n), paper and paper.hbm_bytes,
                                square or None, sq and sq.hbm_bytes, tiled_io_law(N, d, M, dtype_bytes) * batch_heads))
    return points
