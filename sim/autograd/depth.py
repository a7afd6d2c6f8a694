"""Vanishing and exploding gradients: the gradient's norm at each layer of a deep MLP, measured with torch.autograd.

Layer l is y_l = act(W_l y_{l−1}) (no bias) with W_l ~ N(0, scale² / fan_in); a linear head makes one
output per example and the loss is the mean squared error to targets drawn from the seed. Each layer's norm is
‖dL/dW_l‖ (Frobenius); layer 1 is next to the input, where backpropagation arrives last.
"""
from __future__ import annotations

import numpy as np
import torch

ACTIVATIONS = ("sigmoid", "tanh", "relu")
FUNCS = {"sigmoid": torch.sigmoid, "tanh": torch.tanh, "relu": torch.relu}
DEPTHS = (5, 10, 20, 40)


def deep_net(depth: int, scale: float, width: int = 32, batch: int = 64, seed: int = 0) -> tuple:
    """The seed's inputs (batch, width), targets (batch, 1), depth weights (width, width), the head (1, width)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, width, generator=g, dtype=torch.float64)
    target = torch.randn(batch, 1, generator=g, dtype=torch.float64)
    weights = [torch.randn(width, width, generator=g, dtype=torch.float64) * scale / width ** 0.5
               for _ in range(depth)]
    head = torch.randn(1, width, generator=g, dtype=torch.float64) / width ** 0.5
    return x, target, weights, head


def layer_grad_norms(activation: str, depth: int, scale: float, width: int = 32, batch: int = 64,
                     seed: int = 0) -> np.ndarray:
    """‖dL/dW_l‖ for l = 1..depth (float64)."""
    if activation not in FUNCS:
        raise ValueError(f"unknown activation {activation!r}")
    x, target, weights, head = deep_net(depth, scale, width, batch, seed)
    weights = [W.requires_grad_() for W in weights]
    h = x
    for W in weights:
        h = FUNCS[activation](h @ W.T)
    loss = ((h @ head.T - target) ** 2).mean()
    grads = torch.autograd.grad(loss, weights)
    return np.array([float(gr.norm()) for gr in grads])


def first_to_last(norms: np.ndarray) -> float:
    """‖dL/dW_1‖ / ‖dL/dW_depth‖: below 1 the gradient shrank on its way back to the input, above 1 it grew."""
    return float(norms[0] / norms[-1]) if norms[-1] > 0 else float("inf")


def first_layer_by_depth(scale: float, depths: tuple[int, ...] = DEPTHS, seed: int = 0) -> dict[str, np.ndarray]:
    """Per activation, ‖dL/dW_1‖ (the layer next to the input) for each depth: how much gradient is left there."""
    return {a: np.array([layer_grad_norms(a, d, scale, seed=seed)[0] for d in depths]) for a in ACTIVATIONS}
