"""The collapsed privacy step fused with the topic model's allocation, in sparse form.

(docs/design.md, "The sparse engine and its cost".) With
``mu[d, v] = sum_k theta[d, k] phi[k, v]`` and a noise level ``alpha_d`` constant within row d,
every observed entry with
``y_tilde <= 0`` has the exact conditional ``y ~ Pois(alpha_d mu[d, v])``; split over topics,
its sub-counts are independent ``Pois(alpha_d theta[d, k] phi[k, v])``. Over the set ``Neg(d)``
of such entries of row d they can therefore be drawn *by topic* instead of by entry:

* ``n[d, k] = sum_{v in Neg(d)} y[d, v, k] ~ Pois(alpha_d theta[d, k] R[d, k])`` with
  ``R[d, k] = sum_{v in Neg(d)} phi[k, v] = Phi_k - sum_{v in E(d)} phi[k, v]``, where
  ``Phi_k = sum_v phi[k, v]`` and ``E(d)`` holds the row's other entries (positive privatized
  counts and unobserved entries);
* each of the ``n[d, k]`` tokens lands on column ``v`` with probability ``phi[k, v] / R[d, k]``
  over ``Neg(d)``: an alias-table draw from ``phi[k, :]`` rejecting columns in ``E(d)``.

The entries of ``E(d)`` that are observed (``y_tilde > 0``) get the exact two-piece conditional
of the collapsed privacy step and are allocated over topics by a multinomial, as in the dense
sampler. A sweep then costs ``O(|E| K + D K + tokens + K V)`` instead of ``O(D V K)``: the dense
rates ``mu`` are never formed. What the Gamma updates need — the document-topic and topic-word
totals — come out directly; the per-entry counts ``y`` are kept in compact form
(:class:`TopicCountsDraw`) and made dense only on request (saved samples, the log joint).

Numerical safeguards. ``R[d, k]`` is a difference of sums; when it falls below
:data:`RESIDUAL_RECOMPUTE` times ``Phi_k`` (the positive entries hold almost all of topic k's
mass, so the difference would lose digits) it is recomputed as an explicit sum over ``Neg(d)``.
When the acceptance rate ``R / Phi_k`` of the alias rejection would fall below
:data:`ALIAS_MIN_ACCEPTANCE`, the row's tokens of topic k are drawn by inversion over an
explicit cumulative sum on ``Neg(d)`` instead. Beyond :data:`BULK_MIN` tokens and
:data:`BULK_PER_COLUMN` per column of ``Neg(d)``, they are split over ``Neg(d)`` by one
multinomial, so the token term of the cost never exceeds ``O(D K max(BULK_MIN, V))``. Both
passes run in calls of bounded work (:func:`chunked_calls`), so that Ctrl-C is handled between
them.

Random streams: pass 1 (positive entries and topic totals) and pass 2 (token columns) each
reseed per row with ``(seed, iteration, row)`` (:mod:`lpp.randomness`); topic-word totals are summed
over chunks of rows (one per thread) in integers. Results are therefore bit-identical for any
number of numba threads.

What pass 1 costs, beyond the floor's dot product and uniform per positive entry
(``bench/README.md``, *Pass 1 written out*): the excluded mass (K additions), the two-piece
conditional of ``y`` and, for the entries drawn with ``y > 0``, their split over topics; per
row a reseed and K Poisson topic totals. The kernel writes the definitions of an entry's rate
(:func:`_entry_weights`: its products and excluded mass, summed by the shared
:func:`lpp.inference.models.topics.kernels.weights_total`), of the conditional's common case
(:func:`lpp.inference.privacy.kernels.positive_by_inversion_at`) and of the split
(:func:`lpp.inference.models.topics.kernels.allocate_entry_nb`) out, arithmetic and draws
unchanged (the tests hold it to a pass built from them); the rare paths are calls. :class:`SparseTopicEngine` applies when the privacy step declares
``"exact_conditional"`` (the collapsed step), the model declares ``"row_column_factors"`` (the
topic model) and ``alpha`` is constant within rows; per-entry ``alpha`` breaks the row-constant
factorisation and uses the dense sweep, as does the paper-faithful ``bessel`` step.
"""
from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit, prange

from lpp.inference.engines.prefetch import prefetch_cell, prefetch_row
from lpp.randomness import Tag, derive_seed, new_stream, seed_block, uniform
from lpp.distributions import (
    FEW_TRIALS,
    LARGE_COUNT,
    allocate_large_count_nb,
    poisson_nb,
)
from lpp.inference import numerics
from lpp.inference.numerics import (
    SERIAL_BELOW,
    check_counts_drawn,
    parallel_and_interpreted,
    parallel_and_serial,
)
from lpp.inference.kernels import _UNDERFLOW, ChunkTables, n_chunks, sum_partials, zero_partials
from lpp.inference.models.topics.kernels import (
    EAGER_SUMS,
    allocate_large_entry_nb,
    extend_topic_order,
    log_topic_weights,
    weights_total,
)
from lpp.inference.privacy.kernels import (
    _RECIPROCALS,
    INVERSION_MAX_COUNT,
    INVERSION_MAX_RATE,
    positive_by_inversion_at,
    sample_true_count_collapsed_nb,
)
from lpp.inference.privacy.steps import NoiseLevels

