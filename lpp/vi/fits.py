"""A variational fit under the pipeline's name, its wall time with the start.

A :class:`lpp.vi.VIResult` is a :class:`lpp.inference.ChainResult` already (its Gamma factors'
means stand in as a single "sample", ``mu_hat`` is ``E_q[mu]``, the log joint of that sample
is the final objective: the tracked bound for the collapsed CAVI, the authors' surrogate for
theirs). The pipeline saves it under a name of its own, so that the variational and Gibbs
fits of one privacy step are separate series of the score tables.
"""
from __future__ import annotations

from dataclasses import fields

import numpy as np

from lpp.inference.result import ChainResult
from lpp.vi.driver import VIResult

#: the pipeline's names of the variational methods (distinct from the Gibbs methods' names)
#: and the :func:`lpp.vi.fit_variational` method each runs
PIPELINE_METHODS = {"collapsed_cavi": "collapsed", "paper_cavi": "bessel",
                    "naive_cavi": "naive"}


def _iteration_times(result: VIResult) -> np.ndarray:
    times = np.array(result.iter_seconds, dtype=float)
    times[0] += max(result.seconds - float(times.sum()), 0.0)
    return times


def as_fit_result(result: VIResult, method: str) -> ChainResult:
    """``result`` as a :class:`lpp.inference.ChainResult` with one saved "sample" (the means).

    Parameters
    ----------
    result : VIResult
        A finished variational fit (at least one iteration).
    method : str
        The name the evaluation shows for it (e.g. ``"collapsed_cavi"``), which must differ
        from the Gibbs methods' names so the two kinds are separate series.

    Returns
    -------
    FitResult
        ``n_iter = burn_in + 1 = iterations`` and one saved iteration (the last);
        ``iter_seconds`` are the CAVI iterations' times, the first with the start and set-up
        added, so that their sum (the saved fit's ``seconds_total``) is the fit's wall time.

    Raises
    ------
    TypeError
        If ``result`` is not a :class:`VIResult` or ``method`` not a string.
    ValueError
        If the fit ran no iteration or ``method`` is empty.
    """
    if not isinstance(result, VIResult):
        raise TypeError(f"result must be a VIResult, got {type(result).__name__}")
    if not isinstance(method, str) or not method:
        raise ValueError("method must be a non-empty string")
    if result.iterations < 1:
        raise ValueError("the variational fit ran no iteration: nothing to save")
    own = {f.name: getattr(result, f.name) for f in fields(ChainResult)}
    return ChainResult(**{**own, "method": method, "mu_hat": np.asarray(result.mu_hat),
                        "iter_seconds": _iteration_times(result), "state": {}, "aux": {}})
