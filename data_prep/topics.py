"""The document-by-word matrix of the topic-model case study.

Order of operations (every number is a parameter):

1. Count each document's word tokens with the tokenizer (lower-case ``[a-z]+`` runs that
   pass its length and stop-word filters), *before* any vocabulary restriction. The
   vocabulary is chosen on the sampled documents, so it cannot decide which documents are
   sampled; the paper's "emails with at least 50 word tokens" is a property of the email.
2. Keep the documents with at least ``min_tokens`` tokens, in corpus order.
3. Sample ``n_docs`` of them uniformly without replacement (``numpy`` Generator seeded with
   ``seed``); rows keep corpus order. ``n_docs=None`` (``all`` in ``params.yaml``) keeps them
   all.
4. Choose the vocabulary on the sample (:mod:`data_prep.vocabulary`) and restrict the counts
   to it. Documents may lose tokens here; the summary reports both token counts. With a
   public vocabulary (``public_vocabulary``: words fixed in advance) the columns are its words
   in alphabetical order and ``vocab_size`` and ``max_df`` choose nothing.
"""
from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from lpp.validation import check_int
from data_prep.summary import topic_summary
from data_prep.tokens import Tokenizer
from data_prep.vocabulary import bag_of_words, public_columns, select_vocabulary
from lpp.randomness import as_generator


class TextDocuments:
    """Documents given as text, tokenised on demand."""

    def __init__(self, ids: Sequence[str], texts: Sequence[str], tokenizer: Tokenizer):
        if len(ids) != len(texts):
            raise ValueError(f"{len(ids)} document ids for {len(texts)} texts")
        self.ids = [str(i) for i in ids]
        self.texts = list(texts)
        self.tokenizer = tokenizer
        self.lengths = np.fromiter((len(tokenizer(t)) for t in self.texts), dtype=np.int64,
                                   count=len(self.texts))

    def counts_for(self, rows: np.ndarray) -> tuple[sp.csr_array, list[str]]:
        return bag_of_words([self.tokenizer(self.texts[r]) for r in rows])


class BagOfWordsDocuments:
    """Documents given as counts over word types (e.g. a UCI ``docword``/``vocab`` pair).

    Types that the tokenizer's length or stop-word filters reject are dropped first, so the
    token counts mean the same as for text input.
    """

    def __init__(self, ids: Sequence[str], counts, types: Sequence[str], tokenizer: Tokenizer):
        counts = sp.csr_array(counts)
        if counts.shape != (len(ids), len(types)):
            raise ValueError(f"counts of shape {counts.shape} for {len(ids)} documents and "
                             f"{len(types)} word types")
        keep = np.array([tokenizer.keeps(t) for t in types], dtype=bool)
        self.tokenizer = tokenizer
        self.ids = [str(i) for i in ids]
        self.types = [t for t, k in zip(types, keep) if k]
        self.counts = counts[:, np.flatnonzero(keep)].tocsr()
        self.lengths = np.asarray(self.counts.sum(axis=1), dtype=np.int64).ravel()

    def counts_for(self, rows: np.ndarray) -> tuple[sp.csr_array, list[str]]:
        return self.counts[rows].tocsr(), self.types


@dataclass(frozen=True)
class TopicCounts:
    """A document-by-word count matrix (:func:`build_topic_counts`).

    Attributes
    ----------
    counts : scipy.sparse.csr_array
        int64, documents x vocabulary: ``counts[d, v]`` is the number of tokens of word
        ``vocabulary[v]`` in document ``doc_ids[d]`` (sorted indices).
    doc_ids : list of str
        The sampled documents' ids, in corpus order (how each format names its documents:
        :mod:`data_prep.formats`).
    vocabulary : list of str
        The word types of the columns, most frequent in the sample first (a public
        vocabulary: its words, in alphabetical order).
    summary : dict
        Statistics of the matrix and of the sample it was cut from (written as
        ``summary.json``; :func:`data_prep.summary.topic_summary`).
    """

    counts: sp.csr_array
    doc_ids: list[str]
    vocabulary: list[str]
    summary: dict