#: recompute ``R[d, k]`` by an explicit sum when the subtraction keeps fewer digits than this
RESIDUAL_RECOMPUTE = 1e-4
#: below this acceptance rate the alias rejection gives way to an explicit draw over Neg(d)
ALIAS_MIN_ACCEPTANCE = 0.25
#: rows per layout-building block (bounds the temporary memory of :func:`build_layout`)
_LAYOUT_ROWS = 256
#: most tokens one chunk may hold while its topic-word partial counts are int32
PARTIAL_LIMIT = 2**31 - 1
#: pass 1 hints the ``phi`` row of the entry this many places ahead (measured: 28% less time per
#: entry at V = 10,000, where the tables exceed the L2 cache; flat between 10 and 24)
_PREFETCH_AHEAD = 12
#: a row's Neg(d) tokens of one topic are split over its columns by one multinomial (O(|Neg(d)|),
#: counts kept per column) rather than drawn token by token when they number more than both
#: BULK_MIN and BULK_PER_COLUMN per column of Neg(d): token by token, a sweep's time and memory
#: would grow with the counts without bound (a row of counts near 1e6 beside non-positive
#: entries put 1e9 tokens there). Far above the noise tokens of real data, whose draws are
#: therefore token by token.
BULK_MIN = LARGE_COUNT
BULK_PER_COLUMN = 4
#: pass 1 adds the topic-word counts of up to this many tokens at a time (see _pass1_rows)
_PENDING = 4096
#: ... hinting the cell of the token this many places ahead
_SCATTER_AHEAD = 16


# ---------------------------------------------------------------------------------------------
# the data's layout: the entries that are not "non-positive and observed", row by row
# ---------------------------------------------------------------------------------------------

class SparseLayout:
    """Per row, the columns in ``E(d)``: observed positive entries and unobserved entries.

    CSR arrays: ``indptr`` (D + 1, int64), ``cols`` (int32), ``values`` (the privatized count
    for an observed positive entry, 0 for an unobserved one; int32 when the counts fit, else
    int64). ``alpha_rows`` holds one noise level per row. Built once per data set.

    ``first_row`` is the global index of row 0 when the layout holds a block of a larger
    matrix's rows: the random streams are keyed by global row, so a row block draws exactly
    what the whole matrix would draw for those rows (the distributed sweep relies on it).
    """

    def __init__(self, y_tilde: np.ndarray, observed: np.ndarray, alpha_rows: np.ndarray,
                 first_row: int = 0):
        n_rows, n_cols = y_tilde.shape
        self.shape = (n_rows, n_cols)
        self.first_row = int(first_row)
        self.alpha_rows = np.ascontiguousarray(alpha_rows, dtype=np.float64)
        big = y_tilde.size and int(np.abs(y_tilde).max()) >= 2**31 - 1
        value_type = np.int64 if big else np.int32
        counts, cols, values = [], [], []
        for lo in range(0, n_rows, _LAYOUT_ROWS):
            part = y_tilde[lo:lo + _LAYOUT_ROWS]
            obs = observed[lo:lo + _LAYOUT_ROWS]
            special = (part > 0) | ~obs
            counts.append(special.sum(axis=1))
            _, c = np.nonzero(special)
            cols.append(c.astype(np.int32))
            values.append(np.where(obs[special], part[special], 0).astype(value_type))
        self.indptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(np.concatenate(counts), out=self.indptr[1:])
        self.cols = np.concatenate(cols) if cols else np.empty(0, np.int32)
        self.values = np.concatenate(values) if values else np.empty(0, value_type)
        # pass 1 per entry: the collapsed draw (a tail sum of about 9 sqrt(y~) terms at most
        # 1e4) and a trial per count up to LARGE_COUNT
        positive = np.maximum(self.values, 0).astype(np.float64)
        steps = (16.0 + np.minimum(positive, LARGE_COUNT)
                 + np.minimum(9.0 * np.sqrt(positive), 1e4))
        self._row_steps = np.diff(np.concatenate(([0.0], np.cumsum(steps)))[self.indptr])

    def row_steps(self, n_topics: int) -> np.ndarray:
        """Work of pass 1 per row, for :func:`chunked_calls`."""
        return self._row_steps + n_topics

    @property
    def nnz(self) -> int:
        return int(self.cols.size)


def build_layout(y_tilde: np.ndarray, observed: np.ndarray, noise: NoiseLevels,
                 first_row: int = 0) -> SparseLayout:
    """The :class:`SparseLayout` of a data set (or of a row block starting at global row
    ``first_row``); ValueError when alpha is not row-constant."""
    rows = noise.per_row()
    if rows is None:
        raise ValueError("the sparse topic sampler needs alpha constant within rows "
                         "(a scalar or shape (D, 1)); per-entry alpha uses the dense sampler")
    return SparseLayout(y_tilde, observed, rows, first_row)


# ---------------------------------------------------------------------------------------------
# alias tables of the topics' word distributions (rebuilt every sweep from phi)
# ---------------------------------------------------------------------------------------------

@njit(cache=True)
def _alias_row(weights, total, prob, alias, small, large):
    n = weights.size
    n_small = 0
    n_large = 0
    for v in range(n):
        p = weights[v] * n / total
        prob[v] = p
        alias[v] = v
        if p < 1.0:
            small[n_small] = v
            n_small += 1
        else:
            large[n_large] = v
            n_large += 1
    while n_small > 0 and n_large > 0:
        n_small -= 1
        s = small[n_small]
        g = large[n_large - 1]
        alias[s] = g
        prob[g] = (prob[g] + prob[s]) - 1.0
        if prob[g] < 1.0:
            n_large -= 1
            small[n_small] = g
            n_small += 1
    for i in range(n_large):  # leftovers are 1 up to rounding
        prob[large[i]] = 1.0
    for i in range(n_small):
        prob[small[i]] = 1.0


