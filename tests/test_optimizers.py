"""The optimisers lab engine (sim/optim/optimizers.py), each part against an independent reference: torch.optim's
optimisers stepped on the same surfaces written in torch (gradients by autograd), Lion's published rule and
Muon's Newton–Schulz written out here, torch.optim.Muon's own orthogonalisation, the singular values by torch's SVD,
the momentum theory by simulating the iteration, schedules by hand, gradients by central differences, and one
Adam + L2 step and one AdamW step by hand."""
import math
import warnings

import numpy as np
import pytest
import torch

from sim.optim import optimizers as O

STEPS = 100


# ---------------------------------------------------------------------------------------------------------------
# Update rules against torch.optim


def torch_quadratic(kappa, angle):
    c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))

    def f(p):
        u, v = c * p[0] + s * p[1], -s * p[0] + c * p[1]
        return 0.5 * (u * u + kappa * v * v)

    return f


def torch_rosenbrock(p):
    return (1 - p[0]) ** 2 + 100 * (p[1] - p[0] ** 2) ** 2


def torch_optimizer(name, params, h):
    if name == "sgd":
        return torch.optim.SGD(params, lr=h["lr"], foreach=False)
    if name in ("momentum", "nesterov"):
        return torch.optim.SGD(params, lr=h["lr"], momentum=h["beta"], nesterov=name == "nesterov", foreach=False)
    if name == "adagrad":
        return torch.optim.Adagrad(params, lr=h["lr"], eps=h["eps"], foreach=False)
    if name == "rmsprop":
        return torch.optim.RMSprop(params, lr=h["lr"], alpha=h["alpha"], eps=h["eps"], foreach=False)
    cls = torch.optim.Adam if name == "adam" else torch.optim.AdamW
    return cls(params, lr=h["lr"], betas=(h["beta1"], h["beta2"]), eps=h["eps"], weight_decay=h["weight_decay"],
               foreach=False)


def torch_path(name, f, start, steps, h):
    p = torch.tensor(start, dtype=torch.float64, requires_grad=True)
    opt = torch_optimizer(name, [p], h)
    out = [p.detach().clone().numpy()]
    for _ in range(steps):
        opt.zero_grad()
        f(p).backward()
        opt.step()
        out.append(p.detach().clone().numpy())
    return np.array(out)


TORCH_RULES = ("sgd", "momentum", "nesterov", "adagrad", "rmsprop", "adam", "adamw")
# Rosenbrock from (−2, 2) has gradients ~1600: the plain rules need small steps there
ROSENBROCK_HYPER = {"sgd": {"lr": 2e-4}, "momentum": {"lr": 1e-4, "beta": 0.9},
                    "nesterov": {"lr": 1e-4, "beta": 0.8}, "adagrad": {"lr": 0.2}, "rmsprop": {"lr": 0.01},
                    "adam": {"lr": 0.05, "weight_decay": 0.1}, "adamw": {"lr": 0.05, "weight_decay": 0.1}}


@pytest.mark.parametrize("name", TORCH_RULES)
@pytest.mark.parametrize("case", ["quadratic", "quadratic_rotated", "rosenbrock"])
def test_update_rule_matches_torch_optim_step_by_step(name, case):
    if case == "rosenbrock":
        surf, f, hyper = O.surface("rosenbrock"), torch_rosenbrock, ROSENBROCK_HYPER[name]
    else:
        angle = 30.0 if case == "quadratic_rotated" else 0.0
        surf, f = O.surface("quadratic", kappa=10.0, angle=angle), torch_quadratic(10.0, angle)
        hyper = {"weight_decay": 0.05} if name == "adam" else {}  # Adam's L2 term exercised on the quadratic too
    h = O.hyper_parameters(name, **hyper)
    ours = O.path(name, surf, surf.start, STEPS, **hyper)
    ref = torch_path(name, f, surf.start, STEPS, h)
    assert O.diverged_at(ours) is None and np.isfinite(ref).all()
    assert np.abs(ref[-1] - ref[0]).max() > 0.1  # the path went somewhere
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-6)


def lion_reference(grad, start, steps, lr, beta1, beta2, weight_decay):
    """Lion (Chen et al. 2023, Algorithm 2): c = β₁m + (1−β₁)g; θ ← θ − η(sign(c) + λθ); m ← β₂m + (1−β₂)g."""
    theta, m = np.array(start, dtype=np.float64), np.zeros(2)
    out = [theta.copy()]
    for _ in range(steps):
        g = grad(theta)
        c = beta1 * m + (1 - beta1) * g
        theta = theta - lr * (np.sign(c) + weight_decay * theta)
        m = beta2 * m + (1 - beta2) * g
        out.append(theta.copy())
    return np.array(out)


