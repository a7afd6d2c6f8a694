"""Attention measurement: CPU runs, the memory guard, the lock, ncu's CSV and command line, the bench's JSON."""
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import sim.gpu.measure as gpu
import sim.gpu.ncu as ncu
from sim.gpu.measure import MEASURE_LOCK, attention_flops, measure_attention, memory_needed
from sim.gpu.memsim import attention_io

ROOT = Path(__file__).resolve().parent.parent

# ncu --csv --print-units base (the "details" page: one row per kernel and metric), written by hand from its format
NCU_CSV = '''==PROF== Connected to process 4242 (/usr/bin/python3.12)
==PROF== Profiling "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn" - 0: 0%....50%....100% - 1 pass
==PROF== Profiling "softmax_warp_forward" - 1: 0%....50%....100% - 1 pass
==PROF== Disconnected from process 4242
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","4242","python3.12","127.0.0.1","ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn","1","7","(256, 1, 1)","(32, 32, 64)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","1,048,576"
"0","4242","python3.12","127.0.0.1","ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn","1","7","(256, 1, 1)","(32, 32, 64)","0","9.0","Command line profiler metrics","dram__bytes_write.sum","byte","2,097,152"
"0","4242","python3.12","127.0.0.1","ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn","1","7","(256, 1, 1)","(32, 32, 64)","0","9.0","Command line profiler metrics","l1tex__t_bytes.sum","byte","8,388,608"
"0","4242","python3.12","127.0.0.1","ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn","1","7","(256, 1, 1)","(32, 32, 64)","0","9.0","Command line profiler metrics","l1tex__m_xbar2l1tex_read_bytes.sum","byte","4,194,304"
"1","4242","python3.12","127.0.0.1","softmax_warp_forward","1","7","(128, 1, 1)","(1024, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","2,097,152"
"1","4242","python3.12","127.0.0.1","softmax_warp_forward","1","7","(128, 1, 1)","(1024, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_write.sum","byte","2,097,152"
"1","4242","python3.12","127.0.0.1","softmax_warp_forward","1","7","(128, 1, 1)","(1024, 1, 1)","0","9.0","Command line profiler metrics","l1tex__t_bytes.sum","byte","4,194,304"
"1","4242","python3.12","127.0.0.1","softmax_warp_forward","1","7","(128, 1, 1)","(1024, 1, 1)","0","9.0","Command line profiler metrics","l1tex__m_l1tex2xbar_write_bytes.sum","byte","4,194,304"
"1","4242","python3.12","127.0.0.1","softmax_warp_forward","1","7","(128, 1, 1)","(1024, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","5,120"
'''  # noqa: E501  (ncu's lines as it writes them)


def test_ncu_csv_is_summed_over_every_kernel():
    values, kernels = ncu.parse_csv(NCU_CSV)
    assert kernels == 2
    assert values == {"hbm_read_bytes": 3 * 2**20, "hbm_write_bytes": 4 * 2**20, "l1_bytes": 12 * 2**20,
                      "l2_bytes": 8 * 2**20}


def test_ncu_csv_in_scaled_units_and_without_a_header():
    scaled = NCU_CSV.replace('"byte","1,048,576"', '"Mbyte","1.5"').replace('"byte","2,097,152"', '"Kbyte","2"')
    values, _ = ncu.parse_csv(scaled)
    assert values["hbm_read_bytes"] == 1.5e6 + 2e3 and values["hbm_write_bytes"] == 4e3
    assert ncu.parse_csv("==PROF== Disconnected\n") == ({}, 0)


CONFIG = {"B": 1, "H": 2, "N": 128, "d": 64, "dtype": "float16", "causal": True, "block_m": 64, "block_n": 64}


