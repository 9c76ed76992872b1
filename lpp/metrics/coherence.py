"""Topic coherence against a reference corpus: NPMI (Lau et al. 2014) and Mimno et al. (2011).

Both scores use *document co-occurrence* in a reference corpus (in the paper: the
non-privatized count matrix). With ``D`` documents, ``D(v)`` is the number of documents
in which word ``v`` occurs at least once and ``D(v, w)`` the number in which both ``v``
and ``w`` occur; probabilities are ``P(v) = D(v) / D`` and ``P(v, w) = D(v, w) / D``.
This equals Lau et al.'s toolkit with ``window_size = 0`` (whole documents) and gensim's
``c_npmi`` with a window at least as long as the longest document.

Only the columns of the reference matrix that hold top words are touched: the co-document
counts come from one product ``B_U^T B_U`` of the binary occurrence matrix restricted to
the union ``U`` of the topics' words (sparse, or blocked dense BLAS when the top words are
so common that the sparse product would cost more), so a 10,000 x 10,000 corpus with 50
topics of 10 words costs about a tenth of a second.

Topics are given as word indices (columns of the reference matrix), highest-ranked first:
a K x M integer array such as :func:`lpp.metrics.top_words` returns, or a list of integer
sequences (lengths may differ). Each topic needs at least two distinct words, and every
top word must occur in the reference corpus (a word with ``D(v) = 0`` has no probability
to normalise by; it signals mismatched vocabularies, so it raises instead of scoring).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from lpp.validation import check_counts
from lpp.metrics._inputs import as_index_lists, stored_values

__all__ = [
    "ReferenceCorpus",
    "document_frequencies",
    "co_document_frequencies",
    "npmi",
    "mimno_coherence",
    "mean_over_topics",
]


class ReferenceCorpus:
    """Which words occur in which documents: a validated, binary view of a D x V count matrix.

    Build it once and pass it to :func:`npmi` / :func:`mimno_coherence` when scoring many
    sets of topics (e.g. every saved MCMC sample) against the same corpus; the functions
    also accept the raw count matrix and build one on the fly.

    ``counts`` is a scipy.sparse matrix/array or a dense array of non-negative integer
    counts (integer, bool or integral float dtype); rows are documents, columns words.
    Explicitly stored zeros do not count as occurrences.
    """

    def __init__(self, counts):
        if isinstance(counts, ReferenceCorpus):
            self._occurs = counts._occurs
            self.document_frequency = counts.document_frequency
            return
        if sp.issparse(counts):
            if counts.ndim != 2:
                raise ValueError(f"reference counts must be a D x V matrix, got {counts.ndim}-d")
            check_counts(stored_values(counts), "reference counts")
            occurs = sp.csc_array(counts, copy=True)
            occurs.sum_duplicates()
            occurs.eliminate_zeros()
            occurs.data = np.ones(occurs.data.size, dtype=np.int64)
        else:
            dense = np.asarray(counts)
            if dense.ndim != 2:
                raise ValueError(f"reference counts must be a D x V matrix, got {dense.ndim}-d")
            check_counts(dense, "reference counts")
            occurs = sp.csc_array(dense != 0, dtype=np.int64)
        n_documents, n_words = occurs.shape
        if n_documents == 0 or n_words == 0:
            raise ValueError(f"reference counts are empty (shape {occurs.shape})")
        self._occurs = occurs
        frequency = np.diff(occurs.indptr).astype(np.int64)
        frequency.flags.writeable = False
        #: ``D(v)`` for every word ``v``: the number of documents it occurs in
        self.document_frequency = frequency

    @property
    def n_documents(self) -> int:
        return self._occurs.shape[0]

    @property
    def n_words(self) -> int:
        return self._occurs.shape[1]

    def pair_frequencies(self, first, second) -> np.ndarray:
        """``D(first[i], second[i])`` for each i (1-d integer arrays of word indices)."""
        first = np.asarray(first, dtype=np.int64)
        second = np.asarray(second, dtype=np.int64)
        if first.shape != second.shape or first.ndim != 1:
            raise ValueError("first and second must be 1-d arrays of the same length")
        if first.size == 0:
            return np.zeros(0, dtype=np.int64)
        for words in (first, second):
            if words.min() < 0 or words.max() >= self.n_words:
                raise ValueError(f"word indices must lie in [0, {self.n_words})")
        union, position = np.unique(np.concatenate([first, second]), return_inverse=True)
        joint = _co_occurrence(self._occurs[:, union])
        return np.asarray(joint[position[: first.size], position[first.size :]]).astype(np.int64)

    def co_document_frequencies(self, words) -> np.ndarray:
        """Dense ``len(words) x len(words)`` matrix of ``D(v, w)``; its diagonal is ``D(v)``."""
        words = np.asarray(words)
        if words.ndim != 1 or words.size == 0:
            raise ValueError("words must be a non-empty 1-d array of word indices")
        if not np.issubdtype(words.dtype, np.integer) or words.dtype == np.bool_:
            raise TypeError(f"word indices must be integers, got dtype {words.dtype}")
        i, j = np.meshgrid(words, words, indexing="ij")
        return self.pair_frequencies(i.ravel(), j.ravel()).reshape(words.size, words.size)


# The sparse product costs ~3 ns per (document, word pair) it enumerates, sum_d n_d^2 with
# n_d the number of the selected words in document d; dense BLAS costs ~0.02-0.04 ns per
# entry of D x U^2 (both measured on the 2-core dev machine, 10k documents, U = 100-2000).
# Switch to dense when it is expected to be cheaper.
_DENSE_SPEEDUP = 100
_DENSE_BLOCK_ENTRIES = 1 << 22


def _co_occurrence(columns: sp.csc_array):
    """``B^T B`` for a binary D x U occurrence matrix, sparse or dense by expected cost."""
    n_documents, n_selected = columns.shape
    rows = columns.tocsr()
    per_document = np.diff(rows.indptr).astype(np.float64)
    sparse_work = float(per_document @ per_document)
    if sparse_work * _DENSE_SPEEDUP <= float(n_documents) * n_selected * n_selected:
        return (columns.T @ columns).tocsr()
    # Dense, a block of documents at a time; float64 sums of 0/1 products are exact
    # (integers below 2**53), so the block order cannot change the result.
    joint = np.zeros((n_selected, n_selected), dtype=np.float64)
    block = max(1, _DENSE_BLOCK_ENTRIES // n_selected)
    for start in range(0, n_documents, block):
        dense = rows[start : start + block].toarray().astype(np.float64)
        joint += dense.T @ dense
    return joint.astype(np.int64)


def document_frequencies(counts) -> np.ndarray:
    """``D(v)``: for each column (word) of a D x V count matrix, the number of documents
    (rows) with a non-zero count. Accepts a sparse or dense matrix or a ReferenceCorpus."""
    return ReferenceCorpus(counts).document_frequency


def co_document_frequencies(counts, words) -> np.ndarray:
    """``D(v, w)`` for every pair of the given ``words`` (column indices): the number of
    documents in which both occur, as a dense symmetric matrix with ``D(v)`` on the
    diagonal. Computed by a sparse binary product over those columns only."""
    return ReferenceCorpus(counts).co_document_frequencies(words)


def _scored_pairs(top_words, corpus: ReferenceCorpus):
    """Unordered word pairs (l < m in rank order) of every topic, with their frequencies.

    Returns ``(higher, lower, topic_of_pair, pairs_per_topic, D(higher), D(lower),
    D(higher, lower))``; ``higher`` is the better-ranked word of each pair.
    """
    topics = as_index_lists(top_words, corpus.n_words)
    frequency = corpus.document_frequency
    for k, words in enumerate(topics):
        absent = words[frequency[words] == 0]
        if absent.size:
            raise ValueError(
                f"topic {k}: word(s) {absent.tolist()} never occur in the reference corpus; "
                "their probability is zero, so coherence is undefined (mismatched vocabulary?)"
            )
    higher, lower, owner, n_pairs = [], [], [], []
    for k, words in enumerate(topics):
        rank_l, rank_m = np.triu_indices(words.size, k=1)
        higher.append(words[rank_l])
        lower.append(words[rank_m])
        owner.append(np.full(rank_l.size, k, dtype=np.int64))
        n_pairs.append(rank_l.size)
    higher = np.concatenate(higher)
    lower = np.concatenate(lower)
    joint = corpus.pair_frequencies(higher, lower)
    return (
        higher,
        lower,
        np.concatenate(owner),
        np.asarray(n_pairs, dtype=np.int64),
        frequency[higher],
        frequency[lower],
        joint,
    )


def npmi(top_words, reference_counts, *, eps: float = 0.0, no_cooccurrence: float | None = None):
    """Per-topic NPMI coherence (Lau, Newman & Baldwin 2014) with document co-occurrence.

    For each topic, the mean over its ``M (M - 1) / 2`` unordered word pairs of::

        NPMI(w_i, w_j) = log( P(w_i, w_j) / (P(w_i) P(w_j)) ) / ( -log P(w_i, w_j) )

    with ``P`` the document frequencies over ``D`` (module docstring). The log base cancels
    in the ratio, so there is no base parameter (Lau's toolkit uses base 10, gensim base e:
    same values). NPMI is symmetric, so the order of the top words does not matter.

    Conventions for the edge cases:

    - ``eps`` (default 0): added to ``P(w_i, w_j)`` in both the numerator and the
      normaliser, exactly as gensim's ``c_npmi`` does with its ``EPSILON = 1e-12``; pass
      ``eps=1e-12`` to reproduce gensim. Must lie in ``[0, 1/D)`` so that the normaliser
      stays positive for every pair that is not in all documents.
    - ``no_cooccurrence``: the value of a pair that never co-occurs, used when ``eps == 0``.
      Default ``-1``, the limit of NPMI as ``P(w_i, w_j) -> 0`` (NPMI's floor: the words
      exclude each other). Lau et al.'s reference code assigns ``0`` instead; pass
      ``no_cooccurrence=0.0`` to reproduce it. Giving it together with ``eps > 0`` is an
      error (the smoothed formula already scores such pairs, close to ``-1``).
    - A pair present in *every* document (``P(w_i, w_j) = 1``, so 0/0) scores ``1``, the
      limit along perfect co-occurrence ``P(w_i) = P(w_j) = P(w_i, w_j) -> 1`` (with
      ``eps > 0`` gensim's formula gives ``-1`` there; Lau's code divides by zero).

    ``reference_counts`` is a D x V count matrix (sparse or dense) or a ReferenceCorpus.
    Returns a float64 array with one value per topic, each in ``[-1, 1]``.
    """
    corpus = ReferenceCorpus(reference_counts)
    eps = float(eps)
    n_documents = corpus.n_documents
    if not (0.0 <= eps < 1.0 / n_documents):
        raise ValueError(f"eps must lie in [0, 1/D) = [0, {1.0 / n_documents:.3g}); got {eps}")
    if no_cooccurrence is None:
        no_cooccurrence = -1.0
    elif eps > 0:
        raise ValueError("give either eps > 0 or no_cooccurrence, not both")
    no_cooccurrence = float(no_cooccurrence)
    if not (-1.0 <= no_cooccurrence <= 1.0):
        raise ValueError(f"no_cooccurrence must lie in [-1, 1]; got {no_cooccurrence}")

    _, _, owner, n_pairs, d_first, d_second, d_joint = _scored_pairs(top_words, corpus)
    joint = d_joint / n_documents + eps
    never = joint == 0.0
    everywhere = d_joint == n_documents
    regular = ~(never | everywhere)
    scores = np.empty(joint.size, dtype=np.float64)
    log_joint = np.log(joint[regular])
    log_marginals = np.log(d_first[regular] / n_documents) + np.log(d_second[regular] / n_documents)
    scores[regular] = (log_joint - log_marginals) / -log_joint
    scores[never] = no_cooccurrence
    scores[everywhere] = 1.0
    return np.bincount(owner, weights=scores, minlength=n_pairs.size) / n_pairs


def mimno_coherence(top_words, reference_counts, *, smoothing: float = 1.0):
    """Per-topic coherence of Mimno, Wallach, Talley, Leenders & McCallum (2011).

    For a topic with top words ``v_1, ..., v_M`` (``v_1`` the highest-ranked)::

        C = sum_{m=2..M} sum_{l<m} log( (D(v_m, v_l) + smoothing) / D(v_l) )

    natural log, a **sum** over the ``M (M - 1) / 2`` pairs (not a mean), and the
    denominator is the document frequency of the *higher-ranked* word of each pair, so the
    order of the top words matters. ``smoothing`` defaults to Mimno's ``+1``; it must be
    positive. gensim's ``u_mass`` on the same corpus is the *mean* of the same terms with
    ``smoothing = D * 1e-12``, i.e. ``u_mass = mimno_coherence(..., smoothing=D * 1e-12)
    / (M (M - 1) / 2)``.

    ``reference_counts`` is a D x V count matrix (sparse or dense) or a ReferenceCorpus.
    Returns a float64 array with one value per topic (each <= pairs * log(1 + smoothing)).
    """
    corpus = ReferenceCorpus(reference_counts)
    smoothing = float(smoothing)
    if not (np.isfinite(smoothing) and smoothing > 0):
        raise ValueError(f"smoothing must be a positive finite number; got {smoothing}")
    _, _, owner, n_pairs, d_higher, _, d_joint = _scored_pairs(top_words, corpus)
    scores = np.log((d_joint + smoothing) / d_higher)
    return np.bincount(owner, weights=scores, minlength=n_pairs.size)


def mean_over_topics(per_topic) -> float | np.ndarray:
    """Average per-topic scores over topics (the last axis).

    A 1-d array of K scores gives a float; an S x K array (one row per saved sample) gives
    the S per-sample averages, which the paper then averages over samples.
    """
    scores = np.asarray(per_topic, dtype=np.float64)
    if scores.ndim == 0 or scores.shape[-1] == 0 or scores.size == 0:
        raise ValueError("need at least one topic score to average")
    if not np.isfinite(scores).all():
        raise ValueError("topic scores must be finite")
    mean = scores.mean(axis=-1)
    return float(mean) if scores.ndim == 1 else mean
