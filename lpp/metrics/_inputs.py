"""Parsing of the metrics' inputs: sparse matrices' stored entries, topics as word indices."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def stored_values(matrix) -> np.ndarray:
    """The stored entries of a sparse matrix, or all entries of a dense array."""
    if not sp.issparse(matrix):
        return np.asarray(matrix)
    if matrix.format in ("lil", "dok"):  # their .data is not an array of the entries
        matrix = matrix.tocoo()
    return matrix.data


def as_index_lists(top_words, n_words: int, *, min_length: int = 2) -> list[np.ndarray]:
    """Validate topics given as a K x M integer array or a sequence of integer sequences.

    Returns one int64 array per topic. Topics may differ in length (a ragged list), but
    each needs at least ``min_length`` distinct word indices in ``[0, n_words)``.
    """
    if isinstance(top_words, np.ndarray):
        if top_words.ndim != 2:
            raise ValueError(
                f"top_words must be a K x M array (or a list of lists); got {top_words.ndim}-d"
            )
        topics = list(top_words)
    else:
        try:
            topics = list(top_words)
        except TypeError:
            raise TypeError("top_words must be a K x M integer array or a list of lists") from None
    if not topics:
        raise ValueError("top_words is empty: need at least one topic")
    out = []
    for k, topic in enumerate(topics):
        words = np.asarray(topic)
        if words.ndim != 1:
            raise ValueError(f"topic {k} must be a flat sequence of word indices")
        if words.size == 0:
            raise ValueError(f"topic {k} has no words")
        if not np.issubdtype(words.dtype, np.integer) or words.dtype == np.bool_:
            raise TypeError(f"topic {k}: word indices must be integers, got dtype {words.dtype}")
        if words.size < min_length:
            raise ValueError(
                f"topic {k} has {words.size} word(s); coherence needs at least {min_length}"
            )
        if words.min() < 0 or words.max() >= n_words:
            raise ValueError(
                f"topic {k}: word indices must lie in [0, {n_words}); "
                f"got {words.min()}..{words.max()}"
            )
        if np.unique(words).size != words.size:
            raise ValueError(f"topic {k} lists the same word more than once")
        out.append(words.astype(np.int64))
    return out
