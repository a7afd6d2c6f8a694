"""The step-by-step animation of the IO simulator as plain data for the browser (labs/gpu/memsim_view.js).

The events of sim.gpu.memsim cover the first (batch, head); the running byte counters are summed here, so the
browser only displays numbers: after the last step they equal the report's totals when batch_heads is 1.
"""
from __future__ import annotations

import hashlib

import numpy as np

from sim.gpu.memsim import MAX_EVENTS, Event, IOReport, attention_io

STATES = ("todo", "computed", "skipped", "written")  # a block of the score matrix; index = code sent to the browser


def _cell_run(e: Event) -> list[int] | None:
    """[row block, first column, last column + 1] of the cells an event changes (always one run of one row)."""
    if not e.cells:
        return None
    rows = {i for i, _ in e.cells}
    cols = sorted(j for _, j in e.cells)
    assert len(rows) == 1 and cols == list(range(cols[0], cols[-1] + 1)), e  # as memsim builds them
    return [rows.pop(), cols[0], cols[-1] + 1]


def _counters(report: IOReport) -> dict[str, np.ndarray]:
    """Running bytes after each step, per (batch, head): HBM read, HBM written, L2 ↔ SM, into and out of SRAM."""
    ev = report.events
    load = np.array([e.action == "load" for e in ev], dtype=bool)
    store = np.array([e.action == "store" for e in ev], dtype=bool)
    hbm = np.array([e.hbm_bytes for e in ev], dtype=np.int64)
    return {"hbm_read": np.cumsum(hbm * load), "hbm_write": np.cumsum(hbm * store),
            "l2": np.cumsum([e.l2_bytes for e in ev], dtype=np.int64),
            "sram": np.cumsum([e.sram_bytes for e in ev], dtype=np.int64)}


def animation_payload(report: IOReport, labels: dict[str, str]) -> dict:
    """JSON-able description of the animation: geometry, the events in columns, running counters, labels.

    `id` changes with the configuration (not with the labels), so the browser keeps its position when the same
    report comes again. A report without events (too many steps) gives only `omitted`, the geometry and labels.
    """
    ev = report.events
    payload = {
        "id": hashlib.sha1(repr(report).encode()).hexdigest()[:12],  # the repr leaves the events out
        "omitted": report.events_omitted, "steps": len(ev), "events_total": report.events_total,
        "algo": report.algo, "N": report.N, "d": report.d, "causal": report.causal, "l2": report.l2_bytes is not None,
        "block_m": report.block_m, "block_n": report.block_n,
        "t_r": -(-report.N // report.block_m), "t_c": -(-report.N // report.block_n),
        "tensors": ["Q", "K", "V", "O"] + (["S", "P"] if report.algo == "naive" else []),
        "states": list(STATES), "labels": labels,
    }
    if report.events_omitted:
        return payload
    payload["events"] = {
        "kernel": [e.kernel for e in ev], "action": [e.action for e in ev], "tensor": "".join(e.tensor for e in ev),
        "row": [e.row_block for e in ev], "col": [e.col_block for e in ev],
        "hbm": [e.hbm_bytes for e in ev], "l2_bytes": [e.l2_bytes for e in ev], "sram": [e.sram_bytes for e in ev],
        "hit": [e.l2_hit for e in ev], "cells": [_cell_run(e) for e in ev],
        "state": [STATES.index(e.state) if e.state else None for e in ev],
    }
    payload["counters"] = {name: values.tolist() for name, values in _counters(report).items()}
    return payload


def largest_animated_n(report: IOReport, max_events: int = MAX_EVENTS) -> int:
    """The largest N (at most report.N) whose animation has at most `max_events` steps, other settings kept.

    The number of steps grows with N and does not depend on the L2, so closed-form reports (no L2) suffice.
    """
    def steps(n: int) -> int:
        return attention_io(report.algo, n, report.d, dtype_bytes=report.dtype_bytes, causal=report.causal,
                            block_m=report.block_m, block_n=report.block_n, max_events=0).events_total

    lo, hi = 0, report.N  # steps(lo) <= max_events (or lo = 0) < steps(hi + 1)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if steps(mid) <= max_events:
            lo = mid
        else:
            hi = mid - 1
    return lo
