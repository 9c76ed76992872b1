"""The count steps of the collapsed CAVI: the dense engine against its definition."""
import numpy as np
from scipy import special

from lpp.mechanism import privatize
from lpp.vi.counts import count_factor
from lpp.vi.engines import DenseCounts


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    g = rng.gamma(1.0, 1.0, (30, 20))
    y = rng.poisson(g)
    alpha = np.full(y.shape, 0.4)
    alpha[::2] = 0.7  # levels may differ between entries
    observed = rng.random(y.shape) < 0.8
    return g, y, privatize(y, alpha, rng=rng), alpha, observed


def test_private_step_matches_the_count_factors_entry_by_entry():
    g, _, y_tilde, alpha, observed = _problem()
    r, bound = DenseCounts(y_tilde, alpha, observed, True).step(g)
    log_z, mean = count_factor(y_tilde, alpha, g)
    expected = (log_z + np.log((1 - alpha) / (1 + alpha)))[observed].sum()
    np.testing.assert_allclose(bound, expected, rtol=1e-12)
    np.testing.assert_allclose(r, np.where(observed, mean / g, 0.0), rtol=1e-12)


def test_true_count_step_matches_the_poisson_terms():
    g, y, _, alpha, observed = _problem(1)
    r, bound = DenseCounts(y, alpha, observed, False).step(g)
    expected = (y * np.log(g) - special.gammaln(y + 1.0))[observed].sum()
    np.testing.assert_allclose(bound, expected, rtol=1e-12)
    np.testing.assert_array_equal(r, np.where(observed, y / g, 0.0))


def test_step_without_the_bound_gives_the_same_expectations():
    g, y, y_tilde, alpha, observed = _problem(2)
    for counts, private in ((y_tilde, True), (y, False)):
        engine = DenseCounts(counts, alpha, observed, private)
        r, _ = engine.step(g)
        r_only, bound = engine.step(g, bound=False)
        np.testing.assert_array_equal(r_only, r)
        assert np.isnan(bound)
