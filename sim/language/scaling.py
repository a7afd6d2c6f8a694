"""Scaling laws: the published fits (Kaplan, Hoffmann et al. "Chinchilla", Besiroglu et al.'s 2024 refit), the
compute-optimal split of a budget C ≈ 6·N·D, the inference-aware optimum (Sardana & Frankle), and the fit of
L(N, D) = E + A/N^α + B/D^β to measured runs (Huber loss on log L, as Hoffmann et al.), in NumPy and torch.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

FLOPS_PER_PARAM_TOKEN = 6  # forward + backward: about 6 FLOPs per parameter per training token
SERVE_FLOPS_PER_PARAM_TOKEN = 2  # forward only: about 2 FLOPs per parameter per token served
TOKENS_PER_PARAM = 20  # the Chinchilla rule of thumb


@dataclass(frozen=True)
class LossFit:
    """L(N, D) = E + A / N**alpha + B / D**beta (N parameters, D training tokens, L in nats per token)."""

    E: float
    A: float
    B: float
    alpha: float
    beta: float

    def loss(self, N, D):
        return self.E + self.A / np.power(N, self.alpha) + self.B / np.power(D, self.beta)

    def rms_log_error(self, points) -> float:
        """Root mean square of log L(N, D) − log L over measured points [(N, D, L), ...]."""
        pts = np.asarray(points, dtype=float)
        return float(np.sqrt(np.mean((np.log(self.loss(pts[:, 0], pts[:, 1])) - np.log(pts[:, 2])) ** 2)))

    def tokens_for(self, N, loss):
        """Training tokens D with L(N, D) = loss; inf where N parameters alone cannot get that low."""
        gap = loss - self.E - self.A / np.power(N, self.alpha)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.where(gap > 0, np.power(self.B / np.maximum(gap, 1e-300), 1 / self.beta), np.inf)

    def G(self) -> float:
        """(αA / (βB))^(1/(α+β)): the constant of the compute-optimal N."""
        return (self.alpha * self.A / (self.beta * self.B)) ** (1 / (self.alpha + self.beta))


FITS = {
    "hoffmann": LossFit(E=1.69, A=406.4, B=410.7, alpha=0.34, beta=0.28),  # Hoffmann et al. 2022, approach 3
    "epoch": LossFit(E=1.8172, A=482.01, B=2085.43, alpha=0.3478, beta=0.3658),  # Besiroglu et al. 2024 refit
}
RULES = ("rule20", "hoffmann", "epoch")
KAPLAN_NC, KAPLAN_ALPHA = 8.8e13, 0.076  # Kaplan et al. 2020: L(N) = (N_c / N)^α_N, N non-embedding parameters

# published models: (name, parameters, training tokens); the article's small models trained far past 20 tokens/param.
# Gopher (Rae et al. 2021) is the model Chinchilla was trained against with the same compute
MODELS = (
    ("GPT-3", 175e9, 300e9),
    ("Gopher", 280e9, 300e9),
    ("Chinchilla", 70e9, 1.4e12),
    ("LLaMA-7B", 7e9, 1e12),
    ("Qwen3-0.6B", 0.6e9, 36e12),
    ("LFM2.5-350M", 0.35e9, 28e12),
)


# GPT-3's training mix (Brown et al. 2020, Table 2.2): tokens in each data set, billions; 300 B tokens were drawn
# from it for training, some sets more than once and Common Crawl less than once
GPT3_MIX = {"Common Crawl (filtered)": 410, "WebText2": 19, "Books1": 12, "Books2": 55, "Wikipedia": 3}


def model_flops(name: str) -> float:
    """C ≈ 6·N·D of a published model in MODELS."""
    _, N, D = next(m for m in MODELS if m[0] == name)
    return training_flops(N, D)


def compute_optimal(C: float, fit: str | LossFit) -> tuple[float, float]:
    """(N, D) that minimise the loss for C = 6·N·D FLOPs.

    "rule20": D = 20 N, so C = 6·20·N² and N = √(C/120). "hoffmann" / "epoch": minimising E + A/N^α + B/D^β with
    D = C/(6N) gives N* = G·(C/6)^(β/(α+β)), G = (αA/(βB))^(1/(α+β)), and D* = C/(6N*).
    """
    if C <= 0:
        raise ValueError("the budget must be positive")
    if fit == "rule20":
        N = math.sqrt(C / (FLOPS_PER_PARAM_TOKEN * TOKENS_PER_PARAM))
        return N, TOKENS_PER_PARAM * N
    f = fit if isinstance(fit, LossFit) else FITS[fit]
    N = f.G() * (C / FLOPS_PER_PARAM_TOKEN) ** (f.beta / (f.alpha + f.beta))
    return N, C / (FLOPS_PER_PARAM_TOKEN * N)


def article_rule(C: float) -> dict[str, float]:
    """The article's pseudo-code, N = √(C/6) with D = 20 N, taken literally: it spends 6·N·D = 20·C, twenty times
    the budget. Either N = √(C/6) (then D = N, 1 token per parameter) or D = 20 N (then N = √(C/120)) keeps C."""
    N = math.sqrt(C / FLOPS_PER_PARAM_TOKEN)
    return {"N": N, "D": TOKENS_PER_PARAM * N, "spent": FLOPS_PER_PARAM_TOKEN * N * TOKENS_PER_PARAM * N,
            "D_if_budget_kept": C / (FLOPS_PER_PARAM_TOKEN * N)}


def kaplan_loss(N):
    """Kaplan et al.'s L(N) = (N_c/N)^0.076 (nats per token, enough data, N non-embedding parameters)."""
    return np.power(KAPLAN_NC / np.asarray(N, dtype=float), KAPLAN_ALPHA)


