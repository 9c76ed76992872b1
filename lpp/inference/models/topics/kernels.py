"""Compiled kernels of the topic model: the multinomial split of a count over topics with weights
``theta[d, k] * phi[k, v]`` (the dense sweep's allocation, whose arithmetic the fused engines
of :mod:`lpp.inference.engines` write out alike), and the expected allocation of ``init="em"``.

Streams, chunks and layout follow :mod:`lpp.inference.kernels` (the kernels every model
shares).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from lpp.randomness import new_stream, seed_block, uniform
from lpp.distributions import FEW_TRIALS, allocate_large_count_nb, rescale_log_weights_nb
from lpp.inference.kernels import (
    _UNDERFLOW,
    MAX_CHUNKS,
    allocation_steps,
    chunk_partials,
    n_chunks,
    rows_per_chunk,
)
from lpp.inference.numerics import (
    SERIAL_BELOW,
    call_ranges,
    parallel_and_interpreted,
    parallel_and_serial,
)
from lpp.inference.sparse_counts import SparseCounts


# ---------------------------------------------------------------------------------------------
# one entry: its topic weights and their split
# ---------------------------------------------------------------------------------------------

@njit(cache=True, inline="always")
def weights_total(weights) -> float:
    """The sum of an entry's topic weights, in a fixed order, the same on every CPU: eight
    running sums over the topics k = j (mod 8) in order, added pairwise
    ``((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))``, then the last ``K mod 8`` topics in
    order. Eight independent sums keep the loop fast (one running sum is a chain of K dependent
    additions) without letting the compiler reassociate or fuse into FMAs, which it would do
    differently for each SIMD width (and the last digit of the sum, so, rarely, a draw, would
    depend on the CPU).

    Every topic kernel sums through it: the dense kernel (:func:`topic_entry_weights`), the
    known-counts engine's and the sparse engine's pass 1. Inlined by numba
    (``inline="always"``): it takes one array, the kernel's own scratch weights, and the
    kernels compile to the same machine code as with the loop written out (``bench/README.md``,
    *Pass 1 written out*; a helper that takes more arrays costs atomic reference-count updates
    of each at every call).
    """
    n_topics = weights.size
    whole = n_topics - n_topics % 8
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    for k in range(0, whole, 8):
        s0 += weights[k]
        s1 += weights[k + 1]
        s2 += weights[k + 2]
        s3 += weights[k + 3]
        s4 += weights[k + 4]
        s5 += weights[k + 5]
        s6 += weights[k + 6]
        s7 += weights[k + 7]
    total = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
    for k in range(whole, n_topics):
        total += weights[k]
    return total


@njit(cache=True, inline="always")
def topic_entry_weights(theta, phi_t, d, v, weights) -> float:
    """The topic weights ``theta[d, k] * phi[k, v]`` of entry (d, v) into ``weights`` and their
    sum (:func:`weights_total`); log-weights rescaled where the products underflow.

    The dense allocation kernel's arithmetic, which the known-counts engine's kernel forms
    alike (:func:`lpp.inference.engines.known_topics._allocate_rows`; the tests hold the two
    chains equal bit for bit).
    """
    for k in range(weights.shape[0]):
        weights[k] = theta[d, k] * phi_t[v, k]
    total = weights_total(weights)
    if not total > _UNDERFLOW:
        total = log_topic_weights(theta, phi_t, d, v, weights)
    return total


@njit(cache=True)
def log_topic_weights(theta, phi_t, d, v, weights) -> float:
    """Entry (d, v)'s weights and their sum where the products underflowed (seldom): the
    log-weights ``log theta[d, k] + log phi[k, v]`` rescaled by
    :func:`lpp.distributions.rescale_log_weights_nb`. A call, out of the kernels' hot path."""
    for k in range(weights.size):
        weights[k] = np.log(theta[d, k]) + np.log(phi_t[v, k])
    return rescale_log_weights_nb(weights)


@njit(cache=True)
def row_topic_order(theta, d):
    """Row d's topics by decreasing ``theta[d, k]``, ties in index order.

    The topic kernels (this module's, the fused engines') split a count of up to
    :data:`lpp.distributions.FEW_TRIALS` tokens by one categorical draw per token, scanning the
    running sums of the weights in this order: a document's few heavy topics come first, so a
    scan stops after about 6 of 50 steps on text instead of 25. Independent draws add up to the
    multinomial, whatever the order. The loop is written out in each kernel: as a call, even
    an inlined one, it cost more per entry (``bench/README.md``, *Measured and not adopted*).
    """
    return np.argsort(-theta[d], kind="mergesort")


