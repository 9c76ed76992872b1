"""Poisson log-pmf / log-cdf / log-sf (numba twins and wrappers) against scipy and exact sums."""
import math
import subprocess
import sys
from decimal import Decimal, localcontext

import numpy as np
import pytest
from numba import njit
from scipy import special, stats

from lpp.randomness import new_stream, seed_block
from lpp.distributions import (
    poisson_logcdf,
    poisson_logcdf_nb,
    poisson_logpmf,
    poisson_logsf,
    poisson_logsf_nb,
    poisson_nb,
    truncated_poisson_above_nb,
    truncated_poisson_at_most_nb,
)
from lpp.distributions.poisson import (
    _above_near_mean,
    _at_most_near_mean,
    _log_gamma_tail_large,
    _log_sum_down,
    _log_sum_up,
    _near_large_mean,
    poisson_logpmf_nb,
)
from lpp.testing import chisquare_gof

LAMS = [1e-6, 0.3, 1.0, 4.5, 30.0, 333.3, 1e4, 2.5e5]


@pytest.mark.parametrize("lam", LAMS)
def test_logpmf_matches_scipy(lam):
    k = np.arange(0, int(lam + 40 * math.sqrt(lam) + 60))
    # scipy's k log(lam) - lam - lgamma(k+1) cancels terms of size k log(lam): ~1e-16 of them
    tol = 1e-14 * max(1.0, lam * math.log(lam))
    np.testing.assert_allclose(poisson_logpmf(k, lam), stats.poisson.logpmf(k, lam),
                               rtol=1e-13, atol=tol)


_PI = Decimal("3.14159265358979323846264338327950288419716939937510")


def _logpmf_decimal(k, lam):
    """40-digit reference: k ln(lam) - lam - ln k!, ln k! by Stirling's series (k >= 1000)."""
    with localcontext() as ctx:
        ctx.prec = 40
        kd, ld = Decimal(k), Decimal(lam)
        log_fact = ((kd + Decimal("0.5")) * kd.ln() - kd + (2 * _PI).ln() / 2
                    + 1 / (12 * kd) - 1 / (360 * kd**3) + 1 / (1260 * kd**5))
        return float(kd * ld.ln() - ld - log_fact)


@pytest.mark.parametrize("k, lam", [(10_000, 10_000.0), (9_800, 10_000.0), (250_321, 2.5e5),
                                    (3_000_000, 2.99e6)])
def test_logpmf_is_accurate_for_large_means(k, lam):
    assert poisson_logpmf(k, lam) == pytest.approx(_logpmf_decimal(k, lam), abs=1e-14)


