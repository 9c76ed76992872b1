"""Log-gamma differences and log I_nu(x) against independent references."""
import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
from scipy import special

from lpp.distributions import log_bessel_i, log_bessel_i_nb, log_bessel_ive_nb
from lpp.distributions._log_bessel import NU_UNIFORM, X_SERIES
from lpp.distributions._special import lgamma_diff_nb


@pytest.mark.parametrize("x, d", [(1e5, 3), (1e5, 250), (12.5, 40), (3.0, 5), (1e9, 7),
                                  (50.0, -30), (0.5, 2)])
def test_lgamma_diff_matches_exact_log_product(x, d):
    # Γ(x + d)/Γ(x) = x (x+1) ... (x+d-1) for integer d >= 0
    if d >= 0:
        ref = math.fsum(math.log(x + j) for j in range(d))
    else:
        ref = -math.fsum(math.log(x + d + j) for j in range(-d))
    assert lgamma_diff_nb(x, float(d)) == pytest.approx(ref, rel=1e-14, abs=1e-14)


def _log_iv_decimal(nu, x, digits=40):
    """log I_nu(x) for integer nu from the power series in 40-digit decimal arithmetic."""
    with localcontext() as ctx:
        ctx.prec = digits
        half = Decimal(x) / 2
        q = half * half
        term = half ** nu / Decimal(math.factorial(nu))
        total = term
        k = 0
        while True:
            k += 1
            term = term * q / (k * (k + nu))
            total += term
            if k > float(x) and term < total * Decimal(10) ** (-digits):
                break
        return float(total.ln())


# (nu, x) where scipy's ive underflows (large nu, small x) or iv overflows (large x)
HARD_POINTS = [(10_000, "1"), (10_000, "100"), (500, "2"), (2_000, "0.5"), (1_000, "0.001"),
               (0, "3000"), (3, "800"), (40, "1500"), (10_000, "20000"), (9, "150"), (10, "99"),
               (1_000, "88407"), (19, "101"), (25, "300")]


@pytest.mark.parametrize("nu, x", HARD_POINTS)
def test_log_bessel_i_matches_high_precision_series(nu, x):
    ref = _log_iv_decimal(nu, x)
    assert log_bessel_i(nu, float(x)) == pytest.approx(ref, rel=2e-15, abs=1e-13)


# scipy (Amos) is itself off by ~1e-14 for half-integer orders and by ~1e-13 for x >> 1e4
# (checked against the decimal series), so it is a reference only on this grid
NUS = [0.0, 1.0, 2.0, 7.0, 15.0, 19.99, 20.0, 20.5, 30.0, 100.0, 1000.0, 1e4]
XS = [1e-10, 1e-3, 0.2, 1.0, 4.0, 25.0, 99.0, 100.0, 100.5, 400.0, 3000.0, 2e4]


def test_log_bessel_ive_matches_scipy_where_scipy_is_accurate():
    worst = 0.0
    checked = 0
    for nu in NUS:
        for x in XS:
            ref = special.ive(nu, x)
            if not 1e-280 < ref < 1e280:  # scipy under/overflows: covered elsewhere
                continue
            ours = log_bessel_ive_nb(nu, x)
            # relative error of ive itself; the scale of log I sets the unavoidable part
            err = abs(math.expm1(ours - math.log(ref))) / max(1.0, abs(math.log(ref)))
            worst = max(worst, err)
            checked += 1
    assert checked > 100
    assert worst < 5e-15


@pytest.mark.parametrize("x", [1e-5, 0.7, 3.1, 11.3, 99.5, 250.0, 1e4])
def test_half_integer_order_closed_form(x):
    # I_{1/2}(x) = sqrt(2/(pi x)) sinh(x)  =>  log(I e^-x) = log(2/(pi x))/2 + log1p(-e^-2x) - log 2
    ref = 0.5 * math.log(2 / (math.pi * x)) + math.log(-math.expm1(-2 * x)) - math.log(2)
    assert log_bessel_ive_nb(0.5, x) == pytest.approx(ref, rel=2e-15, abs=2e-15)


def test_regimes_agree_at_their_boundaries():
    for nu in [0.0, 5.0, NU_UNIFORM - 1e-9]:
        below = log_bessel_i_nb(nu, X_SERIES)
        above = log_bessel_i_nb(nu, np.nextafter(X_SERIES, 200))
        assert above - below == pytest.approx(0.0, abs=1e-12)
    for x in [1e-6, 1.0, 50.0, 1e3, 1e6]:
        lo = log_bessel_i_nb(np.nextafter(NU_UNIFORM, 0), x)
        hi = log_bessel_i_nb(NU_UNIFORM, x)
        assert lo - hi == pytest.approx(0.0, abs=1e-11 * max(1.0, abs(hi)))


def test_asymptotics_where_scipy_gives_zero_or_inf():
    # x -> 0: log I_nu(x) = nu log(x/2) - lgamma(nu+1) + x^2/(4(nu+1)) + O(x^4)
    for nu in [0.0, 3.0, 50.0, 1e4]:
        x = 1e-150
        assert log_bessel_i(nu, x) == pytest.approx(nu * math.log(x / 2) - math.lgamma(nu + 1),
                                                   rel=1e-14, abs=1e-14)
    # x -> inf: log I_nu(x) = x - log(2 pi x)/2 - (4nu^2 - 1)/(8x) + O(x^-2)
    for nu in [0.0, 1.0, 20.0]:
        x = 1e12
        ref = x - 0.5 * math.log(2 * math.pi * x) - (4 * nu * nu - 1) / (8 * x)
        assert log_bessel_i(nu, x) == pytest.approx(ref, rel=1e-15)
    assert np.isfinite(log_bessel_i(1e4, 1.0)) and special.iv(1e4, 1.0) == 0.0
    assert np.isfinite(log_bessel_i(0.0, 1e6)) and np.isinf(special.iv(0.0, 1e6))


def test_edge_values_and_errors():
    assert log_bessel_i(0.0, 0.0) == 0.0
    assert log_bessel_i(2.0, 0.0) == -np.inf
    assert log_bessel_i(2.0, np.inf) == np.inf
    assert log_bessel_i([0.0, 1.0], [[1.0], [2.0]]).shape == (2, 2)
    with pytest.raises(ValueError, match="nu"):
        log_bessel_i(-0.5, 1.0)
    with pytest.raises(ValueError, match="x"):
        log_bessel_i(0.5, -1.0)
    with pytest.raises(ValueError, match="NaN"):
        log_bessel_i(0.5, np.nan)
    assert math.isnan(log_bessel_i_nb(-1.0, 1.0))
