"""Optimisers lab engine: 2-D loss surfaces, the real update rules, momentum theory, Muon, schedules.

Every path is computed by the optimiser's own update rule in float64 (plain Python floats, IEEE double, as
NumPy's float64): SGD, heavy-ball momentum and Nesterov (torch.optim.SGD's conventions), Adagrad, RMSprop,
Adam (L2 added to the gradient, as torch.optim.Adam), AdamW (decoupled weight decay) and Lion. The rules
follow torch.optim's formulas line for line (checked step by step against torch in tests/test_optimizers.py).

Momentum theory follows Goh, "Why Momentum Really Works" (Distill, 2017): on a quadratic, heavy ball
(v ← βv + g; θ ← θ − αv) acts on each eigen-direction with eigenvalue λ through the 2×2 iteration matrix
[[1 + β − αλ, −β], [1, 0]] on (x_k, x_{k−1}); it converges iff 0 < αλ < 2 + 2β (0 ≤ β < 1), and its
eigenvalues are complex (the path spirals) for β above the critical damping (1 − √(αλ))².

A step's arithmetic is done on Python floats, two coordinates at a time: for a 2-vector that is several
times faster than NumPy's per-call overhead (8 optimisers × 500 steps cost a few milliseconds).
NumPy only; no torch (the Muon training comparison, with torch, is sim/optim/muon.py).
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

DIVERGED = 1e6  # a coordinate beyond this (or inf / NaN) counts as divergence: the rest of the path is NaN
NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)  # Muon's quintic Newton–Schulz (Keller Jordan; torch.optim.Muon)
NS_EPS = 1e-7  # as torch.optim.Muon: G / max(‖G‖_F, eps)
NS_STEPS = 5  # Newton–Schulz iterations per Muon update (torch.optim.Muon's default)
NS_PRODUCTS = 3  # matrix products per iteration: A = XXᵀ, A·A, then (bA + cA²)·X
RASTRIGIN_A = 10.0

# name -> default hyper-parameters; each reaches the default quadratic's minimum (κ = 10) within ~200 steps
OPTIMIZERS: dict[str, dict] = {
    "sgd": {"lr": 0.15},
    "momentum": {"lr": 0.03, "beta": 0.9},
    "nesterov": {"lr": 0.03, "beta": 0.9},
    "adagrad": {"lr": 0.5, "eps": 1e-10},
    "rmsprop": {"lr": 0.02, "alpha": 0.99, "eps": 1e-8},
    "adam": {"lr": 0.1, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.0},
    "adamw": {"lr": 0.1, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.01},
    "lion": {"lr": 0.05, "beta1": 0.9, "beta2": 0.99, "weight_decay": 0.0},
}

# where each path's rule comes from: a torch.optim class (tests/test_optimizers.py steps both side by side), or for
# an optimiser torch does not have, its paper (tests/test_optimizers.py: the paper's algorithm)
RULE_SOURCE = {"sgd": "torch.optim.SGD", "momentum": "torch.optim.SGD", "nesterov": "torch.optim.SGD",
               "adagrad": "torch.optim.Adagrad", "rmsprop": "torch.optim.RMSprop", "adam": "torch.optim.Adam",
               "adamw": "torch.optim.AdamW", "lion": "Chen et al. 2023, Algorithm 2"}

# optimizer-state bytes per parameter in fp32 (muon: one momentum buffer, on the matrices it takes: muon_state_bytes)
STATE_BYTES: dict[str, int] = {"sgd": 0, "momentum": 4, "nesterov": 4, "adagrad": 4, "rmsprop": 4, "adam": 8,
                               "adamw": 8, "lion": 4, "muon": 4}



def muon_state_bytes(on_muon: int, total: int) -> float:
    """State bytes per parameter of Muon as it is used: its one buffer (STATE_BYTES["muon"]) on the `on_muon`
    parameters of hidden 2-D weight matrices, AdamW's two (STATE_BYTES["adamw"]) on the rest of `total` (embeddings,
    output head, biases, norm gains)."""
    if not 0 <= on_muon <= total or total <= 0:
        raise ValueError(f"need 0 ≤ on_muon ≤ total and total > 0, got {on_muon}, {total}")
    return (STATE_BYTES["muon"] * on_muon + STATE_BYTES["adamw"] * (total - on_muon)) / total


def mlp_muon_split(sizes: list[int]) -> tuple[int, int]:
    """(parameters Muon takes, all parameters) of an MLP with layer widths `sizes`, weights and biases: Muon takes the
    weight matrices between hidden layers; the input and output layers' weights and every bias stay on AdamW."""
    weights = [a * b for a, b in itertools.pairwise(sizes)]
    return sum(weights[1:-1]), sum(weights) + sum(sizes[1:])


