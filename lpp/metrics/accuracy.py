"""Reconstruction error of an estimated Poisson rate against the true counts."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from lpp.validation import check_counts, check_finite
from lpp.metrics._inputs import stored_values

__all__ = ["mae"]

# Rows are densified a block at a time, so a sparse 10k x 10k y never exists densely
# in full; ~4M entries (32 MB of float64) per block.
_BLOCK_ENTRIES = 1 << 22


def _rows(matrix, start: int, stop: int, n_cols: int) -> np.ndarray:
    if sp.issparse(matrix):
        return matrix[start:stop].toarray()
    return matrix[start:stop].reshape(stop - start, n_cols)


def mae(mu_hat, y, mask=None) -> float:
    """Mean absolute error ``mean |mu_hat - y|`` over all entries or the masked ones.

    ``mu_hat``: dense array of estimated rates (e.g. the posterior mean of ``mu``), any
    shape. ``y``: the true counts (non-negative integers), dense with the same shape, or
    a scipy.sparse matrix when the data are 2-d; a sparse ``y`` is densified one block of
    rows at a time, never as a whole. ``mask``: ``None`` (all entries) or a boolean array
    or scipy.sparse boolean matrix of the same shape where **True marks the entries that
    are scored** (e.g. the held-out entries in link prediction). The dense and sparse
    paths add the same blocks in the same order, so they agree to the last bit.
    """
    if sp.issparse(mu_hat):
        raise TypeError("mu_hat must be a dense array (rates are dense)")
    mu_hat = np.asarray(mu_hat)
    check_finite(mu_hat, "mu_hat")
    if mu_hat.size == 0:
        raise ValueError(f"mu_hat is empty (shape {mu_hat.shape})")

    if sp.issparse(y):
        if y.ndim != 2:
            raise ValueError(f"a sparse y must be 2-d; got {y.ndim}-d")
        y = sp.csr_array(y)
    else:
        y = np.asarray(y)
    check_counts(stored_values(y), "y")
    if y.shape != mu_hat.shape:
        raise ValueError(f"mu_hat and y must have the same shape; got {mu_hat.shape} vs {y.shape}")

    if mask is not None:
        if sp.issparse(mask):
            mask = sp.csr_array(mask)
        else:
            mask = np.asarray(mask)
        if mask.dtype != np.bool_:
            raise TypeError(f"mask must be boolean (True = scored entry); got dtype {mask.dtype}")
        if mask.shape != mu_hat.shape:
            raise ValueError(
                f"mask must have the shape of mu_hat; got {mask.shape} vs {mu_hat.shape}"
            )

    n_rows = mu_hat.shape[0] if mu_hat.ndim else 1
    n_cols = mu_hat.size // n_rows
    rates = mu_hat.reshape(n_rows, n_cols)
    if not sp.issparse(y):
        y = y.reshape(n_rows, n_cols)
    if mask is not None and not sp.issparse(mask):
        mask = mask.reshape(n_rows, n_cols)

    block = max(1, _BLOCK_ENTRIES // max(n_cols, 1))
    total, count = 0.0, 0
    for start in range(0, n_rows, block):
        stop = min(start + block, n_rows)
        error = np.abs(rates[start:stop].astype(np.float64) - _rows(y, start, stop, n_cols))
        if mask is None:
            total += float(error.sum())
            count += error.size
        else:
            keep = _rows(mask, start, stop, n_cols)
            total += float(error[keep].sum())
            count += int(keep.sum())
    if count == 0:
        raise ValueError("mask selects no entries; nothing to average")
    return total / count
