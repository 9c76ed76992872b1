"""A variational fit in the shape of a Gibbs fit, so that :func:`lpp.fits.save_fit` stores it
and the evaluation scores it like any other method.

The scorers read ``mu_hat`` and the saved samples of the latents (S x ...). A variational fit
has no samples; its Gamma factors' means stand in as a single "sample", and ``mu_hat`` is
``E_q[mu]`` (for the topic model ``E_q[theta] E_q[phi]``, the factors being independent). The
log joint of that one sample is replaced by the fit's final objective (the tracked bound for
the collapsed CAVI, the authors' surrogate for theirs); ``fit.json`` says which.
"""
from __future__ import annotations

import numpy as np

from lpp.inference.result import FitResult
from lpp.vi.driver import VIResult

#: the pipeline's names of the variational methods (distinct from the Gibbs methods' names)
#: and the :func:`lpp.vi.fit_variational` method each runs
PIPELINE_METHODS = {"collapsed_cavi": "collapsed", "paper_cavi": "bessel-mode",
                    "naive_cavi": "naive"}


def _iteration_times(result: VIResult) -> np.ndarray:
    times = np.array(result.iter_seconds, dtype=float)
    times[0] += max(result.seconds - float(times.sum()), 0.0)
    return times


def as_fit_result(result: VIResult, method: str) -> FitResult:
    """``result`` as a :class:`lpp.inference.FitResult` with one saved "sample" (the means).

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
    samples = {name: mean[None] for name, mean in result.means().items()}
    return FitResult(
        method=method, model=result.model, seed=result.seed, n_iter=result.iterations,
        burn_in=result.iterations - 1, thin=1, iterations_done=result.iterations,
        interrupted=result.interrupted,
        saved_iterations=np.array([result.iterations], dtype=np.int64), samples=samples,
        mu_hat=np.asarray(result.mu_hat), log_joint=np.array([result.objective[-1]]),
        iter_seconds=_iteration_times(result), state={}, aux={},
        engine=result.engine)
