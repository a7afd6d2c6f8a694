"""Mixture-of-Experts: a softmax router choosing the top k of E expert FFNs per token, expert capacity with tokens
dropped past it (they pass through the residual), the Switch Transformer's load-balancing loss, DeepSeek-V3's
bias balancing, and a small model trained on tokens that come from distinct clusters."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from sim.core.history import LossCurve, bound
from sim.core.models import linear

# published routing, (routed experts E, experts per token k): Mixtral's top-2 is where "2" comes from; DeepSeek-V3
# (plus one shared expert every token uses) and Qwen3's largest MoE route each token to 8
PUBLISHED_ROUTING = {"Mixtral 8×7B": (8, 2), "DeepSeek-V3": (256, 8), "Qwen3-235B-A22B": (128, 8)}
MODES = ("none", "aux", "bias")  # no balancing (α = 0), the auxiliary loss (α > 0), the expert bias (γ)


def route(logits: torch.Tensor, k: int, bias: torch.Tensor | None = None
          ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Router probabilities (T, E) = softmax(logits); the top-k experts (T, k) of probs + bias (the bias only
    chooses); their gates (T, k): the probabilities of the chosen, renormalised to sum to 1 when k > 1."""
    probs = logits.softmax(-1)
    choose = probs if bias is None else probs + bias
    index = choose.topk(k, dim=-1).indices  # (T, k)
    gates = probs.gather(-1, index)  # (T, k)
    if k > 1:
        gates = gates / gates.sum(-1, keepdim=True)
    return probs, index, gates


def capacity(n_tokens: int, n_experts: int, factor: float, k: int = 1) -> int:
    """Slots per expert: tokens·k / E × capacity factor (rounded down, at least 1)."""
    return max(1, int(n_tokens * k / n_experts * factor))


def keep_mask(index: torch.Tensor, n_experts: int, cap: int) -> torch.Tensor:
    """(T, k) True for the assignments that get a slot: per expert the first `cap`, all first choices (in token
    order) before any second choice; the rest are dropped."""
    T, k = index.shape
    order = index.T.reshape(-1)  # (k·T,) choice rank major, then token
    onehot = F.one_hot(order, n_experts)  # (k·T, E)
    slot = (onehot.cumsum(0) * onehot).sum(-1) - 1  # this assignment's place in its expert's queue
    return (slot < cap).reshape(k, T).T


def load_balancing_loss(router_probs: torch.Tensor, expert_index: torch.Tensor, n_experts: int) -> torch.Tensor:
    """E · Σᵢ fᵢ Pᵢ (Switch Transformer, without α): fᵢ the share of the T·k assignments sent to expert i, Pᵢ the
    mean router probability of i. 1 under uniform routing; up to E when everything goes to one expert."""
    T, k = expert_index.shape
    f = torch.bincount(expert_index.reshape(-1), minlength=n_experts).to(router_probs.dtype) / (T * k)
    P = router_probs.mean(0)
    return n_experts * (f * P).sum()


class Expert(nn.Module):
    def __init__(self, d: int, h: int, generator: torch.Generator):
        super().__init__()
        self.up, self.down = linear(d, h, generator=generator), linear(h, d, generator=generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.gelu(self.up(x)))


@dataclass
class Routing:
    probs: torch.Tensor  # (T, E), in the graph (the balancing loss trains the router through it)
    index: torch.Tensor  # (T, k)
    keep: torch.Tensor  # (T, k) bool
    cap: int


