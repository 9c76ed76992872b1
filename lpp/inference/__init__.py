"""Locally private Gibbs samplers for Poisson factorization (Schein et al., ICML 2019).

* :func:`fit_private` — posterior inference from privatized counts ``y_tilde`` and the
  mechanism they were privatized with only; :func:`fit_nonprivate` — the same models fitted to
  true counts (the reference method). :class:`RunOptions` holds how each chain runs (its
  schedule, start, checkpoint and what it keeps); ``chains=m`` runs m chains on seeds derived
  from ``rng`` (:class:`FitResult`, one :class:`ChainResult` per chain; :mod:`lpp.diagnostics`
  gives ArviZ's R-hat and ESS); ``run=RunOptions(init=lpp.vi.dispersed_start)`` starts each
  from a draw around a CAVI fit, in a different place per seed.
* Two kinds of plug-in, side by side and unaware of each other: **models**
  (:mod:`lpp.inference.models`: :class:`TopicModel`, :class:`CommunityModel`,
  :class:`CPTensorModel`, :class:`FixedTopicModel` (topics given), or your own
  :class:`PoissonFactorization`) and **privacy steps**
  (:mod:`lpp.inference.privacy`: :class:`CollapsedPrivacy`, :class:`BesselPrivacy`,
  :class:`NaivePrivacy`, or your own :class:`PrivacyStep`). Pass either as an instance or by
  name. The steps run the geometric mechanism; another mechanism plugs in with its own noise
  model and steps (:func:`register_mechanism`).
* :mod:`lpp.inference.engines` — engines that fuse a step with a model's allocation where their
  declared capabilities allow (the sparse topic engine of the collapsed step; the known-counts
  engine of the naive step and the non-private chain).
* :func:`checkpoints_from_fit` — run a saved fit's chains on (a larger ``n_iter`` or burn-in)
  as if they had never stopped (:mod:`lpp.inference.continuation`).
* :class:`GibbsSampler` — one chain, sweep by sweep; :mod:`lpp.testing.geweke` — the
  joint-distribution test's simulators, driving that same chain.
"""
from lpp.inference.chain import EM_INIT_SWEEPS, GibbsSampler
from lpp.inference.continuation import checkpoint_from_fit, checkpoints_from_fit
from lpp.inference.fit import fit_nonprivate, fit_private
from lpp.inference import models as _models
from lpp.inference.models import *  # noqa: F403 (its __all__: the models and their factories)
from lpp.inference.privacy import (
    PRIVACY_STEPS,
    BesselPrivacy,
    CollapsedPrivacy,
    NaivePrivacy,
    PrivacyStep,
    make_privacy_step,
    register_mechanism,
    sample_true_counts,
)
from lpp.inference.result import ChainResult, FitResult
from lpp.inference.runner import RunOptions

__all__ = sorted([
    "EM_INIT_SWEEPS", "PRIVACY_STEPS", "BesselPrivacy", "ChainResult", "CollapsedPrivacy",
    "FitResult", "GibbsSampler", "NaivePrivacy", "PrivacyStep", "RunOptions",
    "checkpoint_from_fit", "checkpoints_from_fit", "fit_nonprivate", "fit_private",
    "make_privacy_step", "register_mechanism", "sample_true_counts", *_models.__all__,
])
