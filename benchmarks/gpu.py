"""GPU lab: the IO simulator, the page redraw, attention on the CPU, and the measurement set."""
import argparse
import json
import time
from functools import partial

from benchmarks import KeyLabels, best_seconds


def memsim(args: argparse.Namespace) -> None:
    """IO simulator: seconds for the whole report at N = 16384 (target < 0.5 s), naive and tiled, with and without
    L2."""
    from sim.gpu.memsim import GPUS, attention_io

    h200 = GPUS["H200"]
    for algo in ("naive", "tiled"):
        for l2 in (None, h200.l2_bytes):
            for batch_heads, causal in ((1, False), (1, True), (64, False)):
                config = {"batch_heads": batch_heads, "causal": causal, "sram_bytes": h200.smem_per_sm_bytes,
                          "l2_bytes": l2, "n_sm": h200.n_sm}
                seconds = best_seconds(partial(attention_io, algo, 16384, 64, **config), args.repeats)
                print(json.dumps({"bench": "memsim", "algo": algo, "N": 16384, "d": 64, **config,
                                  "seconds": round(seconds, 4), "target_s": 0.5}))


def gpu_page(args: argparse.Namespace) -> None:
    """Server-side redraw of the GPU lab after a change (nothing cached): the summary (both algorithms, two levels and
    L2), each view's figures as JSON, and the animation's payload."""
    import plotly.io as pio

    from sim.gpu.memsim import GPUS, IOReport, roofline
    from sim.gpu.sweeps import Chip, io_report, lab_reports, n_sweep, sram_sweep
    from sim.plots.gpu import bytes_vs_n_figure, bytes_vs_sram_figure, roofline_figure
    from sim.plots.memsim_anim import animation_payload

    h200 = GPUS["H200"]
    chip = Chip(64 * 1024, h200.l2_bytes, h200.n_sm)
    labels = KeyLabels()
    configs = {"default": (1024, 1, 16, 2), "naive_dies": (100_000, 1, 16, 4), "flash_fig2": (1024, 64, 16, 2),
               "N=16384": (16384, 1, 16, 2)}

    def page_parts(N: int, B: int, H: int, elem: int) -> dict:
        """The page's parts for one configuration (N, B, H, bytes per element), each a call to time."""
        config = {"batch_heads": B * H, "dtype_bytes": elem, "causal": False, "block_m": None, "block_n": None}

        def all_reports() -> dict:  # what the page summarises (sim.gpu.sweeps.lab_reports, uncached)
            lab = lab_reports(N, 64, config, chip)
            return {**{a: r for a, r in lab.two_level.items() if isinstance(r, IOReport)},
                    **{f"{a}_l2": r for a, r in lab.with_l2.items() if r}}

        def sweep_figures() -> None:
            points = n_sweep(sorted({*(2**k for k in range(8, 18)), N}), 64, config, chip)
            sram = sram_sweep([2**k * 1024 for k in range(2, 11)], N, 64, B * H, elem, False)
            pio.to_json(bytes_vs_n_figure(points, labels))
            pio.to_json(bytes_vs_sram_figure(sram, 1, labels))

        def roof() -> None:
            points = {k: roofline(r, h200.hbm_bytes_per_s, h200.peak_flops) for k, r in all_reports().items()}
            pio.to_json(roofline_figure(h200, points, labels))

        def animation() -> None:
            json.dumps(animation_payload(io_report("tiled", N, 64, config, chip, True, animate=True), labels))

        return {"summary": all_reports, "sweeps": sweep_figures, "roofline": roof, "animation": animation}

    for name, (N, B, H, elem) in configs.items():
        row = {"bench": "gpu_page", "config": name, "N": N, "B": B, "H": H}
        for part, fn in page_parts(N, B, H, elem).items():
            row[f"{part}_ms"] = round(best_seconds(fn, min(args.repeats, 3)) * 1e3, 1)
        print(json.dumps(row | {"target_ms": 300}))