@pytest.mark.parametrize("lam", LAMS)
def test_logcdf_logsf_match_scipy_where_it_is_accurate(lam):
    k = np.arange(0, int(lam + 40 * math.sqrt(lam) + 60))
    for ours, ref in [(poisson_logcdf(k, lam), stats.poisson.logcdf(k, lam)),
                      (poisson_logsf(k, lam), stats.poisson.logsf(k, lam))]:
        ok = np.isfinite(ref) & (ref > -600)  # scipy's tails underflow beyond e^-700
        assert ok.sum() > 0
        np.testing.assert_allclose(ours[ok], ref[ok], rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("k, lam", [(0, 800.0), (5, 2000.0), (3000, 100.0), (40, 0.01),
                                    (10, 1e4), (1500, 1000.0)])
def test_deep_tails_match_log_space_sums(k, lam):
    # independent reference: logsumexp of scipy's log-pmf over the tail; the far-tail side
    # must be accurate relative to its size, the bulk side (log of ~1) absolutely
    lower = special.logsumexp(stats.poisson.logpmf(np.arange(0, k + 1), lam))
    upper = special.logsumexp(stats.poisson.logpmf(np.arange(k + 1, k + 20_000), lam))
    ours_lower, ours_upper = poisson_logcdf(k, lam), poisson_logsf(k, lam)
    assert np.isfinite(ours_lower) and np.isfinite(ours_upper)
    tail, ours_tail, bulk, ours_bulk = ((lower, ours_lower, upper, ours_upper) if lower < upper
                                        else (upper, ours_upper, lower, ours_lower))
    assert tail < -20
    assert ours_tail == pytest.approx(tail, rel=1e-11)
    assert ours_bulk == pytest.approx(bulk, abs=1e-10)  # the reference's own error


def test_the_two_tails_add_up_to_one():
    for lam in LAMS:
        k = np.arange(0, int(lam + 10 * math.sqrt(lam) + 10))
        total = np.logaddexp(poisson_logcdf(k, lam), poisson_logsf(k, lam))
        np.testing.assert_allclose(total, 0.0, atol=1e-13)


@njit
def _twins(k, lam):
    return poisson_logcdf_nb(k, lam), poisson_logsf_nb(k, lam)


def test_edge_cases_and_twins():
    assert _twins(-1, 3.0) == (-np.inf, 0.0)
    assert _twins(0, 0.0) == (0.0, -np.inf)
    cdf, sf = _twins(7, 3.0)
    assert cdf == pytest.approx(stats.poisson.logcdf(7, 3.0), rel=1e-13)
    assert sf == pytest.approx(stats.poisson.logsf(7, 3.0), rel=1e-13)
    with pytest.raises(ValueError, match="lam"):
        poisson_logcdf(2, -1.0)
    with pytest.raises(ValueError, match="integers"):
        poisson_logsf(2.5, 1.0)


# --- truncated Poisson draws ---------------------------------------------------------------------

N_TRUNCATED_DRAWS = 100_000


@njit
def _truncated(lam, n, above, n_draws, seed):
    rng = new_stream()
    seed_block(rng, seed, 0, 0)
    out = np.empty(n_draws, dtype=np.int64)
    if above:
        log_tail = poisson_logsf_nb(n, lam)
        for i in range(n_draws):
            out[i] = truncated_poisson_above_nb(rng, lam, n, log_tail)
    else:
        log_tail = poisson_logcdf_nb(n, lam)
        for i in range(n_draws):
            out[i] = truncated_poisson_at_most_nb(rng, lam, n, log_tail)
    return out


@pytest.mark.parametrize("lam,n,above", [
    (3.0, 6, False),     # mode inside: rejection
    (12.0, 5, False),    # pmf increasing on 0..n: inversion from the top
    (300.0, 280, False),
    (6.0, 2, True),      # mode above the cut: rejection
    (0.4, 3, True),      # far tail: inversion upwards
    (40.0, 45, True),
])
def test_truncated_poisson_matches_exact_pmf(lam, n, above):
    # seed 13 false-alarmed at (300, 280) (p = 9e-4); three runs of 2e6 draws passed there
    _assert_truncated_law(_truncated(lam, n, above, N_TRUNCATED_DRAWS, 2024), lam, n, above)


def _assert_truncated_law(draws, lam, n, above):
    """The draws follow Pois(lam) given X > n (``above``) or X <= n."""
    support = np.arange(n + 1, n + 400) if above else np.arange(0, n + 1)
    pmf = stats.poisson.pmf(support, lam)
    pmf /= pmf.sum()
    assert (draws > n).all() if above else (draws <= n).all()
    assert chisquare_gof(draws, support, pmf)


# --- large means: no hang, O(1) work -------------------------------------------------------------

def _exact_tails(k, lam):
    """``(log P(X <= k), log P(X > k))`` by the ratio sums, whatever their length (the
    reference for the asymptotic form, which takes over near large means)."""
    if k <= lam:
        cdf = poisson_logpmf_nb(k, lam) + _log_sum_down(k, lam)
        sf = math.log1p(-math.exp(cdf))
    else:
        sf = poisson_logpmf_nb(k + 1, lam) + _log_sum_up(k + 1, lam)
        cdf = math.log1p(-math.exp(sf))
    if k + 1 >= lam:
        sf = poisson_logpmf_nb(k + 1, lam) + _log_sum_up(k + 1, lam)
    else:
        cdf = poisson_logpmf_nb(k, lam) + _log_sum_down(k, lam)
    return cdf, sf


@pytest.mark.parametrize("lam", [2.0**20, 1e9])
@pytest.mark.parametrize("sds", [-8.0, -3.0, -0.5, 0.0, 0.5, 3.0, 8.0])
def test_tails_near_large_means_match_the_exact_sums(lam, sds):
    k = int(lam + sds * math.sqrt(lam))
    assert _near_large_mean(float(k), lam)  # the asymptotic form is the one under test
    cdf, sf = _twins(k, lam)
    ref_cdf, ref_sf = _exact_tails(k, lam)
    assert cdf == pytest.approx(ref_cdf, rel=1e-11, abs=1e-12)
    assert sf == pytest.approx(ref_sf, rel=1e-11, abs=1e-12)


def test_incomplete_gamma_expansion_is_accurate_at_moderate_size():
    for a in [1e4, 1e6]:
        for rel in [-3e-2, -1e-3, 0.0, 1e-3, 3e-2]:
            k = int(a * (1 + rel))
            ref_cdf, ref_sf = _exact_tails(k, a)
            assert _log_gamma_tail_large(k + 1.0, a, True) == pytest.approx(ref_cdf, rel=1e-13)
            assert _log_gamma_tail_large(k + 1.0, a, False) == pytest.approx(ref_sf, rel=1e-13)


def _returns(code: str, seconds: int) -> None:
    """Run ``code`` in a fresh interpreter: its timeout turns a hang into a failure (no timing
    is asserted)."""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=seconds)
    assert run.returncode == 0, run.stderr


