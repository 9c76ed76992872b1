"""The cache hints compile to llvm.prefetch, cover the row (or the cell), and change nothing."""
import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from lpp.inference.engines.prefetch import prefetch_cell, prefetch_row


@njit
def _hinted_row_sums(table, rows):
    out = np.zeros(rows.size)
    for i in range(rows.size):
        if i + 1 < rows.size:
            prefetch_row(table, rows[i + 1])
        out[i] = table[rows[i]].sum()
    return out


@njit
def _hinted_cell_increments(table, rows, cols):
    for i in range(rows.size):
        if i + 1 < rows.size:
            prefetch_cell(table, rows[i + 1], cols[i + 1])
        table[rows[i], cols[i]] += 1


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
def test_hinted_reads_give_the_same_values(dtype):
    rng = np.random.default_rng(0)
    table = rng.integers(0, 100, (300, 50)).astype(dtype)
    rows = rng.integers(0, 300, 1000).astype(np.int32)
    before = table.copy()
    np.testing.assert_array_equal(_hinted_row_sums(table, rows), table[rows].sum(axis=1))
    np.testing.assert_array_equal(table, before)


@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_hinted_cell_updates_give_the_same_values(dtype):
    rng = np.random.default_rng(1)
    rows, cols = rng.integers(0, 300, 2000), rng.integers(0, 50, 2000).astype(np.int32)
    table = np.zeros((300, 50), dtype=dtype)
    _hinted_cell_increments(table, rows, cols)
    want = np.zeros((300, 50), dtype=dtype)
    np.add.at(want, (rows, cols), 1)
    np.testing.assert_array_equal(table, want)


def test_the_hint_reaches_llvm():
    table = np.zeros((4, 50))
    _hinted_row_sums(table, np.arange(4))
    ir_text = _hinted_row_sums.inspect_llvm(_hinted_row_sums.signatures[-1])
    assert "llvm.prefetch" in ir_text
    _hinted_cell_increments(table, np.arange(4), np.arange(4))
    ir_text = _hinted_cell_increments.inspect_llvm(_hinted_cell_increments.signatures[-1])
    assert "llvm.prefetch" in ir_text


def test_a_non_matrix_is_refused_at_compile_time():
    @njit
    def hint_vector(v):
        prefetch_row(v, 0)

    @njit
    def hint_cell_of_vector(v):
        prefetch_cell(v, 0, 0)

    with pytest.raises(TypingError):
        hint_vector(np.zeros(5))
    with pytest.raises(TypingError):
        hint_cell_of_vector(np.zeros(5))
