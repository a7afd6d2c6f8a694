"""What the sequence-models lab says of its runs and computations, chosen from the numbers it shows beside them: each
function returns a case (the page's i18n key ends with it) read off those numbers, so a sentence never assumes an
outcome the run did not have (tests/test_sequence_claims.py checks the two agree over seeds and settings)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from sim.sequence.memory import HOLDS
from sim.sequence.timing import crossover

KEEP = 0.5  # a unit keeps its cell when the product of its forget gates from the key to the query is at least this
WIDER = 0.1  # the input gate opens wider at the key when its mean there is this much above its mean on the noise
KEPT, LOST = 0.5, 1e-3  # ‖∂L/∂h_key‖ / ‖∂L/∂h_query‖ from KEPT: the gradient reaches the key; below LOST: it is lost
NEAR = 0.05  # two losses (nats) closer than this are about level
HALVES = 0.55  # a share that falls to at most this fraction when T doubles "about halves"


# ---------- memory over distance ----------
def race_outcome(reach: int, distance: int) -> str:
    """"all" (the model holds every distance 1..D), "part" (the shorter ones only) or "none" (not even d = 1)."""
    return "all" if reach >= distance else "none" if reach == 0 else "part"


def grouped(cases: Mapping[str, str], order: Sequence[str]) -> dict[str, list[str]]:
    """The models (kinds, in their order) under each case, cases in `order`; cases no model has left out (the page
    writes one sentence a case, naming its models)."""
    return {c: [k for k, kc in cases.items() if kc == c] for c in order if c in cases.values()}


def outcomes(reach: Mapping[str, int], distance: int) -> dict[str, list[str]]:
    """The models grouped by race_outcome of their reach."""
    return grouped({k: race_outcome(r, distance) for k, r in reach.items()}, ("all", "part", "none"))


# ---------- why: the gradient through time, the LSTM's gates ----------
def key_to_query(grads: Sequence[float], key_at: int) -> float:
    """‖∂L/∂h_key‖ / ‖∂L/∂h_query‖ (0 where either is 0: nothing came back, or nothing to compare with)."""
    at_key, at_query = float(grads[key_at]), float(grads[-1])
    return at_key / at_query if at_key > 0 and at_query > 0 else 0.0


def gradient_verdict(ratio: float) -> str:
    """"kept" (at least KEPT of the query's gradient reaches the key), "lost" (less than LOST) or "weakened"."""
    return "kept" if ratio >= KEPT else "lost" if ratio < LOST else "weakened"


def verdicts(ratios: Mapping[str, float]) -> dict[str, list[str]]:
    """The models grouped by the gradient_verdict of their key_to_query ratio."""
    return grouped({k: gradient_verdict(r) for k, r in ratios.items()}, ("kept", "weakened", "lost"))


@dataclass(frozen=True)
class GateReading:
    """The trained LSTM's gates on one sequence, from the key to the query (d steps later)."""
    case: str  # "carry" (some units keep their cell), else "rewrite" (it answers at d all the same) or "lost" (not)
    opening: str  # the input gate at the key against the noise after it: "key" (wider at the key), "noise", "same"
    units: int  # H
    d: int  # steps from the key to the query
    carriers: int  # units whose forget gates keep at least KEEP of the cell over the d steps
    keep: np.ndarray  # (H,) per unit, the product of its forget gates over those steps
    forget: float  # the forget gate's mean over every unit and step after the key
    forget_carry: float  # ... over the carriers (NaN: none)
    forget_rest: float  # ... over the other units (NaN: none)
    best: float  # the largest keep of any unit
    input_key: float  # the input gate's mean over the units at the key
    input_rest: float  # ... on the noise between the key and the query
    accuracy: float  # the LSTM's accuracy at distance d (what it answers, whatever holds the key)


def read_gates(gates: Mapping[str, np.ndarray], key_at: int, accuracy: float) -> GateReading:
    """gates: sim.sequence.memory.lstm_gates's (T, H) arrays, the key at key_at with at least one noise step before
    the query; accuracy: the LSTM's at distance d = T − 1 − key_at."""
    forget, inputs = np.asarray(gates["forget"], dtype=float), np.asarray(gates["input"], dtype=float)
    T, H = forget.shape
    if not 0 <= key_at < T - 2:
        raise ValueError("invalid:key")
    after = forget[key_at + 1:]  # (d, H): the factors the cell is multiplied by from the key to the query
    keep = after.prod(axis=0)
    carry = keep >= KEEP
    input_key, input_rest = float(inputs[key_at].mean()), float(inputs[key_at + 1:-1].mean())
    case = "carry" if carry.any() else "rewrite" if accuracy >= HOLDS else "lost"
    opening = "key" if input_key >= input_rest + WIDER else "noise" if input_rest >= input_key + WIDER else "same"
    return GateReading(case, opening, H, T - 1 - key_at, int(carry.sum()), keep, float(after.mean()),
                       float(after[:, carry].mean()) if carry.any() else float("nan"),
                       float(after[:, ~carry].mean()) if (~carry).any() else float("nan"), float(keep.max()),
                       input_key, input_rest, float(accuracy))


# ---------- sparse attention ----------
def window_trend(share: float, share_doubled: float, full_share: float) -> str:
    """How the window's share of T² goes when T doubles: "full" (it covers every score full attention computes),
    "halves" (falls to at most HALVES of itself) or "falls" (less: w is not small against T)."""
    if share >= full_share:
        return "full"
    return "halves" if share_doubled <= HALVES * share else "falls"


def longformer_case(T: int, n_globals: int, causal: bool, win_reach: int, lf_reach: int) -> str:
    """Why the last query is reached by lf_reach positions with Longformer's global tokens: "window" (the window
    alone reaches all T), "global" (a hop through a global token reaches all T), "none" (no global token), "causal"
    (a global token under the causal mask reads only the positions before it: it relays nothing later), or
    "one_layer" (a relay through a global token takes two layers)."""
    if win_reach >= T:
        return "window"
    if lf_reach >= T:
        return "global"
    return "none" if n_globals == 0 else "causal" if causal else "one_layer"


def window_case(field: int, distance: int) -> str:
    """"covers" (L × w reaches every distance of the task) or "beyond" (distances past L × w exist)."""
    return "covers" if field >= distance else "beyond"


def mean_beyond(by_distance: np.ndarray, field: int) -> float:
    """The accuracy at the distances past `field`, averaged over those seen so far (NaN: none)."""
    tail = np.asarray(by_distance, dtype=float)[field:]
    return float(np.nanmean(tail)) if np.isfinite(tail).any() else float("nan")


# ---------- encoder against decoder ----------
def ahead(encoder: float, decoder: float) -> str:
    """Which has the lower loss on a task: "encoder", "decoder", or "level" (within NEAR nats)."""
    return "level" if abs(encoder - decoder) < NEAR else "encoder" if encoder < decoder else "decoder"


# ---------- timed on this machine ----------
def growth(times: Sequence[float]) -> float:
    """How many times longer the longest length took than the one before it (the last doubling)."""
    return float(times[-1] / times[-2]) if len(times) > 1 and times[-2] > 0 else float("nan")


def cross_claim(lengths: Sequence[int], times: Mapping[str, Sequence[float]]) -> tuple[str, dict[str, int]]:
    """What sim.sequence.timing.crossover finds in the RNN's and attention's times, and the lengths the sentence
    names: "no_cross" (attention still faster at the longest length T), "cross_all" (slower at every length, from
    the first, T) or "cross" (slower from T on, not at the length before it)."""
    cross = crossover(lengths, times)
    if cross is None:
        return "no_cross", {"T": lengths[-1]}
    i = list(lengths).index(cross)
    return ("cross_all", {"T": cross}) if i == 0 else ("cross", {"T": cross, "before": lengths[i - 1]})


def most_growth(times: Mapping[str, Sequence[float]]) -> str:
    """The form whose time grew the most over the last doubling."""
    return max(times, key=lambda f: growth(times[f]))


def fastest(times: Mapping[str, Sequence[float]], among: Sequence[str]) -> str:
    """Of the forms `among`, the one measured fastest at the longest length."""
    return min(among, key=lambda f: times[f][-1])
