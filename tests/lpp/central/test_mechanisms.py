"""Central-model mechanisms: sensitivities, Laplace noise (float and exact), projections,
OPS sensitivity and temperature on hand-computed cases, Gibbs-scan costs, clear errors."""
import math

import numpy as np
import pytest
from scipy import stats

from lpp.central import mechanisms as m
from lpp.distributions import two_sided_geometric_logpmf
from lpp.testing import FALSE_ALARM, chisquare_gof


# ---------------------------------------------------------------- sensitivities, T, costs


def test_count_sensitivity_per_relation():
    assert m.count_sensitivity("replace") == 2
    assert m.count_sensitivity("add_remove") == 1
    assert m.count_sensitivity("replace", n_fields=5) == 10
    assert m.count_sensitivity("add_remove", n_fields=5) == 5


def test_ops_temperature_of_the_papers_figure_1():
    # a0 = 0.2: Delta = -log 0.2 + log 0.8 = log 4; T = 2 log 4 / 1 = 2.77 (printed "2.7")
    delta = m.ops_sensitivity_beta(0.2)
    assert delta == pytest.approx(math.log(4.0), rel=1e-15)
    t = m.ops_temperature(1.0, delta)
    assert t == pytest.approx(2.0 * math.log(4.0), rel=1e-15)
    assert math.floor(10 * t) / 10 == 2.7
    # Figure 2's setting: a0 = 0.05, epsilon = 0.1 -> T = 20 log 19
    assert m.ops_temperature(0.1, m.ops_sensitivity_beta(0.05)) == pytest.approx(
        20 * math.log(19.0))


def test_ops_dirichlet_sensitivity_hand_cases():
    assert m.ops_sensitivity_dirichlet(0.2, 2) == pytest.approx(m.ops_sensitivity_beta(0.2))
    # K = 3, a0 = 0.1: extreme point (0.8, 0.1, 0.1) -> log 8
    assert m.ops_sensitivity_dirichlet(0.1, 3) == pytest.approx(math.log(8.0))
    # a0 = 1/(M K) with M = 10, K = 4: log((1 - 3/40) / (1/40)) = log 37
    assert m.ops_sensitivity_dirichlet(1 / 40, 4) == pytest.approx(math.log(37.0))


def test_ops_temperature_cap_and_inverse():
    assert m.ops_temperature(10.0, 1.0) == 1.0
    assert m.ops_temperature(10.0, 1.0, cap=False) == pytest.approx(0.2)
    assert m.ops_epsilon(m.ops_temperature(0.5, 2.0), 2.0) == pytest.approx(0.5)


def test_gibbs_scan_costs():
    assert m.gibbs_scan_epsilon(1.5) == 3.0
    assert m.gibbs_scan_epsilon(1.5, "random", n_updates=10, n_variables=100) == \
        pytest.approx(4 * 1.5 * 10 / 100)
    assert m.gibbs_chain_epsilon(m.gibbs_scan_epsilon(0.5), 200) == pytest.approx(200.0)


# ---------------------------------------------------------------- clear errors