@pytest.mark.parametrize("surf_name, hyper", [("quadratic", {}), ("quadratic", {"weight_decay": 0.1}),
                                               ("rosenbrock", {"lr": 0.01, "weight_decay": 0.05})])
def test_lion_matches_its_published_rule(surf_name, hyper):
    surf = O.surface(surf_name, angle=20.0)
    h = O.hyper_parameters("lion", **hyper)
    ref = lion_reference(surf.grad, surf.start, STEPS, h["lr"], h["beta1"], h["beta2"], h["weight_decay"])
    np.testing.assert_allclose(O.path("lion", surf, surf.start, STEPS, **hyper), ref, rtol=0, atol=1e-9)


def test_gradient_noise_is_drawn_from_the_seed():
    surf = O.surface("ravine", noise=0.5)
    z = np.random.default_rng(7).standard_normal((50, 2))
    theta, ref = np.array(surf.start), [np.array(surf.start)]
    for t in range(50):
        theta = theta - 0.01 * (surf.grad(theta) + 0.5 * z[t])
        ref.append(theta)
    p = O.path("sgd", surf, surf.start, 50, seed=7, lr=0.01)
    np.testing.assert_allclose(p, np.array(ref), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(p, O.path("sgd", surf, surf.start, 50, seed=7, lr=0.01))
    assert not np.allclose(p, O.path("sgd", surf, surf.start, 50, seed=8, lr=0.01))
    assert O.SURFACES["ravine"].noise == 0.5
    assert all(O.SURFACES[n].noise == 0.0 for n in ("quadratic", "rosenbrock", "rastrigin", "saddle"))


@pytest.mark.parametrize("name", list(O.OPTIMIZERS))
def test_defaults_reach_the_quadratic_minimum_in_200_steps(name):
    surf = O.SURFACES["quadratic"]
    p = O.path(name, surf, surf.start, 200)
    assert p.shape == (201, 2) and tuple(p[0]) == surf.start
    assert np.linalg.norm(p[-1] - np.array(surf.minimum)) < 0.05
    assert np.linalg.norm(p[20] - np.array(surf.minimum)) > 0.01  # visibly, not in one jump


@pytest.mark.parametrize("name", list(O.OPTIMIZERS))
def test_trace_agrees_with_path(name):
    surf = O.SURFACES["ravine"]
    p = O.path(name, surf, surf.start, 30, seed=3)
    tr = O.trace(name, surf, surf.start, 30, seed=3)
    assert len(tr) == 30 and [r["step"] for r in tr] == list(range(1, 31))
    for t, r in enumerate(tr, start=1):
        np.testing.assert_array_equal(r["theta"], p[t - 1])
        np.testing.assert_array_equal(r["theta_new"], p[t])
        np.testing.assert_allclose(r["update"], p[t] - p[t - 1], rtol=0, atol=1e-15)
        assert r["grad"].shape == (2,) and all(v.shape == (2,) for v in r["state"].values())
    if name == "adam":  # the formula's numbers: update = −η m̂ / (√v̂ + ε)
        r, h = tr[-1], O.OPTIMIZERS["adam"]
        s = r["state"]
        np.testing.assert_allclose(r["update"], -h["lr"] * s["m_hat"] / (np.sqrt(s["v_hat"]) + h["eps"]), atol=1e-12)


def test_unknown_names_raise_value_error():
    with pytest.raises(ValueError):
        O.path("adam", O.SURFACES["quadratic"], None, 5, momentum=0.9)
    with pytest.raises(ValueError):
        O.path("sgdx", O.SURFACES["quadratic"], None, 5)
    with pytest.raises(ValueError):
        O.surface("himmelblau")
    with pytest.raises(ValueError):
        O.schedule("linear", 10, 0.1)


def test_state_bytes_and_optimizer_names():
    assert list(O.OPTIMIZERS) == ["sgd", "momentum", "nesterov", "adagrad", "rmsprop", "adam", "adamw", "lion"]
    assert O.STATE_BYTES == {"sgd": 0, "momentum": 4, "nesterov": 4, "adagrad": 4, "rmsprop": 4, "adam": 8,
                             "adamw": 8, "lion": 4, "muon": 4}
    # the number of state vectors each rule keeps, times 4 bytes (Nesterov's d and Adam's m̂, v̂ are for display)
    kept = {"sgd": [], "momentum": ["buf"], "nesterov": ["buf"], "adagrad": ["sum"], "rmsprop": ["square_avg"],
            "adam": ["m", "v"], "adamw": ["m", "v"], "lion": ["m"]}
    for name, keys in kept.items():
        state = O.trace(name, O.SURFACES["quadratic"], None, 1)[0]["state"]
        assert set(keys) <= set(state) and O.STATE_BYTES[name] == 4 * len(keys)


# ---------------------------------------------------------------------------------------------------------------
# Divergence


@pytest.mark.parametrize("name", list(O.OPTIMIZERS))
@pytest.mark.parametrize("surf_name", ["quadratic", "rosenbrock", "rastrigin", "saddle", "ravine"])
def test_a_huge_learning_rate_gives_nan_rows_never_an_exception(name, surf_name):
    surf = O.SURFACES[surf_name]
    lr = 1e5 if name in ("sgd", "momentum", "nesterov") else 1e7  # normalised rules step ~lr per step
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = O.path(name, surf, surf.start, 50, lr=lr)
        tr = O.trace(name, surf, surf.start, 50, lr=lr)
    k = O.diverged_at(p)
    assert k is not None and 1 <= k <= 50
    assert np.isnan(p[k:]).all() and np.isfinite(p[:k]).all() and np.abs(p[:k]).max() <= 1e6
    assert len(tr) == k - 1


def test_gradient_descent_diverges_exactly_where_theory_says():
    surf = O.surface("quadratic", kappa=10.0)  # λ = 10 along y: |1 − 10 η| > 1 iff η > 0.2
    assert O.diverged_at(O.path("sgd", surf, None, 500, lr=0.199)) is None
    p = O.path("sgd", surf, None, 500, lr=0.21)  # |y_k| = 2 · 1.1^k passes 1e6 at k = ⌈log(5e5)/log 1.1⌉
    assert O.diverged_at(p) == math.ceil(math.log(5e5) / math.log(1.1))
    assert O.diverged_at(np.zeros((4, 2))) is None


# ---------------------------------------------------------------------------------------------------------------
# Surfaces


@pytest.mark.parametrize("surf", [*O.SURFACES.values(), O.surface("quadratic", kappa=25.0, angle=37.0)],
                         ids=lambda s: s.name)
def test_surface_gradient_matches_central_differences(surf):
    rng = np.random.default_rng(0)
    (x0, x1), (y0, y1) = surf.bounds
    pts = np.column_stack([rng.uniform(x0, x1, 20), rng.uniform(y0, y1, 20)])
    h = 1e-6
    for p in pts:
        fd = np.array([(surf.value(p + e) - surf.value(p - e)) / (2 * h) for e in np.eye(2) * h])
        g = surf.grad(p)
        assert g.shape == (2,)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-5 * max(1.0, np.abs(g).max()))


