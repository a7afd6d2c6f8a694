"""Memory over distance: an RNN, an LSTM and a small causal Transformer learning the same recall task, and what the
lab reads of them once trained (accuracy by distance, ‖∂L/∂h_t‖ through time, the LSTM's gates).

The task (MemoryTask): a sequence of `distance` + 1 tokens, all of them noise symbols but one, a key symbol (one of
`keys`), placed d steps before the last token, a query mark; the answer at the query is the key. d is drawn
uniformly from 1..distance for each sequence, so one batch holds every distance and the accuracy per distance is
read off the training batches themselves. Noise and keys are distinct symbols: the model must keep what it saw
over d noisy steps, and the recurrent models only have their hidden state to keep it in.

Training runs torch's own nn.RNN / nn.LSTM (fast loops in C++); the written-out cells of sim.sequence.recurrent,
loaded with the same weights, give every hidden state and the gates for the "why" figures.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from sim.core.history import bound, decimate
from sim.core.models import embedding, linear
from sim.sequence import masks
from sim.sequence.recurrent import LSTM, RNN, Trace, gradient_through_time
from sim.ssm.scan import selective_scan_batch
from sim.transformers.transformer import TinyTransformer, TransformerConfig

KINDS = ("rnn", "lstm", "attn", "mamba")  # the four models, in the order the lab shows them
MAX_DISTANCE = 96  # longest distance the lab trains (the transformer's context is distance + 1)
ACC_DECAY = 0.98  # the accuracy per distance is a moving average over about 1 / (1 − decay) steps
HOLDS = 0.9  # a model "holds" a distance when its accuracy there is at least this


@dataclass(frozen=True)
class MemoryTask:
    distance: int  # the longest distance d between the key and the query
    keys: int = 8  # symbols to remember: the answer is one of them (chance is 1 / keys)
    noise: int = 8  # symbols that fill the rest of the sequence

    def __post_init__(self):
        if not 1 <= self.distance <= MAX_DISTANCE:
            raise ValueError("invalid:distance")
        if self.keys < 2 or self.noise < 1:
            raise ValueError("invalid:symbols")

    @property
    def vocab(self) -> int:
        """keys, then noise symbols, then the query mark."""
        return self.keys + self.noise + 1

    @property
    def length(self) -> int:
        return self.distance + 1

    @property
    def query(self) -> int:
        return self.keys + self.noise

    def batch(self, n: int, generator: torch.Generator,
              distances: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(x (n, length) tokens, y (n,) the keys, d (n,) their distances); d uniform in 1..distance unless given."""
        T = self.length
        x = self.keys + torch.randint(0, self.noise, (n, T), generator=generator)
        y = torch.randint(0, self.keys, (n,), generator=generator)
        d = torch.randint(1, self.distance + 1, (n,), generator=generator) if distances is None else distances
        x[torch.arange(n), T - 1 - d] = y
        x[:, -1] = self.query
        return x, y, d

    def guess_loss(self) -> float:
        """The loss of a uniform guess: log keys."""
        return math.log(self.keys)


@dataclass(frozen=True)
class MemoryConfig:
    kind: str  # one of KINDS
    hidden: int = 64  # the recurrent models' state, the transformer's width
    embed: int = 16  # the recurrent models' input vectors (the transformer's are `hidden` wide)
    layers: int = 2  # transformer blocks
    heads: int = 2  # attention heads per block
    state: int = 8  # Mamba: state numbers per channel
    window: int = 0  # kind "window": each position attends to itself and the `window` positions before it