SCHEDULES = ("constant", "step", "cosine", "wsd")

# the race on a real model (sim/optim/race.py, torch): its optimisers, and learning rates with which each trains the
# default MLP on the spiral in a few thousand steps (Muon's is for the hidden matrix; AdamW's for the rest)
RACERS = ("sgd", "momentum", "adam", "adamw", "lion", "muon")
RACE_LRS = {"sgd": 0.5, "momentum": 0.1, "adam": 0.05, "adamw": 0.05, "lion": 0.005, "muon": 0.05}


# ---------------------------------------------------------------------------------------------------------------
# Surfaces


@dataclass(frozen=True)
class Surface:
    """A 2-D loss surface. `value` takes (2,) or (..., 2) arrays; `grad` gives the exact gradient, shape (2,);
    `noise` is the std of the Gaussian noise `path` adds to each gradient component (0: deterministic)."""

    name: str
    f: Callable[[np.ndarray, np.ndarray], np.ndarray] = field(repr=False, compare=False)  # f(x, y), vectorised
    df: Callable[[float, float], tuple[float, float]] = field(repr=False, compare=False)  # ∇f on Python floats
    bounds: tuple[tuple[float, float], tuple[float, float]] = ((-3.0, 3.0), (-3.0, 3.0))  # ((x0, x1), (y0, y1))
    start: tuple[float, float] = (0.0, 0.0)
    minimum: tuple[float, float] | None = None
    noise: float = 0.0

    def value(self, xy: np.ndarray) -> float | np.ndarray:
        """f at xy: a float for one point (2,), an array (...) for points (..., 2)."""
        a = np.asarray(xy, dtype=np.float64)
        out = self.f(a[..., 0], a[..., 1])
        return float(out) if np.ndim(out) == 0 else out

    def grad(self, xy: np.ndarray) -> np.ndarray:
        """The exact gradient at one point, shape (2,) (no noise: `path` adds it)."""
        x, y = (float(v) for v in np.asarray(xy, dtype=np.float64).reshape(2))
        return np.array(self.df(x, y), dtype=np.float64)

    def grid(self, n: int = 101) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(xs (n,), ys (n,), Z (n, n) with Z[i, j] = f(xs[j], ys[i])) over `bounds`, for a contour plot."""
        xs = np.linspace(*self.bounds[0], n)
        ys = np.linspace(*self.bounds[1], n)
        return xs, ys, self.f(xs[None, :], ys[:, None])


def _quadratic(kappa: float, angle: float, noise: float) -> Surface:
    if not kappa >= 1.0:
        raise ValueError(f"kappa must be ≥ 1, got {kappa}")
    t = math.radians(angle)
    c, s = math.cos(t), math.sin(t)
    l1, l2 = 1.0, float(kappa)
    # H = R diag(l1, l2) Rᵀ with R's columns the eigen-directions u = (c, s), v = (−s, c)
    hxx, hxy, hyy = l1 * c * c + l2 * s * s, (l1 - l2) * c * s, l1 * s * s + l2 * c * c

    def f(x, y):
        return 0.5 * (hxx * x * x + 2.0 * hxy * x * y + hyy * y * y)

    def df(x, y):
        return hxx * x + hxy * y, hxy * x + hyy * y

    return Surface("quadratic", f, df, ((-3.0, 3.0), (-3.0, 3.0)), (-2.5, 2.0), (0.0, 0.0), noise)


def _rosenbrock(noise: float) -> Surface:
    def f(x, y):
        return (1.0 - x) ** 2 + 100.0 * (y - x * x) ** 2

    def df(x, y):
        r = y - x * x
        return -2.0 * (1.0 - x) - 400.0 * x * r, 200.0 * r

    return Surface("rosenbrock", f, df, ((-2.5, 2.0), (-1.0, 3.5)), (-2.0, 2.0), (1.0, 1.0), noise)


def _rastrigin(noise: float) -> Surface:
    a, w = RASTRIGIN_A, 2.0 * math.pi

    def f(x, y):
        return 2.0 * a + x * x - a * np.cos(w * x) + y * y - a * np.cos(w * y)

    def df(x, y):
        return 2.0 * x + a * w * math.sin(w * x), 2.0 * y + a * w * math.sin(w * y)

    return Surface("rastrigin", f, df, ((-5.12, 5.12), (-5.12, 5.12)), (-3.2, 2.8), (0.0, 0.0), noise)


def _saddle(noise: float) -> Surface:
    def f(x, y):
        return x * x - y * y

    def df(x, y):
        return 2.0 * x, -2.0 * y

    # x is the stable axis: a path starting just off it slides to the saddle, then escapes along y (unbounded)
    return Surface("saddle", f, df, ((-2.5, 2.5), (-2.5, 2.5)), (-2.0, 0.001), None, noise)


def _ravine(noise: float) -> Surface:
    # a narrow curved valley along y = ½ sin x, sloping gently to (0, 0); curvature ratio ≈ 150 at the minimum
    def f(x, y):
        return 0.05 * x * x + 5.0 * (y - 0.5 * np.sin(x)) ** 2

    def df(x, y):
        r = y - 0.5 * math.sin(x)
        return 0.1 * x - 5.0 * r * math.cos(x), 10.0 * r

    return Surface("ravine", f, df, ((-5.0, 5.0), (-2.5, 2.5)), (-4.5, 1.5), (0.0, 0.0), noise)


def surface(name: str, kappa: float = 10.0, angle: float = 0.0, noise: float = 0.0) -> Surface:
    """The surface `name` ("quadratic", "rosenbrock", "rastrigin", "saddle", "ravine") with gradient noise
    std `noise`. kappa and angle (degrees) shape the quadratic ½(λ₁u² + λ₂v²), λ₁ = 1, λ₂ = kappa, in
    coordinates (u, v) rotated by angle; the other surfaces ignore them."""
    if noise < 0:
        raise ValueError(f"noise must be ≥ 0, got {noise}")
    noise = float(noise)
    if name == "quadratic":
        return _quadratic(float(kappa), float(angle), noise)
    makers = {"rosenbrock": _rosenbrock, "rastrigin": _rastrigin, "saddle": _saddle, "ravine": _ravine}
    if name not in makers:
        raise ValueError(f"unknown surface {name!r}; one of quadratic, {', '.join(makers)}")
    return makers[name](noise)


SURFACES: dict[str, Surface] = {name: surface(name, noise=0.5 if name == "ravine" else 0.0)
                                for name in ("quadratic", "rosenbrock", "rastrigin", "saddle", "ravine")}


# ---------------------------------------------------------------------------------------------------------------
# Update rules: each maker returns (step(t, x, y, gx, gy) -> (x, y), state() -> dict of (2,) arrays)


def _sign(v: float) -> float:
    return 1.0 if v > 0 else (-1.0 if v < 0 else 0.0)  # torch.sign: 0 at 0 (NaN: 0, and the path stops anyway)


def _sgd(lr):
    def step(t, x, y, gx, gy):
        return x - lr * gx, y - lr * gy

    return step, lambda: {}


def _momentum(lr, beta):
    bx = by = 0.0  # torch starts the buffer at g: β·0 + g is the same number

    def step(t, x, y, gx, gy):
        nonlocal bx, by
        bx, by = beta * bx + gx, beta * by + gy
        return x - lr * bx, y - lr * by

    return step, lambda: {"buf": np.array([bx, by])}


def _nesterov(lr, beta):
    bx = by = dx = dy = 0.0

    def step(t, x, y, gx, gy):
        nonlocal bx, by, dx, dy
        bx, by = beta * bx + gx, beta * by + gy
        dx, dy = gx + beta * bx, gy + beta * by  # torch: g ← g + β·buf
        return x - lr * dx, y - lr * dy

    return step, lambda: {"buf": np.array([bx, by]), "d": np.array([dx, dy])}


def _adagrad(lr, eps):
    sx = sy = 0.0

    def step(t, x, y, gx, gy):
        nonlocal sx, sy
        sx, sy = sx + gx * gx, sy + gy * gy
        return x - lr * gx / (math.sqrt(sx) + eps), y - lr * gy / (math.sqrt(sy) + eps)

    return step, lambda: {"sum": np.array([sx, sy])}


def _rmsprop(lr, alpha, eps):
    ax = ay = 0.0
    one = 1.0 - alpha

    def step(t, x, y, gx, gy):
        nonlocal ax, ay
        ax, ay = alpha * ax + one * gx * gx, alpha * ay + one * gy * gy
        return x - lr * gx / (math.sqrt(ax) + eps), y - lr * gy / (math.sqrt(ay) + eps)

    return step, lambda: {"square_avg": np.array([ax, ay])}


def _adam(lr, beta1, beta2, eps, weight_decay, decoupled):
    mx = my = vx = vy = 0.0
    bc1 = bc2 = 1.0
    o1, o2 = 1.0 - beta1, 1.0 - beta2

    def step(t, x, y, gx, gy):
        nonlocal mx, my, vx, vy, bc1, bc2
        if decoupled:  # AdamW: θ ← θ(1 − η·λ) before the Adam step
            x, y = x * (1.0 - lr * weight_decay), y * (1.0 - lr * weight_decay)
        elif weight_decay:  # Adam: L2 added to the gradient
            gx, gy = gx + weight_decay * x, gy + weight_decay * y
        mx, my = beta1 * mx + o1 * gx, beta1 * my + o1 * gy
        vx, vy = beta2 * vx + o2 * gx * gx, beta2 * vy + o2 * gy * gy
        bc1, bc2 = 1.0 - beta1 ** t, 1.0 - beta2 ** t
        size, root = lr / bc1, math.sqrt(bc2)
        return (x - size * mx / (math.sqrt(vx) / root + eps),
                y - size * my / (math.sqrt(vy) / root + eps))

    def state():
        return {"m": np.array([mx, my]), "v": np.array([vx, vy]), "m_hat": np.array([mx, my]) / bc1,
                "v_hat": np.array([vx, vy]) / bc2}

    return step, state


def _lion(lr, beta1, beta2, weight_decay):
    mx = my = cx = cy = 0.0

    def step(t, x, y, gx, gy):
        nonlocal mx, my, cx, cy
        cx, cy = beta1 * mx + (1.0 - beta1) * gx, beta1 * my + (1.0 - beta1) * gy
        nx, ny = x - lr * (_sign(cx) + weight_decay * x), y - lr * (_sign(cy) + weight_decay * y)
        mx, my = beta2 * mx + (1.0 - beta2) * gx, beta2 * my + (1.0 - beta2) * gy
        return nx, ny

    return step, lambda: {"c": np.array([cx, cy]), "m": np.array([mx, my])}


def _muon(lr, beta, nesterov):
    # Muon on the point as a 1×2 matrix: momentum, then Newton–Schulz orthogonalisation of the (Nesterov) update
    bx = by = 0.0

    def step(t, x, y, gx, gy):
        nonlocal bx, by
        bx, by = beta * bx + (1.0 - beta) * gx, beta * by + (1.0 - beta) * gy  # torch.optim.Muon's lerp
        ux, uy = ((1.0 - beta) * gx + beta * bx, (1.0 - beta) * gy + beta * by) if nesterov else (bx, by)
        o = newton_schulz(np.array([[ux, uy]]))[0]
        return x - lr * float(o[0]), y - lr * float(o[1])

    return step, lambda: {"buf": np.array([bx, by])}


_MAKERS = {"sgd": _sgd, "momentum": _momentum, "nesterov": _nesterov, "adagrad": _adagrad, "rmsprop": _rmsprop,
           "adam": lambda **h: _adam(decoupled=False, **h), "adamw": lambda **h: _adam(decoupled=True, **h),
           "lion": _lion, "muon": _muon}
MUON_DEFAULTS = {"lr": 0.05, "beta": 0.95, "nesterov": True}  # path("muon", ...) only; not one of OPTIMIZERS


def hyper_parameters(optimizer: str, **hyper) -> dict:
    """The optimiser's defaults updated with `hyper` (unknown names raise ValueError)."""
    defaults = MUON_DEFAULTS if optimizer == "muon" else OPTIMIZERS.get(optimizer)
    if defaults is None:
        raise ValueError(f"unknown optimizer {optimizer!r}; one of {', '.join(OPTIMIZERS)}")
    unknown = set(hyper) - set(defaults)
    if unknown:
        raise ValueError(f"{optimizer} has no hyper-parameter {', '.join(sorted(unknown))}; "
                         f"it takes {', '.join(defaults)}")
    return {**defaults, **hyper}