@pytest.mark.parametrize("name", list(O.SURFACES))
def test_surface_value_is_vectorised_and_minimum_is_stationary(name):
    surf = O.SURFACES[name]
    xs, ys, z = surf.grid(31)
    pts = np.stack(np.meshgrid(xs, ys), axis=-1)  # (31, 31, 2)
    v = surf.value(pts)
    assert v.shape == (31, 31) and isinstance(surf.value(pts[3, 4]), float)
    np.testing.assert_allclose(v, z, rtol=1e-12)
    assert v[3, 4] == surf.value(pts[3, 4])
    (x0, x1), (y0, y1) = surf.bounds
    assert x0 <= surf.start[0] <= x1 and y0 <= surf.start[1] <= y1
    if surf.minimum is not None:
        np.testing.assert_allclose(surf.grad(surf.minimum), 0.0, atol=1e-12)
        assert surf.value(surf.minimum) <= v.min() + 1e-12
    else:  # the saddle point
        np.testing.assert_allclose(surf.grad((0.0, 0.0)), 0.0, atol=1e-12)


@pytest.mark.parametrize("kappa, angle", [(10.0, 0.0), (50.0, 30.0), (4.0, -75.0)])
def test_quadratic_has_eigenvalues_1_and_kappa_along_the_rotated_axes(kappa, angle):
    surf = O.surface("quadratic", kappa=kappa, angle=angle)
    hess = np.column_stack([surf.grad(e) for e in np.eye(2)])  # the gradient is linear: H's columns
    np.testing.assert_allclose(np.linalg.eigvalsh(hess), [1.0, kappa], rtol=1e-12)
    t = math.radians(angle)
    u, v = np.array([math.cos(t), math.sin(t)]), np.array([-math.sin(t), math.cos(t)])
    assert surf.value(2 * u) == pytest.approx(0.5 * 4) and surf.value(2 * v) == pytest.approx(0.5 * kappa * 4)
    assert O.surface("rosenbrock").start == (-2.0, 2.0) and O.surface("rosenbrock").minimum == (1.0, 1.0)
    assert O.surface("rastrigin").value(np.zeros(2)) == 0.0


