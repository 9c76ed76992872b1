"""The paper's CAVI: Bessel mode, |y_tilde| as the order, delta method, stopping rule."""
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import special

from lpp.distributions import bessel_logpmf, bessel_mean
from lpp.inference import CommunityModel, CPTensorModel, TopicModel
from lpp.mechanism import privatize
from lpp.vi import (
    GammaFactor,
    VIOptions,
    bessel_mode_point_nb,
    collapsed_bound,
    delta_log_mean,
    fit_variational,
    variational_model,
)
from lpp.vi.paper import PAPER_MAX_ITER, PAPER_TOL, _digamma, paper_entries_step


@pytest.mark.parametrize("nu", [0, 1, 3, 10, 57])
@pytest.mark.parametrize("a", [0.01, 0.4, 2.0, 7.3, 40.0, 300.0])
def test_mode_is_the_floor_formula_the_argmax_and_within_one_of_the_mean(nu, a):
    mode = bessel_mode_point_nb(nu, a)
    assert mode == math.floor((math.sqrt(a * a + nu * nu) - nu) / 2)
    n = np.arange(int(mode) + 200)
    logpmf = bessel_logpmf(n, nu, a)
    assert logpmf[int(mode)] >= logpmf.max() - 1e-12  # a mode (ties: two neighbouring modes)
    assert abs(float(bessel_mean(nu, a)) - mode) <= 1.0


def test_order_is_the_absolute_value_of_y_tilde():
    """With y_tilde = -5 and a = 2 the order-5 mode is 0; a signed order (-5) would give 5."""
    assert bessel_mode_point_nb(-5, 2.0) == 0
    assert math.floor((math.sqrt(4 + 25) + 5) / 2) == 5
    # through the CAVI's per-entry kernel: choose the inputs so that a = 2 exactly
    lam_rate = np.array([2.0])
    lm_shape = np.array([3.0])
    g_lm = math.exp(special.digamma(3.0)) / 2.0
    target = 1.0 / g_lm  # G[lam+ + mu] so that a = 2 sqrt(g_lm target) = 2
    e_lp = 1.0 / 2.0    # lp_shape 1, rate 2; Var lam+ = 1/4
    e_mu = np.array([_solve_delta_mean(target, e_lp, 0.25)])
    out = paper_entries_step(np.array([-5]), np.array([True]), e_mu, np.zeros(1), np.ones(1),
                             np.ones(1), lm_shape, lam_rate)
    assert out[3][0] == 0
    assert out[2][0] == 1.0 + 5  # g- = m - y_tilde = 5


def _solve_delta_mean(target, e_lp, v_lp):
    """E mu such that (E mu + e_lp) exp(-v_lp / (2 (E mu + e_lp)^2)) = target (bisection)."""
    lo, hi = 0.0, 100.0
    for _ in range(200):
        mid = (lo + hi) / 2
        s = mid + e_lp
        if s * math.exp(-v_lp / (2 * s * s)) < target:
            lo = mid
        else:
            hi = mid
    return lo


def test_kernel_digamma_matches_scipy():
    x = np.concatenate([np.geomspace(1e-3, 1e4, 200), [1.0, 2.0, 6.0]])
    got = np.array([_digamma(v) for v in x])
    np.testing.assert_allclose(got, special.digamma(x), rtol=1e-10, atol=1e-10)


_DIGAMMA_CODE = """
import math
from lpp.vi.paper import _digamma
print([math.isnan(_digamma(x)) for x in (-math.inf, -1e300, 0.0, math.nan)], _digamma(1.0))
"""