class MoELayer(nn.Module):
    """E experts replacing the FFN: each token goes to its top-k experts (capacity permitting), their outputs
    weighted by the gates; a token dropped everywhere gets zero here and keeps only its residual."""

    def __init__(self, d: int, h: int, n_experts: int, k: int, capacity_factor: float, generator: torch.Generator):
        super().__init__()
        self.n_experts, self.k, self.capacity_factor = n_experts, k, capacity_factor
        self.router = linear(d, n_experts, False, generator)
        self.experts = nn.ModuleList(Expert(d, h, generator) for _ in range(n_experts))
        self.register_buffer("bias", torch.zeros(n_experts))  # DeepSeek-V3's: chooses, never weights
        self.last: Routing | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (T, d) -> (T, d)."""
        probs, index, gates = route(self.router(x), self.k, self.bias)
        cap = capacity(x.shape[0], self.n_experts, self.capacity_factor, self.k)
        keep = keep_mask(index, self.n_experts, cap)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            tok, slot = torch.nonzero((index == e) & keep, as_tuple=True)
            if len(tok):
                out = out.index_add(0, tok, gates[tok, slot, None] * expert(x[tok]))
        self.last = Routing(probs, index, keep, cap)
        return out


@dataclass(frozen=True)
class MoEConfig:
    n_clusters: int = 8  # where the tokens come from; each cluster has its own rule
    d_in: int = 8  # a token's features
    d: int = 16  # the model's width
    hidden: int = 16  # each expert's hidden width
    n_experts: int = 8
    k: int = 1  # experts per token
    capacity_factor: float = 1.25
    n_classes: int = 4  # labels of the task
    spread: float = 0.3  # noise around each cluster's centre


class ClusterTask:
    """Tokens from n_clusters blobs; each cluster labels its tokens by its own random linear rule, so experts that
    specialise in clusters do well."""

    def __init__(self, c: MoEConfig, seed: int):
        g = torch.Generator().manual_seed(seed + 10_000)
        self.c = c
        self.centres = torch.randn(c.n_clusters, c.d_in, generator=g) * 2.0
        self.rules = torch.randn(c.n_clusters, c.n_classes, c.d_in, generator=g)

    def batch(self, n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(x (n, d_in), label (n,), cluster (n,))."""
        cl = torch.randint(self.c.n_clusters, (n,), generator=g)
        noise = torch.randn(n, self.c.d_in, generator=g)
        x = self.centres[cl] + self.c.spread * noise
        label = torch.einsum("ncd,nd->nc", self.rules[cl], noise).argmax(-1)
        return x, label, cl


