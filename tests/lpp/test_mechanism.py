"""The geometric mechanism: alpha <-> epsilon, fast and exact 2Geo samplers, privatize, truncate."""
import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from scipy import sparse

from lpp.distributions import two_sided_geometric_logpmf
from lpp.mechanism import (
    ExactAlpha,
    alpha_from_epsilon,
    epsilon_from_alpha,
    exact_alpha,
    privatize,
    sample_two_sided_geometric,
    truncate,
)
from lpp.testing import FALSE_ALARM, chisquare_gof

N_FAST = 100_000
N_EXACT = 20_000


def _two_geo_reference(alpha):
    """Support holding all but 1e-12 of 2Geo(alpha), and its pmf."""
    half = int(math.ceil(math.log(1e-13) / math.log(alpha))) + 2
    support = np.arange(-half, half + 1)
    return support, np.exp(two_sided_geometric_logpmf(support, alpha))


# ---------------------------------------------------------------- alpha and epsilon


def test_alpha_epsilon_round_trip_and_broadcasting():
    assert alpha_from_epsilon(1.0, 1) == pytest.approx(math.exp(-1))
    assert alpha_from_epsilon(3, 2) == pytest.approx(math.exp(-1.5))
    eps = np.array([[0.5], [1.0], [3.0]])
    n = np.array([1, 2, 10])
    alpha = alpha_from_epsilon(eps, n)
    assert alpha.shape == (3, 3)
    np.testing.assert_allclose(epsilon_from_alpha(alpha, n), np.broadcast_to(eps, (3, 3)))


@pytest.mark.parametrize("epsilon, n", [(0.0, 1), (-1.0, 1), (1.0, 0), (1.0, -2), (np.nan, 1),
                                        (np.inf, 1), (1.0, np.inf), (1e6, 1e-3)])
def test_alpha_from_epsilon_rejects_bad_input(epsilon, n):
    with pytest.raises(ValueError):
        alpha_from_epsilon(epsilon, n)


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.5, 1.5, np.nan])
def test_epsilon_from_alpha_rejects_alpha_outside_unit_interval(alpha):
    with pytest.raises(ValueError, match="alpha"):
        epsilon_from_alpha(alpha, 1)
    with pytest.raises(ValueError, match="alpha"):
        sample_two_sided_geometric(alpha, size=3, rng=0)


def test_exact_alpha_reads_rationals_exactly():
    assert exact_alpha(1, 3).epsilon_over_n == Fraction(1, 3)
    assert exact_alpha("0.1", 1).epsilon_over_n == Fraction(1, 10)
    assert exact_alpha(Decimal("2.5"), "5/2").epsilon_over_n == 1
    assert exact_alpha(0.5, 2).epsilon_over_n == Fraction(1, 4)  # floats at their exact value
    assert float(exact_alpha(1, 1)) == pytest.approx(math.exp(-1))
    assert ExactAlpha(Fraction(2, 4)) == exact_alpha(1, 2)
    for bad in [0, -1, "zero", float("nan"), float("inf")]:
        with pytest.raises(ValueError):
            exact_alpha(bad, 1)
    with pytest.raises(TypeError):
        exact_alpha(True, 1)
    with pytest.raises(TypeError):
        exact_alpha([1], 1)


# ---------------------------------------------------------------- fast 2Geo sampler


@pytest.mark.parametrize("alpha", [0.01, 0.2, 0.5, 0.9, 0.99])
def test_fast_sampler_fits_the_pmf(alpha):
    support, pmf = _two_geo_reference(alpha)
    draws = sample_two_sided_geometric(alpha, size=N_FAST, rng=11)
    assert draws.dtype == np.int64
    assert chisquare_gof(draws, support, pmf).pvalue >= FALSE_ALARM


@pytest.mark.parametrize("alpha", [0.2, 0.9])
def test_the_gof_rejects_plausible_mistakes(alpha):
    support, pmf = _two_geo_reference(alpha)
    rng = np.random.default_rng(12)
    # numpy's geometric has support 1, 2, ...: the difference cancels it, one draw does not
    one_sided = rng.geometric(1 - alpha, N_FAST) - rng.geometric(1 - alpha, N_FAST) + 1
    assert chisquare_gof(one_sided, support, pmf).pvalue < FALSE_ALARM
    # success probability alpha instead of 1 - alpha
    swapped = rng.geometric(alpha, N_FAST) - rng.geometric(alpha, N_FAST)
    assert chisquare_gof(swapped, support, pmf).pvalue < FALSE_ALARM
    # one geometric (minus its offset) with a random sign: zero counted twice
    signed = (rng.geometric(1 - alpha, N_FAST) - 1) * rng.choice([-1, 1], N_FAST)
    assert chisquare_gof(signed, support, pmf).pvalue < FALSE_ALARM