@pytest.mark.parametrize("eps", [0, -1.0, float("nan"), float("inf")])
def test_bad_epsilon(eps):
    with pytest.raises(ValueError, match="epsilon"):
        m.laplace_mechanism([1, 2], eps, 2)
    with pytest.raises(ValueError, match="epsilon"):
        m.ops_temperature(eps, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        m.privatize_counts([1, 2], eps)


def test_epsilon_type():
    with pytest.raises(TypeError):
        m.check_epsilon("1")
    with pytest.raises(TypeError):
        m.check_epsilon(True)


@pytest.mark.parametrize("a0", [0.0, 0.5, -0.1, 0.7, 1.0])
def test_bad_a0_beta(a0):
    with pytest.raises(ValueError, match="a0"):
        m.ops_sensitivity_beta(a0)


def test_bad_a0_dirichlet_and_categories():
    with pytest.raises(ValueError, match="a0"):
        m.ops_sensitivity_dirichlet(0.25, 4)
    with pytest.raises(ValueError, match="n_categories"):
        m.ops_sensitivity_dirichlet(0.1, 1)


def test_statistics_outside_support():
    with pytest.raises(ValueError, match="non-negative"):
        m.privatize_counts([3, -1], 1.0)
    with pytest.raises(ValueError, match="integers"):
        m.privatize_counts([3, 1.5], 1.0)
    with pytest.raises(ValueError, match="integers"):
        m.laplace_mechanism([0.5], 1.0, 1, exact=True)
    with pytest.raises(ValueError, match="NaN"):
        m.laplace_mechanism([np.nan], 1.0, 1)


def test_shapes_that_disagree():
    with pytest.raises(ValueError, match="total"):
        m.project_counts(np.zeros((3, 2)), total=np.ones(2))
    with pytest.raises(ValueError, match="category axis"):
        m.privatize_counts(5, 1.0, relation="replace")


def test_bad_options():
    with pytest.raises(ValueError, match="relation"):
        m.count_sensitivity("swap")
    with pytest.raises(ValueError, match="project"):
        m.privatize_counts([1, 2], 1.0, project="yes")
    with pytest.raises(ValueError, match="sensitivity"):
        m.laplace_mechanism([1], 1.0, 0.0)
    with pytest.raises(ValueError, match="scan"):
        m.gibbs_scan_epsilon(1.0, "block")
    with pytest.raises(ValueError, match="exceeds"):
        m.gibbs_scan_epsilon(1.0, "random", n_updates=5, n_variables=4)
    with pytest.raises(TypeError, match="n_variables"):  # required with scan="random"
        m.gibbs_scan_epsilon(1.0, "random", n_updates=5)
    with pytest.raises(TypeError, match="n_categories"):
        m.ops_sensitivity_dirichlet(0.1, 2.5)
    with pytest.raises(ValueError, match="n_fields"):
        m.count_sensitivity("replace", n_fields=0)
    with pytest.raises(ValueError, match="system"):
        m.laplace_mechanism([1], 1.0, 1, rng="system")


# ---------------------------------------------------------------- noise laws


def test_float_laplace_noise_is_laplace():
    noise = m.laplace_mechanism(np.zeros(50_000), 0.5, 2, rng=11)
    assert stats.kstest(noise, stats.laplace(scale=4.0).cdf).pvalue > FALSE_ALARM
    # power: the wrong scale is rejected
    assert stats.kstest(noise, stats.laplace(scale=3.6).cdf).pvalue < FALSE_ALARM


def test_exact_noise_is_discrete_laplace():
    eps, delta = 1.0, 2
    noise = m.laplace_mechanism(np.zeros(20_000, dtype=np.int64), eps, delta, rng=12,
                                exact=True)
    assert noise.dtype == np.int64
    alpha = math.exp(-eps / delta)
    support = np.arange(-60, 61)
    pmf = np.exp(two_sided_geometric_logpmf(support, alpha))
    pmf[-1] += 1 - pmf.sum()
    assert chisquare_gof(noise, support, pmf)
    wrong = np.exp(two_sided_geometric_logpmf(support, math.exp(-1.2 * eps / delta)))
    wrong[-1] += 1 - wrong.sum()
    assert not chisquare_gof(noise, support, wrong)


def test_reproducible():
    a = m.privatize_counts([[3, 7], [1, 1]], 1.0, rng=5)
    b = m.privatize_counts([[3, 7], [1, 1]], 1.0, rng=5)
    np.testing.assert_array_equal(a, b)
    c = m.privatize_counts([3, 7], 1.0, rng=5, exact=True, project="none")
    d = m.privatize_counts([3, 7], 1.0, rng=5, exact=True, project="none")
    np.testing.assert_array_equal(c, d)


# ---------------------------------------------------------------- projections


def test_clip_projection():
    np.testing.assert_array_equal(m.project_counts([-1.5, 2.0, 0.0]), [0.0, 2.0, 0.0])


def _simplex_by_bisection(v, total):
    lo, hi = v.min() - total - 1, v.max() + 1
    for _ in range(200):
        mid = (lo + hi) / 2
        if np.maximum(v - mid, 0).sum() > total:
            lo = mid
        else:
            hi = mid
    return np.maximum(v - (lo + hi) / 2, 0)


def test_total_projection_is_the_euclidean_projection():
    rng = np.random.default_rng(3)
    v = rng.normal(5, 8, size=(200, 6))
    total = rng.integers(0, 40, size=200).astype(float)
    out = m.project_counts(v, total)
    assert np.all(out >= 0)
    np.testing.assert_allclose(out.sum(axis=1), total, atol=1e-9)
    ref = np.array([_simplex_by_bisection(r, t) for r, t in zip(v, total)])
    np.testing.assert_allclose(out, ref, atol=1e-8)


def test_privatize_counts_projections_per_relation():
    y = np.array([[30, 10, 0], [0, 0, 5]])
    out = m.privatize_counts(y, 0.5, relation="replace", rng=1)
    np.testing.assert_allclose(out.sum(axis=1), y.sum(axis=1))
    assert np.all(out >= 0)
    out = m.privatize_counts(y, 0.5, relation="add_remove", rng=1)
    assert np.all(out >= 0)
    raw = m.privatize_counts(y, 0.5, relation="add_remove", project="none", rng=1)
    np.testing.assert_array_equal(out, np.maximum(raw, 0))