def _alias_loop(phi, phi_sums, prob, alias):
    n_topics, n_cols = phi.shape
    for k in prange(n_topics):
        small = np.empty(n_cols, dtype=np.int32)
        large = np.empty(n_cols, dtype=np.int32)
        _alias_row(phi[k], phi_sums[k], prob[k], alias[k], small, large)


_alias_tables = parallel_and_interpreted(_alias_loop)


# ---------------------------------------------------------------------------------------------
# pass 1: positive entries (exact conditional + multinomial) and the topic totals of Neg(d)
# ---------------------------------------------------------------------------------------------

@njit(cache=True)
def _entry_weights(theta, phi_t, d, v, excluded, weights):
    """``weights[k] = theta[d, k] phi[k, v]``; add ``phi[:, v]`` to ``excluded``; return the sum
    (:func:`lpp.inference.models.topics.kernels.weights_total`, in its fixed order).

    The definition of an entry's rate: :func:`_pass1_rows` forms it alike, in its own loop,
    and the tests hold the kernel to a pass 1 built from this function.
    """
    for k in range(weights.size):
        p = phi_t[v, k]
        excluded[k] += p
        weights[k] = theta[d, k] * p
    return weights_total(weights)


@njit(cache=True)
def _complement_sums(row_cols, lo, hi, phi_t, marker, tag, need, out):
    """``out[k] = sum over v not in E(d) of phi[k, v]`` for the topics with ``need[k]``."""
    for idx in range(lo, hi):
        marker[row_cols[idx]] = tag
    n_cols, n_topics = phi_t.shape
    for k in range(n_topics):
        if need[k]:
            out[k] = 0.0
    for v in range(n_cols):
        if marker[v] != tag:
            for k in range(n_topics):
                if need[k]:
                    out[k] += phi_t[v, k]


@njit(cache=True)
def _add_pending(col_partial, cols, topics, n):
    """``col_partial[cols[i], topics[i]] += 1`` for ``i < n``, hinting the cells ahead."""
    for i in range(n):
        if i + _SCATTER_AHEAD < n:
            prefetch_cell(col_partial, cols[i + _SCATTER_AHEAD], topics[i + _SCATTER_AHEAD])
        col_partial[cols[i], topics[i]] += 1


