"""The measurement's guards: peak memory without recording every operation, the time guard from each
implementation's own calibrated rate (per run and per click), repetitions that stop at the deadline, and the lock
released after every refusal. No test asserts a time: only factors and sums of estimates."""
import time
from types import SimpleNamespace

import pytest
import torch
from torch.overrides import TorchFunctionMode

import sim.gpu.measure as gpu
from sim.gpu.kernels import tiled_attention
from sim.gpu.measure import (
    MEASURE_LOCK,
    block_pairs,
    estimate_seconds,
    measure_attention,
    memory_needed,
    peak_bytes,
    plan_click,
    work_units,
)


@pytest.fixture
def one_thread():
    """One intra-op thread, as the app's server runs torch (sim.core.threads)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def calls(monkeypatch):
    """The N of every attention call made from now on."""
    sizes = []
    real = gpu.attention_call

    def counted(impl, q, *args):
        sizes.append(q.shape[-2])
        return real(impl, q, *args)

    monkeypatch.setattr(gpu, "attention_call", counted)
    return sizes


# --- peak memory ---

def test_peak_memory_of_a_known_allocation():
    size = 200 * 2**20
    peak = peak_bytes(lambda: torch.ones(size // 4))
    assert size <= peak < 1.05 * size  # the tensor, and the resident set's small change around it
    held = torch.ones(size // 4)  # held before the call: the base, not the peak
    assert peak_bytes(lambda: torch.ones(2**20)) < 2 * 4 * 2**20
    del held


@pytest.mark.parametrize("impl", ["naive", "sdpa_math"])
def test_a_measured_peak_is_the_n_by_n_matrices(impl):
    B, H, N, d = 1, 2, 1024, 64
    m = measure_attention(impl, B, H, N, d, "float32", repeats=2, counters=False, device="cpu")
    need = memory_needed(impl, B, H, N, d, "float32", False)["needed_bytes"]  # S and P and the output
    assert 0.95 * need <= m.peak_bytes <= 1.3 * need
    assert m.memory_source == f"measured · CPU (peak RSS) · {m.device}"


# --- the time guard ---

class CountAmax(TorchFunctionMode):
    """Counts Tensor.amax calls: tiled_attention takes one row maximum per (query block, key block) pair."""

    def __init__(self):
        super().__init__()
        self.n = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.n += func is torch.Tensor.amax
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("N, bm, bn, causal", [(100, 16, 32, False), (100, 16, 32, True), (64, 64, 16, True),
                                               (130, 32, 32, True), (16, 64, 64, False)])
def test_block_pairs_count_the_tiled_loops_iterations(N, bm, bn, causal):
    q = k = v = torch.randn(1, 2, N, 4)
    with CountAmax() as counted:
        tiled_attention(q, k, v, causal, bm, bn)
    assert block_pairs(N, bm, bn, causal) == counted.n
    assert work_units("tiled_torch", 3, 5, N, 4, causal, bm, bn) == ("block_pairs", 15 * counted.n)
    assert work_units("naive", 3, 5, N, 4, causal, bm, bn) == ("flops", 4 * 15 * N * N * 4 // (2 if causal else 1))


def test_tiled_torch_at_a_large_n_with_16x16_blocks_is_refused_before_running(one_thread, calls):
    B, H, N = 1, 16, 16384  # a million 16 × 16 block pairs per call, each a dozen small torch operations
    m = measure_attention("tiled_torch", B, H, N, 64, "float32", block_m=16, block_n=16, repeats=3, device="cpu",
                          limit_s=20)
    assert m.error == "too_slow" and m.time_ms is None and m.peak_bytes is None
    assert not MEASURE_LOCK.locked()
    assert calls and max(calls) <= 1024  # only the calibration's small sizes ran
    p = m.error_params
    assert p["work"] == "block_pairs" and p["units"] == B * H * (N // 16) ** 2 and p["n"] == N
    assert p["factor"] == p["units"] / p["cal_units"] and p["cal_units"] == p["cal_bh"] * (p["cal_n"] // 16) ** 2
    assert p["seconds"] == pytest.approx(p["cal_ms"] / 1e3 * p["factor"] * p["calls"]) and p["calls"] == 3 + 1
    assert p["seconds"] > p["limit_s"] == 20
    calls.clear()  # a second refusal reuses the calibration: nothing runs at all
    again = measure_attention("tiled_torch", B, H, N, 64, "float32", block_m=16, block_n=16, repeats=3,
                              device="cpu", limit_s=20)
    assert again.error == "too_slow" and calls == [] and not MEASURE_LOCK.locked()


@pytest.mark.parametrize("impl, block", [("naive", 64), ("sdpa_math", 64), ("tiled_torch", 32)])
def test_the_calibrated_estimate_is_within_a_factor_of_a_real_measurement(impl, block, one_thread, monkeypatch):
    monkeypatch.setattr(gpu, "_CALIBRATIONS", {})  # calibrated now, next to the measurement
    B, H, N, d = 1, 4, 1024, 64
    e = estimate_seconds(impl, B, H, N, d, "float32", block_m=block, block_n=block, repeats=3, device="cpu")
    m = measure_attention(impl, B, H, N, d, "float32", block_m=block, block_n=block, repeats=3, counters=False,
                          device="cpu")
    ratio = e["seconds"] / e["calls"] / (m.time_ms / 1e3)
    assert 1 / 5 < ratio < 5, (e, m.time_ms)


def test_unavailable_and_too_large_runs_cost_nothing(calls):
    assert estimate_seconds("flash_triton", 1, 1, 4096, 64, device="cpu") == {"seconds": 0.0}
    assert estimate_seconds("naive", 1, 16, 100_000, 64, "float32", device="cpu") == {"seconds": 0.0}  # 1.28 TB
    assert calls == []


def test_a_click_is_guarded_by_the_sum_of_its_runs(one_thread, calls):
    c = {"B": 1, "H": 2, "d": 32, "dtype": "float32", "causal": False, "block_m": 64, "block_n": 64}
    runs = [(impl, {**c, "N": N}, False) for N in (256, 512, 1024) for impl in ("naive", "tiled_torch", "sdpa_flash")]
    alone = [estimate_seconds(impl, c["B"], c["H"], cfg["N"], c["d"], c["dtype"], block_m=64, block_n=64, repeats=3,
                              device="cpu")["seconds"] for impl, cfg, _ in runs]
    assert alone[2::3] == [0.0] * 3 and all(s > 0 for s in alone[0::3] + alone[1::3])  # sdpa_flash needs CUDA
    calls.clear()
    total = sum(alone)
    between = (max(alone) + total) / 2  # enough for any one run, not for all of them
    plan = plan_click(runs, repeats=3, limit_s=between, device="cpu")
    assert calls == []  # estimates only: nothing measured
    assert [r["seconds"] for r in plan["runs"]] == alone and plan["seconds"] == pytest.approx(total)
    assert plan["refused"] and not plan["busy"] and plan["limit_s"] == between
    assert [(r["impl"], r["backward"]) for r in plan["runs"]] == [(impl, False) for impl, _, _ in runs]
    assert not plan_click(runs, repeats=3, limit_s=1.01 * total, device="cpu")["refused"]
    assert plan_click(runs, repeats=3, device="cpu")["limit_s"] == gpu.CLICK_LIMIT_S["cpu"]
    with MEASURE_LOCK:  # calibrating needs the lock: a busy one is said, not waited on forever
        busy = plan_click([("naive", {**c, "N": 256, "H": 3}, False)], repeats=3, device="cpu", wait_s=0)
    assert busy["busy"] and busy["seconds"] is None


def fake_clock(monkeypatch, step: float = 1.0):
    """time.monotonic() in sim.gpu.measure moves `step` seconds at every reading."""
    now = [0.0]

    def monotonic():
        now[0] += step
        return now[0]

    monkeypatch.setattr(gpu, "time", SimpleNamespace(monotonic=monotonic, perf_counter=time.perf_counter))


def test_repetitions_stop_at_the_deadline(monkeypatch, calls):
    estimate_seconds("naive", 1, 1, 64, 16, "float32", repeats=10, device="cpu")  # calibrated on the real clock
    fake_clock(monkeypatch)
    calls.clear()
    m = measure_attention("naive", 1, 1, 64, 16, "float32", repeats=10, device="cpu", limit_s=6)
    assert m.error is None and m.time_ms > 0 and m.peak_bytes is not None
    assert 2 <= len(calls) < 1 + 10  # the warm-up and at least one repetition, not all ten
    assert not MEASURE_LOCK.locked()


def test_a_warm_up_longer_than_the_time_left_stops_the_run(monkeypatch, calls):
    estimate_seconds("naive", 1, 1, 64, 16, "float32", repeats=3, device="cpu")  # calibrated (or found calibrated)
    calls.clear()  # what the measurement itself runs; the calibration may or may not have run just now
    monkeypatch.setattr(gpu, "_call_seconds", lambda run, cuda: (run(), 100.0)[1])  # a call of 100 s
    m = measure_attention("naive", 1, 1, 64, 16, "float32", repeats=3, device="cpu", limit_s=20)
    assert m.error == "over_time" and m.time_ms is None and len(calls) == 1
    assert m.error_params["first_call_s"] == 100.0 and 0 <= m.error_params["left_s"] <= 20
    assert m.error_params["limit_s"] == 20 and not MEASURE_LOCK.locked()


def test_every_error_code_comes_with_its_params():
    refusals = [measure_attention("sdpa_flash", 1, 1, 64, 16, device="cpu"),
                measure_attention("naive", 1, 16, 100_000, 64, "float32", device="cpu")]
    with MEASURE_LOCK:
        refusals.append(measure_attention("naive", 1, 1, 64, 16, "float32", device="cpu", wait_s=0))
    for m in refusals:
        assert set(gpu.ERROR_PARAMS[m.error]) <= set(m.error_params), m.error
    assert [m.error for m in refusals] == ["unavailable", "too_large", "busy"]