def _fake_ncu(tmp_path, body):
    """An executable named ncu that runs `body` (sh) with ncu's arguments."""
    path = tmp_path / "ncu"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_counters_come_from_the_log_file_ncu_writes(tmp_path, monkeypatch):
    sample = tmp_path / "sample.csv"
    sample.write_text(NCU_CSV)
    args = tmp_path / "args"
    # like ncu: write the CSV to the path after --log-file; keep the command line to check it
    fake = _fake_ncu(tmp_path, f'echo "$@" > {args}\nwhile [ "$1" != "--log-file" ]; do shift; done\n'
                               f'cp {sample} "$2"\n')
    monkeypatch.setattr(ncu, "find_ncu", lambda: fake)
    found = ncu.collect("naive", CONFIG)
    assert found.reason is None and found.kernels == 2 and found.values["hbm_read_bytes"] == 3 * 2**20
    command = args.read_text()
    for part in ("--nvtx --nvtx-include attention/", "--cache-control all", "--csv", "--print-units base",
                 "dram__bytes_read.sum,dram__bytes_write.sum,l1tex__m_xbar2l1tex_read_bytes.sum,"
                 "l1tex__m_l1tex2xbar_write_bytes.sum,lts__t_bytes.sum,l1tex__t_bytes.sum",
                 "-m sim.gpu.ncu naive 1 2 128 64 float16 --block-m 64 --block-n 64", "--causal"):
        assert part in command


def test_counters_say_why_they_are_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(ncu, "find_ncu", lambda: None)
    assert ncu.collect("naive", CONFIG).reason == "no_ncu"
    denied = _fake_ncu(tmp_path, 'echo "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission" >&2\nexit 1\n')
    monkeypatch.setattr(ncu, "find_ncu", lambda: denied)
    assert ncu.collect("naive", CONFIG) == ncu.Counters(None, 0, "not_permitted")
    big = {**CONFIG, "N": 16384, "causal": False}  # 16 kernels per block, 65,536 blocks
    assert ncu.collect("tiled_torch", big).reason == "too_many_kernels"
    broken = _fake_ncu(tmp_path, 'echo "==ERROR== something else" >&2\nexit 3\n')
    monkeypatch.setattr(ncu, "find_ncu", lambda: broken)
    assert ncu.collect("naive", CONFIG).reason.startswith("failed: exit 3")
    # which reasons mean no later call can fare better (the measurement set then stops calling ncu)
    sandboxed = _fake_ncu(tmp_path, 'echo "==ERROR== Failed to initialize the profiler: LibraryNotLoaded" >&2\n'
                                    'exit 1\n')
    monkeypatch.setattr(ncu, "find_ncu", lambda: sandboxed)
    assert ncu.ncu_unusable(ncu.collect("naive", CONFIG).reason)
    assert ncu.ncu_unusable("no_ncu") and ncu.ncu_unusable("not_permitted")
    assert not ncu.ncu_unusable("too_many_kernels") and not ncu.ncu_unusable("failed: exit 3: something else")


@pytest.mark.parametrize("impl", ["naive", "tiled_torch", "sdpa_math"])
def test_cpu_measurement(impl):
    B, H, N, d = 1, 2, 1024, 32  # N×N large next to the resident set's page-sized steps
    m = measure_attention(impl, B, H, N, d, "float32", block_m=64, block_n=64, repeats=1, device="cpu")
    assert m.error is None and m.time_ms > 0 and m.source.startswith("measured · CPU · ")
    assert m.memory_source.startswith("measured · CPU (peak RSS) · ")
    assert m.flops == 4 * B * H * N * N * d and m.tflops_per_s > 0
    assert m.counters_reason == "no_cuda" and m.hbm_read_bytes is None and m.counters_source is None
    matrix = B * H * N * N * 4
    if impl == "naive":
        assert m.peak_bytes >= 2 * matrix  # S and P, both N×N, alive together
    elif impl == "tiled_torch":
        # a few 64×64 blocks and the output: O(N). The resident set is the process's: another thread of a test
        # worker (a finished test's live run pausing) may grow it meanwhile, so the least of three is compared
        least = min(measure_attention(impl, B, H, N, d, "float32", block_m=64, block_n=64, repeats=1,
                                      counters=False, device="cpu").peak_bytes for _ in range(3))
        assert least < matrix / 4


def test_tiled_peak_memory_grows_linearly_naive_quadratically():
    def peaks(impl):
        return [measure_attention(impl, 1, 1, N, 32, "float32", block_m=128, block_n=128, repeats=2,
                                  counters=False, device="cpu").peak_bytes for N in (1024, 4096)]

    naive, tiled = peaks("naive"), peaks("tiled_torch")
    assert naive[1] / naive[0] > 12  # ×16 for N×4
    assert tiled[1] / tiled[0] < 6  # ×4 for the output, the blocks stay the same


@pytest.mark.parametrize("impl, reason", [("flash_triton", "flash_triton_needs_cuda"),
                                          ("sdpa_flash", "sdpa_flash_needs_cuda")])
