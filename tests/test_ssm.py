"""sim.ssm.selective_scan against a plain loop (scalar by scalar, NumPy float64), a closed form, and its own two
forms (the recurrence and the parallel scan) in values and in gradients."""
import math

import numpy as np
import pytest
import torch

from sim.ssm import selective_scan


def loop_reference(u, delta, A, B, C, D):
    """Mamba's selective scan written out one channel, one state number and one step at a time."""
    L, d = u.shape
    n = A.shape[1]
    y = np.zeros((L, d))
    for i in range(d):
        h = np.zeros(n)
        for t in range(L):
            for j in range(n):
                h[j] = math.exp(delta[t, i] * A[i, j]) * h[j] + delta[t, i] * B[t, j] * u[t, i]
            y[t, i] = sum(C[t, j] * h[j] for j in range(n)) + (0.0 if D is None else D[i] * u[t, i])
    return y


def inputs(L, d, n, seed):
    g = np.random.default_rng(seed)
    return (g.normal(size=(L, d)), np.log1p(np.exp(g.normal(size=(L, d)))),  # delta > 0, as softplus makes it
            -np.exp(g.normal(size=(d, n))), g.normal(size=(L, n)), g.normal(size=(L, n)), g.normal(size=d))


@pytest.mark.parametrize("L,d,n,seed", [(1, 1, 1, 0), (5, 3, 2, 1), (17, 4, 8, 2), (64, 2, 16, 3), (33, 5, 3, 4)])
@pytest.mark.parametrize("with_d", [True, False])
def test_both_forms_equal_the_loop(L, d, n, seed, with_d):
    u, delta, A, B, C, D = inputs(L, d, n, seed)
    D = D if with_d else None
    want = loop_reference(u, delta, A, B, C, D)
    t = [torch.tensor(x, dtype=torch.float64) for x in (u, delta, A, B, C)]
    Dt = None if D is None else torch.tensor(D, dtype=torch.float64)
    for parallel in (False, True):
        got = selective_scan(*t, Dt, parallel=parallel)
        assert got.shape == (L, d) and got.dtype == torch.float64
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


def test_one_state_number_is_an_exponential_moving_filter():
    """n = 1, A = -a, Δ constant, B = C = 1: y_t = Δ Σ_{s≤t} exp(-aΔ (t - s)) u_s (closed form)."""
    L, a, dt = 12, 0.7, 0.3
    u = torch.linspace(-1, 2, L, dtype=torch.float64)[:, None]
    ones = torch.ones(L, 1, dtype=torch.float64)
    y = selective_scan(u, dt * ones, torch.tensor([[-a]], dtype=torch.float64), ones, ones, parallel=True)
    want = [dt * sum(math.exp(-a * dt * (t - s)) * u[s, 0].item() for s in range(t + 1)) for t in range(L)]
    np.testing.assert_allclose(y[:, 0].numpy(), want, rtol=1e-12)


def test_the_parallel_scan_has_the_recurrence_gradients():
    u, delta, A, B, C, D = (torch.tensor(x, dtype=torch.float64) for x in inputs(23, 3, 4, 7))
    grads = []
    for parallel in (False, True):
        leaves = [x.clone().requires_grad_() for x in (u, delta, A, B, C, D)]
        selective_scan(*leaves, parallel=parallel).square().sum().backward()
        grads.append([x.grad for x in leaves])
    for g_rec, g_par in zip(*grads, strict=True):
        torch.testing.assert_close(g_par, g_rec, rtol=1e-11, atol=1e-11)


def test_an_input_that_is_not_selected_leaves_no_trace():
    """Δ → 0 at a step: Ā → 1 and B̄ → 0, so the state passes through unchanged and that step's input is ignored."""
    u, delta, A, B, C, _ = (torch.tensor(x, dtype=torch.float64) for x in inputs(9, 2, 3, 5))
    delta[4] = 0.0
    other = u.clone()
    other[4] = 100.0
    torch.testing.assert_close(selective_scan(other, delta, A, B, C), selective_scan(u, delta, A, B, C))


@pytest.mark.parametrize("bad,name", [("u", "u must be"), ("A", "A must be"), ("delta", "delta must be"),
                                      ("B", "B must be"), ("C", "C must be"), ("D", "D must be")])
def test_shapes_that_do_not_fit_are_refused_by_name(bad, name):
    args = dict(zip("u delta A B C D".split(), (torch.zeros(s) for s in [(6, 3), (6, 3), (3, 4), (6, 4), (6, 4),
                                                                          (3,)]), strict=True))
    args[bad] = torch.zeros(5, 5, 5) if bad == "u" else torch.zeros(2, 7)
    with pytest.raises(ValueError, match=name):
        selective_scan(args["u"], args["delta"], args["A"], args["B"], args["C"], args["D"])


def test_an_empty_sequence_gives_an_empty_output():
    for parallel in (False, True):
        y = selective_scan(torch.zeros(0, 2), torch.zeros(0, 2), -torch.ones(2, 3), torch.zeros(0, 3),
                           torch.zeros(0, 3), parallel=parallel)
        assert y.shape == (0, 2)
