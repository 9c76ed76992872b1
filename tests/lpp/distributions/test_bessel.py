"""Bessel(nu, a): pmf, mode, mean and the exact sampler (goodness of fit, reproducibility)."""
import math

import numba
import numpy as np
import pytest
from numba import njit
from scipy import special

from lpp.randomness import new_stream, seed_block
from lpp.distributions import (
    bessel_logpmf,
    bessel_mean,
    bessel_mode,
    bessel_mode_nb,
    sample_bessel,
    sample_bessel_nb,
)
from lpp.testing import FALSE_ALARM, chisquare_gof

# (nu, a): nu = 0 and 1e4, a from 1e-2 to 1e5, nu >> a and a >> nu, non-integer nu
GOF_POINTS = [
    (0.0, 0.05), (0.0, 1.0), (1.0, 2.0), (3.0, 5.0), (2.5, 30.0), (0.0, 100.0), (10.0, 0.5),
    (50.0, 10.0), (100.0, 1000.0), (0.0, 1e4), (1e4, 50.0), (1e4, 1e3), (1e4, 1e4),
    (1e3, 1e4), (7.0, 1e5), (0.3, 7.7),
]
N_DRAWS = 100_000
# variance > 1e4: normalised through log I (saddle-point log f, Debye ratio for the mean)
WIDE_POINTS = [(0.0, 1e5), (30.0, 1e6), (1e3, 1e5), (1e5, 1e6), (2e5, 1e5)]


def _scipy_logpmf(n, nu, a):
    """Independent reference where scipy's ive neither under- nor overflows."""
    return ((2 * n + nu) * np.log(a / 2) - special.gammaln(n + 1) - special.gammaln(n + nu + 1)
            - np.log(special.ive(nu, a)) - a)


@pytest.mark.parametrize("nu, a", [(0, 1.0), (3, 5.0), (2.5, 30.0), (0, 100.0), (50, 10.0),
                                   (100, 1000.0), (0, 1e4), (120, 2.0)])
def test_logpmf_matches_scipy_formula(nu, a):
    n = np.arange(0, 6000)
    ref = _scipy_logpmf(n, nu, a)
    ours = bessel_logpmf(n, nu, a)
    keep = ref > -700
    np.testing.assert_allclose(ours[keep], ref[keep], rtol=1e-12, atol=1e-10)


@pytest.mark.parametrize("nu, a", GOF_POINTS + [(0.0, 1e-8), (1e4, 1e-8), (2.0, 1e-3)])
def test_logpmf_sums_to_one(nu, a, bessel_support):
    support, pmf = bessel_support(nu, a)
    assert abs(math.fsum(pmf) - 1.0) < 5e-12
    assert bessel_logpmf(-1, nu, a) == -np.inf


@pytest.mark.parametrize("nu, a", WIDE_POINTS)
def test_wide_pmfs_sum_to_one_and_have_the_right_mean(nu, a, bessel_support):
    support, pmf = bessel_support(nu, a)
    # the wide path subtracts log-terms of size ~nu: its accuracy is ~1e-16 nu (documented)
    assert abs(math.fsum(pmf) - 1.0) < 1e-11 + 2e-16 * nu
    assert bessel_mean(nu, a) == pytest.approx(math.fsum(support * pmf), rel=1e-11 + 2e-16 * nu)


def test_mean_stays_within_one_of_the_mode_for_huge_parameters():
    for v in [1e6, 1e9, 1e12, 1e15]:
        for nu, a in [(v, v), (0.0, v), (v, v / 100), (v / 100, v)]:
            assert abs(bessel_mean(nu, a) - bessel_mode(nu, a)) <= 1.0, (nu, a)


def test_point_mass_at_a_zero():
    assert bessel_logpmf(0, 3.0, 0.0) == 0.0
    assert bessel_logpmf(2, 3.0, 0.0) == -np.inf
    assert bessel_mode(3.0, 0.0) == 0 and bessel_mean(3.0, 0.0) == 0.0
    assert np.all(sample_bessel(3.0, 0.0, size=50, rng=0) == 0)


NU_GRID = np.array([0, 0.5, 1, 2, 3, 7, 20, 100, 999, 1e4])
A_GRID = np.array([1e-8, 1e-3, 0.1, 0.9, 1, 2, 2 * math.sqrt(2), 5, 17, 100, 1234.5, 1e4])


def test_mode_is_the_argmax_of_the_pmf():
    for nu in NU_GRID:
        for a in A_GRID:
            mode = int(bessel_mode(nu, a))
            assert mode == math.floor((math.sqrt(a * a + nu * nu) - nu) / 2) or (
                bessel_logpmf(mode, nu, a) >= bessel_logpmf(mode + 1, nu, a) - 1e-12)
            window = np.arange(max(0, mode - 3), mode + 4)
            lp = bessel_logpmf(window, nu, a)
            assert lp.max() <= bessel_logpmf(mode, nu, a) + 1e-12, (nu, a)
    # exact ties (a^2/4 = (m+1)(m+1+nu)): both m and m+1 are modes, either is fine
    for m, nu in [(0, 0.0), (3, 2.0), (10, 5.0)]:
        a = 2 * math.sqrt((m + 1) * (m + 1 + nu))
        mode = int(bessel_mode(nu, a))
        assert mode in (m, m + 1)
        assert bessel_logpmf(mode, nu, a) == pytest.approx(bessel_logpmf(m + 1, nu, a), abs=1e-12)