class MoEModel(nn.Module):
    """in-projection, then h + MoE(LN(h)) (a token dropped by every expert keeps h), LN, classifier head."""

    def __init__(self, c: MoEConfig, generator: torch.Generator):
        super().__init__()
        self.inp = linear(c.d_in, c.d, generator=generator)
        self.ln1, self.ln2 = nn.LayerNorm(c.d), nn.LayerNorm(c.d)
        self.moe = MoELayer(c.d, c.hidden, c.n_experts, c.k, c.capacity_factor, generator)
        self.head = linear(c.d, c.n_classes, generator=generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.inp(x)  # (T, d)
        h = h + self.moe(self.ln1(h))  # the residual carries dropped tokens past the experts
        return self.head(self.ln2(h))  # (T, classes)


def param_counts(model: MoEModel) -> dict[str, int]:
    """Total parameters, and those one token uses (router, its k experts and the rest)."""
    total = sum(p.numel() for p in model.parameters())
    per_expert = sum(p.numel() for p in model.moe.experts[0].parameters())
    active = total - (model.moe.n_experts - model.moe.k) * per_expert
    return {"total": total, "active": active, "per_expert": per_expert}


def flops_per_token(model: MoEModel) -> dict[str, int]:
    """Forward multiply–adds ×2 of the weight matrices one token meets: with all experts, and with the k it uses."""
    mats = {n: p.numel() for n, p in model.named_parameters() if p.dim() == 2}
    per_expert = sum(v for n, v in mats.items() if n.startswith("moe.experts.0."))
    dense = sum(v for n, v in mats.items() if not n.startswith("moe.experts."))
    E, k = model.moe.n_experts, model.moe.k
    return {"all_experts": 2 * (dense + E * per_expert), "active": 2 * (dense + k * per_expert)}


class MoETrainer(LossCurve):
    """Adam on an MoEModel under one balancing mode: "none", "aux" (loss + α·balancing loss) or "bias" (after each
    step every overloaded expert's bias goes down by γ, every underloaded one's up). Records loss, each expert's
    share of the routed tokens and the dropped share after every step."""

    def __init__(self, c: MoEConfig, mode: str, alpha: float = 0.01, gamma: float = 0.01, lr: float = 0.01,
                 seed: int = 0, batch_size: int = 256):
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode}")
        self.c, self.mode, self.alpha, self.gamma, self.batch_size = c, mode, alpha, gamma, batch_size
        self.task = ClusterTask(c, seed)
        self.model = MoEModel(c, torch.Generator().manual_seed(seed))  # the same start for every mode
        self.generator = torch.Generator().manual_seed(seed + 1)  # the same batches too
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr, fused=True)
        self.steps, self.diverged = 0, False
        # per step: "loss", "dropped" (share of assignments over capacity) and "load" ((E,) each expert's share of
        # the assignments); bounded as runs get long (sim.core.history.bound keeps the head, the recent and the spikes)
        self.history: list[dict] = []
        self.by_cluster = np.zeros((c.n_clusters, c.n_experts))  # the last batch: tokens of cluster → expert

    def step(self, n: int = 1) -> None:
        c = self.c
        for _ in range(n):
            if self.diverged:
                return
            x, label, cl = self.task.batch(self.batch_size, self.generator)
            logits = self.model(x)
            r = self.model.moe.last
            loss = F.cross_entropy(logits, label)
            total = loss + self.alpha * load_balancing_loss(r.probs, r.index, c.n_experts) \
                if self.mode == "aux" else loss
            self.optimizer.zero_grad(set_to_none=True)
            total.backward()
            self.optimizer.step()
            counts = torch.bincount(r.index.reshape(-1), minlength=c.n_experts).double()
            share = (counts / counts.sum()).numpy()
            if self.mode == "bias":  # DeepSeek-V3: nudge by γ against the load, outside the gradient
                with torch.no_grad():
                    self.model.moe.bias -= self.gamma * torch.sign(counts - counts.mean()).float()
            self.steps += 1
            value = loss.item()
            self.diverged = not math.isfinite(value)
            self.history.append({"step": self.steps, "loss": value, "dropped": 1.0 - float(r.keep.double().mean()),
                                 "load": share})
            bound(self.history, "step", ("loss",))
            self.by_cluster = F.one_hot(cl[:, None] * c.n_experts + r.index, c.n_clusters * c.n_experts) \
                .sum((0, 1)).reshape(c.n_clusters, c.n_experts).double().numpy()

    @property
    def loss(self) -> list[float]:
        return [h["loss"] for h in self.history]

    @property
    def dropped(self) -> list[float]:
        return [h["dropped"] for h in self.history[-100:]]

    @property
    def load(self) -> list[np.ndarray]:
        return [h["load"] for h in self.history]

    def dead_experts(self, k: int = 50) -> int:
        """Experts chosen for less than a quarter of their fair share over the last k steps."""
        if not self.history:
            return 0
        return int((np.mean([h["load"] for h in self.history[-k:]], 0) < 0.25 / self.c.n_experts).sum())

    def recent(self, values: list, k: int = 20) -> float | None:
        tail = values[-k:]
        return float(np.mean(tail)) if tail else None

    def imbalance(self, k: int = 20) -> float | None:
        """E × the largest expert's share over the last k steps: 1 balanced, E everything on one expert."""
        if not self.history:
            return None
        return float(np.mean([h["load"] for h in self.history[-k:]], 0).max() * self.c.n_experts)

    def view(self, name: str) -> dict:
        """What a live frame shows of this run (sim.plots.blocks.moe_frame's run), under the name `name`."""
        steps, loss = self.curve()
        return {"name": name, "steps": steps, "loss": loss, "load": self.load_matrix()[0],
                "by_cluster": self.by_cluster, "imbalance": self.imbalance()}

    def load_matrix(self, columns: int = 120) -> tuple[np.ndarray, list[int]]:
        """(E, ≤ columns) each expert's share over training (kept steps averaged into columns of equal step
        width), and each column's last step."""
        if not self.history:
            return np.zeros((self.c.n_experts, 1)), [0]
        steps = np.array([h["step"] for h in self.history])
        loads = np.array([h["load"] for h in self.history])  # (kept, E)
        n = min(columns, len(steps))
        col = np.minimum(((steps - steps[0]) * n // max(steps[-1] - steps[0] + 1, 1)).astype(int), n - 1)
        keep = [c for c in range(n) if (col == c).any()]
        return np.array([loads[col == c].mean(0) for c in keep]).T, [int(steps[col == c][-1]) for c in keep]
