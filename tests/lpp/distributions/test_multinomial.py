"""The one allocation kernel: every branch (few trials, binary search, conditional binomials)
draws from the multinomial law, and a huge count costs O(K)."""
import itertools

import numpy as np
import pytest
from numba import njit
from scipy import stats

from lpp.randomness import new_stream, seed_block
from lpp.distributions import (
    FEW_TRIALS,
    LARGE_COUNT,
    allocate_count_nb,
    allocate_large_count_nb,
    multinomial_into_nb,
)
from lpp.testing import FALSE_ALARM, chisquare_gof

N_DRAWS = 100_000


@njit
def _multinomials(n, weights, n_draws, seed):
    rng = new_stream()
    seed_block(rng, seed, 0, 0)
    out = np.empty((n_draws, weights.size), dtype=np.int64)
    w = np.empty(weights.size)
    for i in range(n_draws):
        w[:] = weights
        multinomial_into_nb(rng, n, w, out[i])
    return out


def test_multinomial_matches_exact_pmf_over_all_compositions():
    weights = np.array([0.2, 0.0, 0.5, 0.3]) * 7.0  # unnormalised, one empty cell
    n = 5
    draws = _multinomials(n, weights, N_DRAWS, 11)
    assert np.all(draws.sum(axis=1) == n) and np.all(draws[:, 1] == 0)
    comps = [c for c in itertools.product(range(n + 1), repeat=3) if sum(c) == n]
    index = {c: i for i, c in enumerate(comps)}
    codes = np.array([index[tuple(r)] for r in draws[:, [0, 2, 3]]])
    pmf = stats.multinomial(n, [0.2, 0.5, 0.3]).pmf(np.array(comps))
    assert chisquare_gof(codes, np.arange(len(comps)), pmf)
    # power: the same draws against a permuted probability vector must fail
    wrong = stats.multinomial(n, [0.3, 0.5, 0.2]).pmf(np.array(comps))
    assert not chisquare_gof(codes, np.arange(len(comps)), wrong)


def test_multinomial_large_count_cell_is_binomial():
    draws = _multinomials(400, np.array([1.0, 3.0, 0.0, 6.0]), 20_000, 5)
    support = np.arange(401)
    assert chisquare_gof(draws[:, 0], support, stats.binom.pmf(support, 400, 0.1))
    assert np.all(draws[:, 2] == 0)


@njit
def _pairs(n, weights, n_draws, seed):
    """Draws through allocate_count_nb itself; each row is the per-cell count (from the pairs)."""
    rng = new_stream()
    seed_block(rng, seed, 0, 0)
    k = weights.size
    out = np.zeros((n_draws, k), dtype=np.int64)
    w = np.empty(k)
    uniforms = np.empty(16)
    cells = np.empty(k, dtype=np.int64)
    counts = np.empty(k, dtype=np.int64)
    ordered = True
    for i in range(n_draws):
        w[:] = weights
        n_hit = allocate_count_nb(rng, n, w, weights.sum(), uniforms, cells, counts)
        for h in range(n_hit):
            if h > 0 and cells[h] <= cells[h - 1]:
                ordered = False
            out[i, cells[h]] += counts[h]
    return out, ordered


WEIGHTS = np.array([1.0, 3.0, 0.0, 6.0])


@pytest.mark.parametrize("n", [1, 7, FEW_TRIALS, FEW_TRIALS + 1, 400, LARGE_COUNT,
                               LARGE_COUNT + 1, 50_000])
def test_every_branch_draws_binomial_cells(n):
    draws, ordered = _pairs(n, WEIGHTS, 20_000, 3 + n)
    assert ordered and np.all(draws.sum(axis=1) == n) and np.all(draws[:, 2] == 0)
    lo, hi = max(0, int(0.1 * n - 12 * np.sqrt(n) - 5)), int(0.1 * n + 12 * np.sqrt(n) + 6)
    support = np.arange(lo, min(hi, n) + 1)
    assert chisquare_gof(draws[:, 0], support, stats.binom.pmf(support, n, 0.1))
    # the first two cells together: Binom(n, 0.4), a check of the joint law
    lo, hi = max(0, int(0.4 * n - 12 * np.sqrt(n) - 5)), int(0.4 * n + 12 * np.sqrt(n) + 6)
    support = np.arange(lo, min(hi, n) + 1)
    assert chisquare_gof(draws[:, 0] + draws[:, 1], support, stats.binom.pmf(support, n, 0.4))


