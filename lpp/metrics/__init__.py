"""Evaluation metrics: reconstruction error, topic coherence, top words, topic alignment.

- :func:`mae` — mean absolute error of estimated rates against the true counts.
- :func:`top_words` — each topic's highest-weight words (deterministic ties).
- :func:`npmi`, :func:`mimno_coherence` — coherence of top words against a reference
  corpus by document co-occurrence; :func:`mean_over_topics` averages them.
- :func:`document_frequencies`, :func:`co_document_frequencies`, :class:`ReferenceCorpus`
  — the document counts behind the coherence scores.
- :func:`align_topics` — Hungarian matching of inferred to true topics.
"""
from lpp.metrics.accuracy import mae
from lpp.metrics.alignment import TopicAlignment, align_topics, topic_distances
from lpp.metrics.coherence import (
    ReferenceCorpus,
    co_document_frequencies,
    document_frequencies,
    mean_over_topics,
    mimno_coherence,
    npmi,
)
from lpp.metrics.topics import top_words

__all__ = [
    "mae",
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
