"""Compiled kernels of the built-in models: allocation of counts to components, Gamma updates.

Every allocation draws through :func:`lpp.distributions.allocate_count_nb` (the one
multinomial kernel, O(K) for large counts; the topic kernels draw counts up to
:data:`lpp.distributions.FEW_TRIALS` token by token, see :func:`row_topic_order`); the Gamma draws through
:func:`lpp.distributions.gamma_rate_nb`.

Random streams are keyed by ``(seed, iteration, row)`` (the Gamma updates: by a fixed block of
rows): every kernel reseeds at the top of each row or block it processes, so draws do not
depend on how rows are spread over threads. Count totals
that several rows add into (e.g. topic-word counts) are accumulated per *chunk* of rows and
summed afterwards; they are integers, so the sum is exact in any order.

Layout: each parallel kernel is a thin ``prange`` loop over chunks that calls a serial
``@njit`` function for one chunk — numba compiles that pattern several times faster than a
``prange`` loop with the whole body inlined. The loop is compiled parallel, and small problems
run it in the interpreter instead (``kernel[is_small]`` picks one;
:func:`lpp.inference.numerics.parallel_and_interpreted`): the same calls of the chunk
function, serially, without compiling a serial copy of the loop. Where the work of a
kernel grows with the counts (the allocations) or can reach seconds, it runs over consecutive
row ranges of about :data:`lpp.inference.numerics.CALL_STEPS` steps in separate calls, so
that Ctrl-C is handled between them; streams keyed by row and integer totals make the split
invisible in the results.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from lpp.randomness import new_stream, seed_block, uniform
from lpp.distributions import (
    FEW_TRIALS,
    LARGE_COUNT,
    allocate_count_nb,
    allocate_large_count_nb,
    gamma_rate_nb,
    rescale_log_weights_nb,
)
from lpp.distributions._gamma_sampler import gamma_rate_below_one_nb, marsaglia_tsang_constants
from lpp.inference.numerics import (
    CALL_STEPS,
    SERIAL_BELOW,
    call_ranges,
    parallel_and_interpreted,
    parallel_and_serial,
)
from lpp.inference.sparse_counts import SparseCounts

#: memory budget (bytes) of the per-chunk partial count arrays of one allocation kernel
_PARTIAL_BUDGET = 1 << 26
#: most row chunks (each with its own partial counts) an allocation kernel splits its rows into
MAX_CHUNKS = 32
#: below this total weight the products of factors are recomputed in log space (they may have
#: underflowed: factors are floored at 2.2e-308, their products are not)
_UNDERFLOW = 1e-280


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


def n_chunks(n_rows: int, partial_cells: int, cell_bytes: int = 8) -> int:
    """Number of row chunks for a kernel whose per-chunk partial counts have ``partial_cells``
    cells of ``cell_bytes`` each (int64 by default; the fused engines' are int32): at most
    :data:`MAX_CHUNKS`, and together within a fixed memory budget.

    Depends on the problem size only (never on the thread count).
    """
    by_memory = max(1, _PARTIAL_BUDGET // max(1, cell_bytes * partial_cells))
    return int(max(1, min(n_rows, MAX_CHUNKS, by_memory)))


def chunk_partials(chunks: int, *shape: int) -> np.ndarray:
    return np.zeros((chunks,) + shape, dtype=np.int64)


class ChunkTables:
    """Per-chunk scratch tables that only grow, shared by every chunk count a chain uses.

    A chain whose numba thread count changes between sweeps re-chunks its rows; its per-chunk
    tables (partial counts, markers) are then views of the first chunks of the largest table
    made so far under that name, so taking turns between thread counts allocates nothing.
    A table is made again (zeroed) only when more chunks, another cell shape or another dtype
    is asked for. Callers that need zeros fill their view: a view keeps what the last sweep
    wrote.
    """

    def __init__(self):
        self._largest = {}

    def take(self, name: str, chunks: int, cell_shape: tuple, dtype) -> np.ndarray:
        """``(chunks, *cell_shape)`` view of the table ``name``."""
        cell_shape = tuple(int(n) for n in cell_shape)
        table = self._largest.get(name)
        if (table is None or table.shape[0] < chunks or table.shape[1:] != cell_shape
                or table.dtype != np.dtype(dtype)):
            table = self._largest[name] = np.zeros((chunks,) + cell_shape, dtype=dtype)
        return table[:chunks]


def rows_per_chunk(n_rows: int, chunks: int) -> int:
    return (n_rows + chunks - 1) // chunks


# ---------------------------------------------------------------------------------------------
# rates of row/column factors
# ---------------------------------------------------------------------------------------------

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


@njit(cache=True)
def _product_rows(left, right, lo, hi, out):
    n_inner, n_cols = right.shape
    for d in range(lo, hi):
        row = out[d]
        for v in range(n_cols):
            row[v] = 0.0
        for k in range(n_inner):
            weight = left[d, k]
            for v in range(n_cols):  # vectorised across v; each entry adds over k in order
                row[v] += weight * right[k, v]


def _product_loop(left, right, rows_per_chunk, out):
    n_chunks = (left.shape[0] + rows_per_chunk - 1) // rows_per_chunk
    for ch in prange(n_chunks):
        _product_rows(left, right, ch * rows_per_chunk,
                      min((ch + 1) * rows_per_chunk, left.shape[0]), out)


_product = parallel_and_interpreted(_product_loop)
_PRODUCT_ROWS = 16
#: multiply-adds of the product per step of work (they are vectorised)
_PRODUCT_VECTOR = 8


def product_kernel(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``left @ right`` with every entry summed over the inner index in order.

    Unlike BLAS, whose rounding depends on the thread count and on where a row falls in its
    blocking, entry ``[d, v]`` depends only on row d of ``left`` and ``right``: the same on
    any number of threads, and the same for a block of rows as for the whole matrix (the
    distributed sweep computes the rates of its row blocks on separate machines).
    """
    left = np.ascontiguousarray(left, dtype=np.float64)
    right = np.ascontiguousarray(right, dtype=np.float64)
    out = np.empty((left.shape[0], right.shape[1]))
    small = out.size < SERIAL_BELOW
    row_steps = right.size / _PRODUCT_VECTOR
    for lo, hi in call_ranges(np.full(left.shape[0], row_steps)):
        # serially, one chunk of all the rows: one call of the interpreted twin
        _product[small](left[lo:hi], right, max(1, hi - lo) if small else _PRODUCT_ROWS,
                        out[lo:hi])
    return out


# ---------------------------------------------------------------------------------------------
# topics: the expectation step of init="em"
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


# ---------------------------------------------------------------------------------------------
# Gamma draws
# ---------------------------------------------------------------------------------------------

#: draws per random stream of the Gamma updates, at least: short rows share a stream in fixed
#: blocks of rows (set by the shape alone, so the draws do not depend on the threads)
_GAMMA_BLOCK_DRAWS = 2048


def gamma_rows_per_block(n_rows: int, n_cols: int) -> int:
    """Rows per random stream of :func:`gamma_matrix_kernel` (set by the shape alone)."""
    return int(min(max(1, n_rows), max(1, -(-_GAMMA_BLOCK_DRAWS // max(1, n_cols)))))


@njit(cache=True)
def _gamma_block(counts, a0, rate, seed, iteration, block, rows_per_block, out):
    rng = new_stream()
    seed_block(rng, seed, iteration, block)
    # most cells of sparse counts are 0, of shape a0: below 1, its constants are formed once
    small = 0.0 < a0 < 1.0
    d_small, c_small = marsaglia_tsang_constants(a0 + 1.0) if small else (0.0, 0.0)
    for r in range(block * rows_per_block, min((block + 1) * rows_per_block, counts.shape[0])):
        for c in range(counts.shape[1]):
            if small and counts[r, c] == 0:
                out[r, c] = gamma_rate_below_one_nb(rng, a0, d_small, c_small, rate[r, c])
            else:
                out[r, c] = gamma_rate_nb(rng, a0 + counts[r, c], rate[r, c])


def _gamma_matrix_loop(counts, a0, rate, seed, iteration, rows_per_block, out):
    n_blocks = (counts.shape[0] + rows_per_block - 1) // rows_per_block
    for b in prange(n_blocks):
        _gamma_block(counts, a0, rate, seed, iteration, b, rows_per_block, out)


_gamma_matrix = parallel_and_interpreted(_gamma_matrix_loop)


def gamma_matrix_kernel(counts, a0, rate, seed, iteration):
    """``out[r, c] ~ Gamma(a0 + counts[r, c], rate[r, c])`` (shape, rate).

    One random stream per block of :func:`gamma_rows_per_block` consecutive rows.
    """
    out = np.empty(counts.shape)
    rows_per_block = gamma_rows_per_block(*counts.shape)
    _gamma_matrix[counts.size < SERIAL_BELOW](counts, float(a0), rate, seed, iteration,
                                              rows_per_block, out)
    return out


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
# topics: matrix allocation
# ---------------------------------------------------------------------------------------------

def allocation_steps(y: np.ndarray, n_cells: int) -> np.ndarray:
    """Steps of allocating each leading index's counts (a trial each up to ``LARGE_COUNT``, then
    O(cells)), for :func:`lpp.inference.numerics.call_ranges`; a cheap uniform bound when the
    whole array fits one call."""
    rows = y.reshape(y.shape[0], -1)
    entry_steps = rows.shape[1] * (1.0 + n_cells / 16.0)
    if float(y.sum(dtype=np.float64)) + y.shape[0] * entry_steps <= CALL_STEPS:
        return np.full(y.shape[0], entry_steps)
    return np.minimum(rows, LARGE_COUNT + n_cells).sum(axis=1, dtype=np.float64) + entry_steps

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


# ---------------------------------------------------------------------------------------------
# communities: block allocation and the membership scan
# ---------------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------------
# CP: 3-way allocation
# ---------------------------------------------------------------------------------------------

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


#: columns per block of :func:`sum_partials`: a block's sums (128 x K int64, 50 kB at K = 50)
#: stay in cache while every chunk's rows of it are added, and are written out transposed
SUM_COLUMNS = 128


def _sum_partials_loop(partials, out_t):
    n_chunks, n_cols, n_topics = partials.shape
    for b in prange((n_cols + SUM_COLUMNS - 1) // SUM_COLUMNS):
        lo = b * SUM_COLUMNS
        hi = min(lo + SUM_COLUMNS, n_cols)
        block = np.empty((hi - lo, n_topics), dtype=np.int64)
        for v in range(lo, hi):
            for k in range(n_topics):
                block[v - lo, k] = partials[0, v, k]
        for c in range(1, n_chunks):
            for v in range(lo, hi):
                for k in range(n_topics):
                    block[v - lo, k] += partials[c, v, k]
        for k in range(n_topics):
            for v in range(lo, hi):
                out_t[k, v] = block[v - lo, k]


def _zero_partials_loop(partials):
    for c in prange(partials.shape[0]):
        partials[c] = 0


_sum_partials = njit(parallel=True, cache=True)(_sum_partials_loop)
_zero_partials = parallel_and_interpreted(_zero_partials_loop)


def sum_partials(partials: np.ndarray, out_t: np.ndarray, small: bool = False) -> None:
    """``out_t[k, v] = sum over chunks of partials[c, v, k]`` (integers: exact in any order),
    in parallel over blocks of columns (serially where ``small``): its work grows with the
    chunks, that is with the threads, and on one thread it would grow into a sweep's serial
    part. Small ones are summed by numpy (integers: the same sums)."""
    if small:
        np.sum(partials, axis=0, dtype=np.int64, out=out_t.T)
    else:
        _sum_partials(partials, out_t)


def zero_partials(partials: np.ndarray, small: bool = False) -> None:
    """Zero every chunk's partial counts, each chunk on its own thread (serially where
    ``small``)."""
    _zero_partials[small](partials)
