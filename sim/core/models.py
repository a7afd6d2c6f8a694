"""The Playground's network: a small fully connected MLP whose every hidden activation can be read.

Also the seeded building blocks every model of the labs is made of: each draws its random numbers
from the model's own torch.Generator, never from torch's global RNG, which every session of the
server shares (two sessions seeding it at once would get each other's numbers).
"""
import math
from itertools import pairwise

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import skip_init

ACTIVATIONS = {"relu": torch.relu, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "linear": lambda x: x}


@torch.no_grad()
def linear(n_in: int, n_out: int, bias: bool = True, generator: torch.Generator | None = None) -> nn.Linear:
    """nn.Linear with torch's default initialisation drawn from `generator`: W and b ~ U(-1/√n_in, 1/√n_in)."""
    # built without drawing anything, on the current default device (sim.transformers.shapes builds models on "meta")
    layer = skip_init(nn.Linear, n_in, n_out, bias=bias, device=torch.get_default_device())
    # the calls of nn.Linear.reset_parameters, with the generator passed on
    nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
    if bias:
        bound = 1 / math.sqrt(n_in) if n_in > 0 else 0.0
        nn.init.uniform_(layer.bias, -bound, bound, generator=generator)
    return layer


@torch.no_grad()
def embedding(n: int, dim: int, generator: torch.Generator | None = None) -> nn.Embedding:
    """nn.Embedding with torch's default initialisation drawn from `generator`: every entry ~ N(0, 1)."""
    table = skip_init(nn.Embedding, n, dim, device=torch.get_default_device())
    nn.init.normal_(table.weight, generator=generator)
    return table


def dropout(x: torch.Tensor, p: float, generator: torch.Generator | None = None) -> torch.Tensor:
    """Inverted dropout: zero each entry with probability p, scale the rest by 1 / (1 - p); masks from `generator`."""
    keep = torch.rand(x.shape, generator=generator) >= p
    return x * keep / (1 - p)


class Dropout(nn.Module):
    """nn.Dropout drawing its masks from a generator instead of the global RNG; identity in eval mode or at p = 0."""

    def __init__(self, p: float, generator: torch.Generator | None = None):
        super().__init__()
        self.p, self.generator = p, generator

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training and self.p > 0:
            return dropout(x, self.p, self.generator)
        # x itself, still a "dropout" step in sim.transformers.shapes' traced chain
        return F.dropout(x, self.p, training=False)


class Dense(nn.Module):
    """x @ W + b with W stored (in, out): unlike nn.Linear, no transpose in the forward or the backward."""

    def __init__(self, n_in: int, n_out: int, generator: torch.Generator | None = None):
        super().__init__()
        # Playground init (weights U(-0.5, 0.5), biases 0.1), so the dynamics are the ones teachers know
        self.weight = nn.Parameter(torch.rand(n_in, n_out, generator=generator) - 0.5)
        self.bias = nn.Parameter(torch.full((n_out,), 0.1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.addmm(self.bias, x, self.weight)  # (B, n_out)


class MLP(nn.Module):
    """Dense layers n_in -> hidden... -> n_out, with activation then dropout after each hidden layer."""

    def __init__(
        self,
        n_in: int,
        hidden: tuple[int, ...],
        n_out: int,
        activation: str,
        dropout: float,
        generator: torch.Generator | None = None,
    ):
        super().__init__()
        widths = (n_in, *hidden, n_out)
        self.layers = nn.ModuleList(Dense(a, b, generator) for a, b in pairwise(widths))
        self.activation = ACTIVATIONS[activation]
        self.dropout = dropout
        self.generator = generator  # draws initial weights and dropout masks, so a seeded run repeats

    def forward_all(self, x: torch.Tensor) -> list[torch.Tensor]:
        """Every hidden layer's activations (B, width), then the output logits (B, n_out)."""
        *hidden, last = self.layers
        outs = []
        for layer in hidden:
            x = self.activation(layer(x))
            if self.training and self.dropout > 0:
                x = dropout(x, self.dropout, self.generator)
            outs.append(x)
        outs.append(last(x))
        return outs

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward_all(x)[-1]  # (B, n_out)
