"""Speed benchmarks, one module per lab (the page's own functions, imported, never copied).

    python -m benchmarks engine      # one subcommand each: see python -m benchmarks --help

Each prints one JSON object per line. A figure is the best of several repeats, as the best run is
the one least disturbed by other processes. Rates come twice: per wall-clock second (what a user
sees on this machine now) and per CPU second of this process (what an unshared machine would give).
The browser and classroom benchmarks (browser.py, classroom*.py, long_play.py) are scripts of their own.
"""
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


class KeyLabels(dict):
    """Labels for the figure builders in benchmarks: every key is its own label."""

    def __missing__(self, key: str) -> str:
        return key
