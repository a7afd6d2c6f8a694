"""Shape-chain lab: the server-side redraw after a slider change."""
import argparse
import json
import time
from functools import partial

from benchmarks import best_seconds


def shapes(args: argparse.Namespace) -> None:
    """Server-side redraw of the shape chain lab after a slider change: trace, figures, table, the FLOPs split and
    training memory, JSON for the browser."""
    import plotly.io as pio

    from sim.plots.shapes import flow_figure, kv_figure, step_table
    from sim.transformers.shapes import (
        PRESETS,
        ShapeConfig,
        flops_split,
        kv_cache_options,
        trace_model,
        training_memory,
    )

    configs = {**PRESETS, "max": ShapeConfig(batch=64, seq_len=131_072, d_model=16_384, n_head=128, n_kv_head=8,
                                             d_ff=65_536, vocab_size=262_144, n_layer=128)}
    words = ("input", "params", "flops", "bytes", "view_note", "module", "op", "in", "out", "code", "kv_heads", "mqa",
             "mha")
    labels = {**{w: w for w in words}, "block": "{path} × {n}"}
    trace_model(configs["notes"])  # warm-up: the first trace imports and builds the meta kernels

    def redraw(c: ShapeConfig) -> None:
        trace = trace_model(c)
        figs = [flow_figure(trace.steps, [(c.batch, c.seq_len)], labels, block=(f"{trace.block}.0", c.n_layer)),
                kv_figure(kv_cache_options(c), c.n_kv_head, labels)]
        step_table(trace.steps, labels).to_dict()
        flops_split(c, trace.totals["flops"])
        training_memory(trace.totals["params"], "mixed")
        for fig in figs:
            pio.to_json(fig)

    for name, c in configs.items():
        trace_ms = best_seconds(partial(trace_model, c), args.repeats) * 1e3
        redraw_ms = best_seconds(partial(redraw, c), args.repeats) * 1e3
        cpu_ms = best_seconds(partial(redraw, c), args.repeats, time.process_time) * 1e3
        print(json.dumps({"bench": "shapes", "config": name, "trace_ms": round(trace_ms, 1),
                          "redraw_ms": round(redraw_ms, 1), "redraw_cpu_ms": round(cpu_ms, 1),
                          "target_ms": 300}))
