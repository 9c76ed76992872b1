"""Whole-sampler posterior checks against enumeration, and bessel vs collapsed agreement."""
import numpy as np
import pytest
from scipy import stats

from lpp.inference import GibbsSampler, PoissonFactorization, RunOptions, TopicModel, fit_private
from lpp.distributions import gamma_rate_np
from lpp.mechanism import privatize
from lpp.testing import FALSE_ALARM, chisquare_gof

A0, B0, ALPHA = 2.0, 0.5, 0.6
GROUPS = (-3, 0, 2, 7)
PER_GROUP = 25_000


class IndependentRates(PoissonFactorization):
    """A plug-in model: every entry has its own rate, ``mu_i ~ Gamma(a0, rate b0)``.

    The posterior of one entry is then available by enumeration: ``y | y_tilde`` is
    negative binomial x 2Geo, ``mu | y_tilde`` a mixture of Gamma(a0 + y, b0 + 1).
    """

    name = "independent"
    data_ndim = 1

    def __init__(self, a0, b0):
        super().__init__(1, a0=a0, b0=b0)

    def latent_shapes(self, shape):
        return {"rate": tuple(shape)}

    def rate(self, state):
        return state["rate"]

    def allocate(self, state, y, observed, seed, iteration):
        return {"y": np.where(observed.is_observed, y, 0)}

    def update_latents(self, state, stats_, observed, seed, iteration):
        rng = np.random.default_rng([seed, iteration])
        shape = self.a0 + stats_["y"]
        return {"rate": gamma_rate_np(rng, shape, self.b0 + observed.weights, shape.shape)}


def _exact(y_tilde):
    support = np.arange(400)
    log_w = (stats.nbinom.logpmf(support, A0, B0 / (B0 + 1.0))
             + np.abs(y_tilde - support) * np.log(ALPHA))
    w = np.exp(log_w - log_w.max())
    return support, w / w.sum()


def _mixture_cdf(support, weights):
    keep = weights > 1e-14
    shapes, w = A0 + support[keep], weights[keep]
    return lambda x: stats.gamma.cdf(np.asarray(x)[..., None], shapes, scale=1.0 / (B0 + 1.0)) @ w


@pytest.mark.parametrize("method,sweeps", [("collapsed", 30), ("bessel", 50)])
def test_sampler_matches_the_enumerated_posterior(method, sweeps):
    y_tilde = np.repeat(np.array(GROUPS), PER_GROUP)
    sampler = GibbsSampler.private(y_tilde, ALPHA, IndependentRates(A0, B0), method=method, rng=4)
    for _ in range(sweeps):
        sampler.sweep()
    y, mu = sampler.y, sampler.state["rate"]
    for g, yt in enumerate(GROUPS):
        part = slice(g * PER_GROUP, (g + 1) * PER_GROUP)
        support, pmf = _exact(yt)
        assert chisquare_gof(y[part], support, pmf), (method, yt)
        assert stats.kstest(mu[part], _mixture_cdf(support, pmf)).pvalue > FALSE_ALARM, (method, yt)


def test_enumeration_check_has_power():
    """Draws of y from the wrong alpha fail the same chi-square."""
    y_tilde = np.full(PER_GROUP, 2)
    sampler = GibbsSampler.private(y_tilde, 0.5, IndependentRates(A0, B0), rng=4)
    for _ in range(40):
        sampler.sweep()
    assert not chisquare_gof(sampler.y, *_exact(2))


def _chain_means(method, alpha, y_tilde, seeds):
    out = []
    for seed in seeds:
        res = fit_private(y_tilde, alpha, TopicModel(2, a0=1.0, b0=1.0), method=method,
                          run=RunOptions(n_iter=700, burn_in=100, save_latents=False,
                                         save_counts=True, progress=False),
                          rng=seed)
        y = res.samples["y"].astype(np.float64)
        out.append([res.mu_hat.mean(), y.mean(), (y ** 2).mean()])
    return np.array(out)


def test_bessel_and_collapsed_agree_on_a_synthetic_problem():
    """Posterior means of mean(mu), mean(y), mean(y^2) from 8 independent chains per method:
    Welch t-tests (Bonferroni over the three) accept equality; the same comparison tells the
    right alpha from a wrong one."""
    rng = np.random.default_rng(8)
    mu = rng.gamma(1.0, 1.0, (12, 2)) @ rng.gamma(1.0, 1.0, (2, 10))
    y_tilde = privatize(rng.poisson(mu), ALPHA, rng=rng)
    collapsed = _chain_means("collapsed", ALPHA, y_tilde, range(8))
    bessel = _chain_means("bessel", ALPHA, y_tilde, range(100, 108))
    pvals = stats.ttest_ind(collapsed, bessel, equal_var=False).pvalue
    assert np.all(pvals > FALSE_ALARM / 3), pvals
    wrong = _chain_means("collapsed", 0.45, y_tilde, range(200, 208))
    assert np.any(stats.ttest_ind(collapsed, wrong, equal_var=False).pvalue < FALSE_ALARM / 3)
