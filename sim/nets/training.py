"""Stepwise trainer of the classification lab: step(n) advances, history records, divergence stops it.

The network and its optimizer are sim.nets.fastnet's compiled loops: the page trains live between frames
and a classroom trains 20-40 of these at once on one server, so an epoch of the default config (25
mini-batches of 10 points) costs ~30 µs there, against ~6 ms of per-op overhead in eager PyTorch,
and the compiled call releases the GIL, so the sessions' threads train on every core.
"""

import functools
import itertools
import math
import threading
from dataclasses import dataclass

import numpy as np

from sim.core.data import (
    CLASSIFICATION_DATASETS,
    DOMAIN,
    FEATURES,
    REGRESSION_DATASETS,
    feature_matrix,
    make_classification,
    make_regression,
    split3,
)
from sim.core.history import bound
from sim.nets import metrics
from sim.nets.fastnet import (
    ACTIVATIONS,
    OPTIMIZERS,
    OVERSHOOT,
    OVERSHOOT_WINDOW,
    FastNet,
    constant_guess_loss,
    regularizer,
)

PROBLEMS = ("classification", "regression")
REGULARIZATIONS = ("none", "l1", "l2")
LOSSES = ("cross_entropy", "squared_error")
# the values of a history record besides "epoch": training is monitored on the validation set, never the test set
HISTORY_KEYS = ("train_loss", "val_loss", "train_acc", "val_acc")


