"""The collapsed factor q(y) of one count: log normaliser and mean against brute-force sums."""
import numpy as np
import pytest
from scipy import special, stats

from lpp.vi import count_factor


def brute_force(y_tilde, alpha, g, top=None):
    """log Z and E[y] of q(y) ∝ g^y / y! alpha^|y_tilde - y| by summing the support."""
    if top is None:
        top = int(max(y_tilde, 0) + g / alpha + 60 * np.sqrt(g / alpha + 1) + 80)
    y = np.arange(top)
    log_w = special.xlogy(y, g) - special.gammaln(y + 1.0) + np.abs(y_tilde - y) * np.log(alpha)
    log_z = special.logsumexp(log_w)
    return log_z, float(np.sum(y * np.exp(log_w - log_z)))


CASES = [(yt, a, g) for yt in (-7, -1, 0, 1, 2, 5, 17, 60) for a in (0.05, 0.37, 0.9)
         for g in (1e-6, 0.03, 0.8, 4.0, 35.0)]


@pytest.mark.parametrize("log_space", [False, True])
def test_log_normaliser_and_mean_equal_brute_force_sums(log_space):
    yt, a, g = (np.array(c) for c in zip(*CASES))
    log_z, mean = count_factor(yt, a, g, log_space=log_space)
    for i, case in enumerate(CASES):
        want_z, want_mean = brute_force(*case)
        assert log_z[i] == pytest.approx(want_z, rel=1e-11, abs=1e-11), case
        assert mean[i] == pytest.approx(want_mean, rel=1e-10, abs=1e-14), case


def test_large_counts_and_rates_take_the_log_space_branch_accurately():
    cases = [(700, 0.5, 300.0), (40, 0.01, 20.0), (1500, 0.3, 450.0), (3, 0.2, 1e4)]
    for case in cases:
        log_z, mean = count_factor(*case)
        want_z, want_mean = brute_force(*case, top=int(case[0] + case[2] / case[1] * 3 + 500))
        assert float(log_z) == pytest.approx(want_z, rel=1e-11), case
        assert float(mean) == pytest.approx(want_mean, rel=1e-9), case


def test_non_positive_counts_give_the_poisson_factor():
    yt = np.array([-4, -1, 0])
    log_z, mean = count_factor(yt, 0.3, 2.5)
    np.testing.assert_allclose(mean, 0.3 * 2.5)
    np.testing.assert_allclose(log_z, -yt * np.log(0.3) + 0.75)
    # q(y) itself: Pois(alpha g)
    y = np.arange(40)
    log_w = special.xlogy(y, 2.5) - special.gammaln(y + 1) + (y + 4) * np.log(0.3)
    np.testing.assert_allclose(np.exp(log_w - log_z[0]), stats.poisson.pmf(y, 0.75), atol=1e-15)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="alpha"):
        count_factor(1, 1.0, 1.0)
    with pytest.raises(ValueError, match="alpha"):
        count_factor(1, 0.0, 1.0)
    with pytest.raises(ValueError, match="g must"):
        count_factor(1, 0.5, -1.0)
    with pytest.raises(ValueError, match="g must"):
        count_factor(1, 0.5, np.nan)


def test_at_small_rates_the_count_step_sees_only_the_sign_of_the_noised_count():
    """Why the collapsed CAVI prunes topics on heavily noised data (docs/variational.md,
    *Topics that merge*): once the geometric rate ``g`` is well below ``alpha``, ``E[y] / g``
    is ``1 / alpha`` for every positive ``y_tilde`` and ``alpha`` for every other one, so the
    allocation no longer depends on how large the noised count is and a thin topic gets back
    only a constant multiple of its own rate."""
    alpha, g = 0.37, 1e-4
    _, mean = count_factor(np.array([1, 2, 5, 17]), alpha, g)
    np.testing.assert_allclose(mean / g, 1.0 / alpha, rtol=1e-3)
    _, mean = count_factor(np.array([0, -3]), alpha, g)
    np.testing.assert_allclose(mean / g, alpha)
    # at rates near the counts the size of y_tilde matters again
    _, mean = count_factor(np.array([1, 5]), alpha, 3.0)
    assert mean[1] > 2 * mean[0]
