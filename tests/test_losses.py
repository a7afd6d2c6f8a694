"""Autograd gradients at the logit against their closed forms."""
import numpy as np

from sim.nets.losses import logit_gradients


def test_cross_entropy_gradient_is_p_minus_y():
    p = np.linspace(0.01, 0.99, 25)
    for y in (0.0, 1.0):
        g = logit_gradients(p, y)
        np.testing.assert_allclose(g["cross_entropy_grad"], p - y, atol=1e-9)
        np.testing.assert_allclose(g["squared_error_grad"], 2 * (p - y) * p * (1 - p), atol=1e-9)


def test_the_seeds_worked_numbers():
    g = logit_gradients(np.array([0.9, 0.01]), 1.0)  # -log 0.9 and -log 0.01
    np.testing.assert_allclose(g["cross_entropy"], [0.10536, 4.60517], atol=1e-5)
    # a confident wrong answer: cross-entropy pushes ~50x harder than squared error
    assert abs(g["cross_entropy_grad"][1]) > 50 * abs(g["squared_error_grad"][1])


def test_gradient_figure_plots_the_absolute_gradients():
    from sim.plots.losses import gradient_figure

    p = np.linspace(0.05, 0.95, 7)
    g = logit_gradients(p, 1.0)
    labels = {"p": "p", "grad": "|g|", "cross_entropy": "CE", "squared_error": "SE"}
    fig = gradient_figure(p, g, 0.9, labels)
    by_name = {trace.name: trace for trace in fig.data}
    np.testing.assert_allclose(by_name["CE"].y, 1 - p)
    np.testing.assert_allclose(by_name["SE"].y, 2 * (1 - p) * p * (1 - p))
    assert "|g|" in by_name["CE"].hovertemplate
