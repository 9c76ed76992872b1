"""Compiled kernels that every model shares: row chunks and their partial counts, products of
factors in a fixed order, Gamma draws, the allocation's work bounds.

Each model's own kernels (its allocation of counts to components) sit beside it, in its folder
(``lpp/inference/models/<name>/kernels.py``). Every allocation draws through
:func:`lpp.distributions.allocate_count_nb` (the one multinomial kernel, O(K) for large counts;
the topic kernels draw counts up to :data:`lpp.distributions.FEW_TRIALS` token by token, see
:func:`lpp.inference.models.topics.kernels.row_topic_order`); the Gamma draws through
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

import importlib
import warnings

import numpy as np
from numba import njit, prange

from lpp.randomness import new_stream, seed_block
from lpp.distributions import LARGE_COUNT, gamma_rate_nb
from lpp.distributions._gamma_sampler import gamma_rate_below_one_nb, marsaglia_tsang_constants
from lpp.inference.numerics import CALL_STEPS, SERIAL_BELOW, call_ranges, parallel_and_interpreted

# ---------------------------------------------------------------------------------------------
# row chunks
# ---------------------------------------------------------------------------------------------

#: memory budget (bytes) of the per-chunk partial count arrays of one allocation kernel
_PARTIAL_BUDGET = 1 << 26
#: most row chunks (each with its own partial counts) an allocation kernel splits its rows into
MAX_CHUNKS = 32
#: below this total weight the products of factors are recomputed in log space (they may have
#: underflowed: factors are floored at 2.2e-308, their products are not)
_UNDERFLOW = 1e-280


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
# products of factors
# ---------------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------------
# the allocations' work and partial counts
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


# ----- names of earlier releases -------------------------------------------------------------
#: the model kernels that lived here before each built-in model became a folder, and the
#: module each lives in now (docs/library.md, *Deprecated names*)
MOVED_KERNELS = {
    **dict.fromkeys(("add_rows_at", "allocate_entry_nb", "allocate_large_entry_nb",
                     "allocate_matrix_kernel", "expected_allocation", "extend_topic_order",
                     "row_topic_order", "topic_entry_weights"),
                    "lpp.inference.models.topics.kernels"),
    **dict.fromkeys(("allocate_blocks_kernel", "update_memberships_kernel"),
                    "lpp.inference.models.communities.kernels"),
    "allocate_cp3_kernel": "lpp.inference.models.cp.kernels",
}


def __getattr__(name: str):
    home = MOVED_KERNELS.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"lpp.inference.kernels.{name} lives in {home} (each model's kernels sit in "
                  "its folder); the old name will be removed", FutureWarning, stacklevel=2)
    # imported when asked for: the shared kernels sit below the models, which import them
    return getattr(importlib.import_module(home), name)
