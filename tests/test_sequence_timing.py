"""sim.sequence.timing: the attention layer timed against torch's own scaled_dot_product_attention with the same
projections, the sequential steps by definition, the crossover read off the measurements (where attention stays
slower), and the sweep's shape and progress."""
import math

import pytest
import torch
import torch.nn.functional as F

from sim.sequence.timing import MODELS, CausalSelfAttention, crossover, forward_times, sequential_steps


def test_the_timed_attention_is_causal_attention():
    torch.manual_seed(0)
    layer = CausalSelfAttention(8).double()
    x = torch.randn(2, 7, 8, dtype=torch.float64)
    q, k, v = layer.qkv(x).split(8, dim=-1)
    want = layer.out(F.scaled_dot_product_attention(q, k, v, is_causal=True))
    torch.testing.assert_close(layer(x), want)
    y = layer(x)
    x2 = x.clone()
    x2[:, 4:] += 1.0  # a later token changes nothing before it
    torch.testing.assert_close(layer(x2)[:, :4], y[:, :4])


def test_sequential_steps():
    assert [sequential_steps("rnn", T) for T in (1, 16, 1024)] == [1, 16, 1024]
    assert [sequential_steps("attention", T, layers=3) for T in (1, 16, 1024)] == [3, 3, 3]
    with pytest.raises(ValueError, match="invalid:model"):
        sequential_steps("gru", 4)


def test_crossover_is_where_attention_stays_slower():
    """The length from which attention is slower at every longer one too: a length where it was slower, then faster
    again further on, is no crossover (the page's "from T = … on" would be false)."""
    assert crossover([8, 16, 32, 64], {"rnn": [2, 2, 2, 2], "attention": [1, 1.5, 3, 3]}) == 32
    assert crossover([8, 16, 32, 64], {"rnn": [2, 2, 2, 2], "attention": [1, 3, 1, 3]}) == 64
    assert crossover([8, 16, 32, 64], {"rnn": [2, 2, 2, 2], "attention": [1, 1.5, 3, 1]}) is None
    assert crossover([8, 16], {"rnn": [2, 2], "attention": [3, 3]}) == 8
    assert crossover([8, 16], {"rnn": [2, 2], "attention": [1, 1]}) is None


def test_the_sweep_measures_both_models_at_every_length():
    calls = []
    got = forward_times([4, 8, 16], width=8, repeats=1, progress=lambda i, n: calls.append((i, n)))
    assert set(got) == set(MODELS) and all(len(v) == 3 for v in got.values())
    assert all(math.isfinite(x) and x > 0 for v in got.values() for x in v)
    assert calls == [(i, 6) for i in range(1, 7)]