_TAIL_CODE = """
from lpp.distributions import poisson_logcdf_nb, poisson_logsf_nb
for k, lam in [(10**16, 1e16), (10**16, 1e16 + 3e7), (3 * 10**15, 3e15), (10**18, 1e18)]:
    poisson_logcdf_nb(k, lam), poisson_logsf_nb(k, lam)
"""


def test_tails_at_huge_counts_return_at_once():
    # a float loop counter stopped moving at 2**53 and these never returned; the sums near
    # the mean took 1e8 terms at 1e16
    _returns(_TAIL_CODE, seconds=120)


@njit
def _near_mean_draws(lam, n, above, n_draws, seed):
    rng = new_stream()
    seed_block(rng, seed, 0, 0)
    out = np.empty(n_draws, dtype=np.int64)
    for i in range(n_draws):
        out[i] = _above_near_mean(rng, lam, n) if above else _at_most_near_mean(rng, lam, n)
    return out


@pytest.mark.parametrize("lam,n,above", [
    (300.0, 290, False),  # within one sd: rejection
    (300.0, 250, False),  # geometric envelope
    (50.0, 20, False),
    (300.0, 305, True),
    (300.0, 350, True),
    (50.0, 80, True),
])
def test_the_near_mean_draws_match_the_exact_pmf(lam, n, above):
    # the O(1) draws of large means are exact at any mean: checked where the pmf is at hand
    _assert_truncated_law(_near_mean_draws(lam, n, above, N_TRUNCATED_DRAWS, 77), lam, n, above)


_DRAW_CODE = """
import numpy as np
from numba import njit
from lpp.distributions import (poisson_logcdf_nb, poisson_logsf_nb,
                               truncated_poisson_above_nb, truncated_poisson_at_most_nb)
from lpp.randomness import new_stream, seed_block

@njit
def draws(lam, n, above):
    rng = new_stream()
    seed_block(rng, 1, 0, 0)
    out = np.empty(200, dtype=np.int64)
    for i in range(200):
        if above:
            out[i] = truncated_poisson_above_nb(rng, lam, n, poisson_logsf_nb(n, lam))
        else:
            out[i] = truncated_poisson_at_most_nb(rng, lam, n, poisson_logcdf_nb(n, lam))
    return out

for lam, n in [(4e15, 4 * 10**15 - 10**9), (4e15, 4 * 10**15 + 10**9), (1e15, 10**15)]:
    lo, hi = draws(lam, n, False), draws(lam, n, True)
    assert (lo <= n).all() and (lo >= 0).all() and (hi > n).all()
    assert abs(lo.mean() - min(n, lam)) < 1e8 and abs(hi.mean() - max(n, lam)) < 1e8
"""


def test_truncated_draws_at_huge_means_cost_little():
    # the walks from the cut took about sqrt(lam), 6e7 steps per draw at 4e15
    _returns(_DRAW_CODE, seconds=300)


@njit
def _poisson_nb_values(lams):
    rng = new_stream()
    seed_block(rng, 1, 0, 0)
    out = np.empty(lams.size, dtype=np.int64)
    for i in range(lams.size):
        out[i] = poisson_nb(rng, lams[i])
    return out


def test_poisson_draw_refuses_means_it_cannot_take():
    # numba's own sampler never returns on these
    bad = np.array([np.nan, np.inf, -1.0, 1e19, 2.0**53 * 2])
    assert (_poisson_nb_values(bad) == -1).all()
    assert (_poisson_nb_values(np.array([0.0, 3.0, 1e12])) >= 0).all()


# --- the untruncated draw ------------------------------------------------------------------------

@njit
def _poisson_draws(lam, n_draws, seed):
    rng = new_stream()
    seed_block(rng, seed, 0, 0)
    out = np.empty(n_draws, dtype=np.int64)
    for i in range(n_draws):
        out[i] = poisson_nb(rng, lam)
    return out


@pytest.mark.parametrize("lam", [1e-6, 0.3, 1.0, 4.5, 9.999, 10.0, 30.0, 333.3, 1e4, 2.5e6])
def test_poisson_draws_match_the_exact_pmf(lam):
    """Inversion below a mean of 10, PTRS from 10 on: both against scipy's pmf."""
    draws = _poisson_draws(lam, 100_000, 31)
    width = int(12 * math.sqrt(lam)) + 20
    support = np.arange(max(0, int(lam) - width), int(lam) + width)
    pmf = stats.poisson.pmf(support, lam)
    pmf /= pmf.sum()  # the far tails, beyond 12 sd, hold under 1e-30
    assert chisquare_gof(draws, support, pmf)
    assert abs(draws.mean() - lam) < 6 * math.sqrt(lam / draws.size) + 1e-9


def test_poisson_draws_at_the_largest_mean_are_near_it():
    draws = _poisson_draws(2.0**53, 1000, 5)
    assert (draws > 0).all()
    assert abs(draws.mean() / 2.0**53 - 1.0) < 1e-6
