"""The cache hint compiles to llvm.prefetch, covers the row, and changes nothing."""
import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from lpp.inference.engines.prefetch import prefetch_row


@njit
def _hinted_row_sums(table, rows):
    out = np.zeros(rows.size)
    for i in range(rows.size):
        if i + 1 < rows.size:
            prefetch_row(table, rows[i + 1])
        out[i] = table[rows[i]].sum()
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
def test_hinted_reads_give_the_same_values(dtype):
    rng = np.random.default_rng(0)
    table = rng.integers(0, 100, (300, 50)).astype(dtype)
    rows = rng.integers(0, 300, 1000).astype(np.int32)
    before = table.copy()
    np.testing.assert_array_equal(_hinted_row_sums(table, rows), table[rows].sum(axis=1))
    np.testing.assert_array_equal(table, before)


def test_the_hint_reaches_llvm():
    table = np.zeros((4, 50))
    _hinted_row_sums(table, np.arange(4))
    ir_text = _hinted_row_sums.inspect_llvm(_hinted_row_sums.signatures[-1])
    assert "llvm.prefetch" in ir_text


def test_a_non_matrix_is_refused_at_compile_time():
    @njit
    def hint_vector(v):
        prefetch_row(v, 0)

    with pytest.raises(TypingError):
        hint_vector(np.zeros(5))
