"""The ziggurat normal and the Gamma sampler built on it, against scipy's exact distributions.

Continuous draws are binned into cells of equal probability under the claimed distribution
and tested by Pearson's chi-square (``lpp.testing.chisquare_gof`` on the bin labels) at the
suite's per-call false-alarm rate ``FALSE_ALARM``; each test also shows that it rejects a
slightly wrong distribution with the same draws, so it has power where a bug would sit.
"""
import subprocess
import sys

import numpy as np
import pytest
from numba import njit
from scipy import special, stats

from lpp.randomness import new_stream, seed_block
from lpp.distributions import TINY, gamma_rate_nb, standard_gamma_nb, standard_normal_nb
from lpp.distributions._gamma_sampler import (_R, gamma_rate_below_one_nb,
                                              marsaglia_tsang_constants)
from lpp.testing import FALSE_ALARM, chisquare_gof


@njit
def _normals(n, seed):
    rng = new_stream()
    seed_block(rng, seed, 0, 0)
    out = np.empty(n)
    for i in range(n):
        out[i] = standard_normal_nb(rng)
    return out


@njit
def _gammas(shape, n, seed):
    rng = new_stream()
    seed_block(rng, seed, 0, 0)
    out = np.empty(n)
    for i in range(n):
        out[i] = standard_gamma_nb(rng, shape)
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


# --- the models' Gamma(shape, rate) draws ------------------------------------------------------

N_RATE_DRAWS = 100_000


@njit
def _rate_gammas(shape, rate, n, seed):
    rng = new_stream()
    seed_block(rng, seed, 0, 0)
    out = np.empty(n)
    for i in range(n):
        out[i] = gamma_rate_nb(rng, shape, rate)
    return out


@pytest.mark.parametrize("shape", [0.05, 0.5, 3.0])
def test_gamma_draws_match_scipy_with_rate_parameterisation(shape):
    draws = _rate_gammas(shape, 2.0, N_RATE_DRAWS, 7)
    assert stats.kstest(draws, stats.gamma(shape, scale=0.5).cdf).pvalue > FALSE_ALARM
    # the same test rejects the scale/rate mix-up, so it has power against it
    assert stats.kstest(draws, stats.gamma(shape, scale=2.0).cdf).pvalue < FALSE_ALARM


@njit
def _one_shape_gammas(shape, rates, seed):
    """The same draws by gamma_rate_nb and by gamma_rate_below_one_nb on the same stream."""
    out = np.empty((2, rates.size))
    d, c = marsaglia_tsang_constants(shape + 1.0)
    rng = new_stream()
    seed_block(rng, seed, 0, 0)
    for i in range(rates.size):
        out[0, i] = gamma_rate_nb(rng, shape, rates[i])
    rng = new_stream()
    seed_block(rng, seed, 0, 0)
    for i in range(rates.size):
        out[1, i] = gamma_rate_below_one_nb(rng, shape, d, c, rates[i])
    return out


@pytest.mark.parametrize("shape", [1e-4, 0.1, 0.5, 0.999])
def test_small_shapes_with_their_constants_formed_once_are_the_same_draws(shape):
    """The Gamma kernels form the constants of the shape a0 < 1 of zero counts once per
    block: the draws are gamma_rate_nb's bit for bit (the log-space branch, the floor, and NaN
    for a rate that is not positive included)."""
    rates = np.concatenate([np.random.default_rng(1).uniform(1e-3, 1e3, 20_000), [1e300],
                            [0.0, -1.0, np.nan]])
    out = _one_shape_gammas(shape, rates, 5)
    assert np.array_equal(out[0], out[1], equal_nan=True)
    assert np.isnan(out[1, -3:]).all()


def test_tiny_shapes_are_floored_not_zero():
    draws = _rate_gammas(0.001, 1.0, 10_000, 3)
    assert draws.min() == TINY and np.all(draws > 0)
    # P(X < TINY) = TINY^a / Gamma(1 + a) ~ 0.49 for a = 0.001: the floor takes about half
    assert 0.45 < np.mean(draws == TINY) < 0.53


def _small_shape_cdf(x, shape, rate):
    """Gamma(shape, rate) cdf for a tiny ``shape``, exact where ``x * rate`` underflows: below
    ``z = x * rate = 1e-10`` the series' first term ``z**a / Gamma(1 + a)`` (relative error
    below 1e-10), formed in log space."""
    log_z = np.log(x) + np.log(rate)
    series = np.exp(shape * np.minimum(log_z, 0.0) - special.gammaln(1 + shape))
    return np.where(log_z < -23.0, series, stats.gamma.cdf(np.exp(np.maximum(log_z, -700)), shape))


def _floor_and_law_pvalues(draws, shape, rate, n_bins=50):
    """p-values of (the share of draws at the floor, the law of the draws above it)."""
    at_floor = draws == TINY
    floor_mass = float(_small_shape_cdf(np.array([TINY]), shape, rate)[0])
    share = stats.binomtest(int(at_floor.sum()), draws.size, floor_mass).pvalue
    cells = (_small_shape_cdf(draws[~at_floor], shape, rate) - floor_mass) / (1 - floor_mass)
    labels = np.minimum((cells * n_bins).astype(np.int64), n_bins - 1)
    law = chisquare_gof(labels, np.arange(n_bins), np.full(n_bins, 1 / n_bins)).pvalue
    return share, law


def test_small_shapes_in_log_space_keep_the_exact_law_above_the_floor():
    # shape 0.002 with rate 1e-250: U**(1/shape) underflows for most U, so most draws take
    # the log-space branch; the floor must hold exactly the mass below TINY (about 0.077) and
    # the draws above it must follow Gamma(0.002, rate 1e-250)
    shape, rate = 0.002, 1e-250
    draws = _rate_gammas(shape, rate, N_RATE_DRAWS, 5)
    assert min(_floor_and_law_pvalues(draws, shape, rate)) > FALSE_ALARM
    # power: the same draws reject a shape 5% off
    assert min(_floor_and_law_pvalues(draws, shape * 1.05, rate)) < FALSE_ALARM


_BAD_SHAPES_CODE = """
import numpy as np
from numba import njit
from lpp.randomness import new_stream, seed_block
from lpp.distributions import gamma_rate_nb, standard_gamma_nb

@njit
def draws(shapes, rates):
    rng = new_stream()
    seed_block(rng, 3, 0, 0)
    out = np.empty((2, shapes.size))
    for i in range(shapes.size):
        out[0, i] = standard_gamma_nb(rng, shapes[i])
        out[1, i] = gamma_rate_nb(rng, shapes[i], rates[i])
    return out

out = draws(np.array([np.nan, -1.0, -0.8, 0.0, 2.0, 2.0, 2.0]),
            np.array([1.0, 1.0, 1.0, 1.0, np.nan, 0.0, -1.0]))
print(np.isnan(out[0, :4]).all(), np.isnan(out[1]).all(), np.isfinite(out[0, 4:]).all())
"""


def test_gamma_draws_with_invalid_parameters_are_nan_not_a_hang():
    # standard_gamma_nb(nan) and shapes below -2/3 looped forever inside the kernels
    run = subprocess.run([sys.executable, "-c", _BAD_SHAPES_CODE], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True", "True", "True"]
