"""An RNN and an LSTM written step by step, with torch's parameter layout (so torch.nn.RNN / torch.nn.LSTM with the
same weights are their reference), keeping what the lab shows: every hidden state (to measure ‖∂L/∂h_t‖ for each
earlier step) and, for the LSTM, its gates.

RNN:   h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)
LSTM:  i, f, g, o = σ(·), σ(·), tanh(·), σ(·) of W_ih x_t + b_ih + W_hh h_{t-1} + b_hh (torch's order)
       c_t = f ⊙ c_{t-1} + i ⊙ g,   h_t = o ⊙ tanh(c_t)
The LSTM's cell path multiplies the gradient by f at each step (close to 1 when the forget gate stays open); the
RNN's path multiplies it by W_hh and tanh' each step, so it shrinks (or grows) geometrically.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import nn


@dataclass
class Trace:
    """What a forward pass over T steps kept: outputs (T, B, H), every hidden state h_t (each a tensor of the graph,
    so autograd can give ∂L/∂h_t), and for the LSTM its cell states and gates (name -> (T, B, H))."""
    outputs: torch.Tensor
    hidden: list[torch.Tensor]
    cells: list[torch.Tensor] = field(default_factory=list)
    gates: dict[str, torch.Tensor] = field(default_factory=dict)


class _Recurrent(nn.Module):
    GATES = 1

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        if input_size < 1 or hidden_size < 1:
            raise ValueError("input_size and hidden_size must be at least 1")
        self.input_size, self.hidden_size = input_size, hidden_size
        k, rows = 1 / math.sqrt(hidden_size), self.GATES * hidden_size
        self.weight_ih = nn.Parameter(torch.empty(rows, input_size).uniform_(-k, k))  # torch's init
        self.weight_hh = nn.Parameter(torch.empty(rows, hidden_size).uniform_(-k, k))
        self.bias_ih = nn.Parameter(torch.empty(rows).uniform_(-k, k))
        self.bias_hh = nn.Parameter(torch.empty(rows).uniform_(-k, k))

    def load_torch(self, ref: nn.RNNBase) -> None:
        """Take the weights of a one-layer torch.nn.RNN / LSTM (the reference the tests compare with)."""
        with torch.no_grad():
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(self, name).copy_(getattr(ref, f"{name}_l0"))

    def _pre(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        return x @ self.weight_ih.T + self.bias_ih + h @ self.weight_hh.T + self.bias_hh

    def _start(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 3 or x.shape[-1] != self.input_size:
            raise ValueError(f"x must be (T, B, {self.input_size}), got shape {tuple(x.shape)}")
        return x.new_zeros(x.shape[1], self.hidden_size)


class RNN(_Recurrent):
    """The Elman RNN (torch.nn.RNN, tanh, one layer, sequence first)."""

    def forward(self, x: torch.Tensor) -> Trace:
        h, hidden = self._start(x), []
        for t in range(x.shape[0]):
            h = torch.tanh(self._pre(x[t], h))
            hidden.append(h)
        return Trace(torch.stack(hidden) if hidden else x.new_zeros(0, x.shape[1], self.hidden_size), hidden)


class LSTM(_Recurrent):
    """The LSTM (torch.nn.LSTM, one layer, sequence first), with its gates kept."""
    GATES = 4
    GATE_NAMES = ("input", "forget", "cell", "output")  # torch's order of the four blocks of rows

    def forward(self, x: torch.Tensor) -> Trace:
        h = self._start(x)
        c, hidden, cells, gates = h, [], [], {g: [] for g in self.GATE_NAMES}
        for t in range(x.shape[0]):
            i, f, g, o = self._pre(x[t], h).chunk(4, dim=-1)
            i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
            c = f * c + i * g
            h = o * torch.tanh(c)
            hidden.append(h)
            cells.append(c)
            for name, v in zip(self.GATE_NAMES, (i, f, g, o), strict=True):
                gates[name].append(v)
        empty = x.new_zeros(0, x.shape[1], self.hidden_size)
        return Trace(torch.stack(hidden) if hidden else empty, hidden, cells,
                     {k: torch.stack(v) if v else empty for k, v in gates.items()})


def gradient_through_time(trace: Trace, loss: torch.Tensor) -> list[float]:
    """‖∂loss/∂h_t‖ for every step t (the hidden states must be part of loss's graph)."""
    grads = torch.autograd.grad(loss, trace.hidden, allow_unused=True, retain_graph=True)
    return [0.0 if g is None else float(g.norm()) for g in grads]
