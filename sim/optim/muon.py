"""Muon against AdamW on a small network: the same MLP 2 → H → H → k, the same initial weights and data, trained
full-batch twice. Run "adamw": torch.optim.AdamW on every parameter. Run "muon": torch.optim.Muon on the one
hidden H × H weight matrix (Muon only takes 2-D parameters) and AdamW on the biases and on the input and output
layers, the mixed set-up that Muon is used with in practice (the boundary layers stay on AdamW).

Deterministic for a seed: the data come from sim.core.data, the initial weights from a torch.Generator of their own
(the global RNG is not touched), and every op runs on the CPU in float32.
"""
from __future__ import annotations

import math
from itertools import pairwise

import numpy as np

from sim.core.data import make_classification, n_classes

HIDDEN = 32
POINTS = 200
NOISE = 0.1  # the data set's noise (the Playground's 10 %)
WEIGHT_DECAY = 0.01  # both runs, every parameter group
RUNS = ("adamw", "muon")
# Liu et al. (Moonshot AI, 2025), "Muon is Scalable for LLM Training": AdamW's loss with about 52 % of its training
# FLOPs (their "about 2x computational efficiency"); the article's "48 % fewer"
SCALED_FLOPS_SHARE = 0.52


def init_mlp(seed: int, sizes: list[int]):
    """Weights (out, in) and biases (out,), uniform in ±1/√in as torch.nn.Linear, from their own generator."""
    import torch

    gen = torch.Generator().manual_seed(int(seed))
    out = []
    for fan_in, fan_out in pairwise(sizes):
        bound = 1.0 / math.sqrt(fan_in)
        w = (torch.rand((fan_out, fan_in), generator=gen) * 2 - 1) * bound
        b = (torch.rand((fan_out,), generator=gen) * 2 - 1) * bound
        out += [w, b]
    return out


def mlp_loss(params, X, y):
    """Cross-entropy of the tanh MLP whose weights and biases are `params` (init_mlp's order) on X (n, 2), y (n,)."""
    import torch

    h = X
    for i in range(0, len(params) - 2, 2):
        h = torch.tanh(h @ params[i].T + params[i + 1])
    return torch.nn.functional.cross_entropy(h @ params[-2].T + params[-1], y)


def train_mlp(run: str, dataset: str = "spiral", seed: int = 0, steps: int = 300, muon_lr: float = 0.02,
              adam_lr: float = 0.01, hidden: int = HIDDEN) -> np.ndarray:
    """Full-batch cross-entropy of the MLP 2 → hidden → hidden → k on `POINTS` points of `dataset` (inputs / 6,
    into [−1, 1]²) before each step and after the last, shape (steps + 1,). run "adamw": AdamW(adam_lr) on every
    parameter; "muon": Muon(muon_lr, momentum 0.95, Nesterov, 5 Newton–Schulz steps) on the hidden hidden × hidden
    weight, AdamW(adam_lr) on the rest. Both take weight decay WEIGHT_DECAY."""
    import torch

    if run not in RUNS:
        raise ValueError(f"unknown run {run!r}; one of {', '.join(RUNS)}")
    if steps < 1 or hidden < 1:
        raise ValueError(f"steps and hidden must be ≥ 1, got {steps}, {hidden}")
    X, y = make_classification(dataset, POINTS, NOISE, seed)
    X, y = torch.tensor(X / 6.0), torch.tensor(y)
    params = [p.requires_grad_() for p in init_mlp(seed, [2, hidden, hidden, n_classes(dataset)])]
    hidden_w = params[2]
    if run == "muon":
        rest = [p for p in params if p is not hidden_w]
        opts = [torch.optim.Muon([hidden_w], lr=muon_lr, weight_decay=WEIGHT_DECAY),
                torch.optim.AdamW(rest, lr=adam_lr, weight_decay=WEIGHT_DECAY)]
    else:
        opts = [torch.optim.AdamW(params, lr=adam_lr, weight_decay=WEIGHT_DECAY)]
    out = np.empty(steps + 1)
    for t in range(steps):
        for o in opts:
            o.zero_grad()
        loss = mlp_loss(params, X, y)
        loss.backward()
        out[t] = loss.item()
        for o in opts:
            o.step()
    with torch.no_grad():
        out[steps] = mlp_loss(params, X, y).item()
    return out


def compare(dataset: str = "spiral", seed: int = 0, steps: int = 300, muon_lr: float = 0.02,
            adam_lr: float = 0.01) -> dict[str, np.ndarray]:
    """Both runs' loss curves from the same data and initial weights: {"adamw": (steps + 1,), "muon": (…)}."""
    return {run: train_mlp(run, dataset, seed, steps, muon_lr, adam_lr) for run in RUNS}


def steps_to_reach(curve: np.ndarray, target: float) -> int | None:
    """The first step at which a loss curve is at or below `target` (None: never)."""
    hit = np.flatnonzero(np.asarray(curve, dtype=np.float64) <= target)
    return int(hit[0]) if hit.size else None

