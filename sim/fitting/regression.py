"""Regression engine: polynomial features, least squares, robust losses, gradient descent, diagnostics.

Conventions: a residual is r = ŷ − y, and the squared loss is L = 1/(2n) Σ r², whose gradient
(1/n) Σ r·x carries no factor 2. That is the loss the notes' worked example implies (its printed step,
w = 0.4 and b = 0.25, comes out only with the ½), not the notes' own definition, the mean of the squared
residuals (1/n) Σ r² = 2L, whose gradients are twice as large: squared_loss_conventions puts the two side
by side. Huber and absolute error are averaged per point the same way (Huber is ½r² near zero, so it
agrees with the squared loss there).
NumPy only: a step on a few hundred points costs microseconds, so the page can train live.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from sim.core.history import kept_after_compaction

if TYPE_CHECKING:  # sim.fitting.regression_data imports this module
    from sim.fitting.regression_data import RegressionData

LOSSES = ("mse", "huber", "mae")
COND_LIMIT = 1e8  # above this condition number a solve in float64 keeps less than half its digits
DIVERGED = 1e6  # a loss this many times the starting loss (or a non-finite one) counts as divergence
IRLS_ITERATIONS = 100
CURVE_POINTS = 200  # points along a fitted 1-D curve
CONTOUR_LEVELS = 6  # ellipses of the live (w, b) path panel: the starting loss times 1, 1/4, 1/16, ...
MAD_TO_STD = 1.4826  # the median absolute deviation of a normal sample, times this, is its std


# ---------- features ----------
def polynomial_features(x: np.ndarray, degree: int) -> np.ndarray:
    """Columns x, x², …, x^degree of a 1-D input: (n,) -> (n, degree)."""
    if degree < 1:
        raise ValueError("degree must be at least 1")
    x = np.asarray(x, dtype=float).reshape(-1)
    # x·x·…·x by a running product: ~10× faster than the power x ** k (the capacity sweep builds thousands)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.cumprod(np.broadcast_to(x[:, None], (len(x), degree)), axis=1)  # (n, degree)


def _zscore(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column means and scales; a constant column keeps scale 1 (diagnose() reports it)."""
    top = np.abs(A).max(axis=0)
    top = np.where(top > 0, top, 1.0)
    mean, std = top * (A / top).mean(axis=0), top * (A / top).std(axis=0)  # no overflow for huge values
    return mean, np.where(std > 0, std, 1.0)


@dataclass(frozen=True, eq=False)
class FeatureMap:
    """Inputs (n, p) -> design matrix (n, p·degree): powers of each input column, optionally standardised."""

    degree: int  # powers 1..degree of every input column
    inputs: tuple[np.ndarray, np.ndarray] | None  # (mean, scale) of the raw inputs; None: not standardised
    columns: tuple[np.ndarray, np.ndarray] | None  # (mean, scale) of the power columns; None: not standardised

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float).reshape(len(x), -1)  # (n, p)
        if self.inputs is not None:
            x = (x - self.inputs[0]) / self.inputs[1]
        X = np.hstack([polynomial_features(col, self.degree) for col in x.T])  # (n, p·degree)
        if self.columns is not None:
            X = (X - self.columns[0]) / self.columns[1]
        return X


def feature_map(x: np.ndarray, degree: int, standardize: bool) -> FeatureMap:
    """The map fitted on inputs x. Standardising the inputs before taking powers keeps x^12 near 1
    instead of 150^12, and standardising the columns after gives every weight the same scale."""
    raw = FeatureMap(degree, None, None)
    if not standardize:
        return raw
    x = np.asarray(x, dtype=float).reshape(len(x), -1)
    with np.errstate(all="ignore"):
        inputs = _zscore(x)
        columns = _zscore(FeatureMap(degree, inputs, None)(x))
    return FeatureMap(degree, inputs, columns)


# ---------- least squares ----------
def _weighted_least_squares(X: np.ndarray, y: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, float]:
    """Minimiser of Σ weights·(Xw + b − y)²; centring first keeps the intercept out of the conditioning.

    Where many solutions exist (fewer points than parameters) this is the one with the smallest |w|.
    """
    total = weights.sum()
    x_mean, y_mean = weights @ X / total, weights @ y / total
    root = np.sqrt(weights)
    w, *_ = np.linalg.lstsq(root[:, None] * (X - x_mean), root * (y - y_mean), rcond=None)
    return w, float(y_mean - x_mean @ w)