def test_the_binomial_branch_has_power():
    n = 50_000
    draws, _ = _pairs(n, WEIGHTS, 20_000, 9)
    support = np.arange(4000, 6001)
    assert not chisquare_gof(draws[:, 0], support, stats.binom.pmf(support, n, 0.102))


def test_the_binomial_branch_composition_pmf():
    # n = LARGE_COUNT + 2 over three cells with one dominant: the pmf of the small cells'
    # composition, exactly
    n = LARGE_COUNT + 2
    weights = np.array([0.0004, 0.9992, 0.0004])
    draws, _ = _pairs(n, weights, N_DRAWS, 21)
    small = draws[:, [0, 2]]
    comps = [c for c in itertools.product(range(13), repeat=2)]
    index = {c: i for i, c in enumerate(comps)}
    codes = np.array([index.get((a, b), len(comps)) for a, b in small])
    p = weights / weights.sum()
    pmf = np.array([stats.multinomial(n, p).pmf([a, n - a - b, b]) for a, b in comps])
    keep = codes < len(comps)
    assert keep.mean() > 0.999
    assert chisquare_gof(codes[keep], np.arange(len(comps)), pmf / pmf.sum())


def test_a_huge_count_takes_order_k_work():
    # 1e15 trials: the per-trial branches would need days; conditional binomials take O(K)
    n = 10**15
    draws, _ = _pairs(n, WEIGHTS, 2000, 5)
    assert np.all(draws.sum(axis=1) == n)
    z = (draws[:, 3].mean() - 0.6 * n) / np.sqrt(0.24 * n / draws.shape[0])
    assert abs(z) < stats.norm.isf(FALSE_ALARM / 2)


def test_zero_and_underflowing_weights():
    draws, _ = _pairs(3, np.array([0.0, 1e-300, 0.0, 2e-300]), 2000, 1)
    assert np.all(draws[:, [0, 2]] == 0) and np.all(draws.sum(axis=1) == 3)
    draws, _ = _pairs(LARGE_COUNT * 4, np.array([0.0, 0.0, 5.0, 0.0]), 10, 1)
    assert np.all(draws[:, 2] == LARGE_COUNT * 4)


@njit
def _both_allocations(count, weights, seed):
    """The pairs of allocate_count_nb and of allocate_large_count_nb from the same stream."""
    pairs = []
    for allocate_large in (False, True):
        rng = new_stream()
        seed_block(rng, seed, 0, 0)
        w = weights.copy()
        cells = np.empty(w.size, dtype=np.int64)
        counts = np.empty(w.size, dtype=np.int64)
        if allocate_large:
            n = allocate_large_count_nb(rng, count, w, w.sum(), cells, counts)
        else:
            n = allocate_count_nb(rng, count, w, w.sum(), np.empty(FEW_TRIALS), cells, counts)
        pairs.append((cells[:n].copy(), counts[:n].copy()))
    return pairs


@pytest.mark.parametrize("count", [FEW_TRIALS + 1, 300, LARGE_COUNT + 5])
@pytest.mark.parametrize("weights", [[1.0, 0.0, 3.0, 2.5], [0.0, 0.0, 0.0]])
def test_large_count_path_as_a_call_draws_what_allocate_count_nb_draws(count, weights):
    (cells, counts), (large_cells, large_counts) = _both_allocations(count, np.array(weights), 3)
    np.testing.assert_array_equal(large_cells, cells)
    np.testing.assert_array_equal(large_counts, counts)
    assert counts.sum() == (count if sum(weights) > 0 else 0)
