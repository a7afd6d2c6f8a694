"""Sequential against parallel, measured here: the time of one forward pass of an RNN layer (T steps, each waiting
for the one before) and of one causal self-attention layer (every position at once: a few matrix products, T² scores)
against the sequence length T, and the sequential steps each needs."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch
from torch import nn

from sim.core.timing import median_time

MODELS = ("rnn", "attention")


def sequential_steps(model: str, T: int, layers: int = 1) -> int:
    """Steps that must run one after another: an RNN's T per layer (step t needs h_{t−1}); attention's one per layer
    (all positions' products are independent of each other)."""
    if model not in MODELS:
        raise ValueError("invalid:model")
    return layers * (T if model == "rnn" else 1)


class CausalSelfAttention(nn.Module):
    """One head of causal self-attention with its projections (what a Transformer layer does across positions)."""

    def __init__(self, width: int):
        super().__init__()
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=-1)  # (B, T, C) each
        scores = q @ k.transpose(1, 2) / math.sqrt(C)  # (B, T, T)
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        return self.out(torch.softmax(scores.masked_fill(future, float("-inf")), -1) @ v)  # (B, T, C)


@torch.no_grad()
def forward_times(lengths: Sequence[int], width: int = 64, batch: int = 1, repeats: int = 3, seed: int = 0,
                  progress: Callable[[int, int], None] | None = None) -> dict[str, list[float]]:
    """Median seconds of a forward pass of each model (width `width`, `batch` sequences) at each length, on this
    machine's CPU with torch's current threads. progress(i, total) after each measurement."""
    g = torch.Generator().manual_seed(seed)
    with torch.device("meta"):
        models = {"rnn": nn.RNN(width, width, batch_first=True), "attention": CausalSelfAttention(width)}
    for name, m in models.items():  # built without touching torch's global generator, which every session shares
        models[name] = m.to_empty(device="cpu")
        for p in models[name].parameters():
            p.uniform_(-1 / math.sqrt(width), 1 / math.sqrt(width), generator=g)
    out: dict[str, list[float]] = {m: [] for m in MODELS}
    total, done = len(lengths) * len(MODELS), 0
    for T in lengths:
        x = torch.randn(batch, T, width, generator=g)
        for m in MODELS:
            out[m].append(median_time(lambda m=m, x=x: models[m](x), repeats))
            done += 1
            if progress is not None:
                progress(done, total)
    return out


def crossover(lengths: Sequence[int], times: dict[str, Sequence[float]]) -> int | None:
    """The shortest measured length from which on attention took longer than the RNN at every length measured (None:
    not even at the longest). A length where it was slower but faster again further on is not a crossover: timings
    this short are noisy on a shared CPU."""
    cross = None
    for T, r, a in zip(reversed(lengths), reversed(times["rnn"]), reversed(times["attention"]), strict=True):
        if a <= r:
            break
        cross = T
    return cross
