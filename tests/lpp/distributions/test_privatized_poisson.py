"""The closed-form log-pmf of a privatized Poisson count against the sum over the true count."""
import math

import numpy as np
import pytest
from scipy import special, stats

from lpp.distributions import privatized_poisson_logpmf


@pytest.mark.parametrize("alpha", [1e-50, 0.01, math.exp(-1.0), 0.9, 0.999])
def test_the_privatized_pmf_is_the_sum_over_the_true_count(alpha):
    x = np.array([-40, -3, 0, 1, 2, 7, 40, 300, 0, 5, 5, 5])
    mu = np.array([0.3, 2.0, 0.0, 1e-6, 40.0, 900.0, 3.0, 250.0, 5.0, 0.0, 5.0, 1e4])
    y = np.arange(20000)
    brute = special.logsumexp(
        stats.poisson.logpmf(y[None], mu[:, None]) + np.log((1 - alpha) / (1 + alpha))
        + np.abs(x[:, None] - y[None]) * np.log(alpha), axis=1)
    np.testing.assert_allclose(privatized_poisson_logpmf(x, mu, alpha), brute, rtol=1e-10, atol=1e-10)
    if 0.005 < alpha < 0.99:  # a pmf: it sums to 1 over the integers (the grid holds it)
        grid = np.arange(-6000, 6000)
        total = np.exp(privatized_poisson_logpmf(grid, np.full(grid.shape, 7.0), alpha)).sum()
        assert total == pytest.approx(1.0, abs=1e-9)


def test_the_scalar_twin_is_the_vectorised_pmf():
    from lpp.distributions import privatized_poisson_logpmf_nb

    x = np.array([-5, 0, 1, 3, 12, 40])
    mu = np.array([0.2, 0.0, 1e-8, 3.0, 30.0, 5.0])
    for alpha in (0.05, math.exp(-1.0), 0.95):
        twin = [privatized_poisson_logpmf_nb(int(k), float(m), alpha) for k, m in zip(x, mu)]
        np.testing.assert_array_equal(twin, privatized_poisson_logpmf(x, mu, alpha))


@pytest.mark.parametrize("args, match", [
    (([1.5], [1.0], 0.5), "x"), (([1], [-1.0], 0.5), "mu"), (([1], [1.0], 1.0), "alpha"),
    (([1, 2], [1.0, 2.0, 3.0], 0.5), "broadcast")])
def test_bad_input_names_the_argument(args, match):
    with pytest.raises(ValueError, match=match):
        privatized_poisson_logpmf(*args)