def least_squares(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Ordinary least squares with an intercept: X (n, p), y (n,) -> weights w (p,) and bias b."""
    X = np.asarray(X, dtype=float).reshape(len(X), -1)
    y = np.asarray(y, dtype=float)
    return _weighted_least_squares(X, y, np.ones(len(y)))


# ---------- losses and gradients ----------
def point_losses(r: np.ndarray, loss: str = "mse", delta: float = 1.0) -> np.ndarray:
    """Per-point loss of residuals r: ½r² (mse), Huber with threshold delta, or |r| (mae)."""
    a = np.abs(r)
    if loss == "mse":
        return 0.5 * r * r
    if loss == "huber":
        return np.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))
    if loss == "mae":
        return a
    raise ValueError(f"unknown loss {loss}")


def loss_value(r: np.ndarray, loss: str = "mse", delta: float = 1.0) -> float:
    """L = mean of the per-point losses; for mse that is 1/(2n) Σ r²."""
    return float(np.mean(point_losses(r, loss, delta)))


def loss_slope(r: np.ndarray, loss: str = "mse", delta: float = 1.0) -> np.ndarray:
    """dρ/dr per point: r itself, r clipped to ±delta (Huber), or sign(r) (mae)."""
    if loss == "mse":
        return r
    if loss == "huber":
        return np.clip(r, -delta, delta)
    if loss == "mae":
        return np.sign(r)
    raise ValueError(f"unknown loss {loss}")


def gradient(w: np.ndarray, b: float, X: np.ndarray, y: np.ndarray, loss: str = "mse",
             delta: float = 1.0) -> tuple[np.ndarray, float]:
    """(dL/dw, dL/db) = ((1/n) Xᵀψ(r), mean ψ(r)) with ψ = loss_slope and r = Xw + b − y."""
    psi = loss_slope(X @ w + b - y, loss, delta)
    return X.T @ psi / len(y), float(psi.mean())


def gd_step(w: np.ndarray, b: float, X: np.ndarray, y: np.ndarray, lr: float, loss: str = "mse",
            delta: float = 1.0) -> tuple[np.ndarray, float]:
    """One full-batch gradient-descent step on L (by default 1/(2n) Σ (ŷ − y)²)."""
    X = np.asarray(X, dtype=float).reshape(len(X), -1)
    gw, gb = gradient(np.asarray(w, dtype=float), float(b), X, np.asarray(y, dtype=float), loss, delta)
    return w - lr * gw, b - lr * gb


@dataclass(frozen=True)
class StepTrace:
    """Every number of one full-batch update, for the step-by-step view."""

    y_hat: np.ndarray  # (n,) predictions before the step
    residuals: np.ndarray  # (n,) ŷ − y
    slopes: np.ndarray  # (n,) ψ(r): the residual itself for mse, clipped for Huber, its sign for mae
    grad_w: np.ndarray  # (k,) dL/dw
    grad_b: float  # dL/db
    w: np.ndarray  # (k,) weights before
    b: float  # bias before
    w_new: np.ndarray  # (k,) weights after
    b_new: float  # bias after
    loss_before: float
    loss_after: float


def explain_step(w: np.ndarray, b: float, X: np.ndarray, y: np.ndarray, lr: float, loss: str = "mse",
                 delta: float = 1.0) -> StepTrace:
    """One update of gd_step, with the predictions, residuals and gradient it went through."""
    w = np.asarray(w, dtype=float)
    with np.errstate(all="ignore"):
        y_hat = X @ w + b
        r = y_hat - y
        gw, gb = gradient(w, b, X, y, loss, delta)
        w_new, b_new = w - lr * gw, b - lr * gb
        after = loss_value(X @ w_new + b_new - y, loss, delta)
    return StepTrace(y_hat, r, loss_slope(r, loss, delta), gw, gb, w, float(b), w_new, float(b_new),
                     loss_value(r, loss, delta), after)


SQUARED_LOSS_FACTORS = {"half": 0.5, "mean": 1.0}  # L = factor·(1/n) Σ r²: the example's implied ½, the notes' MSE


@dataclass(frozen=True)
class ConventionStep:
    """One full-batch step of the squared loss written as L = factor·(1/n) Σ (ŷ − y)²."""

    factor: float
    loss: float  # L before the step
    grad_w: np.ndarray  # (k,) dL/dw = 2·factor·(1/n) Xᵀr
    grad_b: float  # dL/db = 2·factor·mean r
    w_new: np.ndarray  # (k,)
    b_new: float


def squared_loss_conventions(w: np.ndarray, b: float, X: np.ndarray, y: np.ndarray,
                             lr: float) -> dict[str, ConventionStep]:
    """The same step under both ways of writing the squared loss: "half", 1/(2n) Σ r² (this lab's, and what the
    notes' worked example implies), and "mean", (1/n) Σ r² (the notes' definition of the loss)."""
    X = np.asarray(X, dtype=float).reshape(len(X), -1)
    w, y = np.asarray(w, dtype=float), np.asarray(y, dtype=float)
    r = X @ w + b - y
    out = {}
    for name, factor in SQUARED_LOSS_FACTORS.items():
        grad_w, grad_b = 2 * factor * X.T @ r / len(y), 2 * factor * float(r.mean())
        out[name] = ConventionStep(factor, factor * float(np.mean(r * r)), grad_w, grad_b, w - lr * grad_w,
                                   float(b - lr * grad_b))
    return out


def robust_spread(r: np.ndarray) -> float:
    """A standard deviation of r that a few outliers cannot inflate (from the median absolute deviation)."""
    r = np.asarray(r, dtype=float)
    spread = MAD_TO_STD * float(np.median(np.abs(r - np.median(r))))
    return spread if spread > 0 else float(r.std()) or 1.0


def robust_fit(X: np.ndarray, y: np.ndarray, loss: str, delta: float = 1.0) -> tuple[np.ndarray, float]:
    """Exact minimiser of the Huber or absolute loss by iteratively reweighted least squares.

    No closed form exists for these losses; each round solves a weighted least-squares problem whose
    weights ψ(r)/r shrink the points with large residuals, starting from ordinary least squares.
    """
    w, b = least_squares(X, y)
    if loss == "mse":
        return w, b
    floor = 1e-9 * robust_spread(y)  # |r| below this counts as on the curve (mae)
    for _ in range(IRLS_ITERATIONS):
        r = np.abs(X @ w + b - y)
        weights = np.minimum(1.0, delta / np.maximum(r, 1e-300)) if loss == "huber" else 1.0 / np.maximum(r, floor)
        w_new, b_new = _weighted_least_squares(X, y, weights)
        done = np.allclose(np.append(w_new, b_new), np.append(w, b), rtol=1e-10, atol=1e-12)
        w, b = w_new, b_new
        if done:
            break
    return w, b


# ---------- diagnostics ----------
def lr_limits(X: np.ndarray) -> tuple[float, float]:
    """Learning rates above which full-batch GD on the squared loss zig-zags (1/λ) and diverges (2/λ).

    λ is the largest eigenvalue of the loss's Hessian (1/n)[X 1]ᵀ[X 1]: along that direction each
    step multiplies the error by (1 − ηλ), which flips sign past 1/λ and grows past 2/λ.
    """
    A = np.hstack([X, np.ones((len(X), 1))])
    # λ = σ_max(A)² / n, with A scaled to entries ≤ 1 first: for huge values AᵀA itself overflows, and
    # LAPACK fails on it (or prints "illegal value" on the server's output); λ = inf then means "any rate"
    # is too large, not an error
    scale = np.abs(A).max()
    if not np.isfinite(scale):
        return 0.0, 0.0
    with np.errstate(all="ignore"):
        lam = (float(np.linalg.svd(A / scale, compute_uv=False)[0]) * scale) ** 2 / len(X)
    return 1.0 / lam, 2.0 / lam


def diagnose(X: np.ndarray) -> list[tuple[str, dict]]:
    """What makes a least-squares fit on the design matrix X (n, k) unreliable: (code, params) each."""
    n, k = X.shape
    if not np.isfinite(X).all():
        return [("overflow", {})]
    issues = []
    if n < k + 1:
        issues.append(("underdetermined", {"n": n, "k": k + 1}))
    constant = [j + 1 for j in range(k) if np.ptp(X[:, j]) == 0]
    if constant:
        issues.append(("constant_column", {"column": constant[0]}))
    elif n >= k + 1:
        cond = float(np.linalg.cond(X - X.mean(axis=0)))
        if not cond < COND_LIMIT:
            issues.append(("ill_conditioned", {"cond": f"{cond:.1e}", "limit": f"{COND_LIMIT:.0e}"}))
    return issues


def regression_metrics(y: np.ndarray, y_hat: np.ndarray) -> dict[str, float | None]:
    """MSE, RMSE, MAE and R² (None when y is constant, where R² is undefined)."""
    with np.errstate(all="ignore"):
        r = y_hat - y
        mse = float(np.mean(r * r))
        ss_tot = float(np.sum((y - y.mean()) ** 2))
        r2 = 1.0 - float(np.sum(r * r)) / ss_tot if ss_tot > 0 else None
    return {"mse": mse, "rmse": float(np.sqrt(mse)), "mae": float(np.mean(np.abs(r))), "r2": r2}


# ---------- a fitted model ----------
@dataclass(frozen=True)
class ModelConfig:
    """The model: polynomial degree, standardisation and loss."""

    degree: int = 1  # powers 1..degree of each input
    standardize: bool = False  # z-score the inputs and the power columns
    loss: str = "mse"  # "mse", "huber" or "mae"
    delta: float = 1.0  # Huber's threshold δ, in target units

    @property
    def inputs_as_is(self) -> bool:
        """The design matrix is the inputs themselves (degree 1, not standardised)."""
        return self.degree == 1 and not self.standardize

    def __post_init__(self):
        if self.loss not in LOSSES or not 1 <= self.degree <= 12 or not self.delta > 0:
            raise ValueError(f"invalid model {self}")


@dataclass(frozen=True, eq=False)
class Fit:
    """Weights of a model on its feature map, and what the diagnostics found."""

    features: FeatureMap
    w: np.ndarray  # (k,) weights of the design-matrix columns
    b: float
    issues: list[tuple[str, dict]] = field(default_factory=list)

    def predict(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return self.features(x) @ self.w + self.b

    @property
    def overflow(self) -> bool:
        """The fit overflowed: its weights are NaN and nothing of it can be drawn."""
        return self.issues[:1] == [("overflow", {})]


def fit(x: np.ndarray, y: np.ndarray, config: ModelConfig) -> Fit:
    """The exact minimiser: least squares in closed form for mse, IRLS for Huber and absolute error.

    On overflow (huge raw powers, huge uploaded values) the weights are NaN and issues is [("overflow", {})].
    """
    features = feature_map(x, config.degree, config.standardize)
    with np.errstate(all="ignore"):
        X = features(x)
        try:
            issues = diagnose(X)
            if issues[:1] != [("overflow", {})]:
                w, b = robust_fit(X, y, config.loss, config.delta)
                if np.isfinite(w).all() and np.isfinite(b):
                    return Fit(features, w, b, issues)
        except np.linalg.LinAlgError:  # an SVD met an inf made inside it (centring huge values)
            pass
    return Fit(features, np.full(X.shape[1], np.nan), float("nan"), [("overflow", {})])


# ---------- gradient descent, live ----------
@dataclass(frozen=True)
class GDConfig:
    """A gradient-descent run: the model and how it is trained."""

    model: ModelConfig = ModelConfig()
    lr: float = 0.03  # learning rate η
    batch_size: int | None = None  # points per update; None (or ≥ n) is full batch
    seed: int = 0  # order of the mini-batches


class GDRun:
    """Gradient descent from w = b = 0, one epoch at a time, with its loss history and parameter path."""

    def __init__(self, x: np.ndarray, y: np.ndarray, config: GDConfig):
        self.config = config
        m = config.model
        self.features = feature_map(x, m.degree, m.standardize)
        with np.errstate(all="ignore"):
            self.X = self.features(x)  # (n, k)
        self.y = np.asarray(y, dtype=float)
        self.w, self.b = np.zeros(self.X.shape[1]), 0.0
        self.epoch = 0
        self.start_loss = self.loss()
        # loss and (w…, b) after each epoch of self.epochs, [0] at the start; bounded: past sim.core.history.CAP
        # entries the middle is thinned (min–max on the loss), the first and the latest epochs stay in full
        self.history = [self.start_loss]
        self.path = [np.append(self.w, self.b)]
        self.epochs = [0]
        self.diverged = not (np.isfinite(self.X).all() and np.isfinite(self.start_loss))
        self._rng = np.random.default_rng(config.seed)

    def loss(self, w: np.ndarray | None = None, b: float | None = None) -> float:
        w, b = (self.w, self.b) if w is None else (w, b)
        with np.errstate(all="ignore"):
            return loss_value(self.X @ w + b - self.y, self.config.model.loss, self.config.model.delta)

    def step(self, epochs: int = 1) -> None:
        """Train `epochs` epochs; stop for good at divergence, keeping the last finite parameters."""
        n, size, m = len(self.y), self.config.batch_size or len(self.y), self.config.model
        for _ in range(epochs):
            if self.diverged:
                return
            order = self._rng.permutation(n) if size < n else np.arange(n)
            w, b = self.w, self.b
            with np.errstate(all="ignore"):
                for start in range(0, n, size):
                    idx = order[start:start + size]
                    w, b = gd_step(w, b, self.X[idx], self.y[idx], self.config.lr, m.loss, m.delta)
            loss = self.loss(w, b)
            if np.isfinite(w).all() and np.isfinite(loss):
                self.w, self.b = w, b
                self.epoch += 1
                self.history.append(loss)
                self.path.append(np.append(w, b))
                self.epochs.append(self.epoch)
                keep = kept_after_compaction(self.epochs, self.history)
                if keep is not None:
                    self.history, self.path, self.epochs = ([seq[i] for i in keep]
                                                            for seq in (self.history, self.path, self.epochs))
            if not (np.isfinite(loss) and loss <= DIVERGED * max(self.start_loss, 1e-12)):
                self.diverged = True

    def as_fit(self) -> Fit:
        return Fit(self.features, self.w, self.b)

    def path_array(self) -> np.ndarray:
        """The (w…, b) path as an array (epochs, k + 1): a copy, safe to keep while the run goes on."""
        return np.array(self.path)

    def trained_on(self, y: np.ndarray, model: ModelConfig) -> bool:
        """Whether this run fits these targets with this model (so its path belongs on their loss surface)."""
        return self.config.model == model and len(self.y) == len(y) and np.array_equal(self.y, y)


LIVE_HISTORY = 300  # a live frame's loss curve and (w, b) path: at most this many epochs (thin_indices)


def thin_indices(n: int, most: int) -> np.ndarray:
    """At most `most` indices of range(n), dense at the start and sparse later (the first epochs are where
    a path zig-zags and a loss falls fastest), always keeping the first and the last."""
    if n <= most:
        return np.arange(n)
    return np.unique(np.geomspace(1, n, most).round().astype(int) - 1)


def gd_frame(run: GDRun, along: np.ndarray, inputs: np.ndarray, path: bool = True) -> dict:
    """What the live view draws of a run now, in no language: its epoch, loss, start loss and whether it diverged;
    "curve": (along, the model's predictions at `inputs`, float32); "losses": (epochs, losses) and "path": the
    (w…, b) rows (float32; None unless `path`) at the same at most LIVE_HISTORY epochs. Losses stay float64: a
    diverging run's climb spans more than float32 can hold."""
    idx = thin_indices(len(run.history), LIVE_HISTORY)
    with np.errstate(all="ignore"):
        curve_y = run.as_fit().predict(inputs).astype(np.float32)
        trail = run.path_array()[idx].astype(np.float32) if path else None
    return {"epoch": run.epoch, "loss": float(run.history[-1]), "start_loss": float(run.start_loss),
            "diverged": run.diverged, "curve": (along, curve_y),
            "losses": (np.asarray(run.epochs, dtype=np.int32)[idx], np.asarray(run.history, dtype=float)[idx]),
            "path": trail}


class LiveGD:
    """A GDRun on a data set as a live run (sim.core.live.LiveRun): a step is an epoch tried, it stops when it
    diverges, and its frame (gd_frame) draws the model along the data's axis (curve_inputs) and, for one weight and
    a bias, the (w, b) path.

    `steps` counts the epoch that diverged too (the GDRun does not count one that left no finite parameters), so the
    frame of a step never changes once it is taken."""

    def __init__(self, data: RegressionData, config: GDConfig):
        self.gd = GDRun(data.x, data.y, config)
        self.along, self.inputs = curve_inputs(data)
        self.with_path = self.gd.X.shape[1] == 1
        self.steps = 0

    @property
    def stopped(self) -> bool:
        return self.gd.diverged

    def advance(self, n: int) -> None:
        for _ in range(n):
            if self.gd.diverged:
                return
            self.gd.step(1)
            self.steps += 1

    def shared(self) -> tuple:
        """What never changes (the design matrix, the targets, where the curve is drawn): checkpoints keep it."""
        return self.gd.X, self.gd.y, self.gd.features, self.along, self.inputs

    def frame(self) -> dict:
        return gd_frame(self.gd, self.along, self.inputs, self.with_path)


# ---------- pictures' numbers ----------
def loss_surface(X: np.ndarray, y: np.ndarray, w_grid: np.ndarray, b_grid: np.ndarray, loss: str = "mse",
                 delta: float = 1.0) -> np.ndarray:
    """L(w, b) of a one-column X on a grid: (len(b_grid), len(w_grid)), one row of b at a time."""
    x = X[:, 0]
    pred = w_grid[:, None] * x[None, :]  # (W, n)
    with np.errstate(all="ignore"):
        return np.stack([np.mean(point_losses(pred + b - y, loss, delta), axis=1) for b in b_grid])


def squared_loss_contours(X: np.ndarray, y: np.ndarray, levels: np.ndarray,
                          points: int = 90) -> list[tuple[np.ndarray, np.ndarray]]:
    """Exact level sets of the squared loss over (w, b) for a one-column X: ellipses around the optimum.

    L(θ) = L* + ½(θ − θ*)ᵀH(θ − θ*), so L = L* + c is θ* + √(2c)·H^(−½)·u for u on the unit circle.
    Returns (w, b) arrays per level above L*; none when H is singular (a constant x) or overflows (huge x).
    """
    if X.shape[1] != 1:
        raise ValueError("contours are drawn for one weight and the bias")
    A = np.hstack([X, np.ones((len(X), 1))])
    with np.errstate(all="ignore"):
        H = A.T @ A / len(X)
    if not np.isfinite(H).all():
        return []
    lam, vec = np.linalg.eigh(H)
    if not lam.min() > 1e-12 * lam.max():
        return []
    w, b = least_squares(X, y)
    best = loss_value(X @ w + b - y)
    angle = np.linspace(0, 2 * np.pi, points)
    circle = np.stack([np.cos(angle), np.sin(angle)])  # (2, points)
    out = []
    for level in levels:
        if level > best:
            ellipse = vec @ (circle / np.sqrt(lam)[:, None]) * np.sqrt(2 * (level - best))  # (2, points)
            out.append((w[0] + ellipse[0], b + ellipse[1]))
    return out


# ---------- what the page shows ----------
def parameter_count(x: np.ndarray, degree: int) -> int:
    """Weights and bias of a polynomial model of this degree on inputs x (n, p): p·degree + 1."""
    return x.shape[1] * degree + 1


def design_matrix(x: np.ndarray, config: ModelConfig) -> np.ndarray:
    """The columns the model's weights multiply: powers of x, standardised if the model says so."""
    with np.errstate(all="ignore"):
        return feature_map(x, config.degree, config.standardize)(x)


def axis(data: RegressionData) -> tuple[np.ndarray, str]:
    """What the data pictures put along x, and what it is: "input" (one input), "day" (the temperature
    series) or "row" (an upload with two inputs, in file order)."""
    if data.x.shape[1] == 1:
        return data.x[:, 0], "input"
    if data.day is not None:
        return data.day.astype(float), "day"
    return np.arange(1.0, len(data.y) + 1), "row"


def curve_inputs(data: RegressionData, points: int = CURVE_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """(positions along axis(), the inputs there) where a model is drawn: an even grid over one input, else the
    data's own inputs in axis order."""
    if data.x.shape[1] == 1:
        grid = np.linspace(data.x.min(), data.x.max(), points)
        return grid, grid[:, None]
    along, _ = axis(data)
    order = np.argsort(along)
    return along[order], data.x[order]


def curve(data: RegressionData, model: Fit, points: int = CURVE_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """The model drawn along axis(): a smooth curve for one input, its predictions in order otherwise."""
    along, inputs = curve_inputs(data, points)
    return along, model.predict(inputs)


def scores(data: RegressionData, model: Fit) -> dict[str, float | None]:
    """regression_metrics of the model's predictions on the data."""
    return regression_metrics(data.y, model.predict(data.x))


def rule_scores(data: RegressionData) -> dict[str, float | None] | None:
    """For the temperature series, the metrics of the notes' rule written by a person (tomorrow is the
    average of the two days before); None for any other data."""
    if data.name != "temperature":
        return None
    return regression_metrics(data.y, data.x.mean(axis=1))


@dataclass(frozen=True)
class LRAdvice:
    """Where a run's learning rate sits against the squared loss's limits 1/λ and 2/λ, and what that lets the page
    say of the run (the page's i18n key ends with `kind`)."""

    # full-batch squared error: "ok" (η < 1/λ), "zigzag" (1/λ ≤ η < 2/λ) or "diverge" (η ≥ 2/λ), what its
    # eigen-directions do (each multiplies its error by 1 − ηλᵢ); Huber, full batch: "huber_ok" (η < 1/λ: no more
    # curved than squared error, so no step reverses the last) or "huber_large" (what it does depends on how many
    # points lie within δ: the page says nothing it could get wrong); "minibatch" (the full-batch limits, only a
    # guide: a batch's own curvature differs); "mae" (no such limits)
    kind: str
    zigzag: float  # 1/λ (NaN for "mae")
    diverge: float  # 2/λ (NaN for "mae")


def lr_advice(run: GDRun) -> LRAdvice:
    """The learning rate of run against lr_limits of its design matrix."""
    loss, size = run.config.model.loss, run.config.batch_size
    if loss == "mae":
        return LRAdvice("mae", float("nan"), float("nan"))
    zigzag, diverge = lr_limits(run.X)
    lr = run.config.lr
    if size and size < len(run.y):
        kind = "minibatch"
    elif loss == "huber":
        kind = "huber_large" if lr >= zigzag else "huber_ok"
    else:
        kind = "diverge" if lr >= diverge else "zigzag" if lr >= zigzag else "ok"
    return LRAdvice(kind, zigzag, diverge)


def path_background(run: GDRun) -> tuple[list[tuple[np.ndarray, np.ndarray]], tuple[float, float]] | None:
    """For a model of one weight and a bias: the squared loss's contour ellipses at the starting loss
    times 1, 1/4, 1/16, … (none for the other losses) and the exact minimum, behind the live (w, b) path;
    None for more parameters."""
    if run.X.shape[1] != 1:
        return None
    m = run.config.model
    w, b = robust_fit(run.X, run.y, m.loss, m.delta)
    contours = (squared_loss_contours(run.X, run.y, run.start_loss * 0.25 ** np.arange(CONTOUR_LEVELS))
                if m.loss == "mse" else [])
    return contours, (float(w[0]), b)


@dataclass(frozen=True, eq=False)
class OutlierFits:
    """One loss's fit with every point and without the outliers, drawn along axis()."""

    loss: str
    fit: Fit  # with every point; fit.overflow: nothing else is set
    curve: tuple[np.ndarray, np.ndarray] | None  # (along, ŷ) of the fit with every point
    clean: np.ndarray | None  # ŷ along the same points of the fit without the outliers; None: no outliers
    shift: float | None  # RMS gap between the two curves, in target units; None without a clean fit
    shift_units: float | None  # the same in the set's unit (data.scale)


def outlier_fits(data: RegressionData, config: ModelConfig, loss: str) -> OutlierFits:
    """config's model with this loss, fitted with and without the outliers (when there are outliers and
    at least two other points), and how far the outliers moved its curve."""
    cfg = ModelConfig(config.degree, config.standardize, loss, config.delta)
    with_all = fit(data.x, data.y, cfg)
    if with_all.overflow:
        return OutlierFits(loss, with_all, None, None, None, None)
    along, y_all = curve(data, with_all)
    clean = ~data.outlier
    if not data.outlier.any() or clean.sum() < 2:
        return OutlierFits(loss, with_all, (along, y_all), None, None, None)
    _, y_clean = curve(data, fit(data.x[clean], data.y[clean], cfg))
    shift = float(np.sqrt(np.mean((y_all - y_clean) ** 2)))
    return OutlierFits(loss, with_all, (along, y_all), y_clean, shift, shift / data.scale)
