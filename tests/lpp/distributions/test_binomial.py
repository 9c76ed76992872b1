"""Binomial draws of the kernels against scipy's exact pmf, in every regime of the sampler."""
import math

import numpy as np
import pytest
from numba import njit
from scipy import stats

from lpp.distributions import binomial_nb
from lpp.randomness import new_stream, seed_block
from lpp.testing import chisquare_gof


@njit
def _draws(n, p, n_draws, seed):
    rng = new_stream()
    seed_block(rng, seed, 0, 0)
    out = np.empty(n_draws, dtype=np.int64)
    for i in range(n_draws):
        out[i] = binomial_nb(rng, n, p)
    return out


@pytest.mark.parametrize("n,p", [
    (1, 0.3),            # inversion
    (20, 0.5),
    (100, 0.1),
    (31, 0.52),          # p above 1/2: the failures drawn
    (40, 0.45),          # n p = 18: one split, then inversion
    (1000, 0.3),         # several splits
    (100_000, 0.73),
    (10**9, 1e-3),       # deep splitting, huge n
    (10**12, 1e-11),     # huge n, small mean: inversion straight away
])
def test_binomial_draws_match_the_exact_pmf(n, p):
    draws = _draws(n, p, 100_000, 7)
    mean = n * p
    sd = math.sqrt(n * p * (1 - p))
    lo = max(0, int(mean - 12 * sd) - 5)
    hi = min(n, int(mean + 12 * sd) + 5)
    support = np.arange(lo, hi + 1)
    pmf = stats.binom.pmf(support, n, p)
    pmf /= pmf.sum()  # the far tails, beyond 12 sd, hold under 1e-30
    assert ((draws >= 0) & (draws <= n)).all()
    assert chisquare_gof(draws, support, pmf)


def test_binomial_edge_cases():
    assert (_draws(0, 0.4, 10, 1) == 0).all()
    assert (_draws(7, 0.0, 10, 1) == 0).all()
    assert (_draws(7, 1.0, 10, 1) == 7).all()
    assert (_draws(10**15, 1.0, 3, 1) == 10**15).all()
    assert (_draws(5, math.nan, 3, 1) == -1).all()
