"""What the language-model lab says of its runs and computations, read off the numbers it shows beside them: each
function returns a case (the page's i18n key ends with it) and the numbers that decided it, so that a sentence never
assumes an outcome the run did not have (tests/test_lm_claims.py checks the two agree over seeds and settings)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from sim.language.scaling import TOKENS_PER_PARAM, compute_optimal

PREFIXES = 4  # the UTF-8 pitfall decodes the first 1 … PREFIXES tokens of the word
SAVES = 0.95  # a tokenizer that still needs 95 % of a text's bytes as tokens saves (almost) nothing on it
DIGITS = 3  # the live caption prints losses to 3 decimals
WELL_ABOVE = 1.25  # a run whose final loss is more than 25 % above the floor ends "well above" it
NEAR_RULE = 1.25  # a fit asking for 20 tokens per parameter within this factor agrees with the rule of thumb


# ---------- tokens ----------
@dataclass(frozen=True)
class Savings:
    """Which languages a tokenizer's column of the comparison table costs fewer tokens per character than their
    UTF-8 bytes (by more than SAVES), and which not."""

    lower: tuple[str, ...]
    same: tuple[str, ...]


def savings(bytes_per_char: dict[str, float], tokens_per_char: dict[str, float]) -> Savings:
    """Read one column (tokens per character, by language) against the bytes per character of the same samples."""
    lower = tuple(lang for lang, b in bytes_per_char.items() if tokens_per_char[lang] < SAVES * b)
    return Savings(lower, tuple(lang for lang in bytes_per_char if lang not in lower))


def split_prefix(token_bytes: Sequence[bytes]) -> int | None:
    """The first k ≤ PREFIXES whose first k tokens end inside a character (their bytes are not whole UTF-8), so
    that decoding them alone shows "�"; None when every prefix shown ends on a character boundary."""
    for k in range(1, min(PREFIXES, len(token_bytes)) + 1):
        try:
            b"".join(token_bytes[:k]).decode("utf-8")
        except UnicodeDecodeError:
            return k
    return None


# ---------- the live run ----------
def floor_gap(val: float | None, floor: float | None) -> tuple[str, float] | None:
    """The validation loss against the entropy floor as the caption prints them (DIGITS decimals): ("above" |
    "below" | "at", |val − floor|); None where either is unknown (no evaluation yet, the user's own text) or the
    loss is not finite."""
    if val is None or floor is None or not math.isfinite(val):
        return None
    gap = round(round(val, DIGITS) - round(floor, DIGITS), DIGITS)
    return ("at" if gap == 0 else "above" if gap > 0 else "below"), abs(gap)


# ---------- the published laws ----------
def tokens_per_param(C: float, fit: str) -> tuple[str, float]:
    """The compute-optimal tokens per parameter of a rule or fit at budget C, against the rule of thumb of 20:
    ("near" | "more" | "fewer", D/N)."""
    N, D = compute_optimal(C, fit)
    r = D / N
    return ("more" if r > NEAR_RULE * TOKENS_PER_PARAM else "fewer" if r * NEAR_RULE < TOKENS_PER_PARAM
            else "near"), r


# ---------- the measured sweep ----------
@dataclass(frozen=True)
class SweepReading:
    """Where each IsoFLOP curve of a sweep has its lowest final loss, and how its runs end against the floor."""

    inside: tuple[float, ...]  # budgets whose best model is neither the smallest nor the largest trained: a bottom
    smallest: tuple[float, ...]  # budgets whose smallest model is best: the bottom lies at or below the sweep
    largest: tuple[float, ...]  # budgets whose largest model is best: the bottom lies at or beyond the sweep
    runs: int  # runs with a finite final loss
    above: int  # of them, those ending more than WELL_ABOVE times the floor
    lowest: float  # the lowest final loss
    floor: float  # the language's entropy per token

    @property
    def above_case(self) -> str:
        """"most" (more than half the runs end well above the floor) or "few"."""
        return "most" if 2 * self.above > self.runs else "few"


def sweep_reading(runs: Sequence[dict], floor: float) -> SweepReading:
    """Read a sweep's runs (dicts with "budget", "params", "loss"); a budget with fewer than 3 finite runs has no
    curve to read (sim.language.scaling.isoflop_frontier leaves it out too)."""
    finite = [r for r in runs if math.isfinite(r["loss"])]
    where: dict[str, list[float]] = {"inside": [], "smallest": [], "largest": []}
    for C in sorted({r["budget"] for r in finite}):
        curve = sorted((r for r in finite if r["budget"] == C), key=lambda r: r["params"])
        if len(curve) < 3:
            continue
        k = min(range(len(curve)), key=lambda i: curve[i]["loss"])
        where["smallest" if k == 0 else "largest" if k == len(curve) - 1 else "inside"].append(C)
    return SweepReading(tuple(where["inside"]), tuple(where["smallest"]), tuple(where["largest"]), len(finite),
                        sum(r["loss"] > WELL_ABOVE * floor for r in finite),
                        min((r["loss"] for r in finite), default=math.nan), floor)


def lowest_case(reading: SweepReading, E: float) -> str:
    """The lowest measured loss against the floor, beside a fitted E: "above" or "below" the floor and a closer
    estimate of it than E, or "far" (no closer than E)."""
    off = abs(reading.lowest - reading.floor)
    if off >= abs(E - reading.floor):
        return "far"
    return "below" if reading.lowest < reading.floor else "above"