#: topics a row's order gains at a time in :func:`extend_topic_order` (one pass over the topics)
ORDER_BATCH = 16
#: the fused engines form this many running sums of an allocated entry's weights at once (in
#: the row's topic order, so at most ORDER_BATCH) and place a token among them without a
#: branch per topic; a token beyond them goes on in blocks of as many
EAGER_SUMS = 8


@njit(cache=True)
def extend_topic_order(theta, d, placed, n_ordered, order):
    """Place row d's next :data:`ORDER_BATCH` topics (fewer at the end) at
    ``order[n_ordered:]``, in one pass over the topics not yet placed: by decreasing
    ``theta[d, k]``, the lower index first among equals, so ``order`` grows as a prefix of
    :func:`row_topic_order`'s permutation (for a row without NaN; a row with a NaN never scans
    its topics: its weights' sum is NaN). Returns the new number placed.

    The kernels that write the token-by-token split out (the fused engines') start a row with
    ``placed[:] = False`` and ``n_ordered = 0`` and call this when a scan reaches the end of
    the topics placed so far: a row's scans seldom reach beyond its first few topics.
    """
    n_topics = placed.size
    end = min(n_ordered + ORDER_BATCH, n_topics)
    filled = n_ordered
    for k in range(n_topics):  # in index order: an equal value goes after those before it
        if placed[k]:
            continue
        x = theta[d, k]
        if filled < end:
            pos = filled
            filled += 1
        elif x > theta[d, order[end - 1]]:
            pos = end - 1
        else:
            continue
        while pos > n_ordered and x > theta[d, order[pos - 1]]:
            order[pos] = order[pos - 1]
            pos -= 1
        order[pos] = k
    for p in range(n_ordered, end):
        placed[order[p]] = True
    return end


@njit(cache=True)
def allocate_large_entry_nb(rng, count, d, v, weights, total, cells, hits, row_topic, col_topic):
    """A count above :data:`lpp.distributions.FEW_TRIALS` split as :func:`allocate_entry_nb`
    splits it (by :func:`lpp.distributions.allocate_large_count_nb`): the out-of-line path of the
    kernels that write the split of small counts out."""
    for i in range(allocate_large_count_nb(rng, count, weights, total, cells, hits)):
        k = cells[i]
        row_topic[d, k] += hits[i]
        col_topic[v, k] += hits[i]


@njit(cache=True, inline="always")
def allocate_entry_nb(rng, count, d, v, n_topics, weights, total, order, cells, hits, row_topic,
                      col_topic):
    """Allocate the ``count`` tokens of entry ``(d, v)`` over topics in proportion to
    ``weights`` (their sum ``total``), adding them to ``row_topic[d]`` and ``col_topic[v]``.

    The allocation of the topic kernels (the dense kernel calls it; the fused engines write the
    same draws out, ``bench/README.md``, *Pass 1 written out*), so that they draw the same
    numbers from the same stream: up to
    :data:`lpp.distributions.FEW_TRIALS` tokens by one categorical draw each, scanning the
    topics in ``order`` (:func:`row_topic_order`); more by
    :func:`lpp.distributions.allocate_large_count_nb` (the draws of
    :func:`lpp.distributions.allocate_count_nb`). Inlined into its callers.
    """
    if count <= FEW_TRIALS:  # a categorical draw per token (see row_topic_order)
        if not total > 0.0:
            return
        for _ in range(count):
            u = uniform(rng) * total
            acc = 0.0
            for p in range(n_topics):
                k = order[p]
                acc += weights[k]
                if u < acc:
                    break
            while weights[k] <= 0.0:  # u rounded past the sum onto zero-weight topics
                p -= 1
                k = order[p]
            row_topic[d, k] += 1
            col_topic[v, k] += 1
        return
    for i in range(allocate_large_count_nb(rng, count, weights, total, cells, hits)):
        k = cells[i]
        row_topic[d, k] += hits[i]
        col_topic[v, k] += hits[i]


# ---------------------------------------------------------------------------------------------
# the expectation step of init="em"
# ---------------------------------------------------------------------------------------------