def _run(optimizer: str, surf: Surface, start, steps: int, seed: int, hyper: dict, record: list | None):
    h = hyper_parameters(optimizer, **hyper)
    step, state = _MAKERS[optimizer](**h)
    x, y = (float(v) for v in (surf.start if start is None else start))
    out = np.full((steps + 1, 2), np.nan)
    out[0] = x, y
    noise = surf.noise
    z = np.random.default_rng(seed).standard_normal((steps, 2)).tolist() if noise > 0 and steps > 0 else None
    df = surf.df
    for t in range(1, steps + 1):
        try:
            gx, gy = df(x, y)
            if z is not None:
                gx, gy = gx + noise * z[t - 1][0], gy + noise * z[t - 1][1]
            nx, ny = step(t, x, y, gx, gy)
        except (OverflowError, ValueError, ZeroDivisionError):
            break
        if not (abs(nx) <= DIVERGED and abs(ny) <= DIVERGED):  # also False for NaN
            break
        if record is not None:
            record.append({"step": t, "theta": np.array([x, y]), "grad": np.array([gx, gy]), "state": state(),
                           "update": np.array([nx - x, ny - y]), "theta_new": np.array([nx, ny])})
        out[t] = x, y = nx, ny
    return out


def path(optimizer: str, surf: Surface, start, steps: int, seed: int = 0, **hyper) -> np.ndarray:
    """The optimiser's path, shape (steps + 1, 2): row 0 is `start` (None: surf.start), row t the point after
    t steps. Hyper-parameters not given take OPTIMIZERS[optimizer]'s defaults. If surf.noise > 0, each step's
    gradient gets N(0, noise²) per component, drawn from np.random.default_rng(seed) (all steps' noise drawn up
    front, so a seed gives the same noise whatever the optimiser). A step to inf / NaN or beyond 1e6 in a
    coordinate is divergence: that row and all later ones are NaN (no exception, no warning)."""
    return _run(optimizer, surf, start, int(steps), seed, hyper, None)


