"""The classification lab's MLP as compiled loops: whole epochs in one call that releases the GIL.

Same mathematics as sim.nets.training.Trainer with sim.core.models.MLP (Dense layers x @ W + b with W stored
(in, out), activation then inverted dropout after each hidden layer, a linear output layer; the five
data losses; the L1/L2 penalty on weights only; torch's SGD, momentum, Adam and AdamW updates; the
per-epoch evaluation and divergence rules), in float64, as loops compiled by numba. The nets are tiny
(at most 8 neurons a layer), so an eager framework spends its time in per-op overhead; here one call
trains k epochs with no Python in between (the Playground's default: ~30,000 epochs/s on one core,
eager torch ~170), and `nogil=True` lets the threads of several sessions train on several cores.

Every random number is drawn in Python before a call, from numpy Generators seeded by the seed:
initial weights, one permutation of the training points per epoch, one uniform per (epoch, point,
hidden unit) for dropout. Orders and dropout have streams of their own, so train(a) then train(b)
trains exactly as train(a + b). train_with() takes explicit orders and uniforms (tests feed the same
ones to a torch reference).

Compilation: the first call on a machine compiles the kernels, ~20 s of CPU time (measured on the
2-core development machine); `cache=True` stores them in sim/__pycache__ (in NUMBA_CACHE_DIR when
set; numba's user cache dir when sim/ is not writable) and every later process loads them in ~0.4 s. Each
kernel has one type signature: arrays are converted to C-contiguous float64 / int64 first and options
passed as int or float codes.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise
from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from sim.core.history import DIVERGED

ACTIVATIONS = ("relu", "tanh", "sigmoid", "linear")
KINDS = ("regression", "binary", "softmax")  # 1 value (MSE); 1 logit (sigmoid); k logits (softmax)
OPTIMIZERS = ("sgd", "momentum", "adam", "adamw")
# overshoot: the mean training loss of the last OVERSHOOT_WINDOW epochs above OVERSHOOT × baseline
OVERSHOOT, OVERSHOOT_WINDOW = 2.0, 10
DIVERGENCES = (None, "blowup", "overshoot")  # by the status code a training call returns
MOMENTUM, BETA1, BETA2, EPS = 0.9, 0.9, 0.999, 1e-8  # torch's SGD momentum (dampening 0), Adam's defaults
CHUNK_VALUES = 1 << 20  # random numbers drawn ahead per kernel call at most (8 MiB of dropout uniforms)

_RELU, _TANH, _SIGMOID, _LINEAR = range(4)
_REGRESSION, _BINARY, _SOFTMAX = range(3)
_SGD, _MOMENTUM, _ADAM, _ADAMW = range(4)
_OK, _BLOWUP, _OVERSHOOT = range(3)
_KERNEL = dict(nogil=True, cache=True, error_model="numpy")  # numpy errors: 1/0 is inf, never an exception
_HOT = dict(_KERNEL, _nrt=False)


def regularizer(optimizer: str, regularization: str, reg_rate: float, weight_decay: float = 0.0
                ) -> tuple[float, float, float]:
    """(l1, l2, decay) of a lab config: penalty rates in the loss and AdamW's decoupled weight decay.

    L1 adds rate·Σ|w| to the loss, L2 rate·Σw² (the course's convention; weights only), for every
    optimizer. weight_decay is AdamW's own hyper-parameter (Loshchilov & Hutter's decoupled decay: the
    weights shrink by lr·decay each step, outside the gradient and Adam's scaling); the other
    optimizers have none, so it is ignored for them.
    """
    rate = reg_rate if regularization != "none" else 0.0
    l1 = rate if regularization == "l1" else 0.0
    l2 = rate if regularization == "l2" else 0.0
    return l1, l2, (weight_decay if optimizer == "adamw" else 0.0)


def constant_guess_loss(kind: str, squared: bool, y_train: np.ndarray, n_classes: int) -> float:
    """Training loss of the best constant output (class shares, or the mean target), at least 1e-3."""
    y = np.asarray(y_train, dtype=np.float64)
    if kind == "regression":
        z = np.full((len(y), 1), y.mean())
    else:
        share = np.bincount(y.astype(np.int64), minlength=n_classes) / len(y)
        share = np.clip(share, 1e-6, 1 - 1e-6)
        logits = np.log(share[1:2] / share[0]) if kind == "binary" else np.log(share)
        z = np.broadcast_to(logits, (len(y), len(logits)))
    k = z.shape[1]
    identity = np.concatenate([np.eye(k).ravel(), np.zeros(k)])  # one linear layer that passes z through
    loss, _ = _evaluate(np.array([k, k]), _LINEAR, KINDS.index(kind), int(squared), identity,
                        np.ascontiguousarray(z, dtype=np.float64), y)
    return max(loss, 1e-3)


class Records(NamedTuple):
    """Per-epoch results of a training call, one entry per completed epoch."""

    epoch: np.ndarray  # (k,) int: epoch numbers, from 1 at the start of training
    train_loss: np.ndarray  # (k,) data loss (no penalty) on the whole training set, eval mode
    test_loss: np.ndarray  # (k,) the same on the test set (NaN when there is none)
    train_acc: np.ndarray  # (k,) accuracy on the training set; NaN for regression
    test_acc: np.ndarray  # (k,)
    max_param: np.ndarray  # (k,) largest |parameter|


class FastNet:
    """An MLP sizes[0] -> sizes[1:-1] -> sizes[-1] with its optimizer, trained whole epochs per call."""

    def __init__(
        self,
        sizes: Sequence[int],  # (n_features, *hidden, n_out): n_out is 1 (regression, binary) or k (softmax)
        activation: str,  # hidden activation: relu, tanh, sigmoid or linear
        kind: str,  # "regression", "binary" or "softmax"
        squared: bool,  # squared error instead of cross-entropy (always for regression)
        optimizer: str,  # sgd, momentum, adam or adamw
        lr: float,
        l1: float = 0.0,  # rate of the L1 penalty rate·Σ|w| in the loss
        l2: float = 0.0,  # rate of the L2 penalty rate·Σw² in the loss (gradient 2·rate·w)
        decay: float = 0.0,  # AdamW's decoupled weight decay (weights only; ignored by other optimizers)
        dropout: float = 0.0,  # drop probability after each hidden activation, training only
        batch_size: int = 10,
        seed: int = 0,
    ):
        valid = (activation in ACTIVATIONS and kind in KINDS and optimizer in OPTIMIZERS and len(sizes) >= 2
                 and min(sizes) >= 1 and (kind == "softmax") == (sizes[-1] > 1) and 0 <= dropout < 1
                 and batch_size >= 1)
        if not valid:
            raise ValueError("invalid:fastnet")
        self.sizes = np.array(sizes, dtype=np.int64)
        self.kind, self.squared = kind, bool(squared or kind == "regression")
        self._codes = (ACTIVATIONS.index(activation), KINDS.index(kind), int(self.squared), OPTIMIZERS.index(optimizer))
        self.lr, self.l1, self.l2, self.decay = float(lr), float(l1), float(l2), float(decay)
        self.dropout, self.batch_size = float(dropout), int(batch_size)
        self.n_hidden_units = int(self.sizes[1:-1].sum())
        # three streams of the seed: initial weights, batch orders, dropout uniforms
        init, self._order_rng, self._drop_rng = (
            np.random.default_rng(s) for s in np.random.SeedSequence(seed, spawn_key=(2,)).spawn(3)
        )
        pairs = list(pairwise(self.sizes))
        self.n_weights = sum(int(a * b) for a, b in pairs)
        weights = [init.random((a, b)) - 0.5 for a, b in pairs]  # Playground init: U(-0.5, 0.5), biases 0.1
        self.params = np.concatenate([w.ravel() for w in weights] + [np.full(b, 0.1) for _, b in pairs])
        self.m = np.zeros_like(self.params)  # momentum buffer, or Adam's first moment
        self.v = np.zeros_like(self.params)  # Adam's second moment
        self.t = np.zeros(1)  # Adam's step count
        self.recent = np.zeros(OVERSHOOT_WINDOW)  # ring of the last training losses, for the overshoot rule
        self.count = np.zeros(1, dtype=np.int64)  # epochs trained (also the ring's write position)
        self.diverged, self.divergence = False, None

    @property
    def epoch(self) -> int:
        return int(self.count[0])

    def train(self, X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray,
              epochs: int, overshoot_above: float = math.inf) -> Records:
        """Train up to `epochs` epochs; stops for good at a divergence (self.divergence says which).

        X: feature matrices (n, n_features), best float64 already (others are converted on every call);
        y: targets (n,), class indices for softmax, 0/1 for binary, values for regression.
        overshoot_above: OVERSHOOT × the constant-guess loss, or inf for no overshoot rule.
        """
        n, h = len(X_train), max(self.n_hidden_units, 1) if self.dropout > 0 else 0
        chunk = max(1, CHUNK_VALUES // (max(n, 1) * (1 + h)))
        parts = []
        while epochs > 0 and not self.diverged:
            k = min(chunk, epochs)
            orders = self._order_rng.permuted(np.broadcast_to(np.arange(n), (k, n)), axis=1)
            drop_u = self._drop_rng.random((k, n, h)) if h else np.empty((0, 0, 0))
            parts.append(self.train_with(X_train, y_train, X_test, y_test, orders, drop_u, overshoot_above))
            epochs -= k
        if not parts:
            return _no_records()
        return Records(*(np.concatenate(column) for column in zip(*parts, strict=True)))

    def train_with(self, X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray,
                   orders: np.ndarray, drop_u: np.ndarray, overshoot_above: float = math.inf) -> Records:
        """Train len(orders) epochs with given batch orders and dropout uniforms; the lower-level entry.

        orders (k, n_train): the training points of each epoch, in order, cut into mini-batches.
        drop_u (k, n_train, n_hidden_units): the uniform for each (epoch, position in the order, hidden
        unit, layers concatenated); a unit is kept when its uniform >= dropout. Unused at dropout 0.
        """
        if self.diverged:
            return _no_records()
        orders = np.ascontiguousarray(orders, dtype=np.int64)
        k = len(orders)
        records = np.empty((k, 5))
        start = self.epoch
        done, status = _train(
            self.sizes, *self._codes, self.lr, self.l1, self.l2, self.decay, self.dropout, self.batch_size,
            self.params, self.m, self.v, self.t, _f64(X_train), _f64(y_train).ravel(), _f64(X_test),
            _f64(y_test).ravel(), orders, _f64(drop_u), self.recent, self.count, float(overshoot_above), records,
        )
        if status != _OK:
            self.diverged, self.divergence = True, DIVERGENCES[status]
        r = records[:done]
        return Records(np.arange(start + 1, start + done + 1), r[:, 0], r[:, 1], r[:, 2], r[:, 3], r[:, 4])

    def evaluate(self, X: np.ndarray, y: np.ndarray) -> tuple[float, float]:
        """(data loss, accuracy) on a set in eval mode; accuracy is NaN for regression."""
        return _evaluate(self.sizes, self._codes[0], self._codes[1], self._codes[2], self.params, _f64(X),
                         _f64(y).ravel())

    def forward_all(self, X: np.ndarray) -> list[np.ndarray]:
        """Every hidden layer's activations (m, width), then the outputs: [1-p, p] (m, 2) for binary,
        softmax probabilities (m, k), or the predicted values (m, 1); eval mode. Each array is the
        transpose of a C-contiguous (width, m) block: one neuron's values over the points are contiguous."""
        X = _f64(X)
        m = len(X)
        widths = [int(w) for w in self.sizes[1:-1]] + [2 if self.kind == "binary" else int(self.sizes[-1])]
        flat = np.empty(m * sum(widths))
        _forward_all(self.sizes, self._codes[0], self._codes[1], self.params, X, flat)
        ends = np.cumsum([0] + [m * w for w in widths])
        return [flat[a:b].reshape(w, m).T for a, b, w in zip(ends[:-1], ends[1:], widths, strict=True)]

    def predict(self, X: np.ndarray) -> np.ndarray:
        """The outputs of forward_all: class probabilities (m, k), binary as [1-p, p]; or values (m, 1)."""
        return self.forward_all(X)[-1]

    def layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Copies of every layer's (W (out, in), b (out,)), input side first."""
        w_at, b_at, out = 0, self.n_weights, []
        for a, b in pairwise(self.sizes):
            out.append((self.params[w_at:w_at + a * b].reshape(a, b).T.copy(), self.params[b_at:b_at + b].copy()))
            w_at, b_at = w_at + a * b, b_at + b
        return out

    def set_layers(self, layers: Sequence[tuple[np.ndarray, np.ndarray]]) -> None:
        """Load weights in the form layers() returns: [(W (out, in), b (out,))]."""
        weights = [np.asarray(w, dtype=np.float64).T.ravel() for w, _ in layers]
        biases = [np.asarray(b, dtype=np.float64).ravel() for _, b in layers]
        params = np.concatenate(weights + biases)
        if params.shape != self.params.shape:
            raise ValueError("invalid:layers")
        self.params[:] = params

    def state(self) -> dict:
        """A copy of everything training changes: parameters, optimizer state, history ring, RNG streams."""
        return {
            "arrays": [a.copy() for a in (self.params, self.m, self.v, self.t, self.recent, self.count)],
            "rngs": (self._order_rng.bit_generator.state, self._drop_rng.bit_generator.state),
            "diverged": (self.diverged, self.divergence),
        }

    def restore(self, state: dict) -> None:
        """Put back a state() copy."""
        arrays = (self.params, self.m, self.v, self.t, self.recent, self.count)
        for a, saved in zip(arrays, state["arrays"], strict=True):
            a[:] = saved
        self._order_rng.bit_generator.state, self._drop_rng.bit_generator.state = state["rngs"]
        self.diverged, self.divergence = state["diverged"]


def _f64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64)


