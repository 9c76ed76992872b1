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
from lpp.metrics import accuracy, alignment, baselines, coherence, predictive, topics
# each module's __all__ is its public names; the package's are theirs together
from lpp.metrics.accuracy import *  # noqa: F403
from lpp.metrics.alignment import *  # noqa: F403
from lpp.metrics.baselines import *  # noqa: F403
from lpp.metrics.coherence import *  # noqa: F403
from lpp.metrics.predictive import *  # noqa: F403
from lpp.metrics.topics import *  # noqa: F403

__all__ = [*accuracy.__all__, *baselines.__all__, *predictive.__all__, *topics.__all__,
           *coherence.__all__, *alignment.__all__]