@njit(cache=True)
def _pass1_rows(indptr, cols, values, alpha_rows, theta, phi_t, phi_sums, seed, iteration,
                first_row, row_lo, row_hi, pos_y, row_drawn, neg_counts, residual, doc_topic,
                col_partial, marker):
    # The arithmetic and the draws of _entry_weights and
    # lpp.inference.models.topics.kernels.allocate_entry_nb written out but for the sum (weights_total, inlined: it takes the scratch weights alone):
    # numba's inlining of a helper that takes arrays (or a call of one) adds atomic
    # reference-count updates of each array at every call; the rare paths are calls.
    n_topics = theta.shape[1]
    last = n_topics - 1
    weights = np.empty(n_topics)
    order = np.empty(n_topics, dtype=np.int64)
    placed = np.empty(n_topics, dtype=np.bool_)
    running = np.empty(n_topics)
    cells = np.empty(n_topics, dtype=np.int64)
    hits = np.empty(n_topics, dtype=np.int64)
    excluded = np.empty(n_topics)
    need = np.zeros(n_topics, dtype=np.bool_)
    sums = np.empty(INVERSION_MAX_COUNT + 2)  # running sums of the inversion's pieces
    sums[0] = 1.0
    # the topic-word counts of the tokens split one by one, added to col_partial at the end of
    # each row (a random row of a V x K table per token: added apart from the draws, with
    # cache hints, instead of hinting the table row of every entry ahead)
    pending_cols = np.empty(_PENDING, dtype=np.int64)
    pending_topics = np.empty(_PENDING, dtype=np.int64)
    # the counters passed to helpers start as int64, not as the constant 0: numba would
    # compile each helper once more for the constant's literal type
    n_pending = np.int64(0)
    last_entry = indptr[row_hi]
    rng = new_stream()
    for d in range(row_lo, row_hi):
        seed_block(rng, seed, iteration, first_row + d)
        # the row's topic order (row_topic_order), placed as far as its tokens' scans reach
        placed[:] = False
        n_ordered = np.int64(0)
        alpha = alpha_rows[d]
        inversion_rate = INVERSION_MAX_RATE * alpha
        lo = indptr[d]
        hi = indptr[d + 1]
        for k in range(n_topics):
            excluded[k] = 0.0
        drawn = 0.0  # the row's positive entries' counts, for the caller's check
        failed = False
        for idx in range(lo, hi):
            if idx + _PREFETCH_AHEAD < last_entry:
                prefetch_row(phi_t, cols[idx + _PREFETCH_AHEAD])
            v = cols[idx]
            # _entry_weights: the products and the excluded mass, then their sum
            for k in range(n_topics):
                f = phi_t[v, k]
                excluded[k] += f
                weights[k] = theta[d, k] * f
            total = weights_total(weights)
            y_tilde = values[idx]
            if y_tilde <= 0:  # an unobserved entry: no likelihood, no count
                pos_y[idx] = 0
                continue
            if total > 0.0 and y_tilde <= INVERSION_MAX_COUNT and total <= inversion_rate:
                # sample_true_count_collapsed_nb's inversion (positive_by_inversion_at), its
                # common case written out: the pieces up to y_tilde summed, the upper tail
                # bracketed by its first term and a geometric bound on the rest; the draw is
                # the number of the pieces' running sums at or below u times the lower end
                # (the first of them above it, found without a branch per piece), kept when
                # that sum also lies above the upper end. Otherwise the whole inversion at
                # the same u.
                lam_low = total / alpha
                lam_high = alpha * total
                u = uniform(rng)
                low = 1.0
                t = 1.0
                for j in range(1, y_tilde + 1):
                    t *= lam_low * _RECIPROCALS[j - 1]
                    low += t
                    sums[j] = low
                ratio_rest = lam_high * _RECIPROCALS[y_tilde + 1]
                first = t * (lam_high * _RECIPROCALS[y_tilde])
                target_lo = u * (low + first)
                target_hi = u * (low + first / (1.0 - ratio_rest))
                y = 0
                for j in range(y_tilde + 1):
                    y += sums[j] <= target_lo
                if not (ratio_rest < 1.0 and target_hi < low and sums[y] > target_hi):
                    y = positive_by_inversion_at(y_tilde, alpha, total, u)
            else:
                y = sample_true_count_collapsed_nb(rng, y_tilde, alpha, total)
            pos_y[idx] = y
            if y <= 0:  # none drawn, or the failure mark -1 (the caller refuses the sweep)
                failed = failed or y < 0
                continue
            drawn += y
            if not total > _UNDERFLOW:
                total = log_topic_weights(theta, phi_t, d, v, weights)
            if y > FEW_TRIALS:
                allocate_large_entry_nb(rng, y, d, v, weights, total, cells, hits, doc_topic,
                                        col_partial)
                continue
            if not total > 0.0:
                continue
            # allocate_entry_nb: one categorical draw per token, the running sums of the
            # weights in the row's topic order; each token scans them from the start, and the
            # sums formed for one token serve the entry's next ones. The sums are formed in
            # blocks of EAGER_SUMS (the first at once, the next ones as a token reaches them)
            # and a token's place within a block counted without a branch per topic (a token
            # lands beyond the first block about one time in four on text)
            if n_pending + FEW_TRIALS > _PENDING:
                _add_pending(col_partial, pending_cols, pending_topics, n_pending)
                n_pending = np.int64(0)
            if n_topics > EAGER_SUMS:
                if n_ordered == 0:
                    n_ordered = extend_topic_order(theta, d, placed, n_ordered, order)
                acc = 0.0
                for q in range(EAGER_SUMS):
                    acc += weights[order[q]]
                    running[q] = acc
                formed = EAGER_SUMS
            else:
                acc = 0.0
                formed = 0
            for _ in range(y):
                u = uniform(rng) * total
                p = 0
                if n_topics > EAGER_SUMS:
                    for q in range(EAGER_SUMS):
                        p += running[q] <= u
                    # beyond them, blocks of EAGER_SUMS more sums, formed once per entry
                    # and counted alike; the rest (fewer than EAGER_SUMS) scanned
                    block = EAGER_SUMS
                    scan = p == block
                    while scan and block + EAGER_SUMS <= n_topics:
                        if formed == block:
                            if n_ordered < block + EAGER_SUMS:
                                n_ordered = extend_topic_order(theta, d, placed, n_ordered,
                                                               order)
                            for q in range(EAGER_SUMS):
                                acc += weights[order[block + q]]
                                running[block + q] = acc
                            formed = block + EAGER_SUMS
                        for q in range(EAGER_SUMS):
                            p += running[block + q] <= u
                        block += EAGER_SUMS
                        scan = p == block
                else:
                    scan = True
                while scan:
                    if p == formed:
                        if p == n_ordered:
                            n_ordered = extend_topic_order(theta, d, placed, n_ordered, order)
                        acc += weights[order[p]]
                        running[p] = acc
                        formed += 1
                    if u < running[p] or p == last:
                        break
                    p += 1
                k = order[p]
                while weights[k] <= 0.0:  # u rounded past the sum onto zero-weight topics
                    p -= 1
                    k = order[p]
                doc_topic[d, k] += 1
                pending_cols[n_pending] = v
                pending_topics[n_pending] = k
                n_pending += 1
        row_drawn[d] = -1.0 if failed else drawn
        _add_pending(col_partial, pending_cols, pending_topics, n_pending)
        n_pending = np.int64(0)
        any_need = False
        for k in range(n_topics):
            r = phi_sums[k] - excluded[k]
            residual[d, k] = r
            need[k] = r < RESIDUAL_RECOMPUTE * phi_sums[k]
            any_need = any_need or need[k]
        if any_need:
            _complement_sums(cols, lo, hi, phi_t, marker, -(d + 1), need, excluded)
            for k in range(n_topics):
                if need[k]:
                    residual[d, k] = excluded[k]
                    need[k] = False
        for k in range(n_topics):
            rate = alpha * theta[d, k] * residual[d, k]
            n = poisson_nb(rng, rate) if rate != 0.0 else 0  # -1 for a NaN or overflowed rate
            neg_counts[d, k] = n
            doc_topic[d, k] += n


def _pass1_loop(indptr, cols, values, alpha_rows, theta, phi_t, phi_sums, seed, iteration,
                first_row, starts, ends, pos_y, row_drawn, neg_counts, residual, doc_topic,
                col_partials, markers):
    for ch in prange(starts.size):
        _pass1_rows(indptr, cols, values, alpha_rows, theta, phi_t, phi_sums, seed, iteration,
                    first_row, starts[ch], ends[ch], pos_y, row_drawn, neg_counts,
                    residual, doc_topic, col_partials[ch], markers[ch])


_pass1 = parallel_and_interpreted(_pass1_loop)


# ---------------------------------------------------------------------------------------------
# pass 2: the columns of the Neg(d) tokens
# ---------------------------------------------------------------------------------------------