def _no_records() -> Records:
    return Records(np.empty(0, dtype=np.int64), *(np.empty(0) for _ in range(5)))


# ---------------------------------------------------------------- kernels (numba, nopython, GIL released)
#
# Arithmetic runs over a tile of points at a time (a mini-batch, or TILE points of an evaluation),
# feature-major: a layer's activations are (width, tile) rows, so that the loops along the points are
# contiguous and LLVM vectorises them. exp, tanh and log are written out below (range reduction and a
# polynomial; within 1, 3 and 2 ulp of libm, tested) because libm's are opaque calls that keep every
# loop around them scalar. Sums over points (gradients, the loss) may be reordered ("reassoc"), as a
# matrix product's are; multiply-adds may be fused ("contract"). The inner helpers run without NRT
# reference counting (_HOT): they create no arrays, and counting the arrays they are passed costs more
# than the arithmetic at batch size 1.

TILE = 128  # points per evaluation tile
WIDE = 8  # from this many points on, loops run along the points (vectorised); below, along the neurons


@intrinsic
def _as_float(typingctx, bits):
    """The float64 whose IEEE-754 bit pattern is the int64 `bits`."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@intrinsic
def _as_int(typingctx, x):
    """The int64 with the IEEE-754 bit pattern of the float64 `x`."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


