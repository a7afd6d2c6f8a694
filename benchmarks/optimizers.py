"""Optimisers lab: the engine's cost of a redraw (every optimiser's path on a surface), and the other sections."""
import argparse
import json
import time

import numpy as np

from benchmarks import best_seconds


def optimizers(args: argparse.Namespace) -> None:
    """Per surface: the 8 optimisers × 500 steps (wall and CPU ms, target ≤ 50 ms); then trace, phase grid,
    Newton–Schulz and schedules."""
    from sim.optimizers import (OPTIMIZERS, SCHEDULES, SURFACES, newton_schulz_steps, path, phase_grid, schedule,
                                trace)

    steps = 500
    for name, surf in SURFACES.items():
        def all_paths() -> None:
            for opt in OPTIMIZERS:
                path(opt, surf, surf.start, steps)

        wall = best_seconds(all_paths, args.repeats) * 1e3
        cpu = best_seconds(all_paths, args.repeats, time.process_time) * 1e3
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
    JSON the browser gets) and each update formula at the last step (target ≤ 300 ms)."""
    import plotly.io as pio

    from benchmarks import KeyLabels
    from sim.optimizers import OPTIMIZERS, SURFACES, diverged_at, path, trace
    from sim.plots.optimizers import loss_figure, losses, paths_figure, update_latex

    names = {o: o for o in OPTIMIZERS}
    for surf_name in ("quadratic", "rosenbrock"):
        surf = SURFACES[surf_name]
        for steps in (200, 500):
            def redraw() -> None:
                runs = {o: path(o, surf, surf.start, steps, 0, **h) for o, h in OPTIMIZERS.items()}
                ends = {o: diverged_at(p) for o, p in runs.items()}
                pio.to_json(paths_figure(surf, runs, names, KeyLabels(), ends))
                gaps = {o: losses(surf, p) for o, p in runs.items()}
                pio.to_json(loss_figure({o: g[0] for o, g in gaps.items()}, names, KeyLabels(), ends,
                                        log=all(g[1] for g in gaps.values())))
                for o, h in OPTIMIZERS.items():
                    steps_done = trace(o, surf, surf.start, steps, 0, **h)
                    if steps_done:
                        update_latex(o, steps_done[-1], h)

            redraw()  # warm-up
            print(json.dumps({"bench": "optimizers", "case": "paths_redraw", "surface": surf_name, "steps": steps,
                              "optimizers": len(OPTIMIZERS),
                              "redraw_ms": round(best_seconds(redraw, min(args.repeats, 5)) * 1e3, 1),
                              "target_ms": 300}))
