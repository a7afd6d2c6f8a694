"""What the sequence-models lab shows of a selective state-space layer beside the scan itself: a short worked
example with every number of the recurrence, the memory a Mamba model keeps while generating against a
Transformer's KV cache of the same width and depth, and the time of each form against sequence length.

Memory while generating (numbers kept per sequence, not bytes): a Mamba layer of width d_model keeps, for its
d_inner = expand · d_model channels, an SSM state of n numbers each and the last d_conv − 1 inputs of its causal
convolution, whatever the length; a Transformer layer keeps a key and a value of d_model numbers for every token
so far (multi-head attention: no sharing of heads). Mamba's defaults (Gu & Dao 2023): expand 2, n 16, d_conv 4.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from sim.core.timing import median_time
from sim.ssm.scan import discretise, selective_scan, zoh_scale

EXPAND, STATE, CONV = 2, 16, 4  # Mamba's expand factor, state size n and convolution width


def mamba_state_numbers(layers: int, d_model: int, expand: int = EXPAND, n: int = STATE, conv: int = CONV) -> int:
    """Numbers a Mamba model keeps per sequence while generating: layers × d_inner × (n + conv − 1)."""
    return layers * expand * d_model * (n + conv - 1)


def kv_cache_numbers(layers: int, d_model: int, tokens: int) -> int:
    """Numbers a Transformer's KV cache holds per sequence after `tokens` tokens: layers × 2 × d_model × tokens."""
    return layers * 2 * d_model * tokens


def kv_crossing(layers: int, d_model: int) -> tuple[float, int]:
    """(the token count at which the KV cache holds as many numbers as Mamba's state, the first whole token count at
    which it holds more). Both grow with layers × d_model alike, so the crossing depends on neither: per layer the
    state is expand · (n + conv − 1) · d_model numbers and the cache adds 2 · d_model a token (19 and 20 tokens with
    Mamba's defaults)."""
    state, per_token = mamba_state_numbers(layers, d_model), kv_cache_numbers(layers, d_model, 1)
    return state / per_token, state // per_token + 1


@dataclass(frozen=True)
class WorkedScan:
    """One channel (d = 1) of a selective scan over L steps, every intermediate number (rows: steps t)."""
    u: np.ndarray  # (L,) the input
    delta: np.ndarray  # (L,) the step size Δ_t
    A: np.ndarray  # (n,) the (negative) decay rates
    B: np.ndarray  # (L, n)
    C: np.ndarray  # (L, n)
    abar: np.ndarray  # (L, n) Ā_t = exp(Δ_t A)
    bbar: np.ndarray  # (L, n) B̄_t = Δ_t B_t (what Mamba's code uses)
    zoh_scale: np.ndarray  # (L, n) (exp(Δ_t A) − 1) / (Δ_t A): the paper's zero-order hold has B̄_t = this × Δ_t B_t
    zoh: np.ndarray  # (L, n) that B̄_t, for comparison
    h: np.ndarray  # (L, n) the state after step t
    y: np.ndarray  # (L,) y_t = C_t · h_t


def worked_scan(seed: int, L: int = 4, n: int = 2) -> WorkedScan:
    """A short input with round numbers drawn from `seed`, run through the recurrence one step at a time in float64
    (sim.ssm.selective_scan's discretisation: the test checks y against it)."""
    if not 1 <= L <= 12 or not 1 <= n <= 4:
        raise ValueError("invalid:size")
    rng = np.random.default_rng(seed)
    u = rng.integers(-3, 4, L).astype(float)
    delta = rng.choice([0.1, 0.5, 1.0, 2.0], L)
    A = -rng.choice([0.5, 1.0, 2.0], n)
    B = rng.integers(-2, 3, (L, n)).astype(float)
    C = rng.integers(-2, 3, (L, n)).astype(float)
    args = torch.tensor(delta)[:, None], torch.tensor(A)[None], torch.tensor(B)
    abar, bbar = (x[:, 0].numpy() for x in discretise(*args))
    h, state = np.zeros((L, n)), np.zeros(n)
    for t in range(L):
        state = abar[t] * state + bbar[t] * u[t]
        h[t] = state
    scale = zoh_scale(*args[:2])[:, 0].numpy()
    return WorkedScan(u, delta, A, B, C, abar, bbar, scale, scale * bbar, h, (h * C).sum(1))


FORMS = ("recurrence", "scan", "attention")


def _forms(L: int, d: int, n: int, g: torch.Generator) -> dict[str, Callable[[], torch.Tensor]]:
    """One forward pass of each form at length L, width d (state n for the scans), on inputs drawn from g."""
    u, delta = torch.randn(L, d, generator=g), torch.rand(L, d, generator=g) * 0.5
    A, B, C = -torch.rand(d, n, generator=g) - 0.5, torch.randn(L, n, generator=g), torch.randn(L, n, generator=g)
    q, k, v = (torch.randn(L, d, generator=g) for _ in range(3))
    future = ~torch.ones(L, L, dtype=torch.bool).tril()
    return {"recurrence": lambda: selective_scan(u, delta, A, B, C),
            "scan": lambda: selective_scan(u, delta, A, B, C, parallel=True),
            "attention": lambda: torch.softmax((q @ k.T / d ** 0.5).masked_fill(future, float("-inf")), -1) @ v}


@torch.no_grad()
def time_forms(lengths: Sequence[int], d: int = 16, n: int = 16, repeats: int = 3, seed: int = 0,
               progress: Callable[[int, int], None] | None = None) -> dict[str, list[float]]:
    """Median seconds of one forward pass at each length, measured on this machine's CPU: the selective scan as a
    recurrence (L steps in order), as the parallel scan (⌈log2 L⌉ rounds), and causal softmax attention of the
    same width (L × L scores). progress(i, total) after each measurement."""
    g = torch.Generator().manual_seed(seed)
    out: dict[str, list[float]] = {f: [] for f in FORMS}
    total, done = len(lengths) * len(FORMS), 0
    for L in lengths:
        for f, fn in _forms(L, d, n, g).items():
            out[f].append(median_time(fn, repeats))
            done += 1
            if progress is not None:
                progress(done, total)
    return out
