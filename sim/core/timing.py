"""Timing a call on this machine, for the labs that show a time they measured: one warm-up call, then the median of
`repeats` timed calls (the median, not the mean: a call that another process interrupted on a shared CPU moves it
least)."""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_time(fn: Callable[[], object], repeats: int,
                clock: Callable[[], float] = time.perf_counter) -> float:
    """Median seconds of `repeats` calls of fn() after one untimed warm-up call, read from `clock` (a test passes a
    fake one)."""
    if repeats < 1:
        raise ValueError("invalid:repeats")
    fn()  # warm-up: first-call costs (allocation, dispatch caches) are not the steady state the figure shows
    times = []
    for _ in range(repeats):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return float(statistics.median(times))