@njit(cache=True)
def _pass2_rows(indptr, cols, phi_t, phi_sums, prob, alias, seed, iteration, first_row, row_lo,
                row_hi, neg_counts, bulk, residual, token_ptr, token_cols, bulk_ptr, bulk_cols,
                bulk_counts, col_partial, marker, cumulative, free_cols, hits):
    n_cols, n_topics = phi_t.shape
    rng = new_stream()
    for d in range(row_lo, row_hi):
        pos = token_ptr[d]
        slot = bulk_ptr[d]
        if token_ptr[d + 1] == pos and bulk_ptr[d + 1] == slot:
            continue
        seed_block(rng, seed, iteration, first_row + d)
        tag = d + 1
        for idx in range(indptr[d], indptr[d + 1]):
            marker[cols[idx]] = tag
        n_bulk = bulk_ptr[d + 1] - slot
        if n_bulk > 0:  # the row's Neg(d) columns, in order, hold its bulk counts
            m = 0
            for v in range(n_cols):
                if marker[v] != tag:
                    bulk_cols[slot + m] = v
                    bulk_counts[slot + m] = 0
                    m += 1
        for k in range(n_topics):
            n = neg_counts[d, k]
            if n == 0:
                continue
            if bulk[d, k]:  # one multinomial over Neg(d) with weights phi[k, v]
                total = 0.0
                for i in range(n_bulk):
                    w = phi_t[bulk_cols[slot + i], k]
                    cumulative[i] = w
                    total += w
                for i in range(allocate_large_count_nb(rng, n, cumulative[:n_bulk], total,
                                                       free_cols, hits)):
                    c = free_cols[i]
                    bulk_counts[slot + c] += hits[i]
                    col_partial[bulk_cols[slot + c], k] += hits[i]
            elif residual[d, k] >= ALIAS_MIN_ACCEPTANCE * phi_sums[k]:
                start = pos
                for _ in range(n):
                    while True:  # alias draw from phi[k, :], rejecting columns in E(d)
                        u = uniform(rng) * n_cols
                        i = int(u)
                        if i >= n_cols:
                            i = n_cols - 1
                        v = i if u - i < prob[k, i] else alias[k, i]
                        if marker[v] != tag:
                            break
                    token_cols[pos] = v
                    pos += 1
                # the counts added after the draws: the additions, apart from the draws' branches,
                # overlap their cache misses
                for t in range(start, pos):
                    col_partial[token_cols[t], k] += 1
            else:  # most of topic k's mass sits on E(d): invert over Neg(d) explicitly
                m = 0
                acc = 0.0
                for v in range(n_cols):
                    if marker[v] != tag:
                        acc += phi_t[v, k]
                        cumulative[m] = acc
                        free_cols[m] = v
                        m += 1
                for _ in range(n):
                    u = uniform(rng) * acc
                    lo = 0
                    hi = m - 1
                    while lo < hi:
                        mid = (lo + hi) // 2
                        if cumulative[mid] > u:
                            hi = mid
                        else:
                            lo = mid + 1
                    while lo > 0 and cumulative[lo] == cumulative[lo - 1]:
                        lo -= 1  # never land on a zero-weight column
                    v = free_cols[lo]
                    token_cols[pos] = v
                    col_partial[v, k] += 1
                    pos += 1


def _pass2_loop(indptr, cols, phi_t, phi_sums, prob, alias, seed, iteration, first_row, starts,
                ends, neg_counts, bulk, residual, token_ptr, token_cols, bulk_ptr, bulk_cols,
                bulk_counts, col_partials, markers, cumulative, free_cols, hits):
    for ch in prange(starts.size):
        _pass2_rows(indptr, cols, phi_t, phi_sums, prob, alias, seed, iteration, first_row,
                    starts[ch], ends[ch], neg_counts, bulk, residual, token_ptr,
                    token_cols, bulk_ptr, bulk_cols, bulk_counts, col_partials[ch], markers[ch],
                    cumulative[ch], free_cols[ch], hits[ch])


_pass2 = parallel_and_interpreted(_pass2_loop)


def _pass2_plan_loop(indptr, n_cols, neg_counts, residual, phi_sums, bulk, row_tokens,
                     row_bulk, row_steps, row_drawn):
    """Per row, from pass 1's topic totals of ``Neg(d)``: which totals pass 2 splits in bulk
    (``bulk``), the tokens it places one by one (``row_tokens``), the columns of its bulk counts
    (``row_bulk``: ``Neg(d)``'s columns where any total is split in bulk, else 0), its work
    (``row_steps``, for :func:`chunked_calls`: the tokens, the bulk columns per bulk topic and
    once more, a scan of every column per total drawn by inversion, the row's entries) and,
    for the failure check, the totals' sum (``row_drawn``; -1 where one was marked -1)."""
    n_topics = neg_counts.shape[1]
    for d in prange(indptr.size - 1):
        entries = indptr[d + 1] - indptr[d]
        n_free = n_cols - entries
        threshold = max(BULK_MIN, BULK_PER_COLUMN * n_free)
        tokens = 0
        n_bulk = 0
        n_inverted = 0
        drawn = 0.0
        for k in range(n_topics):
            count = neg_counts[d, k]
            drawn = -1.0 if count < 0 or drawn < 0.0 else drawn + count
            in_bulk = count > threshold
            bulk[d, k] = in_bulk
            if in_bulk:
                n_bulk += 1
            else:
                tokens += count
                if count > 0 and residual[d, k] < ALIAS_MIN_ACCEPTANCE * phi_sums[k]:
                    n_inverted += 1
        row_tokens[d] = tokens
        row_bulk[d] = n_free if n_bulk > 0 else 0
        row_steps[d] = tokens + row_bulk[d] * (n_bulk + 1) + n_inverted * n_cols + entries
        row_drawn[d] = drawn


