"""sim.sequence.memory: the recall task built as described (checked position by position), torch's fused RNN/LSTM
against the written-out cells with the same weights, ‖∂L/∂h_t‖ against backpropagation written out, the accuracy per
distance against a count by hand, and the race's claim on a small task (the LSTM and the transformer hold the far
distances, the RNN does not)."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from sim.sequence.memory import (
    ACC_DECAY,
    KINDS,
    MemoryConfig,
    MemoryTask,
    MemoryTrainer,
    exact_accuracy,
    gradients_through_time,
    lstm_gates,
    reach,
)
from sim.ssm.scan import selective_scan, selective_scan_batch


def test_a_batch_hides_one_key_d_steps_before_the_query():
    task = MemoryTask(12, keys=5, noise=3)
    x, y, d = task.batch(200, torch.Generator().manual_seed(1))
    assert x.shape == (200, 13) and task.vocab == 9 and task.query == 8
    for row, key, dist in zip(x.tolist(), y.tolist(), d.tolist(), strict=True):
        assert 1 <= dist <= 12 and row[-1] == 8
        keys = [i for i, s in enumerate(row) if s < 5]
        assert keys == [12 - dist] and row[12 - dist] == key  # exactly one key, where d says
        assert all(5 <= s < 8 for i, s in enumerate(row[:-1]) if i != 12 - dist)  # the rest is noise
    assert set(d.tolist()) == set(range(1, 13))  # every distance drawn


def test_the_same_seed_gives_every_model_the_same_batches():
    task = MemoryTask(8)
    a, b = (MemoryTrainer(task, MemoryConfig(k), 1e-3, 4, seed=3) for k in ("rnn", "attn"))
    for _ in range(3):
        assert all(torch.equal(p, q) for p, q in zip(task.batch(4, a.generator), task.batch(4, b.generator),
                                                     strict=True))


@pytest.mark.parametrize("kind", ["rnn", "lstm", "attn", "mamba"])
def test_the_traced_forward_is_the_trained_forward(kind):
    """torch's fused nn.RNN / nn.LSTM (what trains) and the written-out cells with its weights (what the figures
    read) give the same logits; so does the transformer read block by block."""
    task = MemoryTask(10)
    tr = MemoryTrainer(task, MemoryConfig(kind, hidden=12), 1e-2, 8, seed=0)
    tr.step(5)
    x, _, _ = task.batch(6, torch.Generator().manual_seed(2))
    tr.model.eval()
    trace, logits = tr.model.trace(x)
    torch.testing.assert_close(logits, tr.model(x), rtol=1e-5, atol=1e-5)
    assert len(trace.hidden) == task.length


def test_the_rnns_gradient_through_time_is_backpropagation_written_out():
    """δ at the last state from the read-out's closed form, (softmax − one-hot) / n through the head; then
    δ_{t−1} = W_hhᵀ (δ_t ⊙ (1 − h_t²)) for every sequence of the batch."""
    task = MemoryTask(9)
    tr = MemoryTrainer(task, MemoryConfig("rnn", hidden=7), 1e-2, 8, seed=4)
    tr.model.double()
    got = gradients_through_time(tr, n=5, seed=1)
    x, y, _ = task.batch(5, torch.Generator().manual_seed(1), torch.full((5,), task.distance))
    with torch.no_grad():
        trace, logits = tr.model.trace(x)
        hs = [h.numpy() for h in trace.hidden]
        W, head = tr.model.cell.weight_hh_l0.numpy(), tr.model.head.weight.numpy()
        p = torch.softmax(logits, -1).numpy()
    p[np.arange(5), y.numpy()] -= 1
    delta, want = p / 5 @ head, []
    for t in range(task.length - 1, -1, -1):
        want.append(np.linalg.norm(delta))
        delta = (delta * (1 - hs[t] ** 2)) @ W
    np.testing.assert_allclose(got, want[::-1], rtol=1e-9)
    assert got[0] < got[-1]


def test_the_accuracy_per_distance_is_a_decayed_count():
    task = MemoryTask(6)
    tr = MemoryTrainer(task, MemoryConfig("lstm", hidden=8), 1e-2, 16, seed=5)
    copy = MemoryTrainer(task, MemoryConfig("lstm", hidden=8), 1e-2, 16, seed=5)
    hits, seen = np.zeros(6), np.zeros(6)
    for _ in range(3):
        x, y, d = task.batch(16, copy.generator)
        with torch.no_grad():
            right = (tr.model(x).argmax(-1) == y).numpy()
        tr.step(1)
        hits, seen = hits * ACC_DECAY, seen * ACC_DECAY
        for r, dist in zip(right, d.tolist(), strict=True):
            hits[dist - 1] += r
            seen[dist - 1] += 1
    want = np.where(seen > 0, hits / np.where(seen > 0, seen, 1), np.nan)
    np.testing.assert_allclose(tr.accuracy_by_distance(), want, equal_nan=True)
    assert tr.steps == 3 and len(tr.history) == 3 and math.isfinite(tr.history[-1]["loss"])


def test_reach_is_the_first_distance_that_fails():
    assert reach(np.array([1.0, 0.95, 0.5, 1.0])) == 2
    assert reach(np.array([0.95, 0.92])) == 2
    assert reach(np.array([0.2, 1.0])) == 0
    assert reach(np.array([1.0, np.nan, 1.0])) == 1  # not seen yet: not held


def test_the_lstm_gates_of_one_sequence():
    task = MemoryTask(7)
    tr = MemoryTrainer(task, MemoryConfig("lstm", hidden=5), 1e-2, 8, seed=0)
    tokens, gates, key_at = lstm_gates(tr)
    assert tokens.shape == (8,) and key_at == 0 and tokens[key_at] < task.keys and tokens[-1] == task.query
    assert set(gates) == {"input", "forget", "output", "cell"}
    for name in ("input", "forget", "output"):
        assert gates[name].shape == (8, 5) and ((gates[name] > 0) & (gates[name] < 1)).all()
    with pytest.raises(ValueError, match="invalid:kind"):
        lstm_gates(MemoryTrainer(task, MemoryConfig("rnn"), 1e-2, 8, 0))


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="invalid:distance"):
        MemoryTask(0)
    with pytest.raises(ValueError, match="invalid:distance"):
        MemoryTask(10_000)
    with pytest.raises(ValueError, match="invalid:kind"):
        MemoryTrainer(MemoryTask(4), MemoryConfig("gru"), 1e-3, 4, 0)


def test_the_lstm_the_transformer_and_mamba_hold_the_far_distances_and_the_rnn_does_not():
    """The lab's claim on a smaller task (D = 24, 400 steps each): measured on fresh sequences at every distance."""
    torch.set_num_threads(1)
    task = MemoryTask(24)
    hidden = {"attn": 32, "mamba": 16}
    trainers = {k: MemoryTrainer(task, MemoryConfig(k, hidden=hidden.get(k, 64), layers=1), 3e-3, 32, seed=0)
                for k in KINDS}
    for _ in range(400):
        for tr in trainers.values():
            tr.step(1)
    far = {k: exact_accuracy(tr)[12:].mean() for k, tr in trainers.items()}
    assert far["lstm"] >= 0.9 and far["attn"] >= 0.9 and far["mamba"] >= 0.9, far
    assert far["rnn"] < 0.9, far
    x, y, _ = task.batch(64, torch.Generator().manual_seed(9))
    with torch.no_grad():
        assert F.cross_entropy(trainers["attn"].model(x), y) < 0.1


