"""The pipeline's names of the variational fits, distinct from the Gibbs methods' names.

A :class:`lpp.vi.VIResult` is a :class:`lpp.inference.ChainResult` already (its Gamma factors'
means stand in as a single "sample", ``mu_hat`` is ``E_q[mu]``, the log joint of that sample
is the final objective: the tracked bound for the collapsed CAVI, the authors' surrogate for
theirs). The pipeline saves it under a name of its own (``result.save(out_dir, method=name,
...)``), so that the variational and Gibbs fits of one privacy step are separate series of the
score tables.
"""
from __future__ import annotations

import warnings

from lpp.inference.result import FitResult
from lpp.vi.driver import VIResult

#: the pipeline's names of the variational methods (distinct from the Gibbs methods' names)
#: and the :func:`lpp.vi.fit_variational` method each runs
PIPELINE_METHODS = {"collapsed_cavi": "collapsed", "paper_cavi": "bessel",
                    "naive_cavi": "naive"}


def as_fit_result(result: VIResult, method: str) -> FitResult:
    """``result.as_fit(method)`` (:meth:`lpp.vi.VIResult.as_fit`), with a FutureWarning: the
    name of an earlier release, to be removed; ``result.save(out_dir, method=method, ...)``
    saves a variational fit."""
    warnings.warn("lpp.vi.fits.as_fit_result(result, method) is result.as_fit(method); the "
                  "name will be removed: save a variational fit with result.save(out_dir, "
                  "data=..., method=method, extra=...)", FutureWarning, stacklevel=2)
    if not isinstance(result, VIResult):
        raise TypeError(f"result must be a VIResult, got {type(result).__name__}")
    return result.as_fit(method)
