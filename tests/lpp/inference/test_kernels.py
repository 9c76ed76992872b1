import numba
import numpy as np
import pytest

from lpp.inference.kernels import SUM_COLUMNS, ChunkTables, sum_partials, zero_partials


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
