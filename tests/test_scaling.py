"""Scaling laws: the compute-optimal split against its closed forms, C = 6ND, the inference-aware optimum against a
brute-force search, the IsoFLOP minimum, and the loss-surface fit recovering known parameters."""
import math

import numpy as np
import pytest

from sim.language.scaling import (
    FITS,
    LossFit,
    article_rule,
    compute_optimal,
    fit_loss_surface,
    inference_optimal,
    isoflop_frontier,
    isoflop_minimum,
    kaplan_loss,
)


@pytest.mark.parametrize("C", [1e18, 5.76e23, 1e26])
@pytest.mark.parametrize("fit", ["rule20", "hoffmann", "epoch"])
def test_budget_is_spent(C, fit):
    N, D = compute_optimal(C, fit)
    assert 6 * N * D == pytest.approx(C, rel=1e-12)


def test_rule20_closed_form():
    N, D = compute_optimal(1.2e21, "rule20")
    assert N == pytest.approx(math.sqrt(1.2e21 / 120)) and D == pytest.approx(20 * N)


@pytest.mark.parametrize("fit", ["hoffmann", "epoch"])
def test_fit_optimum_is_the_minimum_along_the_budget(fit):
    """The closed form against a direct search of L(N, C/6N) over N."""
    C, f = 1e22, FITS[fit]
    N, _ = compute_optimal(C, fit)
    G = (f.alpha * f.A / (f.beta * f.B)) ** (1 / (f.alpha + f.beta))
    assert N == pytest.approx(G * (C / 6) ** (f.beta / (f.alpha + f.beta)))
    grid = np.logspace(6, 14, 200001)
    best = grid[np.argmin(f.loss(grid, C / (6 * grid)))]
    assert best == pytest.approx(N, rel=1e-3)


def test_published_numbers():
    assert (FITS["hoffmann"].E, FITS["hoffmann"].alpha, FITS["epoch"].B) == (1.69, 0.34, 2085.43)
    # Chinchilla's own budget (70B × 1.4T): the 2024 refit puts the optimum near 70B, 20 tokens per parameter
    N, D = compute_optimal(6 * 70e9 * 1.4e12, "epoch")
    assert 50e9 < N < 90e9 and 15 < D / N < 30
    assert kaplan_loss(8.8e13) == pytest.approx(1.0) and kaplan_loss(1e9) == pytest.approx((8.8e4) ** 0.076)


def test_article_rule_spends_twenty_times_the_budget():
    r = article_rule(1e21)
    assert r["N"] == pytest.approx(math.sqrt(1e21 / 6)) and r["spent"] == pytest.approx(20 * 1e21)
    assert r["D_if_budget_kept"] == pytest.approx(r["N"])  # N = √(C/6) keeps C only with 1 token per parameter


def test_inference_aware_optimum_against_brute_force():
    C, tokens, f = 1e23, 1e13, FITS["hoffmann"]
    r = inference_optimal(C, "hoffmann", tokens)
    target = f.loss(*compute_optimal(C, "hoffmann"))
    assert f.loss(r["N"], r["D"]) == pytest.approx(target, rel=1e-9)
    grid = np.logspace(8, 11.5, 100001)
    gap = target - f.E - f.A / grid ** f.alpha
    ok = gap > 0
    D = (f.B / gap[ok]) ** (1 / f.beta)
    total = 6 * grid[ok] * D + 2 * grid[ok] * tokens
    assert r["total"] == pytest.approx(total.min(), rel=1e-6)
    assert r["N"] < r["N_chinchilla"] and r["total"] <= r["total_chinchilla"]
    assert inference_optimal(C, "hoffmann", 0.0)["N"] == pytest.approx(r["N_chinchilla"], rel=1e-3)


def test_isoflop_minimum_of_a_parabola():
    N = np.logspace(3, 6, 7)
    L = 2.0 + 0.1 * (np.log(N) - math.log(3e4)) ** 2
    n, loss = isoflop_minimum(N, L)
    assert n == pytest.approx(3e4, rel=1e-6) and loss == pytest.approx(2.0)
    assert isoflop_minimum(N[:2], L[:2]) is None
    assert isoflop_minimum(N[::-1], L[::-1])[0] == pytest.approx(3e4, rel=1e-6)  # any order
    assert isoflop_minimum(N, np.arange(7.0)) == (pytest.approx(N[0]), 0.0)  # the best run at an end


def test_isoflop_frontier_keeps_each_minimum_with_its_budget():
    """A budget whose runs mostly diverged (NaN loss) has no minimum, and the later budgets keep their own."""
    N = np.logspace(3, 6, 5)
    runs = [{"budget": C, "params": n, "loss": 2.0 + 0.1 * (math.log(n) - math.log(best)) ** 2}
            for C, best in ((1e9, 3e3), (3e9, 3e4), (1e10, 3e5)) for n in N]
    for r in runs[:3]:
        r["loss"] = math.nan  # the smallest budget: 2 finite runs left
    frontier = isoflop_frontier(runs)
    assert list(frontier) == [3e9, 1e10]
    assert frontier[3e9][0] == pytest.approx(3e4, rel=1e-6) and frontier[1e10][0] == pytest.approx(3e5, rel=1e-6)


def test_fit_recovers_known_parameters():
    true = LossFit(E=0.6, A=40.0, B=120.0, alpha=0.45, beta=0.35)
    rng = np.random.default_rng(0)
    pts = [(N, D, true.loss(N, D) * math.exp(rng.normal(0, 0.001)))
           for N in np.logspace(3, 6, 5) for D in np.logspace(4, 7, 5)]
    got = fit_loss_surface(pts)
    assert got.E == pytest.approx(true.E, rel=0.05)
    assert got.alpha == pytest.approx(true.alpha, rel=0.05) and got.beta == pytest.approx(true.beta, rel=0.05)
    N, D = np.logspace(3, 6, 9), np.logspace(4, 7, 9)
    assert np.allclose(got.loss(N, D), true.loss(N, D), rtol=0.01)


def test_fit_refuses_bad_points():
    with pytest.raises(ValueError):
        fit_loss_surface([(1, 2, 3)])
    with pytest.raises(ValueError):
        fit_loss_surface([(1, 2, -3)] * 6)


def test_fit_with_e_held_recovers_the_rest():
    """Runs far above the floor (the lab's tiny models): with E held at its true value, A, α, B, β come back."""
    true = LossFit(E=0.32, A=30.0, B=60.0, alpha=0.4, beta=0.3)
    rng = np.random.default_rng(1)
    pts = [(N, D, true.loss(N, D) * math.exp(rng.normal(0, 0.002)))
           for N in np.logspace(3, 5, 5) for D in np.logspace(4, 6, 5)]
    held = fit_loss_surface(pts, E=true.E)
    assert held.E == true.E
    assert held.alpha == pytest.approx(true.alpha, rel=0.05) and held.beta == pytest.approx(true.beta, rel=0.05)
    assert held.A == pytest.approx(true.A, rel=0.2) and held.B == pytest.approx(true.B, rel=0.2)
    free = fit_loss_surface(pts)
    N, D = np.logspace(3, 5, 7), np.logspace(4, 6, 7)
    assert np.allclose(free.loss(N, D), true.loss(N, D), rtol=0.02)  # both describe the runs ...
    assert np.allclose(held.loss(N, D), true.loss(N, D), rtol=0.02)
    with pytest.raises(ValueError):
        fit_loss_surface(pts, E=0.0)
