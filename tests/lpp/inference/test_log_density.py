"""The log joint's data terms (lpp.inference.log_density): against scipy.stats, with masks and
every layout of the noise levels, and the one summation rule that makes the total independent
of threads and of how the rows are split."""
import numpy as np
import pytest
from scipy import stats

from lpp.inference.log_density import (
    _geometric_kernels,
    _poisson_kernels,
    geometric_row_sums,
    ordered_sum,
    poisson_row_sums,
)
from lpp.inference.models.base import Observed
from lpp.inference.privacy import noise_levels

SHAPE = (37, 23)


@pytest.fixture
def data():
    rng = np.random.default_rng(5)
    y = rng.poisson(1.5, SHAPE)
    y[rng.random(SHAPE) < 0.4] = 0
    mu = rng.gamma(0.7, 2.0, SHAPE)
    y_tilde = y + rng.integers(-4, 5, SHAPE)
    observed = Observed(rng.random(SHAPE) > 0.25)
    return y, mu, y_tilde, observed


def test_poisson_rows_match_scipy(data):
    y, mu, _, observed = data
    reference = stats.poisson.logpmf(y, mu)
    np.testing.assert_allclose(poisson_row_sums(y, mu), reference.sum(axis=1), rtol=1e-13)
    masked = np.where(observed.is_observed, reference, 0.0).sum(axis=1)
    np.testing.assert_allclose(poisson_row_sums(y, mu, observed), masked, rtol=1e-13)
    # rows are the leading index of a tensor; a zero rate under a count is impossible
    cube = poisson_row_sums(y.reshape(37, 23, 1), mu.reshape(37, 23, 1))
    assert np.array_equal(cube, poisson_row_sums(y, mu))
    assert poisson_row_sums(np.zeros((0, 4), int), np.zeros((0, 4))).shape == (0,)
    mu[0, 0], y[0, 0] = 0.0, 2
    assert poisson_row_sums(y, mu)[0] == -np.inf
    y[0, 0] = 0
    assert np.isfinite(poisson_row_sums(y, mu)[0])


@pytest.mark.parametrize("layout", ["scalar", "per row", "per entry"])
def test_geometric_rows_match_the_pmf_for_every_layout_of_alpha(data, layout):
    y, _, y_tilde, observed = data
    rng = np.random.default_rng(6)
    alpha = {"scalar": 0.4, "per row": rng.uniform(0.1, 0.9, (SHAPE[0], 1)),
             "per entry": rng.uniform(0.1, 0.9, SHAPE)}[layout]
    full = np.broadcast_to(alpha, SHAPE)
    # 2Geo(alpha) is the difference of two Geometric(1 - alpha) on {0, 1, ...}
    tau = y_tilde - y
    reference = (np.log1p(-full) - np.log1p(full)) + np.abs(tau) * np.log(full)
    np.testing.assert_allclose(
        reference[0, :3],
        [np.log(sum(stats.geom.pmf(j + 1, 1 - full[0, i])
                    * stats.geom.pmf(j + abs(t) + 1, 1 - full[0, i]) for j in range(400)))
         for i, t in enumerate(tau[0, :3])], rtol=1e-10)
    noise = noise_levels(alpha, SHAPE)
    np.testing.assert_allclose(geometric_row_sums(y_tilde, y, noise), reference.sum(axis=1),
                               rtol=1e-13)
    masked = np.where(observed.is_observed, reference, 0.0).sum(axis=1)
    np.testing.assert_allclose(geometric_row_sums(y_tilde, y, noise, observed), masked,
                               rtol=1e-13)


def test_the_total_is_the_same_float_for_any_threads_and_any_split_of_the_rows(data):
    """Each row is summed alone and the rows in order: the parallel and serial kernels agree
    bit for bit, and row blocks put back in order give the whole matrix's total (the
    distributed chain's log joint relies on it)."""
    y, mu, y_tilde, observed = data
    mask = observed.is_observed
    lik = [np.empty(SHAPE[0]), np.empty(SHAPE[0])]
    noise = [np.empty(SHAPE[0]), np.empty(SHAPE[0])]
    log_norm = np.full(SHAPE[0], np.log1p(-0.3) - np.log1p(0.3))
    log_alpha = np.full(SHAPE[0], np.log(0.3))
    for twin in (0, 1):
        _poisson_kernels[twin](y, mu, mask, False, lik[twin])
        _geometric_kernels[twin](y_tilde, y, log_norm, log_alpha, False, mask, False,
                                 noise[twin])
    assert np.array_equal(lik[0], lik[1]) and np.array_equal(noise[0], noise[1])
    whole = ordered_sum(poisson_row_sums(y, mu, observed))
    for cuts in ([0, 1, SHAPE[0]], [0, 10, 11, 30, SHAPE[0]]):
        parts = [poisson_row_sums(y[a:b], mu[a:b], Observed(mask[a:b]))
                 for a, b in zip(cuts[:-1], cuts[1:])]
        assert ordered_sum(np.concatenate(parts)) == whole
    terms = np.random.default_rng(1).normal(size=1000) * 1e6
    expected = 0.0
    for t in terms:
        expected += t
    assert ordered_sum(terms) == expected


def test_mismatched_shapes_are_refused(data):
    y, mu, y_tilde, _ = data
    with pytest.raises(ValueError, match="differ"):
        poisson_row_sums(y, mu[:, :-1])
    with pytest.raises(ValueError, match="differ"):
        geometric_row_sums(y_tilde[:-1], y, noise_levels(0.5, SHAPE))