def stable_lr(optimizer: str, surf: Surface, start, steps: int, choices, seed: int = 0, **hyper) -> float:
    """The optimiser's default learning rate if its path on `surf` does not diverge in `steps` steps; else the
    largest of `choices` below it that does not (the smallest choice if none). A step size that suits one surface
    can blow up on another: Rosenbrock's gradients reach ~10³ where the quadratic's stay near 10."""
    default = hyper_parameters(optimizer, **hyper)["lr"]
    for lr in [default, *sorted((c for c in choices if c < default), reverse=True)]:
        if diverged_at(path(optimizer, surf, start, steps, seed, **(hyper | {"lr": lr}))) is None:
            return float(lr)
    return float(min(choices))


def diverged_at(p: np.ndarray) -> int | None:
    """The first row of path `p` that is NaN (the step that diverged), or None."""
    bad = np.flatnonzero(np.isnan(np.asarray(p, dtype=np.float64)).any(axis=-1))
    return int(bad[0]) if bad.size else None


def trace(optimizer: str, surf: Surface, start, steps: int, seed: int = 0, **hyper) -> list[dict]:
    """path's steps, one dict each, for showing each formula with its numbers: "step" (t, from 1), "theta" (the
    point before), "grad" (the gradient used, noise included; Adam's L2 term is not), "state" (the optimiser's
    state after the step: sgd {}, momentum {"buf"}, nesterov {"buf", "d"}, adagrad {"sum"}, rmsprop
    {"square_avg"}, adam/adamw {"m", "v", "m_hat", "v_hat"}, lion {"c", "m"}), "update" (theta_new − theta)
    and "theta_new"; every vector a (2,) array. The list stops before a diverging step (so it can be shorter)."""
    record: list[dict] = []
    _run(optimizer, surf, start, int(steps), seed, hyper, record)
    return record


