"""Transformer-block lab: what each section computes and draws after a slider change (median), the MoE comparison
reaching collapse (α = 0) against balance (the auxiliary loss and the bias) and its time, and the live frames' cost."""
import argparse
import json
import statistics
import time
from functools import partial

import numpy as np
import plotly.io as pio
import torch

from benchmarks import KeyLabels


def median_ms(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1e3, 1)


def blocks(args: argparse.Namespace) -> None:
    from sim.plots.blocks import (
        activation_figure,
        bars_figure,
        depth_frame,
        init_figure,
        moe_frame,
        norm_figure,
        position_figures,
        rope_figure,
        score_figure,
    )
    from sim.transformers.blocks import (
        KV_KINDS,
        LN_MODES,
        POSITIONS,
        DepthConfig,
        DepthTrainer,
        ffn_module,
        ffn_params,
        init_stats,
        kv_bytes_per_token_layer,
        norm_view,
        position_experiment,
        rope,
        rope_frequencies,
        rope_pairs,
        rope_scores,
        swiglu_hidden,
        vectors,
    )
    from sim.transformers.moe import MODES, MoEConfig, MoETrainer
    from sim.transformers.tasks import lab_task

    labels = KeyLabels()
    out = lambda **kw: print(json.dumps({"bench": "blocks", **kw}))  # noqa: E731

    def norm(kind: str, B: int, T: int, d: int) -> None:
        v = norm_view(kind, B, T, d, (0, 0, 0), 0)
        pio.to_json(norm_figure(v.x, v.y, v.group, labels))

    for kind, shape in (("layer", (2, 3, 4)), ("batch", (4, 6, 8))):
        out(section="norm", case=f"{kind}_{shape}",
            redraw_median_ms=median_ms(partial(norm, kind, *shape), args.repeats), target_ms=300)

    def init(depth: int, width: int) -> None:
        s = init_stats(depth, width, "he", "relu", 0)
        pio.to_json(init_figure(s.acts, s.grads, s.act_std, s.grad_std, labels))

    for depth, width in ((20, 256), (50, 256)):
        out(section="init", case=f"{depth}x{width}",
            redraw_median_ms=median_ms(partial(init, depth, width), args.repeats), target_ms=300)

    def position(d: int, P: int) -> None:
        q, k = vectors(d, 0)
        freqs = rope_frequencies(d).numpy()
        shown = sorted({0, 1, d // 4, d // 2 - 1} & set(range(d // 2)))
        pio.to_json(rope_figure(rope_pairs(q, torch.arange(P)), shown, freqs, labels))
        rope_scores(q, k, 5, 2, [0, 10, 20, 70])
        Q, K = rope(q.expand(P, -1), torch.arange(P)), rope(k.expand(P, -1), torch.arange(P))
        pio.to_json(score_figure((Q @ K.T).numpy(), "", labels))

    out(section="position", case="d64_P64", redraw_median_ms=median_ms(lambda: position(64, 64), args.repeats),
        target_ms=300)
    start = time.perf_counter()
    results = [position_experiment(p, 12, 24) for p in POSITIONS]
    trained_s = time.perf_counter() - start
    pio.to_json(position_figures(results, labels)[0])
    out(section="position", case="three_heads_trained_once_then_cached", seconds=round(trained_s, 2),
        beyond_trained_length={r.pos: round(float(np.mean(r.accuracy[12:])), 3) for r in results})

    def ffn(d: int) -> None:
        h = 4 * d
        counts = [ffn_params("gelu", d, h), ffn_params("swiglu", d, h), ffn_params("swiglu", d, swiglu_hidden(d))]
        [sum(p.numel() for p in ffn_module(k, d, w).parameters()) for k, w in (("gelu", h), ("swiglu", h))]
        x = np.linspace(-4, 4, 161)
        pio.to_json(activation_figure(x, {"GELU": torch.nn.functional.gelu(torch.tensor(x)).numpy()}, labels))
        pio.to_json(bars_figure(["a", "b", "c"], counts, "", ""))

    out(section="ffn", case="d8192", redraw_median_ms=median_ms(lambda: ffn(8192), args.repeats), target_ms=300)

    def kv() -> None:
        per = [kv_bytes_per_token_layer(k, 128, 128, 8, 512, 64, 2) for k in KV_KINDS]
        pio.to_json(bars_figure(list(KV_KINDS), [p * 60 * 32768 for p in per], "", "", log=True))

    out(section="kv", case="deepseek_v2", redraw_median_ms=median_ms(kv, args.repeats), target_ms=300)

    # the MoE comparison as the page plays it: one live run, the three models stepping in turn (labs/blocks/moe.py)
    runs = [MoETrainer(MoEConfig(), mode, alpha=0.01 if mode == "aux" else 0.0, gamma=0.01) for mode in MODES]
    start, reached = time.perf_counter(), None
    while time.perf_counter() - start < 60:
        for tr in runs:
            tr.step(1)
        none, aux, bias = runs
        if (none.steps >= 50 and none.dead_experts() >= 1 and aux.dead_experts() == 0 and bias.dead_experts() == 0
                and aux.imbalance() < 1.5 and bias.imbalance() < 1.5):
            reached = time.perf_counter() - start
            break
    out(section="moe", case="collapse_vs_balance_default", seconds=None if reached is None else round(reached, 2),
        steps=runs[0].steps, target_s=60,
        runs={tr.mode: {"dead_experts": tr.dead_experts(), "imbalance": round(tr.imbalance(), 2),
                        "dropped": round(tr.recent(tr.dropped), 3), "loss": round(tr.recent(tr.loss), 3)}
              for tr in runs})

    def moe_view() -> None:
        json.dumps(moe_frame([tr.view(tr.mode) for tr in runs], labels))

    def moe_tick() -> None:  # a tick: one run's step, then a frame of all three
        runs[0].step(1)
        moe_view()

    ms = median_ms(moe_tick, args.repeats)
    out(section="moe", case="live_tick_1_run_step_then_frame", tick_ms=ms, ticks_per_s_bound=round(1e3 / ms, 1),
        snapshot_ms=median_ms(moe_view, args.repeats))

    task = lab_task("reverse", 5, 16)
    depth = [DepthTrainer(DepthConfig(len(task.vocab), task.block_size, 12, 2, 32, ln), task, 0.01, w)
             for ln in LN_MODES for w in (0, 300)]

    def depth_frame_json() -> None:
        json.dumps(depth_frame([(f"{tr.config.ln}{tr.warmup}", *tr.curve(), tr.norms, tr.init_norms, tr.recent_loss())
                                for tr in depth], labels))

    def depth_tick() -> None:  # a tick: one run's step, then a frame of all four
        depth[2].step(1)
        depth_frame_json()

    ms = median_ms(depth_tick, args.repeats)
    out(section="residual", case="live_tick_1_run_step_then_frame_12_blocks", tick_ms=ms,
        ticks_per_s_bound=round(1e3 / ms, 1), frame_ms=median_ms(depth_frame_json, args.repeats))
    for _ in range(150):
        for tr in depth:
            tr.step(1)
    out(section="residual", case="after_150_steps",
        loss={f"{tr.config.ln}_warmup{tr.warmup}": round(tr.recent_loss(), 3) for tr in depth})
