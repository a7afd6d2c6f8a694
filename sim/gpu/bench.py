"""The GPU lab's measurement set (`python -m benchmarks gpu`): every implementation timed, hardware counters next
to the IO simulator's figures, and the two presets. On a machine without CUDA it measures the CPU, at small sizes.
"""
from __future__ import annotations

import datetime
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import asdict

from sim.gpu.measure import DTYPE_BYTES, IMPLS, Measurement, device_info, free_memory, measure_attention, memory_needed
from sim.gpu.memsim import GPUS, attention_io, gemm_rereads

PRESETS = {
    # llm-foundations article, 5.10: T = 100,000 in float32 makes a 10^10-element score matrix, about 40 GB per
    # head; a layer of 16 heads (as GPT-2 medium's) needs S and P for each: 1.28 TB, more than any one GPU holds
    "naive_dies": {"impl": "naive", "B": 1, "H": 16, "N": 100_000, "d": 64, "dtype": "float32", "causal": False},
    # FlashAttention (Dao et al. 2022), Figure 2: GPT-2 medium attention on an A100, forward + backward
    "flash_fig2": {"B": 64, "H": 16, "N": 1024, "d": 64, "dtype": "float16", "causal": False,
                   "paper": {"standard": {"hbm_gb": 40.3, "runtime_ms": 41.7},
                             "flashattention": {"hbm_gb": 4.4, "runtime_ms": 7.3},
                             "note": "A100, forward + backward; measured here: forward, and forward + backward"}},
}
# (block_m, block_n, num_warps, num_stages) tried for the Triton kernel; the fastest is reported with the others
FLASH_CONFIGS = ((64, 64, 4, 2), (128, 64, 4, 3), (128, 128, 8, 3))


def _row(m: Measurement) -> dict:
    return {**asdict(m), "tflops_per_s": m.tflops_per_s}


# An H100's or H200's L2 is two halves, each caching the data the SMs wired to it use: a line SMs of both halves
# read is held twice (NVIDIA's A100 and H100 whitepapers). For the attention kernels, whose every tile is read
# by SMs all over the chip, the L2 holds half its size: what the three-level model is given (measured on an H200:
# naive's HBM bytes at N = 1024, B·H = 16 are 1.20-1.25 × the model's with the whole L2, 0.93-0.97 × with half)
L2_HALVES = 2


def simulated_io(algo: str, c: dict, l2_bytes: int | None, n_sm: int | None) -> dict:
    """The IO model's two-level and three-level (L2: half the device's, see L2_HALVES) figures for one
    configuration, in bytes."""
    common = {"batch_heads": c["B"] * c["H"], "dtype_bytes": DTYPE_BYTES[c["dtype"]],
              "causal": c["causal"], "block_m": c.get("block_m"), "block_n": c.get("block_n"), "max_events": 0}
    two = attention_io(algo, c["N"], c["d"], **common)
    # L2 emptied at each kernel's start, as ncu's --cache-control all does for the measured kernels
    held = l2_bytes and l2_bytes // L2_HALVES
    three = attention_io(algo, c["N"], c["d"], **common, l2_bytes=held, n_sm=n_sm, l2_flush_per_kernel=True)
    rereads = gemm_rereads(c["N"], c["d"], c["B"] * c["H"], DTYPE_BYTES[c["dtype"]]) if algo == "naive" else 0
    return {"source": "simulated · IO model", "hbm_read_bytes": two.hbm_read_bytes,
            "hbm_write_bytes": two.hbm_write_bytes, "l2_model": {
                "l2_bytes": held, "device_l2_bytes": l2_bytes, "n_sm": n_sm,
                "hbm_read_bytes": three.hbm_read_bytes, "hbm_write_bytes": three.hbm_write_bytes,
                # reads served (with a library matmul's tile re-reads) + every byte written
                "l2_traffic_bytes": three.l2_read_bytes + rereads + two.hbm_write_bytes}}