@dataclass(frozen=True)
class ClassifierConfig:
    """Everything that defines a run; defaults are TensorFlow Playground's, but for the split: 70 % training, the rest
    halved into validation and test (15 % / 15 %, inside the course notes' 60–80 % / 10–20 % / 10–20 %)."""

    problem: str = "classification"  # "classification" or "regression"
    dataset: str = "circle"  # a name in data.CLASSIFICATION_DATASETS or data.REGRESSION_DATASETS
    n: int = 500  # number of points, train, validation and test together (ignored for uploaded data)
    noise: float = 0.0  # 0..0.5, the Playground's noise percent / 100
    train_ratio: float = 0.7  # share of the points used for training (the same points as before validation existed)
    val_ratio: float = 0.5  # share of the held-out (non-training) points used for validation; the rest is the test set
    batch_size: int = 10  # points per optimizer update
    features: tuple[str, ...] = ("x1", "x2")  # input features, names from data.FEATURES
    hidden: tuple[int, ...] = (4, 2)  # neurons per hidden layer; () is logistic / linear regression
    activation: str = "tanh"  # hidden activation: relu, tanh, sigmoid or linear
    lr: float = 0.03  # learning rate
    regularization: str = "none"  # "none", "l1" or "l2" penalty on the weights, never the biases
    reg_rate: float = 0.0  # strength λ of that penalty: λΣ|w| or λΣw² (the course's convention) added to the loss
    loss: str = "cross_entropy"  # "cross_entropy" or "squared_error"; regression always uses squared error
    optimizer: str = "sgd"  # "sgd", "momentum" (SGD, momentum 0.9), "adam" or "adamw"
    weight_decay: float = 0.01  # AdamW's decoupled weight decay (torch's default; ignored by the other optimizers)
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
            "val_ratio": 0 < self.val_ratio < 1,
            "batch_size": _is_int(self.batch_size) and self.batch_size >= 1,
            "features": 0 < len(self.features) == len(set(self.features)) and set(self.features) <= set(FEATURES),
            "hidden": all(_is_int(w) and w >= 1 for w in self.hidden),
            "activation": self.activation in ACTIVATIONS,
            "lr": math.isfinite(self.lr) and self.lr > 0,
            "regularization": self.regularization in REGULARIZATIONS,
            "reg_rate": math.isfinite(self.reg_rate) and self.reg_rate >= 0,
            "loss": self.loss in LOSSES,
            "optimizer": self.optimizer in OPTIMIZERS,
            "weight_decay": math.isfinite(self.weight_decay) and self.weight_decay >= 0,
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
    """An MLP trained on 2-D points some epochs at a time, with a loss/accuracy history.

    Divergence (sim.nets.fastnet's rules): "blowup", a non-finite or > 1e6 loss or weight, restores the state
    before that epoch; "overshoot", the training loss over the last 10 epochs above twice the loss of the
    best constant guess (baseline_loss), keeps the weights. Either stops the run for good.
    """

    def __init__(self, config: ClassifierConfig, data: tuple[np.ndarray, np.ndarray] | None = None):
        self.config = config
        regression = config.problem == "regression"
        if data is None:
            make = make_regression if regression else make_classification
            data = make(config.dataset, config.n, config.noise, config.seed)
        X, y = data
        if len(X) < 3:
            raise ValueError("invalid:n")  # training, validation and test each need a point
        # the course's three sets: fit on train, monitor and tune (threshold, stopping) on validation,
        # and evaluate on test once, at the end (evaluate_test)
        train_idx, val_idx, test_idx = split3(len(X), config.train_ratio, config.val_ratio, config.seed)
        self.X_train, self.y_train = X[train_idx], y[train_idx]
        self.X_val, self.y_val = X[val_idx], y[val_idx]
        self.X_test, self.y_test = X[test_idx], y[test_idx]
        self.test_evaluation: dict | None = None  # the last evaluate_test() result
        # columns of predict_proba: k classes (2 for binary), or the single predicted value
        self.n_classes = 1 if regression else max(2, int(y.max()) + 1)
        # one record per epoch, bounded: past sim.core.history.CAP records the middle is thinned (min–max),
        # the first and the most recent epochs stay in full
        self.history: list[dict] = []
        # binary: one logit, sigmoid + BCE; k > 2 classes: k logits, softmax + CE; regression: linear output
        self._kind = "regression" if regression else ("binary" if self.n_classes == 2 else "softmax")
        squared = regression or config.loss == "squared_error"
        n_out = self.n_classes if self._kind == "softmax" else 1
        self.net = FastNet((len(config.features), *config.hidden, n_out), config.activation, self._kind, squared,
                           config.optimizer, config.lr,
                           *regularizer(config.optimizer, config.regularization, config.reg_rate, config.weight_decay),
                           dropout=config.dropout, batch_size=config.batch_size, seed=config.seed)
        self._x_train, self._x_val = self._features(self.X_train), self._features(self.X_val)
        self.baseline_loss = constant_guess_loss(self._kind, squared, self.y_train, self.n_classes)

    @property
    def epoch(self) -> int:
        return self.net.epoch

    @property
    def diverged(self) -> bool:
        return self.net.diverged

    @property
    def divergence(self) -> str | None:
        """Why it stopped: "blowup" or "overshoot"; None while it has not diverged."""
        return self.net.divergence

    def _features(self, X: np.ndarray) -> np.ndarray:
        return feature_matrix(X, self.config.features).astype(np.float64)  # (N, n_features)

    def step(self, epochs: int = 1) -> None:
        """Train `epochs` epochs (fewer if the run diverges on the way), recording each; step(a) then step(b)
        leaves the model and its history exactly as step(a + b)."""
        if self.diverged:
            return
        r = self.net.train(self._x_train, self.y_train, self._x_val, self.y_val, epochs,
                           OVERSHOOT * self.baseline_loss)
        acc = self._kind != "regression"
        for e, a, b, c, d in zip(r.epoch.tolist(), r.train_loss.tolist(), r.test_loss.tolist(), r.train_acc.tolist(),
                                 r.test_acc.tolist(), strict=True):
            self.history.append({"epoch": e, "train_loss": a, "val_loss": b, "train_acc": c if acc else None,
                                 "val_acc": d if acc else None})
            # compacted the moment it passes CAP records, one record at a time: the history is the same however
            # the epochs are grouped into step() calls (a live run: advance(3) + advance(4) == advance(7))
            bound(self.history, "epoch", HISTORY_KEYS)

    def recent_train_loss(self) -> float:
        """Mean training loss of the last OVERSHOOT_WINDOW epochs (0 before there are that many)."""
        if len(self.history) < OVERSHOOT_WINDOW:
            return 0.0
        return sum(h["train_loss"] for h in self.history[-OVERSHOOT_WINDOW:]) / OVERSHOOT_WINDOW

    def _forward_all(self, X_raw: np.ndarray) -> list[np.ndarray]:
        """Hidden activations and outputs for raw points (m, 2), in eval mode, training state untouched."""
        return self.net.forward_all(self._features(np.asarray(X_raw, dtype=np.float32)))

    def predict_proba(self, X_raw: np.ndarray) -> np.ndarray:
        """Class probabilities (m, k) of raw points (m, 2), binary as [1-p, p]; regression: values (m, 1)."""
        return np.ascontiguousarray(self._forward_all(X_raw)[-1])

    def _grid(self, resolution: int) -> list[np.ndarray]:
        """Every hidden layer's activations and the outputs on the grid, each (res, res, width)."""
        return [np.ascontiguousarray(o).reshape(resolution, resolution, -1)
                for o in self._forward_all(_grid_points(resolution))]

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
        return self.net.layers()

    def evaluate_test(self, threshold: float = 0.5) -> dict:
        """The one final evaluation on the test set, of the model as it is now, at the threshold chosen on
        validation; kept in self.test_evaluation (current_test_evaluation() drops it once the model trains on)."""
        if self.config.problem != "classification":
            raise ValueError("invalid:problem")
        proba = self.predict_proba(self.X_test)
        self.test_evaluation = {"epoch": self.epoch, **holdout_report(self.y_test, proba, threshold)}
        return self.test_evaluation

    def current_test_evaluation(self) -> dict | None:
        """evaluate_test()'s result while the model is the one it evaluated, else None."""
        e = self.test_evaluation
        return e if e is not None and e["epoch"] == self.epoch else None


