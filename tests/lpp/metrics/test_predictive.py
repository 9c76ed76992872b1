"""predictive_log_likelihood: brute force on a tiny case, underflow, masks, a proper score."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from lpp.metrics import pointwise_predictive_log_likelihood, predictive_log_likelihood

RATES = np.array([[[0.5, 2.0, 0.1], [1.5, 0.25, 3.0]],
                  [[1.0, 1.0, 0.0], [2.5, 0.75, 4.0]],
                  [[0.2, 3.5, 0.3], [0.5, 1.25, 6.0]]])  # S = 3 samples of a 2 x 3 rate
Y = np.array([[0, 3, 0], [1, 0, 5]])


def brute_force(rates, y):
    """log of the mean over samples of the pmf, entry by entry, in plain floats."""
    out = np.empty(y.shape)
    for idx in np.ndindex(y.shape):
        pmfs = [stats.poisson.pmf(y[idx], r[idx]) for r in rates]
        out[idx] = math.log(sum(pmfs) / len(pmfs))
    return out


def test_matches_brute_force_sum():
    expected = brute_force(RATES, Y)
    np.testing.assert_allclose(pointwise_predictive_log_likelihood(RATES, Y), expected,
                               rtol=1e-13)
    assert predictive_log_likelihood(RATES, Y) == pytest.approx(expected.mean(), rel=1e-13)


def test_mask_scores_the_true_entries_only():
    mask = np.array([[True, False, False], [False, True, True]])
    expected = brute_force(RATES, Y)[mask]
    np.testing.assert_allclose(pointwise_predictive_log_likelihood(RATES, Y, mask), expected,
                               rtol=1e-13)
    assert predictive_log_likelihood(RATES, Y, sp.csr_array(mask)) == pytest.approx(
        expected.mean(), rel=1e-13)


def test_generator_sparse_y_and_array_agree():
    from_array = pointwise_predictive_log_likelihood(RATES, Y)
    from_generator = pointwise_predictive_log_likelihood((r for r in RATES), sp.csr_array(Y))
    np.testing.assert_array_equal(from_generator, from_array)


def test_stable_where_every_pmf_underflows():
    # Pois(2000; 1) ~ 1e-4300: the pmf is 0 in float64, its log is not
    y = np.array([[2000]])
    rates = np.array([[[1.0]], [[1.0]]])
    assert stats.poisson.pmf(2000, 1.0) == 0.0
    value = predictive_log_likelihood(rates, y)
    assert value == pytest.approx(stats.poisson.logpmf(2000, 1.0), rel=1e-12)
    # two very different samples: the better one dominates the log-mean, minus log 2
    mixed = np.array([[[1.0]], [[1900.0]]])
    assert predictive_log_likelihood(mixed, y) == pytest.approx(
        stats.poisson.logpmf(2000, 1900.0) - math.log(2), rel=1e-10)


def test_zero_rate_at_positive_count_is_minus_infinity():
    assert predictive_log_likelihood(np.zeros((1, 1, 2)), np.array([[0, 1]])) == -np.inf
    assert predictive_log_likelihood(np.zeros((1, 1, 2)), np.array([[0, 0]])) == 0.0


def test_proper_score_prefers_the_true_rates_to_shrunk_ones():
    """MAE prefers shrinking sparse rates towards 0; the log score prefers the truth."""
    rng = np.random.default_rng(5)
    truth = rng.uniform(0.0, 0.5, size=(200, 200))
    y = rng.poisson(truth)
    shrunk = 0.3 * truth
    assert np.abs(shrunk - y).mean() < np.abs(truth - y).mean()  # MAE is fooled
    assert predictive_log_likelihood(truth[None], y) > predictive_log_likelihood(shrunk[None], y)


@pytest.mark.parametrize("rates, y, mask, error, match", [
    (RATES[:, :1], Y, None, ValueError, "shape"),
    (np.empty((0, 2, 3)), Y, None, ValueError, "no sample"),
    (-RATES, Y, None, ValueError, "negative or non-finite"),
    (RATES * np.nan, Y, None, ValueError, "negative or non-finite"),
    (RATES, -Y, None, ValueError, "negative"),
    (RATES, Y, np.ones((2, 3)), TypeError, "boolean"),
    (RATES, Y, np.ones((3, 2), dtype=bool), ValueError, "shape"),
    (RATES, Y, np.zeros((2, 3), dtype=bool), ValueError, "no entries"),
])
def test_bad_input(rates, y, mask, error, match):
    with pytest.raises(error, match=match):
        predictive_log_likelihood(rates, y, mask)
