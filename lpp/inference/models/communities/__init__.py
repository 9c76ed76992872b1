"""The community model (the mixed-membership stochastic block model as Poisson factorization),
in one folder: the model (:mod:`~lpp.inference.models.communities.model`:
:class:`CommunityModel`) and its compiled allocation and membership scan
(:mod:`~lpp.inference.models.communities.kernels`).
"""
from lpp.inference.models.communities.model import CommunityModel

__all__ = ["CommunityModel"]
