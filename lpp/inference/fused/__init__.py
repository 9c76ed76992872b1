"""Fused engines: a privacy step and a model's allocation done in one pass.

The privacy steps (:mod:`lpp.inference.privacy`) and the models (:mod:`lpp.inference.models`)
know nothing of each other. Where a particular pair admits a faster joint sweep, an engine here
provides it, and the chain (:class:`lpp.inference.GibbsSampler`) chooses it by the capabilities
that the model and the step *declare* (``model.capabilities``, ``step.capabilities``) — never by
their types. Every engine targets the same posterior as the plain sweep (privacy step, then
``model.step``); only the random streams differ.
"""
from __future__ import annotations

from lpp.inference.fused.sparse_topics import SparseTopicEngine

#: the fused engines, tried in order
ENGINES = (SparseTopicEngine,)


def select_engine(model, step, noise):
    """The first fused engine that applies to ``model``, ``step`` and ``noise``, or None."""
    for engine in ENGINES:
        if engine.applies(model, step, noise):
            return engine
    return None


__all__ = ["ENGINES", "SparseTopicEngine", "select_engine"]