def _versions() -> dict:
    import torch

    from sim.gpu.ncu import find_ncu, ncu_version

    versions = {"torch": torch.__version__, "cuda": torch.version.cuda}
    try:
        import triton

        versions["triton"] = triton.__version__
    except ImportError:
        versions["triton"] = None
    ncu = find_ncu()
    versions["ncu"] = ncu_version(ncu) if ncu else None
    return versions


def _driver() -> str | None:
    if not shutil.which("nvidia-smi"):
        return None
    done = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                          capture_output=True, text=True, timeout=60)
    return done.stdout.strip() or None


def measurement_set(quick: bool = False, log: Callable[[str], None] = print,
                    save: Callable[[dict], None] = lambda report: None) -> dict:
    """Run the whole set; `save` gets the report after each section, so a run cut short keeps what it measured."""
    import torch

    from sim.gpu.ncu import collect, ncu_unusable

    cuda = torch.cuda.is_available()
    info = device_info()
    gpu = GPUS["H200"]  # the L2 modelled on a CPU: an H200's (the device the bundled measurements come from)
    l2, n_sm = (info.l2_bytes, info.cores) if cuda else (gpu.l2_bytes, gpu.n_sm)
    if quick:  # the tests' run, the same on any device: tiny sizes, no counters
        target = {"B": 1, "H": 2, "N": 128, "d": 16, "dtype": "float32"}
        sweep_n, sweep_bh, repeats, flash_configs = (64, 128), (1, 2), 2, FLASH_CONFIGS[:1]
    elif cuda:
        target = {"B": 4, "H": 16, "N": 4096, "d": 64, "dtype": "float16"}
        sweep_n, sweep_bh, repeats, flash_configs = (1024, 4096, 16384), (1, 16), 10, FLASH_CONFIGS
    else:  # the CPU: small sizes, labelled as CPU measurements
        target = {"B": 1, "H": 2, "N": 512, "d": 64, "dtype": "float32"}
        sweep_n, sweep_bh, repeats = (256, 512, 1024, 2048, 4096, 8192), (1, 2), 3
        flash_configs = FLASH_CONFIGS[:1]
    report = {"bench": "gpu", "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
              "device": asdict(info), "driver": _driver(), "versions": _versions(), "quick": quick,
              "modelled_l2": {"l2_bytes": l2, "n_sm": n_sm, "from": "this device" if cuda else gpu.name},
              "results": {}}
    results = report["results"]

    def measure(impl: str, c: dict, **kw) -> Measurement:
        m = measure_attention(impl, c["B"], c["H"], c["N"], c["d"], c["dtype"], c["causal"], repeats=repeats,
                              counters=False, **kw)
        log(f"{impl} {m.config}: {m.time_ms} ms, peak {m.peak_bytes} B {m.error or m.error_params or ''}")
        return m

    unusable: list[str] = []  # why ncu cannot profile on this machine, once a call has shown it

    def counters(impl: str, c: dict) -> dict:
        if not cuda or quick:
            return {"reason": "no_cuda" if not cuda else "quick"}
        if unusable:  # each failing call costs a start of ncu and of Python: seconds the device lease lacks
            return {"reason": f"skipped: {unusable[0]}"}
        found = collect(impl, c)
        log(f"ncu {impl} {c}: {found.values} {found.reason or ''}")
        if found.reason and ncu_unusable(found.reason):
            unusable.append(found.reason)
        return {"source": f"measured · counters (ncu, --cache-control all, {found.kernels} kernels) · {info.name}",
                **(found.values or {"reason": found.reason}),
                "kernels": [{"name": k["name"], **k["metrics"]} for k in found.per_kernel]}

    # 1. Throughput at the target size: our Triton kernel against PyTorch's flash backend, and the rest
    best_flash: dict[bool, dict] = {}
    for causal in (False, True):
        c = {**target, "causal": causal}
        runs = {"sdpa_flash": measure("sdpa_flash", c), "sdpa_math": measure("sdpa_math", c),
                "naive": measure("naive", c), "tiled_torch": measure("tiled_torch", c, block_m=128, block_n=128)}
        flash = [measure("flash_triton", c, block_m=bm, block_n=bn, num_warps=w, num_stages=s)
                 for bm, bn, w, s in flash_configs]
        timed = [m for m in flash if m.time_ms]
        best = min(timed, key=lambda m: m.time_ms) if timed else flash[0]
        best_flash[causal] = {k: best.config[k] for k in ("block_m", "block_n", "num_warps", "num_stages")}
        ours, theirs = best.tflops_per_s, runs["sdpa_flash"].tflops_per_s
        results[f"throughput_causal_{causal}"] = {
            "config": c, "runs": {name: _row(m) for name, m in runs.items()},
            "flash_triton_configs": [_row(m) for m in flash], "flash_triton_best": _row(best),
            "flash_triton_over_sdpa_flash": ours / theirs if ours and theirs else None}
        save(report)

    # 2. HBM bytes of naive against tiled at the target size: measured (ncu) and simulated
    for causal in (False, True):
        c = {**target, "causal": causal}
        tiled = {**c, **best_flash[causal]}
        entry = {"config": c, "flash_config": best_flash[causal],
                 "measured": {"naive": counters("naive", c), "flash_triton": counters("flash_triton", tiled)},
                 "simulated": {"naive": simulated_io("naive", c, l2, n_sm),
                               "tiled": simulated_io("tiled", tiled, l2, n_sm)}}
        if not causal:
            entry["measured"]["sdpa_flash"] = counters("sdpa_flash", c)
        sim_naive, sim_tiled = entry["simulated"]["naive"], entry["simulated"]["tiled"]
        entry["simulated_naive_over_tiled_hbm"] = (
            (sim_naive["hbm_read_bytes"] + sim_naive["hbm_write_bytes"])
            / (sim_tiled["hbm_read_bytes"] + sim_tiled["hbm_write_bytes"]))
        naive_m, tiled_m = entry["measured"]["naive"], entry["measured"]["flash_triton"]
        if "hbm_read_bytes" in naive_m and "hbm_read_bytes" in tiled_m:
            entry["measured_naive_over_tiled_hbm"] = (
                (naive_m["hbm_read_bytes"] + naive_m["hbm_write_bytes"])
                / (tiled_m["hbm_read_bytes"] + tiled_m["hbm_write_bytes"]))
        results[f"hbm_causal_{causal}"] = entry
        save(report)

    # 3. Time, peak memory, and measured HBM and L2 bytes against the simulator's three levels, as N grows
    results["n_sweep"] = []
    # the torch tiled loop launches ~16 kernels per block: seconds per call at N = 16384 on a GPU, so not swept there
    swept = [impl for impl in IMPLS if not (cuda and impl == "tiled_torch")]
    for N in sweep_n:
        c = {**target, "B": sweep_bh[0], "H": sweep_bh[1], "N": N, "causal": False}
        tiled = {**c, **best_flash[False]}
        blocks = {"flash_triton": best_flash[False], "tiled_torch": {"block_m": 128, "block_n": 128}}
        results["n_sweep"].append({
            "config": c, "flash_config": best_flash[False],
            "runs": {impl: _row(measure(impl, c, **blocks.get(impl, {}))) for impl in swept},
            "measured": {"naive": counters("naive", c), "flash_triton": counters("flash_triton", tiled)},
            "simulated": {"naive": simulated_io("naive", c, l2, n_sm),
                          "tiled": simulated_io("tiled", tiled, l2, n_sm)}})
        save(report)

    # 4. The presets: the seed's N = 100,000 (checked, never run), and the FlashAttention paper's Figure 2 setting
    dies = PRESETS["naive_dies"]
    need = memory_needed(dies["impl"], dies["B"], dies["H"], dies["N"], dies["d"], dies["dtype"], dies["causal"])
    free = free_memory(cuda)
    results["preset_naive_dies"] = {"config": dies, **need, "free_bytes": free,
                                    "refused": need["needed_bytes"] > free}
    fig2 = PRESETS["flash_fig2"]
    c = {k: fig2[k] for k in ("B", "H", "N", "d", "dtype", "causal")}
    reduced = quick or not cuda  # the paper's batch takes minutes on a CPU: the same sequences, fewer of them
    if quick:
        c |= {"B": 1, "H": 2, "N": 256}
    elif not cuda:
        c |= {"B": 1, "H": 4, "dtype": "float32"}  # float16 matmuls are slow on a CPU
    tiled = {**c, **best_flash[False]}
    results["preset_flash_fig2"] = {
        "config": c, "paper": fig2["paper"], "paper_config": {k: fig2[k] for k in ("B", "H", "N", "d", "dtype")},
        "reduced": reduced,
        "runs": {"naive": _row(measure("naive", c)), "sdpa_flash": _row(measure("sdpa_flash", c)),
                 "flash_triton": _row(measure("flash_triton", c, **best_flash[False])),
                 "sdpa_math": _row(measure("sdpa_math", c))},
        "runs_backward": {impl: _row(measure(impl, c, backward=True))
                          for impl in ("naive", "sdpa_flash", "sdpa_math")},
        "measured": {"naive": counters("naive", c), "flash_triton": counters("flash_triton", tiled)},
        "simulated": {"naive": simulated_io("naive", c, l2, n_sm), "tiled": simulated_io("tiled", tiled, l2, n_sm)}}
    save(report)
    return report


