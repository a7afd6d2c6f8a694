"""What the classification lab says of its runs, read off the numbers it shows beside them
(tests/test_classification_claims.py checks the two agree over seeds and settings)."""
from __future__ import annotations

from sim.nets.fastnet import OVERSHOOT


def overshoot_numbers(recent: float, baseline: float) -> tuple[str, str]:
    """The divergence message's two numbers, the recent training loss and the constant guess's loss, with the fewest
    decimals (2 or more) at which the shown loss is still more than OVERSHOOT times the shown baseline, as the
    message says: at 2 decimals 2.1975 against 1.0986 (three classes) would read "2.20" against "1.10"."""
    for digits in range(2, 9):
        a, b = f"{recent:.{digits}f}", f"{baseline:.{digits}f}"
        if float(a) > OVERSHOOT * float(b):
            break
    return a, b
