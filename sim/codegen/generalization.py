"""The generalisation lab's live network (sim.fitting.fit.FitTrainer) as a PyTorch file (float32, as the lab).

Its three live sections: "capacity" (the curve, early stopping with `patience`), "regularization" (the curve, L2 in
the loss, L1 by a proximal step after Adam's, dropout) and "label_noise" (two-class points, some training labels
flipped). The same data (the generators and splits of sim.fitting.generalization and sim.core.data), the same
initial weights and dropout masks (one torch.Generator of the seed), the same full-batch fused Adam step per epoch.
The loss of a step is the training loss after that epoch, without dropout.
"""
from __future__ import annotations

from sim.codegen import header, main_block
from sim.codegen import section as code_section
from sim.codegen.classification import GENERATORS

SECTIONS = ("capacity", "regularization", "label_noise")
SPREAD = {"moons": 0.15}  # sim.fitting.generalization's noise of the label-noise sets

CURVE = """def make_data():
    \"\"\"N points around 2·sin(πx/3 + 0.7) on [-3, 3] with Gaussian noise, split train / validation / test.\"\"\"
    rng = np.random.default_rng(SEED)
    x = rng.uniform(-3.0, 3.0, N)
    y = 2.0 * np.sin(np.pi * x / 3.0 + 0.7) + rng.normal(0.0, NOISE, N)
    n_train, n_val = max(1, round(N * TRAIN)), max(1, round(N * VAL))
    if TRAIN + VAL > 1 - 1e-9 or n_train + n_val >= N:
        raise SystemExit("these shares leave no test set")
    perm = np.random.default_rng(np.random.SeedSequence(SEED, spawn_key=(3,))).permutation(N)
    train, val = perm[:n_train], perm[n_train:n_train + n_val]
    return x[train, None], y[train], x[val, None], y[val]  # (n, 1) inputs
"""

POINTS = """

def make_data():
    \"\"\"300 points: half to train (a share FLIP of their labels flipped), half to validate (clean labels).\"\"\"
    rng = np.random.default_rng(SEED)
    X, y = make_points(rng, 300, {noise!r})
    order = rng.permutation(300)
    X, y = np.clip(X[order], -6.0, 6.0).astype(np.float32), y[order].astype(np.int64)
    perm = np.random.default_rng(np.random.SeedSequence(SEED, spawn_key=(1,))).permutation(300)
    train, val = perm[:150], perm[150:]
    flip_rng = np.random.default_rng(np.random.SeedSequence(SEED, spawn_key=(6,)))
    flipped = np.zeros(150, dtype=bool)
    flipped[flip_rng.choice(150, round(FLIP * 150), replace=False)] = True
    return X[train], np.where(flipped, 1 - y[train], y[train]), X[val], y[val]
"""


