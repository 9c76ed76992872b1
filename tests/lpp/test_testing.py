"""The chi-square helper must accept correct samplers and reject wrong ones."""
import numpy as np
import pytest
from scipy import stats

from lpp.testing import FALSE_ALARM, chisquare_gof

SUPPORT = np.arange(0, 60)


def _pmf(mu):
    return stats.poisson.pmf(SUPPORT, mu)


def test_accepts_exact_sampler():
    draws = np.random.default_rng(1).poisson(7.0, 100_000)
    res = chisquare_gof(draws, SUPPORT, _pmf(7.0))
    assert res.pvalue > FALSE_ALARM and res.n_bins > 10 and res


@pytest.mark.parametrize("wrong", ["off_by_one", "mean_off_2pct"])
def test_rejects_wrong_sampler(wrong):
    rng = np.random.default_rng(2)
    draws = rng.poisson(7.0, 100_000) + 1 if wrong == "off_by_one" else rng.poisson(7.14, 100_000)
    res = chisquare_gof(draws, SUPPORT, _pmf(7.0))
    assert res.pvalue < FALSE_ALARM and not res


def test_draws_outside_support_count_in_the_tails():
    draws = np.r_[np.random.default_rng(3).poisson(7.0, 10_000), [500] * 50]
    assert chisquare_gof(draws, SUPPORT, _pmf(7.0)).pvalue < FALSE_ALARM


def test_rejects_a_support_that_misses_mass():
    with pytest.raises(ValueError, match="widen"):
        chisquare_gof([1, 2], np.arange(3), stats.poisson.pmf(np.arange(3), 7.0))
    with pytest.raises(ValueError, match="consecutive"):
        chisquare_gof([1], [0, 2], [0.5, 0.5])
