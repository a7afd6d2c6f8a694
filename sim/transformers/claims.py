"""What the attention, shape and transformer-block labs say of their runs and computations, read off the numbers they
show beside them: each function returns a case (the page's i18n key ends with it) and the numbers that decided it,
so a sentence never assumes an outcome the run did not have (tests/test_attention_claims.py,
tests/test_shapes_claims.py and tests/test_blocks_claims.py check the two agree over seeds and settings)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sim.core.claims import compared
from sim.transformers.attention import EQUIVARIANCE_TOL, PermutationCheck
from sim.transformers.live import AttentionRun, from_bytes

NEAR = 0.1  # a measured variance within 10 % of a formula's value is that value (4096 pairs: about 2 % noise)
MOST = 0.8  # a mean largest softmax weight of at least this: most of a row's weight on one key
LEVEL = 1.25  # values within this factor of each other are "about the same"
MARGIN = 0.1  # a loss more than 10 % below the best honest loss cheats; within 10 % of it, it is "at" it
NEXT, PARTLY = 0.5, 0.2  # the mean weight on the next position that makes it "the" pattern, or a visible part of it
GAP = 0.1  # generation accuracies within 10 points of each other are "level"
STALL, LEARNED = 0.9, 0.1  # a loss at least 90 % of guessing's has stalled; at most 10 % of it, the task is learned
VANISH = 1e-3  # a spread or gradient norm shrinking (growing) by more than 1000× vanishes (explodes)
UNEVEN = 1.5  # the busiest expert at more than 1.5× its fair share: the routing is uneven
HOLDS, PART = 0.9, 0.5  # share right past the trained length, of the share within it: the rule holds, partly holds
ROUNDING = 1e-9  # a spread of scores below this (relative to the largest) is float64 rounding
SAME_COST = 1.1  # two parameter counts within 10 % of each other cost "about the same"
CLOSE = 0.05  # a FLOP estimate within 5 % of the traced total comes "close"
MAGNITUDE = 10.0  # an order of magnitude


# ---------- attention: the pipeline ----------
def variance_case(d: int, unit: float, entries: float) -> str:
    """The measured variance of q·k against the two formulas at head width d: "one" (d = 1: 1/d and d are the same
    number, nothing tells them apart), "inverse" (unit vectors give about 1/d and unit-variance entries about d) or
    "unclear" (a measurement off by more than NEAR)."""
    if d == 1:
        return "one"
    return "inverse" if abs(unit * d - 1) <= NEAR and abs(entries / d - 1) <= NEAR else "unclear"


@dataclass(frozen=True)
class SharpnessReading:
    """What the mean largest softmax weight per head width shows (sim.transformers.attention.sharpness_by_head_dim)."""

    unscaled: str  # "most" (the widest head's is at least MOST), "sharper" (it rises by more than LEVEL×), "level"
    scaled: str  # "level" (within LEVEL× over every width) or "varies"
    narrow: int  # the narrowest d_h
    wide: int  # the widest
    unscaled_narrow: float
    unscaled_wide: float
    scaled_low: float  # the smallest over the widths
    scaled_high: float  # the largest


def sharpness_reading(head_dims: Sequence[int], curves: dict[str, Sequence[float]]) -> SharpnessReading:
    u, s = list(curves["unscaled"]), list(curves["scaled"])
    unscaled = "most" if u[-1] >= MOST else "sharper" if u[-1] > LEVEL * u[0] else "level"
    scaled = "level" if max(s) <= LEVEL * min(s) else "varies"
    return SharpnessReading(unscaled, scaled, head_dims[0], head_dims[-1], u[0], u[-1], min(s), max(s))


@dataclass(frozen=True)
class PermutationReading:
    """The permutation check's three gaps read against float rounding (EQUIVARIANCE_TOL)."""

    same: bool  # the reordering left the sequence as it was: nothing to compare
    equivariant: bool  # f(PX) = P·f(X)
    moved: bool  # f(PX) ≠ f(X): the rows moved with their tokens (not invariant)
    broken: bool  # with the position encoding, f(PX + pos) ≠ P·f(X + pos)


def permutation_reading(c: PermutationCheck) -> PermutationReading:
    return PermutationReading(c.same_sequence, c.equivariance_gap <= EQUIVARIANCE_TOL,
                              c.invariance_gap > EQUIVARIANCE_TOL, c.positions_gap > EQUIVARIANCE_TOL)


