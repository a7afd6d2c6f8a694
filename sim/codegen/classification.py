"""The classification lab's run as a PyTorch file (float64).

The lab's engine (sim.nets.fastnet) is compiled loops, not PyTorch: this file is its PyTorch equivalent, with the
same data (sim.core.data's generator for the chosen set, its split), the same Playground initial weights, batch
orders and dropout uniforms (numpy Generators of the seed's streams, drawn in the engine's order), and the same
updates (torch.optim's SGD, momentum, Adam, AdamW with decay on the weights only, the L1/L2 penalty on the weights).
A step is an epoch; its loss is the data loss on the whole training set, in eval mode, after the epoch.
"""
from __future__ import annotations

from sim.codegen import header, main_block

REGRESSION_SETS = ("plane", "gauss_multi")
CLASSIFICATION_SETS = ("circle", "xor", "gauss", "spiral", "spiral3", "moons", "blobs3", "blobs4", "blobs5",
                       "imbalanced")
SIZES = ("def class_sizes(n, k):\n"
         "    return n // k + (np.arange(k) < n % k)  # k class sizes that differ by one at most\n")
STD = "    std = np.sqrt(0.5 + noise * 7.0)  # the Playground's gauss spread\n"
BLOBS = ("    y = np.repeat(np.arange(len(centers)), class_sizes(n, len(centers)))\n"
         "    return centers[y] + rng.normal(0, std, (n, 2)), y\n")
# each set's generator: `make_points(rng, n, noise) -> X (n, 2), y (n,)`, before the shuffle (sim.core.data)
GENERATORS = {
    "circle": SIZES + """

def make_points(rng, n, noise):
    radius = 5.0
    outer, inner = class_sizes(n, 2)  # class 0 on the outer ring, class 1 in the inner disc
    r = np.concatenate([rng.uniform(0, radius * 0.5, inner), rng.uniform(radius * 0.7, radius, outer)])
    angle = rng.uniform(0, 2 * np.pi, n)
    X = np.stack([r * np.sin(angle), r * np.cos(angle)], axis=1)
    shifted = X + rng.uniform(-radius, radius, (n, 2)) * noise  # noise moves the point the label is read at
    return X, np.linalg.norm(shifted, axis=1) < radius * 0.5
""",
    "xor": SIZES + """

def make_points(rng, n, noise):
    same_sign = np.repeat([True, False], class_sizes(n, 2))  # x1·x2 >= 0 is class 1
    sx = rng.choice([-1.0, 1.0], n)
    sy = np.where(same_sign, sx, -sx)
    X = np.stack([sx, sy], axis=1) * (rng.uniform(0, 5, (n, 2)) + 0.3)
    shifted = X + rng.uniform(-5, 5, (n, 2)) * noise
    return X, shifted[:, 0] * shifted[:, 1] >= 0
""",
    "gauss": SIZES + "\n\ndef make_points(rng, n, noise):\n    centers = np.array([[-2.0, -2.0], [2.0, 2.0]])\n" + STD
    + BLOBS,
    "moons": SIZES + """

def make_points(rng, n, noise):
    upper, lower = class_sizes(n, 2)
    a, b = rng.uniform(0, np.pi, upper), rng.uniform(0, np.pi, lower)
    X = np.concatenate([np.stack([np.cos(a), np.sin(a)], 1), np.stack([1 - np.cos(b), 0.5 - np.sin(b)], 1)])
    X = (X - [0.5, 0.25] + rng.normal(0, noise, (n, 2))) * 3.5
    return X, np.repeat([0, 1], [upper, lower])
""",
    "imbalanced": """def make_points(rng, n, noise):
    rare = min(max(int(round(n * 0.1)), 1), n - 1)  # 10 % of class 1
    y = np.repeat([0, 1], [n - rare, rare])
    centers = np.array([[-1.0, -1.0], [1.5, 1.5]])
    spread = np.array([1.8, 1.0]) * np.sqrt(0.5 + noise * 7.0) / np.sqrt(0.5)
    return centers[y] + rng.normal(0, 1, (n, 2)) * spread[y, None], y
""",
}
for _k in (2, 3):
    GENERATORS["spiral" if _k == 2 else "spiral3"] = SIZES + f"""

def make_points(rng, n, noise):
    sizes = class_sizes(n, {_k})
    y = np.concatenate([np.full(size, label) for label, size in enumerate(sizes)])
    t = np.concatenate([np.arange(size) / size for size in sizes])  # 0 -> 1 along each arm
    angle = 1.75 * t * 2 * np.pi + 2 * np.pi * (y + 1) / {_k}
    X = 5.0 * t[:, None] * np.stack([np.sin(angle), np.cos(angle)], axis=1)
    return X + rng.uniform(-1, 1, (n, 2)) * noise, y
"""
for _k in (3, 4, 5):
    GENERATORS[f"blobs{_k}"] = SIZES + f"""

def make_points(rng, n, noise):
    angles = np.pi / 2 + 2 * np.pi * np.arange({_k}) / {_k}
    centers = 3.5 * np.stack([np.cos(angles), np.sin(angles)], axis=1)
""" + STD + BLOBS
GENERATORS["plane"] = """def make_points(rng, n, noise):
    X = rng.uniform(-6.0, 6.0, (n, 2))
    P = X + rng.uniform(-6.0, 6.0, (n, 2)) * noise  # noise shifts the point the target is read at
    return X, np.clip((P[:, 0] + P[:, 1]) / 10.0, -1, 1)
"""
GENERATORS["gauss_multi"] = """def make_points(rng, n, noise):
    X = rng.uniform(-6.0, 6.0, (n, 2))
    P = X + rng.uniform(-6.0, 6.0, (n, 2)) * noise  # noise shifts the point the target is read at
    G = np.array([[-4, 2.5, 1], [0, 2.5, -1], [4, 2.5, 1], [-4, -2.5, -1], [0, -2.5, 1], [4, -2.5, -1]])
    bumps = G[:, 2] * np.clip(1 - np.linalg.norm(P[:, None, :] - G[None, :, :2], axis=2) / 2, 0, 1)  # (n, 6)
    return X, np.clip(bumps[np.arange(n), np.abs(bumps).argmax(axis=1)], -1, 1)
"""
FEATURES = {"x1": "X[:, 0]", "x2": "X[:, 1]", "x1sq": "X[:, 0] * X[:, 0]", "x2sq": "X[:, 1] * X[:, 1]",
            "x1x2": "X[:, 0] * X[:, 1]", "sinx1": "np.sin(X[:, 0])", "sinx2": "np.sin(X[:, 1])"}
