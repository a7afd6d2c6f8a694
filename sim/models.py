"""The Playground's network: a small fully connected MLP whose every hidden activation can be read."""

import torch
from torch import nn

ACTIVATIONS = {"relu": torch.relu, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "linear": lambda x: x}


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
        self.layers = nn.ModuleList(Dense(a, b, generator) for a, b in zip(widths[:-1], widths[1:]))
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
                # inverted dropout, drawing from the model's generator rather than nn.Dropout's global RNG
                keep = torch.rand(x.shape, generator=self.generator) >= self.dropout
                x = x * keep / (1 - self.dropout)
            outs.append(x)
        outs.append(last(x))
        return outs

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward_all(x)[-1]  # (B, n_out)
