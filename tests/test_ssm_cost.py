"""sim.ssm.cost: the worked scan against sim.ssm.selective_scan (both forms) on the same numbers, the memory counts
against sizes worked out by hand for published models, and the timing sweep's shape and progress."""
import math

import numpy as np
import pytest
import torch

from sim.ssm import selective_scan
from sim.ssm.cost import FORMS, kv_cache_numbers, mamba_state_numbers, time_forms, worked_scan


@pytest.mark.parametrize("seed,L,n", [(0, 4, 2), (5, 8, 3), (11, 2, 1)])
def test_the_worked_example_is_the_selective_scan(seed, L, n):
    w = worked_scan(seed, L, n)
    args = [torch.tensor(a) for a in (w.u[:, None], w.delta[:, None], w.A[None], w.B, w.C)]
    for parallel in (False, True):
        np.testing.assert_allclose(selective_scan(*args, parallel=parallel)[:, 0].numpy(), w.y, rtol=1e-12)
    # the first step by hand: h_0 = Δ_0 B_0 u_0 (nothing to keep yet), Ā = exp(Δ A)
    np.testing.assert_allclose(w.h[0], w.delta[0] * w.B[0] * w.u[0])
    np.testing.assert_allclose(w.abar, np.exp(w.delta[:, None] * w.A[None]))
    assert (w.A < 0).all() and ((w.abar > 0) & (w.abar < 1)).all()


def test_worked_sizes_are_bounded():
    with pytest.raises(ValueError, match="invalid:size"):
        worked_scan(0, L=100)


def test_memory_counts_by_hand():
    # GPT-2 small: 12 layers of width 768 keep 2 × 12 × 768 = 18,432 numbers a token (36 KiB in fp16)
    assert kv_cache_numbers(12, 768, 1) * 2 == 36 * 1024
    assert kv_cache_numbers(12, 768, 1024) == 1024 * 18_432
    # Mamba-130M: 24 layers, width 768, d_inner 1,536, state 16, convolution 4: 1,536 × (16 + 3) a layer
    assert mamba_state_numbers(24, 768) == 24 * 1536 * 19 == 700_416
    assert mamba_state_numbers(24, 768, expand=1, n=1, conv=1) == 24 * 768


def test_the_timing_sweep_measures_every_form_at_every_length():
    calls = []
    got = time_forms([8, 16, 32], d=4, n=2, repeats=1, progress=lambda i, total: calls.append((i, total)))
    assert set(got) == set(FORMS) and all(len(v) == 3 for v in got.values())
    assert all(math.isfinite(x) and x > 0 for v in got.values() for x in v)
    assert calls == [(i, 9) for i in range(1, 10)]
