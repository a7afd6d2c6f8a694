"""Language-model lab: BPE training speed, the default tiny GPT's loss against the entropy floor over time, the live
view's cost per frame, the live sweep's duration, and (--sweep) the bundled scaling sweep saved as JSON.

    python -m benchmarks lm                  # BPE, default model, live frame, live sweep
    python -m benchmarks lm --sweep          # also measure the bundled sweep and save it to assets/measurements/lm/
    python -m benchmarks lm --seconds 60     # how long the default model trains
"""
import argparse
import json
import math
import os
import platform
import time
from datetime import UTC, datetime
from pathlib import Path

from benchmarks import KeyLabels, best_seconds


def machine() -> str:
    """The CPU's name and core count (what the bundled sweep is labelled with)."""
    name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{name}, {os.cpu_count()} cores, CPU"


def bpe_speed() -> None:
    """BPE to 512 tokens on 100 kB (half English, half Chinese bytes of the built-in languages)."""
    from sim.language.grammar import grammar
    from sim.language.tokenizer import BPE

    text = grammar("en").sample(50_000, 0) + grammar("zh").sample(17_000, 0)
    text = text.encode("utf-8")[:100_000].decode("utf-8", errors="ignore")
    seconds = best_seconds(lambda: BPE.train(text, 512), 3)
    cpu = best_seconds(lambda: BPE.train(text, 512), 1, time.process_time)
    tok = BPE.train(text, 512)
    print(json.dumps({"bench": "lm", "case": "bpe_512_tokens_100kB", "bytes": len(text.encode("utf-8")),
                      "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2), "merges": len(tok.merges),
                      "target_s": 5}))
    from sim.language.tokenizer import tokens_per_char
    for lang in ("en", "zh"):
        probe = grammar(lang).sample(3000, 9)
        print(json.dumps({"bench": "lm", "case": f"tokens_per_char_{lang}", "value": round(tokens_per_char(tok, probe),
                                                                                            3)}))


def default_model(seconds: float) -> None:
    """The page's default run (built-in English, characters, context 32, 2 layers, 2 heads, width 32, Adam 3e-3):
    validation loss against the entropy floor at checkpoints, and the time to come within 10 %."""
    from labs.lm.schema import SCHEMA
    from sim.language.lm import LMRun, lm_trainer, make_task, synthetic_text

    d = {p.name: p.default for p in SCHEMA}
    text, h = synthetic_text(d["language"], 30_000, d["seed"])  # as the page (labs/lm/page.py SYNTHETIC_CHARS)
    task = make_task(text, d["tokenizer"], d["vocab"], d["context"], h)
    run = LMRun(lm_trainer(task, d["layers"], d["heads"], d["width"], d["lr"], d["t_seed"]))
    floor, start, within, marks = task.loss_floor(), time.perf_counter(), None, [5, 10, 20, 30, 60, 120]
    cpu0 = time.process_time()
    while (elapsed := time.perf_counter() - start) < seconds:
        run.step(d["speed"])
        if within is None and run.last_val() is not None and run.last_val() <= 1.1 * floor:
            within = (round(elapsed, 1), run.trainer.steps, round(time.process_time() - cpu0, 1))
        if marks and elapsed >= marks[0]:
            print(json.dumps({"bench": "lm", "case": "default_model", "after_s": marks.pop(0),
                              "cpu_s": round(time.process_time() - cpu0, 1), "steps": run.trainer.steps,
                              "val_loss": round(run.last_val(), 4), "floor": round(floor, 4),
                              "ratio": round(run.last_val() / floor, 3)}))
    print(json.dumps({"bench": "lm", "case": "default_model_within_10pct", "seconds": within and within[0],
                      "steps": within and within[1], "cpu_seconds": within and within[2], "target_s": 60}))
    return run


def live_frame(run, repeats: int) -> None:
    """What the player does per frame at the page's default speed (steps per frame), then the snapshot as JSON."""
    from labs.lm.schema import SCHEMA
    from sim.plots.lm import live_frame as frame

    labels, speed = KeyLabels(), next(p.default for p in SCHEMA if p.name == "speed")

    def one() -> None:
        run.step(speed)
        view = {"steps": run.trainer.steps, "train": run.trainer.curve(), "val": run.val_curve(),
                "floor": run.task.loss_floor(), "caption": "x"}
        json.dumps(frame(view, labels))

    ms = best_seconds(one, repeats) * 1e3
    print(json.dumps({"bench": "lm", "case": f"live_frame_{speed}_steps", "frame_ms": round(ms, 1),
                      "frames_per_s_bound": round(1e3 / ms, 1), "target_fps": 15}))


def run_sweep(lang: str, budgets, widths) -> dict:
    from sim.language.lm import SWEEP_CONTEXT, make_task, run_record, sweep, synthetic_text

    text, h = synthetic_text(lang, 30_000, 0)
    task = make_task(text, "char", 0, SWEEP_CONTEXT, h)
    start, cpu0, runs = time.perf_counter(), time.process_time(), []
    for r in sweep(task, budgets, widths):
        runs.append(run_record(r))
        print(json.dumps({"bench": "lm", "case": "sweep_run", "budget": r.budget, "params": r.params,
                          "steps": r.steps, "loss": round(r.loss, 4)}), flush=True)
    return {"bench": "lm_sweep", "machine": machine(), "date": datetime.now(UTC).strftime("%Y-%m-%d"),
            "language": lang, "tokenizer": "char", "context": SWEEP_CONTEXT, "floor_per_token": task.loss_floor(),
            "seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu0, "runs": runs}


def lm(args: argparse.Namespace) -> None:
    from sim.language.lm import LIVE_BUDGETS, LIVE_WIDTHS, SWEEP_BUDGETS, SWEEP_WIDTHS, SWEEPS_DIR

    bpe_speed()
    run = default_model(args.seconds)
    live_frame(run, args.repeats)
    live = run_sweep("en", LIVE_BUDGETS, LIVE_WIDTHS)
    print(json.dumps({"bench": "lm", "case": "live_sweep", "runs": len(live["runs"]),
                      "seconds": round(live["seconds"], 1), "cpu_seconds": round(live["cpu_seconds"], 1),
                      "target_s": 180}))
    if args.sweep:
        out = run_sweep("en", SWEEP_BUDGETS, SWEEP_WIDTHS)
        path = SWEEPS_DIR / f"sweep-{out['date']}.json"
        path.write_text(json.dumps(out, indent=1), encoding="utf-8")
        ok = [r for r in out["runs"] if math.isfinite(r["loss"])]
        print(json.dumps({"bench": "lm", "case": "sweep", "runs": len(ok), "seconds": round(out["seconds"], 1),
                          "cpu_seconds": round(out["cpu_seconds"], 1),
                          "saved": str(path.relative_to(SWEEPS_DIR.parents[2]))}))


def main(argv: list[str]) -> None:
    from sim.core.threads import configure_threads

    ap = argparse.ArgumentParser(prog="python -m benchmarks lm", description=__doc__.splitlines()[0])
    ap.add_argument("--sweep", action="store_true", help="measure the bundled scaling sweep and save it")
    ap.add_argument("--seconds", type=float, default=60.0, help="how long the default model trains")
    ap.add_argument("--repeats", type=int, default=7)
    configure_threads()
    lm(ap.parse_args(argv))
