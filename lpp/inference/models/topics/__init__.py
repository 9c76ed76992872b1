"""The topic model (LDA as Poisson matrix factorization), in one folder: the model
(:mod:`~lpp.inference.models.topics.model`: :class:`TopicModel`, and :class:`FixedTopicModel`
with the topics given), its compiled allocation (:mod:`~lpp.inference.models.topics.kernels`)
and the partially collapsed step of ``collapse_theta``
(:mod:`~lpp.inference.models.topics.reassign`).

The fused engines that run its sweeps faster (:mod:`lpp.inference.engines`) live apart: they
pair a privacy step with any model that declares the capabilities they rely on, and import the
privacy side, which a model never does.
"""
from lpp.inference.models.topics.model import FixedTopicModel, TopicModel

__all__ = ["FixedTopicModel", "TopicModel"]
