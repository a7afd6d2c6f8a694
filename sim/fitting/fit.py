"""A small MLP trained live on a train / validation split, with early stopping and L2, L1 and dropout.

The generalisation lab fits it to the 1-D curve (squared error) and to 2-D points with binary labels
(sigmoid cross-entropy). An epoch is one Adam step on the whole training set (a few dozen to a few
hundred points), then one evaluation without dropout on the training and validation points. The
parameters with the lowest validation loss so far are kept as the best checkpoint; early stopping
ends the run when that checkpoint is `patience` epochs old and puts it back into the model.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch.optim.adam import adam

from sim.core.history import DIVERGED, bound
from sim.core.models import ACTIVATIONS, MLP

TASKS = ("regression", "binary")
BETA1, BETA2, EPS = 0.9, 0.999, 1e-8  # Adam's defaults


@dataclass(frozen=True)
class FitConfig:
    """Everything that defines a run besides its data."""

    task: str = "regression"  # "regression" (squared error) or "binary" (one logit, sigmoid cross-entropy)
    hidden: tuple[int, ...] = (64, 64)  # neurons per hidden layer
    activation: str = "tanh"  # a name in sim.core.models.ACTIVATIONS
    lr: float = 0.01  # Adam's step size
    l2: float = 0.0  # λ of the penalty λ·Σw² added to the loss (weights only, never biases)
    l1: float = 0.0  # λ of the penalty λ·Σ|w|, applied by a proximal step so weights can become exactly 0
    dropout: float = 0.0  # probability of zeroing each hidden activation, training only (inverted dropout)
    patience: int = 0  # stop once validation loss has not improved for this many epochs; 0: never stop
    max_epochs: int = 5000  # the run ends here in any case
    seed: int = 0  # initial weights and dropout masks

    def __post_init__(self):
        object.__setattr__(self, "hidden", tuple(self.hidden))
        valid = {
            "task": self.task in TASKS,
            "hidden": len(self.hidden) > 0 and all(isinstance(w, int) and w >= 1 for w in self.hidden),
            "activation": self.activation in ACTIVATIONS,
            "lr": math.isfinite(self.lr) and self.lr > 0,
            "l2": math.isfinite(self.l2) and self.l2 >= 0,
            "l1": math.isfinite(self.l1) and self.l1 >= 0,
            "dropout": 0 <= self.dropout < 1,
            "patience": isinstance(self.patience, int) and self.patience >= 0,
            "max_epochs": isinstance(self.max_epochs, int) and self.max_epochs >= 1,
            "seed": isinstance(self.seed, int) and self.seed >= 0,
        }
        for name, ok in valid.items():
            if not ok:
                raise ValueError(f"invalid:{name}")


def l2_penalty(weights: list[torch.Tensor], lam: float) -> torch.Tensor:
    """λ·Σw² over every entry of `weights` (pass weights only, never biases): the L2 term of the notes and the
    article, with no ½ in front, so its gradient is 2λw for each weight."""
    return lam * sum((w * w).sum() for w in weights)


def _finite(record: dict) -> bool:
    return all(math.isfinite(v) for v in record.values())


class FitTrainer:
    """The run: step(n) trains n epochs; history holds one record per epoch (epoch 0 is the start).

    The history is bounded (sim.core.history.bound): a run past CAP epochs keeps its first and its latest
    epochs in full and the middle min–max thinned.
    """

    def __init__(self, config: FitConfig, X_train: np.ndarray, y_train: np.ndarray, X_val: np.ndarray,
                 y_val: np.ndarray):
        self.config = config
        self.n_train = len(X_train)
        X_train = np.asarray(X_train, dtype=np.float64).reshape(self.n_train, -1)
        # inputs standardised with the training points' mean and std only: the validation points must
        # not shape the model in any way (see sim/fitting/leakage.py for what goes wrong otherwise)
        self._mean, std = X_train.mean(axis=0), X_train.std(axis=0)
        self._std = np.where(std > 0, std, 1.0)
        x = self._scale(np.concatenate([X_train, np.asarray(X_val, dtype=np.float64).reshape(len(X_val), -1)]))
        self._x_all = torch.from_numpy(x)  # (N, d): training points first
        self._t_all = torch.from_numpy(np.concatenate([y_train, y_val]).astype(np.float32)).unsqueeze(1)  # (N, 1)
        self._loss = F.mse_loss if config.task == "regression" else F.binary_cross_entropy_with_logits
        generator = torch.Generator().manual_seed(config.seed)
        self.model = MLP(x.shape[1], config.hidden, 1, config.activation, config.dropout, generator)
        self._weights = [layer.weight for layer in self.model.layers]
        self._params = self._weights + [layer.bias for layer in self.model.layers]
        # Adam's state, kept here so the L1 step can read the second moments
        self._m = [torch.zeros_like(p) for p in self._params]
        self._v = [torch.zeros_like(p) for p in self._params]
        self._steps = [torch.zeros(()) for _ in self._params]
        self.epoch = 0
        self.history: list[dict] = []
        self.best_epoch = 0
        self.best_val = math.inf
        self._best = [p.detach().clone() for p in self._params]
        self.stopped = False  # early stopping ended the run (the best checkpoint is back in the model)
        record = self._evaluate()
        # a loss or a parameter blew up (the best checkpoint is back in the model); already at the start
        # when the data are too large for float32, and then nothing can be trained
        self.diverged = not _finite(record)
        self._record(record)

    # ---------- training ----------
    def step(self, epochs: int = 1) -> None:
        """Train up to `epochs` epochs; nothing happens once the run is finished."""
        for _ in range(epochs):
            if self.finished:
                return
            self._epoch()

    @property
    def finished(self) -> bool:
        """Stopped early, diverged, or at max_epochs: step() does nothing any more."""
        return self.stopped or self.diverged or self.epoch >= self.config.max_epochs

    def objective(self) -> torch.Tensor:
        """What an epoch's step descends: the data loss on the training points (mean squared error, or the mean
        cross-entropy), with dropout as in training, plus l2_penalty(weights, λ). (L1 acts by its own step.)"""
        x, t = self._x_all[:self.n_train], self._t_all[:self.n_train]
        loss = self._loss(self.model(x), t)
        return loss + l2_penalty(self._weights, self.config.l2) if self.config.l2 else loss

    def _epoch(self) -> None:
        grads = torch.autograd.grad(self.objective(), self._params)
        with torch.no_grad():
            adam(self._params, list(grads), self._m, self._v, [], self._steps, fused=True, amsgrad=False, beta1=BETA1,
                 beta2=BETA2, lr=self.config.lr, weight_decay=0.0, eps=EPS, maximize=False)
            if self.config.l1:
                self._l1_step()
        record = self._evaluate()
        # the largest |parameter| as well: a saturated tanh behind an infinite weight still gives a finite loss
        largest = float(torch.cat([p.detach().view(-1) for p in self._params]).abs().max())
        if not (_finite(record) and largest < DIVERGED):
            self.restore_best()
            self.diverged = True
            return
        self.epoch += 1
        self._record(record)
        if self.config.patience and self.epoch - self.best_epoch >= self.config.patience:
            self.restore_best()
            self.stopped = True

    @torch.no_grad()
    def _l1_step(self) -> None:
        """Soft-threshold each weight by lr·λ / (√v̂ + ε): the proximal step of λ·Σ|w| in Adam's metric.

        A gradient step on λ|w| pushes a weight a fixed amount past zero and back, so weights jitter
        around 0 without ever equalling it. The proximal step instead solves the penalised update in
        closed form: a weight whose data gradient is weaker than λ lands exactly on 0 and stays there.
        """
        scale = self.config.lr * self.config.l1
        n = len(self._weights)  # the weights come first in _params, and so in Adam's state
        for w, v, step in zip(self._weights, self._v[:n], self._steps[:n], strict=True):
            correction = math.sqrt(1 - BETA2 ** float(step))  # √v̂ = √v / √(1 - β2^t)
            threshold = v.sqrt().div_(correction).add_(EPS).reciprocal_().mul_(scale)
            w.copy_(w.sign() * (w.abs() - threshold).clamp_min_(0.0))

    @torch.no_grad()
    def _evaluate(self) -> dict:
        """Losses (and accuracies for binary labels) on training and validation points, without dropout."""
        self.model.eval()
        z = self.model(self._x_all)
        self.model.train()
        n = self.n_train
        values = [self._loss(z[:n], self._t_all[:n]), self._loss(z[n:], self._t_all[n:])]
        if self.config.task == "binary":
            correct = ((z > 0).float() == self._t_all).float()
            values += [correct[:n].mean(), correct[n:].mean()]
        values = torch.stack(values).tolist()
        record = {"train_loss": values[0], "val_loss": values[1]}
        if self.config.task == "binary":
            record |= {"train_acc": values[2], "val_acc": values[3]}
        return record

    def _record(self, record: dict) -> None:
        """Append to the history; keep the parameters as the best checkpoint if validation loss is the lowest yet."""
        self.history.append({"epoch": self.epoch, **record})
        bound(self.history, "epoch", tuple(record))
        if record["val_loss"] < self.best_val:
            self.best_val, self.best_epoch = record["val_loss"], self.epoch
            with torch.no_grad():
                for saved, p in zip(self._best, self._params, strict=True):
                    saved.copy_(p)

    @torch.no_grad()
    def restore_best(self) -> None:
        """Put the best checkpoint (lowest validation loss) back into the model and end the run."""
        for p, saved in zip(self._params, self._best, strict=True):
            p.copy_(saved)
        self.stopped = True

    def shared(self) -> tuple:
        """What never changes (the scaled inputs and the targets): a copy of the run may keep these (sim.core.live)."""
        return self._x_all, self._t_all

    # ---------- reading the model ----------
    def _scale(self, X: np.ndarray) -> np.ndarray:
        return ((X - self._mean) / self._std).astype(np.float32)

    @torch.no_grad()
    def predict(self, X: np.ndarray) -> np.ndarray:
        """Outputs (m,) for inputs (m, d) or (m,): the value, or the probability of class 1."""
        x = self._scale(np.asarray(X, dtype=np.float64).reshape(len(X), -1))
        self.model.eval()
        z = self.model(torch.from_numpy(x))[:, 0]
        self.model.train()
        return (torch.sigmoid(z) if self.config.task == "binary" else z).numpy()

    def weights(self) -> np.ndarray:
        """Every weight (no biases) as one flat array: what the penalties act on."""
        return torch.cat([w.detach().reshape(-1) for w in self._weights]).numpy().copy()