def test_fast_sampler_broadcasts_alpha_and_is_reproducible():
    alpha = np.array([0.1, 0.95])
    draws = sample_two_sided_geometric(alpha, size=(N_FAST, 2), rng=3)
    assert draws.shape == (N_FAST, 2)
    for j, a in enumerate(alpha):
        support, pmf = _two_geo_reference(a)
        assert chisquare_gof(draws[:, j], support, pmf).pvalue >= FALSE_ALARM
    np.testing.assert_array_equal(draws, sample_two_sided_geometric(alpha, (N_FAST, 2), rng=3))
    assert np.isscalar(sample_two_sided_geometric(0.5, rng=1))
    with pytest.raises(ValueError, match="broadcast"):
        sample_two_sided_geometric(alpha, size=(4, 3), rng=0)
    with pytest.raises(ValueError, match="system"):
        sample_two_sided_geometric(0.5, size=3, rng="system")


# ---------------------------------------------------------------- exact 2Geo sampler


# alpha = 0.990, 0.513, 0.368, 0.0100 (eps/N = 4.60517 ~ log 100), 0.0067
@pytest.mark.parametrize("epsilon_over_n", [Fraction(1, 100), Fraction(2, 3), Fraction(1),
                                            Fraction(460517, 100000), Fraction(5)])
def test_exact_sampler_fits_the_pmf(epsilon_over_n):
    alpha = ExactAlpha(epsilon_over_n)
    support, pmf = _two_geo_reference(float(alpha))
    draws = sample_two_sided_geometric(alpha, size=N_EXACT, rng=21, exact=True)
    assert draws.dtype == np.int64
    assert chisquare_gof(draws, support, pmf).pvalue >= FALSE_ALARM


def test_exact_sampler_gof_can_fail():
    # the same test at the same size rejects an exact sampler run at a neighbouring epsilon/N
    support, pmf = _two_geo_reference(float(exact_alpha(2, 3)))
    wrong = sample_two_sided_geometric(exact_alpha(3, 4), size=N_EXACT, rng=21, exact=True)
    assert chisquare_gof(wrong, support, pmf).pvalue < FALSE_ALARM


def test_exact_bernoulli_exp_building_block():
    from lpp.mechanism import _RandomBits

    bits = _RandomBits(5)
    n = 40_000
    for num, den in [(1, 3), (5, 2), (0, 1)]:
        hits = sum(bits.bernoulli_exp(num, den) for _ in range(n))
        p = math.exp(-num / den)
        assert abs(hits - n * p) <= 4.5 * math.sqrt(n * p * (1 - p)) + 1e-9


def test_exact_sampler_randomness_sources():
    alpha = exact_alpha(1, 2)
    a = sample_two_sided_geometric(alpha, size=500, rng=np.random.default_rng(8), exact=True)
    b = sample_two_sided_geometric(alpha, size=500, rng=8, exact=True)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, sample_two_sided_geometric(alpha, size=500, rng=9, exact=True))
    system = sample_two_sided_geometric(alpha, size=(10, 3), rng="system", exact=True)
    assert system.shape == (10, 3) and system.dtype == np.int64
    with pytest.raises(ValueError, match="system"):
        sample_two_sided_geometric(alpha, size=3, rng="urandom", exact=True)
    with pytest.raises(TypeError, match="exact_alpha"):
        sample_two_sided_geometric(0.5, size=3, rng=0, exact=True)