# ---------- attention: with and without the causal mask ----------
@dataclass(frozen=True)
class CompareReading:
    """What the masked and the open model show at the step on screen (the "compare" run: causal first)."""

    step: int
    floor: float | None  # the best honest loss (None: a text, where it is unknown)
    causal: float  # recent training losses
    open: float
    loss: str  # with a floor: "cheats" (open more than MARGIN below it) or "honest"; without: compared(open, causal)
    masked: str  # with a floor: "near" (within MARGIN of it), "above" or "below"; without: ""
    next_weight: float  # the open model's first layer: the largest over its heads of the mean weight a position
    # puts on the position right after it, reading the probe drawn
    head: int  # that head (1-based)
    attention: str  # "next" (next_weight ≥ NEXT), "partly" (≥ PARTLY) or "elsewhere"
    causal_acc: float | None  # exact answers on 64 new prompts, generating (None: a text has no answers)
    open_acc: float | None
    generation: str  # "worse" (open below causal by more than GAP), "level", "better"; "" for a text


def next_weights(maps: np.ndarray) -> np.ndarray:
    """(heads,) the mean weight each query puts on the key right after it, in one layer's maps (heads, T, T)."""
    T = maps.shape[-1]
    if T < 2:
        return np.zeros(maps.shape[0])
    return maps[:, np.arange(T - 1), np.arange(1, T)].mean(-1)


def compare_reading(run: AttentionRun, probe: str) -> CompareReading:
    """Read a compare run at its step: losses, the open model's weight on the next position (the maps of `probe`,
    as drawn: to the byte's precision) and, for a generated task, both models' exact answers when generating."""
    causal, open_ = run.trainers
    floor = run.task.loss_floor()
    lc, lo = causal.recent_loss(), open_.recent_loss()
    if floor is None:
        loss, masked = compared(lo, lc, LEVEL), ""
    else:
        loss = "cheats" if lo < (1 - MARGIN) * floor else "honest"
        masked = "near" if abs(lc - floor) <= MARGIN * floor else "above" if lc > floor else "below"
    weights = next_weights(from_bytes(run.maps(probe)[1][0]))
    h = int(np.argmax(weights))
    w = float(weights[h])
    attention = "next" if w >= NEXT else "partly" if w >= PARTLY else "elsewhere"
    if run.task.name == "text":
        ca = oa = None
        generation = ""
    else:
        ca, oa = causal.generation_accuracy(), open_.generation_accuracy()
        generation = "worse" if oa < ca - GAP else "better" if oa > ca + GAP else "level"
    return CompareReading(run.steps, floor, lc, lo, loss, masked, w, h + 1, attention, ca, oa, generation)


# ---------- transformer block: Pre-LN against Post-LN ----------
def init_ratio_case(lo: float, hi: float) -> str:
    """Post-LN's gradient norm over Pre-LN's at initialisation, block by block (smallest, largest): "larger" (every
    block's above 1), "smaller" (every block's below 1) or "mixed"."""
    return "larger" if lo > 1 else "smaller" if hi < 1 else "mixed"


@dataclass(frozen=True)
class DepthReading:
    """One Pre/Post-LN run at the step on screen (a DepthRun frame's run)."""

    case: str  # "start" (no step yet), "diverged", "stalled" (loss ≥ STALL × guessing's), "learned" (≤ LEARNED ×),
    # "learning" (between)
    steps: int
    loss: float | None  # the recent loss
    gradient: str  # "vanish" (block 1's gradient norm below VANISH × the last block's) or "reach"
    ratio: float  # block 1's gradient norm / the last block's


def depth_reading(run: dict, guess: float) -> DepthReading:
    """run: a DepthRun frame's run ("steps", "recent", "norms", "diverged"); guess: the loss of guessing."""
    norms = np.asarray(run["norms"], dtype=float)
    ratio = float(norms[0] / norms[-1]) if norms[-1] > 0 else math.nan
    gradient = "vanish" if ratio < VANISH else "reach"  # NaN (no gradient at the last block): not "vanish"
    loss = run["recent"]
    if run["diverged"]:
        case = "diverged"
    elif not run["steps"] or loss is None:
        case = "start"
    else:
        case = "stalled" if loss >= STALL * guess else "learned" if loss <= LEARNED * guess else "learning"
    return DepthReading(case, run["steps"], loss, gradient, ratio)


