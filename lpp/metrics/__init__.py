"""Evaluation metrics: reconstruction error, topic coherence, top words, topic alignment.

- :func:`mae` — mean absolute error of estimated rates against the true counts.
- :func:`observed_mae`, :func:`heldout_mae`, :func:`network_masks` — a network's MAE on the
  observed (reconstruction) or held-out (link prediction) off-diagonal entries.
- :func:`zeros_mae`, :func:`oracle_mae`, :func:`mae_baselines` — the reference rows of an
  MAE table: predicting zero everywhere, and predicting the true rates.
- :func:`predictive_log_likelihood`, :func:`pointwise_predictive_log_likelihood` — the
  Poisson log predictive density of saved rate samples, a proper score beside MAE.
- :func:`top_words` — each topic's highest-weight words (deterministic ties).
- :func:`npmi`, :func:`mimno_coherence` — coherence of top words against a reference
  corpus by document co-occurrence; :func:`mean_over_topics` averages them.
- :func:`document_frequencies`, :func:`co_document_frequencies`, :class:`ReferenceCorpus`
  — the document counts behind the coherence scores.
- :func:`align_topics` — Hungarian matching of inferred to true topics.
"""
from lpp.metrics.accuracy import mae
from lpp.metrics.alignment import TopicAlignment, align_topics, topic_distances
from lpp.metrics.baselines import (
    heldout_mae,
    mae_baselines,
    network_masks,
    observed_mae,
    oracle_mae,
    zeros_mae,
)
from lpp.metrics.coherence import (
    ReferenceCorpus,
    co_document_frequencies,
    document_frequencies,
    mean_over_topics,
    mimno_coherence,
    npmi,
)
from lpp.metrics.predictive import pointwise_predictive_log_likelihood, predictive_log_likelihood
from lpp.metrics.topics import top_words

__all__ = [
    "mae",
    "network_masks",
    "observed_mae",
    "heldout_mae",
    "zeros_mae",
    "oracle_mae",
    "mae_baselines",
    "predictive_log_likelihood",
    "pointwise_predictive_log_likelihood",
    "top_words",
    "ReferenceCorpus",
    "document_frequencies",
    "co_document_frequencies",
    "npmi",
    "mimno_coherence",
    "mean_over_topics",
    "TopicAlignment",
    "align_topics",
    "topic_distances",
]