def test_mambas_forward_is_the_selective_recurrence_on_its_own_weights():
    """The trained layer's logits against sim.ssm.selective_scan run step by step (parallel=False), one sequence at
    a time, on Δ, A, B, C, D computed by hand from the layer's weights: Δ = softplus(W_Δ u + b), A = −exp(A_log)."""
    task = MemoryTask(12)
    tr = MemoryTrainer(task, MemoryConfig("mamba", hidden=8, state=4), 1e-2, 8, seed=1)
    tr.step(5)
    m = tr.model.eval()
    x, _, _ = task.batch(5, torch.Generator().manual_seed(4))
    with torch.no_grad():
        e = m.emb.weight[x]
        proj = e @ m.proj.weight.T + m.proj.bias
        u, z = F.silu(proj[..., :8]), proj[..., 8:]
        delta = torch.log1p(torch.exp(u @ m.dt.weight.T + m.dt.bias))
        bc = u @ m.bc.weight.T
        A = -torch.exp(m.A_log)
        want = []
        for k in range(5):
            y = selective_scan(u[k], delta[k], A, bc[k, :, :4], bc[k, :, 4:], m.D)
            want.append(m.head.weight @ (y[-1] * z[k, -1] * torch.sigmoid(z[k, -1])) + m.head.bias)
        torch.testing.assert_close(m(x), torch.stack(want), rtol=1e-4, atol=1e-5)


