"""The generalisation lab's label-noise run for benchmarks/classroom.py ("generalization_noise")."""
from collections.abc import Callable

from labs.generalization import live
from sim.core.live import LiveSpec


def bench_spec(seed: int | None = None) -> tuple[LiveSpec, Callable[[list[dict]], object]]:
    """labs.generalization.live.bench_spec of the label-noise section."""
    return live.bench_spec(seed, "noise")