_pass2_plan = parallel_and_serial(_pass2_plan_loop)


@njit(cache=True)
def _scatter_dense(indptr, cols, pos_y, token_ptr, token_cols, bulk_ptr, bulk_cols, bulk_counts,
                   out):
    for d in range(indptr.size - 1):
        for idx in range(indptr[d], indptr[d + 1]):
            out[d, cols[idx]] = pos_y[idx]
        for t in range(token_ptr[d], token_ptr[d + 1]):
            out[d, token_cols[t]] += 1
        for i in range(bulk_ptr[d], bulk_ptr[d + 1]):
            out[d, bulk_cols[i]] += bulk_counts[i]


# ---------------------------------------------------------------------------------------------
# the objects
# ---------------------------------------------------------------------------------------------

def chunk_bounds(indptr: np.ndarray, n_topics: int, chunks: int,
                 row_work: np.ndarray | None = None) -> np.ndarray:
    """Row boundaries of ``chunks`` consecutive row ranges of about equal work.

    A row costs one unit per entry of ``E(d)`` plus ``n_topics`` (its topic totals), or
    ``row_work[d]`` where given (an engine whose rows' work is not that of their entries: the
    known-counts engine's tokens); equal shares keep the threads busy alike when the rows
    differ (long documents, or counts that are mostly signal at a small noise level). The
    boundaries depend on the data only, never on the thread count, and the random streams are
    keyed by row, so they change no draw.
    """
    n_rows = indptr.size - 1
    if row_work is None:
        work = indptr.astype(np.float64) + n_topics * np.arange(n_rows + 1)
    else:
        work = np.concatenate(([0.0], np.cumsum(row_work, dtype=np.float64)))
    targets = work[-1] * np.arange(1, chunks) / chunks
    inner = np.searchsorted(work, targets, side="left")
    return np.concatenate(([0], inner, [n_rows])).astype(np.int64)


def chunked_calls(bounds: np.ndarray, row_steps: np.ndarray) -> list:
    """The kernel calls of a pass over the chunks ``bounds``, about
    :data:`lpp.inference.numerics.CALL_STEPS` of work each, as ``(starts, ends)``: a call runs
    rows ``starts[c]..ends[c] - 1`` of every chunk ``c``.

    Every call takes the same share of every chunk's work, so each call keeps all the threads
    busy (a call made of whole chunks would run one or two of them, on one thread, whenever a
    pass needs more calls than there are threads). A chunk's rows still run in order and add
    into its own partial counts (integers: exact in any split); streams are keyed by row, so
    the split changes no draw.
    """
    cum = np.concatenate(([0.0], np.cumsum(row_steps, dtype=np.float64)))
    n_calls = max(1, math.ceil(cum[-1] / numerics.CALL_STEPS))
    lo, hi = bounds[:-1].astype(np.int64), bounds[1:].astype(np.int64)
    if n_calls == 1:
        return [(lo, hi)]
    shares = np.arange(1, n_calls) / n_calls
    targets = cum[lo][:, None] + (cum[hi] - cum[lo])[:, None] * shares[None, :]
    cuts = np.clip(np.searchsorted(cum, targets, side="left"), lo[:, None], hi[:, None])
    edges = np.maximum.accumulate(np.hstack([lo[:, None], cuts, hi[:, None]]), axis=1)
    return [(np.ascontiguousarray(edges[:, j]), np.ascontiguousarray(edges[:, j + 1]))
            for j in range(n_calls) if np.any(edges[:, j] < edges[:, j + 1])]


class Workspace:
    """Buffers reused from sweep to sweep.

    One chunk of rows per numba thread (at most :func:`lpp.inference.kernels.n_chunks`): every
    chunk adds its rows into its own V x K partial counts, which are zeroed and summed at every
    sweep, so chunks beyond the threads only cost time (the parallel loops hand the threads
    equal shares of the chunks). Chunks change no draw: rows keep their streams and the
    partial counts are integers. :meth:`fit_threads` re-chunks for another thread count; the
    per-chunk tables grow only when it needs more chunks than they hold.
    """

    def __init__(self, indptr, n_cols, n_topics):
        n_rows = indptr.size - 1
        self._indptr = indptr
        self.most_chunks = n_chunks(n_rows, n_cols * n_topics, cell_bytes=4)
        self.prob = np.empty((n_topics, n_cols))
        self.alias = np.empty((n_topics, n_cols), dtype=np.int32)
        self.residual = np.empty((n_rows, n_topics))
        self._tables = ChunkTables()
        self.fit_threads(numba.get_num_threads())

    def fit_threads(self, threads: int) -> None:
        """Chunk bounds for ``threads`` threads, and the per-chunk tables as views of the first
        chunks of the largest ones made so far."""
        n_topics, n_cols = self.prob.shape
        self.threads = threads
        self.chunks = chunks = min(self.most_chunks, threads)
        self.bounds = chunk_bounds(self._indptr, n_topics, chunks)
        take = self._tables.take
        # int32 halves the tables that pass 1 scatters into; a chunk with more tokens than
        # PARTIAL_LIMIT is redrawn into the int64 twin (same streams, same draw)
        self.col_partials = take("col_partials", chunks, (n_cols, n_topics), np.int32)
        self.markers = take("markers", chunks, (n_cols,), np.int64)
        self.cumulative = take("cumulative", chunks, (n_cols,), np.float64)
        self.free_cols = take("free_cols", chunks, (n_cols,), np.int64)
        self.hits = take("hits", chunks, (n_cols,), np.int64)

    def wide_partials(self) -> np.ndarray:
        """The int64 twin of :attr:`col_partials`, made when first needed."""
        return self._tables.take("wide_partials", self.chunks, self.col_partials.shape[1:],
                                 np.int64)


