"""Conjugate posteriors: truncated (tempered) Beta and Dirichlet samplers against exact laws,
OPS and Laplace beta–Bernoulli, and the ARE theorems checked by simulation."""
import numpy as np
import pytest
from scipy import integrate, special, stats

from lpp.central import conjugate as c
from lpp.central import mechanisms as m
from lpp.testing import FALSE_ALARM

N = 20_000


def _ks(draws, cdf):
    return stats.kstest(draws, cdf).pvalue


# ---------------------------------------------------------------- truncated Beta


def test_truncated_beta_cdf_matches_scipy():
    x = np.linspace(0.2, 0.8, 11)
    ref = stats.beta(3.5, 7.0)
    want = (ref.cdf(x) - ref.cdf(0.2)) / (ref.cdf(0.8) - ref.cdf(0.2))
    np.testing.assert_allclose(c.truncated_beta_cdf(x, 3.5, 7.0, 0.2, 0.8), want, rtol=1e-10)
    dens = np.exp(c.truncated_beta_logpdf(x, 3.5, 7.0, 0.2, 0.8))
    np.testing.assert_allclose(dens, ref.pdf(x) / (ref.cdf(0.8) - ref.cdf(0.2)), rtol=1e-10)


@pytest.mark.parametrize("a, b", [(1.0, 1.0), (3.0, 5.0), (0.5, 0.7), (1.0, 2000.0),
                                  (2000.0, 1.0), (40.0, 3.0), (1.2, 300.0)])
def test_truncated_beta_gof(a, b):
    draws = c.sample_truncated_beta(a, b, 0.05, 0.95, size=N, rng=7)
    assert draws.min() >= 0.05 and draws.max() <= 0.95
    assert _ks(draws, lambda x: c.truncated_beta_cdf(x, a, b, 0.05, 0.95)) > FALSE_ALARM


def test_truncated_beta_gof_rejects_a_slightly_wrong_law():
    draws = c.sample_truncated_beta(3.0, 5.0, 0.05, 0.95, size=N, rng=7)
    assert _ks(draws, lambda x: c.truncated_beta_cdf(x, 3.3, 5.0, 0.05, 0.95)) < FALSE_ALARM


@pytest.mark.parametrize("a", [1.0, 3.0])
def test_truncated_beta_far_tail_rejection_branch(a):
    # the interval holds ~1e-450 of Beta(a, 2e4): the tangent-exponential sampler runs.
    b, lo, hi = 2e4, 0.05, 0.95
    draws = c.sample_truncated_beta(a, b, lo, hi, size=N, rng=8)

    def logf(x):
        return special.xlogy(a - 1, x / lo) + special.xlog1py(b - 1, -(x - lo) / (1 - lo))

    grid = lo + np.linspace(0, 60 / (b / (1 - lo)), 20_001)
    dens = np.exp(logf(grid))
    cdf = integrate.cumulative_trapezoid(dens, grid, initial=0.0)
    cdf /= cdf[-1]
    assert _ks(draws, lambda x: np.interp(x, grid, cdf)) > FALSE_ALARM
    wrong = np.exp(logf(grid) * 1.03)
    wcdf = integrate.cumulative_trapezoid(wrong, grid, initial=0.0)
    assert _ks(draws, lambda x: np.interp(x, grid, wcdf / wcdf[-1])) < FALSE_ALARM


def test_truncated_beta_errors():
    with pytest.raises(ValueError, match="low < high"):
        c.sample_truncated_beta(1, 1, 0.6, 0.4)
    with pytest.raises(ValueError, match="a must"):
        c.sample_truncated_beta(0, 1, 0.1, 0.9)
    with pytest.raises(ValueError, match="broadcast"):
        c.sample_truncated_beta(np.ones(3), np.ones(2), 0.1, 0.9)


# ---------------------------------------------------------------- truncated Dirichlet


