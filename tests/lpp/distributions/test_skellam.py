"""Skellam log-pmf against scipy and an independent log-space convolution of two Poissons."""
import numpy as np
import pytest
from numba import njit
from scipy import special, stats

from lpp.distributions import poisson_logpmf, skellam_logpmf, skellam_logpmf_nb


def _convolution_logpmf(k, mu1, mu2, terms=4000):
    """log sum_j Pois(j + k; mu1) Pois(j; mu2) (k >= 0), or the mirror for k < 0."""
    if k < 0:
        return _convolution_logpmf(-k, mu2, mu1, terms)
    j = np.arange(terms)
    return special.logsumexp(stats.poisson.logpmf(j + k, mu1) + stats.poisson.logpmf(j, mu2))


@pytest.mark.parametrize("mu1, mu2", [(1.0, 1.0), (3.0, 0.5), (0.2, 7.0), (40.0, 45.0),
                                      (500.0, 20.0), (1e-3, 2.0)])
def test_matches_scipy_where_it_is_accurate(mu1, mu2):
    k = np.arange(-60, 61) + int(mu1 - mu2)
    ref = stats.skellam.logpmf(k, mu1, mu2)
    ok = ref > -200  # scipy's ncx2-based pmf is accurate there
    np.testing.assert_allclose(skellam_logpmf(k, mu1, mu2)[ok], ref[ok], rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("k, mu1, mu2", [(500, 1.0, 1.0), (-500, 1.0, 1.0), (300, 2.0, 0.5),
                                         (-120, 30.0, 1.0), (0, 400.0, 400.0)])
def test_finite_and_correct_where_scipy_underflows(k, mu1, mu2):
    ours = skellam_logpmf(k, mu1, mu2)
    assert np.isfinite(ours)
    assert ours == pytest.approx(_convolution_logpmf(k, mu1, mu2), rel=1e-12)


def test_one_mean_zero_is_poisson():
    k = np.arange(-5, 30)
    np.testing.assert_allclose(skellam_logpmf(k, 4.0, 0.0), poisson_logpmf(k, 4.0))
    np.testing.assert_allclose(skellam_logpmf(k, 0.0, 4.0), poisson_logpmf(-k, 4.0))
    assert skellam_logpmf(0, 0.0, 0.0) == 0.0 and skellam_logpmf(1, 0.0, 0.0) == -np.inf


@njit
def _twin(k, mu1, mu2):
    return skellam_logpmf_nb(k, mu1, mu2)


def test_pmf_sums_to_one_and_twin_agrees():
    k = np.arange(-400, 401)
    assert np.exp(skellam_logpmf(k, 30.0, 80.0)).sum() == pytest.approx(1.0, abs=1e-13)
    assert _twin(-3, 2.0, 5.0) == skellam_logpmf(-3, 2.0, 5.0)


def test_bad_input():
    with pytest.raises(ValueError, match="mu1"):
        skellam_logpmf(1, -1.0, 2.0)
    with pytest.raises(ValueError, match="mu2"):
        skellam_logpmf(1, 1.0, np.inf)
    with pytest.raises(ValueError, match="integers"):
        skellam_logpmf(0.5, 1.0, 1.0)
    with pytest.raises(ValueError, match="broadcast"):
        skellam_logpmf([1, 2], [1.0, 2.0, 3.0], 1.0)
