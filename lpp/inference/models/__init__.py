"""Poisson factorization models that plug into the private Gibbs sampler."""
from lpp.inference.models.base import Observed, PoissonFactorization
from lpp.inference.models.communities import CommunityModel
from lpp.inference.models.cp import CPTensorModel
from lpp.inference.models.topics import TopicModel

__all__ = ["CPTensorModel", "CommunityModel", "Observed", "PoissonFactorization", "TopicModel"]