def test_cuda_only_implementations_say_so_on_the_cpu(impl, reason):
    m = measure_attention(impl, 1, 1, 64, 16, device="cpu")
    assert (m.error, m.error_params, m.time_ms) == ("unavailable", {"reason": reason}, None)


def test_the_seeds_100k_matrix_is_refused_with_the_arithmetic(monkeypatch):
    need = memory_needed("naive", 1, 1, 100_000, 64, "float32", False)
    assert need["matrix_bytes_per_head"] == 40 * 10**9  # the seed's 40 GB score matrix
    assert need["needed_bytes"] == 2 * 40 * 10**9 + 100_000 * 64 * 4  # S and P, and the output
    monkeypatch.setattr(gpu, "free_memory", lambda cuda: 16 * 10**9)
    m = measure_attention("naive", 1, 1, 100_000, 64, "float32", device="cpu")
    assert m.error == "too_large" and m.time_ms is None
    assert m.error_params == {**need, "free_bytes": 16 * 10**9}
    assert memory_needed("sdpa_math", 1, 1, 1000, 64, "float16", False)["bytes_per_element"] == 4  # upcast
    assert memory_needed("flash_triton", 2, 3, 1000, 64, "float16", True) == {"needed_bytes": 2 * 3 * 1000 * 64 * 2,
                                                                               "output_bytes": 2 * 3 * 1000 * 64 * 2}


