"""K sessions of one live lab on one server process, driven through the code the page runs.

Each session opens its run as the page does (the lab's live_spec, ui.live_run's shared runs: sim.core.live), presses
Play, and a "browser" thread per session does what the page's fragment does: takes the newest frames
(sim.core.live.Cursor.frames, waiting ui.live_run.WAIT_S) and draws them in the page's words (the lab's `draw`).
--same: every session has the lab's default settings and seed (a class following the teacher); --distinct: session i
has seed i (a class exploring). Prints one JSON line per session and a summary: steps (epochs for classification)
a second shown, frames a second delivered, the CPU used and the process's memory.

    python -m benchmarks classroom --lab lm --sessions 30 --same [--seconds 20]
"""
import argparse
import importlib
import json
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sim.core.threads import configure_threads  # noqa: E402

# lab -> module with bench_spec(seed, **kw) -> (LiveSpec, draw(frames)): the page's own settings and drawing, and kw
LABS = {"lm": ("labs.lm.training", {}), "classification": ("labs.classification.live", {}),
        "regression": ("labs.regression.live", {}), "generalization": ("labs.generalization.live", {}),
        "generalization_reg": ("labs.generalization.live", {"name": "reg"}),
        "generalization_noise": ("labs.generalization.live", {"name": "noise"}),
        "optimizers_race": ("labs.optimizers.race", {}), "optimizers_sched": ("labs.optimizers.sched_race", {}),
        "attention": ("labs.attention.training", {}), "attention_compare": ("labs.attention.compare", {}),
        "blocks_depth": ("labs.blocks.live", {}), "blocks_moe": ("labs.blocks.moe", {}),
        "sequence": ("labs.sequence.memory", {}), "foundations_embed": ("labs.foundations.embeddings", {}),
        "assistant_data": ("labs.assistant.data", {})}


def lab_spec(lab: str, seed: int | None = None) -> tuple:
    """(LiveSpec, draw) of `lab`'s run at the page's defaults, seed: another training seed (None: the default)."""
    module, kw = LABS[lab]
    return importlib.import_module(module).bench_spec(seed=seed, **kw)


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS:"))


def browser(cursor, draw, stop: threading.Event, counts: dict) -> None:
    """What a playing fragment does, over and over: wait for frames, draw them."""
    from ui.i18n import language
    from ui.live_run import WAIT_S

    seen = -1
    with language("en"):
        while not stop.is_set():
            got = cursor.frames(after=seen, timeout=WAIT_S)
            new = [(s, f) for s, f in got if s > seen]
            if new:
                seen = new[-1][0]
                draw([{**f, "step": s, "run": cursor.serial, "n": s} for s, f in new])
                counts["frames"] += len(new)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks classroom", description=__doc__.splitlines()[0])
    parser.add_argument("--lab", choices=sorted(LABS), default="lm")
    parser.add_argument("--sessions", type=int, default=10)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--same", dest="mode", action="store_const", const="same")
    mode.add_argument("--distinct", dest="mode", action="store_const", const="distinct")
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args(argv)
    args.mode = args.mode or "same"
    configure_threads()
    from ui import live_run

    before = rss_mb()
    cursors, draws = [], []
    for i in range(args.sessions):
        spec, draw = lab_spec(args.lab, None if args.mode == "same" else i)
        cursors.append(live_run.RUNS.open(spec))
        draws.append(draw)
    built = rss_mb()
    stop = threading.Event()
    counts = [{"frames": 0} for _ in cursors]
    watchers = [threading.Thread(target=browser, args=(c, d, stop, n))
                for c, d, n in zip(cursors, draws, counts, strict=True)]
    starts = [c.pos for c in cursors]
    t0, cpu0 = time.perf_counter(), time.process_time()
    for c, w in zip(cursors, watchers, strict=True):
        c.play()
        w.start()
    time.sleep(args.seconds)
    stop.set()
    for c, w in zip(cursors, watchers, strict=True):
        w.join()
        c.pause()
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    live_run.RUNS.scheduler.close()
    rows = []
    for i, (c, n, s0) in enumerate(zip(cursors, counts, starts, strict=True)):
        rows.append({"session": i, "steps_per_s": round((c.pos - s0) / wall, 1), "computed": c.traj.head,
                     "compute_s": round(c.traj.compute_s, 2),
                     "frames_per_s": round(n["frames"] / wall, 1), "asked_steps_per_s": c.rate})
        print(json.dumps(rows[-1]))
    rates = [r["steps_per_s"] for r in rows]
    print(json.dumps({
        "lab": args.lab, "sessions": args.sessions, "mode": args.mode, "seconds": round(wall, 1),
        "runs_computed": len(live_run.RUNS), "steps_per_s_min": min(rates),
        "steps_per_s_median": statistics.median(rates), "steps_per_s_max": max(rates),
        "steps_per_s_total": round(sum(rates), 1),
        "within_20pct_of_mean": all(abs(r - statistics.mean(rates)) <= 0.2 * statistics.mean(rates) for r in rates),
        "frames_per_s_min": min(r["frames_per_s"] for r in rows), "cpu_cores_used": round(cpu / wall, 2),
        "rss_mb_before": round(before, 1), "rss_mb_per_session": round((built - before) / args.sessions, 2),
        "rss_mb_after": round(rss_mb(), 1),
    }))


if __name__ == "__main__":
    main()
