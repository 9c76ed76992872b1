import numpy as np

from lpp.inference.kernels import ChunkTables


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
