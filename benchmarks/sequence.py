"""Sequence-models lab: how soon the memory race shows its ordering (the RNN fails at the far distances, the LSTM and
the transformer hold them) over seeds, when Mamba holds them too, what a step and a frame cost, and the sections'
redraws.

    python -m benchmarks sequence --seeds 20 [--rounds 3000]   # the race at the page's defaults, seed by seed
    python -m benchmarks sequence --costs                      # step, frame and drawing costs, section redraws

A round is one optimizer step of each of the four models; the page plays `m_speed` × 30 steps a second, i.e.
m_speed × 7.5 rounds a second when the server keeps up, so at the default speed 5 a minute of play is 2,250 rounds.
"""
import argparse
import json
import statistics
import time

import numpy as np

from benchmarks import KeyLabels
from sim.core.threads import configure_threads
from sim.sequence.memory import HOLDS, KINDS

ROUNDS_PER_S = 30 / len(KINDS)  # rounds a second at speed 1: 30 steps a second, the models in turn


def far_accuracy(frame: dict) -> dict[str, float]:
    """Each model's live accuracy over the far half of the distances, (D/2, D], as the live view draws it."""
    D = frame["distance"]
    return {r["kind"]: float(np.nanmean(r["by_distance"][D // 2:])) for r in frame["runs"]}


def ordered(acc: dict[str, float]) -> bool:
    """The race's ordering: the LSTM and the transformer hold the far distances, the RNN does not."""
    return acc["lstm"] >= HOLDS and acc["attn"] >= HOLDS and acc["rnn"] < HOLDS


def race_of_seed(seed: int, rounds: int, every: int = 25) -> dict:
    from labs.sequence.memory import bench_spec

    spec, _ = bench_spec(seed)
    run = spec.build()
    first, mamba, cpu, acc = None, None, 0.0, {}
    while run.steps < rounds * len(KINDS):
        t = time.thread_time()
        run.advance(every * len(KINDS))
        cpu += time.thread_time() - t
        acc = far_accuracy(run.frame())
        if first is None and ordered(acc):
            first = (run.steps // len(KINDS), round(cpu, 1))
        if mamba is None and acc["mamba"] >= HOLDS:
            mamba = run.steps // len(KINDS)
    speed = spec.speed
    return {"seed": seed, "first_round": first and first[0], "first_cpu_s": first and first[1],
            "first_play_s": first and round(first[0] / (ROUNDS_PER_S * speed), 1), "holds_at_end": ordered(acc),
            "mamba_first_round": mamba, "mamba_holds_at_end": acc["mamba"] >= HOLDS,
            "end_far_accuracy": {k: round(v, 2) for k, v in acc.items()}, "cpu_s": round(cpu, 1)}


def costs() -> None:
    from labs.sequence.memory import bench_spec, drawn, frame_labels

    spec, _ = bench_spec()
    run = spec.build()
    run.advance(300)
    per = {}
    for tr in run.trainers:
        t = time.thread_time()
        tr.step(30)
        per[tr.config.kind] = round((time.thread_time() - t) / 30 * 1e3, 2)
    frames = []
    for _ in range(20):
        t = time.perf_counter()
        f = run.frame()
        frames.append(time.perf_counter() - t)
    labels = KeyLabels(frame_labels())
    f = {**run.frame(), "step": run.steps, "run": 1, "n": run.steps}
    draws = []
    for _ in range(20):
        t = time.perf_counter()
        out = drawn(f, labels)
        draws.append(time.perf_counter() - t)
    print(json.dumps({"step_ms_cpu": per, "frame_ms": round(statistics.median(frames) * 1e3, 2),
                      "draw_ms": round(statistics.median(draws) * 1e3, 2), "drawn_bytes": len(json.dumps(out))}))
    print(json.dumps({"redraw_ms_median": redraws(run)}))
    print(json.dumps({"step_ms_cpu": other_steps()}))


def other_steps() -> dict[str, float]:
    """CPU ms of one optimizer step of each model of the sparse section's trained window and of the encoder-decoder
    section, at the page's defaults."""
    from labs.sequence.encdec import encdec_spec
    from labs.sequence.memory import window_spec
    from labs.sequence.schema import SCHEMA

    v = {p.name: p.default for p in SCHEMA}
    out = {}
    for spec in (window_spec(v), encdec_spec(v)):
        run = spec.build()
        run.advance(20)
        for tr in run.trainers:
            t = time.thread_time()
            tr.step(20)
            name = getattr(tr, "style", None) or tr.config.kind
            out[f"{spec.key}.{name}"] = round((time.thread_time() - t) / 20 * 1e3, 2)
    return out


def redraws(run) -> dict[str, float]:
    """What a slider change recomputes in each section at the page's defaults (figures built, not sent), median ms:
    the why section's gradients, gates and figures; the sparse masks, reach and figures (the shares are cached);
    the Mamba section's worked scan, memory curve and table; the encoder-decoder section's loss table, the two
    models' answers to the default blank and prefix, and the masks figure."""
    from labs.sequence.schema import SCHEMA
    from labs.sequence.views import pattern_masks
    from sim.plots.sequence import gates_figure, gradient_figure, masks_figure, reach_figure, scan_rows, state_figure
    from sim.sequence import masks
    from sim.sequence.memory import gradients_through_time, lstm_gates
    from sim.ssm.cost import kv_cache_numbers, mamba_state_numbers, worked_scan

    v = {p.name: p.default for p in SCHEMA}
    labels = KeyLabels(share="{share}", title="{layers}")

    def why():
        grads = {tr.config.kind: (tr.config.kind, gradients_through_time(tr)) for tr in run.trainers}
        _, gates, key_at = lstm_gates(run.trainer("lstm"))
        gradient_figure(grads, key_at, labels).to_json()
        gates_figure(gates, key_at, labels).to_json()

    def sparse():
        ms = pattern_masks(v["s_T"], v["s_w"], v["s_gap"], v["s_globals"], v["s_random"], v["s_seed"], v["s_causal"])
        masks_figure(ms, labels).to_json()
        reach_figure({p: masks.receptive_field(m, v["s_layers"]) for p, m in ms.items()}, v["s_layers"],
                     labels).to_json()

    def mamba():
        scan_rows(worked_scan(v["z_seed"], v["z_steps"]), labels)
        tokens = [2 ** k for k in range(21)]
        state_figure(tokens, mamba_state_numbers(v["z_layers"], v["z_width"]),
                     [kv_cache_numbers(v["z_layers"], v["z_width"], n) for n in tokens], labels).to_json()

    from labs.sequence.encdec import DEFAULT_BLANK, DEFAULT_PREFIX, encdec_spec
    from sim.sequence import encdec

    ed = encdec_spec(v).build()
    ed.advance(200)

    def encoder_decoder():
        trs = {tr.style: tr for tr in ed.trainers}
        encdec.cross_losses(trs)
        left, right = encdec.parse_blank(ed.trainers[0].task, DEFAULT_BLANK["en"])
        for tr in ed.trainers:
            encdec.fill_blank(tr, left, right)
            encdec.continue_text(tr, DEFAULT_PREFIX["en"])
        masks_figure(encdec.masks(12), labels).to_json()

    out = {}
    for name, fn in (("why", why), ("sparse", sparse), ("mamba", mamba), ("encdec", encoder_decoder)):
        times = []
        for _ in range(5):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        out[name] = round(statistics.median(times) * 1e3, 1)
    return out


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks sequence", description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=0, help="seeds 0..N-1 of the race at the page's defaults")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=3000, help="rounds per seed (3,000: 80 s of play at speed 5)")
    parser.add_argument("--costs", action="store_true", help="step, frame and drawing costs")
    args = parser.parse_args(argv)
    configure_threads()
    if args.costs:
        costs()
    results = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        results.append(race_of_seed(seed, args.rounds))
        print(json.dumps(results[-1]), flush=True)
    if results:
        held = [r for r in results if r["first_round"] is not None]
        median = statistics.median([r["first_play_s"] for r in held]) if held else None
        print(json.dumps({"seeds": len(results), "ordering_seen": len(held),
                          "ordering_within_60s_play": sum(r["first_play_s"] <= 60 for r in held),
                          "holds_at_end": sum(r["holds_at_end"] for r in results),
                          "median_first_play_s": median,
                          "mamba_held": sum(r["mamba_first_round"] is not None for r in results),
                          "mamba_holds_at_end": sum(r["mamba_holds_at_end"] for r in results),
                          "mamba_median_first_round": statistics.median(
                              [r["mamba_first_round"] for r in results if r["mamba_first_round"] is not None] or
                              [None])}))