# ---------------------------------------------------------------------------------------------------------------
# Momentum theory, by simulating heavy ball on one eigen-direction


def simulate(alpha, beta, lam, steps=3000):
    """Heavy ball on f = ½λx² from x = 1 (v ← βv + λx; x ← x − αv); |x| over the run."""
    x, v, out = 1.0, 0.0, []
    for _ in range(steps):
        v = beta * v + lam * x
        x = x - alpha * v
        out.append(abs(x))
        if abs(x) > 1e100:
            break
    return np.array(out)


@pytest.mark.parametrize("beta", [0.0, 0.5, 0.9])
@pytest.mark.parametrize("lam", [1.0, 7.0])
def test_convergence_boundary_on_both_sides(beta, lam):
    edge = (2 + 2 * beta) / lam  # αλ = 2 + 2β
    inside, outside = edge * 0.99, edge * 1.01
    assert O.converges(inside, beta, lam) and not O.converges(outside, beta, lam)
    assert O.momentum_rate(inside, beta, lam) < 1 < O.momentum_rate(outside, beta, lam)
    assert simulate(inside, beta, lam)[-1] < 1e-3 and simulate(outside, beta, lam)[-1] > 1e3
    # the lower edge αλ = 0 and β's range
    assert not O.converges(0.0, beta, lam) and not O.converges(-0.1, beta, lam)
    assert O.converges(0.01 / lam, beta, lam)
    assert not O.converges(0.1 / lam, 1.0, lam) and not O.converges(0.1 / lam, -0.1, lam)


@pytest.mark.parametrize("alpha, beta, lam", [(0.1, 0.0, 1.0), (0.15, 0.0, 10.0), (0.05, 0.9, 1.0),
                                              (0.05, 0.3, 10.0), (0.3, 0.6, 3.0)])
def test_rate_is_the_simulated_decay(alpha, beta, lam):
    rate = O.momentum_rate(alpha, beta, lam)
    np.testing.assert_allclose(rate, max(abs(np.linalg.eigvals(O.iteration_matrix(alpha, beta, lam)))), rtol=1e-9)
    if beta == 0:
        assert rate == pytest.approx(abs(1 - alpha * lam))
    xs = simulate(alpha, beta, lam, 400)
    assert xs[399] <= rate ** 400 * 400 and (xs[399] / xs[199]) ** (1 / 200) == pytest.approx(rate, rel=0.05)


def test_engine_momentum_path_decays_at_the_theory_rate():
    surf = O.surface("quadratic", kappa=10.0)  # x feels λ = 1, y feels λ = 10
    alpha, beta = 0.03, 0.5  # overdamped along x: a clean geometric decay
    p = O.path("momentum", surf, (1.0, 0.0), 300, lr=alpha, beta=beta)
    assert (abs(p[300, 0]) / abs(p[150, 0])) ** (1 / 150) == pytest.approx(O.momentum_rate(alpha, beta, 1.0),
                                                                             rel=1e-6)


