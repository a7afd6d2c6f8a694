"""Hardware counters of one attention call from Nsight Compute (ncu), run in a subprocess.

ncu runs this module as its program (`python -m sim.gpu.ncu IMPL B H N d DTYPE ...`): the driver below makes the
inputs, runs the call once outside any range (Triton compilation, cuBLAS heuristics), then once inside an NVTX
range; ncu profiles only the kernels inside it, with every cache flushed before each kernel
(`--cache-control all`), and reports the metrics below per kernel. They are summed over every kernel.
"""
from __future__ import annotations

import argparse
import csv
import glob
import io
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

METRICS = {  # ncu metric -> Measurement field (two metrics of one field are summed)
    "dram__bytes_read.sum": "hbm_read_bytes",
    "dram__bytes_write.sum": "hbm_write_bytes",
    # the bytes between the L2 and the SMs, as the IO model counts them: what the crossbar brought to the SMs
    # (L2 → L1 and shared memory) and what they sent to be written. Not lts__t_bytes: the L2's own tag lookups
    # also count data crossing between its two halves (about a third more for the naive kernels on an H200),
    # and a tile several SMs ask for at once is looked up once (a third of the bytes delivered for the Triton
    # kernel at N = 1024)
    "l1tex__m_xbar2l1tex_read_bytes.sum": "l2_bytes",
    "l1tex__m_l1tex2xbar_write_bytes.sum": "l2_bytes",
    "lts__t_bytes.sum": "l2_tag_bytes",
    "l1tex__t_bytes.sum": "l1_bytes",
}
NVTX_RANGE = "attention"
MAX_KERNELS = 2000  # ncu replays every kernel: more launches than this take minutes
UNITS = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12}  # ncu's units are decimal
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Counters:
    values: dict[str, float] | None  # Measurement field -> bytes summed over kernels; None when not measured
    kernels: int  # kernels profiled
    reason: str | None = None  # why there are no values: "no_ncu", "not_permitted", "too_many_kernels", "failed: ..."
    per_kernel: tuple[dict, ...] = ()  # each kernel's name, grid, block and metrics (ncu's names), in launch order


def find_ncu() -> str | None:
    """ncu on PATH, else in the usual install folders."""
    found = shutil.which("ncu")
    candidates = sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu") + glob.glob("/usr/local/cuda*/bin/ncu"))
    return found or (candidates[-1] if candidates else None)


def ncu_version(ncu: str) -> str | None:
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    return next((line.strip() for line in out.splitlines() if line.strip().startswith("Version")), None)


def parse_kernels(text: str) -> list[dict]:
    """Each kernel of ncu's `--csv` output (one row per kernel and metric): its name, grid, block and metrics.

    Lines before the header (ncu's ==PROF== messages) are skipped. Values may carry thousands separators; byte
    units other than bytes (without `--print-units base`) are converted; other units (sectors, ns) are kept.
    """
    lines = text.splitlines()
    start = next((n for n, line in enumerate(lines) if '"Metric Name"' in line and '"Metric Value"' in line), None)
    if start is None:
        return []
    kernels: dict[str, dict] = {}
    for row in csv.DictReader(io.StringIO("\n".join(line for line in lines[start:] if line.startswith('"')))):
        kernel = kernels.setdefault(row["ID"], {"name": row["Kernel Name"], "grid": row.get("Grid Size"),
                                                "block": row.get("Block Size"), "metrics": {}})
        try:
            value = float(row["Metric Value"].replace(",", "")) * UNITS.get(row["Metric Unit"], 1)
        except ValueError:  # a metric ncu could not read ("n/a")
            continue
        kernel["metrics"][row["Metric Name"]] = value
    return list(kernels.values())


def parse_csv(text: str) -> tuple[dict[str, float], int]:
    """Each metric of METRICS summed over every kernel (as a Measurement field), and the number of kernels."""
    return totals(parse_kernels(text))


def totals(kernels: list[dict]) -> tuple[dict[str, float], int]:
    """parse_kernels' kernels summed as Measurement fields (METRICS), and their number."""
    summed: dict[str, float] = {}
    for kernel in kernels:
        for name, value in kernel["metrics"].items():
            if name in METRICS:
                summed[METRICS[name]] = summed.get(METRICS[name], 0.0) + value
    return summed, len(kernels)


