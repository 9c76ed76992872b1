"""Locally private Gibbs samplers for Poisson factorization (Schein et al., ICML 2019).

* :func:`fit_private` — posterior inference from privatized counts ``y_tilde`` and the
  mechanism's ``alpha`` only (methods ``"collapsed"``, ``"bessel"``, ``"naive"``);
* :func:`fit_nonprivate` — the same models fitted to true counts (reference method);
* models: :class:`TopicModel`, :class:`CommunityModel`, :class:`CPTensorModel`, or your own
  subclass of :class:`PoissonFactorization`;
* :mod:`lpp.inference.privacy` — the model-agnostic privacy step on its own.
"""
from lpp.inference.driver import FitResult, GibbsSampler, fit_nonprivate, fit_private, make_model
from lpp.inference.models import (
    CommunityModel,
    CPTensorModel,
    Observed,
    PoissonFactorization,
    TopicModel,
)
from lpp.inference.privacy import BesselPrivacy, CollapsedPrivacy, PrivacyStep, sample_true_counts

__all__ = [
    "BesselPrivacy", "CPTensorModel", "CollapsedPrivacy", "CommunityModel", "FitResult",
    "GibbsSampler", "Observed", "PoissonFactorization", "PrivacyStep", "TopicModel",
    "fit_nonprivate", "fit_private", "make_model", "sample_true_counts",
]
