"""Vanishing and exploding gradients: the gradient's size at each layer of a deep MLP, measured with torch.autograd.

Layer l is h_l = act(z_l), z_l = W_l h_{l−1} (no bias) with W_l ~ N(0, scale² / fan_in); a linear head makes one
output per example and the loss is the mean squared error to targets drawn from the seed. Two norms per layer:
‖∂L/∂z_l‖, the gradient backpropagation passes back into layer l (Glorot & Bengio 2010's back-propagated gradient;
each layer multiplies it by Wᵀ and act′ on the way back), and ‖∂L/∂W_l‖ = ‖(∂L/∂z_l)ᵀ h_{l−1}‖, the weights' own
gradient, which also carries the size of the layer's input h_{l−1}. Layer 1 is next to the input, where
backpropagation arrives last.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

ACTIVATIONS = ("sigmoid", "tanh", "relu")
FUNCS = {"sigmoid": torch.sigmoid, "tanh": torch.tanh, "relu": torch.relu}
DEPTHS = (5, 10, 20, 40)
HOLDS = 2.0  # layer 1's gradient within this factor of the last layer's (either way): its size held


def deep_net(depth: int, scale: float, width: int = 32, batch: int = 64, seed: int = 0) -> tuple:
    """The seed's inputs (batch, width), targets (batch, 1), depth weights (width, width), the head (1, width)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, width, generator=g, dtype=torch.float64)
    target = torch.randn(batch, 1, generator=g, dtype=torch.float64)
    weights = [torch.randn(width, width, generator=g, dtype=torch.float64) * scale / width ** 0.5
               for _ in range(depth)]
    head = torch.randn(1, width, generator=g, dtype=torch.float64) / width ** 0.5
    return x, target, weights, head


@dataclass(frozen=True)
class DepthGrads:
    back: np.ndarray  # (depth,) ‖∂L/∂z_l‖: the gradient passed back into layer l
    weight: np.ndarray  # (depth,) ‖∂L/∂W_l‖ (Frobenius)


def depth_grads(activation: str, depth: int, scale: float, width: int = 32, batch: int = 64,
                seed: int = 0) -> DepthGrads:
    """‖∂L/∂z_l‖ and ‖∂L/∂W_l‖ for l = 1..depth (float64), from one backward pass."""
    if activation not in FUNCS:
        raise ValueError(f"unknown activation {activation!r}")
    x, target, weights, head = deep_net(depth, scale, width, batch, seed)
    weights = [W.requires_grad_() for W in weights]
    h, zs = x, []
    for W in weights:
        zs.append(h @ W.T)  # (batch, width)
        h = FUNCS[activation](zs[-1])
    loss = ((h @ head.T - target) ** 2).mean()
    grads = torch.autograd.grad(loss, zs + weights)
    norms = np.array([float(g.norm()) for g in grads])
    return DepthGrads(norms[:depth], norms[depth:])


def layer_grad_norms(activation: str, depth: int, scale: float, width: int = 32, batch: int = 64,
                     seed: int = 0) -> np.ndarray:
    """‖∂L/∂W_l‖ for l = 1..depth (float64)."""
    return depth_grads(activation, depth, scale, width, batch, seed).weight


def first_to_last(norms: np.ndarray) -> float:
    """norms[0] / norms[-1]: below 1 the gradient shrank on its way back to the input, above 1 it grew."""
    return float(norms[0] / norms[-1]) if norms[-1] > 0 else float("inf")


def trend(ratio: float) -> str:
    """How layer 1's gradient compares with the last layer's: "shrinks" (by more than HOLDS), "grows", or "holds"."""
    return "shrinks" if ratio < 1 / HOLDS else "grows" if ratio > HOLDS else "holds"


@dataclass(frozen=True)
class DepthClaim:
    back: str  # trend of ‖∂L/∂z‖ from the last layer back to layer 1
    weight: str  # trend of ‖∂L/∂W‖ the same way
    back_ratio: float  # layer 1 ÷ the last layer
    weight_ratio: float

    @property
    def factor(self) -> float:
        """How many times the passed-back gradient shrank or grew (≥ 1)."""
        if self.back_ratio == 0:  # layer 1's underflowed to 0 (float64 ends near 1e-308)
            return float("inf")
        return 1 / self.back_ratio if self.back_ratio < 1 else self.back_ratio


def depth_claim(g: DepthGrads) -> DepthClaim:
    """What the page says of one activation's run: which way the passed-back gradient went, and the weights'."""
    back, weight = first_to_last(g.back), first_to_last(g.weight)
    return DepthClaim(trend(back), trend(weight), back, weight)


def first_layer_by_depth(scale: float, depths: tuple[int, ...] = DEPTHS, seed: int = 0) -> dict[str, np.ndarray]:
    """Per activation, ‖∂L/∂z_1‖ (the gradient that reaches the layer next to the input) for each depth."""
    return {a: np.array([depth_grads(a, d, scale, seed=seed).back[0] for d in depths]) for a in ACTIVATIONS}
