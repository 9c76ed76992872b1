"""Measured privacy on neighbouring data sets: each mechanism's output histogram stays within
e^epsilon of its neighbour's (tolerance: Bonferroni z times the cell's standard error at
FALSE_ALARM), and the same test rejects the mechanism run with half the noise."""
import numpy as np
import pytest

from lpp.central import audit, conjugate, mechanisms

N_DRAWS = 400_000
EDGES_2D = [np.arange(0.0, 24.0, 2.0)] * 2


def _laplace_pair(eps_mechanism, **kw):
    # replace one record of 20: (n+, n-) = (10, 10) vs (11, 9), L1 distance 2 = sensitivity
    x = mechanisms.privatize_counts(np.tile([10, 10], (N_DRAWS, 1)), eps_mechanism,
                                    relation="replace", project="clip", rng=1, **kw)
    y = mechanisms.privatize_counts(np.tile([11, 9], (N_DRAWS, 1)), eps_mechanism,
                                    relation="replace", project="clip", rng=2, **kw)
    return x, y


def test_laplace_statistics_are_private():
    x, y = _laplace_pair(1.0)
    result = audit.histogram_privacy_test(x, y, EDGES_2D, 1.0)
    assert result, str(result)
    # the test is not vacuous: the worst cells reach the bound
    assert result.max_abs_log_ratio > 0.9


def test_laplace_with_half_the_noise_fails():
    x, y = _laplace_pair(2.0)  # scale sensitivity / 2: half the noise
    assert not audit.histogram_privacy_test(x, y, EDGES_2D, 1.0)


def test_discrete_laplace_is_private_add_remove():
    n = 200_000
    support = np.arange(-10.5, 22.5)
    for eps_mechanism, ok in ((1.0, True), (2.0, False)):
        x = mechanisms.privatize_counts(np.full((n, 1), 5), eps_mechanism, relation="add_remove",
                                        project="none", rng=3)
        y = mechanisms.privatize_counts(np.full((n, 1), 6), eps_mechanism, relation="add_remove",
                                        project="none", rng=4)
        assert bool(audit.histogram_privacy_test(x, y, support, 1.0)) is ok


@pytest.mark.parametrize("eps_mechanism, ok", [(1.0, True), (2.0, False)])
def test_ops_sample_on_a_grid(eps_mechanism, ok):
    # N = 5 records, one success replaced by a failure; eps_mechanism = 2 halves T
    a0 = 0.2
    x = conjugate.ops_beta_bernoulli(0, 5, eps_mechanism, a0, size=N_DRAWS, rng=5)
    y = conjugate.ops_beta_bernoulli(1, 4, eps_mechanism, a0, size=N_DRAWS, rng=6)
    result = audit.histogram_privacy_test(x, y, np.linspace(a0, 1 - a0, 13), 1.0)
    assert bool(result) is ok, str(result)


def test_errors():
    with pytest.raises(ValueError, match="dimension"):
        audit.histogram_privacy_test(np.zeros((10, 2)), np.zeros(10), 3, 1.0)
    with pytest.raises(ValueError, match="no cell"):
        audit.histogram_privacy_test(np.zeros(10), np.zeros(10), 3, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        audit.histogram_privacy_test(np.zeros(10), np.zeros(10), 3, 0.0)


@pytest.mark.parametrize("eps_mechanism, ok", [(1.0, True), (3.0, False)])
def test_ops_truncated_dirichlet_sample_on_a_grid(eps_mechanism, ok):
    """K = 3, a0 = 0.1; one record of eight moves from category 1 to category 0; events:
    cells of log(theta_1 / theta_0), the direction in which the density ratio varies. The
    measured worst ratio is ~e^0.47 at the right temperature; at half the temperature it
    sits at ~e^0.99, on the bound, so the power check uses a third (~e^1.35, rejected)."""
    a0 = 0.1
    t = mechanisms.ops_temperature(eps_mechanism, mechanisms.ops_sensitivity_dirichlet(a0, 3))
    draws = []
    for seed, counts in ((7, [0.0, 4.0, 4.0]), (8, [1.0, 3.0, 4.0])):
        alpha = np.tile(conjugate.tempered_params(np.array(counts), t), (300_000, 1))
        theta = conjugate.sample_truncated_dirichlet(alpha, a0, rng=seed)
        draws.append(np.log(theta[:, 1] / theta[:, 0]))
    edges = np.linspace(np.log(a0 / 0.8), np.log(0.8 / a0), 16)
    result = audit.histogram_privacy_test(draws[0], draws[1], edges, 1.0)
    assert bool(result) is ok, str(result)
