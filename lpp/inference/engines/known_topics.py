"""The topic model's allocation of counts that are known, visiting only the non-zero entries.

(docs/design.md, "The known-counts engine".) When the counts of every sweep are the same known
array — the true counts of the non-private chain, or ``max(y_tilde, 0)`` of the naive method —
a sweep allocates each observed non-zero count over topics,
``(y[d, v, k])_k ~ Mult(y[d, v], theta[d, :] * phi[:, v])``, and draws the latents from their
Gamma conditionals. Zeros contribute nothing to the allocation, and the Gamma rates need only
the factors' row and column sums, less the held-out entries' terms (the model's own
:meth:`~lpp.inference.TopicModel.update_step` forms them). The non-zero entries are laid out
once, row by row (CSR), so a sweep costs ``O(nnz K + (D + V) K)`` instead of the dense path's
``O(D V)`` scan plus ``O(nnz K)``.

Random streams and arithmetic are those of the dense path (:meth:`TopicModel.allocate` ->
:func:`lpp.inference.models.topics.kernels.allocate_matrix_kernel`, then ``update_step``): row d
draws from the stream ``(seed, iteration, row)`` of the allocation seed, visits its non-zero
entries in column order, and sums an entry's weights and allocates it in the same order. The
chain is therefore bit-identical to the dense sweep, and to itself for any number of numba
threads (topic-word totals are summed per chunk of rows in integers).

What a sweep costs (``python -m bench.lda``: the Enron counts, 1000 x 1000, 139,000 tokens in
64,000 non-zero entries, one thread): per entry its K products and their sum; per token a
uniform and a scan of the running sums in the row's topic order (1.5-2.5 topics on average);
then the Gamma draws of ``theta`` and ``phi`` (``(D + V) K`` of them). The kernel sums an
entry's weights through the topic kernels' shared
:func:`~lpp.inference.models.topics.kernels.weights_total`, writes the dense kernel's split out (as a helper it took six arrays, whose reference counts
numba updates atomically at every token), puts the row's topics in order only as far as its
tokens' scans reach, forms an entry's running sums in blocks of
``EAGER_SUMS`` (a token's place within a block counted without a branch per topic; a block
formed only when a token lies beyond the ones before it), and adds into one partial count
table per thread.

:class:`KnownCountsTopicEngine` applies when the model declares ``"row_column_factors"`` and
the count source declares ``"known_counts"`` (the naive privacy step; the true counts of a
non-private chain).
"""
from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from lpp.inference.engines.prefetch import prefetch_row
from lpp.randomness import Tag, derive_seed, new_stream, seed_block, uniform
from lpp.distributions import FEW_TRIALS, LARGE_COUNT
from lpp.inference.numerics import SERIAL_BELOW, parallel_and_interpreted
from lpp.inference.sparse_counts import SparseCounts
from lpp.inference.engines.sparse_topics import (
    PARTIAL_LIMIT,
    chunk_bounds,
    chunked_calls,
)
from lpp.inference.kernels import _UNDERFLOW, ChunkTables, n_chunks, sum_partials, zero_partials
from lpp.inference.models.topics.kernels import (
    EAGER_SUMS,
    allocate_large_entry_nb,
    extend_topic_order,
    log_topic_weights,
    weights_total,
)

#: rows per layout-building block (bounds the temporary memory of :class:`KnownCountsLayout`)
_LAYOUT_ROWS = 256
#: hint the table rows of the entry this many places ahead (as in the sparse collapsed engine)
_PREFETCH_AHEAD = 12


