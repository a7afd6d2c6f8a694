"""Discriminative against generative on the same two classes in the plane.

Logistic regression models P(y=1|x) = σ(w·x + b) directly and is fitted by gradient descent on the cross-entropy.
The generative model fits P(y) (class shares) and P(x|y) (a Gaussian per class: the class's mean and covariance)
and gets P(y|x) from Bayes' rule; having a model of x, it can also draw new points.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MEANS = np.array([[-1.0, -0.4], [1.0, 0.4]])  # the true class centres at separation 2 (scaled by separation / 2)
COVS = np.array([[[0.7, 0.45], [0.45, 0.7]], [[0.35, 0.0], [0.0, 1.4]]])  # the true class covariances


def two_classes(n: int, separation: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n points of each class (X (2n, 2), y (2n,) in {0, 1}) from two Gaussians of different shapes."""
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.multivariate_normal(MEANS[k] * separation / 2, COVS[k], n) for k in (0, 1)])
    return X, np.repeat([0, 1], n)


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # = 1 / (1 + e^-z), without overflow


@dataclass(frozen=True)
class Logistic:
    w: np.ndarray  # (2,)
    b: float
    losses: np.ndarray  # (steps,) the mean cross-entropy before each step

    def proba(self, X: np.ndarray) -> np.ndarray:
        """P(y=1|x) for each row of X."""
        return sigmoid(X @ self.w + self.b)

    @property
    def n_params(self) -> int:
        """The numbers it learned: the weights and the bias."""
        return self.w.size + 1


def logistic_loss_grad(w: np.ndarray, b: float, X: np.ndarray, y: np.ndarray, l2: float) -> tuple[float, np.ndarray,
                                                                                                   float]:
    """Mean cross-entropy + (l2/2)‖w‖², and its gradient (∂/∂w, ∂/∂b): Xᵀ(p − y)/n + l2·w, mean(p − y)."""
    z = X @ w + b
    loss = float(np.mean(np.logaddexp(0.0, z) - y * z) + 0.5 * l2 * w @ w)
    p = sigmoid(z)
    return loss, X.T @ (p - y) / len(y) + l2 * w, float(np.mean(p - y))


def fit_logistic(X: np.ndarray, y: np.ndarray, steps: int = 300, lr: float = 1.0, l2: float = 1e-3) -> Logistic:
    """Full-batch gradient descent from zero weights."""
    w, b, losses = np.zeros(X.shape[1]), 0.0, []
    for _ in range(steps):
        loss, gw, gb = logistic_loss_grad(w, b, X, y, l2)
        losses.append(loss)
        w, b = w - lr * gw, b - lr * gb
    return Logistic(w, b, np.array(losses))


@dataclass(frozen=True)
class Gaussians:
    """P(y) and P(x|y) = N(mean_y, cov_y) per class, maximum-likelihood fits."""

    priors: np.ndarray  # (K,)
    means: np.ndarray  # (K, 2)
    covs: np.ndarray  # (K, 2, 2)
    shared: bool = False  # one covariance for every class

    @property
    def n_params(self) -> int:
        """The free numbers it learned: K - 1 priors (they sum to 1), K means, and one symmetric covariance per
        class, or one in all when shared (d(d+1)/2 numbers each)."""
        k, d = self.means.shape
        return k - 1 + k * d + (1 if self.shared else k) * d * (d + 1) // 2

    def log_joint(self, X: np.ndarray) -> np.ndarray:
        """(n, K) log P(x, y=k) = log P(y=k) + log N(x | mean_k, cov_k)."""
        out = []
        for prior, mean, cov in zip(self.priors, self.means, self.covs, strict=True):
            d = X - mean
            inv = np.linalg.inv(cov)
            maha = np.einsum("ni,ij,nj->n", d, inv, d)
            out.append(np.log(prior) - 0.5 * (maha + np.log(np.linalg.det(cov)) + X.shape[1] * np.log(2 * np.pi)))
        return np.stack(out, axis=1)

    def proba(self, X: np.ndarray) -> np.ndarray:
        """P(y=1|x) by Bayes' rule: P(x|y=1)P(y=1) / Σ_k P(x|y=k)P(y=k)."""
        lj = self.log_joint(X)
        return np.exp(lj[:, 1] - np.logaddexp(lj[:, 0], lj[:, 1]))

    def sample(self, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """n new points: a class drawn from P(y), then a point from that class's Gaussian (mean + L·z, LLᵀ = cov)."""
        rng = np.random.default_rng(seed)
        y = rng.choice(len(self.priors), n, p=self.priors)
        z = rng.standard_normal((n, self.means.shape[1]))
        chol = np.linalg.cholesky(self.covs)  # (K, 2, 2)
        return self.means[y] + np.einsum("nij,nj->ni", chol[y], z), y


def fit_gaussians(X: np.ndarray, y: np.ndarray, shared: bool = False) -> Gaussians:
    """Class shares, class means and covariances (divided by the class's count: the maximum-likelihood estimate);
    shared: one covariance for both (pooled), which makes the boundary a straight line (LDA)."""
    ks = np.unique(y)
    priors = np.array([np.mean(y == k) for k in ks])
    means = np.stack([X[y == k].mean(axis=0) for k in ks])
    covs = np.stack([np.cov(X[y == k].T, bias=True) for k in ks])
    if shared:
        pooled = sum(p * c for p, c in zip(priors, covs, strict=True))
        covs = np.stack([pooled] * len(ks))
    return Gaussians(priors, means, covs, shared)


def grid(X: np.ndarray, n: int = 60, margin: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """xs (n,), ys (n,) spanning the data with a margin, and the (n·n, 2) points of the grid (row-major in y)."""
    lo, hi = X.min(axis=0) - margin, X.max(axis=0) + margin
    xs, ys = np.linspace(lo[0], hi[0], n), np.linspace(lo[1], hi[1], n)
    gx, gy = np.meshgrid(xs, ys)
    return xs, ys, np.column_stack([gx.ravel(), gy.ravel()])


def accuracy(proba: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean((proba >= 0.5) == (y == 1)))


def fit_result(X: np.ndarray, y: np.ndarray, logistic: Logistic, gauss: Gaussians, drawn: int) -> tuple[str, dict]:
    """What the two fits say under their figures (an i18n key and its params): each one's training accuracy, what
    logistic regression learned and how many numbers, the generative model's priors, its count of numbers, and how
    many points it drew."""
    return ("asst.gen.result", {"acc_d": f"{accuracy(logistic.proba(X), y):.1%}",
                                "acc_g": f"{accuracy(gauss.proba(X), y):.1%}", "w1": f"{logistic.w[0]:.2f}",
                                "w2": f"{logistic.w[1]:.2f}", "b": f"{logistic.b:.2f}",
                                "n_params_d": logistic.n_params, "n_params_g": gauss.n_params,
                                "p0": f"{gauss.priors[0]:.2f}", "p1": f"{gauss.priors[1]:.2f}", "m": drawn})
