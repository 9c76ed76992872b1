"""Bags of words and the paper's vocabulary rule.

Vocabulary rule (Schein et al. 2019, §5): among the word types of the *sampled*
documents, keep those whose document frequency (the fraction of sampled documents that
contain the type) is strictly below ``max_df``; of these, take the ``size`` with the most
tokens in the sample. Ties in token count are broken alphabetically, and the columns are in
that order (most frequent first). That vocabulary is chosen from the true counts: which words
made the cut is a release no privacy level covers (the private folders record it as such, and
put the columns in alphabetical order: docs/privacy.md).

A *public* vocabulary (:func:`read_word_list`) is a list of words fixed before the counts
are read: nothing about the counts chooses it, and its columns are its words in alphabetical
order, whether or not they occur.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp


def bag_of_words(token_lists: Sequence[Sequence[str]]) -> tuple[sp.csr_array, list[str]]:
    """Document-by-type counts (int64 CSR) with the types in alphabetical order."""
    type_index: dict[str, int] = {}
    rows, cols = [], []
    for row, tokens in enumerate(token_lists):
        for token in tokens:
            cols.append(type_index.setdefault(token, len(type_index)))
        rows.append(np.full(len(tokens), row, dtype=np.int64))
    types = sorted(type_index)
    # relabel first-seen ids to alphabetical ids, so the output does not depend on order
    relabel = np.empty(len(types), dtype=np.int64)
    relabel[[type_index[t] for t in types]] = np.arange(len(types))
    col = relabel[np.asarray(cols, dtype=np.int64)] if cols else np.zeros(0, dtype=np.int64)
    row = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    counts = sp.coo_array((np.ones(col.size, dtype=np.int64), (row, col)),
                          shape=(len(token_lists), len(types))).tocsr()
    counts.sum_duplicates()
    counts.sort_indices()
    return counts, types


def document_frequency(counts: sp.csr_array) -> np.ndarray:
    """Number of documents (rows) in which each type (column) occurs."""
    return np.bincount(counts.indices[counts.data > 0], minlength=counts.shape[1])


def select_vocabulary(counts: sp.csr_array, types: Sequence[str], *, size: int | None,
                      max_df: float) -> np.ndarray:
    """Column indices of the vocabulary, most frequent first (see the module docstring).

    ``size=None`` keeps every type under the document-frequency threshold. Raises
    ``ValueError`` if fewer than ``size`` types qualify, or none does (an empty vocabulary
    would give a matrix without columns).
    """
    n_docs = counts.shape[0]
    if n_docs == 0:
        raise ValueError("cannot choose a vocabulary from zero documents")
    df_fraction = document_frequency(counts) / n_docs
    frequency = np.asarray(counts.sum(axis=0)).ravel()
    eligible = np.flatnonzero((df_fraction < max_df) & (frequency > 0))
    if not np.any(frequency > 0):
        raise ValueError(f"the {n_docs} sampled documents have no word token, so there is no "
                         "vocabulary: raise prepare_topics.min_tokens, or lower "
                         "prepare_topics.min_token_length or loosen prepare_topics.stop_words")
    if eligible.size == 0 or (size is not None and eligible.size < size):
        wanted = "any vocabulary" if size is None else f"a vocabulary of {size}"
        at_most = f" (to {eligible.size} at most, or all)" if eligible.size else ""
        raise ValueError(
            f"only {eligible.size} word types have document frequency < {max_df} in the "
            f"{n_docs} sampled documents; cannot choose {wanted}: raise "
            f"prepare_topics.max_df, lower prepare_topics.vocab_size{at_most}, or sample "
            "more documents (prepare_topics.n_docs, prepare_topics.min_tokens)")
    names = np.asarray(types, dtype=object)[eligible]
    order = np.lexsort((names.astype(str), -frequency[eligible]))  # last key is primary
    chosen = eligible[order]
    return chosen if size is None else chosen[:size]


def read_word_list(path) -> list[str]:
    """The words of a public vocabulary file, in alphabetical order.

    One word per line; surrounding whitespace is stripped, and blank lines and lines that
    start with ``#`` are skipped. Raises ``ValueError`` naming the file and the line for a
    line with more than one word or a word listed twice, and for a file without words;
    ``FileNotFoundError`` when there is no such file.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"prepare_topics.public_vocab: no file {path}")
    words, seen = [], {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        word = line.strip()
        if not word or word.startswith("#"):
            continue
        if len(word.split()) != 1:
            raise ValueError(f"{path}, line {number}: one word per line, got {word!r:.60}")
        if word in seen:
            raise ValueError(f"{path}, line {number}: {word!r} is listed twice (first on line "
                             f"{seen[word]})")
        seen[word] = number
        words.append(word)
    if not words:
        raise ValueError(f"{path} lists no word (prepare_topics.public_vocab)")
    return sorted(words)


def public_columns(counts: sp.csr_array, types: Sequence[str],
                   words: Sequence[str]) -> sp.csr_array:
    """The columns of ``counts`` (over ``types``) for ``words``, in the order of ``words``: a
    word that no document holds gives a column of zeros (int64 CSR, sorted indices)."""
    index = {t: i for i, t in enumerate(types)}
    pairs = [(j, index[w]) for j, w in enumerate(words) if w in index]
    target = np.array([j for j, _ in pairs], dtype=np.int64)
    source = np.array([i for _, i in pairs], dtype=np.int64)
    picked = sp.csr_array(counts)[:, source].tocoo() if pairs else None
    if picked is None or picked.nnz == 0:
        return sp.csr_array((counts.shape[0], len(words)), dtype=np.int64)
    out = sp.coo_array((picked.data.astype(np.int64), (picked.row, target[picked.col])),
                       shape=(counts.shape[0], len(words))).tocsr()
    out.sum_duplicates()
    out.sort_indices()
    return out