_LOG2E, _LN2_HI, _LN2_LO = 1.4426950408889634, 6.93147180369123816490e-01, 1.90821492927058770002e-10
_POLY = dict(_HOT, fastmath={"contract"})  # polynomials in fused multiply-adds: faster, and rounded once


@njit(**_POLY)
def _exp_parts(x):
    """(s1, s2, p) with e^x = s1·s2·(1 + p): s1·s2 = 2^n, p = e^r - 1, x = n·ln2 + r, |r| <= ln2/2
    (Cody–Waite reduction)."""
    x = min(max(x, -746.0), 710.0)  # beyond these e^x is 0 or inf in float64 anyway
    n = math.floor(x * _LOG2E + 0.5)
    r = (x - n * _LN2_HI) - n * _LN2_LO
    # Taylor series of e^r - 1 to r^13: the first term left out is < 1e-17 relative for |r| <= 0.35
    p = r * (1.0 + r * (1 / 2 + r * (1 / 6 + r * (1 / 24 + r * (1 / 120 + r * (1 / 720 + r * (
        1 / 5040 + r * (1 / 40320 + r * (1 / 362880 + r * (1 / 3628800 + r * (1 / 39916800 + r * (
            1 / 479001600 + r * (1 / 6227020800)))))))))))))
    k = np.int64(n)
    half = k >> 1  # 2^n as 2^half · 2^(n-half): each factor a normal float for every n in [-1076, 1025]
    return _as_float((half + 1023) << 52), _as_float((k - half + 1023) << 52), p


