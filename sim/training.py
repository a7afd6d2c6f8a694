"""Stepwise trainer of the classification lab: step(n) advances, history records, divergence stops it.

Speed matters more than usual: the page trains live between frames, so an epoch of the default
config (25 mini-batches of 10 points) must cost a few milliseconds. Per mini-batch the work is a
handful of tiny tensor ops, so the cost is PyTorch's per-op overhead, not arithmetic; the loop below
keeps that overhead low (tensors built once, one permutation per epoch sliced into views, gradients
from torch.autograd.grad, fused optimizers, one no_grad pass and one host transfer per epoch).
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch.optim.adam import adam
from torch.optim.adamw import adamw
from torch.optim.sgd import sgd

from sim.data import (
    CLASSIFICATION_DATASETS,
    DOMAIN,
    FEATURES,
    REGRESSION_DATASETS,
    feature_matrix,
    make_classification,
    make_regression,
    split,
)
from sim.history import bound
from sim.models import ACTIVATIONS, MLP

PROBLEMS = ("classification", "regression")
REGULARIZATIONS = ("none", "l1", "l2")
LOSSES = ("cross_entropy", "squared_error")
OPTIMIZERS = ("sgd", "momentum", "adam", "adamw")
DIVERGED = 1e6  # a loss or a parameter magnitude above this counts as divergence, like a non-finite one
# Bounded divergence: a too-large step can also throw the model back and forth without ever producing
# a huge number (a saturated tanh net at lr = 10). When the training loss, averaged over the last
# OVERSHOOT_WINDOW epochs, is above OVERSHOOT times the loss of the best constant guess, the updates
# are making the model worse than knowing nothing, and training stops as diverged.
OVERSHOOT, OVERSHOOT_WINDOW = 2.0, 10
HISTORY_KEYS = ("train_loss", "test_loss", "train_acc", "test_acc")  # the values of a history record besides "epoch"


@dataclass(frozen=True)
class ClassifierConfig:
    """Everything that defines a run; defaults are TensorFlow Playground's."""

    problem: str = "classification"  # "classification" or "regression"
    dataset: str = "circle"  # a name in data.CLASSIFICATION_DATASETS or data.REGRESSION_DATASETS
    n: int = 500  # number of points, train and test together (ignored for uploaded data)
    noise: float = 0.0  # 0..0.5, the Playground's noise percent / 100
    train_ratio: float = 0.5  # share of the points used for training, the rest is the test set
    batch_size: int = 10  # points per optimizer update
    features: tuple[str, ...] = ("x1", "x2")  # input features, names from data.FEATURES
    hidden: tuple[int, ...] = (4, 2)  # neurons per hidden layer; () is logistic / linear regression
    activation: str = "tanh"  # hidden activation: relu, tanh, sigmoid or linear
    lr: float = 0.03  # learning rate
    regularization: str = "none"  # "none", "l1" or "l2" penalty on the weights, never the biases
    reg_rate: float = 0.0  # strength of that penalty
    loss: str = "cross_entropy"  # "cross_entropy" or "squared_error"; regression always uses squared error
    optimizer: str = "sgd"  # "sgd", "momentum" (SGD, momentum 0.9), "adam" or "adamw"
    dropout: float = 0.0  # drop probability after each hidden activation, training only
    seed: int = 0  # seeds the data, the split, the initial weights, the batch order and dropout

    def __post_init__(self):
        # accept lists (e.g. parsed from a URL) but store tuples, so the config stays hashable
        object.__setattr__(self, "features", tuple(self.features))
        object.__setattr__(self, "hidden", tuple(self.hidden))
        datasets = REGRESSION_DATASETS if self.problem == "regression" else CLASSIFICATION_DATASETS
        valid = {
            "problem": self.problem in PROBLEMS,
            "dataset": self.dataset in datasets,
            "n": _is_int(self.n) and self.n >= 2,
            "noise": math.isfinite(self.noise) and self.noise >= 0,
            "train_ratio": 0 < self.train_ratio < 1,
            "batch_size": _is_int(self.batch_size) and self.batch_size >= 1,
            "features": 0 < len(self.features) == len(set(self.features)) and set(self.features) <= set(FEATURES),
            "hidden": all(_is_int(w) and w >= 1 for w in self.hidden),
            "activation": self.activation in ACTIVATIONS,
            "lr": math.isfinite(self.lr) and self.lr > 0,
            "regularization": self.regularization in REGULARIZATIONS,
            "reg_rate": math.isfinite(self.reg_rate) and self.reg_rate >= 0,
            "loss": self.loss in LOSSES,
            "optimizer": self.optimizer in OPTIMIZERS,
            "dropout": 0 <= self.dropout < 1,
            "seed": _is_int(self.seed) and self.seed >= 0,
        }
        for field, ok in valid.items():
            if not ok:
                raise ValueError(f"invalid:{field}")


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _grid_points(resolution: int) -> np.ndarray:
    """Points (res*res, 2) of a res x res grid over [-6, 6]²: row 0 is y=+6 (top), column 0 is x=-6."""
    xs = np.linspace(-DOMAIN, DOMAIN, resolution, dtype=np.float32)
    gx, gy = np.meshgrid(xs, xs[::-1])
    return np.stack([gx.ravel(), gy.ravel()], axis=1)


