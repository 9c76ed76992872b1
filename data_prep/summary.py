"""Summary statistics written beside each prepared matrix, for comparison with the paper."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from data_prep.vocabulary import document_frequency

#: what Schein et al. (2019, §5) report for their Enron matrices
PAPER_TOPICS = {"documents": 10_000, "vocabulary": 10_000}
PAPER_NETWORK = {"actors": 161}


def distribution(values) -> dict:
    """min / median / mean / max of a 1-d array (plain floats and ints, JSON-ready)."""
    values = np.asarray(values)
    if values.size == 0:
        return {"min": None, "median": None, "mean": None, "max": None}
    return {"min": int(values.min()), "median": float(np.median(values)),
            "mean": round(float(values.mean()), 6), "max": int(values.max())}


def _density(counts: sp.csr_array) -> float:
    cells = counts.shape[0] * counts.shape[1]
    return round(counts.nnz / cells, 8) if cells else 0.0


def topic_summary(counts: sp.csr_array, *, sample_counts: sp.csr_array,
                  corpus_lengths: np.ndarray, n_eligible: int, max_df: float,
                  extra: dict | None = None) -> dict:
    """Statistics of a document-by-word matrix and of the sample it was cut from."""
    tokens_per_doc = np.asarray(counts.sum(axis=1)).ravel()
    n_docs = counts.shape[0]
    df = document_frequency(counts) / n_docs
    sample_df = document_frequency(sample_counts) / n_docs
    sample_freq = np.asarray(sample_counts.sum(axis=0)).ravel()
    return {
        "documents": int(n_docs),
        "vocabulary": int(counts.shape[1]),
        "tokens": int(counts.sum()),
        "nonzero_entries": int(counts.nnz),
        "density": _density(counts),
        "empty_documents": int(np.count_nonzero(tokens_per_doc == 0)),
        "tokens_per_document": distribution(tokens_per_doc),
        "raw_tokens_per_document": distribution(np.asarray(sample_counts.sum(axis=1)).ravel()),
        "max_document_frequency": round(float(df.max()), 6) if df.size else None,
        "corpus_documents": int(corpus_lengths.size),
        "eligible_documents": int(n_eligible),
        "word_types_in_sample": int(np.count_nonzero(sample_freq)),
        "word_types_below_max_df": int(np.count_nonzero((sample_df < max_df) & (sample_freq > 0))),
        "paper": PAPER_TOPICS,
        **(extra or {}),
    }


def heldout_fractions(counts: np.ndarray, mask: np.ndarray) -> dict:
    """How much of the matrix a held-out mask covers (entries, emails, non-zero entries) and
    how many actors have every entry of their row and column held out."""
    total = counts.sum()
    nonzero = counts > 0
    fully = mask.all(axis=1) & mask.all(axis=0)
    return {
        "entries": round(float(mask.mean()), 6) if mask.size else 0.0,
        "counts": round(float(counts[mask].sum() / total), 6) if total else 0.0,
        "nonzero_entries": round(float((nonzero & mask).sum() / nonzero.sum()), 6)
        if nonzero.any() else 0.0,
        "actors_fully_heldout": int(fully.sum()),
    }


def network_summary(counts: np.ndarray, *, edge_stats: dict, heldout: dict,
                    extra: dict | None = None) -> dict:
    """Statistics of an actor-by-actor matrix."""
    n = counts.shape[0]
    return {
        "actors": int(n),
        "emails": int(counts.sum()),
        "nonzero_entries": int(np.count_nonzero(counts)),
        "density": round(float(np.count_nonzero(counts) / (n * n)), 8) if n else 0.0,
        "self_loop_emails": int(np.trace(counts)),
        "sent_per_actor": distribution(counts.sum(axis=1)),
        "received_per_actor": distribution(counts.sum(axis=0)),
        "heldout": heldout,
        "edges": edge_stats,
        "paper": PAPER_NETWORK,
        **(extra or {}),
    }