ACTIVATIONS = {"relu": "torch.relu({})", "tanh": "torch.tanh({})", "sigmoid": "torch.sigmoid({})", "linear": "{}"}


def n_classes(dataset: str) -> int:
    return 3 if dataset == "spiral3" else int(dataset[-1]) if dataset.startswith("blobs") else 2


def script(params: dict, link: str) -> str:
    v = params
    regression = v["problem"] == "regression"
    sets = REGRESSION_SETS if regression else CLASSIFICATION_SETS
    dataset = v["dataset"] if v["dataset"] in sets else sets[0]  # as the page's menu shows it
    if not v["features"]:
        raise ValueError("invalid:features")
    k = 1 if regression else n_classes(dataset)
    kind = "regression" if regression else ("binary" if k == 2 else "softmax")
    squared = regression or v["loss"] == "squared_error"
    reg, rate = v["regularization"], v["reg_rate"]
    l1, l2 = (rate if reg == "l1" else 0.0), (rate if reg == "l2" else 0.0)
    dropout, hidden, opt = v["dropout"], tuple(v["hidden"]), v["optimizer"]
    n_out = k if kind == "softmax" else 1
    loss = {("regression", True): "F.mse_loss(z[:, 0], y)",
            ("binary", False): "F.binary_cross_entropy_with_logits(z[:, 0], y)",
            ("binary", True): "F.mse_loss(torch.sigmoid(z[:, 0]), y)",
            ("softmax", False): "F.cross_entropy(z, y)",
            ("softmax", True): f"F.mse_loss(torch.softmax(z, dim=1), F.one_hot(y, {k}).double())"}[kind, squared]
    y_type = "np.int64" if kind == "softmax" else "np.float64"
    act = ACTIVATIONS[v["activation"]]
    features = ", ".join(FEATURES[f] for f in v["features"])
    if len(features) > 40:
        features = "\n        " + ",\n        ".join(FEATURES[f] for f in v["features"]) + ",\n    "
    optimizer = {
        "sgd": "torch.optim.SGD(weights + biases, lr=LR)",
        "momentum": "torch.optim.SGD(weights + biases, lr=LR, momentum=0.9)",
        "adam": "torch.optim.Adam(weights + biases, lr=LR, betas=(0.9, 0.999), eps=1e-8)",
        "adamw": ("torch.optim.AdamW([{\"params\": weights, \"weight_decay\": WEIGHT_DECAY},  # decay: weights only\n"
                  "                               {\"params\": biases, \"weight_decay\": 0.0}], lr=LR)"),
    }[opt]
    penalty = ""
    if l1:
        penalty += "\n            loss = loss + L1 * sum(W.abs().sum() for W in weights)"
    if l2:
        penalty += "\n            loss = loss + L2 * sum((W * W).sum() for W in weights)"
    drop_draw = ("        u = drop_rng.random((len(order), N_UNITS))  # one uniform per (point, hidden unit)\n"
                 if dropout and hidden else "")
    drop_arg = ", u[start:start + BATCH]" if dropout and hidden else ""
    forward = ['def forward(x, u=None):' if dropout and hidden else 'def forward(x):',
               f'    """Logits (B, {n_out}) of feature rows x (B, {len(v["features"])}); u: dropout\'s uniforms '
               '(B, units), None in eval mode."""' if dropout and hidden else
               f'    """Logits (B, {n_out}) of feature rows x (B, {len(v["features"])})."""']
    if hidden:
        forward += ['    unit = 0' if dropout else None,
                    '    for W, b in zip(weights[:-1], biases[:-1], strict=True):',
                    f'        x = {act.format("x @ W + b")}  # (B, width)']
        if dropout:
            forward += ['        if u is not None:  # inverted dropout: keep a unit where its uniform >= DROPOUT',
                        '            keep = torch.from_numpy(u[:, unit:unit + W.shape[1]] >= DROPOUT)',
                        '            x = x * keep / (1 - DROPOUT)',
                        '        unit += W.shape[1]']
    forward.append('    return x @ weights[-1] + biases[-1]')
    forward = "\n".join(line for line in forward if line is not None)
    settings = [f"N, NOISE, SEED = {v['n']}, {v['noise']!r}, {v['seed']}",
                f"TRAIN_RATIO, VAL_RATIO = {v['train_ratio']!r}, {v['val_ratio']!r}  # the rest is the test set",
                f"HIDDEN = {hidden!r}  # neurons per hidden layer ({v['activation']})",
                f"LR, BATCH = {v['lr']!r}, {v['batch_size']}"]
    if l1:
        settings.append(f"L1 = {l1!r}  # L1 * sum|w| added to the loss (weights only)")
    if l2:
        settings.append(f"L2 = {l2!r}  # L2 * sum w^2 added to the loss (weights only)")
    if opt == "adamw":
        settings.append(f"WEIGHT_DECAY = {v['weight_decay']!r}")
    if dropout and hidden:
        settings.append(f"DROPOUT = {dropout!r}")
    net = " -> ".join(map(str, (len(v["features"]), *hidden, n_out)))
    y_cast = ".astype(np.float32)" if regression else ".astype(np.int64)"
    return (header(f"Classification lab ({dataset}, {v['problem']})", link, "epoch") + f'''\
"""A {kind} MLP {net} trained on {dataset}: the lab's engine in float64 PyTorch.

Every random number comes from numpy Generators of the seed, in the lab's order: data, split, initial weights
(U(-0.5, 0.5), biases 0.1, as TensorFlow Playground), one shuffle of the training points per epoch{
", the dropout masks" if dropout and hidden else ""}.
"""
import argparse
import json

import numpy as np
import torch
import torch.nn.functional as F

{chr(10).join(settings)}
torch.set_default_dtype(torch.float64)


{GENERATORS[dataset]}

def make_data():
    rng = np.random.default_rng(SEED)
    X, y = make_points(rng, N, NOISE)
    order = rng.permutation(N)  # the generator emits the points grouped by class
    return np.clip(X[order], -6.0, 6.0).astype(np.float32), y[order]{y_cast}


def split(n):
    """Shuffled indices: training, validation (the test set is the rest)."""
    perm = np.random.default_rng(np.random.SeedSequence(SEED, spawn_key=(1,))).permutation(n)
    n_train = min(max(int(n * TRAIN_RATIO), 1), n - 1)
    train, rest = perm[:n_train], perm[n_train:]
    if len(rest) < 2:
        train, rest = train[:-1], np.concatenate([train[-1:], rest])
    n_val = min(max(int(round(len(rest) * VAL_RATIO)), 1), len(rest) - 1)
    return train, rest[:n_val]


def features(X):
    """The input features {", ".join(v["features"])} of points X (n, 2): (n, {len(v["features"])})."""
    return torch.from_numpy(np.stack([{features}], axis=1).astype(np.float32).astype(np.float64))


X, y = make_data()
train, val = split(N)
x_train, x_val = features(X[train]), features(X[val])
y_train, y_val = torch.from_numpy(y[train].astype({y_type})), torch.from_numpy(y[val].astype({y_type}))

init, order_rng, drop_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(SEED, spawn_key=(2,)).spawn(3))
sizes = [{len(v["features"])}, *HIDDEN, {n_out}]
weights = [torch.tensor(init.random((a, b)) - 0.5, requires_grad=True)  # (in, out)
           for a, b in zip(sizes[:-1], sizes[1:], strict=True)]
biases = [torch.full((b,), 0.1, requires_grad=True) for b in sizes[1:]]
{"N_UNITS = sum(HIDDEN)" + chr(10) if dropout and hidden else ""}optimizer = {optimizer}


{forward}


def data_loss(z, y):
    return {loss}


def main(epochs):
    for epoch in range(1, epochs + 1):
        order = order_rng.permutation(len(y_train))
{drop_draw}        for start in range(0, len(order), BATCH):
            idx = order[start:start + BATCH]
            loss = data_loss(forward(x_train[idx]{drop_arg}), y_train[idx]){penalty}
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():  # the losses the lab shows: data loss on each whole set, no dropout
            train_loss, val_loss = data_loss(forward(x_train), y_train).item(), data_loss(forward(x_val), y_val).item()
        print(json.dumps({{"step": epoch, "loss": train_loss, "val_loss": val_loss}}))
''' + main_block(100))