# ---------------------------------------------------------------------------------------------------------------
# Momentum theory on a quadratic (Goh, "Why Momentum Really Works")


def _rate(alpha, beta, lam):
    """Spectral radius of [[1 + β − αλ, −β], [1, 0]], NumPy-broadcast."""
    alpha, beta, lam = (np.asarray(v, dtype=np.float64) for v in (alpha, beta, lam))
    tr = 1.0 + beta - alpha * lam
    disc = tr * tr - 4.0 * beta
    root = np.sqrt(np.abs(disc))
    real = np.maximum(np.abs(tr + root), np.abs(tr - root)) / 2.0
    return np.where(disc < 0, np.sqrt(np.abs(beta)), real)


def momentum_rate(alpha: float, beta: float, lam: float) -> float:
    """Convergence rate of heavy ball (v ← βv + g; θ ← θ − αv) along an eigen-direction with eigenvalue lam:
    the spectral radius of its 2×2 iteration matrix [[1 + β − αλ, −β], [1, 0]] (β = 0: |1 − αλ|). The error
    shrinks like rate^k; a rate ≥ 1 diverges."""
    return float(_rate(alpha, beta, lam))


def iteration_matrix(alpha: float, beta: float, lam: float) -> np.ndarray:
    """Heavy ball's 2×2 iteration matrix on (x_k, x_{k−1}) along an eigen-direction with eigenvalue lam."""
    return np.array([[1.0 + beta - alpha * lam, -beta], [1.0, 0.0]])


