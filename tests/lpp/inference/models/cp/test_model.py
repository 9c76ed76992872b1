"""The CP model: a count splits over the rank-one terms as the multinomial with weights
``f0[i, r] f1[j, r] f2[l, r]``, every mode's totals the same split."""
import numpy as np
import pytest

from lpp.inference.models import CPTensorModel, Observed


@pytest.mark.parametrize("count", [1, 4])
def test_cp_allocation_matches_the_multinomial(count, multinomial_split):
    model = CPTensorModel(3)
    state = {"factor0": np.array([[1.0, 2.0, 0.5]]), "factor1": np.array([[1.0, 0.5, 2.0]]),
             "factor2": np.array([[3.0, 1.0, 1.0]])}
    y = np.full((1, 1, 1), count)
    obs = Observed(np.ones((1, 1, 1), dtype=bool))
    splits = [model.allocate(state, y, obs, 4, t) for t in range(20_000)]
    first = np.array([s["factor0"][0] for s in splits])
    for mode in ("factor1", "factor2"):
        assert np.array_equal(np.array([s[mode][0] for s in splits]), first)
    weights = np.array([3.0, 1.0, 1.0])
    assert multinomial_split(first, count, weights / weights.sum())
    assert not multinomial_split(first, count, weights[::-1] / weights.sum())
