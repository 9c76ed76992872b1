"""Compiled kernels of the community model: the split of a count over pairs of communities
(row chunks, streams and call ranges as :mod:`lpp.inference.kernels` describes), and the
sequential scan over the nodes' memberships (one stream per node).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from lpp.randomness import new_stream, seed_block
from lpp.distributions import FEW_TRIALS, allocate_count_nb, gamma_rate_nb, rescale_log_weights_nb
from lpp.inference.kernels import (_UNDERFLOW, allocation_steps, chunk_partials, n_chunks,
                                   rows_per_chunk)
from lpp.inference.numerics import SERIAL_BELOW, call_ranges, parallel_and_interpreted


@njit(cache=True)
def _allocate_blocks_rows(y, observed, theta, pi, seed, iteration, lo, hi, node_partial,
                          block_partial):
    n_nodes = y.shape[0]
    n_comm = theta.shape[1]
    weights = np.empty(n_comm * n_comm)
    cells = np.empty(n_comm * n_comm, dtype=np.int64)
    hits = np.empty(n_comm * n_comm, dtype=np.int64)
    uniforms = np.empty(FEW_TRIALS)
    rng = new_stream()
    for i in range(lo, hi):
        seed_block(rng, seed, iteration, i)
        for j in range(n_nodes):
            count = y[i, j]
            if count == 0 or not observed[i, j]:
                continue
            total = 0.0
            for c in range(n_comm):
                t_ic = theta[i, c]
                for d in range(n_comm):
                    w = t_ic * pi[c, d] * theta[j, d]
                    weights[c * n_comm + d] = w
                    total += w
            if not total > _UNDERFLOW:
                for c in range(n_comm):
                    for d in range(n_comm):
                        weights[c * n_comm + d] = (np.log(theta[i, c]) + np.log(pi[c, d])
                                                   + np.log(theta[j, d]))
                total = rescale_log_weights_nb(weights)
            for h in range(allocate_count_nb(rng, count, weights, total, uniforms, cells, hits)):
                c, d = divmod(cells[h], n_comm)
                n_cd = hits[h]
                node_partial[i, c] += n_cd
                node_partial[j, d] += n_cd
                block_partial[c, d] += n_cd


def _allocate_blocks_loop(y, observed, theta, pi, seed, iteration, row_lo, row_hi, per_chunk,
                          node_partials, block_partials):
    for ch in prange(node_partials.shape[0]):
        _allocate_blocks_rows(y, observed, theta, pi, seed, iteration, row_lo + ch * per_chunk,
                              min(row_hi, row_lo + (ch + 1) * per_chunk), node_partials[ch],
                              block_partials[ch])


_allocate_blocks = parallel_and_interpreted(_allocate_blocks_loop)


def allocate_blocks_kernel(y, observed, theta, pi, seed, iteration):
    """Split ``y[i, j]`` over pairs ``(c, d)`` with weights ``theta[i, c] pi[c, d] theta[j, d]``.

    Returns node totals (V x C; sender and receiver roles added) and block totals (C x C).
    """
    n_nodes, n_comm = theta.shape
    kernel = _allocate_blocks[y.size < SERIAL_BELOW]
    node_totals = np.zeros((n_nodes, n_comm), dtype=np.int64)
    block_totals = np.zeros((n_comm, n_comm), dtype=np.int64)
    for lo, hi in call_ranges(allocation_steps(y, n_comm * n_comm)):
        chunks = n_chunks(hi - lo, theta.size + pi.size)
        node_partials = chunk_partials(chunks, n_nodes, n_comm)
        block_partials = chunk_partials(chunks, n_comm, n_comm)
        kernel(y, observed, theta, pi, seed, iteration, lo, hi, rows_per_chunk(hi - lo, chunks),
               node_partials, block_partials)
        node_totals += node_partials.sum(axis=0)
        block_totals += block_partials.sum(axis=0)
    return node_totals, block_totals


@njit(cache=True)
def update_memberships_kernel(theta, pi, node_totals, observed, a0, b0, seed, iteration):
    """One systematic Gibbs scan over the nodes' memberships of the community model.

    ``theta[i]`` appears in the rates of row i (as sender) and column i (as receiver), so its
    conditional depends on the other nodes' current values: the scan is sequential, keeping
    ``send[j, c] = sum_d theta[j, d] pi[c, d]`` and ``recv[j, c] = sum_d theta[j, d] pi[d, c]``
    up to date. Rate of ``theta[i, c]``: ``b0 + sum_j obs[i, j] send[j, c] + sum_j obs[j, i]
    recv[j, c]`` (the diagonal is never observed).
    """
    n_nodes, n_comm = theta.shape
    out = theta.copy()
    send = out @ pi.T
    recv = out @ pi
    rate = np.empty(n_comm)
    rng = new_stream()
    for i in range(n_nodes):
        seed_block(rng, seed, iteration, i)
        for c in range(n_comm):
            rate[c] = b0
        for j in range(n_nodes):
            if observed[i, j]:
                for c in range(n_comm):
                    rate[c] += send[j, c]
            if observed[j, i]:
                for c in range(n_comm):
                    rate[c] += recv[j, c]
        for c in range(n_comm):
            out[i, c] = gamma_rate_nb(rng, a0 + node_totals[i, c], rate[c])
        for c in range(n_comm):
            s = 0.0
            r = 0.0
            for d in range(n_comm):
                s += out[i, d] * pi[c, d]
                r += out[i, d] * pi[d, c]
            send[i, c] = s
            recv[i, c] = r
    return out

