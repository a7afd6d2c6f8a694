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
