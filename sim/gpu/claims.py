"""What the GPU lab says of the IO model's sweeps and of the measurements it shows, read off the points and runs
it draws: each function returns a case (the page's i18n key ends with it) and the numbers that decided it, so that a
sentence never assumes an outcome the figure beside it does not show (tests/test_gpu_claims.py checks the two agree
over settings and reports)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sim.gpu.measure import memory_source
from sim.gpu.sweeps import SramPoint, SweepPoint

LEVEL = 1.1  # two byte counts within 10 % of each other are "about as many"
SAVES = 0.99  # the L2 saves a pass something where it leaves at most 99 % of its two-level HBM bytes
LINEAR = 1.1  # tiled with the L2 "stays at 4·N·d" while within 10 % of it
FLAT = 1.01  # a line whose bytes change by less than 1 % is flat


@dataclass(frozen=True)
class NSweepReading:
    """What the sweep over N shows (its points: sim.gpu.sweeps.n_sweep)."""

    N: int  # the largest N where both two-level figures exist (0: none, the tiles never fit)
    ratio: float  # naive ÷ tiled there, two levels
    case: str  # "fewer" (tiled moves fewer bytes by more than LEVEL), "more" or "level"
    l2: str  # "off" (no L2 modelled), "none" (no point replayed with it), "linear" (tiled with the L2 stays within
    # LINEAR of 4·N·d at every N replayed) or "leaves" (up to linear_upto, above it past that)
    linear_upto: int  # the largest N of the leading run of points where tiled with the L2 stays at 4·N·d
    gap_N: int  # the largest N replayed with the L2 (tiled); 0: none
    gap: float  # naive (two levels) ÷ tiled with the L2 there
    naive_upto: int  # the largest N of the leading run where the L2 saves naive something (0: at no N)
    naive_saved: float  # the largest share of naive's two-level bytes the L2 saves over that run


def four_nd(N: int, d: int, batch_heads: int, dtype_bytes: int) -> int:
    """Q and K and V read once, O written once: the least HBM traffic of one attention pass, in bytes."""
    return 4 * N * d * batch_heads * dtype_bytes


def _leading(points: Sequence[SweepPoint], holds) -> list[SweepPoint]:
    run = []
    for p in points:
        if not holds(p):
            break
        run.append(p)
    return run


def n_sweep_reading(points: Sequence[SweepPoint], d: int, batch_heads: int, dtype_bytes: int,
                    l2: bool) -> NSweepReading:
    """Read the sweep's points (ascending N) of a chip with or without an L2 (`l2`)."""
    both = [p for p in points if p.tiled_hbm]
    last = both[-1] if both else None
    ratio = last.naive_hbm / last.tiled_hbm if last else 0.0
    case = "fewer" if ratio > LEVEL else "more" if ratio * LEVEL < 1 else "level"
    tiled = [p for p in points if p.tiled_hbm_l2 is not None]
    naive = [p for p in points if p.naive_hbm_l2 is not None]
    linear = _leading(tiled, lambda p: p.tiled_hbm_l2 <= LINEAR * four_nd(p.value, d, batch_heads, dtype_bytes))
    l2_case = "off" if not l2 else "none" if not tiled else "linear" if len(linear) == len(tiled) else "leaves"
    saved = _leading(naive, lambda p: p.naive_hbm_l2 <= SAVES * p.naive_hbm)
    return NSweepReading(
        last.value if last else 0, ratio, case, l2_case, linear[-1].value if linear else 0,
        tiled[-1].value if tiled else 0, tiled[-1].naive_hbm / tiled[-1].tiled_hbm_l2 if tiled else 0.0,
        saved[-1].value if saved else 0, max((1 - p.naive_hbm_l2 / p.naive_hbm for p in saved), default=0.0))


@dataclass(frozen=True)
class SramReading:
    """What the sweep over the SRAM size shows (its points: sim.gpu.sweeps.sram_sweep, ascending M)."""

    past: str  # Algorithm 1's line from the knee M = 4d² elements on: "flat", "rises", "falls", or "outside" (the
    # knee is past the largest M swept, or no point there has Algorithm 1's figures)
    at_knee: int  # Algorithm 1's bytes at the first M swept at or past the knee (0: outside)
    at_end: int  # ... and at the largest M swept
    covers: int  # the smallest M swept whose square block covers the whole sequence (B ≥ N); 0: none does


def sram_reading(points: Sequence[SramPoint], N: int, knee: int) -> SramReading:
    """Read the SRAM sweep of sequence length N; knee: sim.gpu.memsim.query_block_cap_sram."""
    past = [p.paper_hbm for p in points if p.sram_bytes >= knee and p.paper_hbm is not None]
    if not past:
        case, first, end = "outside", 0, 0
    else:
        first, end = past[0], past[-1]
        case = "rises" if end > FLAT * first else "falls" if end * FLAT < first else "flat"
    covers = next((p.sram_bytes for p in points if p.square_block and p.square_block >= N), 0)
    return SramReading(case, first, end, covers)


def memory_notes(runs: Sequence[dict]) -> tuple[str, ...]:
    """Which notes the peak-memory figure of these measured runs needs: "none" (no run has a peak measured: only the
    simulator's lines are drawn), else "cuda" and/or "cpu", how the peaks shown were measured (their memory_source,
    sim.gpu.measure.memory_source)."""
    sources = {r["memory_source"] for r in runs if r.get("peak_bytes") is not None and r.get("memory_source")}
    if not sources:
        return ("none",)
    return tuple(kind for kind, cuda in (("cuda", True), ("cpu", False))
                 if any(s.startswith(memory_source(cuda, "")) for s in sources))