@njit(**_HOT)
def _exp(x):
    s1, s2, p = _exp_parts(x)
    y = (s1 * p + s1) * s2  # scaled in two steps: 2^n alone overflows when e^x is just below the largest float
    return y if x == x else x


@njit(**_HOT)
def _tanh(z):
    a = min(abs(z), 20.0)  # tanh(20) rounds to 1
    s1, s2, p = _exp_parts(2.0 * a)
    s = s1 * s2  # 2^n, n <= 58
    u = s * p + (s - 1.0)  # e^(2a) - 1, accurate for small a too
    t = math.copysign(u / (u + 2.0), z)
    return t if z == z else z


@njit(**_HOT)
def _sigmoid(z):
    return 1.0 / (1.0 + _exp(-z))


@njit(**_POLY)
def _log(x):
    """ln x of a positive normal x (the kernels take it of values >= 1); inf and NaN pass through."""
    bits = _as_int(x)
    k = ((bits >> 52) & 0x7FF) - 1023
    m = _as_float((bits & 0xFFFFFFFFFFFFF) | (1023 << 52))  # x = 2^k · m, m in [1, 2)
    big = m > 1.4142135623730951  # then x = 2^(k+1) · m/2: m in [0.71, 1.42)
    m = m * 0.5 if big else m
    k = k + 1 if big else k
    s = (m - 1.0) / (m + 1.0)
    z = s * s
    # ln m = 2 atanh(s) = 2s (1 + z/3 + z²/5 + ...), |s| <= 0.172: the first term left out is < 1e-18
    q = z * (1 / 3 + z * (1 / 5 + z * (1 / 7 + z * (1 / 9 + z * (1 / 11 + z * (1 / 13 + z * (1 / 15 + z * (
        1 / 17 + z * (1 / 19 + z * (1 / 21 + z * (1 / 23)))))))))))
    kf = np.float64(k)
    y = kf * _LN2_HI + ((2.0 * s + 2.0 * s * q) + kf * _LN2_LO)
    return y if x < math.inf else x


@njit(**_HOT)
def _activate(act, z, l, width, n):
    """z[l, :width, :n] = activation(z[l, :width, :n]), in place."""
    for j in range(width):
        if act == _RELU:
            for p in range(n):
                z[l, j, p] = 0.0 if z[l, j, p] < 0.0 else z[l, j, p]
        elif act == _TANH:
            for p in range(n):
                z[l, j, p] = _tanh(z[l, j, p])
        elif act == _SIGMOID:
            for p in range(n):
                z[l, j, p] = _sigmoid(z[l, j, p])


@njit(**_HOT)
def _times_slope(act, back, y, l, width, n):
    """back[l, :width, :n] *= the activation's derivative, from its outputs y[l] (as torch's backward)."""
    for i in range(width):
        if act == _RELU:
            for p in range(n):
                back[l, i, p] = back[l, i, p] if y[l, i, p] > 0.0 else 0.0
        elif act == _TANH:
            for p in range(n):
                back[l, i, p] *= 1.0 - y[l, i, p] * y[l, i, p]
        elif act == _SIGMOID:
            for p in range(n):
                back[l, i, p] *= y[l, i, p] * (1.0 - y[l, i, p])


