"""Scores of a fit against the true counts: the paper's measures for each case study.

These read the true counts, so only evaluation stages call them — never an inference stage.

* topics (Sec. 5.1): reconstruction MAE of ``mu_hat`` over all entries; NPMI and Mimno
  coherence of each topic's top words with the true counts as reference corpus, averaged
  over topics for each saved sample of ``phi``, then over samples;
* communities (Sec. 5.2): MAE over all off-diagonal entries (the diagonal is never modelled)
  and over the held-out entries alone.
"""
from __future__ import annotations

import numpy as np

from lpp.metrics import ReferenceCorpus, mae, mean_over_topics, mimno_coherence, npmi, top_words


def topic_scores(fit, true_counts, *, reference: ReferenceCorpus | None = None,
                 n_top: int = 10) -> dict:
    """MAE, NPMI and coherence of a topic-model fit (``fit.samples["phi"]``: S x K x V)."""
    phi = fit.samples.get("phi")
    if phi is None or phi.ndim != 3:
        raise ValueError("the fit holds no saved samples of phi (S x K x V)")
    if fit.mu_hat.shape != tuple(true_counts.shape):
        raise ValueError(f"mu_hat has shape {fit.mu_hat.shape}, the counts {true_counts.shape}")
    reference = reference if reference is not None else ReferenceCorpus(true_counts)
    npmi_per_sample = [mean_over_topics(npmi(top_words(p, n_top), reference)) for p in phi]
    coherence_per_sample = [mean_over_topics(mimno_coherence(top_words(p, n_top), reference))
                            for p in phi]
    return {"mae": mae(fit.mu_hat, true_counts),
            "npmi": float(np.mean(npmi_per_sample)),
            "coherence": float(np.mean(coherence_per_sample)),
            "n_samples": int(phi.shape[0])}


def community_scores(fit, true_counts, heldout: np.ndarray | None) -> dict:
    """MAE over all off-diagonal entries (reconstruction), and over the held-out ones if any."""
    shape = tuple(true_counts.shape)
    if fit.mu_hat.shape != shape or shape[0] != shape[1]:
        raise ValueError(f"mu_hat {fit.mu_hat.shape} and counts {shape} must be the same square shape")
    off_diagonal = ~np.eye(shape[0], dtype=bool)
    held = np.zeros(shape, dtype=bool) if heldout is None else np.asarray(heldout, dtype=bool)
    scores = {"mae": mae(fit.mu_hat, true_counts, off_diagonal)}
    if held.any():
        scores["heldout_mae"] = mae(fit.mu_hat, true_counts, held & off_diagonal)
    return scores
