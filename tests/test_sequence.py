"""sim.sequence: the RNN and the LSTM against torch.nn.RNN / torch.nn.LSTM with the same weights (outputs, states,
gradients), the gradient through time against backpropagation written out, and the sparse masks against dense
construction one (i, j) at a time, with the receptive field against a breadth-first search."""
import numpy as np
import pytest
import torch

from sim.sequence import masks
from sim.sequence.recurrent import LSTM, RNN, gradient_through_time


def _pair(kind, n_in, H, seed):
    torch.manual_seed(seed)
    ref = (torch.nn.RNN if kind == "rnn" else torch.nn.LSTM)(n_in, H).double()
    ours = (RNN if kind == "rnn" else LSTM)(n_in, H).double()
    ours.load_torch(ref)
    return ours, ref


@pytest.mark.parametrize("kind", ["rnn", "lstm"])
@pytest.mark.parametrize("T,B,n_in,H,seed", [(1, 1, 1, 1, 0), (7, 3, 4, 5, 1), (20, 2, 3, 8, 2)])
def test_the_cells_equal_torchs_in_outputs_and_gradients(kind, T, B, n_in, H, seed):
    ours, ref = _pair(kind, n_in, H, seed)
    x = torch.randn(T, B, n_in, dtype=torch.float64)
    trace = ours(x)
    out, state = ref(x)
    torch.testing.assert_close(trace.outputs, out, rtol=1e-12, atol=1e-12)
    if kind == "lstm":
        torch.testing.assert_close(trace.cells[-1], state[1][0], rtol=1e-12, atol=1e-12)
        g = torch.stack([trace.gates["input"], trace.gates["forget"], trace.gates["output"]])
        assert ((g > 0) & (g < 1)).all() and trace.gates["forget"].shape == (T, B, H)
    (trace.outputs.sin().sum()).backward()
    out.sin().sum().backward()
    for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
        torch.testing.assert_close(getattr(ours, name).grad, getattr(ref, f"{name}_l0").grad, rtol=1e-11, atol=1e-11)


def test_the_gradient_through_time_is_backpropagation_written_out():
    """Loss v · h_T: δ_T = v and δ_{t-1} = W_hhᵀ (δ_t ⊙ (1 − h_t²)), step by step."""
    rnn = RNN(3, 6).double()
    x = torch.randn(15, 1, 3, dtype=torch.float64)
    v = torch.randn(6, dtype=torch.float64)
    trace = rnn(x)
    got = gradient_through_time(trace, (trace.hidden[-1][0] * v).sum())
    W = rnn.weight_hh.detach()
    delta, want = v.clone(), []
    for t in range(14, -1, -1):
        want.append(float(delta.norm()))
        delta = W.T @ (delta * (1 - trace.hidden[t][0].detach() ** 2))
    np.testing.assert_allclose(got, want[::-1], rtol=1e-12)


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="must be"):
        RNN(3, 4)(torch.zeros(5, 3))
    with pytest.raises(ValueError, match="at least 1"):
        LSTM(0, 4)


def dense(T, keep):
    return np.array([[bool(keep(i, j)) or i == j for j in range(T)] for i in range(T)])


@pytest.mark.parametrize("T", [1, 5, 16, 33])
@pytest.mark.parametrize("causal", [False, True])
def test_masks_equal_their_dense_construction(T, causal):
    c = (lambda i, j: j <= i) if causal else (lambda i, j: True)
    g = (0, 3)
    cases = [
        (masks.full(T, causal), lambda i, j: c(i, j)),
        (masks.window(T, 2, causal), lambda i, j: abs(i - j) <= 2 and c(i, j)),
        (masks.dilated(T, 2, 3, causal), lambda i, j: abs(i - j) <= 6 and (i - j) % 3 == 0 and c(i, j)),
        (masks.longformer(T, 1, g, causal), lambda i, j: (abs(i - j) <= 1 or i in g or j in g) and c(i, j)),
    ]
    for got, keep in cases:
        np.testing.assert_array_equal(got, dense(T, keep))
    big = masks.bigbird(T, 1, g, r=2, seed=4, causal=causal)
    assert (big >= masks.longformer(T, 1, g, causal)).all()  # longformer's pattern and more
    extra = big & ~masks.longformer(T, 1, g, causal)
    assert (extra.sum(axis=1) <= 2).all() and np.array_equal(big, masks.bigbird(T, 1, g, r=2, seed=4, causal=causal))


def test_the_share_of_scores_computed_falls_as_one_over_t_for_a_window():
    for T in (64, 128, 256):  # w = 4: 2w + 1 a row, fewer at the ends
        assert masks.share_computed(masks.window(T, 4)) == pytest.approx((9 * T - 20) / T**2)
    assert masks.share_computed(masks.full(10, causal=True)) == pytest.approx(55 / 100)


def bfs_reach(mask, layers):
    T = len(mask)
    out = []
    for i in range(T):
        seen = {i}
        frontier = {i}
        for _ in range(layers):
            frontier = {j for k in frontier for j in range(T) if mask[k, j]} - seen
            seen |= frontier
        out.append(len(seen))
    return out


@pytest.mark.parametrize("layers", [1, 2, 3, 5])
def test_the_receptive_field_after_l_layers_is_what_a_search_reaches(layers):
    for m in (masks.window(40, 2, causal=True), masks.dilated(40, 1, 4), masks.bigbird(40, 1, (0,), 2, seed=1)):
        np.testing.assert_array_equal(masks.receptive_field(m, layers), bfs_reach(m, layers))
    # a causal window of 2 reaches 2 more tokens back with each layer
    assert masks.receptive_field(masks.window(40, 2, causal=True), layers)[-1] == 2 * layers + 1