class Recurrent(nn.Module):
    """Embedding, one torch nn.RNN (tanh) or nn.LSTM layer, and a linear read-out of the last hidden state."""

    def __init__(self, task: MemoryTask, c: MemoryConfig, generator: torch.Generator):
        super().__init__()
        self.kind = c.kind
        self.emb = embedding(task.vocab, c.embed, generator)
        # built without drawing from torch's global generator, which every session shares
        cell = (nn.RNN if c.kind == "rnn" else nn.LSTM)(c.embed, c.hidden, batch_first=True, device="meta")
        self.cell = cell.to_empty(device="cpu")
        k = 1 / math.sqrt(c.hidden)
        with torch.no_grad():  # torch's init, from the model's generator
            for p in self.cell.parameters():
                p.uniform_(-k, k, generator=generator)
        self.head = linear(c.hidden, task.keys, generator=generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.cell(self.emb(x))  # (B, T, H)
        return self.head(out[:, -1])  # (B, keys)

    def written_out(self) -> RNN | LSTM:
        """The same cell written step by step (sim.sequence.recurrent), with these weights."""
        cell = (RNN if self.kind == "rnn" else LSTM)(self.cell.input_size, self.cell.hidden_size)
        cell.to(self.cell.weight_hh_l0.dtype).load_torch(self.cell)
        return cell

    def trace(self, x: torch.Tensor) -> tuple[Trace, torch.Tensor]:
        """(the written-out cell's trace over x, logits (B, keys)): every hidden state a node of the graph."""
        trace = self.written_out()(self.emb(x).transpose(0, 1))  # (T, B, E) in
        return trace, self.head(trace.hidden[-1])


class Attention(nn.Module):
    """sim.transformers' tiny causal transformer reading the sequence; the logits of the key symbols at the query.
    Kind "window": every block attends through the causal window mask of sim.sequence.masks (itself and the
    c.window positions before it), so after c.layers blocks the query reaches layers × window positions back."""

    def __init__(self, task: MemoryTask, c: MemoryConfig, generator: torch.Generator):
        super().__init__()
        self.keys = task.keys
        self.net = TinyTransformer(TransformerConfig(task.vocab, task.length, c.layers, c.heads, c.hidden,
                                                     4 * c.hidden, causal=True), generator)
        if c.kind == "window":
            if c.window < 1:
                raise ValueError("invalid:window")
            self.register_buffer("mask", torch.from_numpy(masks.window(task.length, c.window, causal=True)),
                                 persistent=False)
        else:
            self.mask = None

    def blocks(self, h: torch.Tensor) -> torch.Tensor:
        """The blocks over h (B, T, C): sim.transformers' Block, with the window mask passed to attention."""
        for block in self.net.blocks:
            if self.mask is None:
                h = block(h)
            else:
                T = h.shape[1]
                h = h + block.drop(block.attn(block.ln1(h), self.mask[:T, :T]))
                h = h + block.drop(block.ffn(block.ln2(h)))
        return h

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.mask is None:
            return self.net(x)[:, -1, :self.keys]  # (B, keys)
        net = self.net
        h = self.blocks(net.drop(net.tok_emb(x) + net.positions(x.shape[1])))
        return net.lm_head(net.ln_f(h))[:, -1, :self.keys]

    def trace(self, x: torch.Tensor) -> tuple[Trace, torch.Tensor]:
        """(a trace whose hidden states are the vectors entering the first block, one per position, logits)."""
        net = self.net
        start = net.tok_emb(x) + net.positions(x.shape[1])  # (B, T, C)
        hidden = list(start.unbind(1))  # each (B, C), a node of the graph
        h = self.blocks(torch.stack(hidden, 1))
        return Trace(h.transpose(0, 1), hidden), net.lm_head(net.ln_f(h))[:, -1, :self.keys]


class Selective(nn.Module):
    """One Mamba-style selective state-space layer: embedding; u and a gate z from one projection; per step and
    channel the step size Δ = softplus(W_Δ u + b), and B, C (each `state` wide) read from u, so the input decides
    what enters the state and what is read out; y from the selective scan (sim.ssm.scan), gated by silu(z); a linear
    read-out of the last position. A = −exp(A_log) (S4D-real init: −1..−state per channel), D a skip, Δ's bias set
    so Δ starts log-uniform in [0.001, 0.1] as in Mamba."""

    def __init__(self, task: MemoryTask, c: MemoryConfig, generator: torch.Generator):
        super().__init__()
        d, n = c.hidden, c.state
        self.emb = embedding(task.vocab, d, generator)
        self.proj = linear(d, 2 * d, generator=generator)
        self.dt = linear(d, d, generator=generator)
        self.bc = linear(d, 2 * n, bias=False, generator=generator)
        with torch.no_grad():
            dt = torch.exp(torch.rand(d, generator=generator) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3))
            self.dt.bias.copy_(dt + torch.log(-torch.expm1(-dt)))  # softplus⁻¹(dt)
        self.A_log = nn.Parameter(torch.log(torch.arange(1, n + 1, dtype=torch.float32)).repeat(d, 1))
        self.D = nn.Parameter(torch.ones(d))
        self.head = linear(d, task.keys, generator=generator)

    def parts(self, e: torch.Tensor) -> dict[str, torch.Tensor]:
        """From the embedded input e (N, L, d): u, the gate z, Δ, A, B, C, D of the scan."""
        u, z = self.proj(e).chunk(2, -1)
        u = F.silu(u)
        B, C = self.bc(u).chunk(2, -1)
        return {"u": u, "z": z, "delta": F.softplus(self.dt(u)), "A": -torch.exp(self.A_log), "B": B, "C": C,
                "D": self.D}

    def read(self, e: torch.Tensor) -> torch.Tensor:
        p = self.parts(e)
        y = selective_scan_batch(p["u"], p["delta"], p["A"], p["B"], p["C"], p["D"])
        return self.head(y[:, -1] * F.silu(p["z"][:, -1]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.read(self.emb(x))  # (B, keys)

    def trace(self, x: torch.Tensor) -> tuple[Trace, torch.Tensor]:
        """(a trace whose hidden states are the embedded inputs, one per position, logits)."""
        hidden = list(self.emb(x).unbind(1))
        e = torch.stack(hidden, 1)
        return Trace(e.transpose(0, 1), hidden), self.read(e)


def build_model(task: MemoryTask, c: MemoryConfig, generator: torch.Generator) -> nn.Module:
    if c.kind not in KINDS + ("window",):
        raise ValueError("invalid:kind")
    return {"attn": Attention, "window": Attention, "mamba": Selective}.get(c.kind, Recurrent)(task, c, generator)


class MemoryTrainer:
    """One model learning the task with Adam on its own stream of batches (the same for every model of a seed):
    the loss and accuracy of every step, and a moving accuracy per distance."""

    def __init__(self, task: MemoryTask, config: MemoryConfig, lr: float, batch_size: int, seed: int):
        self.task, self.config, self.lr, self.batch_size = task, config, lr, batch_size
        self.model = build_model(task, config, torch.Generator().manual_seed(seed))
        self.generator = torch.Generator().manual_seed(seed + 1)  # the batches: equal for every model of a seed
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.steps = 0
        self.diverged = False
        self.history: list[dict] = []  # {"step", "loss", "acc"}: acc a moving average of the batches' accuracy
        self.hits = np.zeros(task.distance)  # decayed counts of right answers and of sequences, per distance
        self.seen = np.zeros(task.distance)
        self._acc = 1 / task.keys

    def step(self, n: int = 1) -> None:
        self.model.train()
        for _ in range(n):
            if self.diverged:
                return
            x, y, d = self.task.batch(self.batch_size, self.generator)
            logits = self.model(x)
            loss = F.cross_entropy(logits, y)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.optimizer.step()
            right = (logits.argmax(-1) == y).double().numpy()
            self.hits *= ACC_DECAY
            self.seen *= ACC_DECAY
            np.add.at(self.hits, d.numpy() - 1, right)
            np.add.at(self.seen, d.numpy() - 1, 1.0)
            self._acc = 0.9 * self._acc + 0.1 * float(right.mean())
            self.steps += 1
            value = loss.item()
            self.diverged = not math.isfinite(value)
            self.history.append({"step": self.steps, "loss": value, "acc": self._acc})
            bound(self.history, "step", ("loss", "acc"))

    def curves(self, max_points: int = 300) -> tuple[list[int], list[float], list[float]]:
        """Steps, losses and moving accuracies, min–max decimated."""
        pick = decimate(self.history, "step", ("loss", "acc"), max_points)
        return [h["step"] for h in pick], [h["loss"] for h in pick], [h["acc"] for h in pick]

    def accuracy_by_distance(self) -> np.ndarray:
        """(distance,) the recent accuracy at each distance 1..D (NaN where none was seen yet)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.seen > 0, self.hits / np.maximum(self.seen, 1e-300), np.nan)

    def recent_loss(self, k: int = 20) -> float | None:
        tail = [h["loss"] for h in self.history[-k:]]
        return sum(tail) / len(tail) if tail else None


def reach(accuracy: np.ndarray, holds: float = HOLDS) -> int:
    """The longest distance d such that the accuracy at every distance 1..d is at least `holds` (0: not even 1)."""
    ok = np.nan_to_num(np.asarray(accuracy, dtype=float), nan=0.0) >= holds
    return int(np.argmin(ok)) if not ok.all() else len(ok)


@torch.no_grad()
def exact_accuracy(trainer: MemoryTrainer, n: int = 32, seed: int = 7) -> np.ndarray:
    """(distance,) accuracy at each distance on n fresh sequences per distance (a held-out check of the moving
    accuracy the live view shows)."""
    task, model = trainer.task, trainer.model
    model.eval()
    g = torch.Generator().manual_seed(seed)
    out = []
    for dist in range(1, task.distance + 1):
        x, y, _ = task.batch(n, g, torch.full((n,), dist))
        out.append(float((model(x).argmax(-1) == y).double().mean()))
    return np.array(out)


def gradients_through_time(trainer: MemoryTrainer, n: int = 16, seed: int = 3) -> np.ndarray:
    """(length,) ‖∂L/∂h_t‖ for every position t of n sequences whose key is at the longest distance (L their mean
    loss): for the RNN and LSTM h_t is the hidden state after step t, for the transformer the vector entering its
    first block at position t."""
    task, model = trainer.task, trainer.model
    model.eval()
    x, y, _ = task.batch(n, torch.Generator().manual_seed(seed), torch.full((n,), task.distance))
    trace, logits = model.trace(x)
    return np.array(gradient_through_time(trace, F.cross_entropy(logits, y)))


@torch.no_grad()
def lstm_gates(trainer: MemoryTrainer, seed: int = 3) -> tuple[np.ndarray, dict[str, np.ndarray], int]:
    """One sequence with its key at the longest distance, read by the trained LSTM: (its tokens, gate -> (T, H) the
    input, forget and output gates and the cell state, the key's position)."""
    if trainer.config.kind != "lstm":
        raise ValueError("invalid:kind")
    task = trainer.task
    x, _, d = task.batch(1, torch.Generator().manual_seed(seed), torch.full((1,), task.distance))
    trace, _ = trainer.model.trace(x)
    gates = {g: trace.gates[g][:, 0].numpy() for g in ("input", "forget", "output")}
    gates["cell"] = torch.stack(trace.cells)[:, 0].numpy()
    return x[0].numpy(), gates, task.length - 1 - int(d[0])