def check_topic_params(*, n_docs, min_tokens, vocab_size, max_df) -> None:
    for name, value in (("n_docs", n_docs), ("vocab_size", vocab_size)):
        if isinstance(value, str):
            raise TypeError(f"prepare_topics.{name} must be a count or 'all', got {value!r}")
        check_int(value, f"prepare_topics.{name}", minimum=1, allow_none=True)
    check_int(min_tokens, "prepare_topics.min_tokens", minimum=0)
    if isinstance(max_df, bool) or not isinstance(max_df, numbers.Real):
        raise TypeError(f"prepare_topics.max_df must be a number, got {type(max_df).__name__}")
    if not 0 < max_df <= 1:
        raise ValueError(f"prepare_topics.max_df must be in (0, 1], got {max_df}")


def sample_documents(lengths: np.ndarray, *, n_docs: int | None, min_tokens: int,
                     rng) -> np.ndarray:
    """Sorted row indices of ``n_docs`` random documents with at least ``min_tokens`` tokens."""
    eligible = np.flatnonzero(lengths >= min_tokens)
    if n_docs is None:
        if eligible.size == 0:
            raise ValueError(f"no document has at least {min_tokens} word tokens: lower "
                             "prepare_topics.min_tokens (or prepare_topics.min_token_length, "
                             "or loosen prepare_topics.stop_words)")
        return eligible
    if eligible.size < n_docs:
        raise ValueError(f"only {eligible.size} of {lengths.size} documents have at least "
                         f"{min_tokens} word tokens; cannot sample {n_docs}: lower "
                         f"prepare_topics.n_docs (to {eligible.size} at most, or all) or "
                         "prepare_topics.min_tokens")
    return np.sort(as_generator(rng).choice(eligible, size=n_docs, replace=False))


def check_public_vocabulary(words: Sequence[str],
                            documents: TextDocuments | BagOfWordsDocuments) -> None:
    """Every word of a public vocabulary must be one the documents' tokenizer can give: a
    lower-case ``[a-z]+`` run for text (a bag of words: any type) of at least the minimum
    length, not a stop word; otherwise its column would be empty by construction."""
    tokenizer = documents.tokenizer
    text = isinstance(documents, TextDocuments)
    bad = [w for w in words if not (tokenizer(w) == [w] if text else tokenizer.keeps(w))]
    if bad:
        raise ValueError(f"the public vocabulary (prepare_topics.public_vocab) lists "
                         f"{len(bad)} word(s) the tokenizer never gives, e.g. {bad[:5]}: words "
                         "are lower-case runs of a-z at least prepare_topics.min_token_length "
                         "long and not in prepare_topics.stop_words")


def build_topic_counts(documents: TextDocuments | BagOfWordsDocuments, *, n_docs: int | None,
                       min_tokens: int, vocab_size: int | None, max_df: float, seed,
                       extra_summary: dict | None = None,
                       public_vocabulary: Sequence[str] | None = None) -> TopicCounts:
    """Sample documents and build their document-by-word counts (module docstring).

    ``public_vocabulary``: the columns' words, fixed in advance (in the order given: use
    :func:`data_prep.vocabulary.read_word_list`, which sorts them); ``vocab_size`` and
    ``max_df`` then choose nothing.
    """
    check_topic_params(n_docs=n_docs, min_tokens=min_tokens, vocab_size=vocab_size,
                       max_df=max_df)
    if len(documents.ids) == 0:
        raise ValueError("the corpus is empty: no documents were read (check "
                         "prepare_topics.input and prepare_topics.format)")
    if public_vocabulary is not None:
        check_public_vocabulary(public_vocabulary, documents)
    rows = sample_documents(documents.lengths, n_docs=n_docs, min_tokens=min_tokens, rng=seed)
    sample_counts, types = documents.counts_for(rows)
    if public_vocabulary is not None:
        vocabulary = [str(w) for w in public_vocabulary]
        counts = public_columns(sample_counts, types, vocabulary)
    else:
        columns = select_vocabulary(sample_counts, types, size=vocab_size, max_df=max_df)
        counts = sample_counts[:, columns].tocsr()
        counts.sort_indices()
        vocabulary = [types[c] for c in columns]
    summary = topic_summary(
        counts, sample_counts=sample_counts, corpus_lengths=documents.lengths,
        n_eligible=int(np.count_nonzero(documents.lengths >= min_tokens)), max_df=max_df,
        extra=extra_summary)
    return TopicCounts(counts=counts, doc_ids=[documents.ids[r] for r in rows],
                       vocabulary=vocabulary, summary=summary)