@njit(**_KERNEL)
def _layout(sizes):
    """Offsets of each layer's W (in, out), row-major, and b in the flat parameter vector: weights first."""
    n_layers = sizes.shape[0] - 1
    w_off = np.empty(n_layers, dtype=np.int64)
    b_off = np.empty(n_layers, dtype=np.int64)
    at = 0
    for l in range(n_layers):
        w_off[l] = at
        at += sizes[l] * sizes[l + 1]
    n_weights = at
    for l in range(n_layers):
        b_off[l] = at
        at += sizes[l + 1]
    return w_off, b_off, n_weights


@njit(**_POLY)
def _forward(sizes, act, params, w_off, b_off, acts, pre, n, p_drop, drop_u, e, q0):
    """Points acts[0, :, :n] through the net. acts[l] is layer l's input (after dropout), acts[L] the
    logits; pre[l] the activations before dropout (only written when p_drop > 0). Dropout uses the
    uniforms drop_u[e, q0 + p, unit] of the point at column p.

    Every loop indexes the 3-D arrays directly: a view (acts[l, j]) would cost two atomic reference
    count updates, more than the arithmetic of a row at batch size 1."""
    n_layers = sizes.shape[0] - 1
    unit = 0
    for l in range(n_layers):
        n_in, n_out, wo, bo = sizes[l], sizes[l + 1], w_off[l], b_off[l]
        if n < WIDE:  # a few points: sum per output, in registers (same order: bias, then input 0, 1, ...)
            for p in range(n):
                for j in range(n_out):
                    total = params[bo + j]
                    for i in range(n_in):
                        total += params[wo + i * n_out + j] * acts[l, i, p]
                    acts[l + 1, j, p] = total
        else:  # a tile: rows of points, vectorised over the points
            for j in range(n_out):
                bias = params[bo + j]
                for p in range(n):
                    acts[l + 1, j, p] = bias
            i = 0
            while i + 4 <= n_in:  # four inputs a pass: fewer loads and stores, the same sums in the same order
                for j in range(n_out):
                    w0, w1 = params[wo + i * n_out + j], params[wo + (i + 1) * n_out + j]
                    w2, w3 = params[wo + (i + 2) * n_out + j], params[wo + (i + 3) * n_out + j]
                    for p in range(n):
                        acts[l + 1, j, p] = (((acts[l + 1, j, p] + w0 * acts[l, i, p]) + w1 * acts[l, i + 1, p])
                                             + w2 * acts[l, i + 2, p]) + w3 * acts[l, i + 3, p]
                i += 4
            for i in range(i, n_in):  # noqa: B020  (the inputs the four-at-a-time passes left)
                for j in range(n_out):
                    w = params[wo + i * n_out + j]
                    for p in range(n):
                        acts[l + 1, j, p] += w * acts[l, i, p]
        if l == n_layers - 1:
            break
        _activate(act, acts, l + 1, n_out, n)
        if p_drop > 0.0:
            for j in range(n_out):
                for p in range(n):
                    pre[l + 1, j, p] = acts[l + 1, j, p]
                    keep = 1.0 if drop_u[e, q0 + p, unit + j] >= p_drop else 0.0
                    acts[l + 1, j, p] = acts[l + 1, j, p] * keep / (1.0 - p_drop)
        unit += n_out


@njit(**_HOT)
def _probabilities(kind, z, L, n_out, n, s, aux):
    """s[:, :n] = sigmoid (binary: s[0]) or softmax over the rows of the logits z[L, :n_out, :n];
    softmax leaves each point's largest logit in aux[0] and Σ e^(z - largest) in aux[1]."""
    if kind == _BINARY:
        for p in range(n):
            s[0, p] = _sigmoid(z[L, 0, p])
    elif kind == _SOFTMAX:
        for p in range(n):
            aux[0, p] = z[L, 0, p]
            aux[1, p] = 0.0
        for j in range(1, n_out):
            for p in range(n):
                aux[0, p] = max(aux[0, p], z[L, j, p])
        for j in range(n_out):
            for p in range(n):
                s[j, p] = _exp(z[L, j, p] - aux[0, p])
                aux[1, p] += s[j, p]
        for j in range(n_out):
            for p in range(n):
                s[j, p] /= aux[1, p]


@njit(fastmath={"reassoc"}, **_HOT)
def _sum(row, n):
    """Σ row[:n], in any order (as torch's mean sums), so that it vectorises."""
    total = 0.0
    for p in range(n):
        total += row[p]
    return total


