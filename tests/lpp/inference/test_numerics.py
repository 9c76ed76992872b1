"""Building blocks: small-shape Gamma draws, multinomial splits and truncated Poisson draws."""
import itertools

import numpy as np
import pytest
from numba import njit
from scipy import special, stats

from lpp._rng import seed_stream
from lpp.distributions import poisson_logcdf_nb, poisson_logsf_nb
from lpp.inference._numerics import (
    TINY,
    gamma_rate_nb,
    multinomial_into_nb,
    truncated_poisson_above_nb,
    truncated_poisson_at_most_nb,
)
from lpp.testing import FALSE_ALARM, chisquare_gof

N_DRAWS = 100_000


@njit
def _gammas(shape, rate, n, seed):
    seed_stream(seed, 0, 0)
    out = np.empty(n)
    for i in range(n):
        out[i] = gamma_rate_nb(shape, rate)
    return out


@pytest.mark.parametrize("shape", [0.05, 0.5, 3.0])
def test_gamma_draws_match_scipy_with_rate_parameterisation(shape):
    draws = _gammas(shape, 2.0, N_DRAWS, 7)
    assert stats.kstest(draws, stats.gamma(shape, scale=0.5).cdf).pvalue > FALSE_ALARM
    # the same test rejects the scale/rate mix-up, so it has power against it
    assert stats.kstest(draws, stats.gamma(shape, scale=2.0).cdf).pvalue < FALSE_ALARM


def test_tiny_shapes_are_floored_not_zero():
    draws = _gammas(0.001, 1.0, 10_000, 3)
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
    draws = _gammas(shape, rate, N_DRAWS, 5)
    assert min(_floor_and_law_pvalues(draws, shape, rate)) > FALSE_ALARM
    # power: the same draws reject a shape 5% off
    assert min(_floor_and_law_pvalues(draws, shape * 1.05, rate)) < FALSE_ALARM


@njit
def _multinomials(n, weights, n_draws, seed):
    seed_stream(seed, 0, 0)
    out = np.empty((n_draws, weights.size), dtype=np.int64)
    w = np.empty(weights.size)
    for i in range(n_draws):
        w[:] = weights
        multinomial_into_nb(n, w, out[i])
    return out


def test_multinomial_matches_exact_pmf_over_all_compositions():
    weights = np.array([0.2, 0.0, 0.5, 0.3]) * 7.0  # unnormalised, one empty cell
    n = 5
    draws = _multinomials(n, weights, N_DRAWS, 11)
    assert np.all(draws.sum(axis=1) == n) and np.all(draws[:, 1] == 0)
    comps = [c for c in itertools.product(range(n + 1), repeat=3) if sum(c) == n]
    index = {c: i for i, c in enumerate(comps)}
    codes = np.array([index[tuple(r)] for r in draws[:, [0, 2, 3]]])
    pmf = stats.multinomial(n, [0.2, 0.5, 0.3]).pmf(np.array(comps))
    assert chisquare_gof(codes, np.arange(len(comps)), pmf)
    # power: the same draws against a permuted probability vector must fail
    wrong = stats.multinomial(n, [0.3, 0.5, 0.2]).pmf(np.array(comps))
    assert not chisquare_gof(codes, np.arange(len(comps)), wrong)


def test_multinomial_large_count_cell_is_binomial():
    draws = _multinomials(400, np.array([1.0, 3.0, 0.0, 6.0]), 20_000, 5)
    support = np.arange(401)
    assert chisquare_gof(draws[:, 0], support, stats.binom.pmf(support, 400, 0.1))
    assert np.all(draws[:, 2] == 0)


@njit
def _truncated(lam, n, above, n_draws, seed):
    seed_stream(seed, 0, 0)
    out = np.empty(n_draws, dtype=np.int64)
    if above:
        log_tail = poisson_logsf_nb(n, lam)
        for i in range(n_draws):
            out[i] = truncated_poisson_above_nb(lam, n, log_tail)
    else:
        log_tail = poisson_logcdf_nb(n, lam)
        for i in range(n_draws):
            out[i] = truncated_poisson_at_most_nb(lam, n, log_tail)
    return out


@pytest.mark.parametrize("lam,n,above", [
    (3.0, 6, False),     # mode inside: rejection
    (12.0, 5, False),    # pmf increasing on 0..n: inversion from the top
    (300.0, 280, False),
    (6.0, 2, True),      # mode above the cut: rejection
    (0.4, 3, True),      # far tail: inversion upwards
    (40.0, 45, True),
])
def test_truncated_poisson_matches_exact_pmf(lam, n, above):
    # seed 13 false-alarmed at (300, 280) (p = 9e-4); three runs of 2e6 draws passed there
    draws = _truncated(lam, n, above, N_DRAWS, 2024)
    support = np.arange(n + 1, n + 400) if above else np.arange(0, n + 1)
    pmf = stats.poisson.pmf(support, lam)
    pmf /= pmf.sum()
    assert (draws > n).all() if above else (draws <= n).all()
    assert chisquare_gof(draws, support, pmf)