def attention_cpu(args: argparse.Namespace) -> None:
    """CPU time and peak memory of naive and tiled attention at N = 8192 (target: tiled peak <= 1/8 of naive's)."""
    from sim.gpu.measure import measure_attention

    runs = {impl: measure_attention(impl, 1, 1, 8192, 64, "float32", block_m=128, block_n=128,
                                    repeats=min(args.repeats, 3), counters=False, device="cpu")
            for impl in ("naive", "tiled_torch")}
    for impl, m in runs.items():
        print(json.dumps({"bench": "attention_cpu", "impl": impl, **m.config, "time_ms": m.time_ms,
                          "peak_bytes": m.peak_bytes, "error": m.error, "source": m.source}))
    naive, tiled = runs["naive"].peak_bytes, runs["tiled_torch"].peak_bytes
    print(json.dumps({"bench": "attention_cpu", "tiled_over_naive_peak": tiled / naive if naive and tiled else None,
                      "target": 1 / 8}))


def gpu(args: argparse.Namespace) -> None:
    """The GPU lab's measurement set into one JSON file (--out): device, versions, date, configs, results."""
    from pathlib import Path

    from sim.gpu.bench import measurement_set, targets

    if not args.out:
        raise SystemExit("python -m benchmarks gpu needs --out FILE.json")

    def save(report: dict) -> None:
        Path(args.out).write_text(json.dumps(report, indent=1), encoding="utf-8")

    start = time.perf_counter()
    report = measurement_set(args.quick, log=lambda line: print(line, flush=True), save=save)
    for row in targets(report):  # the device targets; "met": null where nothing was measured (no CUDA)
        print(json.dumps({"bench": "gpu", **row}))
    print(json.dumps({"bench": "gpu", "out": args.out, "seconds": round(time.perf_counter() - start, 1)}))


# the traffic split by who asks (SMs' loads and stores, the link between the L2's two halves) and per kernel: why a
# measured level differs from the IO model (python -m benchmarks gpu_ncu_detail --out FILE.json, on a CUDA device)
DETAIL_METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum", "l1tex__t_bytes.sum",
                  "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum",
                  "lts__t_sectors_srcunit_ltcfabric.sum", "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum",
                  "l1tex__m_xbar2l1tex_read_bytes.sum", "l1tex__m_l1tex2xbar_write_bytes.sum",
                  "gpu__time_duration.sum", "launch__grid_size", "launch__occupancy_limit_blocks")


def gpu_ncu_detail(args: argparse.Namespace) -> None:
    """Per-kernel counters of naive and flash_triton at B 1, H 16, d 64, fp16 for N 1024 and 4096 (and naive causal
    at 1024), with the metrics above; a metric this chip lacks is dropped and the profile run again."""
    from pathlib import Path

    from sim.gpu.ncu import collect

    if not args.out:
        raise SystemExit("python -m benchmarks gpu_ncu_detail needs --out FILE.json")
    flash = {"block_m": 128, "block_n": 64, "num_warps": 4, "num_stages": 3}
    base = {"B": 1, "H": 16, "d": 64, "dtype": "float16", "causal": False}
    runs = [("naive", {**base, "N": n}) for n in (1024, 4096)] + [("naive", {**base, "N": 1024, "causal": True})]
    runs += [("flash_triton", {**base, **flash, "N": n}) for n in (1024, 4096)]
    metrics, rows = list(DETAIL_METRICS), []
    for impl, config in runs:
        for _ in range(4):
            found = collect(impl, config, metrics=tuple(metrics))
            missing = [m for m in metrics if found.reason and m.rsplit(".", 1)[0] in found.reason]
            if not missing:
                break
            metrics = [m for m in metrics if m not in missing]
        rows.append({"impl": impl, "config": config, "reason": found.reason, "kernels": list(found.per_kernel)})
        print(json.dumps({"bench": "gpu_ncu_detail", "impl": impl, "N": config["N"], "causal": config["causal"],
                          "reason": found.reason, "kernels": [k["name"][:60] for k in found.per_kernel]}))
        Path(args.out).write_text(json.dumps({"metrics": metrics, "runs": rows}, indent=1), encoding="utf-8")
