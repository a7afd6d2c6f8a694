"""Waiting in tests for the thing itself, never for a fixed time: a condition polled until a deadline.

`wait_until` waits for a condition, `eventually` for a block of assertions to pass (the last failure is the
test's failure), and `stays` is the one deliberate wait: a check that something does NOT change, which has
to watch for a while; its callers say why the window they pick is long enough.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
POLL_S = 0.05  # between two looks at the condition: not a wait for anything, only how often we look


def wait_until(cond: Callable[[], object], timeout: float = 30.0, what: str = "the condition") -> None:
    """Until cond() is true; fails with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        time.sleep(POLL_S)


def eventually(check: Callable[[], T], timeout: float = 30.0) -> T:
    """check() until it returns without an AssertionError (then its value); at the deadline its last failure."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return check()
        except AssertionError:
            if time.monotonic() > deadline:
                raise
        time.sleep(POLL_S)


def stays(read: Callable[[], T], seconds: float, why: str) -> T:
    """read() keeps its first value for `seconds` (looking all the while); fails with `why` as soon as it changes."""
    first, deadline = read(), time.monotonic() + seconds
    while time.monotonic() < deadline:
        now = read()
        assert now == first, f"{why}: {first!r} became {now!r}"
        time.sleep(POLL_S)
    return first
