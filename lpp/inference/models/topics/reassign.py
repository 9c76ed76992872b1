"""Each document's tokens reassigned to topics with ``theta`` summed out: the partially collapsed
step of the topic model's fused engines (``TopicModel(..., collapse_theta=True)``).

Why (docs/convergence.md, *What the creep is*). With the prior shape ``a0 = 0.1`` a document's
``theta[d, k]`` for a topic it holds no token of is drawn from ``Gamma(0.1, ·)``, mostly far
below anything the data could support, so that topic seldom receives a token there: topics
reach new documents slowly, and a private chain started from the data undershoots the
posterior's total rate and creeps up to it for hundreds of sweeps. Here a token of word ``v``
goes to topic ``k`` with probability

    (a0 + n[d, k]) phi[k, v] / r[d, k],      r[d, k] = b0 + sum over observed v' of phi[k, v'],

``n`` the document's other tokens, ``r`` the Gamma rate of ``theta[d, k]``: its conditional with
``theta[d]`` integrated out, where an unused topic has weight ``a0`` rather than a draw from
``Gamma(a0, ·)``.

The step, given this sweep's counts ``y`` and the current ``theta`` and ``phi``: every row's
tokens get topics ``z`` from ``p(z | y, theta, phi)`` (one categorical per token, as the plain
sweep splits them), then :data:`REASSIGN_SCANS` Gibbs scans over the row's tokens from
``p(z | y, phi)`` (``theta`` summed out), then ``theta`` is drawn from ``p(theta | z, phi)``.
Given ``phi`` and the data, ``(y, z, theta)`` before the step is a draw of their joint
conditional, the scans leave ``p(z | y, phi)`` invariant (the noise depends on ``z`` only
through ``y``) and ``theta`` is then drawn from its conditional, so the step leaves
``p(y, z, theta | phi, y_tilde)`` invariant; ``phi`` and ``theta`` are drawn after it as in
every sweep. Rows are independent given ``phi``: each reseeds its stream with ``(seed,
iteration, row)`` and the topic-word counts are summed per fixed chunk of rows in integers,
so the result is bit-identical for any number of threads.

Cost: two passes of ``K`` products over the sweep's tokens (about the tokens' share of the
floor kernel), and the row's tokens held while it is reassigned.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from lpp.randomness import new_stream, seed_block, uniform
from lpp.distributions import categorical_nb, rescale_log_weights_nb
from lpp.inference.numerics import SERIAL_BELOW, parallel_and_interpreted
from lpp.inference.kernels import sum_partials, zero_partials

#: Gibbs scans over a row's tokens per sweep (each token once per scan)
REASSIGN_SCANS = 1
#: the most tokens one sweep may reassign: the step's work and a row's memory grow with the
#: counts (two K-term passes and 12 bytes per token), unlike the plain sweep's, which splits a
#: large count by one multinomial; beyond this the fit is refused rather than left to run on
MAX_REASSIGN_TOKENS = 10**9


@njit(cache=True)
def _row_tokens(d, indptr, cols, counts, token_ptr, token_cols, bulk_ptr, bulk_cols,
                bulk_counts):
    """The columns of row ``d``'s tokens: its entries' counts, then its listed tokens, then its
    bulk counts, each in the layout's order."""
    n = 0
    for idx in range(indptr[d], indptr[d + 1]):
        n += counts[idx]
    n += token_ptr[d + 1] - token_ptr[d]
    for i in range(bulk_ptr[d], bulk_ptr[d + 1]):
        n += bulk_counts[i]
    out = np.empty(n, dtype=np.int32)
    t = 0
    for idx in range(indptr[d], indptr[d + 1]):
        for _ in range(counts[idx]):
            out[t] = cols[idx]
            t += 1
    for i in range(token_ptr[d], token_ptr[d + 1]):
        out[t] = token_cols[i]
        t += 1
    for i in range(bulk_ptr[d], bulk_ptr[d + 1]):
        for _ in range(bulk_counts[i]):
            out[t] = bulk_cols[i]
            t += 1
    return out


