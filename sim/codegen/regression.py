"""The regression lab's gradient-descent run (sim.fitting.regression.GDRun) as a PyTorch file (float64).

The same data (sim.fitting.regression_data's generator of the set, its outliers), the same design matrix (powers
of the inputs, standardised or not), w = b = 0 at the start, the same mini-batch orders (a numpy Generator of the
seed) and the same loss: ½·mean r² (mse), Huber or mean |r|, descended by plain SGD. A step is an epoch; its loss is
the loss on every point after the epoch. With the closed-form solver on the page the file trains the same model
by gradient descent, with the page's learning rate and batch size (what solver=gd shows live).
"""
from __future__ import annotations

from sim.codegen import header, main_block

CURVES = {  # name -> (x range, the noise-free trend, the set's unit of noise, outliers and Huber's δ)
    "linear": ((-3.0, 3.0), "1.5 * x + 1.0", 1.5),
    "quadratic": ((-3.0, 3.0), "0.5 * x * x - x - 1.0", 1.5),
    "sine": ((-3.0, 3.0), "2.0 * np.sin(np.pi * x / 3.0)", 1.0),
    "area_price": ((30.0, 150.0), "1.6 * x + 25.0", 20.0),  # m² -> 10,000 yuan
    "study_score": ((0.0, 10.0), "95.0 - 55.0 * np.exp(-x / 4.0)", 8.0),  # hours -> points
}
TEMPERATURE_SCALE = 5.0
LOSSES = {
    "mse": "0.5 * r * r",
    "huber": "torch.where(r.abs() <= DELTA, 0.5 * r * r, DELTA * (r.abs() - 0.5 * DELTA))",
    "mae": "r.abs()",
}


def _data(dataset: str) -> str:
    if dataset == "temperature":
        return """def make_data():
    \"\"\"Daily temperatures: a seasonal wave plus weather that persists; inputs (day-2, day-1), target the day.\"\"\"
    rng = np.random.default_rng(SEED)
    days = rng.integers(0, 365) + np.arange(N + 2)
    anomaly = np.zeros(N + 2)
    shocks = rng.normal(0.0, NOISE * SCALE, N + 2)
    for d in range(1, N + 2):
        anomaly[d] = 0.7 * anomaly[d - 1] + shocks[d]
    temp = 14.0 + 11.0 * np.sin(2 * np.pi * (days - 105) / 365) + anomaly
    return np.stack([temp[:-2], temp[1:-1]], axis=1), temp[2:]  # x (N, 2), y (N,)
"""
    (lo, hi), trend, _ = CURVES[dataset]
    return f"""def make_data():
    rng = np.random.default_rng(SEED)
    x = rng.uniform({lo!r}, {hi!r}, (N, 1))  # (N, 1)
    return x, truth(x[:, 0]) + rng.normal(0.0, NOISE * SCALE, N)


def truth(x):
    return {trend}
"""


def script(params: dict, link: str) -> str:
    v = params
    dataset = v["dataset"]
    if dataset not in (*CURVES, "temperature"):
        raise ValueError("invalid:dataset")
    scale = TEMPERATURE_SCALE if dataset == "temperature" else CURVES[dataset][2]
    batch = None if v["batch_size"] == "full" else v["batch_size"]
    loss = v["loss"]
    settings = [f"N, NOISE, SEED, SCALE = {v['n']}, {v['noise']!r}, {v['seed']}, {scale!r}  # SCALE: the set's unit",
                f"DEGREE, STANDARDIZE = {v['degree']}, {v['standardize']}",
                f"LR, BATCH = {v['lr']!r}, {batch!r}  # BATCH None: every point in each step"]
    if v["outliers"]:
        settings.append(f"OUTLIERS, OUTLIER_SIZE = {v['outliers']}, {v['outlier_size']!r}  # in units of SCALE")
    if loss == "huber":
        settings.append(f"DELTA = {v['delta']!r} * SCALE  # Huber's threshold, in target units")
    outliers = """

def add_outliers(x, y):
    \"\"\"Move OUTLIERS points, drawn among the 30 % largest inputs, by OUTLIER_SIZE·SCALE (a stream of its own).\"\"\"
    k = min(OUTLIERS, len(y))
    pick_rng = np.random.default_rng(np.random.SeedSequence(SEED, spawn_key=(2,)))
    candidates = np.argsort(x[:, -1])[-max(k, int(np.ceil(0.3 * len(y)))):]
    outlier = np.zeros(len(y), dtype=bool)
    outlier[pick_rng.choice(candidates, k, replace=False)] = True
    return y + outlier * OUTLIER_SIZE * SCALE
""" if v["outliers"] else ""
    add = "y = add_outliers(x, y)\n" if v["outliers"] else ""
    return (header(f"Regression lab ({dataset}, degree {v['degree']}, {loss})", link, "epoch") + f'''\
"""Gradient descent on a polynomial regression, as the regression lab trains it live.

Model: y_hat = X w + b, X the powers x, x^2, ..., x^DEGREE of each input{
" (inputs and columns z-scored)" if v["standardize"] else ""};
w = b = 0 at the start.
Loss: the mean over the points of {dict(mse="r^2 / 2", huber="Huber's (r^2 / 2 up to DELTA, then linear)",
                                      mae="|r|")[loss]} (r = y_hat - y).
"""
import argparse
import json

import numpy as np
import torch

{chr(10).join(settings)}


{_data(dataset)}{outliers}

def zscore(A):
    """Column means and scales (computed on A / max|A|, so huge powers do not overflow); constant columns keep 1."""
    top = np.abs(A).max(axis=0)
    top = np.where(top > 0, top, 1.0)
    mean, std = top * (A / top).mean(axis=0), top * (A / top).std(axis=0)
    return mean, np.where(std > 0, std, 1.0)


def design(x):
    """The design matrix of inputs x (n, p): (n, p·DEGREE), columns x, x·x, ... of each input by a running product."""
    if STANDARDIZE:
        mean, std = zscore(x)
        x = (x - mean) / std
    X = np.hstack([np.cumprod(np.broadcast_to(col[:, None], (len(col), DEGREE)), axis=1) for col in x.T])
    if STANDARDIZE:
        mean, std = zscore(X)
        X = (X - mean) / std
    return X


x, y = make_data()
{add}X, y = torch.from_numpy(design(x)), torch.from_numpy(y)  # (N, k), (N,)
w = torch.zeros(X.shape[1], dtype=torch.float64, requires_grad=True)
b = torch.zeros((), dtype=torch.float64, requires_grad=True)
optimizer = torch.optim.SGD([w, b], lr=LR)
rng = np.random.default_rng(SEED)  # the order of the mini-batches


def loss_fn(X, y):
    r = X @ w + b - y  # residuals (n,)
    return ({LOSSES[loss]}).mean()


def main(epochs):
    n = len(y)
    size = BATCH or n
    for epoch in range(1, epochs + 1):
        order = rng.permutation(n) if size < n else np.arange(n)
        for start in range(0, n, size):
            idx = order[start:start + size]
            optimizer.zero_grad()
            loss_fn(X[idx], y[idx]).backward()
            optimizer.step()
        with torch.no_grad():
            loss = loss_fn(X, y).item()  # on every point: the loss the lab shows
        print(json.dumps({{"step": epoch, "loss": loss}}))
        if not np.isfinite(loss):
            break
''' + main_block(100))