def script(params: dict, link: str) -> str:
    v = params
    section = code_section(v, SECTIONS, "generalisation")
    binary = section == "label_noise"
    l1 = v["l1"] if section == "regularization" else 0.0
    l2 = v["l2"] if section == "regularization" else 0.0
    dropout = v["dropout"] if section == "regularization" else 0.0
    patience = v["patience"] if section == "capacity" else 0
    if binary:
        settings = [f"DATASET, FLIP, SEED = {v['dataset']!r}, {v['flip']!r}, {v['seed']}"]
        data = GENERATORS[v["dataset"]] + POINTS.format(noise=SPREAD.get(v["dataset"], 0.0))
    else:
        settings = [f"N, NOISE, TRAIN, VAL, SEED = {v['n']}, {v['noise']!r}, {v['train']!r}, {v['val']!r}, {v['seed']}"]
        data = CURVE
    settings.append(f"WIDTH, LR = {v['width']}, {v['lr']!r}  # two hidden layers of WIDTH tanh neurons; Adam's rate")
    if patience:
        settings.append(f"PATIENCE = {patience}  # stop once validation loss has not improved for this many epochs")
    if l2:
        settings.append(f"L2 = {l2!r}  # L2 * sum w^2 added to the loss (weights only)")
    if l1:
        settings.append(f"L1 = {l1!r}  # L1 * sum|w|, by a proximal step after Adam's")
    if dropout:
        settings.append(f"DROPOUT = {dropout!r}")
    loss = "F.binary_cross_entropy_with_logits" if binary else "F.mse_loss"
    objective = "loss_fn(forward(x[:n], training=True), t[:n])"
    if l2:
        objective += " + L2 * sum((W * W).sum() for W in weights)"
    drop = """
        if training:  # inverted dropout, masks from the same generator
            x = x * (torch.rand(x.shape, generator=gen) >= DROPOUT) / (1 - DROPOUT)""" if dropout else ""
    l1_step = """
        with torch.no_grad():  # L1's proximal step: soft-threshold each weight by LR·L1 / (sqrt(v_hat) + eps)
            for W in weights:
                state = optimizer.state[W]
                correction = math.sqrt(1 - 0.999 ** float(state["step"]))
                threshold = state["exp_avg_sq"].sqrt().div_(correction).add_(1e-8).reciprocal_().mul_(LR * L1)
                W.copy_(W.sign() * (W.abs() - threshold).clamp_min_(0.0))""" if l1 else ""
    stop = """
        if val_loss < best[0]:
            best = (val_loss, epoch, [p.detach().clone() for p in params])
        elif epoch - best[1] >= PATIENCE:  # early stopping: the best checkpoint goes back into the model
            with torch.no_grad():
                for p, saved in zip(params, best[2], strict=True):
                    p.copy_(saved)
            break""" if patience else ""
    best = """
    with torch.no_grad():
        z = forward(x)
    best = (loss_fn(z[n:], t[n:]).item(), 0, [p.detach().clone() for p in params])  # (val loss, epoch, params)""" \
        if patience else ""
    acc = ', "acc": acc' if binary else ""
    acc_line = """
        acc = ((z[:n] > 0).float() == t[:n]).float().mean().item()  # training accuracy""" if binary else ""
    what = {"capacity": "early stopping on the validation loss", "regularization": "L2, L1 and dropout",
            "label_noise": f"labels of {v['dataset']} flipped at random"}[section]
    return (header(f"Generalisation lab, {section} section", link, "epoch") + f'''\
"""A tanh MLP trained full-batch with Adam, one step per epoch: {what}.

Inputs are standardised with the training points' mean and std only; the losses are measured without dropout.
"""
import argparse
import json
{"import math" + chr(10) if l1 else ""}
import numpy as np
import torch
import torch.nn.functional as F

{chr(10).join(settings)}


{data}

X_train, y_train, X_val, y_val = make_data()
X_train, X_val = np.asarray(X_train, dtype=np.float64), np.asarray(X_val, dtype=np.float64)
mean, std = X_train.mean(axis=0), X_train.std(axis=0)
std = np.where(std > 0, std, 1.0)
x = torch.from_numpy(((np.concatenate([X_train, X_val]) - mean) / std).astype(np.float32))  # (N, d): train first
t = torch.from_numpy(np.concatenate([y_train, y_val]).astype(np.float32)).unsqueeze(1)  # (N, 1)
n = len(X_train)

gen = torch.Generator().manual_seed(SEED)  # the initial weights, then the dropout masks
sizes = [x.shape[1], WIDTH, WIDTH, 1]
weights = [(torch.rand(a, b, generator=gen) - 0.5).requires_grad_() for a, b in zip(sizes[:-1], sizes[1:], strict=True)]
biases = [torch.full((b,), 0.1, requires_grad=True) for b in sizes[1:]]  # Playground init: U(-0.5, 0.5), 0.1
params = weights + biases
optimizer = torch.optim.Adam(params, lr=LR, betas=(0.9, 0.999), eps=1e-8, fused=True)
loss_fn = {loss}


def forward(x, training=False):
    """Logits (B, 1) of inputs x (B, d)."""
    for W, b in zip(weights[:-1], biases[:-1], strict=True):
        x = torch.tanh(torch.addmm(b, x, W))  # b + x @ W: (B, WIDTH){drop}
    return torch.addmm(biases[-1], x, weights[-1])


def main(epochs):{best}
    for epoch in range(1, min(epochs, 5000) + 1):  # the lab's runs end at 5000 epochs
        optimizer.zero_grad()
        ({objective}).backward()
        optimizer.step(){l1_step}
        with torch.no_grad():
            z = forward(x)  # every point at once, no dropout
        train_loss, val_loss = loss_fn(z[:n], t[:n]).item(), loss_fn(z[n:], t[n:]).item(){acc_line}
        print(json.dumps({{"step": epoch, "loss": train_loss, "val_loss": val_loss{acc}}})){stop}
''' + main_block(500))