# what ncu prints when it cannot profile on this machine at all (no counter permission, a sandbox without the
# profiler's library): no later call would fare better
UNUSABLE = ("no_ncu", "not_permitted", "Failed to initialize the profiler", "LibraryNotLoaded")


def ncu_unusable(reason: str) -> bool:
    """Whether a call's failure says that ncu cannot profile anything here, as opposed to this one call failing."""
    return any(sign in reason for sign in UNUSABLE)


def kernels_estimate(impl: str, config: dict) -> int:
    """Kernel launches of one call: the torch tiled loop launches about 16 per block, the others a handful."""
    if impl != "tiled_torch":
        return 8
    t_r, t_c = -(-config["N"] // config["block_m"]), -(-config["N"] // config["block_n"])
    return 16 * (t_r * t_c // 2 + t_r if config["causal"] else t_r * t_c)


def collect(impl: str, config: dict, timeout_s: float = 120, metrics: tuple[str, ...] = tuple(METRICS)) -> Counters:
    """Profile one call of impl at config (B, H, N, d, dtype, causal, block sizes) under ncu: METRICS summed, and
    each kernel's `metrics` (METRICS by default; one the chip lacks fails the profile, naming it)."""
    ncu = find_ncu()
    if ncu is None:
        return Counters(None, 0, "no_ncu")
    if kernels_estimate(impl, config) > MAX_KERNELS:
        return Counters(None, 0, "too_many_kernels")
    args = [impl] + [str(config[key]) for key in ("B", "H", "N", "d", "dtype")]
    args += ["--block-m", str(config.get("block_m", 64)), "--block-n", str(config.get("block_n", 64)),
             "--num-warps", str(config.get("num_warps", 4)), "--num-stages", str(config.get("num_stages", 2))]
    args += ["--causal"] if config["causal"] else []
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "ncu.csv")
        command = [ncu, "--nvtx", "--nvtx-include", f"{NVTX_RANGE}/", "--metrics", ",".join(metrics),
                   "--cache-control", "all", "--clock-control", "none", "--csv", "--print-units", "base",
                   "--log-file", log, sys.executable, "-m", "sim.gpu.ncu", *args]
        try:
            done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s,
                                  env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                      filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))})
        except subprocess.TimeoutExpired:
            return Counters(None, 0, f"failed: timeout after {timeout_s:.0f} s")
        text = Path(log).read_text(encoding="utf-8", errors="replace") if os.path.exists(log) else ""
    messages = text + done.stdout + done.stderr
    if "ERR_NVGPUCTRPERM" in messages:
        return Counters(None, 0, "not_permitted")
    per_kernel = parse_kernels(text)
    values, kernels = totals(per_kernel)
    if done.returncode or not kernels:
        last = [line for line in messages.splitlines() if line.strip()][-3:]
        return Counters(None, 0, f"failed: exit {done.returncode}: {' | '.join(last)[-300:]}")
    return Counters(values, kernels, per_kernel=tuple(per_kernel))


def main() -> None:
    """The driver ncu runs: one warm-up call, then one call inside the NVTX range ncu profiles."""
    import torch

    from sim.gpu.calls import attention_call, make_inputs

    parser = argparse.ArgumentParser(description="one attention call inside an NVTX range, for ncu")
    parser.add_argument("impl")
    for name in ("B", "H", "N", "d"):
        parser.add_argument(name, type=int)
    parser.add_argument("dtype")
    parser.add_argument("--causal", action="store_true")
    for name in ("--block-m", "--block-n", "--num-warps", "--num-stages"):
        parser.add_argument(name, type=int)
    a = parser.parse_args()
    q, k, v = make_inputs(a.B, a.H, a.N, a.d, a.dtype, "cuda")

    def run():
        return attention_call(a.impl, q, k, v, a.causal, a.block_m, a.block_n, a.num_warps, a.num_stages)

    run()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(NVTX_RANGE)
    run()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()


if __name__ == "__main__":
    main()