class KnownCountsLayout:
    """The observed non-zero counts, row by row (CSR): ``indptr`` (D + 1, int64), ``cols``
    (int32), ``values`` (int32 when the counts fit, else int64). Built once per data set."""

    def __init__(self, counts, observed: np.ndarray):
        n_rows, n_cols = counts.shape
        self.shape = (n_rows, n_cols)
        if isinstance(counts, SparseCounts):
            self._from_sparse(counts, observed)
        else:
            self._from_dense(counts, observed)
        # total counts per row: whether int32 partial counts can hold a chunk's allocation
        self.row_counts = _row_sums(self.values.astype(np.int64), self.indptr)
        # trials per row (a count up to LARGE_COUNT each): two passes over every entry, made
        # once rather than at each new plan
        self._row_trials = _row_sums(np.minimum(self.values, LARGE_COUNT).astype(np.float64),
                                     self.indptr)

    def _from_dense(self, counts: np.ndarray, observed: np.ndarray) -> None:
        n_rows = counts.shape[0]
        big = counts.size and int(counts.max()) >= 2**31 - 1
        value_type = np.int64 if big else np.int32
        per_row, cols, values = [], [], []
        for lo in range(0, n_rows, _LAYOUT_ROWS):
            part = counts[lo:lo + _LAYOUT_ROWS]
            keep = (part != 0) & observed[lo:lo + _LAYOUT_ROWS]
            per_row.append(keep.sum(axis=1))
            cols.append(np.nonzero(keep)[1].astype(np.int32))
            values.append(part[keep].astype(value_type))
        self.indptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(np.concatenate(per_row), out=self.indptr[1:])
        self.cols = np.concatenate(cols) if cols else np.empty(0, np.int32)
        self.values = np.concatenate(values) if values else np.empty(0, value_type)

    def _from_sparse(self, counts: SparseCounts, observed: np.ndarray) -> None:
        """The same layout read off the CSR entries (no zeros, columns sorted), less the
        unobserved ones: never a D x V array."""
        big = counts.nnz and int(counts.data.max()) >= 2**31 - 1
        value_type = np.int64 if big else np.int32
        indptr, cols, values = counts.indptr, counts.indices, counts.data
        if observed.strides != (0, 0):  # a mask: its entries at the counts' places
            rows = np.repeat(np.arange(counts.shape[0]), np.diff(indptr))
            keep = observed[rows, cols]
            indptr = np.concatenate(([0], np.cumsum(keep)))[indptr]
            cols, values = cols[keep], values[keep]
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        self.cols = np.ascontiguousarray(cols, dtype=np.int32)
        self.values = values.astype(value_type)

    def row_steps(self, n_topics: int) -> np.ndarray:
        """Work per row (a K-term weight sum per entry, a trial per count up to
        ``LARGE_COUNT``), for
        :func:`~lpp.inference.engines.sparse_topics.chunked_calls`."""
        return self._row_trials + np.diff(self.indptr) * (1.0 + n_topics / 16.0) + 1.0

    @property
    def nnz(self) -> int:
        return int(self.cols.size)


