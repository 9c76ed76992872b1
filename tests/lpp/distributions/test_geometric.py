"""Two-sided geometric log-pmf against scipy's discrete Laplace (dlaplace)."""
import numpy as np
import pytest
from scipy import stats

from lpp.distributions import two_sided_geometric_logpmf


@pytest.mark.parametrize("alpha", [0.01, 0.3, 0.5, 0.9, 0.99])
def test_matches_scipy_dlaplace_and_sums_to_one(alpha):
    k = np.arange(-6000, 6001)
    ours = two_sided_geometric_logpmf(k, alpha)
    # scipy: dlaplace(a) pmf = tanh(a/2) exp(-a|k|), i.e. a = -log(alpha)
    with np.errstate(divide="ignore"):  # scipy takes the log of an underflowed pmf
        ref = stats.dlaplace.logpmf(k, -np.log(alpha))
    ok = ref > -700  # and is inexact just above underflow
    assert ok.sum() > 100 and np.isfinite(ours).all()
    np.testing.assert_allclose(ours[ok], ref[ok], rtol=1e-12)
    assert np.exp(ours).sum() == pytest.approx(1.0, abs=1e-12)


def test_broadcasting_and_bad_input():
    assert two_sided_geometric_logpmf(np.arange(3)[:, None], [0.2, 0.4]).shape == (3, 2)
    for bad in [0.0, 1.0, -0.1, np.nan]:
        with pytest.raises(ValueError, match="alpha"):
            two_sided_geometric_logpmf(1, bad)
    with pytest.raises(ValueError, match="integers"):
        two_sided_geometric_logpmf(0.5, 0.5)
