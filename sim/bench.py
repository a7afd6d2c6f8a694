"""Speed benchmarks, one subcommand each: python -m sim.bench engine

Each prints one JSON object per line. A figure is the best of several repeats, as the best run is
the one least disturbed by other processes. Rates come twice: per wall-clock second (what a user
sees on this machine now) and per CPU second of this process (what an unshared machine would give).
"""

import argparse
import json
import time
from collections.abc import Callable


def best_seconds(fn: Callable[[], object], repeats: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """Shortest time of `repeats` calls of fn, measured with `clock`."""
    best = float("inf")
    for _ in range(repeats):
        start = clock()
        fn()
        best = min(best, clock() - start)
    return best


def engine(args: argparse.Namespace) -> None:
    """Training epochs per second of the classification lab's engine, and the boundary grid's cost."""
    from sim.training import ClassifierConfig, Trainer

    configs = {
        "default": ClassifierConfig(),
        "adam": ClassifierConfig(optimizer="adam"),
        "relu_6x8": ClassifierConfig(hidden=(8,) * 6, activation="relu"),
        "spiral3_softmax": ClassifierConfig(dataset="spiral3"),
        "regression_plane": ClassifierConfig(problem="regression", dataset="plane"),
    }
    for name, config in configs.items():
        trainer = Trainer(config)
        trainer.step(5)  # warm-up: first calls allocate
        rates = {
            key: round(args.epochs / best_seconds(lambda: trainer.step(args.epochs), args.repeats, clock), 1)
            for key, clock in (("epochs_per_s", time.perf_counter), ("epochs_per_cpu_s", time.process_time))
        }
        # a diverged trainer stops training, which would make its rate meaningless
        print(json.dumps({"bench": "engine", "config": name, **rates, "diverged": trainer.diverged}))
    trainer = Trainer(configs["default"])
    ms = best_seconds(lambda: trainer.predict_grid(50), args.repeats * 4) * 1e3
    print(json.dumps({"bench": "engine", "predict_grid_50_ms": round(ms, 3)}))


SUBCOMMANDS = {"engine": engine}  # name -> function(args); a new benchmark is a new entry


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m sim.bench", description=__doc__.splitlines()[0])
    parser.add_argument("subcommand", choices=sorted(SUBCOMMANDS))
    parser.add_argument("--epochs", type=int, default=20, help="epochs per timed repeat (engine)")
    parser.add_argument("--repeats", type=int, default=7, help="timed repeats; the best one is reported")
    args = parser.parse_args()
    SUBCOMMANDS[args.subcommand](args)


if __name__ == "__main__":
    main()