def test_out_of_memory_is_caught_and_reported(monkeypatch):
    def explode(*args, **kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 80.00 GiB")

    monkeypatch.setattr(gpu, "attention_call", explode)
    m = measure_attention("naive", 1, 1, 64, 16, "float32", device="cpu")
    assert m.error == "out_of_memory" and m.error_params["needed_bytes"] > 0
    assert not MEASURE_LOCK.locked()


def test_one_measurement_at_a_time():
    with MEASURE_LOCK:
        m = measure_attention("naive", 1, 1, 64, 16, "float32", device="cpu", wait_s=0)
    assert m.error == "busy"


def test_flops_convention():
    assert attention_flops(2, 3, 100, 64, False) == 4 * 2 * 3 * 100**2 * 64
    assert attention_flops(2, 3, 100, 64, True) == 2 * 2 * 3 * 100**2 * 64


def test_bench_gpu_quick_writes_the_measurement_set(tmp_path):
    out = tmp_path / "gpu.json"
    done = subprocess.run([sys.executable, "-m", "benchmarks", "gpu", "--quick", "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["bench"] == "gpu" and report["quick"] and report["date"]
    assert report["versions"]["torch"] == torch.__version__ and "triton" in report["versions"]
    results = report["results"]
    cuda = torch.cuda.is_available()
    for causal in (False, True):
        runs = results[f"throughput_causal_{causal}"]["runs"]
        assert runs["naive"]["time_ms"] > 0
        assert runs["naive"]["source"].startswith("measured · CUDA events" if cuda else "measured · CPU")
        if not cuda:
            assert runs["sdpa_flash"]["error"] == "unavailable"
            assert results[f"throughput_causal_{causal}"]["flash_triton_best"]["error"] == "unavailable"
        assert results[f"hbm_causal_{causal}"]["measured"]["naive"] == {"reason": "quick" if cuda else "no_cuda"}
    entry = results["hbm_causal_False"]
    c = entry["config"]
    naive = entry["simulated"]["naive"]
    N, d, elem, bh = c["N"], c["d"], 4, c["B"] * c["H"]
    assert naive["hbm_read_bytes"] == (3 * N * d + 2 * N * N) * elem * bh
    tiled = attention_io("tiled", N, d, batch_heads=bh, dtype_bytes=elem, block_m=entry["flash_config"]["block_m"],
                         block_n=entry["flash_config"]["block_n"])
    assert entry["simulated"]["tiled"]["hbm_read_bytes"] == tiled.hbm_read_bytes
    assert entry["simulated_naive_over_tiled_hbm"] == pytest.approx(
        (naive["hbm_read_bytes"] + naive["hbm_write_bytes"]) / tiled.hbm_bytes)
    assert [row["config"]["N"] for row in results["n_sweep"]] == [64, 128]
    dies = results["preset_naive_dies"]
    assert dies["refused"] == (dies["needed_bytes"] > dies["free_bytes"])
    assert dies["matrix_bytes_per_head"] == 4 * 10**10
    assert math.isclose(results["preset_flash_fig2"]["paper"]["standard"]["hbm_gb"], 40.3)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_measurement_and_counters():
    B, H, N, d = 1, 8, 4096, 64
    matrix = B * H * N * N * 2  # one fp16 N×N matrix over all heads: 268 MB, far larger than L2
    naive = measure_attention("naive", B, H, N, d, "float16", repeats=3)
    assert naive.error is None and naive.source.startswith("measured · CUDA events · ")
    assert naive.peak_bytes >= 2 * matrix and naive.time_ms > 0
    if naive.counters_source:  # ncu present and permitted: S and P were written to HBM
        assert naive.hbm_write_bytes > 1.8 * matrix and naive.l2_bytes > naive.hbm_write_bytes
    else:
        assert naive.counters_reason
    flash = measure_attention("flash_triton", B, H, N, d, "float16", repeats=3, counters=False)
    assert flash.error is None and flash.peak_bytes < matrix / 8  # the output and nothing N×N
    assert measure_attention("sdpa_flash", 1, 1, 64, 64, "float32").error_params == {"reason": "sdpa_flash_needs_half"}


def test_targets_read_the_measurement_set():
    from sim.gpu.bench import targets

    model = {"l2_model": {"hbm_read_bytes": 800, "hbm_write_bytes": 200, "l2_traffic_bytes": 4000}}
    report = {"results": {
        "throughput_causal_False": {"flash_triton_over_sdpa_flash": 0.85},
        "throughput_causal_True": {"flash_triton_over_sdpa_flash": 0.7},
        "hbm_causal_False": {"measured_naive_over_tiled_hbm": 12.0},
        "n_sweep": [{"config": {"N": 1024},
                     "measured": {"naive": {"reason": "not_permitted"},
                                  "flash_triton": {"hbm_read_bytes": 1000, "hbm_write_bytes": 240, "l2_bytes": 2900}},
                     "simulated": {"naive": model, "tiled": model}},
                    {"config": {"N": 2048}, "measured": {}, "simulated": {}}]}}  # not a target size: ignored
    rows = {r["target"]: r for r in targets(report)}
    assert [r["met"] for r in list(rows.values())[:3]] == [True, False, True]
    assert rows["flash_triton HBM bytes measured / simulated (three levels), N=1024"]["value"] == 1.24
    assert rows["flash_triton HBM bytes measured / simulated (three levels), N=1024"]["met"] is True  # +24 %
    assert rows["flash_triton L2 bytes measured / simulated (three levels), N=1024"]["met"] is False  # -27.5 %
    assert rows["naive HBM bytes measured / simulated (three levels), N=1024"]["met"] is None  # no counters
    assert len(rows) == 3 + 4



# the measure view's figures (sim.gpu.report), each against a hand computation

def test_run_config_rounds_blocks_down_to_powers_of_two():
    from sim.gpu.report import run_config
    v = {"B": 2, "H": 3, "N": 512, "d": 64, "dtype": "float16", "causal": True, "block_m": 96, "block_n": 48,
         "sram_kib": 192}
    # 96 = 0b1100000 -> 64, 48 = 0b110000 -> 32
    assert run_config(v, cuda=True) == {"B": 2, "H": 3, "N": 512, "d": 64, "dtype": "float16", "causal": True,
                                        "block_m": 64, "block_n": 32}
    assert run_config(v, cuda=False)["dtype"] == "float32"  # a CPU measures float32
    small = run_config(v | {"block_m": 8, "block_n": 17}, cuda=True)
    assert (small["block_m"], small["block_n"]) == (16, 16)  # tl.dot's tiles: 16 at least
    none_fit = run_config(v | {"block_m": 0, "block_n": 0, "sram_kib": 0}, cuda=True)  # no tile fits: 64 × 64
    assert (none_fit["block_m"], none_fit["block_n"]) == (64, 64)


def test_fig2_config_is_the_papers_setting_reduced_on_a_cpu():
    from sim.gpu.report import fig2_config
    assert fig2_config(True) == {"B": 64, "H": 16, "N": 1024, "d": 64, "dtype": "float16", "causal": False,
                                 "block_m": 128, "block_n": 128}
    assert fig2_config(False) == {"B": 1, "H": 4, "N": 1024, "d": 64, "dtype": "float32", "causal": False,
                                  "block_m": 128, "block_n": 128}


def test_simulated_traffic_is_the_io_simulators_two_level_bytes():
    from sim.gpu.report import SIMULATED, simulated_traffic
    c = {"B": 2, "H": 2, "N": 256, "d": 32, "dtype": "float16", "causal": False, "block_m": 64, "block_n": 64}
    naive, tiled = simulated_traffic(c)
    nd, nn = 4 * 256 * 32 * 2, 4 * 256 * 256 * 2  # one N × d matrix and one N × N matrix, 4 heads, 2 bytes
    # naive: Q, K, V read, S and P written and read back, O written
    assert (naive["hbm_read_bytes"], naive["hbm_write_bytes"]) == (3 * nd + 2 * nn, 2 * nn + nd)
    # tiled: Q read once, K and V once per block of 64 rows (4 of them), O written once
    assert (tiled["hbm_read_bytes"], tiled["hbm_write_bytes"]) == (nd + 4 * 2 * nd, nd)
    assert [(r["impl"], r["model"], r["source"], r["N"], r["B"], r["H"], r["l2_bytes"]) for r in (naive, tiled)] \
        == [(impl, "two_level", SIMULATED, 256, 2, 2, None) for impl in ("naive", "tiled")]


def test_time_left_reserves_the_later_runs_estimates():
    from sim.gpu.report import time_left
    guard = {"limit_s": 20.0, "runs": [{"seconds": 4.0}, {"seconds": 3.0}, {"seconds": 5.0}]}
    assert time_left(guard, 0, 1.5) == 20.0 - 1.5 - (3.0 + 5.0)
    assert time_left(guard, 2, 2.0) == 18.0  # the last run: nothing reserved
    assert time_left(guard, 0, 19.0) == 0.0  # never below 0


def test_guard_summary_lists_the_longest_and_sums_the_rest():
    from sim.gpu.report import guard_summary
    runs = [{"impl": str(i), "seconds": s} for i, s in enumerate((1.0, 0.0, 9.0, 4.0, 2.5))]
    shown, more, seconds = guard_summary({"runs": runs}, 2)
    assert [e["seconds"] for e in shown] == [9.0, 4.0] and (more, seconds) == (2, 2.5 + 1.0)  # the 0 s run left out
    assert guard_summary({"runs": runs}, 6)[1:] == (0, 0)


def test_arithmetic_figures_count_the_matrix_elements():
    from sim.gpu.report import arithmetic_figures
    need = memory_needed("naive", 1, 16, 100_000, 64, "float32", False)
    figures = arithmetic_figures({**need, "free_bytes": 10**9})
    assert figures["elements"] == 100_000 * 100_000 and figures["free_bytes"] == 10**9
    assert arithmetic_figures({"needed_bytes": 5, "free_bytes": 1}) is None  # out of memory: no arithmetic


def test_table_rows_from_runs_and_the_simulators_bytes():
    from sim.gpu.report import table_rows
    run = {"impl": "naive", "N": 256, "B": 2, "H": 3, "dtype": "float32", "backward": True, "time_ms": 1.5,
           "tflops_per_s": 0.2, "peak_bytes": 1024, "hbm_read_bytes": None, "hbm_write_bytes": None, "l2_bytes": None,
           "l1_bytes": None, "source": "measured · CPU · x", "memory_source": "peak RSS", "counters_source": None,
           "error": None}
    sim = {"impl": "tiled", "model": "two_level", "N": 256, "B": 2, "H": 3, "hbm_read_bytes": 10,
           "hbm_write_bytes": 20, "l2_bytes": None, "source": "simulated · IO model"}
    measured, refused, simulated = table_rows([run, run | {"error": "busy", "backward": False}], [sim])
    assert measured == {"impl": "naive", "N": 256, "bh": 6, "dtype": "float32", "pass": "fwd_bwd", "time": 1.5,
                        "tflops": 0.2, "peak": 1024, "hbm_read": None, "hbm_write": None, "l2": None, "l1": None,
                        "source": "measured · CPU · x + peak RSS", "note": "counters"}
    assert (refused["pass"], refused["note"]) == ("fwd", "error")
    assert simulated == {"impl": "tiled", "N": 256, "bh": 6, "pass": "fwd", "hbm_read": 10, "hbm_write": 20,
                         "l2": None, "source": "simulated · IO model", "note": "model"}