@njit(cache=True)
def _reassign_rows(indptr, cols, counts, token_ptr, token_cols, bulk_ptr, bulk_cols,
                   bulk_counts, theta, phi_t, theta_rate, a0, scans, seed, iteration,
                   first_row, row_lo, row_hi, doc_topic, col_partial):
    n_topics = theta.shape[1]
    weights = np.empty(n_topics)
    used = np.empty(n_topics)
    rng = new_stream()
    for d in range(row_lo, row_hi):
        tokens = _row_tokens(d, indptr, cols, counts, token_ptr, token_cols, bulk_ptr,
                             bulk_cols, bulk_counts)
        n_tokens = tokens.size
        if n_tokens == 0:
            continue
        seed_block(rng, seed, iteration, first_row + d)
        topics = np.empty(n_tokens, dtype=np.int64)
        for k in range(n_topics):
            used[k] = 0.0
        for t in range(n_tokens):  # z | y, theta, phi
            v = tokens[t]
            total = 0.0
            for k in range(n_topics):
                weights[k] = theta[d, k] * phi_t[v, k]
                total += weights[k]
            if not total > 0.0 or not total < math.inf:
                for k in range(n_topics):
                    weights[k] = math.log(theta[d, k]) + math.log(phi_t[v, k])
                total = rescale_log_weights_nb(weights)
            topics[t] = categorical_nb(rng, weights, total)
            used[topics[t]] += 1.0
        for _ in range(scans):  # z | y, phi with theta[d] summed out
            for t in range(n_tokens):
                v = tokens[t]
                used[topics[t]] -= 1.0
                total = 0.0
                for k in range(n_topics):
                    weights[k] = (a0 + used[k]) * phi_t[v, k] / theta_rate[d, k]
                    total += weights[k]
                if not total > 0.0 or not total < math.inf:
                    for k in range(n_topics):
                        weights[k] = (math.log(a0 + used[k]) + math.log(phi_t[v, k])
                                      - math.log(theta_rate[d, k]))
                    total = rescale_log_weights_nb(weights)
                topics[t] = categorical_nb(rng, weights, total)
                used[topics[t]] += 1.0
        for t in range(n_tokens):
            k = topics[t]
            doc_topic[d, k] += 1
            col_partial[tokens[t], k] += 1


def _reassign_loop(indptr, cols, counts, token_ptr, token_cols, bulk_ptr, bulk_cols, bulk_counts,
                   theta, phi_t, theta_rate, a0, scans, seed, iteration, first_row, starts, ends,
                   doc_topic, col_partials):
    for ch in prange(starts.size):
        _reassign_rows(indptr, cols, counts, token_ptr, token_cols, bulk_ptr, bulk_cols,
                       bulk_counts, theta, phi_t, theta_rate, a0, scans, seed, iteration,
                       first_row, starts[ch], ends[ch], doc_topic, col_partials[ch])


_reassign = parallel_and_interpreted(_reassign_loop)


def reassign_tokens(tokens, theta, phi, theta_rate, a0, seed, iteration, first_row, calls,
                    partials, scans=REASSIGN_SCANS):
    """``(doc_topic (D x K), topic_word (K x V))`` of the sweep's tokens after the reassignment.

    Parameters
    ----------
    tokens : tuple
        ``(indptr, cols, counts, token_ptr, token_cols, bulk_ptr, bulk_cols, bulk_counts)``:
        per row, entries (CSR) with their counts, listed token columns, and bulk counts per
        column (the sparse engine's draw of ``y``; the known-counts engine has no listed or
        bulk tokens).
    theta, phi : ndarray
        The factors the counts were drawn with (``theta`` only starts the scans).
    theta_rate : ndarray, shape (D, K)
        ``b0`` plus the sum of ``phi[k, v]`` over the row's observed entries.
    calls, partials
        The engine's kernel calls ``(starts, ends)`` over its row chunks and its chunks'
        topic-word partial counts (overwritten).
    """
    n_rows, n_topics = theta.shape
    n_cols = phi.shape[1]
    counts, token_cols, bulk_counts = tokens[2], tokens[4], tokens[7]
    n_tokens = int(counts.sum()) + token_cols.size + int(bulk_counts.sum())
    if n_tokens > MAX_REASSIGN_TOKENS:
        raise ValueError(f"collapse_theta reassigns token by token, and this sweep holds "
                         f"{n_tokens:.3g} tokens (at most {MAX_REASSIGN_TOKENS:.0e}): fit "
                         "without collapse_theta")
    theta = np.ascontiguousarray(theta, dtype=np.float64)
    phi_t = np.ascontiguousarray(np.asarray(phi, dtype=np.float64).T)
    theta_rate = np.ascontiguousarray(theta_rate, dtype=np.float64)
    doc_topic = np.zeros((n_rows, n_topics), dtype=np.int64)
    small = n_rows * n_cols < SERIAL_BELOW
    zero_partials(partials, small)
    for starts, ends in calls:
        _reassign[small](*tokens, theta, phi_t, theta_rate, float(a0), int(scans), seed,
                         iteration, first_row, starts, ends, doc_topic, partials)
    topic_word = np.empty((n_topics, n_cols), dtype=np.int64)
    sum_partials(partials, topic_word, small)
    return doc_topic, topic_word
