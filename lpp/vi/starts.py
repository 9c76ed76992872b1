"""The dispersed start of a Gibbs chain (``init=dispersed_start``): a draw around a variational
fit, different for every seed.

A chain started from one model sweep on ``max(y_tilde, 0)`` (``init="data"``) begins with all
of the noise's positive mass in its rates; one started at a deterministic fit begins where
every other chain begins, so their agreement proves nothing. The dispersed start avoids both:
a cheap deterministic fit of the data the chain targets (the collapsed CAVI of :mod:`lpp.vi`,
which models the noise exactly), itself started from a seed-dependent prior draw, then one
draw of every latent from an over-dispersed version of that fit's ``q``: the Gamma with
``q``'s mean and :data:`DISPERSION` times its variance (shape and rate both divided by it),
after Gelman & Rubin's advice to start chains over-dispersed.

Which fit: a private chain that models the noise (collapsed, Bessel) starts from the collapsed
CAVI of ``y_tilde``; the naive chain from the CAVI of ``max(y_tilde, 0)`` (its own target);
the non-private chain from the CAVI of the true counts. The CAVI's rates lie below the
posterior's total rate (about ten times on text-like data at epsilon/N = 1), so the chain
climbs to it from below; ``docs/convergence.md`` (*Dispersed starts*) measures how soon it is
stationary from each start.
"""
from __future__ import annotations

import numpy as np

from lpp.randomness import Tag, derive_seed
from lpp.inference.models.base import Observed, PoissonFactorization
from lpp.inference.privacy import NoiseLevels
from lpp.inference.count_sources import PrivateCounts
from lpp.validation import densify
from lpp.vi.driver import VIOptions, fit_variational, fit_variational_nonprivate

__all__ = ["DISPERSION", "DISPERSED_FIT_ITER", "DISPERSED_EM_SWEEPS", "STARTS", "chain_start",
           "dispersed_start"]

#: the start's variance relative to the fit's ``q`` (mean kept): > 1 over-disperses
DISPERSION = 4.0
#: CAVI iterations of the start's fit at most (it stops earlier at the CAVI's tolerance)
DISPERSED_FIT_ITER = 100
#: EM-like sweeps on ``max(y_tilde, 0)`` that find the components before the CAVI
DISPERSED_EM_SWEEPS = 50


def _alpha(noise: NoiseLevels):
    """``alpha`` as the CAVI takes it: a scalar, one per row, or one per entry."""
    if noise.values.size == 1:
        return float(noise.values[0])
    per_row = noise.per_row()
    if per_row is not None:
        return per_row.reshape((-1,) + (1,) * (len(noise.shape) - 1))
    return noise.full()


def approximate_posterior(model: PoissonFactorization, source, observed: Observed,
                          seed: int) -> dict:
    """The deterministic fit of the dispersed start: ``q`` (a dict of
    :class:`lpp.vi.GammaFactor`) of the CAVI of the chain's target, from a prior draw keyed by
    ``seed``."""
    data = np.ma.masked_array(densify(source.data), ~observed.is_observed)
    run = VIOptions(max_iter=DISPERSED_FIT_ITER, em_sweeps=DISPERSED_EM_SWEEPS)
    try:
        if not isinstance(source, PrivateCounts):
            return fit_variational_nonprivate(data, model, run=run, rng=seed).q
        if source.noise is None or not source.step.models_noise:
            return fit_variational(data, None, model, method="naive", run=run, rng=seed).q
        return fit_variational(data, _alpha(source.noise), model, method="collapsed", run=run,
                               rng=seed).q
    except TypeError as exc:
        if "adapter" not in str(exc):
            raise
        raise ValueError(f"the dispersed start begins at a variational fit, which the "
                         f"{model.name!r} model does not have (lpp.vi adapters: topics, "
                         "communities, cp); use init='data' or 'em'") from exc


def dispersed_start(model: PoissonFactorization, source, observed: Observed,
                    seed: int) -> dict:
    """The chain's start ``init=dispersed_start``: one over-dispersed draw around the CAVI fit.

    A start of :func:`lpp.inference.fit_private` (and of the other fit functions and
    :class:`~lpp.inference.GibbsSampler`), which call it with their model, count source,
    observed entries and base seed; settings that name starts by string (the estimators, the
    pipeline's ``init: dispersed``) reach it through :func:`chain_start`.

    Parameters
    ----------
    model : PoissonFactorization
        The chain's model (one with an :mod:`lpp.vi` adapter).
    source : PrivateCounts or TrueCounts
        The chain's counts.
    observed : Observed
        The entries that carry likelihood.
    seed : int
        The chain's base seed: the fit's prior draw and the start's draw are keyed by it, so
        the same seed gives the same start bit for bit, and other seeds other starts.

    Returns
    -------
    dict of ndarray
        Every latent, checked by the model.
    """
    q = approximate_posterior(model, source, observed, derive_seed(seed, Tag.INIT_FIT))
    gen = np.random.default_rng(derive_seed(seed, Tag.INIT_DRAW))
    tiny = np.finfo(np.float64).tiny
    state = {}
    for name in sorted(q):  # a fixed order of draws
        shape = q[name].shape / DISPERSION
        rate = q[name].rate / DISPERSION
        state[name] = np.maximum(gen.gamma(shape) / rate, tiny)
    return model.check_state(state, observed.shape)


#: the starts computed above :mod:`lpp.inference`, by the name settings give them
STARTS = {"dispersed": dispersed_start}


def chain_start(init):
    """``init`` as the fit functions take it: a name of :data:`STARTS` becomes its function;
    anything else (``"data"``, ``"em"``, ``"prior"``, a dict of latents, a callable) is passed
    on unchanged for the fit functions to check."""
    if isinstance(init, str) and init in STARTS:
        return STARTS[init]
    return init
