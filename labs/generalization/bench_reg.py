"""The generalisation lab's regularisation run for benchmarks/classroom.py ("generalization_reg")."""
from collections.abc import Callable

from labs.generalization import live
from sim.core.live import LiveSpec


def bench_spec(seed: int | None = None) -> tuple[LiveSpec, Callable[[list[dict]], object]]:
    """labs.generalization.live.bench_spec of the regularisation section."""
    return live.bench_spec(seed, "reg")
