"""The kernels every model shares: Gamma draws, per-chunk tables and partial counts."""
import numba
import numpy as np
import pytest
from scipy import stats

from lpp.inference import kernels
from lpp.inference.kernels import SUM_COLUMNS, ChunkTables, sum_partials, zero_partials
from lpp.testing import FALSE_ALARM


def test_chunk_tables_grow_only_and_hand_out_views_of_the_largest():
    tables = ChunkTables()
    two = tables.take("partials", 2, (5, 3), np.int32)
    assert two.shape == (2, 5, 3) and two.dtype == np.int32 and not two.any()
    two[1] = 7
    one = tables.take("partials", 1, (5, 3), np.int32)
    assert one.shape == (1, 5, 3) and np.shares_memory(one, two)
    # a view keeps what was written: callers that need zeros fill it
    assert np.shares_memory(tables.take("partials", 2, (5, 3), np.int32), two)
    assert tables.take("partials", 2, (5, 3), np.int32)[1, 0, 0] == 7
    four = tables.take("partials", 4, (5, 3), np.int32)
    assert four.shape == (4, 5, 3) and not np.shares_memory(four, two) and not four.any()
    assert np.shares_memory(tables.take("partials", 2, (5, 3), np.int32), four)


def test_chunk_tables_are_made_again_for_another_cell_shape_or_dtype_and_kept_by_name():
    tables = ChunkTables()
    first = tables.take("partials", 2, (5, 3), np.int32)
    assert not np.shares_memory(tables.take("partials", 2, (5, 4), np.int32), first)
    wide = tables.take("partials", 2, (5, 4), np.int64)
    assert wide.dtype == np.int64
    other = tables.take("markers", 2, (5,), np.int64)
    assert other.shape == (2, 5)
    assert np.shares_memory(tables.take("partials", 1, (5, 4), np.int64), wide)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("chunks,n_cols,n_topics", [(1, 5, 3), (3, 2 * SUM_COLUMNS + 7, 50),
                                                     (32, SUM_COLUMNS, 7)])
@pytest.mark.parametrize("small", [False, True])
def test_partial_counts_sum_over_chunks_transposed_and_zero(dtype, chunks, n_cols, n_topics,
                                                            small):
    partials = np.random.default_rng(chunks).integers(0, 1 << 20, (chunks, n_cols, n_topics))
    partials = partials.astype(dtype)
    out_t = np.empty((n_topics, n_cols), dtype=np.int64)
    for threads in (1, numba.config.NUMBA_NUM_THREADS):
        out_t.fill(-1)  # each call must write every cell
        numba.set_num_threads(threads)
        try:
            sum_partials(partials, out_t, small)
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        np.testing.assert_array_equal(out_t, partials.sum(axis=0, dtype=np.int64).T)
    zero_partials(partials, small)
    assert partials.dtype == dtype and not partials.any()


@pytest.mark.parametrize("shape", [(300, 100), (40, 5000), (6000, 3)])
def test_gamma_matrix_kernel_same_draws_with_any_threads_and_the_right_law(shape):
    """Streams are keyed by fixed blocks of rows: the parallel twin with 1 or 2 threads and
    the serial twin give the same matrix; every cell follows its own Gamma(shape, rate)."""
    rng = np.random.default_rng(3)
    counts = rng.poisson(2.0, shape)
    rate = rng.uniform(0.5, 4.0, shape)
    assert counts.size >= kernels.SERIAL_BELOW
    before = numba.get_num_threads()
    try:
        runs = []
        for n_threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(n_threads)
            runs.append(kernels.gamma_matrix_kernel(counts, 0.1, rate, 5, 9))
    finally:
        numba.set_num_threads(before)
    serial = np.empty(shape)
    kernels._gamma_matrix[True](counts, 0.1, rate, 5, 9,
                                 kernels.gamma_rows_per_block(*shape), serial)
    assert np.array_equal(runs[0], runs[1]) and np.array_equal(runs[0], serial)
    # probability integral transform: uniform if every cell has its own law
    pit = stats.gamma.cdf(runs[0] * rate, 0.1 + counts)
    assert stats.kstest(pit.ravel(), "uniform").pvalue > FALSE_ALARM
    # blocks do not repeat one another's stream: the first cells of consecutive blocks differ
    rows = kernels.gamma_rows_per_block(*shape)
    firsts = pit[::rows, 0]
    assert np.unique(firsts).size == firsts.size
