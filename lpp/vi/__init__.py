"""Coordinate-ascent variational inference for (locally private) Poisson factorization.

* :func:`fit_variational` — from privatized counts: the exact collapsed CAVI (``"collapsed"``),
  the CAVI of Schofield et al. (``"bessel"``), or standard CAVI on ``max(y_tilde, 0)``
  (``"naive"``) — each named, as on the Gibbs side, after the privacy step it is built on.
  The result is a :class:`lpp.inference.ChainResult` (:class:`VIResult`), so a variational and
  a Gibbs fit save, score and diagnose through the same calls;
* :func:`fit_variational_nonprivate` — standard CAVI on true counts; both take how to run as
  ``run=VIOptions(...)``;
* :func:`collapsed_bound` — the exact bound of any Gamma factors, to compare methods;
* :class:`VariationalModel` — the per-model protocol (adapters for the topic, community and CP
  models of :mod:`lpp.inference`).

A result's ``to_init()`` gives start values for the Gibbs samplers
(``lpp.inference.fit_private(..., run=RunOptions(init=result.to_init()))``);
:func:`dispersed_start` starts each chain from its own over-dispersed draw around such a fit
(``fit_private(..., run=RunOptions(init=dispersed_start))``). The derivation is in
``docs/vi.md``.
"""
from lpp.vi.adapters import (
    CommunityVI,
    CPVI,
    FixedTopicVI,
    TopicVI,
    VariationalModel,
    variational_model,
)
from lpp.vi.counts import bessel_mode_point_nb, count_factor
from lpp.vi.driver import (
    METHODS,
    VIOptions,
    VIResult,
    collapsed_bound,
    fit_variational,
    fit_variational_nonprivate,
)
from lpp.vi.gamma import GammaFactor, gamma_elbo_term
from lpp.vi.paper import delta_log_mean
from lpp.vi.starts import STARTS, chain_start, dispersed_start

__all__ = [
    "CPVI", "CommunityVI", "FixedTopicVI", "GammaFactor", "METHODS", "TopicVI", "VIOptions",
    "VIResult", "VariationalModel", "STARTS",
    "bessel_mode_point_nb", "chain_start", "collapsed_bound", "count_factor", "delta_log_mean",
    "dispersed_start",
    "fit_variational", "fit_variational_nonprivate", "gamma_elbo_term", "variational_model",
]
