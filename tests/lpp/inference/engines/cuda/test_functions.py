"""The GPU engine's scalar functions (lpp.inference.engines.cuda.functions), compiled for the CPU
with ``numba.njit``: Philox4x32-10 against the published answers and the plain-Python reference,
and every sampler against its exact law (chi-square or Kolmogorov-Smirnov at ``FALSE_ALARM``,
Bonferroni where one test makes several checks). Fixed seeds: nothing here flakes.
"""
import itertools
import math

import numpy as np
import pytest
from numba import njit
from scipy import stats

from lpp.inference.engines.cuda.functions import (
    BULK_COUNT,
    INVERSION_MEAN,
    MAX_MEAN,
    TINY,
    build_functions,
    philox_reference,
)
from lpp.testing import FALSE_ALARM, chisquare_gof

pytestmark = pytest.mark.cuda

F = build_functions(njit)
philox, uniform, two_piece = F.philox, F.uniform, F.two_piece
standard_normal, gamma_rate = F.standard_normal, F.gamma_rate
pick, split_count = F.pick, F.split_count
binomial, split_bulk = F.binomial, F.split_bulk

#: a phase key (two 32-bit words), as the engine derives one from a 63-bit seed
KEY = (np.uint64(0x1234ABCD), np.uint64(0x0BADF00D))
N = 100_000
MASK = 0xFFFFFFFF


# --- draws of many items, each from its own stream -----------------------------------------------

@njit
def _uniforms(n, k0, k1, iteration, index):
    out = np.empty(n)
    for i in range(n):
        out[i] = uniform(k0, k1, i, iteration, index)
    return out


@njit
def _two_piece_draws(n, y_tilde, lam_low, lam_high, k0, k1, iteration):
    out = np.empty(n, np.int64)
    for i in range(n):
        out[i], _ = two_piece(y_tilde, lam_low, lam_high, k0, k1, i, iteration, 0)
    return out


@njit
def _normals(n, k0, k1):
    out = np.empty(n)
    for i in range(n):
        out[i], _ = standard_normal(k0, k1, i, 0, 0)
    return out


@njit
def _gammas(n, shape, rate, k0, k1):
    out = np.empty(n)
    for i in range(n):
        out[i], _ = gamma_rate(shape, rate, k0, k1, i, 0, 0)
    return out


@njit
def _splits(n, count, cum, k0, k1):
    out = np.empty((n, cum.size), np.int64)
    hits = np.empty(cum.size, np.int64)
    for i in range(n):
        split_count(count, cum, cum[cum.size - 1], hits, k0, k1, i, 0, 0)
        out[i] = hits
    return out


@njit
def _binomials(n_draws, n, p, k0, k1):
    out = np.empty(n_draws, np.int64)
    for i in range(n_draws):
        out[i], _ = binomial(n, p, k0, k1, i, 0, 0)
    return out


@njit
def _bulk_splits(n, count, cum, k0, k1):
    out = np.empty((n, cum.size), np.int64)
    hits = np.empty(cum.size, np.int64)
    for i in range(n):
        split_bulk(count, cum, hits, k0, k1, i, 0, 0)
        out[i] = hits
    return out


def binomial_gof(draws, n, p, bins=40):
    """Chi-square of ``Binom(n, p)`` draws on cells of about equal probability (scipy's
    quantiles), so that a count of 10**15 needs no pmf over its whole spread."""
    law = stats.binom(n, p)
    edges = np.unique(law.ppf(np.linspace(0.0, 1.0, bins + 1)[1:-1]))
    edges = edges[law.cdf(edges) < 1.0]  # no cell of probability 0 above the last edge
    # cell j holds the draws in (edges[j - 1], edges[j]]
    probs = np.diff(np.concatenate(([0.0], law.cdf(edges), [1.0])))
    observed = np.bincount(np.searchsorted(edges, draws, side="left"), minlength=probs.size)
    return stats.chisquare(observed, probs * draws.size).pvalue