def test_exact_alpha_array_per_entry():
    alphas = np.array([exact_alpha(1, 10), exact_alpha(4, 1)], dtype=object)
    draws = sample_two_sided_geometric(alphas, size=(N_EXACT // 2, 2), rng=4, exact=True)
    assert np.abs(draws[:, 0]).mean() > 5 * max(np.abs(draws[:, 1]).mean(), 0.01)
    for j in range(2):
        support, pmf = _two_geo_reference(float(alphas[j]))
        assert chisquare_gof(draws[:, j], support, pmf).pvalue >= FALSE_ALARM


# ---------------------------------------------------------------- privatize / truncate


def test_privatize_adds_two_sided_geometric_noise():
    rng = np.random.default_rng(0)
    y = rng.poisson(3.0, size=(400, 250))
    y_tilde = privatize(y, 0.6, rng=1)
    assert y_tilde.dtype == np.int64 and y_tilde.shape == y.shape
    support, pmf = _two_geo_reference(0.6)
    assert chisquare_gof((y_tilde - y).ravel(), support, pmf).pvalue >= FALSE_ALARM


def test_privatize_per_row_and_per_entry_alpha():
    y = np.zeros((2, N_FAST), dtype=np.int64)
    y_tilde = privatize(y, np.array([[0.1], [0.9]]), rng=2)
    for row, a in enumerate([0.1, 0.9]):
        support, pmf = _two_geo_reference(a)
        assert chisquare_gof(y_tilde[row], support, pmf).pvalue >= FALSE_ALARM
    per_entry = np.full(y.shape, 0.3)
    assert privatize(y, per_entry, rng=2).shape == y.shape
    with pytest.raises(ValueError, match=r"alpha\[:, None\]"):
        privatize(np.zeros((2, 5)), np.array([0.1, 0.9]))
    with pytest.raises(ValueError, match="broadcast"):
        privatize(np.zeros(5), np.full((2, 5), 0.5))  # alpha may not enlarge y


def test_privatize_accepts_sparse_and_whole_floats_and_is_reproducible():
    dense = np.array([[0, 3, 0], [1, 0, 7]])
    csr = sparse.csr_matrix(dense)
    np.testing.assert_array_equal(privatize(csr, 0.5, rng=5), privatize(dense, 0.5, rng=5))
    np.testing.assert_array_equal(privatize(dense.astype(float), 0.5, rng=5),
                                  privatize(dense, 0.5, rng=5))
    np.testing.assert_array_equal(privatize(dense.astype(np.uint8), 0.5, rng=5),
                                  privatize(dense, 0.5, rng=5))
    exact = privatize(dense, exact_alpha(1, 1), rng=5, exact=True)
    assert exact.shape == dense.shape and exact.dtype == np.int64


@pytest.mark.parametrize("bad, error, match", [
    (np.array([1, -1]), ValueError, "non-negative"),
    (np.array([1.5, 2.0]), ValueError, "integers"),
    (np.array([1.0, np.nan]), ValueError, "finite"),
    (np.array([1.0, np.inf]), ValueError, "finite"),
    (np.array([True, False]), TypeError, "boolean"),
    (np.array(["1", "2"]), TypeError, "dtype"),
    (np.array([], dtype=np.int64), ValueError, "empty"),
    (np.array([2**63 - 1]), ValueError, "not supported"),
])
def test_privatize_rejects_bad_counts(bad, error, match):
    with pytest.raises(error, match=match):
        privatize(bad, 0.5, rng=0)


def test_truncate():
    y_tilde = np.array([[-3, 0, 4], [2, -1, 0]])
    np.testing.assert_array_equal(truncate(y_tilde), [[0, 0, 4], [2, 0, 0]])
    assert truncate(y_tilde).dtype == np.int64
    with pytest.raises(ValueError, match="integers"):
        truncate([0.5])


@pytest.mark.parametrize("exact", [False, True])
def test_privatize_honours_a_masked_array(exact):
    """Only the unmasked entries are noised; the result is masked where the input was, and what
    lay under the mask (here a count of 10**9, and a NaN) is not released."""
    y = np.ma.MaskedArray(np.array([[3.0, 1e9], [np.nan, 5.0]]),
                          mask=[[False, True], [True, False]])
    alpha = exact_alpha(1, 1) if exact else 0.5
    out = privatize(y, alpha, rng=4, exact=exact)
    assert isinstance(out, np.ma.MaskedArray) and out.dtype == np.int64
    np.testing.assert_array_equal(np.ma.getmaskarray(out), np.ma.getmaskarray(y))
    np.testing.assert_array_equal(out.data[y.mask], 0)
    # the unmasked entries get the noise the same stream gives two plain entries
    plain = privatize(np.array([3, 5]), alpha, rng=4, exact=exact)
    np.testing.assert_array_equal(out.compressed(), plain)
    per_row = privatize(y, np.array([[0.3], [0.6]]), rng=4)
    np.testing.assert_array_equal(np.ma.getmaskarray(per_row), y.mask)
    with pytest.raises(ValueError, match="non-negative"):
        privatize(np.ma.MaskedArray([[-1, 2]], mask=[[False, True]]), 0.5, rng=1)


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("size", [1.5, True, (2, 1.0), "3"])
def test_a_size_that_is_not_ints_is_refused(size, exact):
    """numpy's convention: an int or ints; 1.5 or True would be cast to one draw."""
    alpha = exact_alpha(1, 1) if exact else 0.5
    with pytest.raises(TypeError, match="size must be an int"):
        sample_two_sided_geometric(alpha, size=size, rng=0, exact=exact)


def test_a_size_as_a_tuple_of_numpy_ints_is_a_shape():
    draws = sample_two_sided_geometric(0.5, size=(np.int64(2), 3), rng=0)
    assert draws.shape == (2, 3)


@pytest.mark.parametrize("dtype", ["m8[D]", "m8[s]", "M8[D]"])
def test_durations_and_dates_are_not_counts(dtype):
    """numpy ranks timedelta64 among the signed integers; a duration is no count, and
    noising it would release days as if they were emails."""
    with pytest.raises(TypeError, match="dtype"):
        privatize(np.array([[3, 1]], dtype=dtype), 0.5, rng=0)