def training_flops(N: float, D: float) -> float:
    return FLOPS_PER_PARAM_TOKEN * N * D


def serving_flops(N: float, tokens: float) -> float:
    """FLOPs of serving `tokens` tokens with N parameters (one forward pass each)."""
    return SERVE_FLOPS_PER_PARAM_TOKEN * N * tokens


def inference_optimal(C: float, fit: str, inference_tokens: float, points: int = 4001) -> dict[str, float]:
    """Sardana & Frankle: reach the loss the compute-optimal model of budget C reaches, at the least total cost
    6·N·D (training) + 2·N·inference_tokens (serving). For each N the tokens D that reach that loss follow from the
    fit; the N with the least total is found on a fine log grid, then refined (golden section)."""
    f = FITS[fit]
    N0, D0 = compute_optimal(C, fit)
    target = float(f.loss(N0, D0))

    def tokens(N):
        return f.tokens_for(N, target)

    def total(N):
        return FLOPS_PER_PARAM_TOKEN * N * tokens(N) + serving_flops(N, inference_tokens)

    grid = np.logspace(math.log10(N0) - 4, math.log10(N0) + 1, points)
    k = int(np.argmin(total(grid)))
    lo, hi = math.log(grid[max(k - 1, 0)]), math.log(grid[min(k + 1, points - 1)])
    g = (math.sqrt(5) - 1) / 2
    for _ in range(60):  # golden section on log N
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        if total(math.exp(a)) < total(math.exp(b)):
            hi = b
        else:
            lo = a
    N = math.exp((lo + hi) / 2)
    D = float(tokens(N))
    return {"N": N, "D": D, "train": training_flops(N, D), "serve": serving_flops(N, inference_tokens),
            "total": float(total(N)), "loss": target, "N_chinchilla": N0, "D_chinchilla": D0,
            "total_chinchilla": training_flops(N0, D0) + serving_flops(N0, inference_tokens)}


# the article's two plans of about equal training compute (its intuition for Sardana & Frankle): (name, N, D)
ARTICLE_PLANS = (("A", 7e9, 2e12), ("B", 14e9, 1e12))


def article_plans(fit: str, served: float) -> dict:
    """The article's plans A (7 B parameters on 2 T tokens) and B (14 B on 1 T) under a published fit, each
    serving `served` tokens: per plan N, D, training 6·N·D, FLOPs per served token 2·N, serving, total and the
    fit's loss. Then the comparison the article stops short of: the tokens A needs to reach B's loss
    ("D_match", inf if it cannot), the training that costs beyond B's ("extra"), and the tokens served after
    which the smaller model has paid that back ("break_even")."""
    f = FITS[fit]
    plans = {}
    for name, N, D in ARTICLE_PLANS:
        train, serve = training_flops(N, D), serving_flops(N, served)
        plans[name] = {"N": N, "D": D, "train": train, "per_token": serving_flops(N, 1), "serve": serve,
                       "total": train + serve, "loss": float(f.loss(N, D))}
    a, b = plans["A"], plans["B"]
    D_match = float(f.tokens_for(a["N"], b["loss"]))
    extra = training_flops(a["N"], D_match) - b["train"]
    return {"plans": plans, "D_match": D_match, "extra": extra,
            "break_even": extra / (b["per_token"] - a["per_token"])}


# ---------- fitting L(N, D) to measured runs ----------
HUBER_DELTA = 1e-3  # Hoffmann et al.'s δ


def _objective(theta: torch.Tensor, logN: torch.Tensor, logD: torch.Tensor, logL: torch.Tensor) -> torch.Tensor:
    """Per start (rows of theta = a, b, e, α, β): Σ Huber(LSE(a − α log N, b − β log D, e) − log L)."""
    a, b, e, al, be = theta.unbind(-1)  # each (S,)
    terms = torch.stack([a[:, None] - al[:, None] * logN, b[:, None] - be[:, None] * logD,
                         e[:, None].expand(-1, len(logN))], dim=-1)  # (S, P, 3)
    r = torch.logsumexp(terms, dim=-1) - logL  # (S, P)
    return torch.nn.functional.huber_loss(r, torch.zeros_like(r), reduction="none", delta=HUBER_DELTA).sum(-1)


