"""The allocation of a count over components: one multinomial draw, for every kernel.

Every Gibbs sweep splits each count ``y`` over the model's latent components in proportion to
their weights — the multinomial "allocation" step. All models' kernels and the fused sparse
engine use :func:`allocate_count_nb`, whose cost never grows beyond ``O(K)`` with the size of a
count:

* up to :data:`FEW_TRIALS` trials: the uniforms are sorted (insertion sort) and matched against
  the running sum of the weights in one linear pass, ``O(K + n^2)`` with predictable branches;
* up to :data:`LARGE_COUNT` trials: one uniform and a binary search over the running sums per
  trial, ``O(K + n log K)``;
* above: conditional binomials, ``c_k ~ Binom(n - c_1 - ... - c_(k-1), w_k / (w_k + ... +
  w_K))``, ``O(K)`` whatever ``n`` (one hostile record holding 10^9 costs no more than one
  holding 10^4). Per-trial draws are cheaper below the threshold, and the threshold lies above
  the counts of the shipped data sets, so their random streams are those of per-trial draws.

The three ways draw from the same law (tests compare each with the multinomial pmf). Draws take
a stream of :mod:`lpp.randomness` as their first argument.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from lpp.randomness import uniform

from .binomial import binomial_nb

#: counts up to this are allocated by sorting their uniforms
FEW_TRIALS = 16
#: counts above this are allocated by conditional binomials (O(K))
LARGE_COUNT = 8192


@njit(cache=True)
def rescale_log_weights_nb(log_weights):
    """Replace log-weights in place by ``exp(log_w - max)``; return their sum (>= 1)."""
    top = log_weights.max()
    total = 0.0
    for k in range(log_weights.size):
        w = math.exp(log_weights[k] - top)
        log_weights[k] = w
        total += w
    return total


@njit(cache=True)
def categorical_nb(rng, weights, total):
    """One index drawn with probability ``weights[k] / total`` (``total > 0``, the caller's
    sum of the non-negative ``weights``): one uniform against the running sum."""
    u = uniform(rng) * total
    acc = 0.0
    n_cells = weights.size
    for k in range(n_cells):
        acc += weights[k]
        if u < acc:
            return k
    k = n_cells - 1
    while k > 0 and weights[k] <= 0.0:  # u rounded past the sum onto zero-weight cells
        k -= 1
    return k


@njit(cache=True, inline="always")
def allocate_count_nb(rng, count, weights, total, uniforms, cells, counts):
    """Draw ``Multinomial(count, weights / total)`` as pairs ``(cells[i], counts[i])``.

    Parameters
    ----------
    rng : uint64 array
        The block's stream (:func:`lpp.randomness.seed_block`).
    count : int
        Trials (>= 0).
    weights : float64 array of length K
        Non-negative weights with a positive sum; **overwritten** (running sums).
    total : float
        The caller's sum of ``weights`` (the scale of the uniforms of small counts).
    uniforms : float64 array of length >= :data:`FEW_TRIALS`
        Scratch space.
    cells, counts : int64 arrays of length >= K
        Receive the cells that got trials and their numbers of trials.

    Returns
    -------
    int
        The number of pairs written; cells come in increasing order and a cell of zero weight
        never receives a trial. 0 when ``total`` is not positive (nothing can be allocated).

    Notes
    -----
    Inlined into its callers (numba IR inlining): the small counts that dominate every sweep
    then cost no call, as a kernel's own loop would; larger counts go through
    :func:`_allocate_many`.
    """
    n_cells = weights.size
    last = n_cells - 1
    if count <= 0 or not total > 0.0:
        # no positive weight to land on (a NaN or zero total): the zero-weight walk-backs
        # below would run off the array's start
        return 0
    if count == 1:
        u = uniform(rng) * total
        acc = 0.0
        for k in range(n_cells):
            acc += weights[k]
            if u < acc or k == last:
                while weights[k] <= 0.0:  # u rounded past the total onto a zero-weight tail
                    k -= 1
                cells[0] = k
                counts[0] = 1
                return 1
    if count <= FEW_TRIALS:
        for i in range(count):
            u = uniform(rng) * total
            j = i
            while j > 0 and uniforms[j - 1] > u:
                uniforms[j] = uniforms[j - 1]
                j -= 1
            uniforms[j] = u
        i = 0
        n_hit = 0
        acc = 0.0
        for k in range(n_cells):
            acc += weights[k]
            while i < count and (uniforms[i] < acc or k == last):
                kk = k
                while weights[kk] <= 0.0:  # u rounded past the total onto a zero-weight tail
                    kk -= 1
                if n_hit > 0 and cells[n_hit - 1] == kk:
                    counts[n_hit - 1] += 1
                else:
                    cells[n_hit] = kk
                    counts[n_hit] = 1
                    n_hit += 1
                i += 1
            if i == count:
                break
        return n_hit
    return _allocate_many(rng, count, weights, cells, counts)


@njit(cache=True)
def allocate_large_count_nb(rng, count, weights, total, cells, counts):
    """:func:`allocate_count_nb` for a ``count`` above :data:`FEW_TRIALS`: the same draws, as a
    call. For kernels that split small counts themselves: inlining :func:`allocate_count_nb`
    would compile its small-count paths, dead there, into each of them."""
    if not total > 0.0:
        return 0
    return _allocate_many(rng, count, weights, cells, counts)


@njit(cache=True)
def _allocate_many(rng, count, weights, cells, counts):
    """More than :data:`FEW_TRIALS` trials: a binary search per trial up to
    :data:`LARGE_COUNT`, conditional binomials above."""
    if count > LARGE_COUNT:
        return _binomial_split(rng, count, weights, cells, counts)
    n_cells = weights.size
    last = n_cells - 1
    acc = 0.0
    for k in range(n_cells):
        counts[k] = 0
        acc += weights[k]
        weights[k] = acc
    for _ in range(count):
        u = uniform(rng) * acc
        lo = 0
        hi = last
        while lo < hi:  # first cell whose running sum exceeds u
            mid = (lo + hi) // 2
            if weights[mid] > u:
                hi = mid
            else:
                lo = mid + 1
        while lo > 0 and weights[lo] == weights[lo - 1]:  # u rounded onto the total
            lo -= 1
        counts[lo] += 1
    return _compact(counts, cells, n_cells)


@njit(cache=True)
def _compact(counts, cells, n_cells):
    """Turn per-cell ``counts[0..K)`` into pairs at the front of ``cells``/``counts``."""
    n_hit = 0
    for k in range(n_cells):
        c = counts[k]
        if c != 0:
            cells[n_hit] = k
            counts[n_hit] = c
            n_hit += 1
    return n_hit


@njit(cache=True)
def _binomial_split(rng, count, weights, cells, counts):
    """Conditional binomials over the cells, in order; the last cell of positive weight takes
    what is left (its conditional probability is 1)."""
    n_cells = weights.size
    final = n_cells - 1
    while weights[final] <= 0.0:
        final -= 1
    rest = 0.0
    for k in range(final + 1):
        rest += weights[k]
    left = count
    n_hit = 0
    for k in range(final + 1):
        w = weights[k]
        if k == final:
            c = left
        elif w <= 0.0:
            c = 0
        else:
            p = w / rest
            c = binomial_nb(rng, left, p) if p < 1.0 else left
        rest -= w
        if c != 0:
            cells[n_hit] = k
            counts[n_hit] = c
            n_hit += 1
            left -= c
        if left == 0:
            break
    return n_hit


@njit(cache=True)
def multinomial_into_nb(rng, n, weights, out):
    """Draw ``Multinomial(n, weights / sum(weights))`` into ``out`` (overwritten), by
    :func:`allocate_count_nb`; ``weights`` are overwritten."""
    n_cells = weights.size
    total = 0.0
    for k in range(n_cells):
        total += weights[k]
        out[k] = 0
    uniforms = np.empty(FEW_TRIALS)
    cells = np.empty(n_cells, dtype=np.int64)
    counts = np.empty(n_cells, dtype=np.int64)
    for i in range(allocate_count_nb(rng, n, weights, total, uniforms, cells, counts)):
        out[cells[i]] = counts[i]