def holdout_report(y: np.ndarray, proba: np.ndarray, threshold: float) -> dict:
    """Test-set figures of class probabilities proba (m, k): n and accuracy; for two classes at `threshold`
    also precision, recall, F1, ROC AUC and average precision (None where the set holds one class)."""
    y = np.asarray(y)
    if proba.shape[1] != 2:
        return {"threshold": None, "n": len(y), "accuracy": metrics.accuracy(y, proba.argmax(axis=1))}
    m = metrics.binary_metrics(y, proba[:, 1], threshold)
    roc = metrics.roc_curve(y, proba[:, 1])
    return {"threshold": float(threshold), "n": len(y), "accuracy": m.accuracy, "precision": m.precision,
            "recall": m.recall, "f1": m.f1, "auc": None if roc is None else metrics.auc(roc[0], roc[1]),
            "ap": metrics.average_precision(y, proba[:, 1])}


def model_notes(config: ClassifierConfig, k: int) -> list[str]:
    """What the course calls the model these settings build, k its outputs (Trainer.n_classes); keys cls.note.<key>:
    "logistic_regression": no hidden layer, a sigmoid output and cross-entropy; "softmax_regression": the
    same with k > 2 classes; "linear_regression": no hidden layer on a regression problem; "linear": hidden
    layers with the linear activation (a product of linear maps is linear: the boundary stays a line in
    the features); "inverted_dropout": dropout on; "sigmoid_softmax": a two-class sigmoid output."""
    notes = []
    if config.problem == "regression":
        notes += ["linear_regression"] if not config.hidden else []
    elif not config.hidden and config.loss == "cross_entropy":
        notes += ["softmax_regression" if k > 2 else "logistic_regression"]
    if config.hidden and config.activation == "linear":
        notes.append("linear")
    if config.hidden and config.dropout > 0:
        notes.append("inverted_dropout")
    if config.problem == "classification" and k == 2:
        notes.append("sigmoid_softmax")
    return notes


def collapse_linear(layers: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The single affine map (W (out, in), b (out,)) equal to a stack of linear layers: W = W_L…W_1 and
    b = W_L(…(W_2 b_1 + b_2)…) + b_L. For a net with the linear activation, its logits are W·features + b."""
    W, b = layers[0]
    for W_next, b_next in layers[1:]:
        W, b = W_next @ W, W_next @ b + b_next
    return W, b


def affine_formula(w: np.ndarray, b: float, names: list[str]) -> str:
    """"z = 0.53·x1 − 1.2·x2 + 0.1": one output of collapse_linear, 3 significant digits, features by name."""
    text = "z ="
    for i, (wi, name) in enumerate(zip(w, names, strict=True)):
        sign = "−" if wi < 0 else ("+" if i else "")
        text += f" {sign}{' ' if sign and i else ''}{abs(wi):.3g}·{name}"
    return text + f" {'−' if b < 0 else '+'} {abs(b):.3g}"


# ---------- counting inputs: the course's two examples of features ----------
IMAGE_SHAPE = (224, 224, 3)  # the article's colour picture: height × width × (red, green, blue)
PURCHASE_FEATURES = ("age", "income")  # the notes' shopper, who buys or does not (logistic regression)
FEATURE_EXAMPLES = ("lab", "purchase", "image")


def input_features(shape) -> int:
    """How many numbers one example hands the model: the product of its shape (a picture: height × width ×
    channels, every channel of every pixel a feature)."""
    return math.prod(shape)


def mlp_parameters(sizes) -> int:
    """Weights and biases of a dense network with layer sizes (inputs, hidden…, outputs): Σ (a·b + b)."""
    return sum(a * b + b for a, b in itertools.pairwise(sizes))


def feature_examples(features: tuple[str, ...], hidden: tuple[int, ...], n_out: int) -> list[dict]:
    """FEATURE_EXAMPLES: this lab's points with the chosen features, the shopper's (age, income) and the picture.
    Each: its shape, its input features, the parameters of logistic regression on them (z = θ₀ + θ₁x₁ + … : one
    weight per feature and a bias) and of the lab's network as set (hidden layers, n_out outputs), and the weights
    of that network's first layer alone (None without hidden layers)."""
    shapes = {"lab": (len(features),), "purchase": (len(PURCHASE_FEATURES),), "image": IMAGE_SHAPE}
    rows = []
    for name in FEATURE_EXAMPLES:
        n = input_features(shapes[name])
        rows.append({"name": name, "shape": shapes[name], "features": n, "logistic": mlp_parameters((n, 1)),
                     "network": mlp_parameters((n, *hidden, n_out)),
                     "first_layer": n * hidden[0] if hidden else None})
    return rows


def warm_up() -> None:
    """Compile sim.nets.fastnet's kernels (or load them from numba's cache) by training a tiny run once.

    The first compile on a machine takes ~20 s of CPU: the app starts this on a thread of its own at
    start-up, so the first student to press Play does not wait for it.
    """
    trainer = Trainer(ClassifierConfig(n=20, dropout=0.1))
    trainer.step(1)
    trainer.predict_grid(2)


@functools.cache
def warm_up_in_background() -> threading.Thread:
    """Once per process (later calls return the same thread): warm_up on a daemon thread of its own."""
    thread = threading.Thread(target=warm_up, name="compile-engine", daemon=True)
    thread.start()
    return thread
