"""Classification lab: training epochs per second of its engine per configuration, and the boundary grid."""
import argparse
import json
import time
from functools import partial

from benchmarks import best_seconds


def engine(args: argparse.Namespace) -> None:
    """Training epochs per second of the classification lab's engine, and the boundary grid's cost."""
    from sim.core.data import FEATURES
    from sim.nets.training import ClassifierConfig, Trainer

    configs = {
        "default": ClassifierConfig(),
        "adam": ClassifierConfig(optimizer="adam"),
        "relu_6x8": ClassifierConfig(hidden=(8,) * 6, activation="relu"),
        "spiral3_softmax": ClassifierConfig(dataset="spiral3"),
        "regression_plane": ClassifierConfig(problem="regression", dataset="plane"),
        # the heaviest the lab allows: every feature, 6 × 8, 2,000 points, one point per update
        "heaviest": ClassifierConfig(hidden=(8,) * 6, activation="relu", features=FEATURES, n=2000, train_ratio=0.9,
                                     batch_size=1, optimizer="adam", regularization="l2", reg_rate=0.001,
                                     dropout=0.1),
    }
    for name, config in configs.items():
        trainer = Trainer(config)
        trainer.step(5)  # warm-up: first calls allocate
        rates = {
            key: round(args.epochs / best_seconds(partial(trainer.step, args.epochs), args.repeats, clock), 1)
            for key, clock in (("epochs_per_s", time.perf_counter), ("epochs_per_cpu_s", time.process_time))
        }
        # a diverged trainer stops training, which would make its rate meaningless
        print(json.dumps({"bench": "engine", "config": name, **rates, "diverged": trainer.diverged}))
    trainer = Trainer(configs["default"])
    ms = best_seconds(lambda: trainer.predict_grid(50), args.repeats * 4) * 1e3
    print(json.dumps({"bench": "engine", "predict_grid_50_ms": round(ms, 3)}))
