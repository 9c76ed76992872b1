"""Shared helpers of the inference tests: exact conditionals and small synthetic data sets."""
import numba
import numpy as np
import pytest
from scipy import stats

from lpp.mechanism import privatize


def exact_true_count_posterior(y_tilde, alpha, mu, top=None):
    """Support and pmf of ``P(y | y_tilde, mu) ∝ Pois(y; mu) alpha^|y_tilde - y|``, enumerated."""
    if top is None:
        top = int(max(y_tilde, 0) + mu + 60 * np.sqrt(mu + 1) + 60)
    support = np.arange(top)
    log_w = stats.poisson.logpmf(support, mu) + np.abs(y_tilde - support) * np.log(alpha)
    pmf = np.exp(log_w - log_w.max())
    return support, pmf / pmf.sum()


def geometric_noise(rng, alpha, shape):
    """2Geo(alpha) noise as a difference of numpy geometrics (independent of lpp.mechanism)."""
    return rng.geometric(1.0 - alpha, shape) - rng.geometric(1.0 - alpha, shape)


@pytest.fixture(scope="session")
def topic_data():
    """A small topic-model data set: (mu, y, y_tilde, alpha) with alpha = 0.5."""
    rng = np.random.default_rng(20190609)
    theta = rng.gamma(1.0, 1.0, (30, 3))
    phi = rng.gamma(0.3, 1.0, (3, 25))
    mu = theta @ phi
    y = rng.poisson(mu)
    alpha = 0.5
    return mu, y, privatize(y, alpha, rng=rng), alpha


@pytest.fixture(scope="session")
def exact_posterior():
    """:func:`exact_true_count_posterior` (tests cannot import conftest under importlib mode)."""
    return exact_true_count_posterior


@pytest.fixture
def threads():
    """Restores numba's thread count after a test that changes it."""
    before = numba.get_num_threads()
    yield
    numba.set_num_threads(before)


def assert_same_chain(a, b):
    """Two one-chain fits are the same run, bit for bit: seed, sweeps, saved draws, log joint,
    the rates' mean and the last point."""
    assert a.seed == b.seed and a.iterations_done == b.iterations_done
    assert np.array_equal(a.saved_iterations, b.saved_iterations)
    assert np.array_equal(a.mu_hat, b.mu_hat)
    assert np.array_equal(a.log_joint, b.log_joint)
    assert a.samples.keys() == b.samples.keys()
    for name in a.samples:
        assert np.array_equal(a.samples[name], b.samples[name]), name
    for name in a.state:
        assert np.array_equal(a.state[name], b.state[name]), name


@pytest.fixture(scope="session")
def same_chain():
    """:func:`assert_same_chain` (tests cannot import conftest under importlib mode)."""
    return assert_same_chain