# error_model="numpy": a rate that underflowed to 0 gives y / 0 = inf, as numpy's division does
@njit(cache=True, error_model="numpy")
def _expected_row(y, observed, theta, phi, phi_t, d, start, cols, ratios, doc_topic):
    n_comp, n_cols = phi.shape
    end = start
    for v in range(n_cols):
        if y[d, v] > 0 and observed[d, v]:
            cols[end] = v
            ratios[end] = 0.0
            end += 1
    for k in range(n_comp):  # each rate adds over k in order, as product_kernel does
        weight = theta[d, k]
        for j in range(start, end):
            ratios[j] += weight * phi[k, cols[j]]
    for j in range(start, end):
        ratios[j] = y[d, cols[j]] / ratios[j]
    for k in range(n_comp):
        doc_topic[d, k] = 0.0
    for j in range(start, end):  # over the row's entries in column order
        ratio = ratios[j]
        v = cols[j]
        for k in range(n_comp):
            doc_topic[d, k] += ratio * phi_t[v, k]
    for k in range(n_comp):
        doc_topic[d, k] *= theta[d, k]


@njit(cache=True)
def _expected_columns(theta, lo, offsets, cols, ratios, v_lo, v_hi, topic_word_t):
    n_comp = theta.shape[1]
    for i in range(offsets.size - 1):  # rows in order: each entry is a running sum over rows
        a, b = offsets[i], offsets[i + 1]
        j = a + np.searchsorted(cols[a:b], v_lo)
        while j < b and cols[j] < v_hi:
            v = cols[j]
            ratio = ratios[j]
            for k in range(n_comp):
                topic_word_t[v, k] += theta[lo + i, k] * ratio
            j += 1


def _expected_loop(y, observed, theta, phi, phi_t, lo, hi, n_col_chunks, doc_topic,
                   topic_word_t):
    n_rows, n_cols = hi - lo, y.shape[1]
    offsets = np.zeros(n_rows + 1, dtype=np.int64)
    for i in prange(n_rows):
        n = 0
        for v in range(n_cols):
            if y[lo + i, v] > 0 and observed[lo + i, v]:
                n += 1
        offsets[i + 1] = n
    for i in range(n_rows):
        offsets[i + 1] += offsets[i]
    cols = np.empty(offsets[n_rows], dtype=np.int64)
    ratios = np.empty(offsets[n_rows])
    for i in prange(n_rows):
        _expected_row(y, observed, theta, phi, phi_t, lo + i, offsets[i], cols, ratios,
                      doc_topic)
    per_chunk = (n_cols + n_col_chunks - 1) // n_col_chunks
    for ch in prange(n_col_chunks):
        _expected_columns(theta, lo, offsets, cols, ratios, ch * per_chunk,
                          min(n_cols, (ch + 1) * per_chunk), topic_word_t)


_expected = parallel_and_serial(_expected_loop)
#: rows per call of the expectation kernel: bounds its scratch (16 bytes per positive entry)
EXPECTATION_ROWS = 512


def expected_allocation(theta, phi, y, observed, topic_word):
    """The expected document-topic counts of ``y`` (rows x K); adds the expected topic-word
    counts divided by ``phi`` into ``topic_word`` (K x V).

    With ``ratio = y / (theta @ phi)`` on observed positive entries (0 elsewhere), the document
    -topic counts are ``theta * (ratio @ phi.T)`` and the topic-word sum is ``theta.T @ ratio``,
    every product in a fixed order: rates over k in order (as :func:`product_kernel`),
    ``ratio @ phi.T`` over the row's columns in order, and ``topic_word`` as a running sum over
    the rows in order. So the result does not depend on the CPU, the BLAS, the thread count or
    the arrays' layout, and a run over rows ``[lo, hi)`` given the running ``topic_word`` of the
    rows before ``lo`` continues the whole matrix's sum exactly, wherever ``lo`` is (the
    distributed chain passes the running sum from one worker's rows to the next). Zero and
    unobserved entries are skipped (they add exact zeros), so the cost is O(positive entries
    x K) plus one pass over ``y``. ``y`` may be
    :class:`~lpp.inference.sparse_counts.SparseCounts` (made dense a few rows at a time).
    """
    theta = np.ascontiguousarray(theta, dtype=np.float64)
    phi = np.ascontiguousarray(phi, dtype=np.float64)
    phi_t = np.ascontiguousarray(phi.T)
    n_rows, n_cols = y.shape
    doc_topic = np.empty_like(theta)
    topic_word_t = np.ascontiguousarray(topic_word.T)
    if isinstance(y, SparseCounts):
        # a block of rows made dense at a time: rows are independent and topic_word a running
        # sum over them in order, so the blocks give the whole matrix's result
        for lo, hi in y.row_blocks():
            block_observed = (np.ones((hi - lo, n_cols), dtype=np.bool_)
                              if observed.strides == (0, 0) else observed[lo:hi])
            _expected[(hi - lo) * n_cols < SERIAL_BELOW](
                y.rows(lo, hi), block_observed, theta[lo:hi], phi, phi_t, 0, hi - lo,
                min(n_cols, MAX_CHUNKS), doc_topic[lo:hi], topic_word_t)
        topic_word[...] = topic_word_t.T
        return doc_topic
    for lo in range(0, n_rows, EXPECTATION_ROWS):
        hi = min(lo + EXPECTATION_ROWS, n_rows)
        _expected[(hi - lo) * n_cols < SERIAL_BELOW](
            y, observed, theta, phi, phi_t, lo, hi, min(n_cols, MAX_CHUNKS), doc_topic,
            topic_word_t)
    topic_word[...] = topic_word_t.T
    return doc_topic