def _marginal_cdf_k3(alpha, a0):
    """CDF of theta_1 under Dirichlet(alpha) on {theta_k >= a0}, K = 3 (numerical)."""
    a1, a2, a3 = alpha
    t = np.linspace(a0, 1 - 2 * a0, 20_001)
    r = a0 / (1 - t)
    # P(a0 <= theta_2 <= 1 - t - a0 | theta_1 = t), from the tail that keeps precision
    inner = special.betainc(a3, a2, 1 - r) - special.betainc(a3, a2, r)
    with np.errstate(divide="ignore"):  # inner = 0 at the right end of the support
        logd = (special.xlogy(a1 - 1, t) + special.xlog1py(a2 + a3 - 1, -t)
                + np.log(np.maximum(inner, 0.0)))
    dens = np.exp(logd - logd[np.isfinite(logd)].max())
    cdf = integrate.cumulative_trapezoid(dens, t, initial=0.0)
    return lambda x: np.interp(x, t, cdf / cdf[-1])


ALPHA3 = np.array([2.0, 5.0, 1.5])
A0 = 0.1


def test_truncated_dirichlet_rejection_gof():
    draws = c.sample_truncated_dirichlet(np.tile(ALPHA3, (N, 1)), A0, rng=9)
    assert draws.min() >= A0
    np.testing.assert_allclose(draws.sum(axis=1), 1.0)
    for k in range(3):
        order = [k] + [j for j in range(3) if j != k]
        assert _ks(draws[:, k], _marginal_cdf_k3(ALPHA3[order], A0)) > FALSE_ALARM
    assert _ks(draws[:, 0], _marginal_cdf_k3([2.2, 5.0, 1.5], A0)) < FALSE_ALARM


def test_pairwise_gibbs_step_keeps_the_truncated_dirichlet():
    start = c.sample_truncated_dirichlet(np.tile(ALPHA3, (N, 1)), A0, rng=10)
    moved = c.truncated_dirichlet_step(start, np.tile(ALPHA3, (N, 1)), A0, rng=11, n_sweeps=2)
    assert not np.allclose(moved, start)
    for k in range(3):
        order = [k] + [j for j in range(3) if j != k]
        assert _ks(moved[:, k], _marginal_cdf_k3(ALPHA3[order], A0)) > FALSE_ALARM


def test_mcmc_fallback_converges_where_rejection_fails():
    # alpha = (1, 1, 400): Dirichlet proposals almost never have theta_1, theta_2 >= 0.1
    alpha = np.array([1.0, 1.0, 400.0])
    draws = c.sample_truncated_dirichlet(np.tile(alpha, (N, 1)), A0, rng=12, max_tries=2)
    assert draws.min() >= A0 * (1 - 1e-12)
    assert _ks(draws[:, 0], _marginal_cdf_k3(alpha, A0)) > FALSE_ALARM


def test_truncated_dirichlet_errors():
    with pytest.raises(ValueError, match="a0"):
        c.sample_truncated_dirichlet([1.0, 1.0, 1.0], 0.34)
    with pytest.raises(ValueError, match="categories"):
        c.sample_truncated_dirichlet([1.0], 0.1)
    with pytest.raises(ValueError, match="disagree"):
        c.truncated_dirichlet_step(np.full((2, 3), 1 / 3), np.ones((3, 3)), 0.1)
    with pytest.raises(ValueError, match="simplex"):
        c.truncated_dirichlet_step([0.05, 0.45, 0.5], [1.0, 1.0, 1.0], 0.1)


# ---------------------------------------------------------------- beta–Bernoulli


def test_tempered_params_and_ops_law():
    np.testing.assert_allclose(c.tempered_params([0, 4], 2.0), [1.0, 3.0])
    t = m.ops_temperature(1.0, m.ops_sensitivity_beta(0.2))
    draws = c.ops_beta_bernoulli(6, 14, 1.0, 0.2, size=N, rng=13)
    a, b = 6 / t + 1, 14 / t + 1
    assert _ks(draws, lambda x: c.truncated_beta_cdf(x, a, b, 0.2, 0.8)) > FALSE_ALARM


