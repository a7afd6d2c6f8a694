"""Speed benchmarks, one subcommand each: python -m sim.bench engine

Each prints one JSON object per line. Figures are the best of several repeats, because a shared
2-core machine is noisy and the best run is the one least disturbed by other processes.
"""

import argparse
import json
import time
from collections.abc import Callable


def best_seconds(fn: Callable[[], object], repeats: int) -> float:
    """Shortest wall time of `repeats` calls of fn."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
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
        seconds = best_seconds(lambda: trainer.step(args.epochs), args.repeats)
        print(json.dumps({"bench": "engine", "config": name, "epochs_per_s": round(args.epochs / seconds, 1)}))
    trainer = Trainer(configs["default"])
    ms = best_seconds(lambda: trainer.predict_grid(50), args.repeats * 4) * 1e3
    print(json.dumps({"bench": "engine", "predict_grid_50_ms": round(ms, 2)}))


SUBCOMMANDS = {"engine": engine}  # name -> function(args); add a benchmark by adding an entry


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m sim.bench", description=__doc__.splitlines()[0])
    parser.add_argument("subcommand", choices=sorted(SUBCOMMANDS))
    parser.add_argument("--epochs", type=int, default=20, help="epochs per timed repeat (engine)")
    parser.add_argument("--repeats", type=int, default=7, help="timed repeats; the best one is reported")
    args = parser.parse_args()
    SUBCOMMANDS[args.subcommand](args)


if __name__ == "__main__":
    main()
