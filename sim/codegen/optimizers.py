"""The optimiser lab's race (sim.optim.race, the "race" section) as a PyTorch file (float32, as the lab).

One racer per chosen optimiser, each from the same tanh MLP 2 → width → width → k with the same initial weights
(init_mlp's generator) and the same mini-batches (a torch.Generator of the seed per racer), with torch's fused
SGD, momentum, Adam and AdamW, the published Lion rule, and torch.optim.Muon on the hidden matrix with AdamW on the
rest. A step's loss is each racer's cross-entropy on the whole set after that step ("loss" maps racer -> loss).
"""
from __future__ import annotations

from sim.codegen import header, main_block
from sim.codegen.classification import GENERATORS

MAKE = {
    "sgd": "[torch.optim.SGD(params, lr=lr, fused=True)]",
    "momentum": "[torch.optim.SGD(params, lr=lr, momentum=0.9, fused=True)]",
    "adam": "[torch.optim.Adam(params, lr=lr, betas=(0.9, 0.999), fused=True)]",
    "adamw": "[torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.999), weight_decay=WEIGHT_DECAY, fused=True)]",
    "lion": "[Lion(params, lr=lr, weight_decay=WEIGHT_DECAY)]",
    "muon": ("[torch.optim.Muon([params[2]], lr=lr, weight_decay=WEIGHT_DECAY, momentum=0.95, ns_steps=5),\n"
             "                torch.optim.AdamW([p for i, p in enumerate(params) if i != 2], lr=ADAMW_LR,\n"
             "                                  betas=(0.9, 0.999), weight_decay=WEIGHT_DECAY, fused=True)]"),
}
LION = '''

class Lion(torch.optim.Optimizer):
    """Lion (Chen et al. 2023): c = b1·m + (1 - b1)·g; p -= lr·(sign(c) + wd·p); m = b2·m + (1 - b2)·g."""

    def __init__(self, params, lr, betas=(0.9, 0.99), weight_decay=0.0):
        super().__init__(params, {"lr": lr, "betas": betas, "weight_decay": weight_decay})

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            lr, (b1, b2), wd = group["lr"], group["betas"], group["weight_decay"]
            for p in group["params"]:
                m = self.state[p].setdefault("exp_avg", torch.zeros_like(p))
                c = m.mul(b1).add_(p.grad, alpha=1.0 - b1)
                p.add_(torch.sign(c).add_(p, alpha=wd), alpha=-lr)
                m.mul_(b2).add_(p.grad, alpha=1.0 - b2)
'''


def n_classes(dataset: str) -> int:
    return 3 if dataset == "spiral3" else int(dataset[-1]) if dataset.startswith("blobs") else 2


def script(params: dict, link: str) -> str:
    v = params
    if v["section"] != "race":
        raise LookupError(f"the {v['section']} section has no race to write out")
    opts = tuple(v["r_opts"])
    if not opts:
        raise LookupError("no optimiser in the race")
    lrs = {o: v[f"r_{o}_lr"] for o in opts}
    adamw = f"\nADAMW_LR = {v['r_adamw_lr']!r}  # Muon's AdamW part (on every parameter but the hidden matrix)" \
        if "muon" in opts else ""
    dataset = v["r_data"]
    makers = "\n".join(f"    if name == {o!r}:\n        return {MAKE[o]}" for o in opts)
    return (header(f"Optimiser lab: the race on {dataset}", link) + f'''\
"""Optimisers racing on one tanh MLP: the same data, initial weights and batches for each, one step at a time.
"""
import argparse
import json
import math

import numpy as np
import torch
import torch.nn.functional as F

DATASET, SEED = {dataset!r}, {v["r_seed"]}
WIDTH, BATCH, WEIGHT_DECAY = {v["r_width"]}, {v["r_batch"]}, {v["r_wd"]!r}  # WEIGHT_DECAY: AdamW's, Lion's, Muon's
LRS = {lrs!r}
MAX_STEPS = {v["r_steps"]}  # the race ends there{adamw}


{GENERATORS[dataset]}

def make_data():
    """200 points of the set with noise 0.1, scaled into [-1, 1]^2."""
    rng = np.random.default_rng(SEED)
    X, y = make_points(rng, 200, 0.1)
    order = rng.permutation(200)
    X = np.clip(X[order], -6.0, 6.0).astype(np.float32)
    return torch.tensor(X / 6.0), torch.tensor(y[order].astype(np.int64))


def init_mlp(sizes):
    """Weights (out, in) and biases (out,) uniform in ±1/sqrt(in), as nn.Linear, from a generator of the seed."""
    gen = torch.Generator().manual_seed(SEED)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
        bound = 1.0 / math.sqrt(fan_in)
        params.append((torch.rand((fan_out, fan_in), generator=gen) * 2 - 1) * bound)
        params.append((torch.rand((fan_out,), generator=gen) * 2 - 1) * bound)
    return [p.requires_grad_() for p in params]


def mlp_loss(params, X, y):
    """Cross-entropy of the tanh MLP on X (n, 2), y (n,)."""
    h = X
    for i in range(0, len(params) - 2, 2):
        h = torch.tanh(h @ params[i].T + params[i + 1])  # (n, WIDTH)
    return F.cross_entropy(h @ params[-2].T + params[-1], y)
{LION if "lion" in opts else ""}

def make_optimizers(name, params, lr):
{makers}


def main(steps):
    X, y = make_data()
    racers, diverged = {{}}, set()
    for name, lr in LRS.items():
        params = init_mlp([2, WIDTH, WIDTH, {n_classes(dataset)}])
        with torch.no_grad():
            start = mlp_loss(params, X, y).item()
        racers[name] = (params, make_optimizers(name, params, lr), torch.Generator().manual_seed(SEED), start)
    for step in range(1, min(steps, MAX_STEPS) + 1):
        losses = {{}}
        for name, (params, optimizers, gen, start) in racers.items():
            if name in diverged:
                continue
            if BATCH >= len(y):
                xb, yb = X, y
            else:
                idx = torch.randint(0, len(y), (BATCH,), generator=gen)  # (BATCH,) points drawn at random
                xb, yb = X[idx], y[idx]
            for opt in optimizers:
                opt.zero_grad(set_to_none=True)
            mlp_loss(params, xb, yb).backward()
            for opt in optimizers:
                opt.step()
            with torch.no_grad():
                losses[name] = mlp_loss(params, X, y).item()  # on the whole set: what the lab shows
            if not losses[name] <= 10 * start:  # the lab stops a racer whose loss passed 10x its start
                diverged.add(name)
        print(json.dumps({{"step": step, "loss": losses}}))
''' + main_block(300))