def test_laplace_posterior_is_the_posterior_of_released_statistics():
    a, b = c.laplace_beta_bernoulli(np.full(5, 6), np.full(5, 14), 1.0, rng=14)
    assert np.all(a >= 1) and np.all(b >= 1)
    released = m.privatize_counts(np.tile([6, 14], (5, 1)), 1.0, project="clip", rng=14)
    np.testing.assert_allclose(a, released[:, 0] + 1)
    np.testing.assert_allclose(b, released[:, 1] + 1)


def test_beta_bernoulli_errors():
    with pytest.raises(ValueError, match="n_pos"):
        c.posterior_beta_bernoulli(-1, 3)
    with pytest.raises(ValueError, match="disagree"):
        c.posterior_beta_bernoulli(np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="a0"):
        c.ops_beta_bernoulli(1, 3, 1.0, 0.5)
    with pytest.raises(ValueError, match="epsilon"):
        c.ops_beta_bernoulli(1, 3, -1.0, 0.2)
    with pytest.raises(ValueError, match="estimator"):
        c.asymptotic_relative_efficiency("median")
    with pytest.raises(ValueError, match="temperature"):
        c.asymptotic_relative_efficiency("ops", 0.5)


def test_laplace_beta_bernoulli_reads_counts_exactly_and_names_them():
    """n_pos and n_neg are read as integers, never through float64; errors name them."""
    with pytest.raises(ValueError, match=r"^n_pos must hold integers"):
        c.laplace_beta_bernoulli(1.5, 3, 1.0, rng=1)
    with pytest.raises(TypeError, match=r"^n_neg must "):
        c.laplace_beta_bernoulli(3, np.array([2], dtype="m8[D]"), 1.0, rng=1)
    with pytest.raises(TypeError, match=r"^n_pos must "):
        c.laplace_beta_bernoulli([True, 3], [1, 1], 1.0, rng=1)
    with pytest.raises(ValueError, match=r"^row totals of \(n_pos, n_neg\) beyond "
                                         r"MAX_STATISTIC = 2\*\*53 are refused \(e\.g\. "
                                         r"9007199254740993\)"):
        c.laplace_beta_bernoulli(2**53, 1, 1.0, project="auto", rng=1)
    with pytest.raises(ValueError, match="disagree"):
        c.laplace_beta_bernoulli(np.ones(3, dtype=int), np.ones(2, dtype=int), 1.0, rng=1)


def test_are_theorems_by_simulation():
    """N * MSE * I -> 2 (Laplace sample), 1 (privatised posterior mean), 1 + T (OPS)."""
    p, n, reps, eps, a0 = 0.3, 20_000, 4_000, 1.0, 0.2
    rng = np.random.default_rng(15)
    n_pos = rng.binomial(n, p, size=reps)
    n_neg = n - n_pos
    fisher = c.bernoulli_fisher_information(p)
    a, b = c.laplace_beta_bernoulli(n_pos, n_neg, eps, rng=rng)
    sample = rng.beta(a, b)
    t = m.ops_temperature(eps, m.ops_sensitivity_beta(a0))
    ops = c.ops_beta_bernoulli(n_pos, n_neg, eps, a0, rng=rng)
    got = {"laplace_sample": c.relative_efficiency(sample, p, n, fisher),
           "laplace_mean": c.relative_efficiency(a / (a + b), p, n, fisher),
           "ops": c.relative_efficiency(ops, p, n, fisher)}
    # relative standard error of a mean of squared normals: sqrt(2 / reps) = 2.2%
    for name, value in got.items():
        want = c.asymptotic_relative_efficiency(name, t if name == "ops" else None)
        assert value == pytest.approx(want, rel=0.1), (name, value, want)