def _row_sums(values: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """Sum of ``values`` over each row of a CSR layout (0 for an empty row)."""
    return np.diff(np.concatenate(([0], np.cumsum(values)))[indptr])


@njit(cache=True)
def _allocate_rows(indptr, cols, values, theta, phi_t, seed, iteration, row_lo, row_hi,
                   doc_topic, col_partial):
    # The arithmetic and the draws of topic_entry_weights and allocate_entry_nb (the dense
    # kernel's): the sum through weights_total (inlined; it takes the scratch weights alone),
    # the split written out, as in the sparse engine's pass 1: numba's inlining of a helper
    # that takes arrays adds atomic reference-count updates of each array at every call
    # (bench/README.md, "Pass 1 written out"); the rare paths are calls.
    n_topics = theta.shape[1]
    last = n_topics - 1
    weights = np.empty(n_topics)
    order = np.empty(n_topics, dtype=np.int64)
    placed = np.empty(n_topics, dtype=np.bool_)
    running = np.empty(n_topics)
    cells = np.empty(n_topics, dtype=np.int64)
    hits = np.empty(n_topics, dtype=np.int64)
    last_entry = indptr[row_hi]
    rng = new_stream()
    for d in range(row_lo, row_hi):
        seed_block(rng, seed, iteration, d)
        # the row's topic order, placed as far as its tokens' scans reach (seldom all K)
        placed[:] = False
        n_ordered = np.int64(0)  # int64, not the constant 0 (a compilation of its own)
        for idx in range(indptr[d], indptr[d + 1]):
            if idx + _PREFETCH_AHEAD < last_entry:
                ahead = cols[idx + _PREFETCH_AHEAD]
                prefetch_row(phi_t, ahead)
                prefetch_row(col_partial, ahead)
            v = cols[idx]
            # topic_entry_weights: the products, their sum in its fixed order
            for k in range(n_topics):
                weights[k] = theta[d, k] * phi_t[v, k]
            total = weights_total(weights)
            if not total > _UNDERFLOW:
                total = log_topic_weights(theta, phi_t, d, v, weights)
            count = values[idx]
            if count > FEW_TRIALS:
                allocate_large_entry_nb(rng, count, d, v, weights, total, cells, hits, doc_topic,
                                        col_partial)
                continue
            if not total > 0.0:
                continue
            # allocate_entry_nb: one categorical draw per token, the running sums of the
            # weights in the row's topic order; each token scans them from the start, and the
            # sums formed for one token serve the entry's next ones. As in the collapsed
            # engine's pass 1, the sums are formed in blocks of EAGER_SUMS and a token's place
            # within a block is counted without a branch per topic (the sums never decrease, so
            # the count is the scan's stopping place): on noisy counts a token lands beyond the
            # first block about one time in four, and a scan one sum at a time mispredicts
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
            for _ in range(count):
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
                col_partial[v, k] += 1


def _allocate_loop(indptr, cols, values, theta, phi_t, seed, iteration, starts, ends, doc_topic,
                   col_partials):
    for ch in prange(starts.size):
        _allocate_rows(indptr, cols, values, theta, phi_t, seed, iteration, starts[ch],
                       ends[ch], doc_topic, col_partials[ch])


_allocate = parallel_and_interpreted(_allocate_loop)


class KnownCountsTopicEngine:
    """One sweep of a model whose rates are ``theta @ phi`` on known counts: the non-zero
    entries allocated over topics (CSR, built once), then the model's own latent updates.

    Parameters
    ----------
    counts : ndarray of int64 or SparseCounts, shape (D, V)
        The known counts (non-negative), dense or CSR
        (:class:`lpp.inference.sparse_counts.SparseCounts`: the layout is read off its
        entries); kept by reference and returned as each sweep's ``y``.
    observed : ndarray of bool, shape (D, V)
        True where an entry carries likelihood.
    """

    name = "sparse-known"

    @staticmethod
    def applies(model, step, noise) -> bool:
        """Whether ``model`` declares ``"row_column_factors"`` and ``step`` (a privacy step, or
        the count source of a non-private chain) declares ``"known_counts"``."""
        return ("row_column_factors" in model.capabilities
                and "known_counts" in step.capabilities)

    @classmethod
    def for_source(cls, source, observed: np.ndarray) -> "KnownCountsTopicEngine":
        """The engine of a count source whose ``initial_counts()`` are the known counts."""
        return cls(source.initial_counts(), observed)

    def for_new_data(self, source, observed: np.ndarray):
        """An engine of this kind for another data set of the same shape
        (:meth:`lpp.inference.GibbsSampler.replace_data`)."""
        return self.for_source(source, observed)

    def __init__(self, counts: np.ndarray, observed: np.ndarray):
        self.counts = counts
        self.layout = KnownCountsLayout(counts, observed)
        self._plans = {}  # (K, threads) -> kernel calls
        self._tables = ChunkTables()

    def _plan_for(self, n_topics: int):
        """``(calls, partials)`` for ``n_topics``: the kernel calls of bounded work over the row
        chunks and the chunks' topic-word partial counts (int32 unless a chunk's counts could
        overflow it). The calls are made once per K and thread count and kept, and the partial
        counts are views of one :class:`lpp.inference.kernels.ChunkTables` table, so that a
        chain whose thread count changes between sweeps plans each count once.

        One chunk per numba thread (at most :func:`lpp.inference.kernels.n_chunks`): every
        chunk adds its rows into its own V x K partial counts, which are zeroed and summed at
        every sweep, so chunks beyond the threads only cost time. Chunks change no draw (rows
        keep their streams; the partial counts are integers).
        """
        key = (n_topics, numba.get_num_threads())
        if key not in self._plans:
            if any(k != n_topics for k, _ in self._plans):
                self._plans.clear()
            lay = self.layout
            n_rows, n_cols = lay.shape
            chunks = min(n_chunks(n_rows, n_cols * n_topics, cell_bytes=4), key[1])
            # chunks of equal work counted in tokens as well as entries (long documents
            # repeat their words)
            steps = lay.row_steps(n_topics)
            bounds = chunk_bounds(lay.indptr, n_topics, chunks, row_work=steps)
            per_chunk = np.diff(np.concatenate(([0], np.cumsum(lay.row_counts)))[bounds])
            wide = per_chunk.max(initial=0) > PARTIAL_LIMIT
            self._plans[key] = (chunked_calls(bounds, steps), chunks, wide)
        calls, chunks, wide = self._plans[key]
        n_cols = self.layout.shape[1]
        if wide:
            return calls, self._tables.take("wide", chunks, (n_cols, n_topics), np.int64)
        return calls, self._tables.take("narrow", chunks, (n_cols, n_topics), np.int32)

    def allocate(self, theta: np.ndarray, phi: np.ndarray, seed: int, iteration: int):
        """``(doc_topic (D x K), topic_word (K x V))``: the counts split over topics."""
        lay = self.layout
        n_rows, n_cols = lay.shape
        n_topics = theta.shape[1]
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        phi_t = np.ascontiguousarray(np.asarray(phi, dtype=np.float64).T)
        calls, partials = self._plan_for(n_topics)
        small = lay.nnz * n_topics < SERIAL_BELOW
        zero_partials(partials, small)
        doc_topic = np.zeros((n_rows, n_topics), dtype=np.int64)
        for starts, ends in calls:
            _allocate[small](lay.indptr, lay.cols, lay.values, theta, phi_t, seed, iteration,
                             starts, ends, doc_topic, partials)
        topic_word = np.empty((n_topics, n_cols), dtype=np.int64)
        sum_partials(partials, topic_word, small)
        return doc_topic, topic_word

    def step(self, model, state, observed, seed: int, iteration: int):
        """:meth:`TopicModel.step <lpp.inference.TopicModel.step>` of the known counts (the
        same draws: the allocation on its stream, then ``model.update_step``), without the
        dense counts it reads: the ``init="data"`` sweep of a chain on sparse counts."""
        theta, phi = model.row_column_factors(state)
        doc_topic, topic_word = self.allocate(theta, phi, derive_seed(seed, Tag.ALLOCATE),
                                              iteration)
        stats = {"doc_topic": doc_topic, "topic_word": topic_word}
        return model.update_step(state, stats, observed, seed, iteration)

    def sweep(self, model, state, observed, privacy_seed: int, model_seed: int, iteration: int):
        """``(new state, y)``: the allocation on the stream :meth:`TopicModel.step` uses, then
        ``model.update_step``."""
        theta, phi = model.row_column_factors(state)
        doc_topic, topic_word = self.allocate(theta, phi, derive_seed(model_seed, Tag.ALLOCATE),
                                              iteration)
        stats = {"doc_topic": doc_topic, "topic_word": topic_word}
        if getattr(model, "collapse_theta", False):
            state, stats = model.reassign_step(state, self.tokens(), observed, model_seed,
                                               iteration, 0, *self._plan_for(theta.shape[1]))
        return model.update_step(state, stats, observed, model_seed, iteration), self.counts

    def tokens(self) -> tuple:
        """The known counts as :func:`lpp.inference.models.topics.reassign.reassign_tokens` takes
        them: the non-zero entries, no listed or bulk tokens."""
        lay = self.layout
        n_rows = lay.shape[0]
        none = np.zeros(n_rows + 1, dtype=np.int64)
        return (lay.indptr, lay.cols, lay.values, none, np.empty(0, np.int32), none,
                np.empty(0, np.int32), np.empty(0, np.int64))