# --- Philox4x32-10 -------------------------------------------------------------------------------

#: Random123's known-answer vectors of philox4x32-10 (kat_vectors): key, counter, output
KNOWN_ANSWERS = [
    ((0, 0), (0, 0, 0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((MASK, MASK), (MASK, MASK, MASK, MASK), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0xA4093822, 0x299F31D0), (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def _compiled(key, counter):
    return tuple(int(w) for w in philox(*(np.uint64(x) for x in (*key, *counter))))


@pytest.mark.parametrize("key,counter,expected", KNOWN_ANSWERS)
def test_philox_gives_the_published_answers(key, counter, expected):
    assert philox_reference(key, counter) == expected
    assert _compiled(key, counter) == expected


def test_compiled_philox_is_the_reference_on_random_inputs():
    rng = np.random.default_rng(0)
    for words in rng.integers(0, 2**32, size=(300, 6), dtype=np.uint64):
        key, counter = tuple(int(w) for w in words[:2]), tuple(int(w) for w in words[2:])
        assert _compiled(key, counter) == philox_reference(key, counter)


def _philox_inverse(key, output):
    """The counter that Philox4x32-10 under ``key`` maps to ``output`` (each round undone)."""
    m0, m1, w0, w1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
    keys = [((key[0] + r * w0) & MASK, (key[1] + r * w1) & MASK) for r in range(10)]
    n0, n1, n2, n3 = output
    for k0, k1 in reversed(keys):
        c2 = (n1 * pow(m1, -1, 2**32)) & MASK
        c0 = (n3 * pow(m0, -1, 2**32)) & MASK
        c1 = n0 ^ ((m1 * c2) >> 32) ^ k0
        c3 = n2 ^ ((m0 * c0) >> 32) ^ k1
        n0, n1, n2, n3 = c0, c1, c2, c3
    return n0, n1, n2, n3


def _uniform_for_words(x0, x1):
    """``uniform`` at the stream position whose Philox output starts ``(x0, x1)``."""
    key = (int(KEY[0]), int(KEY[1]))
    c0, c1, c2, c3 = _philox_inverse(key, (x0, x1, 5, 6))
    assert philox_reference(key, (c0, c1, c2, c3))[:2] == (x0, x1)
    return uniform(*KEY, np.uint64(c0 | (c1 << 32)), c2, c3)


def test_a_uniform_is_named_by_its_item_iteration_and_index():
    """52 bits of the first two Philox words, counter (item low, item high, iteration, index)."""
    item = (7 << 32) | 123
    x0, x1, _, _ = philox_reference((int(KEY[0]), int(KEY[1])), (123, 7, 9, 4))
    expected = (((x0 >> 6) << 26 | (x1 >> 6)) + 0.5) / 2.0**52
    assert uniform(*KEY, np.uint64(item), 9, 4) == expected
    draws = {uniform(*KEY, np.uint64(i), t, j) for i, t, j in itertools.product(range(3), repeat=3)}
    assert len(draws) == 27
    assert _uniform_for_words(0, 0) == 0.5 / 2.0**52  # the smallest


def test_uniforms_are_uniform_on_the_open_interval():
    u = _uniforms(N, *KEY, 3, 0)
    assert np.all((u > 0.0) & (u < 1.0))
    assert stats.kstest(u, "uniform").pvalue > FALSE_ALARM
    # another iteration or index is another stream
    v = _uniforms(N, *KEY, 4, 0)
    assert stats.pearsonr(u, v).pvalue > FALSE_ALARM
    assert stats.kstest(_uniforms(N, *KEY, 3, 1), "uniform").pvalue > FALSE_ALARM


def test_the_largest_uniform_is_below_one():
    assert _uniform_for_words(MASK, MASK) == 1.0 - 0.5 / 2.0**52


# --- the two-piece sampler -----------------------------------------------------------------------

@pytest.mark.parametrize("rate", [0.01, 3.0, 400.0])
@pytest.mark.parametrize("y_tilde", [0, -4])
def test_two_piece_with_a_non_positive_y_tilde_is_poisson(y_tilde, rate):
    """``lam_low`` plays no part there: a wrong one (rate / 0.3) must not change the law."""
    y = _two_piece_draws(N, y_tilde, rate / 0.3, rate, *KEY, 0)
    support = np.arange(int(rate + 40 * np.sqrt(rate) + 40))
    assert chisquare_gof(y, support, stats.poisson.pmf(support, rate))


@pytest.mark.parametrize("y_tilde,mu,alpha", [
    (5, 3.0, 0.5),        # mode in the second piece, small rates
    (200, 180.0, 0.9),    # large counts, weak noise
    (3, 1e4, 0.3),        # mu / alpha far beyond y_tilde: Poisson(alpha mu) but for the floor
    (50, 5.0, 0.5),       # the mode inside the first piece (mu / alpha < y_tilde)
    (1, 0.01, 0.2),       # almost all mass at 0
])
def test_two_piece_is_the_collapsed_conditional(y_tilde, mu, alpha, exact_posterior):
    """``lam_low = mu / alpha``, ``lam_high = alpha mu``: P(y | y_tilde, mu) ∝ Pois(y; mu)
    alpha^|y_tilde - y|, enumerated in log space (tests/lpp/inference/conftest.py)."""
    y = _two_piece_draws(N, y_tilde, mu / alpha, mu * alpha, *KEY, 1)
    assert chisquare_gof(y, *exact_posterior(y_tilde, alpha, mu))


def test_the_two_piece_check_has_power(exact_posterior):
    """Draws made with a slightly wrong alpha (0.55 for 0.5) fail the same check."""
    y = _two_piece_draws(N, 5, 3.0 / 0.55, 3.0 * 0.55, *KEY, 1)
    assert not chisquare_gof(y, *exact_posterior(5, 0.5, 3.0))


@pytest.mark.parametrize("y_tilde,mu,alpha", [(0, 1e6, 1.0), (10**6, 10**6, 0.5)])
def test_two_piece_at_large_means(y_tilde, mu, alpha):
    """A million: the weights are summed over thousands of terms from the mode out."""
    y = _two_piece_draws(20_000, y_tilde, mu / alpha, mu * alpha, *KEY, 3)
    support = np.arange(int(mu - 8000), int(mu + 8000))
    log_w = stats.poisson.logpmf(support, mu) + np.abs(y_tilde - support) * np.log(alpha)
    pmf = np.exp(log_w - log_w.max())
    assert chisquare_gof(y, support, pmf / pmf.sum())


def test_two_piece_weights_as_documented():
    """The documented weights themselves, for rates not of the form (mu / alpha, alpha mu)."""
    y_tilde, lam_low, lam_high = 6, 9.0, 2.5
    support = np.arange(60)
    log_w = np.where(support <= y_tilde, support * np.log(lam_low),
                     y_tilde * np.log(lam_low / lam_high) + support * np.log(lam_high))
    log_w -= np.array([math.lgamma(s + 1.0) for s in support])
    pmf = np.exp(log_w - log_w.max())
    y = _two_piece_draws(N, y_tilde, lam_low, lam_high, *KEY, 2)
    assert chisquare_gof(y, support, pmf / pmf.sum())


@pytest.mark.parametrize("lam_low,lam_high,expected", [
    (math.nan, 1.0, -1), (1.0, math.nan, -1), (math.inf, 1.0, -1), (2.0**53 * 1.01, 1.0, -1),
    (1.0, 2.0**54, -1), (0.0, 0.0, 0), (5.0, 0.0, 0),
])
def test_two_piece_at_bad_and_zero_rates(lam_low, lam_high, expected):
    """-1 (the kernels' error) for a NaN rate or one above 2**53, without using a draw; 0 for a
    zero rate."""
    assert MAX_MEAN == 2.0**53
    for y_tilde in (-2, 0, 3):
        y, index = two_piece(y_tilde, lam_low, lam_high, *KEY, 0, 0, 7)
        assert y == expected and index == 7


def test_two_piece_uses_one_uniform():
    y, index = two_piece(4, 6.0, 1.5, *KEY, 0, 0, 7)
    assert index == 8 and y >= 0


# --- normal and Gamma ----------------------------------------------------------------------------

def test_standard_normal():
    z = _normals(N, *KEY)
    assert stats.kstest(z, "norm").pvalue > FALSE_ALARM


@pytest.mark.parametrize("shape", [0.1, 0.5, 1.0, 3.7, 250.0])
def test_gamma_rate_matches_scipy(shape):
    rate = 2.5
    x = _gammas(N // 2, shape, rate, *KEY)
    assert np.all(x >= TINY) and np.all(np.isfinite(x))
    assert stats.kstest(x, stats.gamma(shape, scale=1.0 / rate).cdf).pvalue > FALSE_ALARM


def test_gamma_rate_is_floored_at_tiny():
    """A tiny shape puts about half the draws below the smallest normal double: they are TINY,
    as often as the Gamma law puts mass there."""
    assert TINY == np.finfo(np.float64).tiny
    x = _gammas(10_000, 1e-3, 1.0, *KEY)
    floored = int(np.count_nonzero(x == TINY))
    assert x.min() == TINY and np.all(np.isfinite(x))
    below = stats.gamma(1e-3).cdf(TINY)
    assert 0.3 < below < 0.7
    assert stats.binomtest(floored, x.size, below).pvalue > FALSE_ALARM


@pytest.mark.parametrize("shape,rate", [(0.0, 1.0), (-1.0, 1.0), (1.0, 0.0), (1.0, -2.0),
                                        (math.nan, 1.0), (1.0, math.nan)])
def test_gamma_rate_is_nan_for_a_non_positive_or_nan_parameter(shape, rate):
    x, index = gamma_rate(shape, rate, *KEY, 0, 0, 3)
    assert math.isnan(x) and index == 3


# --- picking topics and columns ------------------------------------------------------------------

def test_pick_is_the_first_cumulative_weight_above_the_target():
    rng = np.random.default_rng(1)
    for n in (1, 2, 3, 8, 13):
        w = rng.gamma(0.5, size=n)
        w[rng.random(n) < 0.3] = 0.0  # zero weights are never picked
        if not w.any():
            w[-1] = 1.0
        cum = np.cumsum(w)
        for u in rng.random(50):
            k = pick(cum, cum[-1], u)
            assert k == np.searchsorted(cum, u * cum[-1], side="right") and w[k] > 0


def test_split_count_is_multinomial():
    """The joint law of the per-topic counts: every composition of 6 tokens over 3 topics."""
    p = np.array([0.2, 0.5, 0.3])
    count = 6
    draws = _splits(50_000, count, np.cumsum(p * 4.0), *KEY)  # unnormalised weights
    assert np.all(draws.sum(axis=1) == count)
    outcomes = [c for c in itertools.product(range(count + 1), repeat=3) if sum(c) == count]
    index = {c: i for i, c in enumerate(outcomes)}
    labels = np.array([index[tuple(row)] for row in draws])
    pmf = np.array([stats.multinomial.pmf(c, count, p) for c in outcomes])
    assert chisquare_gof(labels, np.arange(len(outcomes)), pmf)


def test_split_count_of_zero_tokens_clears_the_hits():
    hits = np.full(3, 9, np.int64)
    index = split_count(0, np.array([1.0, 2.0, 3.0]), 3.0, hits, *KEY, 0, 0, 5)
    assert index == 5 and not hits.any()



# --- the binomial and the bulk split of large counts ---------------------------------------------

#: (n, p): inversion (n min(p, 1 - p) below INVERSION_MEAN), either side of 1/2, and the
#: order-statistic splits up to the largest count the engines accept
BINOMIAL_CASES = [(1, 0.5), (12, 0.3), (40, 0.97), (200, 0.05), (5000, 0.5), (10**6, 0.37),
                  (10**9, 1e-8), (10**12, 0.2), (10**15, 0.6), (10**15, 3e-15)]


@pytest.mark.parametrize("n,p", BINOMIAL_CASES)
def test_binomial_matches_scipy(n, p):
    x = _binomials(20_000, n, p, *KEY)
    assert np.all((x >= 0) & (x <= n))
    assert binomial_gof(x, n, p) > FALSE_ALARM


def test_the_binomial_check_has_power():
    """Draws of Binom(10**12, 0.2) fail the check against a mean one standard deviation off."""
    n, p = 10**12, 0.2
    x = _binomials(20_000, n, p, *KEY)
    assert binomial_gof(x, n, p + math.sqrt(p * (1 - p) / n)) < FALSE_ALARM


@pytest.mark.parametrize("n,p,expected", [(0, 0.3, 0), (7, 0.0, 0), (7, 1.0, 7),
                                          (10**15, 1.0, 10**15), (5, math.nan, -1)])
def test_binomial_at_the_edges_uses_no_draw(n, p, expected):
    k, index = binomial(n, p, *KEY, 0, 0, 4)
    assert k == expected and index == 4


def test_binomial_cost_does_not_grow_with_n():
    """Uniforms used (the stream's index): a few dozen at 10**15, as at 10**4."""
    assert INVERSION_MEAN == 16.0
    for n in (10**4, 10**9, 10**15):
        used = [binomial(n, 0.3, *KEY, i, 0, 0)[1] for i in range(200)]
        assert np.mean(used) < 60, n


def test_split_bulk_is_multinomial():
    """The joint law of the per-topic counts, every composition of 6 tokens over 4 topics, one
    of zero weight (never hit): the law of :func:`split_count`."""
    p = np.array([0.2, 0.0, 0.5, 0.3])
    count = 6
    draws = _bulk_splits(50_000, count, np.cumsum(p * 4.0), *KEY)
    assert np.all(draws.sum(axis=1) == count) and not draws[:, 1].any()
    outcomes = [c for c in itertools.product(range(count + 1), repeat=4)
                if sum(c) == count and c[1] == 0]
    index = {c: i for i, c in enumerate(outcomes)}
    labels = np.array([index[tuple(row)] for row in draws])
    pmf = np.array([stats.multinomial.pmf(c, count, p) for c in outcomes])
    assert chisquare_gof(labels, np.arange(len(outcomes)), pmf)


@pytest.mark.parametrize("weights", [[0.0, 0.0, 1.0, 3.0, 0.5], [1e-12, 2.0, 1.0, 0.0, 0.0],
                                     [0.0, 5.0, 0.0, 0.0, 0.0]])
def test_split_bulk_of_a_huge_count(weights):
    """10**15 tokens: they all land, on topics of positive weight only, each topic's count
    ``Binom(count, w_k / sum(w))``; zero-weight topics first and last."""
    count = 10**15
    w = np.array(weights)
    draws = _bulk_splits(5_000, count, np.cumsum(w), *KEY)
    assert np.all(draws.sum(axis=1) == count) and np.all(draws >= 0)
    assert not draws[:, w == 0.0].any()
    checks = [k for k in range(w.size) if 0.0 < w[k] < w.sum()]
    for k in checks:
        assert binomial_gof(draws[:, k], count, w[k] / w.sum(), bins=20) > FALSE_ALARM / len(
            checks), k


def test_split_bulk_is_above_the_per_token_threshold():
    """The engines split counts up to BULK_COUNT token by token (their streams unchanged)."""
    assert BULK_COUNT == 8192
