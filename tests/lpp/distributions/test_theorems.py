"""The paper's distributional identities, checked exactly (quadrature, grids) and by simulation.

Theorem 2: 2Geo(alpha) = Skellam(lam+, lam-) with lam± ~ Exp of MEAN alpha/(1 - alpha).
Theorem 3: for y1 ~ Pois(mu1), y2 ~ Pois(mu2): (min, difference) ~ Bessel x Skellam.
Step 2a (eqs. 13-15): the Bessel augmentation samples y from its exact complete conditional.
"""
import math

import numpy as np
import pytest
from numpy.polynomial.laguerre import laggauss
from scipy import stats

from lpp.distributions import (
    bessel_logpmf,
    sample_bessel,
    skellam_logpmf,
    two_sided_geometric_logpmf,
)
from lpp.testing import FALSE_ALARM, chisquare_gof

N_DRAWS = 200_000


def _mixed_skellam_pmf(tau, mean, n_nodes=120):
    """E[Skel(tau; lam+, lam-)] for lam± iid Exp(mean), by Gauss-Laguerre quadrature."""
    u, w = laggauss(n_nodes)
    lam = mean * u
    logpmf = skellam_logpmf(tau, lam[:, None], lam[None, :])
    return float(np.sum(w[:, None] * w[None, :] * np.exp(logpmf)))


@pytest.mark.parametrize("alpha", [0.3, 0.7])
def test_theorem2_exactly_by_quadrature(alpha):
    mean = alpha / (1 - alpha)
    for tau in range(-8, 9):
        exact = math.exp(two_sided_geometric_logpmf(tau, alpha))
        assert _mixed_skellam_pmf(tau, mean) == pytest.approx(exact, rel=1e-8)
    # with the rate/mean confusion (mean (1 - alpha)/alpha) the identity fails
    wrong = _mixed_skellam_pmf(0, (1 - alpha) / alpha)
    assert abs(wrong / math.exp(two_sided_geometric_logpmf(0, alpha)) - 1) > 0.1


@pytest.mark.parametrize("alpha", [0.3, 0.85])
def test_theorem2_by_simulating_the_hierarchy(alpha):
    rng = np.random.default_rng(2)
    support = np.arange(-400, 401)
    pmf = np.exp(two_sided_geometric_logpmf(support, alpha))

    def simulate(mean):  # numpy's exponential takes the MEAN (scale), not the rate
        lam_plus = rng.exponential(mean, N_DRAWS)
        lam_minus = rng.exponential(mean, N_DRAWS)
        return rng.poisson(lam_plus) - rng.poisson(lam_minus)

    assert chisquare_gof(simulate(alpha / (1 - alpha)), support, pmf).pvalue >= FALSE_ALARM
    assert chisquare_gof(simulate((1 - alpha) / alpha), support, pmf).pvalue < FALSE_ALARM


@pytest.mark.parametrize("mu1, mu2", [(3.7, 1.3), (0.2, 5.0), (40.0, 65.0)])
def test_theorem3_joint_pmf_on_a_grid(mu1, mu2):
    m = np.arange(0, 120)[:, None]
    tau = np.arange(-60, 61)[None, :]
    y1 = m + np.maximum(tau, 0)
    y2 = m + np.maximum(-tau, 0)
    joint = stats.poisson.logpmf(y1, mu1) + stats.poisson.logpmf(y2, mu2)
    factored = (skellam_logpmf(tau, mu1, mu2)
                + bessel_logpmf(m, np.abs(tau), 2 * math.sqrt(mu1 * mu2)))
    keep = joint > -600  # scipy's Poisson log-pmf is exact enough there
    np.testing.assert_allclose(factored[keep], joint[keep], rtol=1e-12, atol=1e-10)


