"""PrivateTopicModel.score against a brute-force computation: the predictive pmf of each
entry summed over the true count with scipy.stats, averaged over the chains' draws, and the
held-out halves (the columns split by parity, each scored from a chain on the other)."""
import numba
import numpy as np
import pytest
from scipy import special, stats

import lpp.estimators._topic_model as topic_model
from lpp.estimators import PrivateTopicModel
from lpp.estimators._predictive import log_predictive
from lpp.simulate import make_private_factorization


@pytest.fixture(scope="module")
def data():
    return make_private_factorization(14, 7, 2, rng=4)


def brute_force_log_predictive(counts, theta_draws, phi, alpha):
    """``log((1/S) sum_s P(x | mu_s))`` by direct summation over the true count
    ``y = 0..399`` of ``Pois(y; mu) 2Geo(x - y; alpha)`` (the Poisson pmf without noise)."""
    rates = theta_draws @ phi  # (S, D, V)
    if alpha is None:
        per_draw = stats.poisson.logpmf(counts[None], rates)
    else:
        y = np.arange(400)
        noise = (np.log1p(-alpha) - np.log1p(alpha)
                 + np.abs(counts[None, ..., None] - y) * np.log(alpha))
        per_draw = special.logsumexp(stats.poisson.logpmf(y, rates[..., None]) + noise, axis=-1)
    return special.logsumexp(per_draw, axis=0) - np.log(len(theta_draws))


def spy_on_the_predictive(monkeypatch):
    """Record the arguments of each ``log_predictive`` call that score makes."""
    calls = []

    def recording(counts, theta_draws, phi, alpha):
        calls.append((np.array(counts), np.array(theta_draws), np.array(phi), alpha))
        return log_predictive(counts, theta_draws, phi, alpha)

    monkeypatch.setattr(topic_model, "log_predictive", recording)
    return calls


@pytest.mark.parametrize("method", ["collapsed", "nonprivate"])
def test_score_is_the_mean_of_the_brute_force_predictive(data, method, monkeypatch):
    private = method != "nonprivate"
    X = data.y_tilde if private else data.y
    est = PrivateTopicModel(2, alpha=data.alpha if private else None, method=method,
                            n_iter=30, random_state=0).fit(X[:10])
    calls = spy_on_the_predictive(monkeypatch)
    score = est.score(X[10:])
    # the even columns scored from a chain on the odd ones, then the odd from the even
    assert [c[0].shape for c in calls] == [(4, 4), (4, 3)]
    np.testing.assert_array_equal(calls[0][0], X[10:, 0::2])
    np.testing.assert_array_equal(calls[1][0], X[10:, 1::2])
    np.testing.assert_array_equal(calls[0][2], est.components_[:, 0::2])
    assert calls[0][1].shape == (15, 4, 2)  # every saved draw (15 < 100) of theta
    brute = [brute_force_log_predictive(counts, theta, phi, alpha)
             for counts, theta, phi, alpha in calls]
    assert score == pytest.approx(np.concatenate([b.ravel() for b in brute]).mean(),
                                  rel=1e-10)


def test_the_draws_that_score_a_half_never_see_it(data, monkeypatch):
    """Changing the even columns leaves the draws that score them unchanged (same seed), and
    changes those that score the odd columns."""
    est = PrivateTopicModel(2, alpha=data.alpha, n_iter=20, random_state=0).fit(data.y_tilde)
    calls = spy_on_the_predictive(monkeypatch)
    est.score(data.y_tilde)
    changed = data.y_tilde.copy()
    changed[:, 0::2] += 3
    est.score(changed)
    np.testing.assert_array_equal(calls[0][1], calls[2][1])
    assert not np.array_equal(calls[1][1], calls[3][1])


def test_the_predictive_is_the_same_on_any_number_of_threads(data):
    rng = np.random.default_rng(0)
    theta = rng.gamma(1.0, 3.0, size=(5, 14, 2))
    phi = rng.gamma(1.0, 1.0, size=(2, 7))
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = log_predictive(data.y_tilde, theta, phi, data.alpha)
        numba.set_num_threads(before)
        many = log_predictive(data.y_tilde, theta, phi, data.alpha)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one, many)
    np.testing.assert_allclose(one, brute_force_log_predictive(data.y_tilde, theta, phi,
                                                               data.alpha), rtol=1e-10)