def test_kernel_digamma_of_a_non_positive_argument_is_nan_not_a_hang():
    # its recurrence x += 1 never reached 6 from -inf or below -2**53
    run = subprocess.run([sys.executable, "-c", _DIGAMMA_CODE], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    flags, value = run.stdout.rsplit(" ", 1)
    assert flags == "[True, True, True, True]"
    assert float(value) == pytest.approx(-np.euler_gamma, rel=1e-9)


def test_delta_method_against_monte_carlo_of_log_sum():
    """E log sum_k theta_k phi_k under concentrated Gamma factors: the delta method is within
    its own (small) bias of Monte Carlo; the exact rate moments agree with the draws."""
    rng = np.random.default_rng(9)
    k = 5
    q = {"theta": GammaFactor(rng.uniform(20, 60, (1, k)), rng.uniform(5, 20, (1, k))),
         "phi": GammaFactor(rng.uniform(20, 60, (k, 1)), rng.uniform(5, 20, (k, 1)))}
    mean, var = variational_model(TopicModel(k)).rate_moments(q)
    draws_t = rng.gamma(q["theta"].shape, 1 / q["theta"].rate, (200_000, 1, k))
    draws_p = rng.gamma(q["phi"].shape[:, 0], 1 / q["phi"].rate[:, 0], (200_000, k))
    mu = np.einsum("nk,nk->n", draws_t[:, 0], draws_p)
    se = mu.std() / math.sqrt(mu.size)
    assert abs(mu.mean() - mean[0, 0]) < 4 * se
    assert var[0, 0] == pytest.approx(mu.var(), rel=0.02)
    log_mu = np.log(mu)
    assert abs(float(delta_log_mean(mean, var)[0, 0]) - log_mu.mean()) < 1e-3
    # and the delta correction matters: plain log E mu is off by more than the tolerance
    assert abs(math.log(mean[0, 0]) - log_mu.mean()) > 2e-3


def test_community_rate_moments_include_the_covariances():
    rng = np.random.default_rng(4)
    n, c = 3, 2
    q = {"theta": GammaFactor(rng.uniform(2, 6, (n, c)), rng.uniform(1, 3, (n, c))),
         "pi": GammaFactor(rng.uniform(2, 6, (c, c)), rng.uniform(1, 3, (c, c)))}
    mean, var = variational_model(CommunityModel(c)).rate_moments(q)
    draws = 400_000
    th = rng.gamma(q["theta"].shape, 1 / q["theta"].rate, (draws, n, c))
    pi = rng.gamma(q["pi"].shape, 1 / q["pi"].rate, (draws, c, c))
    mu01 = np.einsum("nc,ncd,nd->n", th[:, 0], pi, th[:, 1])
    assert abs(mu01.mean() - mean[0, 1]) < 4 * mu01.std() / math.sqrt(draws)
    assert var[0, 1] == pytest.approx(mu01.var(), rel=0.02)


def small_topic_data(seed=0):
    rng = np.random.default_rng(seed)
    theta = rng.gamma(0.5, 2.0, (40, 3))
    phi = rng.gamma(0.5, 1.0, (3, 30))
    mu = theta @ phi
    y = rng.poisson(mu)
    return mu, privatize(y, np.exp(-1.0), rng=rng), np.exp(-1.0)


def test_paper_cavi_runs_for_every_model_with_its_stopping_rule():
    mu, y_tilde, alpha = small_topic_data()
    res = fit_variational(y_tilde, alpha, TopicModel(3), method="bessel", rng=1)
    assert res.tol == PAPER_TOL and res.max_iter == PAPER_MAX_ITER
    obj = res.objective
    if res.converged:
        assert abs(obj[-1] - obj[-2]) <= PAPER_TOL * abs(obj[-1])
    else:
        assert res.iterations == PAPER_MAX_ITER
    assert np.all(np.isfinite(obj))
    assert res.extra["bessel_mode"].shape == y_tilde.shape
    assert np.abs(res.mu_hat - mu).mean() < np.abs(np.maximum(y_tilde, 0) - mu).mean()
    rng = np.random.default_rng(2)
    net = privatize(rng.poisson(2.0, (12, 12)), 0.5, rng=rng)
    res = fit_variational(net, 0.5, CommunityModel(2), method="bessel", rng=1,
                          run=VIOptions(max_iter=30))
    assert np.all(np.isfinite(res.objective)) and np.all(np.diagonal(res.mu_hat) == 0)
    cube = privatize(rng.poisson(1.5, (6, 5, 4)), 0.5, rng=rng)
    res = fit_variational(cube, 0.5, CPTensorModel(2), method="bessel", rng=1,
                          run=VIOptions(max_iter=30))
    assert np.all(np.isfinite(res.objective)) and res.mu_hat.shape == cube.shape


def test_collapsed_bound_at_convergence_beats_the_paper_solution():
    """Both solutions scored by the exact collapsed bound (the paper's own objective is a
    surrogate on another scale): the collapsed CAVI's optimum is at least as high."""
    _, y_tilde, alpha = small_topic_data(seed=5)
    model = TopicModel(3)
    collapsed = fit_variational(y_tilde, alpha, model, rng=1)
    paper = fit_variational(y_tilde, alpha, model, method="bessel", rng=1)
    assert collapsed_bound(y_tilde, alpha, model, collapsed.q) >= \
        collapsed_bound(y_tilde, alpha, model, paper.q)