@njit(**_HOT)
def _score(kind, squared, z, L, n_out, n, t, t0, s, aux):
    """(summed data loss, number right) of n points with logits z[L] (n_out, n) and targets t[t0:t0 + n];
    squared error is summed over the k outputs and divided by k, so that dividing by the number of
    points gives torch's mean over all elements. Per-point values go to aux[2] (loss) and aux[3] (right)."""
    loss, right = aux[2], aux[3]
    if kind == _REGRESSION:
        for p in range(n):
            loss[p] = (z[L, 0, p] - t[t0 + p]) * (z[L, 0, p] - t[t0 + p])
        return _sum(loss, n), 0.0
    if kind == _BINARY:
        if squared:
            _probabilities(kind, z, L, n_out, n, s, aux)
            for p in range(n):
                loss[p] = (s[0, p] - t[t0 + p]) * (s[0, p] - t[t0 + p])
        else:
            for p in range(n):  # max(z, 0) - z·t + ln(1 + e^-|z|), the last as log1p of u in [0, 1]
                zp = z[L, 0, p]
                u = _exp(-abs(zp))
                x = 1.0 + u
                softplus = _log(x) + (u - (x - 1.0)) / x  # the second term restores what rounding 1 + u lost
                loss[p] = max(zp, 0.0) - zp * t[t0 + p] + softplus
        for p in range(n):
            right[p] = 1.0 if (z[L, 0, p] > 0.0) == (t[t0 + p] > 0.5) else 0.0
        return _sum(loss, n), _sum(right, n)
    _probabilities(kind, z, L, n_out, n, s, aux)
    for p in range(n):
        right[p] = 1.0
        loss[p] = 0.0
    for j in range(n_out):  # right: the label's logit is the first largest (as torch's argmax)
        for p in range(n):
            label = int(t[t0 + p])
            mine = z[L, label, p]
            beaten = z[L, j, p] >= mine if j < label else z[L, j, p] > mine
            right[p] = 0.0 if beaten and j != label else right[p]
            if squared:
                diff = s[j, p] - (1.0 if j == label else 0.0)
                loss[p] += diff * diff
    for p in range(n):
        if squared:
            loss[p] /= n_out
        else:  # log Σ e^z - z_label, with Σ e^(z - largest) and the largest from _probabilities
            loss[p] = _log(aux[1, p]) + aux[0, p] - z[L, int(t[t0 + p]), p]
    return _sum(loss, n), _sum(right, n)


@njit(**_HOT)
def _output_delta(kind, squared, z, L, n_out, n, t, scale, s, aux, d):
    """d[L, :, :n] = d(batch-mean loss)/d(logits) for logits z[L] (n_out, n), targets t; scale = 1 / batch."""
    if kind == _REGRESSION:
        for p in range(n):
            d[L, 0, p] = 2.0 * (z[L, 0, p] - t[p]) * scale
        return
    _probabilities(kind, z, L, n_out, n, s, aux)
    if kind == _BINARY:
        for p in range(n):
            q = s[0, p]
            d[L, 0, p] = 2.0 * (q - t[p]) * q * (1.0 - q) * scale if squared else (q - t[p]) * scale
        return
    for j in range(n_out):
        for p in range(n):
            d[L, j, p] = s[j, p] - (1.0 if j == int(t[p]) else 0.0)
    if squared:  # mean over batch × k of (softmax - one-hot)², through the softmax's Jacobian
        for p in range(n):
            aux[1, p] = 0.0  # reused for Σ_j g_j s_j
        for j in range(n_out):
            for p in range(n):
                d[L, j, p] *= 2.0 * scale / n_out
                aux[1, p] += d[L, j, p] * s[j, p]
        for j in range(n_out):
            for p in range(n):
                d[L, j, p] = s[j, p] * (d[L, j, p] - aux[1, p])
    else:
        for j in range(n_out):
            for p in range(n):
                d[L, j, p] *= scale


@njit(**dict(_HOT, fastmath={"reassoc", "contract"}))
def _add_gradients(grad, wo, bo, x, d, l, n_in, n_out, n):
    """Layer l's gradients += x[l] (n_in, n) · d[l + 1] (n_out, n)ᵀ, its biases' += Σ d[l + 1]: sums over
    the points, in any order (as a matrix product does), so that they vectorise."""
    if n < WIDE:  # a few points: one outer product each, along the contiguous rows of the gradient
        for p in range(n):
            for j in range(n_out):
                grad[bo + j] += d[l + 1, j, p]
            for i in range(n_in):
                x_i = x[l, i, p]
                for j in range(n_out):
                    grad[wo + i * n_out + j] += x_i * d[l + 1, j, p]
        return
    for j in range(n_out):
        total = 0.0
        for p in range(n):
            total += d[l + 1, j, p]
        grad[bo + j] += total
    for i in range(n_in):
        for j in range(n_out):
            total = 0.0
            for p in range(n):
                total += x[l, i, p] * d[l + 1, j, p]
            grad[wo + i * n_out + j] += total


