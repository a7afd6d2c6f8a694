"""The MoE engine against direct loops: routing, capacity and dropping, the balancing loss, the bias method, and
the three trainings (collapse without balancing, balance with either method)."""
import math
from itertools import pairwise

import numpy as np
import pytest
import torch

from sim.core.threads import configure_threads
from sim.transformers.moe import (
    MoEConfig,
    MoELayer,
    MoEModel,
    MoETrainer,
    capacity,
    flops_per_token,
    keep_mask,
    load_balancing_loss,
    param_counts,
    route,
)

configure_threads()  # as the app: one intra-op thread (a second one only spins on a busy machine)


def balancing_loop(probs, index, E):
    T, k = index.shape
    f = [sum(int(index[t, j]) == i for t in range(T) for j in range(k)) / (T * k) for i in range(E)]
    P = [sum(float(probs[t, i]) for t in range(T)) / T for i in range(E)]
    return E * sum(fi * pi for fi, pi in zip(f, P, strict=True))


def test_balancing_loss_is_one_when_uniform_and_matches_a_loop():
    E, T = 4, 8
    probs = torch.full((T, E), 1 / E)
    index = torch.arange(T)[:, None] % E
    assert math.isclose(load_balancing_loss(probs, index, E).item(), 1.0, rel_tol=1e-6)
    g = torch.Generator().manual_seed(0)
    for k in (1, 2):
        probs = torch.randn(50, 6, generator=g).softmax(-1)
        index = torch.randint(6, (50, k), generator=g)
        assert math.isclose(load_balancing_loss(probs, index, 6).item(), balancing_loop(probs, index, 6), rel_tol=1e-5)


def test_balancing_loss_grows_as_routing_concentrates():
    E, T = 4, 40
    values = []
    for share in (0.25, 0.5, 0.75, 1.0):  # the share of tokens on expert 0, probabilities following
        n0 = int(share * T)
        index = torch.tensor([0] * n0 + [1 + i % 3 for i in range(T - n0)])[:, None]
        probs = torch.full((T, E), (1 - share) / 3)
        probs[:, 0] = share
        values.append(load_balancing_loss(probs, index, E).item())
    assert values[0] == pytest.approx(1.0) and all(b > a for a, b in pairwise(values))
    assert values[-1] == pytest.approx(E)


def test_route_top_k_gates_and_the_bias_chooses_only():
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
    probs, index, gates = route(logits, 2)
    assert index.tolist() == [[0, 1]] and torch.allclose(gates.sum(-1), torch.ones(1))
    probs_b, index_b, gates_b = route(logits, 1, bias=torch.tensor([0.0, 0.0, 0.0, 1.0]))
    assert index_b.tolist() == [[3]]  # the bias picked expert 3 ...
    assert torch.allclose(probs_b, probs) and math.isclose(gates_b.item(), probs[0, 3].item())  # ... not its weight


def test_capacity_and_dropping_are_counted_exactly():
    assert capacity(256, 8, 1.25) == 40 and capacity(256, 8, 1.0, k=2) == 64 and capacity(3, 8, 1.0) == 1
    index = torch.tensor([[0], [0], [1], [0], [0], [1]])
    keep = keep_mask(index, 2, cap=2)
    assert keep[:, 0].tolist() == [True, True, True, False, False, True]
    # top-2: every first choice is queued before any second choice
    index = torch.tensor([[0, 1], [1, 0], [0, 1]])
    keep = keep_mask(index, 2, cap=2)
    assert keep.tolist() == [[True, True], [True, False], [True, False]]  # expert 1 had one slot left
    g = torch.Generator().manual_seed(1)
    index = torch.randint(4, (100, 2), generator=g)
    keep = keep_mask(index, 4, cap=20)
    for e in range(4):
        assert int(((index == e) & keep).sum()) == min(20, int((index == e).sum()))


def test_dropped_tokens_pass_through_the_residual():
    g = torch.Generator().manual_seed(0)
    layer = MoELayer(8, 16, 4, 1, capacity_factor=0.25, generator=g)  # capacity 1 of 16 tokens each
    x = torch.randn(16, 8)
    y = layer(x)
    kept = layer.last.keep[:, 0]
    assert int(kept.sum()) == len(set(layer.last.index[:, 0].tolist()))
    assert torch.all(y[~kept] == 0) and torch.all(y[kept].abs().sum(-1) > 0)
    # a kept token's output is its expert's output times its gate
    t = int(torch.nonzero(kept)[0])
    e = int(layer.last.index[t, 0])
    assert torch.allclose(y[t], layer.last.probs[t, e] * layer.experts[e](x[t:t + 1])[0], atol=1e-6)


def test_parameter_and_flop_counts():
    c = MoEConfig(n_experts=8, k=2)
    m = MoEModel(c, torch.Generator().manual_seed(0))
    p = param_counts(m)
    expert = 16 * 16 + 16 + 16 * 16 + 16
    assert p["per_expert"] == expert and p["total"] == sum(q.numel() for q in m.parameters())
    assert p["total"] - p["active"] == 6 * expert
    f = flops_per_token(m)
    assert f["all_experts"] - f["active"] == 2 * 6 * (2 * 16 * 16)


def test_bias_moves_against_the_load():
    tr = MoETrainer(MoEConfig(), "bias", gamma=0.01, seed=0)
    tr.step(1)
    counts = tr.load[0] * tr.batch_size
    bias = tr.model.moe.bias.numpy()
    assert np.allclose(bias, -0.01 * np.sign(counts - counts.mean()), atol=1e-6)


def test_no_balancing_collapses_while_both_methods_balance():
    runs = {mode: MoETrainer(MoEConfig(), mode, alpha=0.01, gamma=0.01, seed=0) for mode in ("none", "aux", "bias")}
    for tr in runs.values():
        tr.step(300)
    assert runs["none"].dead_experts() >= 1 and runs["none"].imbalance() > 1.6
    for mode in ("aux", "bias"):
        assert runs[mode].dead_experts() == 0 and runs[mode].imbalance() < 1.5
    assert runs["none"].recent(runs["none"].dropped) > runs["bias"].recent(runs["bias"].dropped)
    load, steps = runs["none"].load_matrix(50)
    assert load.shape == (8, 50) and steps[-1] == 300 and np.allclose(load.sum(0), 1.0)
    assert runs["none"].by_cluster.sum() == 256