# ---------- transformer block: initialisation and depth ----------
@dataclass(frozen=True)
class InitReading:
    """A deep plain MLP at initialisation (sim.transformers.blocks.InitStats): does its signal or gradient vanish or
    explode through the layers?"""

    signal: str  # "vanish" (the last layer's activation spread below VANISH × the first's), "explode" (above
    # 1/VANISH ×) or "steady"
    gradient: str  # the same for layer 1's gradient spread over the last layer's
    signal_ratio: float  # act_std[-1] / act_std[0]
    gradient_ratio: float  # grad_std[0] / grad_std[-1]


def growth_case(ratio: float) -> str:
    return "vanish" if ratio < VANISH else "explode" if ratio > 1 / VANISH else "steady"


def init_reading(act_std: Sequence[float], grad_std: Sequence[float]) -> InitReading:
    signal = float(act_std[-1]) / max(float(act_std[0]), 1e-300)
    gradient = float(grad_std[0]) / max(float(grad_std[-1]), 1e-300)
    return InitReading(growth_case(signal), growth_case(gradient), signal, gradient)


# ---------- transformer block: position encodings ----------
def extrapolation_case(inside: float, beyond: float) -> str:
    """Share right past the trained length against within it: "none" (nothing read past it), "holds" (at least HOLDS
    of it), "partly" (at least PART of it) or "breaks"."""
    if math.isnan(beyond):
        return "none"
    return "holds" if beyond >= HOLDS * inside else "partly" if beyond >= PART * inside else "breaks"


def shift_case(dots: Sequence[float]) -> str:
    """q·k at positions shifted together: "same" (their spread is float64 rounding) or "differ"."""
    top = max(abs(d) for d in dots)
    return "same" if max(dots) - min(dots) <= ROUNDING * max(top, 1.0) else "differ"


# ---------- transformer block: the FFN, the MoE, the KV cache ----------
def cost_case(gelu: int, swiglu: int) -> str:
    """SwiGLU's parameters against the GELU FFN's: "same" (within SAME_COST×), "more" or "less"."""
    return {"level": "same", "more": "more", "less": "less"}[compared(swiglu, gelu, SAME_COST)]


def width_case(d: int, h: int) -> str:
    """The FFN's hidden width against d_model: "wider", "same" or "narrower"."""
    return "wider" if h > d else "same" if h == d else "narrower"


def batch_case(gap: float) -> str:
    """The batch's Y against the one computed row by row: "same" (largest difference 0: small whole numbers are
    exact in float32) or "differ"."""
    return "same" if gap == 0 else "differ"


def routing_case(dead: int, imbalance: float) -> str:
    """An MoE run's routing lately: "collapsed" (some experts get almost no tokens), "uneven" (every expert is used,
    the busiest above UNEVEN× its fair share) or "balanced"."""
    return "collapsed" if dead else "uneven" if imbalance > UNEVEN else "balanced"


def fewer_case(ratio: float) -> str:
    """Another cache's size over MLA's, as the page prints it (one decimal): "magnitude" (MLA's at least MAGNITUDE×
    smaller), "fewer", "same" or "more"."""
    ratio = round(ratio, 1)
    if ratio >= MAGNITUDE:
        return "magnitude"
    return "fewer" if ratio > 1 else "same" if ratio == 1 else "more"


# ---------- the shape chain ----------
def written_chain(shapes: Sequence[tuple[int, ...]], ops: Sequence[str]) -> list[tuple[int, ...]]:
    """A traced chain of shapes as one writes it on paper: a transpose that a view reshapes at once is one step
    ("transpose back" to [B, T, C]), so the transpose's own shape is left out."""
    back = {k for k in range(len(ops) - 1) if ops[k] == "transpose" and ops[k + 1] == "view"}
    return [s for k, s in enumerate(shapes) if k not in back]


def rule_case(rule: int, traced: int) -> str:
    """The shortcut 2 × every parameter × tokens against the traced FLOPs: "close" (within CLOSE), "under", "over"."""
    if abs(rule - traced) <= CLOSE * traced:
        return "close"
    return "under" if rule < traced else "over"
