"""Optimisers lab: the engine's cost of a redraw (every optimiser's path on a surface), and the other sections."""
import argparse
import json
import time
from functools import partial

import numpy as np

from benchmarks import best_seconds


def optimizers(args: argparse.Namespace) -> None:
    """Per surface: the 8 optimisers × 500 steps (wall and CPU ms, target ≤ 50 ms); then trace, phase grid,
    Newton–Schulz and schedules."""
    from sim.optim.optimizers import (
        OPTIMIZERS,
        SCHEDULES,
        SURFACES,
        newton_schulz_steps,
        path,
        phase_grid,
        schedule,
        trace,
    )

    steps = 500

    def all_paths(surf) -> None:
        for opt in OPTIMIZERS:
            path(opt, surf, surf.start, steps)

    for name, surf in SURFACES.items():
        wall = best_seconds(partial(all_paths, surf), args.repeats) * 1e3
        cpu = best_seconds(partial(all_paths, surf), args.repeats, time.process_time) * 1e3
        print(json.dumps({"bench": "optimizers", "surface": name, "optimizers": len(OPTIMIZERS), "steps": steps,
                          "noise": surf.noise, "paths_ms": round(wall, 2), "paths_cpu_ms": round(cpu, 2),
                          "target_ms": 50}))
    surf = SURFACES["quadratic"]
    extras = {
        "trace_adam_500_ms": lambda: trace("adam", surf, surf.start, steps),
        "phase_grid_200x200_ms": lambda: phase_grid(1.0, 100.0, np.linspace(1e-3, 0.05, 200),
                                                    np.linspace(0.0, 0.999, 200)),
        "newton_schulz_64x256_ms": lambda: newton_schulz_steps(np.random.default_rng(0).standard_normal((64, 256))),
        "schedules_4x5000_ms": lambda: [schedule(s, 5000, 1e-3, warmup=100) for s in SCHEDULES],
    }
    print(json.dumps({"bench": "optimizers", **{k: round(best_seconds(fn, args.repeats) * 1e3, 2)
                                                for k, fn in extras.items()}}))
    paths_redraw(args)


def paths_redraw(args: argparse.Namespace) -> None:
    """What the paths section computes and sends on a slider change: every optimiser's path, both figures (as the
    JSON the browser gets; the loss chart as st.altair_chart turns it into a Vega-Lite spec) and each update formula
    at the last step (target ≤ 300 ms)."""
    import plotly.io as pio
    from streamlit.elements.vega_charts import _convert_altair_to_vega_lite_spec as to_spec

    from benchmarks import KeyLabels
    from sim.optim.optimizers import OPTIMIZERS, SURFACES, diverged_at, path, trace
    from sim.plots.optimizers import loss_chart, losses, paths_figure, update_latex

    names = {o: o for o in OPTIMIZERS}

    def redraw(surf, steps: int) -> None:
        runs = {o: path(o, surf, surf.start, steps, 0, **h) for o, h in OPTIMIZERS.items()}
        ends = {o: diverged_at(p) for o, p in runs.items()}
        pio.to_json(paths_figure(surf, runs, names, KeyLabels(), ends))
        gaps = {o: losses(surf, p) for o, p in runs.items()}
        to_spec(loss_chart({o: g[0] for o, g in gaps.items()}, names, KeyLabels(), ends,
                           log=all(g[1] for g in gaps.values())))  # what st.altair_chart sends
        for o, h in OPTIMIZERS.items():
            steps_done = trace(o, surf, surf.start, steps, 0, **h)
            if steps_done:
                update_latex(o, steps_done[-1], h)

    for surf_name in ("quadratic", "rosenbrock"):
        for steps in (200, 500):
            fn = partial(redraw, SURFACES[surf_name], steps)
            fn()  # warm-up
            print(json.dumps({"bench": "optimizers", "case": "paths_redraw", "surface": surf_name, "steps": steps,
                              "optimizers": len(OPTIMIZERS),
                              "redraw_ms": round(best_seconds(fn, min(args.repeats, 5)) * 1e3, 1),
                              "target_ms": 300}))


def race_costs(args: argparse.Namespace) -> None:
    """The race on a real model (sim.optim.race, as the page builds it): per racer the measured ms per step (median, the
    update alone beside it) and the state bytes; then what one live tick costs with every racer at the page's
    default speed (RaceRun.advance), and one frame (RaceRun.frame, then race_frame of it as the page draws it)."""
    from benchmarks import KeyLabels
    from sim.optim.optimizers import RACERS
    from sim.optim.race import RaceConfig, RaceRun
    from sim.optim.race import race as make_race
    from sim.plots.optimizers import race_frame

    racers = make_race(RACERS, RaceConfig(), {})
    for r in racers:
        r.step(200)
        print(json.dumps({"bench": "optimizers_race", "racer": r.name, "params": r.n_params,
                          "ms_per_step": round(r.ms_per_step(), 3), "update_ms": round(r.update_ms(), 3),
                          "state_bytes": r.state_bytes(), "bytes_per_param": round(r.state_bytes() / r.n_params, 2),
                          "loss_after_200": round(r.last_loss(), 4)}))
    speed = 2  # labs/optimizers/schema.py r_speed's default
    run = RaceRun(racers)

    def tick() -> None:
        run.advance(speed)

    def one_frame() -> dict:
        return race_frame(run.frame()["racers"], KeyLabels(), KeyLabels())

    run.advance(1500)  # a long history, as after a minute of playing
    print(json.dumps({"bench": "optimizers_race", "racers": len(racers), "speed": speed,
                      "tick_ms": round(best_seconds(tick, args.repeats) * 1e3, 2),
                      "frame_ms": round(best_seconds(one_frame, args.repeats) * 1e3, 2),
                      "frame_kb": round(len(json.dumps(one_frame())) / 1024, 1)}))


def race_browser(args: argparse.Namespace) -> None:
    """Frames per second the browser completes while the race (and the schedules race) plays, counted in headless
    Chromium by benchmarks/browser.py (the live canvas's own counters, pixels compared); target ≥ 15."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for section, query in (("race", "section=race"), ("schedules", "section=schedules&s_steps=10000")):
        done = subprocess.run([sys.executable, "benchmarks/browser.py", "--live-only", "--seconds", "10", "--path",
                               f"optimizers?lang=en&{query}", "--play", "^Play$"], cwd=root, capture_output=True,
                              text=True, timeout=300)
        lines = done.stdout.strip().splitlines()
        figures = json.loads(lines[-1]) if done.returncode == 0 and lines else {"error": done.stderr[-500:]}
        print(json.dumps({"bench": "optimizers_race_browser", "section": section, **figures, "target_fps": 15}))