def test_theorem3_difference_then_minimum_gives_two_independent_poissons():
    mu1, mu2 = 3.7, 1.3
    rng = np.random.default_rng(3)
    tau = rng.poisson(mu1, N_DRAWS) - rng.poisson(mu2, N_DRAWS)  # tau ~ Skellam(mu1, mu2)
    m = sample_bessel(np.abs(tau), 2 * math.sqrt(mu1 * mu2), rng=rng)
    y1 = m + np.maximum(tau, 0)
    y2 = m + np.maximum(-tau, 0)
    width = 25  # joint cells (y1, y2) -> y1 * width + y2; P(y1 >= 30 or y2 >= 25) < 1e-14
    support = np.arange(30 * width)
    pmf = (stats.poisson.pmf(support // width, mu1) * stats.poisson.pmf(support % width, mu2))
    assert chisquare_gof(y1 * width + y2, support, pmf / pmf.sum()).pvalue >= FALSE_ALARM
    # the Bessel argument without the square root's factor 2 breaks the identity
    m_bad = sample_bessel(np.abs(tau), math.sqrt(mu1 * mu2), rng=rng)
    y1b, y2b = m_bad + np.maximum(tau, 0), m_bad + np.maximum(-tau, 0)
    assert chisquare_gof(y1b * width + y2b, support, pmf / pmf.sum()).pvalue < FALSE_ALARM


def _exact_conditional_y(y_tilde, mu, lam_plus, lam_minus, y_max=80, g_max=120):
    """P(y | y~, mu, lam±) ∝ Pois(y; mu) sum_g+ Pois(g+; lam+) Pois(y + g+ - y~; lam-)."""
    y = np.arange(y_max)[:, None]
    g_plus = np.arange(g_max)[None, :]
    g_minus = y + g_plus - y_tilde
    with np.errstate(divide="ignore"):
        log_terms = (stats.poisson.logpmf(y, mu) + stats.poisson.logpmf(g_plus, lam_plus)
                     + stats.poisson.logpmf(g_minus, lam_minus))
    w = np.exp(log_terms - log_terms.max()).sum(axis=1)
    return np.arange(y_max), w / w.sum()


def _bessel_step(y_tilde, mu, lam_plus, lam_minus, rng, bessel_scale=1.0):
    """The paper's eqs. 13-15 for one privatized count, vectorised over draws."""
    a = bessel_scale * 2 * math.sqrt((lam_plus + mu) * lam_minus)
    m = sample_bessel(abs(y_tilde), a, size=N_DRAWS, rng=rng)
    y_plus = m if y_tilde <= 0 else m + y_tilde
    return rng.binomial(y_plus, mu / (mu + lam_plus))


@pytest.mark.parametrize("y_tilde", [-4, 0, 6])
def test_step_2a_samples_the_exact_conditional_of_y(y_tilde):
    mu, lam_plus, lam_minus = 2.5, 0.8, 1.7
    rng = np.random.default_rng(4)
    support, pmf = _exact_conditional_y(y_tilde, mu, lam_plus, lam_minus)
    draws = _bessel_step(y_tilde, mu, lam_plus, lam_minus, rng)
    assert chisquare_gof(draws, support, pmf).pvalue >= FALSE_ALARM
    # forgetting mu inside the Bessel argument (2 sqrt(lam+ lam-)) is rejected
    wrong = _bessel_step(y_tilde, mu, lam_plus, lam_minus, rng,
                         bessel_scale=math.sqrt(lam_plus / (lam_plus + mu)))
    assert chisquare_gof(wrong, support, pmf).pvalue < FALSE_ALARM


@pytest.mark.parametrize("y_tilde", [-7, 0, 5])
def test_step_2a_bessel_variable_is_the_exact_conditional_minimum(y_tilde):
    # y+ = y + g+ ~ Pois(mu + lam+), g- ~ Pois(lam-), y~ = y+ - g-: given y~, min(y+, g-) is
    # Bessel(|y~|, 2 sqrt((mu + lam+) lam-)); check by normalising the joint pmf directly
    mu, lam_plus, lam_minus = 2.5, 0.8, 1.7
    m = np.arange(0, 100)
    y_plus = m + max(y_tilde, 0)
    g_minus = m + max(-y_tilde, 0)
    log_joint = (stats.poisson.logpmf(y_plus, mu + lam_plus)
                 + stats.poisson.logpmf(g_minus, lam_minus))
    conditional = np.exp(log_joint - log_joint.max())
    conditional /= conditional.sum()
    bessel = np.exp(bessel_logpmf(m, abs(y_tilde), 2 * math.sqrt((mu + lam_plus) * lam_minus)))
    np.testing.assert_allclose(bessel, conditional, rtol=1e-11, atol=1e-300)