@pytest.mark.parametrize("alpha, lam", [(0.01, 1.0), (0.05, 10.0), (0.2, 1.0)])
def test_critical_damping_separates_real_from_complex_eigenvalues(alpha, lam):
    bc = O.critical_beta(alpha, lam)
    assert bc == pytest.approx((1 - math.sqrt(alpha * lam)) ** 2)
    above = np.linalg.eigvals(O.iteration_matrix(alpha, bc + 0.01, lam))
    below = np.linalg.eigvals(O.iteration_matrix(alpha, bc - 0.01, lam))
    assert np.abs(above.imag).min() > 1e-6 and np.abs(below.imag).max() == 0.0
    assert O.momentum_rate(alpha, bc + 0.01, lam) == pytest.approx(math.sqrt(bc + 0.01))  # spiral: rate √β
    assert O.momentum_rate(alpha, bc, lam) == pytest.approx(math.sqrt(bc), rel=1e-6)
    # underdamped: the simulated x changes sign (spirals); overdamped: it never does
    xs_above, xs_below = [], []
    for beta, xs in ((bc + 0.05, xs_above), (max(bc - 0.05, 0.0), xs_below)):
        x, v = 1.0, 0.0
        for _ in range(300):
            v = beta * v + lam * x
            x = x - alpha * v
            xs.append(x)
    assert min(xs_above) < 0 < max(xs_above) and min(xs_below) > 0


