"""Gamma factors: moments and the bound's prior terms against closed forms and Monte Carlo."""
import math

import numpy as np
import pytest
from scipy import special, stats

from lpp.vi import GammaFactor, gamma_elbo_term


def kl_gamma(a, b, a0, b0):
    """KL(Gamma(a, rate b) || Gamma(a0, rate b0)), the textbook closed form."""
    return ((a - a0) * special.digamma(a) - special.gammaln(a) + special.gammaln(a0)
            + a0 * (np.log(b) - np.log(b0)) + a * (b0 - b) / b)


def test_elbo_term_is_minus_the_kl_divergence_from_the_prior():
    a = np.array([0.1, 0.7, 3.0, 250.0])
    b = np.array([1.0, 0.2, 9.0, 40.0])
    got = gamma_elbo_term(GammaFactor(a, b), 0.1, 1.0)
    assert got == pytest.approx(-kl_gamma(a, b, 0.1, 1.0).sum(), rel=1e-12)


def test_elbo_term_against_monte_carlo():
    rng = np.random.default_rng(3)
    a, b, a0, b0 = 2.5, 3.0, 0.3, 1.5
    x = rng.gamma(a, 1 / b, 400_000)
    terms = stats.gamma.logpdf(x, a0, scale=1 / b0) - stats.gamma.logpdf(x, a, scale=1 / b)
    se = terms.std() / math.sqrt(x.size)
    assert abs(gamma_elbo_term(GammaFactor(np.array([a]), np.array([b])), a0, b0)
               - terms.mean()) < 4 * se


def test_moments():
    f = GammaFactor(np.array([2.0]), np.array([4.0]))
    assert f.mean[0] == 0.5 and f.var[0] == 2.0 / 16.0
    assert f.geometric[0] == pytest.approx(math.exp(special.digamma(2.0)) / 4.0)
    draws = f.sample(np.random.default_rng(1))
    assert draws.shape == (1,) and draws[0] > 0