@njit(**_POLY)
def _backward(sizes, act, params, w_off, b_off, acts, pre, delta, grad, n, p_drop, drop_u, e, q0):
    """Add the gradients of n points to grad, from the logits' delta in delta[L] back to the first layer."""
    n_layers = sizes.shape[0] - 1
    unit = 0
    for l in range(1, n_layers):
        unit += sizes[l]
    for l in range(n_layers - 1, -1, -1):
        n_in, n_out, wo = sizes[l], sizes[l + 1], w_off[l]
        _add_gradients(grad, wo, b_off[l], acts, delta, l, n_in, n_out, n)
        if l == 0:
            break
        unit -= n_in  # first unit of hidden layer l, whose outputs are this layer's input
        for i in range(n_in):
            if n < WIDE:
                for p in range(n):
                    total = 0.0
                    for j in range(n_out):
                        total += params[wo + i * n_out + j] * delta[l + 1, j, p]
                    delta[l, i, p] = total
            else:
                for p in range(n):
                    delta[l, i, p] = 0.0
                j = 0
                while j + 4 <= n_out:  # four outputs a pass, as in _forward
                    w0, w1 = params[wo + i * n_out + j], params[wo + i * n_out + j + 1]
                    w2, w3 = params[wo + i * n_out + j + 2], params[wo + i * n_out + j + 3]
                    for p in range(n):
                        delta[l, i, p] = (((delta[l, i, p] + w0 * delta[l + 1, j, p]) + w1 * delta[l + 1, j + 1, p])
                                          + w2 * delta[l + 1, j + 2, p]) + w3 * delta[l + 1, j + 3, p]
                    j += 4
                for j in range(j, n_out):  # noqa: B020  (the outputs the four-at-a-time passes left)
                    w = params[wo + i * n_out + j]
                    for p in range(n):
                        delta[l, i, p] += w * delta[l + 1, j, p]
            if p_drop > 0.0:
                for p in range(n):
                    keep = 1.0 if drop_u[e, q0 + p, unit + i] >= p_drop else 0.0
                    delta[l, i, p] = delta[l, i, p] / (1.0 - p_drop) * keep
        _times_slope(act, delta, pre if p_drop > 0.0 else acts, l, n_in, n)


@njit(**_HOT)
def _update(opt, lr, l1, l2, decay, n_weights, params, grad, m, v, t):
    """The penalty's gradient on the weights, then one step of the optimizer (torch's arithmetic)."""
    n = params.shape[0]
    if l1 > 0.0:
        for i in range(n_weights):
            w = params[i]
            grad[i] += l1 * (1.0 if w > 0.0 else (-1.0 if w < 0.0 else 0.0))
    if l2 > 0.0:  # d(l2·Σw²)/dw = 2·l2·w
        for i in range(n_weights):
            grad[i] += 2.0 * l2 * params[i]
    if opt == _SGD:
        for i in range(n):
            params[i] -= lr * grad[i]
    elif opt == _MOMENTUM:
        for i in range(n):  # buffer = 0.9·buffer + grad (the first step's buffer is grad: it starts at 0)
            m[i] = MOMENTUM * m[i] + grad[i]
            params[i] -= lr * m[i]
    else:
        t[0] += 1.0
        step_size = lr / (1.0 - BETA1 ** t[0])
        root = math.sqrt(1.0 - BETA2 ** t[0])
        if opt == _ADAMW:
            shrink = 1.0 - lr * decay
            for i in range(n_weights):  # decoupled weight decay, before the Adam step; never the biases
                params[i] *= shrink
        for i in range(n):
            g = grad[i]
            m[i] += (1.0 - BETA1) * (g - m[i])
            v[i] = BETA2 * v[i] + (1.0 - BETA2) * g * g
            params[i] -= step_size * m[i] / (math.sqrt(v[i]) / root + EPS)


@njit(**_KERNEL)
def _buffers(sizes, columns):
    """Scratch of a tile: activations, pre-dropout activations, deltas (L+1, width, columns), probabilities."""
    shape = (sizes.shape[0], sizes.max(), columns)
    return np.empty(shape), np.empty(shape), np.empty(shape), np.empty((sizes.max(), columns)), np.empty(
        (4, columns))


@njit(**_KERNEL)
def _evaluate_into(sizes, act, kind, squared, params, w_off, b_off, XT, y, acts, s, aux):
    """(mean data loss, accuracy) of the points XT (n_features, N) in eval mode, tile by tile."""
    n_layers, N = sizes.shape[0] - 1, XT.shape[1]
    n_out = sizes[n_layers]
    no_drop = np.empty((0, 0, 0))
    loss, right = 0.0, 0.0
    for start in range(0, N, TILE):
        n = min(TILE, N - start)
        for i in range(sizes[0]):
            acts[0, i, :n] = XT[i, start:start + n]
        _forward(sizes, act, params, w_off, b_off, acts, acts, n, 0.0, no_drop, 0, 0)
        tile_loss, tile_right = _score(kind, squared, acts, n_layers, n_out, n, y, start, s, aux)
        loss += tile_loss
        right += tile_right
    if N == 0:
        return math.nan, math.nan
    return loss / N, (math.nan if kind == _REGRESSION else right / N)


@njit(**_KERNEL)
def _evaluate(sizes, act, kind, squared, params, X, y):
    """(mean data loss, accuracy) of a set in eval mode; NaN loss for an empty set, NaN accuracy for regression."""
    w_off, b_off, _ = _layout(sizes)
    acts, _, _, s, aux = _buffers(sizes, TILE)
    return _evaluate_into(sizes, act, kind, squared, params, w_off, b_off, np.ascontiguousarray(X.T), y, acts, s, aux)