def _lbfgs(theta: torch.Tensor, loss_of, max_iter: int, tolerance_grad: float, tolerance_change: float) -> None:
    """Minimise loss_of(theta) in place with L-BFGS (strong Wolfe line search)."""
    theta.requires_grad_(True)
    opt = torch.optim.LBFGS([theta], lr=1.0, max_iter=max_iter, tolerance_grad=tolerance_grad,
                            tolerance_change=tolerance_change, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = loss_of(theta)
        loss.backward()
        return loss

    opt.step(closure)


def fit_loss_surface(points, E: float | None = None) -> LossFit:
    """Fit E + A/N^α + B/D^β to points [(N, D, L), ...] as Hoffmann et al.: minimise the Huber loss (δ = 10⁻³) of
    log L against log(exp(a − α log N) + exp(b − β log D) + exp(e)) from a grid of starts, each refined with
    L-BFGS; A = eᵃ, B = eᵇ, E = eᵉ.

    With `E` given (e.g. the known entropy of a synthetic language), E is held there and only A, α, B, β are
    fitted: runs far above the floor say little about E, and a free fit can then put it anywhere below them.
    """
    pts = np.asarray(points, dtype=float)
    if pts.ndim != 2 or pts.shape[1] != 3 or len(pts) < 5:
        raise ValueError("need at least 5 points (N, D, L)")
    if not np.all(np.isfinite(pts)) or np.any(pts <= 0):
        raise ValueError("N, D and L must be positive and finite")
    if E is not None and not (math.isfinite(E) and E > 0):
        raise ValueError("a fixed E must be positive and finite")
    logN, logD, logL = (torch.tensor(np.log(pts[:, i]), dtype=torch.float64) for i in range(3))
    grid = torch.cartesian_prod(*(torch.tensor(v, dtype=torch.float64) for v in (
        (0.0, 5.0, 10.0), (0.0, 5.0, 10.0), (-1.5, -0.5, 0.5), (0.3, 0.7), (0.3, 0.7))))
    free = [0, 1, 3, 4] if E is not None else [0, 1, 2, 3, 4]  # the columns of (a, b, e, α, β) fitted
    if E is not None:
        grid = grid[grid[:, 2] == grid[0, 2]]  # one e per start: it is held anyway
        grid[:, 2] = math.log(E)
    fixed = grid[:1].clone()

    def full(theta: torch.Tensor) -> torch.Tensor:  # the fitted columns put back among the held ones
        return torch.cat([theta[:, :2], fixed[:, 2:3].expand(len(theta), 1), theta[:, 2:]], dim=1) \
            if E is not None else theta

    theta = grid[:, free].clone()
    # the starts are independent: their sum separates
    _lbfgs(theta, lambda th: _objective(full(th), logN, logD, logL).sum(), 60, 1e-12, 1e-14)
    with torch.no_grad():
        values = _objective(full(theta), logN, logD, logL)
        values[~torch.isfinite(values)] = math.inf
        best = theta[int(torch.argmin(values))]
    # polish the best start on its own (the joint line search is shared by all starts)
    theta1 = best.detach().clone()[None]
    _lbfgs(theta1, lambda th: _objective(full(th), logN, logD, logL).sum(), 200, 1e-14, 1e-16)
    a, b, e, al, be = full(theta1.detach())[0].tolist()
    return LossFit(E=math.exp(e), A=math.exp(a), B=math.exp(b), alpha=al, beta=be)


def isoflop_minimum(sizes, losses) -> tuple[float, float] | None:
    """The size at the bottom of one IsoFLOP curve: the parabola in log N through the best run and its two
    neighbours, its vertex kept between them; the best run itself when it is at an end of the curve. None with
    fewer than 3 runs."""
    x, y = np.log(np.asarray(sizes, dtype=float)), np.asarray(losses, dtype=float)
    ok = np.isfinite(y)
    order = np.argsort(x[ok])
    x, y = x[ok][order], y[ok][order]
    if len(x) < 3:
        return None
    k = int(np.argmin(y))
    if k in (0, len(x) - 1):
        return float(math.exp(x[k])), float(y[k])
    c2, c1, c0 = np.polyfit(x[k - 1: k + 2], y[k - 1: k + 2], 2)
    if c2 <= 0:
        return float(math.exp(x[k])), float(y[k])
    xm = float(np.clip(-c1 / (2 * c2), x[k - 1], x[k + 1]))
    return math.exp(xm), float(c2 * xm * xm + c1 * xm + c0)


def isoflop_frontier(runs) -> dict[float, tuple[float, float]]:
    """Each budget's IsoFLOP minimum (isoflop_minimum of its runs, each a dict with "budget", "params" and "loss"),
    by budget, in increasing order; a budget with fewer than 3 runs of finite loss has none."""
    minima = {}
    for C in sorted({r["budget"] for r in runs}):
        on_curve = [r for r in runs if r["budget"] == C]
        m = isoflop_minimum([r["params"] for r in on_curve], [r["loss"] for r in on_curve])
        if m is not None:
            minima[C] = m
    return minima