TARGETS = {"flash_over_sdpa": 0.8, "naive_over_tiled_hbm": 10.0, "within": 0.25, "sweep_n": (1024, 4096, 16384)}


def _bytes(counts: dict, *keys: str) -> int | None:
    """The sum of keys in a counters or simulator dict; None when any is missing (not measured)."""
    values = [counts.get(k) for k in keys]
    return None if any(v is None for v in values) else sum(values)


def targets(report: dict) -> list[dict]:
    """The issue's device targets, read from a measurement set: value, target, and met (None: not measured).

    - flash_triton's throughput ≥ 0.8 × sdpa_flash's at the target size, causal and not;
    - measured HBM bytes of naive ≥ 10 × flash_triton's at that size;
    - measured HBM and L2 bytes within ±25 % of the simulator's three-level figures, for N in 1024, 4096, 16384.
    """
    results, rows = report["results"], []
    for causal in (False, True):
        value = results.get(f"throughput_causal_{causal}", {}).get("flash_triton_over_sdpa_flash")
        rows.append({"target": f"flash_triton / sdpa_flash throughput, causal={causal}", "value": value,
                     "at_least": TARGETS["flash_over_sdpa"],
                     "met": None if value is None else value >= TARGETS["flash_over_sdpa"]})
    value = results.get("hbm_causal_False", {}).get("measured_naive_over_tiled_hbm")
    rows.append({"target": "measured naive / flash_triton HBM bytes", "value": value,
                 "at_least": TARGETS["naive_over_tiled_hbm"],
                 "met": None if value is None else value >= TARGETS["naive_over_tiled_hbm"]})
    for entry in results.get("n_sweep", []):
        N = entry["config"]["N"]
        if N not in TARGETS["sweep_n"]:
            continue
        for impl, algo in (("naive", "naive"), ("flash_triton", "tiled")):
            measured, model = entry["measured"][impl], entry["simulated"][algo]["l2_model"]
            pairs = {"HBM": (_bytes(measured, "hbm_read_bytes", "hbm_write_bytes"),
                             _bytes(model, "hbm_read_bytes", "hbm_write_bytes")),
                     "L2": (_bytes(measured, "l2_bytes"), _bytes(model, "l2_traffic_bytes"))}
            for level, (got, simulated) in pairs.items():
                ratio = got / simulated if got is not None and simulated else None
                rows.append({"target": f"{impl} {level} bytes measured / simulated (three levels), N={N}",
                             "value": ratio, "within": TARGETS["within"],
                             "met": None if ratio is None else abs(ratio - 1) <= TARGETS["within"]})
    return rows
