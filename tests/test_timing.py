"""sim.core.timing.median_time, the one timing helper of the labs that show a measured time (sequence, Mamba),
against a fake clock whose answer is known in closed form."""
import pytest

from sim.core.timing import median_time


class FakeClock:
    """A clock that only moves when a call advances it: the k-th timed call takes durations[k] seconds."""

    def __init__(self, durations):
        self.now, self.durations, self.calls = 100.0, list(durations), 0

    def __call__(self) -> float:
        return self.now

    def work(self) -> None:
        self.now += self.durations[self.calls]
        self.calls += 1


@pytest.mark.parametrize("durations, median", [
    ([9.0, 3.0, 1.0, 2.0], 2.0),  # the warm-up (9 s) is never timed; median of 3, 1, 2
    ([0.5, 4.0, 1.0, 3.0, 2.0], 2.5),  # an even count: the mean of the middle two (2 and 3)
    ([7.0, 0.25], 0.25),
])
def test_median_of_the_timed_calls_after_one_warm_up(durations, median):
    clock = FakeClock(durations)
    assert median_time(clock.work, len(durations) - 1, clock=clock) == pytest.approx(median, abs=1e-12)
    assert clock.calls == len(durations)  # one warm-up and `repeats` timed calls


def test_one_slow_interrupted_call_moves_the_median_little():
    clock = FakeClock([1.0] + [0.010] * 4 + [5.0])  # another process took the CPU during one call
    assert median_time(clock.work, 5, clock=clock) == pytest.approx(0.010)


def test_no_repeats_is_an_error():
    with pytest.raises(ValueError, match="invalid:repeats"):
        median_time(lambda: None, 0)


def test_both_labs_use_it():
    import sim.sequence.timing as seq
    import sim.ssm.cost as ssm

    assert seq.median_time is median_time and ssm.median_time is median_time
    assert not hasattr(seq, "_median") and not hasattr(ssm, "_median_time")