@pytest.mark.parametrize("l1, ln", [(1.0, 10.0), (0.5, 100.0), (2.0, 2.5)])
def test_optimal_momentum_gives_the_stated_rate(l1, ln):
    alpha, beta, rate = O.optimal_momentum(l1, ln)
    k = ln / l1
    assert alpha == pytest.approx((2 / (math.sqrt(l1) + math.sqrt(ln))) ** 2)
    assert beta == pytest.approx(((math.sqrt(ln) - math.sqrt(l1)) / (math.sqrt(ln) + math.sqrt(l1))) ** 2)
    assert rate == pytest.approx((math.sqrt(k) - 1) / (math.sqrt(k) + 1))
    for lam in (l1, ln, math.sqrt(l1 * ln)):  # every eigenvalue in [l1, ln] converges at the same rate
        assert O.momentum_rate(alpha, beta, lam) == pytest.approx(rate, rel=1e-6)
        n = min(300, int(-100 / math.log10(rate)))  # to ~1e-100, short of underflow
        xs = simulate(alpha, beta, lam, n)  # at the ends a double root: |x_k| ~ k·rate^k
        assert (xs[n - 1] / xs[n // 2 - 1]) ** (1 / (n - n // 2)) == pytest.approx(rate, rel=0.03)
    # no (α, β) on a fine grid around it does better on {l1, ln}
    grid = O.phase_grid(l1, ln, np.linspace(0.5 * alpha, 1.5 * alpha, 101), np.linspace(0, 0.999, 101))
    assert grid.shape == (101, 101) and grid.min() >= rate - 1e-9
    assert O.gd_optimal_rate(l1, ln) > rate or l1 == ln


@pytest.mark.parametrize("l1, ln", [(1.0, 10.0), (0.5, 100.0)])
def test_gradient_descent_optimal_rate(l1, ln):
    k = ln / l1
    assert O.gd_optimal_rate(l1, ln) == pytest.approx((k - 1) / (k + 1))
    alphas = np.linspace(1e-4, 2.5 / ln, 20001)
    worst = O.phase_grid(l1, ln, alphas, [0.0])[0]
    assert worst.min() == pytest.approx(O.gd_optimal_rate(l1, ln), rel=1e-3)
    assert alphas[worst.argmin()] == pytest.approx(2 / (l1 + ln), rel=1e-3)
    np.testing.assert_allclose(worst, np.maximum(abs(1 - alphas * l1), abs(1 - alphas * ln)), rtol=1e-12)


def test_phase_grid_marks_divergence():
    alphas, betas = np.linspace(0.001, 0.5, 40), np.linspace(0.0, 0.99, 30)
    grid = O.phase_grid(1.0, 10.0, alphas, betas)
    assert grid.shape == (30, 40)
    for i, b in enumerate(betas):
        for j, a in enumerate(alphas):
            ok = O.converges(a, b, 1.0) and O.converges(a, b, 10.0)
            assert (grid[i, j] < 1) == ok
            assert grid[i, j] == pytest.approx(max(O.momentum_rate(a, b, 1.0), O.momentum_rate(a, b, 10.0)))


# ---------------------------------------------------------------------------------------------------------------
# Muon's Newton–Schulz


def newton_schulz_reference(G, steps=5):
    """Keller Jordan's zeropower_via_newtonschulz5, written out in float64."""
    a, b, c = 3.4445, -4.7750, 2.0315
    X = G.astype(np.float64)
    if G.shape[0] > G.shape[1]:
        X = X.T
    X = X / max(np.linalg.norm(X), 1e-7)
    for _ in range(steps):
        A = X @ X.T
        B = b * A + c * A @ A
        X = a * X + B @ X
    return X.T if G.shape[0] > G.shape[1] else X


SHAPES = [(4, 16), (16, 4), (32, 64), (64, 32), (8, 200)]


@pytest.mark.parametrize("shape", SHAPES)
def test_newton_schulz_matches_the_formula_and_torch_muon(shape):
    G = np.random.default_rng(sum(shape)).standard_normal(shape)
    ours = O.newton_schulz(G)
    assert ours.shape == shape
    np.testing.assert_allclose(ours, newton_schulz_reference(G), rtol=0, atol=1e-12)
    from torch.optim._muon import _zeropower_via_newtonschulz  # private in torch 2.13; it works in bfloat16

    ref = _zeropower_via_newtonschulz(torch.tensor(G), O.NS_COEFFICIENTS, 5, 1e-7).double().numpy()
    assert np.abs(ours - ref).max() < 0.05 * np.abs(ours).max()


@pytest.mark.parametrize("shape", SHAPES)
def test_newton_schulz_singular_values_near_one(shape):
    G = np.random.default_rng(sum(shape) + 1).standard_normal(shape)
    sv = np.linalg.svd(O.newton_schulz(G), compute_uv=False)
    assert sv.min() >= 0.6 and sv.max() <= 1.3
    steps = O.newton_schulz_steps(G, 5)
    assert len(steps) == 6 and all(s.shape == shape for s in steps)
    np.testing.assert_allclose(steps[0], G / np.linalg.norm(G))
    np.testing.assert_array_equal(steps[-1], O.newton_schulz(G))
    # the directions are kept: NS(G) ≈ U Vᵀ; it is close to the exact orthogonal factor
    u, _, vt = np.linalg.svd(G, full_matrices=False)
    assert np.linalg.norm(O.newton_schulz(G) - u @ vt) / np.linalg.norm(u @ vt) < 0.35


def test_muon_path_runs_and_converges_on_the_quadratic():
    p = O.path("muon", O.SURFACES["quadratic"], None, 300)
    assert O.diverged_at(p) is None and np.linalg.norm(p[-1]) < 0.1


# ---------------------------------------------------------------------------------------------------------------
# Schedules


def test_constant_and_warmup():
    np.testing.assert_allclose(O.schedule("constant", 5, 0.1), [0.1] * 5)
    s = O.schedule("constant", 10, 0.4, warmup=3)  # nanoGPT: lr (t + 1)/(warmup + 1)
    np.testing.assert_allclose(s[:4], [0.1, 0.2, 0.3, 0.4])
    np.testing.assert_allclose(s[3:], 0.4)


def test_cosine_midpoint_floor_and_warmup():
    s = O.schedule("cosine", 101, 1.0, floor=0.1)
    assert s[0] == pytest.approx(1.0) and s[50] == pytest.approx(0.55) and s[-1] == pytest.approx(0.1)
    assert np.all(np.diff(s) <= 1e-15)
    s = O.schedule("cosine", 111, 0.6, warmup=10, floor=0.0)  # decay over t = 10 … 110
    np.testing.assert_allclose(s[:10], 0.6 * np.arange(1, 11) / 11)
    assert s[10] == pytest.approx(0.6) and s[60] == pytest.approx(0.3) and s[-1] == pytest.approx(0.0, abs=1e-15)
    assert s[35] == pytest.approx(0.3 * (1 + math.cos(math.pi / 4)))


def test_step_drops():
    s = O.schedule("step", 30, 1.0, step_every=10, gamma=0.5)
    np.testing.assert_allclose(s, [1.0] * 10 + [0.5] * 10 + [0.25] * 10)
    np.testing.assert_allclose(O.schedule("step", 9, 0.3), [0.3] * 3 + [0.03] * 3 + [0.003] * 3)


def test_wsd_warmup_stable_decay():
    s = O.schedule("wsd", 21, 1.0, warmup=4, floor=0.2, decay_start=16)
    np.testing.assert_allclose(s[:4], [0.2, 0.4, 0.6, 0.8])
    np.testing.assert_allclose(s[4:17], 1.0)
    np.testing.assert_allclose(s[16:], [1.0, 0.8, 0.6, 0.4, 0.2])
    d = O.schedule("wsd", 100, 1.0)  # decay over the last 20 %
    assert d[80] == 1.0 and d[-1] == pytest.approx(0.0) and d[90] < 1.0


# ---------------------------------------------------------------------------------------------------------------
# Muon's matrix view: the singular values through Newton–Schulz, and the training comparison


def test_low_rank_matrix_has_the_rank_asked_and_is_seeded():
    G = O.low_rank_matrix(16, 32, 3, 0.0, seed=4)
    assert G.shape == (16, 32) and np.linalg.matrix_rank(G) == 3
    np.testing.assert_array_equal(O.low_rank_matrix(16, 32, 3, 0.1, 4), O.low_rank_matrix(16, 32, 3, 0.1, 4))
    assert not np.array_equal(O.low_rank_matrix(16, 32, 3, 0.1, 4), O.low_rank_matrix(16, 32, 3, 0.1, 5))
    with pytest.raises(ValueError):
        O.low_rank_matrix(0, 4, 1, 0.1)


@pytest.mark.parametrize("shape", [(16, 32), (32, 16), (24, 48), (4, 64)])
def test_ns_spectrum_reaches_one_and_the_error_falls(shape):
    G = O.low_rank_matrix(*shape, 2, 0.05, seed=0)  # the section's default matrix, and its transpose and others
    sv, err = O.ns_spectrum(G, 5)
    assert sv.shape == (6, min(shape)) and err.shape == (6,)
    # independently: the iterates written out above, torch's SVD and the Gram matrix of the shorter side
    X = G.T if shape[0] > shape[1] else G
    X = X / np.linalg.norm(X)
    for k in range(6):
        Xk = newton_schulz_reference(G, k)
        Xk = Xk.T if shape[0] > shape[1] else Xk
        np.testing.assert_allclose(sv[k], torch.linalg.svdvals(torch.tensor(Xk)).numpy(), rtol=1e-9, atol=1e-12)
        assert err[k] == pytest.approx(np.linalg.norm(Xk @ Xk.T - np.eye(len(Xk))), rel=1e-9)
    assert sv[0].max() / sv[0].min() > 20  # a few strong directions: a wide spread before
    assert sv[-1].min() >= 0.6 and sv[-1].max() <= 1.3  # ~1 after 5 steps
    assert err[-1] < err[0] / 2 and sv[-1].max() / sv[-1].min() < 2


def test_tiny_singular_values_stay_below_one_after_five_steps():
    """What the page warns about: a rank-2 matrix without noise has σ ≈ 0 directions, which 5 steps cannot lift."""
    sv, _ = O.ns_spectrum(O.low_rank_matrix(16, 32, 2, 0.0, seed=0), 5)
    assert sv[-1][:2].min() > 0.6 and sv[-1][2:].max() < 1e-6


def test_muon_training_comparison_is_seeded_and_both_losses_fall():
    from sim.optim.muon import compare

    a, b = compare("moons", seed=3, steps=60), compare("moons", seed=3, steps=60)
    for run in ("adamw", "muon"):
        np.testing.assert_array_equal(a[run], b[run])  # deterministic for a seed
        assert a[run].shape == (61,) and np.isfinite(a[run]).all()
        assert a[run][-1] < 0.5 * a[run][0]
    assert a["adamw"][0] == a["muon"][0]  # the same data and initial weights
    assert not np.array_equal(a["adamw"], a["muon"])
    assert not np.array_equal(compare("moons", seed=4, steps=5)["muon"], a["muon"][:6])


def test_torch_muon_takes_only_matrices_as_the_comparison_assumes():
    with pytest.raises(ValueError):
        torch.optim.Muon([torch.zeros(4, requires_grad=True)])
    torch.optim.Muon([torch.zeros(4, 4, requires_grad=True)])


# ---------------------------------------------------------------------------------------------------------------
# Adam + L2 against AdamW's decoupled weight decay


def test_one_adam_l2_step_and_one_adamw_step_by_hand():
    surf, lr, lam, eps = O.scaled_quadratic(10.0), 0.01, 0.1, 1e-8
    th = np.array([0.5, 2.0])
    g = np.array([100.0 * (0.5 - 1.0), 0.01 * (2.0 - 1.0)])
    # Adam + L2, first step: g' = g + λθ; m̂ = g', v̂ = g'² after bias correction; θ − η g'/(|g'| + ε)
    gl = g + lam * th
    rec = O.trace("adam", surf, th, 1, lr=lr, weight_decay=lam)[0]
    np.testing.assert_allclose(rec["theta_new"], th - lr * gl / (np.abs(gl) + eps), rtol=1e-14)
    np.testing.assert_allclose(rec["state"]["v_hat"], gl * gl, rtol=1e-12)
    # AdamW, first step: θ(1 − ηλ) − η g/(|g| + ε), g without the decay
    rec = O.trace("adamw", surf, th, 1, lr=lr, weight_decay=lam)[0]
    np.testing.assert_allclose(rec["theta_new"], th * (1 - lr * lam) - lr * g / (np.abs(g) + eps), rtol=1e-14)


@pytest.mark.parametrize("name", ["adam", "adamw"])
def test_scaled_quadratic_runs_match_torch(name):
    h = {**O.OPTIMIZERS[name], "lr": 0.01, "weight_decay": 0.1}

    def f(p):
        return 0.5 * (100.0 * (p[0] - 1) ** 2 + 0.01 * (p[1] - 1) ** 2)

    ours = O.path(name, O.scaled_quadratic(10.0), None, 200, **h)
    np.testing.assert_allclose(ours, torch_path(name, f, [0.0, 0.0], 200, h), rtol=1e-9, atol=1e-12)


def test_decay_parts_split_the_adam_step_exactly():
    surf, lr, lam, b1, eps = O.scaled_quadratic(10.0), 0.01, 0.1, 0.9, 1e-8
    rec = O.trace("adam", surf, None, 300, lr=lr, weight_decay=lam)
    parts = O.decay_parts("adam", rec, lr, lam)
    m = np.zeros(2)
    for r, d in zip(rec, parts, strict=True):  # the gradients' own part, from the trace's gradient (L2 not in it)
        m = b1 * m + (1 - b1) * r["grad"]
        own = lr * m / (1 - b1 ** r["step"]) / (np.sqrt(r["state"]["v_hat"]) + eps)
        np.testing.assert_allclose(-(own + d), r["update"], rtol=1e-9, atol=1e-15)
    rec = O.trace("adamw", surf, None, 50, lr=lr, weight_decay=lam)
    np.testing.assert_allclose(O.decay_parts("adamw", rec, lr, lam), lr * lam * np.array([r["theta"] for r in rec]))
    with pytest.raises(ValueError):
        O.decay_parts("sgd", rec, lr, lam)


def test_adam_l2_decays_unevenly_and_adamw_evenly():
    out = O.decay_comparison(10.0, 0.01, 0.1, 1000)  # the section's default
    a, w = out["adam"]["effective"], out["adamw"]["effective"]
    assert a[1] / a[0] > 100  # θ₂ (small gradients) decayed far more than θ₁ (large gradients)
    assert a[0] < 0.1 * 0.01 * 0.1  # θ₁: under a tenth of ηλ
    np.testing.assert_allclose(w, [0.01 * 0.1] * 2, rtol=1e-12)  # AdamW: ηλ for both, ratio 1
    pa, pw = out["adam"]["path"], out["adamw"]["path"]
    assert pa.shape == (1001, 2) and pa[-1][0] > 0.99 and pa[-1][1] < 0.2  # Adam + L2: θ₂ pulled far down
    assert abs(pw[-1][0] - pw[-1][1]) < 1e-3  # AdamW: both shrink alike
    same = O.decay_comparison(1.0, 0.01, 0.1, 500)["adam"]["effective"]
    assert same[0] == pytest.approx(same[1])  # s = 1: no difference


def test_stable_lr_keeps_a_default_that_holds_and_lowers_one_that_blows_up():
    from labs.optimizers.schema import LRS

    quad, rosen = O.SURFACES["quadratic"], O.SURFACES["rosenbrock"]
    assert O.stable_lr("sgd", quad, quad.start, 150, LRS) == O.OPTIMIZERS["sgd"]["lr"]
    assert O.diverged_at(O.path("sgd", rosen, rosen.start, 150)) is not None  # the quadratic's default blows up here
    lr = O.stable_lr("sgd", rosen, rosen.start, 150, LRS)
    assert lr < O.OPTIMIZERS["sgd"]["lr"] and O.diverged_at(O.path("sgd", rosen, rosen.start, 150, lr=lr)) is None
    bigger = min(c for c in LRS if c > lr)  # the next choice up does diverge: the largest that holds was taken
    assert O.diverged_at(O.path("sgd", rosen, rosen.start, 150, lr=bigger)) is not None