def test_the_batched_scan_is_the_scan_of_each_sequence_and_its_gradient_too():
    g = torch.Generator().manual_seed(0)
    N, L, d, n = 3, 11, 4, 5
    u, delta = torch.randn(N, L, d, generator=g), torch.rand(N, L, d, generator=g)
    A, B, C, D = -torch.rand(d, n, generator=g) * 3, torch.randn(N, L, n, generator=g), \
        torch.randn(N, L, n, generator=g), torch.randn(d, generator=g)
    u.requires_grad_(True)
    y = selective_scan_batch(u, delta, A, B, C, D)
    (gu,) = torch.autograd.grad(y.square().sum(), u)
    u2 = u.detach().clone().requires_grad_(True)
    want = torch.stack([selective_scan(u2[k], delta[k], A, B[k], C[k], D) for k in range(N)])
    (gw,) = torch.autograd.grad(want.square().sum(), u2)
    torch.testing.assert_close(y, want, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(gu, gw, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError):
        selective_scan_batch(u[0], delta[0], A, B[0], C[0], D)


def test_the_window_model_reads_nothing_beyond_layers_times_window():
    """By hand: with L = 2 blocks and window w = 3, changing the tokens more than 6 positions before the query leaves
    its logits exactly as they were; changing the token 6 back changes them."""
    task = MemoryTask(16)
    tr = MemoryTrainer(task, MemoryConfig("window", hidden=16, layers=2, heads=2, window=3), 1e-2, 8, seed=2)
    tr.step(3)
    m = tr.model.eval()
    x, _, _ = task.batch(4, torch.Generator().manual_seed(1))
    T = task.length
    far, near = x.clone(), x.clone()
    far[:, :T - 1 - 6] = task.keys + (far[:, :T - 1 - 6] - task.keys + 1) % task.noise  # every token > 6 back
    near[:, T - 1 - 6] = (near[:, T - 1 - 6] + 1) % task.keys  # the token exactly 6 back, now another key
    with torch.no_grad():
        torch.testing.assert_close(m(far), m(x), rtol=0, atol=0)
        assert not torch.allclose(m(near), m(x))
    with pytest.raises(ValueError, match="invalid:window"):
        MemoryTrainer(task, MemoryConfig("window", hidden=16, window=0), 1e-2, 8, seed=2)


def test_a_window_as_wide_as_the_sequence_is_full_causal_attention():
    task = MemoryTask(10)
    full = MemoryTrainer(task, MemoryConfig("attn", hidden=16, layers=2), 1e-2, 8, seed=5)
    wide = MemoryTrainer(task, MemoryConfig("window", hidden=16, layers=2, window=task.length), 1e-2, 8, seed=5)
    x, _, _ = task.batch(6, torch.Generator().manual_seed(0))
    with torch.no_grad():
        torch.testing.assert_close(wide.model(x), full.model(x), rtol=1e-6, atol=1e-6)


def test_the_trained_window_model_holds_its_reach_and_is_at_chance_beyond():
    """The sparse section's claim on a small task: D = 16, one block, w = 4: right up to d = 4, guessing beyond."""
    torch.set_num_threads(1)
    task = MemoryTask(16)
    tr = MemoryTrainer(task, MemoryConfig("window", hidden=32, layers=1, heads=2, window=4), 3e-3, 32, seed=0)
    tr.step(300)
    acc = exact_accuracy(tr)
    assert acc[:4].min() >= 0.9 and acc[4:].mean() < 0.3, acc
