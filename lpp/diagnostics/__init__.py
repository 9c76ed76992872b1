"""Convergence diagnostics of Gibbs chains with ArviZ: InferenceData, R-hat, ESS, trace plots.

Several chains of the same model on the same data (different seeds) are exported to
``arviz.InferenceData`` (ArviZ 0.x; an ``xarray.DataTree`` of the same groups under ArviZ
1.x), so that the field's standard diagnostics apply unchanged: split R-hat (Vehtari et al.
2021) and the bulk and tail effective sample sizes. Both ArviZ lines give the same numbers
(how: :mod:`~lpp.diagnostics.export`).

Only quantities that do not depend on how the components are labelled are exported: a
topic or community model is invariant to permuting its components, so chains that land on
the same mode with their components in another order must still agree. The exported
quantities, one value per saved sample, are

``log_joint``
    ``log p(Z, y, y_tilde)`` (``log p(Z, y)`` without a noise model) as the sampler recorded it;
``total_rate``
    ``sum mu`` over all entries (the diagonal of a network is 0 by construction);
``mu``
    the rates ``mu`` of a few fixed entries (``entry`` dimension, labelled ``"i,j"`` or by
    the names of their row and column).

``sample_stats`` holds the log joint again under ArviZ's name ``lp``. The ``draw``
coordinate is the 1-based sweep of each saved sample.

R-hat says *that* chains disagree, not why. :func:`chain_agreement` says which of two reasons
holds, quantity by quantity, with the numbers behind it: a chain still **drifting** (Geweke's
z of its own trace, the mean of its first 10 % against its last 50 %, beyond a bound set for a
5 % false-alarm rate over the chains; more sweeps are needed), or chains that are each
stationary yet sit at different levels, **modes** (their spread is spread of the posterior as
the sampler sees it: more chains, not more sweeps, show how much). Otherwise they **agree**, or
the chains are too short to tell (**unclear**).

The package: :mod:`~lpp.diagnostics.export` (InferenceData), :mod:`~lpp.diagnostics.convergence`
(R-hat, ESS, drift, agreement) and :mod:`~lpp.diagnostics.traces` (the trace figure). ArviZ
is imported lazily (importing it costs about a second), so ``import lpp`` does not pay for it.
"""
from lpp.diagnostics import convergence as _convergence
from lpp.diagnostics.convergence import *  # noqa: F403 (its __all__: the verdicts and their bars)
from lpp.diagnostics.export import (
    QUANTITIES,
    arviz_major,
    chain_quantities,
    default_entries,
    entry_labels,
    is_inference_data,
    rate_samples,
    to_inference_data,
)
from lpp.diagnostics.traces import plot_traces

__all__ = sorted([*_convergence.__all__, "QUANTITIES", "arviz_major", "chain_quantities",
                  "default_entries", "entry_labels", "is_inference_data", "plot_traces",
                  "rate_samples", "to_inference_data"])
