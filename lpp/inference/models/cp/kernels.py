"""Compiled kernel of the CP model: the split of each count of a 3-way tensor over the rank-one
terms, by slices of the first index (row chunks, streams and call ranges as
:mod:`lpp.inference.kernels` describes).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from lpp.randomness import new_stream, seed_block
from lpp.distributions import FEW_TRIALS, allocate_count_nb, rescale_log_weights_nb
from lpp.inference.kernels import (_UNDERFLOW, allocation_steps, chunk_partials, n_chunks,
                                   rows_per_chunk)
from lpp.inference.numerics import SERIAL_BELOW, call_ranges, parallel_and_interpreted


@njit(cache=True)
def _allocate_cp3_rows(y, observed, f0, f1, f2, seed, iteration, lo, hi, totals0, partial1,
                       partial2):
    n_j, n_l = y.shape[1], y.shape[2]
    rank = f0.shape[1]
    weights = np.empty(rank)
    cells = np.empty(rank, dtype=np.int64)
    hits = np.empty(rank, dtype=np.int64)
    uniforms = np.empty(FEW_TRIALS)
    rng = new_stream()
    for i in range(lo, hi):
        seed_block(rng, seed, iteration, i)
        for j in range(n_j):
            for l in range(n_l):
                count = y[i, j, l]
                if count == 0 or not observed[i, j, l]:
                    continue
                total = 0.0
                for r in range(rank):
                    w = f0[i, r] * f1[j, r] * f2[l, r]
                    weights[r] = w
                    total += w
                if not total > _UNDERFLOW:
                    for r in range(rank):
                        weights[r] = np.log(f0[i, r]) + np.log(f1[j, r]) + np.log(f2[l, r])
                    total = rescale_log_weights_nb(weights)
                for h in range(allocate_count_nb(rng, count, weights, total, uniforms, cells, hits)):
                    r = cells[h]
                    totals0[i, r] += hits[h]
                    partial1[j, r] += hits[h]
                    partial2[l, r] += hits[h]


def _allocate_cp3_loop(y, observed, f0, f1, f2, seed, iteration, row_lo, row_hi, per_chunk,
                       totals0, partials1, partials2):
    for ch in prange(partials1.shape[0]):
        _allocate_cp3_rows(y, observed, f0, f1, f2, seed, iteration, row_lo + ch * per_chunk,
                           min(row_hi, row_lo + (ch + 1) * per_chunk), totals0, partials1[ch],
                           partials2[ch])


_allocate_cp3 = parallel_and_interpreted(_allocate_cp3_loop)


def allocate_cp3_kernel(y, observed, f0, f1, f2, seed, iteration):
    """Split ``y[i, j, l]`` over the rank-one terms ``f0[i, r] f1[j, r] f2[l, r]``.

    Returns the per-mode totals (I x R, J x R, L x R).
    """
    n_i, n_j, n_l = y.shape
    rank = f0.shape[1]
    kernel = _allocate_cp3[y.size < SERIAL_BELOW]
    totals0 = np.zeros((n_i, rank), dtype=np.int64)
    totals1 = np.zeros((n_j, rank), dtype=np.int64)
    totals2 = np.zeros((n_l, rank), dtype=np.int64)
    for lo, hi in call_ranges(allocation_steps(y, rank)):
        chunks = n_chunks(hi - lo, (n_j + n_l) * rank)
        partials1 = chunk_partials(chunks, n_j, rank)
        partials2 = chunk_partials(chunks, n_l, rank)
        kernel(y, observed, f0, f1, f2, seed, iteration, lo, hi, rows_per_chunk(hi - lo, chunks),
               totals0, partials1, partials2)
        totals1 += partials1.sum(axis=0)
        totals2 += partials2.sum(axis=0)
    return totals0, totals1, totals2