def converges(alpha: float, beta: float, lam: float) -> bool:
    """Whether heavy ball converges along eigenvalue lam: 0 < αλ < 2 + 2β with 0 ≤ β < 1."""
    return bool(0.0 <= beta < 1.0 and 0.0 < alpha * lam < 2.0 + 2.0 * beta)


def critical_beta(alpha: float, lam: float) -> float:
    """Critical damping (1 − √(αλ))²: above it the iteration's eigenvalues are complex (the path spirals,
    rate √β), below it real (it crawls or zig-zags)."""
    return (1.0 - math.sqrt(alpha * lam)) ** 2


def optimal_momentum(l1: float, ln: float) -> tuple[float, float, float]:
    """(α*, β*, rate) for eigenvalues in [l1, ln]: α* = (2 / (√λ₁ + √λₙ))², β* = ((√λₙ − √λ₁)/(√λₙ + √λ₁))²,
    rate = (√κ − 1)/(√κ + 1) with κ = λₙ/λ₁."""
    a, b = math.sqrt(l1), math.sqrt(ln)
    return (2.0 / (a + b)) ** 2, ((b - a) / (b + a)) ** 2, (b - a) / (b + a)


def gd_optimal_rate(l1: float, ln: float) -> float:
    """Gradient descent's best rate (κ − 1)/(κ + 1), at step 2/(λ₁ + λₙ)."""
    k = ln / l1
    return (k - 1.0) / (k + 1.0)


def phase_grid(l1: float, ln: float, alphas: np.ndarray, betas: np.ndarray) -> np.ndarray:
    """Worst rate over λ ∈ {l1, ln} for each (β, α): shape (len(betas), len(alphas)); ≥ 1 means divergence.
    (The rate is largest at an end of the spectrum, so this is the rate on the whole quadratic.)"""
    a = np.asarray(alphas, dtype=np.float64)[None, :]
    b = np.asarray(betas, dtype=np.float64)[:, None]
    return np.maximum(_rate(a, b, l1), _rate(a, b, ln))


# ---------------------------------------------------------------------------------------------------------------
# Muon's Newton–Schulz orthogonalisation


def newton_schulz_steps(G: np.ndarray, steps: int = NS_STEPS) -> list[np.ndarray]:
    """Muon's quintic Newton–Schulz iterates, in float64: [X₀, X₁, …, X_steps] (steps + 1 matrices, G's shape),
    X₀ = G/‖G‖_F and X ← aX + (bA + cA²)X with A = XXᵀ, (a, b, c) = (3.4445, −4.7750, 2.0315); computed on Gᵀ
    when G has more rows than columns, as Muon does. Their singular values are pushed towards ~1 (to
    roughly [0.7, 1.2] after 5 steps), the directions (U, V of the SVD) unchanged."""
    g = np.asarray(G, dtype=np.float64)
    if g.ndim != 2:
        raise ValueError(f"G must be a matrix, got shape {g.shape}")
    tall = g.shape[0] > g.shape[1]
    x = g.T if tall else g
    x = x / max(float(np.linalg.norm(x)), NS_EPS)
    a, b, c = NS_COEFFICIENTS
    out = [x]
    for _ in range(steps):
        m = x @ x.T
        x = a * x + (b * m + c * (m @ m)) @ x
        out.append(x)
    return [x.T.copy() if tall else x for x in out]


