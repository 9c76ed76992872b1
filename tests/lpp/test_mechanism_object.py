"""GeometricMechanism: one privacy level as an object, read wherever a bare alpha is."""
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from lpp.inference import RunOptions, TopicModel, fit_private
from lpp.mechanism import (
    ExactAlpha,
    GeometricMechanism,
    alpha_from_epsilon,
    alpha_of,
    exact_alpha,
    privatize,
    sample_two_sided_geometric,
)
from lpp.testing import FALSE_ALARM, chisquare_gof
from lpp.vi import VIOptions, fit_variational


def test_the_level_is_exp_of_minus_epsilon_over_n():
    mechanism = GeometricMechanism(epsilon=1.5, N=3)
    assert mechanism.level == float(alpha_from_epsilon(1.5, 3)) == math.exp(-0.5)
    assert mechanism.epsilon_over_n == 0.5
    assert GeometricMechanism(alpha=0.25).level == 0.25
    assert GeometricMechanism(alpha=0.25).epsilon_over_n == pytest.approx(math.log(4), rel=1e-15)


def test_per_row_levels_broadcast_as_given():
    epsilon = np.array([[0.5], [1.0], [2.0]])
    mechanism = GeometricMechanism(epsilon=epsilon, N=2)
    np.testing.assert_array_equal(mechanism.level, np.exp(-epsilon / 2))
    np.testing.assert_array_equal(mechanism.epsilon_over_n, epsilon / 2)
    y = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(mechanism.privatize(y, rng=5),
                                  privatize(y, np.exp(-epsilon / 2), rng=5))


def test_the_noise_logpmf_is_scipys_discrete_laplace():
    """scipy.stats.dlaplace(a) is the two-sided geometric with alpha = exp(-a)."""
    tau = np.arange(-30, 31)
    for epsilon, n in ((1.0, 1), (0.3, 2), (4.0, 0.5)):
        mechanism = GeometricMechanism(epsilon=epsilon, N=n)
        np.testing.assert_allclose(mechanism.noise_logpmf(tau),
                                   stats.dlaplace(epsilon / n).logpmf(tau), rtol=1e-12)


def test_the_privatized_logpmf_sums_the_true_count_out():
    """log P(y~ | mu) against the direct sum of Pois(y; mu) 2Geo(y~ - y) over y."""
    mechanism = GeometricMechanism(epsilon=0.7)
    y_tilde = np.array([-4, -1, 0, 1, 3, 9])
    mu = np.array([0.2, 1.0, 2.5, 0.05, 3.0, 6.0])
    y = np.arange(0, 400)
    direct = [np.log(np.sum(stats.poisson.pmf(y, m) * np.exp(mechanism.noise_logpmf(x - y))))
              for x, m in zip(y_tilde, mu)]
    np.testing.assert_allclose(mechanism.privatized_logpmf(y_tilde, mu), direct, rtol=1e-10)
    with pytest.raises(ValueError, match="one noise level"):
        GeometricMechanism(epsilon=[[1.0], [2.0]]).privatized_logpmf([[1], [2]], [[1.0], [1.0]])


def test_its_noise_is_the_samplers_and_fits_the_pmf():
    mechanism = GeometricMechanism(epsilon=0.4)
    draws = mechanism.sample_noise(size=50_000, rng=3)
    np.testing.assert_array_equal(
        draws, sample_two_sided_geometric(mechanism.level, size=50_000, rng=3))
    support = np.arange(-200, 201)
    pmf = np.exp(mechanism.noise_logpmf(support))
    assert chisquare_gof(draws, support, pmf).pvalue >= FALSE_ALARM


def test_privatize_takes_the_mechanism_for_alpha():
    y = np.random.default_rng(0).poisson(2.0, size=(20, 7))
    mechanism = GeometricMechanism(epsilon=1.0)
    np.testing.assert_array_equal(privatize(y, mechanism, rng=9), mechanism.privatize(y, rng=9))
    np.testing.assert_array_equal(privatize(y, mechanism, rng=9),
                                  privatize(y, math.exp(-1.0), rng=9))


def test_an_exact_mechanism_reads_epsilon_and_n_as_rationals():
    mechanism = GeometricMechanism(epsilon="1/3", N=2, exact=True)
    assert mechanism.level == exact_alpha(Fraction(1, 3), 2)
    assert mechanism.epsilon_over_n == pytest.approx(1 / 6, rel=1e-15)
    assert alpha_of(mechanism) == float(ExactAlpha(Fraction(1, 6)))
    y = np.array([[1, 0, 4]])
    np.testing.assert_array_equal(
        mechanism.privatize(y, rng=2), privatize(y, exact_alpha("1/3", 2), rng=2, exact=True))
    per_row = GeometricMechanism(epsilon=np.array([[1], [2]]), exact=True)
    assert [a.epsilon_over_n for a in per_row.level.ravel()] == [1, 2]


@pytest.mark.parametrize("settings, error, match", [
    ({}, ValueError, "epsilon is required"),
    ({"epsilon": 1.0, "alpha": 0.5}, ValueError, "not both"),
    ({"epsilon": 0.0}, ValueError, "epsilon"),
    ({"epsilon": 1.0, "N": -1}, ValueError, "N"),
    ({"alpha": 1.0}, ValueError, "alpha"),
    ({"epsilon": 1.0, "exact": 1}, TypeError, "exact"),
    ({"alpha": 0.5, "exact": True}, TypeError, "ExactAlpha"),
    ({"epsilon": 1e6}, ValueError, "rounds to 0 or 1"),
])
def test_a_wrong_level_fails_where_it_is_written(settings, error, match):
    with pytest.raises(error, match=match):
        GeometricMechanism(**settings)


def test_the_level_must_be_named():
    """epsilon and alpha are easy to mistake for each other: a bare number is refused."""
    with pytest.raises(TypeError):
        GeometricMechanism(0.5)


def test_alpha_of_reads_mechanisms_and_leaves_bare_levels_alone():
    assert alpha_of(GeometricMechanism(epsilon=2.0)) == math.exp(-2.0)
    assert alpha_of(0.3) == 0.3
    assert alpha_of(None) is None
    levels = np.array([0.2, 0.4])
    assert alpha_of(levels) is levels


def test_fits_take_the_mechanism_as_they_take_its_alpha():
    """The same chain, bit for bit, whichever way the level is given (Gibbs and CAVI)."""
    mechanism = GeometricMechanism(epsilon=1.0)
    y_tilde = mechanism.privatize(np.random.default_rng(1).poisson(1.0, size=(12, 9)), rng=2)
    by_object = fit_private(y_tilde, mechanism, TopicModel(2), run=RunOptions(n_iter=6), rng=4)
    by_alpha = fit_private(y_tilde, mechanism.level, TopicModel(2), run=RunOptions(n_iter=6),
                           rng=4)
    np.testing.assert_array_equal(by_object.samples["phi"], by_alpha.samples["phi"])
    np.testing.assert_array_equal(by_object.mu_hat, by_alpha.mu_hat)
    run = VIOptions(max_iter=5)
    vi_object = fit_variational(y_tilde, mechanism, TopicModel(2), run=run, rng=4)
    vi_alpha = fit_variational(y_tilde, mechanism.level, TopicModel(2), run=run, rng=4)
    np.testing.assert_array_equal(vi_object.mu_hat, vi_alpha.mu_hat)