@njit(cache=True)
def add_rows_at(targets, sources, values, out):
    """``out[targets[i]] += values[sources[i]]`` for every i, in index order (serial: the float
    sums then do not depend on the thread count)."""
    for i in range(targets.size):
        t = targets[i]
        s = sources[i]
        for c in range(values.shape[1]):
            out[t, c] += values[s, c]


# ---------------------------------------------------------------------------------------------
# matrix allocation
# ---------------------------------------------------------------------------------------------

@njit(cache=True)
def _allocate_matrix_rows(y, observed, theta, phi_t, seed, iteration, first_row, lo, hi,
                          row_totals, col_partial):
    n_cols = y.shape[1]
    n_comp = theta.shape[1]
    weights = np.empty(n_comp)
    cells = np.empty(n_comp, dtype=np.int64)
    hits = np.empty(n_comp, dtype=np.int64)
    order = np.empty(n_comp, dtype=np.int64)
    placed = np.empty(n_comp, dtype=np.bool_)
    rng = new_stream()
    for d in range(lo, hi):
        seed_block(rng, seed, iteration, first_row + d)
        # row_topic_order's permutation, by the fused engines' helper (sorting would compile
        # numba's argsort, seconds of a first fit, for no other kernel)
        placed[:] = False
        n_ordered = np.int64(0)
        while n_ordered < n_comp:
            n_ordered = extend_topic_order(theta, d, placed, n_ordered, order)
        for v in range(n_cols):
            count = y[d, v]
            if count == 0 or not observed[d, v]:
                continue
            total = topic_entry_weights(theta, phi_t, d, v, weights)
            allocate_entry_nb(rng, count, d, v, n_comp, weights, total, order, cells, hits,
                              row_totals, col_partial)


def _allocate_matrix_loop(y, observed, theta, phi_t, seed, iteration, first_row, per_chunk,
                          row_totals, col_partials):
    n_rows = y.shape[0]
    for ch in prange(col_partials.shape[0]):
        _allocate_matrix_rows(y, observed, theta, phi_t, seed, iteration, first_row,
                              ch * per_chunk,
                              min(n_rows, (ch + 1) * per_chunk), row_totals, col_partials[ch])


_allocate_matrix = parallel_and_interpreted(_allocate_matrix_loop)


def allocate_matrix_kernel(y, observed, theta, phi_t, seed, iteration, first_row=0):
    """Split each count ``y[d, v]`` over components with weights ``theta[d, k] * phi_t[v, k]``.

    Returns the row totals (D x K) and the column totals (V x K). Unobserved entries and
    zeros are skipped. Row d draws from the stream of global row ``first_row + d``, so a block
    of rows allocates exactly as those rows of the whole matrix do.
    """
    n_rows, n_cols = y.shape
    n_comp = theta.shape[1]
    kernel = _allocate_matrix[y.size < SERIAL_BELOW]
    row_totals = np.zeros((n_rows, n_comp), dtype=np.int64)
    col_totals = np.zeros((n_cols, n_comp), dtype=np.int64)
    for lo, hi in call_ranges(allocation_steps(y, n_comp)):
        chunks = n_chunks(hi - lo, n_cols * n_comp)
        partials = chunk_partials(chunks, n_cols, n_comp)
        kernel(y[lo:hi], observed[lo:hi], theta[lo:hi], phi_t, seed, iteration,
               int(first_row) + lo, rows_per_chunk(hi - lo, chunks), row_totals[lo:hi], partials)
        col_totals += partials.sum(axis=0)
    return row_totals, col_totals