def newton_schulz(G: np.ndarray, steps: int = NS_STEPS) -> np.ndarray:
    """Muon's orthogonalisation of G: the last of newton_schulz_steps (≈ UVᵀ for G = USVᵀ)."""
    return newton_schulz_steps(G, steps)[-1]


# ---------------------------------------------------------------------------------------------------------------
# Learning-rate schedules


def schedule(name: str, steps: int, lr: float, warmup: int = 0, floor: float = 0.0, decay_start: int | None = None,
             step_every: int | None = None, gamma: float = 0.1) -> np.ndarray:
    """The learning rate at steps 0 … steps − 1, shape (steps,). Every schedule starts with a linear warmup,
    lr·(t + 1)/(warmup + 1) for t < warmup (nanoGPT's get_lr), then:
    "constant": lr;
    "step": lr·gamma^⌊t / step_every⌋ (torch's StepLR; step_every defaults to steps // 3);
    "cosine": floor + ½(1 + cos(π·r))(lr − floor), r = (t − warmup)/(steps − 1 − warmup) from 0 to 1, so
      the last step is at `floor` and the midpoint at (lr + floor)/2 (nanoGPT's get_lr, decaying over the run);
    "wsd" (warmup–stable–decay): lr until decay_start (default: 80 % of the run), then linear to `floor` at
      the last step."""
    steps, warmup = int(steps), max(0, int(warmup))
    if name not in SCHEDULES:
        raise ValueError(f"unknown schedule {name!r}; one of {', '.join(SCHEDULES)}")
    t = np.arange(steps, dtype=np.float64)
    if name == "constant":
        out = np.full(steps, float(lr))
    elif name == "step":
        every = max(1, int(step_every) if step_every else steps // 3)
        out = lr * gamma ** np.floor(t / every)
    elif name == "cosine":
        r = np.clip((t - warmup) / max(1, steps - 1 - warmup), 0.0, 1.0)
        out = floor + 0.5 * (1.0 + np.cos(np.pi * r)) * (lr - floor)
    else:
        start = int(0.8 * steps) if decay_start is None else int(decay_start)
        start = max(start, warmup)
        r = np.clip((t - start) / max(1, steps - 1 - start), 0.0, 1.0)
        out = lr + r * (floor - lr)
    ramp = t < warmup
    out[ramp] = lr * (t[ramp] + 1.0) / (warmup + 1.0)
    return out


def schedule_args(steps: int, warmup: int, floor: float, decay: float) -> dict[str, dict]:
    """`schedule`'s arguments of each schedule from one set of settings: warmup (held below `steps`) and floor for
    the cosine and WSD, and WSD's decay starting at the share `decay` of the steps; constant and step as they are."""
    warmup = min(int(warmup), int(steps) - 1)
    return {"constant": {}, "step": {}, "cosine": {"warmup": warmup, "floor": floor},
            "wsd": {"warmup": warmup, "floor": floor, "decay_start": int(decay * steps)}}


def low_rank_matrix(rows: int, cols: int, rank: int, noise: float, seed: int = 0) -> np.ndarray:
    """A stand-in for a momentum matrix, shape (rows, cols): a sum of `rank` outer products u vᵀ with standard
    normal u, v, their sizes 1, ½, ⅓, … (a gradient's few dominant directions), plus N(0, noise²) entries."""
    if min(rows, cols, rank) < 1 or noise < 0:
        raise ValueError(f"rows, cols, rank must be ≥ 1 and noise ≥ 0, got {rows}, {cols}, {rank}, {noise}")
    rng = np.random.default_rng(seed)
    u, v = rng.standard_normal((rows, rank)), rng.standard_normal((rank, cols))
    return (u / np.arange(1, rank + 1)) @ v + noise * rng.standard_normal((rows, cols))


def ns_spectrum(G: np.ndarray, steps: int = NS_STEPS) -> tuple[np.ndarray, np.ndarray]:
    """For each Newton–Schulz iterate X₀ … X_steps of G: its singular values, shape (steps + 1, min(G.shape)),
    largest first, and its distance from orthogonal ‖XXᵀ − I‖_F (XᵀX for a tall G: the Gram matrix of the
    shorter side, which is I when every singular value is 1), shape (steps + 1,)."""
    xs = newton_schulz_steps(G, steps)
    sv = np.array([np.linalg.svd(x, compute_uv=False) for x in xs])
    gram = [x @ x.T if x.shape[0] <= x.shape[1] else x.T @ x for x in xs]
    err = np.array([np.linalg.norm(g - np.eye(len(g))) for g in gram])
    return sv, err


# ---------------------------------------------------------------------------------------------------------------
# Adam's L2 against AdamW's decoupled weight decay


def scaled_quadratic(scale: float) -> Surface:
    """½(s²(x − 1)² + (y − 1)²/s²): a linear model's loss with two features of scales s and 1/s (s = scale). The
    curvatures are s² and 1/s², so at the same distance from the minimum the gradient along x is s⁴ times the one
    along y (gradient_ratio); minimum (1, 1), start (0, 0)."""
    if not scale >= 1.0:
        raise ValueError(f"scale must be ≥ 1, got {scale}")
    a, b = scale * scale, 1.0 / (scale * scale)

    def f(x, y):
        return 0.5 * (a * (x - 1.0) ** 2 + b * (y - 1.0) ** 2)

    def df(x, y):
        return a * (x - 1.0), b * (y - 1.0)

    return Surface("scaled", f, df, ((-0.5, 1.5), (-0.5, 1.5)), (0.0, 0.0), (1.0, 1.0))


def gradient_ratio(surf: Surface) -> float:
    """|∂f/∂x| / |∂f/∂y| at the start, a point as far from the minimum along x as along y (scaled_quadratic: s⁴)."""
    gx, gy = surf.grad(np.asarray(surf.start, dtype=np.float64))
    return abs(float(gx)) / abs(float(gy))


def decay_parts(optimizer: str, records: list[dict], lr: float, weight_decay: float, beta1: float = 0.9,
                eps: float = 1e-8) -> np.ndarray:
    """The part of each step that the weight decay term made, per parameter, shape (steps, 2): how far it moved
    each weight towards 0, from a `trace` of "adam" (L2) or "adamw".

    AdamW: η·λ·θ_{t−1}, the decoupled shrink. Adam + L2: λθ enters the gradient, so (m being linear in the
    gradients) m_t splits exactly into the gradients' part and the decay's part m^λ_t = β₁m^λ_{t−1} + (1 −
    β₁)λθ_{t−1}; the decay's share of the step is η·m̂^λ_t/(√v̂_t + ε) with the run's own v̂_t (the L2 term
    included)."""
    if optimizer not in ("adam", "adamw"):
        raise ValueError(f"decay_parts is for adam or adamw, got {optimizer!r}")
    out, m = np.zeros((len(records), 2)), np.zeros(2)
    for i, r in enumerate(records):
        if optimizer == "adamw":
            out[i] = lr * weight_decay * r["theta"]
            continue
        m = beta1 * m + (1.0 - beta1) * weight_decay * r["theta"]
        out[i] = lr * (m / (1.0 - beta1 ** r["step"])) / (np.sqrt(r["state"]["v_hat"]) + eps)
    return out


def effective_decay(records: list[dict], parts: np.ndarray) -> np.ndarray:
    """Per parameter, the average shrink per step as a share of the weight: Σ_t |decay part_t| / Σ_t |θ_{t−1}|,
    shape (2,). AdamW: exactly η·λ for every parameter; Adam + L2: about η·λ/√v̂, small where gradients are large."""
    theta = np.abs(np.array([r["theta"] for r in records]))
    return np.abs(parts).sum(axis=0) / np.maximum(theta.sum(axis=0), 1e-300)


def decay_comparison(scale: float, lr: float, weight_decay: float, steps: int) -> dict[str, dict]:
    """Adam (L2 added to the gradient) and AdamW (decoupled), same η, λ and betas, on scaled_quadratic(scale)
    from (0, 0): per optimiser "path" (steps + 1, 2), "parts" (steps, 2) from decay_parts and "effective" (2,)."""
    surf, out = scaled_quadratic(scale), {}
    for opt in ("adam", "adamw"):
        rec = trace(opt, surf, None, steps, lr=lr, weight_decay=weight_decay)
        parts = decay_parts(opt, rec, lr, weight_decay)
        p = np.array([surf.start] + [r["theta_new"] for r in rec], dtype=np.float64)
        out[opt] = {"path": p, "parts": parts, "effective": effective_decay(rec, parts)}
    return out
