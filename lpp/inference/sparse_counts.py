"""Known counts held sparse: the rows' non-zero entries (CSR), never a D x V array.

The non-private chain of a model with row/column factors (the topic model) needs the true
counts only through their non-zero entries (:mod:`lpp.inference.engines.known_topics`) and
the log joint, which reads them row by row
(:func:`lpp.inference.log_density.poisson_factor_row_sums`).
:class:`SparseCounts` is what such a chain holds in place of a dense matrix; what needs the
dense counts (saved draws of ``y``, a dense sweep, a variational start) asks for
:meth:`SparseCounts.dense`, or for a block of rows at a time (:meth:`SparseCounts.rows`:
``init="em"``, the data's fingerprint).
"""
from __future__ import annotations

import numpy as np

from lpp.validation import sparse_count_parts

#: entries per row block of the dense views (:meth:`SparseCounts.row_blocks`): 2 MB of int64
BLOCK_ENTRIES = 2**18


class SparseCounts:
    """Non-negative whole counts in CSR form: ``indptr`` (D + 1, int64), ``indices`` (int32,
    sorted within each row), ``data`` (int64, no zeros), ``shape``.

    Build it with :meth:`from_input` (a scipy.sparse matrix or array of any format, checked by
    :func:`lpp.validation.sparse_count_parts`). ``toarray`` and ``nnz`` make it read as sparse
    input wherever lpp densifies one (:func:`lpp.validation.densify`).
    """

    def __init__(self, shape, indptr, indices, data):
        self.shape = tuple(int(s) for s in shape)
        self.indptr, self.indices, self.data = indptr, indices, data

    @classmethod
    def from_input(cls, values, name: str) -> "SparseCounts":
        """The counts of a scipy.sparse matrix or array, checked as the dense ones are
        (ValueError/TypeError naming ``name``)."""
        return cls(*sparse_count_parts(values, name))

    @property
    def nnz(self) -> int:
        return int(self.data.size)

    @property
    def ndim(self) -> int:
        return 2

    def rows(self, lo: int, hi: int) -> np.ndarray:
        """Rows ``lo..hi - 1`` as a dense C-contiguous int64 array."""
        out = np.zeros((hi - lo, self.shape[1]), dtype=np.int64)
        start, end = self.indptr[lo], self.indptr[hi]
        row_of = np.repeat(np.arange(hi - lo), np.diff(self.indptr[lo:hi + 1]))
        out[row_of, self.indices[start:end]] = self.data[start:end]
        return out

    def row_blocks(self, entries: int = BLOCK_ENTRIES):
        """``(lo, hi)`` of consecutive row blocks of about ``entries`` dense entries each."""
        step = max(1, entries // max(1, self.shape[1]))
        for lo in range(0, self.shape[0], step):
            yield lo, min(lo + step, self.shape[0])

    def dense(self) -> np.ndarray:
        """The D x V int64 matrix (a new array on each call)."""
        return self.rows(0, self.shape[0])

    toarray = dense