def test_mean_matches_direct_sum_and_is_within_one_of_the_mode(bessel_support):
    for nu in NU_GRID:
        for a in A_GRID:
            support, pmf = bessel_support(nu, a)
            direct = math.fsum(support * pmf)
            mean = bessel_mean(nu, a)
            assert mean == pytest.approx(direct, rel=1e-9, abs=1e-300), (nu, a)
            assert abs(mean - bessel_mode(nu, a)) <= 1.0, (nu, a)


def test_vectorised_broadcasting_and_scalars():
    lp = bessel_logpmf(np.arange(4)[:, None], [1.0, 2.0], 3.0)
    assert lp.shape == (4, 2)
    assert lp[2, 1] == bessel_logpmf(2, 2.0, 3.0)
    assert np.isscalar(bessel_mean(1.0, 2.0))
    assert bessel_mode([[0.0], [5.0]], [1.0, 10.0, 100.0]).dtype == np.int64


@pytest.mark.parametrize("nu, a", GOF_POINTS)
def test_sampler_fits_the_pmf_and_the_test_can_fail(nu, a, bessel_support):
    support, pmf = bessel_support(nu, a)
    draws = sample_bessel(nu, a, size=N_DRAWS, rng=20190609)
    assert draws.dtype == np.int64 and draws.shape == (N_DRAWS,)
    assert chisquare_gof(draws, support, pmf).pvalue >= FALSE_ALARM
    # the same test rejects a sampler with the wrong parameter (a 25 % too large) ...
    wrong = sample_bessel(nu, 1.25 * a, size=N_DRAWS, rng=20190609)
    assert chisquare_gof(wrong, support, pmf).pvalue < FALSE_ALARM
    # ... and an off-by-one, wherever the pmf is narrow enough for 1e5 draws to see it
    if bessel_mode(nu, a) < 2000:
        assert chisquare_gof(draws + 1, support, pmf).pvalue < FALSE_ALARM


@pytest.mark.parametrize("nu", [0.0, 1e4])
def test_sampler_at_tiny_a_returns_zero(nu):
    # P(n >= 1) = (a/2)^2/(nu+1) (1 + O(a^2)) <= 2.5e-17: any non-zero draw is a bug
    assert np.all(sample_bessel(nu, 1e-8, size=N_DRAWS, rng=1) == 0)
    assert np.exp(bessel_logpmf(1, nu, 1e-8)) < 3e-17


@njit
def _draw_with_scalar_twin(nu, a, n, seed):
    out = np.empty(n, dtype=np.int64)
    rng = new_stream()
    seed_block(rng, seed, 0, 0)
    for i in range(n):
        out[i] = sample_bessel_nb(rng, nu, a)
    return out


@pytest.mark.parametrize("nu, a", [(4.0, 9.0), (0.0, 300.0)])
def test_scalar_twin_inside_njit(nu, a, bessel_support):
    support, pmf = bessel_support(nu, a)
    draws = _draw_with_scalar_twin(nu, a, N_DRAWS, 7)
    assert chisquare_gof(draws, support, pmf).pvalue >= FALSE_ALARM
    assert bessel_mode_nb(nu, a) == bessel_mode(nu, a)


def test_sampler_with_varying_parameters_fits_each_entry(bessel_support):
    # alternating parameters exercise the envelope cache of the kernel
    nu = np.tile([0.0, 40.0, 3.5], 40_000)
    a = np.tile([2.0, 40.0, 0.7], 40_000)
    draws = sample_bessel(nu, a, rng=5)
    for j in range(3):
        support, pmf = bessel_support(nu[j], a[j])
        assert chisquare_gof(draws[j::3], support, pmf).pvalue >= FALSE_ALARM


def test_sampler_is_reproducible_and_thread_count_independent():
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs at least 2 numba threads")
    rng = np.random.default_rng(0)
    n = 5 * 4096 + 123
    nu = rng.integers(0, 50, size=n).astype(float)
    a = rng.exponential(30.0, size=n)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = sample_bessel(nu, a, rng=42)
        numba.set_num_threads(2)
        two = sample_bessel(nu, a, rng=42)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one, two)
    other = sample_bessel(nu, a, rng=43)
    assert np.mean(one != other) > 0.5
    gen = np.random.default_rng(42)
    np.testing.assert_array_equal(sample_bessel(nu, a, rng=gen)[:10], one[:10])


def test_size_semantics():
    assert np.isscalar(sample_bessel(1.0, 2.0, rng=0))
    assert sample_bessel([1.0, 2.0], 3.0, size=(4, 2), rng=0).shape == (4, 2)
    with pytest.raises(ValueError, match="broadcast"):
        sample_bessel([1.0, 2.0], 3.0, size=(4, 3), rng=0)


@pytest.mark.parametrize("func", [bessel_mean, bessel_mode, lambda nu, a: sample_bessel(nu, a)])
def test_bad_parameters_raise(func):
    with pytest.raises(ValueError, match="nu"):
        func(-1.0, 2.0)
    with pytest.raises(ValueError, match="a"):
        func(1.0, -2.0)
    with pytest.raises(ValueError, match="NaN"):
        func(1.0, np.nan)
    with pytest.raises(ValueError, match="finite"):
        func(np.inf, 1.0)
    with pytest.raises(ValueError, match="broadcast"):
        func([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="empty"):
        func([], 1.0)
    with pytest.raises(TypeError):
        func("one", 1.0)


def test_bad_counts_raise():
    with pytest.raises(ValueError, match="integers"):
        bessel_logpmf(1.5, 1.0, 2.0)
    with pytest.raises(TypeError, match="boolean"):
        bessel_logpmf(True, 1.0, 2.0)