class Trainer:
    """An MLP trained on 2-D points one epoch at a time, with a loss/accuracy history."""

    def __init__(self, config: ClassifierConfig, data: tuple[np.ndarray, np.ndarray] | None = None):
        self.config = config
        regression = config.problem == "regression"
        if data is None:
            make = make_regression if regression else make_classification
            data = make(config.dataset, config.n, config.noise, config.seed)
        X, y = data
        train_idx, test_idx = split(len(X), config.train_ratio, config.seed)
        self.X_train, self.y_train = X[train_idx], y[train_idx]
        self.X_test, self.y_test = X[test_idx], y[test_idx]
        # columns of predict_proba: k classes (2 for binary), or the single predicted value
        self.n_classes = 1 if regression else max(2, int(y.max()) + 1)
        self.epoch = 0
        # one record per epoch, bounded: past sim.history.CAP records the middle is thinned (min–max),
        # the first and the most recent epochs stay in full
        self.history: list[dict] = []
        self.diverged = False
        self.divergence: str | None = None  # why: "blowup" (non-finite or > DIVERGED) or "overshoot"

        # binary: one logit, sigmoid + BCE; k > 2 classes: k logits, softmax + CE; regression: linear output
        self._kind = "regression" if regression else ("binary" if self.n_classes == 2 else "softmax")
        squared = regression or config.loss == "squared_error"
        self._data_loss = _LOSSES[self._kind, squared]
        self._penalty = _penalty(config)
        self._generator = torch.Generator().manual_seed(config.seed)
        n_out = self.n_classes if self._kind == "softmax" else 1
        self.model = MLP(
            len(config.features), config.hidden, n_out, config.activation, config.dropout, self._generator
        )
        self._weights = [layer.weight for layer in self.model.layers]
        # weights then biases: the order _Optimizer.step expects its gradients in
        self._params = self._weights + [layer.bias for layer in self.model.layers]
        self.optimizer = _Optimizer(config, self._weights, self._params[len(self._weights) :])
        self._state = self._params + self.optimizer.tensors()  # all a divergence restore puts back

        # tensors built once: features and targets of the training set, then train + test for the history
        self._x_train = self._features(self.X_train)
        self._t_train = self._targets(self.y_train, squared)
        self._x_all = torch.cat([self._x_train, self._features(self.X_test)])
        self._t_all = torch.cat([self._t_train, self._targets(self.y_test, squared)])
        self._labels_all = torch.from_numpy(np.concatenate([self.y_train, self.y_test]).astype(np.int64))
        self.baseline_loss = self._constant_guess_loss()

    @torch.no_grad()
    def _constant_guess_loss(self) -> float:
        """Training loss of the best constant output: the class shares, or the mean of the targets."""
        if self._kind == "regression":
            z = self._t_train.mean().expand_as(self._t_train)
        else:
            share = torch.bincount(torch.from_numpy(self.y_train.astype(np.int64)), minlength=self.n_classes)
            share = (share.float() / len(self.y_train)).clamp(1e-6, 1 - 1e-6)
            logits = torch.log(share[1:] / share[0]) if self._kind == "binary" else torch.log(share)
            z = logits.expand(len(self._t_train), -1)
        return max(float(self._data_loss(z, self._t_train)), 1e-3)

    def _features(self, X: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(feature_matrix(X, self.config.features))  # (N, n_features)

    def _targets(self, y: np.ndarray, squared: bool) -> torch.Tensor:
        """Targets in the form the loss takes: (N, 1) floats, (N,) class indices, or (N, k) one-hot."""
        if self._kind != "softmax":
            return torch.from_numpy(y.astype(np.float32)).unsqueeze(1)
        labels = torch.from_numpy(y.astype(np.int64))
        return F.one_hot(labels, self.n_classes).float() if squared else labels

    def step(self, epochs: int = 1) -> None:
        """Train `epochs` epochs; on divergence, restore the state before that epoch and stop for good."""
        for _ in range(epochs):
            if self.diverged:
                return
            self._epoch()

    def _epoch(self) -> None:
        """One shuffled pass over the training points, an update per mini-batch, then a history record."""
        snapshot = [t.detach().clone() for t in self._state]
        order = torch.randperm(len(self._x_train), generator=self._generator)
        size = self.config.batch_size
        for xb, tb in zip(self._x_train[order].split(size), self._t_train[order].split(size)):
            loss = self._data_loss(self.model(xb), tb)
            if self._penalty is not None:
                loss = loss + self._penalty(self._weights)
            # autograd.grad returns the gradients directly: no .grad to zero and accumulate into
            self.optimizer.step(torch.autograd.grad(loss, self._params))
        record = self._evaluate()
        if record is None:
            with torch.no_grad():
                for t, saved in zip(self._state, snapshot):
                    t.copy_(saved)
            self.diverged, self.divergence = True, "blowup"
            return
        self.epoch += 1
        self.history.append({"epoch": self.epoch, **record})
        bound(self.history, "epoch", HISTORY_KEYS)
        if self.recent_train_loss() > OVERSHOOT * self.baseline_loss:
            self.diverged, self.divergence = True, "overshoot"  # the weights are finite: they are kept

    def recent_train_loss(self) -> float:
        """Mean training loss of the last OVERSHOOT_WINDOW epochs (0 before there are that many)."""
        if len(self.history) < OVERSHOOT_WINDOW:
            return 0.0
        return sum(h["train_loss"] for h in self.history[-OVERSHOOT_WINDOW:]) / OVERSHOOT_WINDOW

    @torch.no_grad()
    def _evaluate(self) -> dict | None:
        """Data loss and accuracy on the full train and test sets; None if the run has diverged."""
        self.model.eval()
        z = self.model(self._x_all)
        self.model.train()
        n = len(self._x_train)
        values = [self._data_loss(z[:n], self._t_all[:n]), self._data_loss(z[n:], self._t_all[n:])]
        if self._kind != "regression":
            correct = (z.squeeze(1) > 0 if self._kind == "binary" else z.argmax(1)) == self._labels_all
            values += [correct[:n].float().mean(), correct[n:].float().mean()]
        # the largest |parameter|: the loss alone can miss a blow-up (dead ReLUs or a saturated tanh
        # behind a huge weight still give a finite loss)
        values.append(torch.cat([p.view(-1) for p in self._params]).abs().max())
        values = torch.stack(values).tolist()
        if not all(math.isfinite(v) for v in values) or max(values[:2] + values[-1:]) > DIVERGED:
            return None
        train_acc, test_acc = values[2:4] if self._kind != "regression" else (None, None)
        return {"train_loss": values[0], "test_loss": values[1], "train_acc": train_acc, "test_acc": test_acc}

    def _outputs(self, z: torch.Tensor) -> torch.Tensor:
        """Logits (m, n_out) -> class probabilities (m, k), or the predicted values (m, 1) for regression."""
        if self._kind == "binary":
            p = torch.sigmoid(z)
            return torch.cat([1 - p, p], dim=1)
        return torch.softmax(z, dim=1) if self._kind == "softmax" else z

    @torch.no_grad()
    def _forward_all(self, X_raw: np.ndarray) -> list[torch.Tensor]:
        """Hidden activations and outputs for raw points (m, 2), in eval mode, training state untouched."""
        self.model.eval()
        outs = self.model.forward_all(self._features(np.asarray(X_raw, dtype=np.float32)))
        self.model.train()
        return outs[:-1] + [self._outputs(outs[-1])]

    def predict_proba(self, X_raw: np.ndarray) -> np.ndarray:
        """Class probabilities (m, k) of raw points (m, 2), binary as [1-p, p]; regression: values (m, 1)."""
        return self._forward_all(X_raw)[-1].numpy()

    def _grid(self, resolution: int) -> list[np.ndarray]:
        """Every hidden layer's activations and the outputs on the grid, each (res, res, width)."""
        outs = self._forward_all(_grid_points(resolution))
        return [o.numpy().reshape(resolution, resolution, -1) for o in outs]

    def predict_grid(self, resolution: int) -> np.ndarray:
        """predict_proba on a res x res grid of [-6, 6]²: (res, res, k); row 0 at y=+6, column 0 at x=-6."""
        return self._grid(resolution)[-1]

    def grid_activations(self, resolution: int) -> list[np.ndarray]:
        """Each hidden layer's activations over the grid of predict_grid: list of (res, res, width)."""
        return self._grid(resolution)[:-1]

    def input_grids(self, resolution: int) -> np.ndarray:
        """The input features over the grid of predict_grid: (res, res, n_features)."""
        features = feature_matrix(_grid_points(resolution), self.config.features)
        return features.reshape(resolution, resolution, -1)

    def layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Copies of every layer's (W (out, in), b (out,)), input side first."""
        return [(l.weight.detach().numpy().T.copy(), l.bias.detach().numpy().copy()) for l in self.model.layers]


def _softmax_squared_error(z: torch.Tensor, one_hot: torch.Tensor) -> torch.Tensor:
    return F.mse_loss(torch.softmax(z, dim=1), one_hot)


def _sigmoid_squared_error(z: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.mse_loss(torch.sigmoid(z), target)


# (output kind, squared error?) -> data loss of logits and targets, mean over the batch
_LOSSES = {
    ("regression", True): F.mse_loss,
    ("binary", False): F.binary_cross_entropy_with_logits,
    ("binary", True): _sigmoid_squared_error,
    ("softmax", False): F.cross_entropy,
    ("softmax", True): _softmax_squared_error,
}


def _l1(weights: list[torch.Tensor]) -> torch.Tensor:
    return sum(w.abs().sum() for w in weights)


def _l2(weights: list[torch.Tensor]) -> torch.Tensor:
    return 0.5 * sum((w * w).sum() for w in weights)


def _penalty(config: ClassifierConfig) -> Callable[[list[torch.Tensor]], torch.Tensor] | None:
    """rate·Σ|w| (L1) or rate·½Σw² (L2) of the weights, never the biases; None when nothing is added."""
    if config.reg_rate == 0 or config.regularization == "none":
        return None
    if config.regularization == "l2" and config.optimizer == "adamw":
        return None  # AdamW applies L2 as decoupled weight decay instead, see _Optimizer
    norm = _l1 if config.regularization == "l1" else _l2
    return lambda weights: config.reg_rate * norm(weights)


class _Optimizer:
    """The configured torch.optim algorithm run through its functional form on fused CPU kernels.

    torch.optim.SGD(...).step() spends ~25 µs in its Python wrapper and ~10 µs updating these tiny
    tensors; sgd/adam/adamw below are the functions those classes call, with the same arithmetic.
    """

    def __init__(self, config: ClassifierConfig, weights: list[torch.Tensor], biases: list[torch.Tensor]):
        self.config = config
        if config.optimizer == "adamw":
            # AdamW's decay is decoupled from the gradient: with L2 chosen, reg_rate becomes its weight
            # decay and the L2 term is NOT also added to the loss (see _penalty). Biases are never decayed.
            decay = config.reg_rate if config.regularization == "l2" else 0.01
            self.groups = [(weights, decay), (biases, 0.0)]
        else:
            self.groups = [(weights + biases, 0.0)]
        # SGD: momentum buffers; Adam(W): first and second moments and step counts. Zeros give the same
        # first update as torch's lazily created state.
        adam_like = config.optimizer in ("adam", "adamw")
        self.state = [
            (_zeros(params), _zeros(params), [torch.zeros(()) for _ in params]) if adam_like
            else (_zeros(params),)
            for params, _ in self.groups
        ]

    def tensors(self) -> list[torch.Tensor]:
        """Every state tensor, updated in place by step()."""
        return [t for group in self.state for tensors in group for t in tensors]

    @torch.no_grad()
    def step(self, grads: tuple[torch.Tensor, ...]) -> None:
        """One update from gradients given in the order weights, then biases."""
        cfg = self.config
        start = 0
        for (params, decay), state in zip(self.groups, self.state):
            group_grads = list(grads[start : start + len(params)])
            start += len(params)
            if cfg.optimizer in ("sgd", "momentum"):
                momentum = 0.9 if cfg.optimizer == "momentum" else 0.0
                sgd(params, group_grads, state[0], fused=True, weight_decay=0.0, momentum=momentum, lr=cfg.lr,
                    dampening=0.0, nesterov=False, maximize=False)
            else:
                update = adamw if cfg.optimizer == "adamw" else adam
                update(params, group_grads, state[0], state[1], [], state[2], fused=True, amsgrad=False,
                       beta1=0.9, beta2=0.999, lr=cfg.lr, weight_decay=decay, eps=1e-8, maximize=False)


def _zeros(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    return [torch.zeros_like(t) for t in tensors]
