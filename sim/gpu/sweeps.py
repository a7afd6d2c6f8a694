"""The GPU lab's sweeps of the IO model: bytes per memory level against N, and against the SRAM size."""
from __future__ import annotations

from dataclasses import dataclass

from sim.gpu.memsim import MAX_REPLAY, MemsimError, attention_io, block_sizes, replay_cost, tiled_io_law


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


def _io(algo: str, N: int, d: int, config: dict, chip: Chip, with_l2: bool, max_replay: int = MAX_REPLAY):
    """One report without events; None when the L2 replay would cost more than max_replay."""
    kw = {**config, "sram_bytes": chip.sram_bytes, "n_sm": chip.n_sm, "max_events": 0}
    if with_l2:
        if not l2_affordable(algo, N, d, config, chip, max_replay):
            return None
        kw["l2_bytes"] = chip.l2_bytes
    return attention_io(algo, N, d, **kw)


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
