"""Fused engines: a privacy step and a model's allocation done in one pass.

The privacy steps (:mod:`lpp.inference.privacy`) and the models (:mod:`lpp.inference.models`)
know nothing of each other. Where a particular pair admits a faster joint sweep, an engine here
provides it, and the chain (:class:`lpp.inference.GibbsSampler`) chooses it by the capabilities
that the model and the step *declare* (``model.capabilities``, ``step.capabilities``) — never by
their types. Every engine targets the same posterior as the plain sweep (privacy step, then
``model.step``):

* :class:`SparseTopicEngine` — the collapsed privacy step (``"exact_conditional"``) fused with
  the allocation of a ``"row_column_factors"`` model, alpha constant within rows; its random
  streams differ from the plain sweep's.
* :class:`KnownCountsTopicEngine` — counts that are known (``"known_counts"``: the naive step,
  and the true counts of a non-private chain) allocated over their non-zero entries only; it
  draws exactly what the plain sweep draws.
* :class:`CollapsedPhiTopicEngine` — known counts under ``TopicModel(K, collapse_phi=True)``:
  a Gibbs scan of every token's topic with the topics' directions summed out, ``phi`` drawn
  only where it is read; the same posterior, its own random streams.
"""
from __future__ import annotations

from lpp.inference.engines.collapsed_phi import CollapsedPhiTopicEngine
from lpp.inference.engines.known_topics import KnownCountsTopicEngine
from lpp.inference.engines.sparse_topics import SparseTopicEngine

#: the fused engines, tried in order (the opt-in one first: it applies only when asked for)
ENGINES = (CollapsedPhiTopicEngine, SparseTopicEngine, KnownCountsTopicEngine)


def select_engine(model, step, noise):
    """The first fused engine that applies to ``model``, ``step`` and ``noise``, or None.

    ``step`` is what declares how the counts of a sweep are drawn: the privacy step of a
    private chain, the count source (:class:`~lpp.inference.count_sources.TrueCounts`) of a
    non-private one. An engine is built with ``engine.for_source(source, is_observed)``.
    """
    for engine in ENGINES:
        if engine.applies(model, step, noise):
            return engine
    return None


__all__ = ["ENGINES", "CollapsedPhiTopicEngine", "KnownCountsTopicEngine", "SparseTopicEngine",
           "select_engine"]