@njit(**_KERNEL)
def _train(sizes, act, kind, squared, opt, lr, l1, l2, decay, p_drop, batch_size,
           params, m, v, t, X_train, y_train, X_test, y_test, orders, drop_u,
           recent, count, overshoot_above, records):
    """Train len(orders) epochs in place; fill records[e] = train/test loss, train/test accuracy, max|param|.

    Returns (epochs completed, status). Blow-up (anything non-finite, or a loss or |param| > DIVERGED):
    params, m, v, t are put back as they were before that epoch, which is not counted. Overshoot: the
    epoch is counted, the weights kept. recent/count carry the overshoot window across calls.
    """
    n_layers = sizes.shape[0] - 1
    n_in, n_out = sizes[0], sizes[n_layers]
    w_off, b_off, n_weights = _layout(sizes)
    acts, pre, delta, s, aux = _buffers(sizes, max(batch_size, TILE))
    train_T, test_T = np.ascontiguousarray(X_train.T), np.ascontiguousarray(X_test.T)
    targets = np.empty(batch_size)
    n, n_params = X_train.shape[0], params.shape[0]
    grad = np.empty(n_params)
    saved = np.empty((3, n_params))
    for e in range(orders.shape[0]):
        saved[0, :] = params
        saved[1, :] = m
        saved[2, :] = v
        saved_t = t[0]
        for start in range(0, n, batch_size):
            b = min(batch_size, n - start)
            for p in range(b):
                point = orders[e, start + p]
                for i in range(n_in):
                    acts[0, i, p] = X_train[point, i]
                targets[p] = y_train[point]
            _forward(sizes, act, params, w_off, b_off, acts, pre, b, p_drop, drop_u, e, start)
            _output_delta(kind, squared, acts, n_layers, n_out, b, targets, 1.0 / b, s, aux, delta)
            grad[:] = 0.0
            _backward(sizes, act, params, w_off, b_off, acts, pre, delta, grad, b, p_drop, drop_u, e, start)
            _update(opt, lr, l1, l2, decay, n_weights, params, grad, m, v, t)
        train_loss, train_acc = _evaluate_into(sizes, act, kind, squared, params, w_off, b_off, train_T, y_train,
                                               acts, s, aux)
        test_loss, test_acc = _evaluate_into(sizes, act, kind, squared, params, w_off, b_off, test_T, y_test,
                                             acts, s, aux)
        top, finite = 0.0, math.isfinite(train_loss) and (X_test.shape[0] == 0 or math.isfinite(test_loss))
        for i in range(n_params):
            magnitude = abs(params[i])
            finite = finite and math.isfinite(magnitude)
            top = max(top, magnitude)
        if not finite or top > DIVERGED or train_loss > DIVERGED or test_loss > DIVERGED:
            params[:] = saved[0]
            m[:] = saved[1]
            v[:] = saved[2]
            t[0] = saved_t
            return e, _BLOWUP
        records[e, 0], records[e, 1], records[e, 2] = train_loss, test_loss, train_acc
        records[e, 3], records[e, 4] = test_acc, top
        recent[count[0] % OVERSHOOT_WINDOW] = train_loss
        count[0] += 1
        if count[0] >= OVERSHOOT_WINDOW:
            total = 0.0
            for i in range(count[0] - OVERSHOOT_WINDOW, count[0]):  # oldest first, as a Python sum would
                total += recent[i % OVERSHOOT_WINDOW]
            if total / OVERSHOOT_WINDOW > overshoot_above:
                return e + 1, _OVERSHOOT
    return orders.shape[0], _OK


@njit(**_KERNEL)
def _forward_all(sizes, act, kind, params, X, out):
    """Eval-mode activations of the points X (m, n_features) into out, one (width, m) block per hidden
    layer, then the outputs: (2, m) [1-p, p] for binary, (k, m) softmax probabilities, or (1, m) values."""
    n_layers, m = sizes.shape[0] - 1, X.shape[0]
    n_out = sizes[n_layers]
    w_off, b_off, _ = _layout(sizes)
    acts, _, _, s, aux = _buffers(sizes, TILE)
    XT, no_drop = np.ascontiguousarray(X.T), np.empty((0, 0, 0))
    for start in range(0, m, TILE):
        n = min(TILE, m - start)
        for i in range(sizes[0]):
            acts[0, i, :n] = XT[i, start:start + n]
        _forward(sizes, act, params, w_off, b_off, acts, acts, n, 0.0, no_drop, 0, 0)
        at = 0
        for l in range(1, n_layers):
            for j in range(sizes[l]):
                out[at + j * m + start:at + j * m + start + n] = acts[l, j, :n]
            at += m * sizes[l]
        if kind == _REGRESSION:
            out[at + start:at + start + n] = acts[n_layers, 0, :n]
        else:
            _probabilities(kind, acts, n_layers, n_out, n, s, aux)
            if kind == _BINARY:
                for p in range(n):
                    out[at + start + p] = 1.0 - s[0, p]
                    out[at + m + start + p] = s[0, p]
            else:
                for j in range(n_out):
                    out[at + j * m + start:at + j * m + start + n] = s[j, :n]
