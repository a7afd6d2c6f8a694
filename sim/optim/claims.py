"""What the optimiser lab says of its computations and runs, read off the numbers it shows beside them: each function
returns a case (the page's i18n key ends with it) and the numbers that decided it, so a sentence never assumes an
outcome the run did not have (tests/test_optimizers_claims.py checks the two agree over seeds and settings)."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from sim.core.claims import compared
from sim.optim.optimizers import momentum_rate

NEAR_ONE = 0.6  # a singular value at least this after the Newton–Schulz steps has reached "about 1"
APART = 3  # the rank-th singular value of X₀ at least this many times the next one: the signal stands out
GAP = 0.05  # two weights that end less than this apart end "alike"
LEVEL = 1.25  # two losses (or step times, or byte counts) within this factor of each other are "about level"
DOWN = 0.5  # a racer whose loss is at most this share of its loss at step 0 "has come down"
EDGE = 1e-9  # a rate this close to 1 is on the edge: α·λₙ is 2 + 2β up to rounding (the sliders reach it)


# ---------- momentum's theory on the quadratic ----------
def verdict(alpha: float, beta: float, lams: Sequence[float]) -> str:
    """Heavy ball (β = 0: gradient descent) on eigenvalues `lams`, by its worst rate ρ: "converges" (ρ < 1),
    "diverges" (ρ > 1) or "edge" (ρ = 1: along λₙ the error keeps its size, flipping its sign every step)."""
    rate = max(momentum_rate(alpha, beta, lam) for lam in lams)
    return "edge" if abs(rate - 1.0) <= EDGE else "converges" if rate < 1.0 else "diverges"


# ---------- Muon: the singular values through Newton–Schulz ----------
@dataclass(frozen=True)
class Spectrum:
    """What the singular values of Newton–Schulz's iterates show (ns_spectrum's, largest first per step)."""

    start: str  # X₀: "apart" (the rank largest stand APART above the rest), "mixed", or "full" (no rest: rank ≥ n)
    end: str  # after the last step: "all" (every one at least NEAR_ONE), "some" (low of them below) or "none"
    n: int  # singular values
    rank: int  # the signal's, at most n
    top: tuple[float, float]  # X₀: the smallest and the largest of the rank largest
    rest: float  # X₀: the largest of the others (NaN for "full")
    lo: float  # after the last step: the smallest
    hi: float  # ... and the largest
    low: int  # after the last step, how many are below NEAR_ONE
    low_start: float  # X₀: the largest of the `low` smallest (NaN when low is 0): where those started


def spectrum_reading(sv: np.ndarray, rank: int) -> Spectrum:
    """sv: (steps + 1, n) singular values of X₀ … X_steps, largest first; rank: the signal's (capped at n)."""
    sv = np.asarray(sv, dtype=float)
    n = sv.shape[1]
    r = min(int(rank), n)
    first, last = sv[0], sv[-1]
    rest = float(first[r]) if r < n else math.nan
    start = "full" if r >= n else "apart" if first[r - 1] >= APART * first[r] else "mixed"
    low = int((last < NEAR_ONE).sum())
    end = "all" if low == 0 else "none" if low == n else "some"
    return Spectrum(start, end, n, r, (float(first[r - 1]), float(first[0])), rest,
                    float(last.min()), float(last.max()), low, float(first[n - low]) if low else math.nan)


# ---------- Adam + L2 against AdamW: where the weights end ----------
@dataclass(frozen=True)
class Ends:
    """One optimiser's two weights after the last step: "alike" (less than GAP apart) or "apart"."""

    case: str
    low: int  # which weight ends lower: 1 (θ₁) or 2 (θ₂)
    gap: float  # how far apart they end


def ends(theta: Sequence[float]) -> Ends:
    """The case of a path's last point (θ₁, θ₂)."""
    t1, t2 = float(theta[0]), float(theta[1])
    gap = abs(t1 - t2)
    return Ends("alike" if gap < GAP else "apart", 1 if t1 < t2 else 2, gap)


# ---------- Muon + AdamW against AdamW: the final losses ----------
def final_losses(adamw: float, muon: float) -> str:
    """"muon" (Muon + AdamW ends lower by more than LEVEL), "adamw" (AdamW does), "level", or "failed" (either
    loss is not a finite number: the page's warning says so)."""
    if not (math.isfinite(adamw) and math.isfinite(muon)):
        return "failed"
    return {"more": "muon", "less": "adamw", "level": "level"}[compared(adamw, muon, LEVEL)]


# ---------- learning-rate schedules ----------
def held_until(curve: np.ndarray) -> int:
    """The last step at which a schedule's curve is at its peak (warmup–stable–decay: where its decay begins)."""
    curve = np.asarray(curve, dtype=float)
    return int(np.flatnonzero(curve >= curve.max())[-1])


# ---------- the races on a real model ----------
@dataclass(frozen=True)
class Standing:
    """The racers at one step (sim.optim.race.Racer.view's of each), by their whole-set loss."""

    ranking: list[str]  # labels of those that have not diverged, lowest loss first
    down: list[str]  # ... whose loss is at most DOWN × their loss at step 0, in ranking order
    flat: list[str]  # ... the others
    diverged: list[str]  # labels of the racers that diverged (the page warns of each)


def standing(views: Sequence[Mapping]) -> Standing:
    """views: each racer's view (label, loss, start_loss, diverged_at)."""
    live = sorted((v for v in views if v["diverged_at"] is None and v["loss"] is not None), key=lambda v: v["loss"])
    ranking = [v["label"] for v in live]
    down = [v["label"] for v in live if v["loss"] <= DOWN * v["start_loss"]]
    return Standing(ranking, down, [x for x in ranking if x not in down],
                    [v["label"] for v in views if v["diverged_at"] is not None])


def muon_against_adam(views: Sequence[Mapping]) -> dict[str, str] | None:
    """Muon + AdamW's step time and state bytes against Adam's, as `compared` cases ("more", "less", "level"); None
    unless both race and have made a step (torch allocates the state then, and a step has a time)."""
    by = {v["label"]: v for v in views}
    muon, adam = by.get("muon"), by.get("adam")
    if muon is None or adam is None or muon["ms"] is None or adam["ms"] is None:
        return None
    return {"time": compared(muon["ms"], adam["ms"], LEVEL),
            "state": compared(muon["state_bytes"], adam["state_bytes"], LEVEL)}
