"""The run's record (lpp.inference.result.Record): the running sum of the saved rates."""
import numpy as np
import pytest

from lpp.inference.result import Record


class _Point:
    """What the record reads of a chain at one sweep."""

    def __init__(self, t, mu, fail=False):
        self.iteration, self.mu, self.y, self.fail = t, mu, None, fail
        self.state = {"theta": np.full(2, float(t))}

    def log_joint(self):
        if self.fail:
            raise KeyboardInterrupt
        return -float(self.iteration)


def test_the_running_sum_reuses_a_spare_array_and_adds_in_the_runs_order():
    """From the third saved sweep on, the sum is written into the array the last entry gave up;
    it equals the sum of the saved rates added in order, bit for bit, and each entry's sum that
    is kept was never written again."""
    rng = np.random.default_rng(0)
    record = Record(["theta"], burn_in=2, thin=2)
    rates, expected, arrays = {}, None, []
    for t in range(1, 13):
        rates[t] = rng.gamma(0.5, size=(7, 5)) * 10.0 ** rng.integers(-8, 8, size=(7, 5))
        record.book(_Point(t, rates[t]), 0.0)
        if record.is_saved(t):
            expected = rates[t].copy() if expected is None else expected + rates[t]
            assert np.array_equal(record.mu_sum, expected)
            arrays.append(record.mu_sum)
    assert len(arrays) == 5
    assert arrays[2] is arrays[0] and arrays[3] is arrays[1]  # two arrays serve the whole run
    assert [e.t for e in record.saved()] == [4, 6, 8, 10, 12]
    assert sum(e.mu_sum is not None for e in record.entries) == 1


def test_a_sweep_interrupted_while_booked_leaves_the_last_sum_as_it_was():
    rng = np.random.default_rng(1)
    record = Record(["theta"], burn_in=0, thin=1)
    for t in (1, 2, 3):
        record.book(_Point(t, rng.random((3, 3))), 0.0)
    before = record.mu_sum.copy()
    with pytest.raises(KeyboardInterrupt):
        record.book(_Point(4, rng.random((3, 3)), fail=True), 0.0)
    assert record.last_t == 3 and np.array_equal(record.mu_sum, before)
    record.book(_Point(4, np.ones((3, 3))), 0.0)
    assert np.array_equal(record.mu_sum, before + 1.0)