class TopicCountsDraw:
    """A draw of the true counts ``y`` for the sparse topic sampler, made on allocation.

    :meth:`realize` draws ``y`` and its split over topics in one fused pass given the model's
    current factors — the same factors whose rates the dense privacy step would have used.
    Afterwards it holds
    ``y`` compactly: ``pos_y`` (aligned with the layout's entries) and, per row, the columns of
    the tokens on Neg(d) (``token_ptr``, ``token_cols``) and, for the rows whose tokens of some
    topic were split in bulk (:data:`BULK_MIN`), a count per column of Neg(d) (``bulk_ptr``,
    ``bulk_cols``, ``bulk_counts``). :meth:`dense` returns the int64 matrix.
    """

    def __init__(self, layout: SparseLayout, seed: int, iteration: int, buffers=None):
        self.layout, self.seed, self.iteration = layout, seed, iteration
        self._buffers = buffers  # a SparseTopicPrivacy lending its reusable buffers, or None
        self.pos_y = None
        self.token_ptr = None
        self.token_cols = None
        self.bulk = None  # (bulk_ptr, bulk_cols, bulk_counts)
        self._dense = None

    @property
    def shape(self):
        return self.layout.shape

    @property
    def realized(self) -> bool:
        return self.pos_y is not None

    def realize(self, theta: np.ndarray, phi: np.ndarray):
        """Draw ``y`` given the factors; return ``(doc_topic (D x K), topic_word (K x V))``."""
        if self.realized:
            raise RuntimeError("this draw of the counts was already made")
        lay = self.layout
        n_rows, n_cols = lay.shape
        n_topics = theta.shape[1]
        if theta.shape != (n_rows, n_topics) or phi.shape != (n_topics, n_cols):
            raise ValueError(f"factors of shapes {theta.shape}, {phi.shape} do not fit data of "
                             f"shape {lay.shape}")
        ws = (self._buffers.workspace(n_topics) if self._buffers is not None
              else Workspace(lay.indptr, n_cols, n_topics))
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        phi = np.ascontiguousarray(phi, dtype=np.float64)
        phi_t = np.ascontiguousarray(phi.T)
        phi_sums = phi.sum(axis=1)
        small = n_rows * n_cols < SERIAL_BELOW
        draw = self._draw(ws, ws.col_partials, theta, phi, phi_t, phi_sums, small)
        doc_topic = draw[1]
        row_tokens = np.concatenate(([0], np.cumsum(doc_topic.sum(axis=1))))
        tokens_per_chunk = np.diff(row_tokens[ws.bounds])
        partials = ws.col_partials
        if tokens_per_chunk.max(initial=0) > PARTIAL_LIMIT:
            partials = ws.wide_partials()
            draw = self._draw(ws, partials, theta, phi, phi_t, phi_sums, small)
        topic_word = np.empty((n_topics, n_cols), dtype=np.int64)
        sum_partials(partials, topic_word, small)
        self.pos_y, doc_topic, self.token_ptr, self.token_cols, self.bulk = draw
        return doc_topic, topic_word

    def _draw(self, ws, partials, theta, phi, phi_t, phi_sums, small):
        """Passes 1 and 2 into ``partials``, in calls of bounded work;
        ``(pos_y, doc_topic, token_ptr, token_cols, bulk)``."""
        lay = self.layout
        n_rows, n_topics = theta.shape
        n_cols = lay.shape[1]
        pos_y = np.empty(lay.nnz, dtype=np.int64)
        # per row, the sum of its positive entries' counts (-1 where one was marked -1): the
        # check reads D numbers instead of every entry
        row_drawn = np.empty(n_rows)
        neg_counts = np.empty((n_rows, n_topics), dtype=np.int64)
        doc_topic = np.zeros((n_rows, n_topics), dtype=np.int64)
        zero_partials(partials, small)
        ws.markers.fill(0)
        for starts, ends in chunked_calls(ws.bounds, lay.row_steps(n_topics)):
            _pass1[small](lay.indptr, lay.cols, lay.values, lay.alpha_rows, theta, phi_t,
                          phi_sums, derive_seed(self.seed, Tag.PASS1), self.iteration,
                          lay.first_row, starts, ends, pos_y, row_drawn, neg_counts,
                          ws.residual, doc_topic, partials, ws.markers)
        bulk = np.empty((n_rows, n_topics), dtype=np.bool_)
        row_tokens, row_bulk, row_steps = (np.empty(n_rows, dtype=np.int64) for _ in range(3))
        row_neg_drawn = np.empty(n_rows)
        _pass2_plan[small](lay.indptr, n_cols, neg_counts, ws.residual, phi_sums, bulk,
                           row_tokens, row_bulk, row_steps, row_neg_drawn)
        check_counts_drawn(row_drawn, row_neg_drawn)
        token_ptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(row_tokens, out=token_ptr[1:])
        bulk_ptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(row_bulk, out=bulk_ptr[1:])
        token_cols = np.empty(int(token_ptr[-1]), dtype=np.int32)
        bulk_cols = np.empty(int(bulk_ptr[-1]), dtype=np.int32)
        bulk_counts = np.empty(int(bulk_ptr[-1]), dtype=np.int64)
        if token_cols.size or bulk_cols.size:
            _alias_tables[small](phi, phi_sums, ws.prob, ws.alias)
            for starts, ends in chunked_calls(ws.bounds, row_steps):
                _pass2[small](lay.indptr, lay.cols, phi_t, phi_sums, ws.prob, ws.alias,
                              derive_seed(self.seed, Tag.PASS2), self.iteration, lay.first_row,
                              starts, ends, neg_counts, bulk, ws.residual, token_ptr,
                              token_cols, bulk_ptr, bulk_cols, bulk_counts, partials,
                              ws.markers, ws.cumulative, ws.free_cols, ws.hits)
        return pos_y, doc_topic, token_ptr, token_cols, (bulk_ptr, bulk_cols, bulk_counts)

    def tokens(self) -> tuple:
        """``(indptr, cols, pos_y, token_ptr, token_cols, bulk_ptr, bulk_cols, bulk_counts)``:
        the draw's tokens row by row, as
        :func:`lpp.inference.models.topics.reassign.reassign_tokens` takes them."""
        if not self.realized:
            raise RuntimeError("the counts are drawn on allocation; call realize() first")
        lay = self.layout
        return (lay.indptr, lay.cols, self.pos_y, self.token_ptr, self.token_cols, *self.bulk)

    @property
    def n_tokens(self) -> int:
        """Number of Neg(d) tokens (the sum of ``y`` over observed non-positive entries)."""
        return int(self.token_cols.size) + int(self.bulk[2].sum())

    def dense(self) -> np.ndarray:
        """``y`` as an int64 matrix (made once, then cached; do not modify it)."""
        if not self.realized:
            raise RuntimeError("the counts are drawn on allocation; call realize() first")
        if self._dense is None:
            lay = self.layout
            out = np.zeros(lay.shape, dtype=np.int64)
            _scatter_dense(lay.indptr, lay.cols, self.pos_y, self.token_ptr, self.token_cols,
                           *self.bulk, out)
            self._dense = out
        return self._dense


