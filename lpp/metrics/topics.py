"""Reading topics off a topic-word matrix."""
from __future__ import annotations


import numpy as np

from lpp.validation import check_finite, check_int

__all__ = ["top_words"]


def top_words(phi, n: int = 10) -> np.ndarray:
    """Indices of the ``n`` largest entries of each row (topic) of a K x V matrix.

    Returns a K x n int64 array, each row ordered from the largest entry down. Ties are
    broken deterministically: among equal values the lower word index comes first. Rows
    need not be normalised (only their order matters), so ``phi`` may be a posterior
    sample of the Gamma-distributed factors or a normalised topic-word distribution.
    """
    phi = np.asarray(phi)
    if phi.ndim != 2:
        raise ValueError(f"phi must be a K x V matrix, got {phi.ndim}-d")
    if phi.size == 0:
        raise ValueError(f"phi is empty (shape {phi.shape})")
    check_finite(phi, "phi")
    n = check_int(n, "n", minimum=0)
    if not 1 <= n <= phi.shape[1]:
        raise ValueError(f"n must lie in [1, V] = [1, {phi.shape[1]}]; got {n}")
    # A stable sort of the negated values orders descending and keeps equal values in
    # index order; (argpartition would pick among ties at the cut arbitrarily.)
    order = np.argsort(-phi.astype(np.float64), axis=1, kind="stable")
    return order[:, :n].astype(np.int64)
