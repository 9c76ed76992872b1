"""The ziggurat normal and the Gamma sampler built on it, against scipy's exact distributions.

Continuous draws are binned into cells of equal probability under the claimed distribution
and tested by Pearson's chi-square (``lpp.testing.chisquare_gof`` on the bin labels) at the
suite's per-call false-alarm rate ``FALSE_ALARM``; each test also shows that it rejects a
slightly wrong distribution with the same draws, so it has power where a bug would sit.
"""
import numpy as np
import pytest
from numba import njit
from scipy import stats

from lpp._rng import seed_stream
from lpp.distributions import standard_gamma_nb, standard_normal_nb
from lpp.distributions._gamma_sampler import _R
from lpp.testing import FALSE_ALARM, chisquare_gof


@njit
def _normals(n, seed):
    seed_stream(seed, 0, 0)
    out = np.empty(n)
    for i in range(n):
        out[i] = standard_normal_nb()
    return out


@njit
def _gammas(shape, n, seed):
    seed_stream(seed, 0, 0)
    out = np.empty(n)
    for i in range(n):
        out[i] = standard_gamma_nb(shape)
    return out


def _binned_gof(draws, cdf, n_bins):
    """Chi-square test of continuous draws on ``n_bins`` cells equiprobable under ``cdf``."""
    labels = np.minimum((cdf(draws) * n_bins).astype(np.int64), n_bins - 1)
    support = np.arange(n_bins)
    return chisquare_gof(labels, support, np.full(n_bins, 1.0 / n_bins))


def test_normal_matches_the_exact_distribution_in_fine_cells():
    # 400 cells of probability 1/400: every strip of the ziggurat and its wedge spans a few
    draws = _normals(2_000_000, 11)
    assert _binned_gof(draws, stats.norm.cdf, 400)
    # power: a 1% error in the spread is rejected by the same test
    assert not _binned_gof(draws, stats.norm(scale=1.01).cdf, 400)


def test_normal_is_symmetric_and_hits_the_tail_at_its_exact_rate():
    draws = _normals(4_000_000, 12)
    beyond = np.abs(draws) > _R
    expected = 2 * stats.norm.sf(_R)  # 5.8e-4: the base strip's tail algorithm
    assert stats.binomtest(int(beyond.sum()), draws.size, expected).pvalue > FALSE_ALARM
    assert stats.binomtest(int((draws > 0).sum()), draws.size, 0.5).pvalue > FALSE_ALARM


def test_normal_tail_has_the_truncated_normal_shape():
    draws = _normals(20_000_000, 13)
    excess = np.abs(draws[np.abs(draws) > _R]) - _R  # about 11,500 draws

    def tail_cdf(t):
        return 1.0 - stats.norm.sf(_R + t) / stats.norm.sf(_R)

    assert stats.kstest(excess, tail_cdf).pvalue > FALSE_ALARM
    # the tail algorithm's exponential proposal alone (no rejection) is rejected
    assert stats.kstest(excess, stats.expon(scale=1 / _R).cdf).pvalue < FALSE_ALARM


@pytest.mark.parametrize("shape", [0.01, 0.3, 0.999, 1.0, 1.01, 2.5, 50.0, 1e4])
def test_gamma_matches_scipy(shape):
    draws = _gammas(shape, 200_000, 21)
    assert _binned_gof(draws, stats.gamma(shape).cdf, 100)
    # power: the same draws reject a shape 2% off (below 1: 5% off, the scale's spread is wide)
    off = 1.05 if shape < 1 else 1.02
    assert not _binned_gof(draws, stats.gamma(shape * off).cdf, 100)


def test_gamma_draws_are_positive_where_they_can_be():
    draws = _gammas(0.3, 100_000, 22)
    assert np.all(draws > 0) and np.all(np.isfinite(draws))