class SparseTopicPrivacy:
    """The collapsed privacy step of the topic model on one data set, in sparse form.

    ``sample(seed, iteration)`` returns a :class:`TopicCountsDraw`, realized (fused with the
    allocation) from the current factors. Holds the data layout and the reusable buffers; the
    dense ``y_tilde`` is not needed after construction.
    """

    name = "collapsed"

    def __init__(self, y_tilde: np.ndarray, noise: NoiseLevels, observed: np.ndarray,
                 first_row: int = 0):
        self.layout = build_layout(y_tilde, observed, noise, first_row)
        self._workspace = None

    def workspace(self, n_topics: int) -> Workspace:
        ws = self._workspace
        if ws is None or ws.prob.shape[0] != n_topics:
            ws = self._workspace = Workspace(self.layout.indptr, self.layout.shape[1], n_topics)
        elif ws.threads != numba.get_num_threads():
            ws.fit_threads(numba.get_num_threads())
        return ws

    def sample(self, seed: int, iteration: int) -> TopicCountsDraw:
        return TopicCountsDraw(self.layout, seed, iteration, self)


class SparseTopicEngine:
    """One sweep of the collapsed privacy step fused with the allocation of a model whose rates
    are ``theta @ phi``; then the model's own latent updates.

    Parameters
    ----------
    y_tilde : ndarray of int64, shape (D, V)
        Privatized counts.
    noise : NoiseLevels
        Their noise levels, constant within rows.
    observed : ndarray of bool, shape (D, V)
        True where an entry carries likelihood.
    """

    name = "sparse"

    @staticmethod
    def applies(model, step, noise) -> bool:
        """Whether the capabilities of ``model`` and ``step`` and the noise layout allow it."""
        return ("row_column_factors" in model.capabilities
                and "exact_conditional" in step.capabilities
                and noise is not None and noise.per_row() is not None)

    @classmethod
    def for_source(cls, source, observed: np.ndarray) -> "SparseTopicEngine":
        """The engine of a :class:`~lpp.inference.count_sources.PrivateCounts` source."""
        return cls(source.y_tilde, source.noise, observed)

    def for_new_data(self, source, observed: np.ndarray):
        """An engine of this kind for another data set of the same shape
        (:meth:`lpp.inference.GibbsSampler.replace_data`)."""
        return self.for_source(source, observed)

    def __init__(self, y_tilde: np.ndarray, noise: NoiseLevels, observed: np.ndarray):
        self.privacy = SparseTopicPrivacy(y_tilde, noise, observed)

    def sweep(self, model, state, observed, privacy_seed: int, model_seed: int, iteration: int):
        """``(new state, draw of y)``: the counts drawn and allocated in one pass, then
        ``model.update_step`` on the allocation totals."""
        draw = self.privacy.sample(privacy_seed, iteration)
        theta, phi = model.row_column_factors(state)
        doc_topic, topic_word = draw.realize(theta, phi)
        stats = {"doc_topic": doc_topic, "topic_word": topic_word}
        if getattr(model, "collapse_theta", False):
            state, stats = model.reassign_step(state, draw.tokens(), observed, model_seed,
                                               iteration, draw.layout.first_row,
                                               *self._reassign_plan(doc_topic))
        return model.update_step(state, stats, observed, model_seed, iteration), draw

    def _reassign_plan(self, doc_topic):
        """Kernel calls and partial counts for the reassignment of ``doc_topic``'s tokens."""
        n_topics = doc_topic.shape[1]
        ws = self.privacy.workspace(n_topics)
        row_tokens = doc_topic.sum(axis=1)
        per_chunk = np.diff(np.concatenate(([0], np.cumsum(row_tokens)))[ws.bounds])
        wide = per_chunk.max(initial=0) > PARTIAL_LIMIT
        calls = chunked_calls(ws.bounds, row_tokens * (1.0 + n_topics / 8.0) + 1.0)
        return calls, ws.wide_partials() if wide else ws.col_partials
