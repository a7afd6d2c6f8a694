"""The training loop's calls on the backprop section's network, run with torch.autograd (float64): what forgetting
zero_grad() does, what torch.no_grad() saves, and what model.eval() changes with dropout."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from sim.autograd.network import NetConfig, Sample, draw

LOSS_CAP = 1e10  # a loss past this has left any meaning: the run is called diverged and stops
MODULES = {"tanh": nn.Tanh, "relu": nn.ReLU, "sigmoid": nn.Sigmoid}


def torch_net(config: NetConfig, sample: Sample | None = None, dropout: float = 0.0) -> nn.Sequential:
    """The same network as sim.autograd.network.build, as torch modules (float64), with optional dropout after each
    hidden activation."""
    s = sample or draw(config)
    parts: list[nn.Module] = []
    for li, (W, B) in enumerate(zip(s.weights, s.biases, strict=True), start=1):
        lin = nn.Linear(len(W[0]), len(W), dtype=torch.float64)
        with torch.no_grad():
            lin.weight.copy_(torch.tensor(W, dtype=torch.float64))
            lin.bias.copy_(torch.tensor(B, dtype=torch.float64))
        parts.append(lin)
        if li < len(s.weights):
            parts.append(MODULES[config.activation]())
            if dropout > 0:
                parts.append(nn.Dropout(dropout))
    return nn.Sequential(*parts)


def sample_tensors(s: Sample) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.tensor([s.x], dtype=torch.float64), torch.tensor([[s.y]], dtype=torch.float64)


# ---------- zero_grad ----------
@dataclass(frozen=True)
class LoopRun:
    loss: np.ndarray  # (steps,) the loss before each update (nan once it is no longer finite)
    grad: np.ndarray  # (steps,) .grad of the first weight w1[1,1] as the update used it
    fresh: np.ndarray  # (steps,) this step's own dL/dw1[1,1] (what zero_grad would have left in .grad)
    diverged_at: int | None  # the first step whose loss passed LOSS_CAP or whose gradient was not finite

    @property
    def last_loss(self) -> float:
        """The loss of the last step that was taken (before a divergence stopped the run)."""
        taken = self.loss[~np.isnan(self.loss)]
        return float(taken[-1]) if len(taken) else float("nan")


def train(config: NetConfig, lr: float, steps: int, zero_grad: bool) -> LoopRun:
    """`steps` SGD updates on the sample, calling optimizer.zero_grad() before each backward() or not."""
    s = draw(config)
    net = torch_net(config, s)
    x, y = sample_tensors(s)
    opt = torch.optim.SGD(net.parameters(), lr=lr)
    w = net[0].weight
    loss_at, grad_at, fresh_at = np.full(steps, np.nan), np.full(steps, np.nan), np.full(steps, np.nan)
    diverged = None
    for k in range(steps):
        before = 0.0 if w.grad is None else float(w.grad[0, 0])
        if zero_grad:
            opt.zero_grad()
        loss = ((net(x) - y) ** 2).sum()
        loss.backward()
        g = float(w.grad[0, 0])
        finite = all(torch.isfinite(p.grad).all() for p in net.parameters())
        if not (finite and math.isfinite(loss.item()) and loss.item() <= LOSS_CAP):
            diverged = k
            break
        loss_at[k], grad_at[k] = loss.item(), g
        fresh_at[k] = g if zero_grad else g - before
        opt.step()
    return LoopRun(loss_at, grad_at, fresh_at, diverged)


def zero_grad_outcome(with_zero: LoopRun, without: LoopRun) -> str:
    """What the two runs show, for the page's words: which diverged ("both_diverged", "with_diverged",
    "without_diverged"), else which ended lower ("lower_with", "lower_without") or "same" (to the 3 digits shown)."""
    if with_zero.diverged_at is not None or without.diverged_at is not None:
        return ("both" if with_zero.diverged_at is not None and without.diverged_at is not None else
                "with" if with_zero.diverged_at is not None else "without") + "_diverged"
    a, b = with_zero.last_loss, without.last_loss
    return "same" if math.isclose(a, b, rel_tol=1e-3) else "lower_with" if a < b else "lower_without"


def held_at(run: LoopRun, step: int = 3) -> str | None:
    """What .grad holds at `step` (counted from 1) of a run without zero_grad(): "sum" of the steps' own gradients so
    far, "zero" when every one of them was 0 (no gradient reaches the weight), None when the run stopped before."""
    if len(run.grad) < step or math.isnan(run.grad[step - 1]):
        return None
    return "zero" if not run.fresh[:step].any() else "sum"


# ---------- no_grad ----------
@dataclass(frozen=True)
class Saved:
    tensors: int  # tensors autograd kept for the backward pass
    bytes: int  # their bytes (each storage once)
    graph: bool  # the output has a grad_fn: a graph was recorded
    weights: int  # of the tensors kept, those that are a parameter's own storage (the model holds them anyway)


def batch_inputs(config: NetConfig, batch: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(config.seed)
    return torch.rand(batch, config.n_in, generator=g, dtype=torch.float64) * 2 - 1


def saved_for_backward(config: NetConfig, batch: int, no_grad: bool) -> Saved:
    """A forward pass of `batch` inputs, counting every tensor autograd saves (torch.autograd.graph
    .saved_tensors_hooks sees each one as it is packed), with or without torch.no_grad()."""
    net, x = torch_net(config), batch_inputs(config, batch)
    params = {p.untyped_storage().data_ptr() for p in net.parameters()}
    seen: dict[tuple, int] = {}
    count = weights = 0

    def pack(t: torch.Tensor):
        nonlocal count, weights
        count += 1
        weights += t.untyped_storage().data_ptr() in params
        seen[(t.untyped_storage().data_ptr(), t.untyped_storage().nbytes())] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        if no_grad:
            with torch.no_grad():
                out = net(x)
        else:
            out = net(x)
    return Saved(count, sum(seen.values()), out.grad_fn is not None, weights)


# ---------- eval ----------
def dropout_outputs(config: NetConfig, p: float, repeats: int = 3) -> tuple[list[float], list[float], float]:
    """The sample's output `repeats` times in train mode and in eval mode, with dropout p after each hidden
    activation; and the output of the network without dropout."""
    s = draw(config)
    x, _ = sample_tensors(s)
    net = torch_net(config, s, dropout=p)
    with torch.random.fork_rng(devices=[]):  # the page's draws leave the process's generator as it was
        torch.manual_seed(config.seed)
        net.train()
        with torch.no_grad():
            train_out = [float(net(x)) for _ in range(repeats)]
        net.eval()
        with torch.no_grad():
            eval_out = [float(net(x)) for _ in range(repeats)]
    with torch.no_grad():
        plain = float(torch_net(config, s)(x))
    return train_out, eval_out, plain


@dataclass(frozen=True)
class EvalFacts:
    differ: bool  # the training-mode outputs are not all equal
    same: bool  # the eval-mode outputs are all equal
    plain: bool  # ... and equal to the network's without dropout


def eval_facts(train_out: list[float], eval_out: list[float], plain: float) -> EvalFacts:
    """What dropout_outputs shows, as the page's yes/no answers."""
    same = len(set(eval_out)) == 1
    return EvalFacts(len(set(train_out)) > 1, same, same and eval_out[0] == plain)
