"""The privatized count ``X = Y + tau``, ``Y ~ Pois(mu)``, ``tau ~ 2Geo(alpha)``: its log-pmf in
closed form (the predictive density of a private model at privatized data)."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from lpp.validation import broadcast_params, finish, integer_array, real_array

from .poisson import _log_sum_down, poisson_logcdf_nb, poisson_logpmf_nb, poisson_logsf_nb

__all__ = ["privatized_poisson_logpmf", "privatized_poisson_logpmf_at_nb",
           "privatized_poisson_logpmf_nb"]


@njit(cache=True)
def privatized_poisson_logpmf_nb(x, mu, alpha):
    """``log P(X = x)`` of ``X = Y + tau``, ``Y ~ Pois(mu)``, ``tau ~ 2Geo(alpha)``: the
    scalar twin of :func:`privatized_poisson_logpmf` (x integer-valued, mu >= 0, alpha in
    (0, 1); no checks)."""
    return privatized_poisson_logpmf_at_nb(x, mu, alpha, math.log(alpha),
                                           math.log1p(-alpha) - math.log1p(alpha))


@njit(cache=True)
def privatized_poisson_logpmf_at_nb(x, mu, alpha, log_a, log_c):
    """:func:`privatized_poisson_logpmf_nb` given ``log_a = log(alpha)`` and
    ``log_c = log((1 - alpha) / (1 + alpha))``, for loops over many entries at one ``alpha``
    (at a non-positive ``x``, the two logs would be most of the cost)."""
    if x <= 0:  # every y >= 0 >= x: the noise's geometric tail times the Poisson's mgf
        return log_c - x * log_a - (1.0 - alpha) * mu
    high = -x * log_a - (1.0 - alpha) * mu + poisson_logsf_nb(x, alpha * mu)  # y > x
    lam = mu / alpha
    if x > lam:  # the mean mu / alpha below x: lam + log cdf has no cancellation
        low = x * log_a - mu + lam + poisson_logcdf_nb(x, lam)
    else:  # the terms (x! / j!) lam^(j - x) shrink going down from j = x
        low = poisson_logpmf_nb(x, mu) + _log_sum_down(x, lam)
    top = max(low, high)
    if top == -math.inf:
        return -math.inf
    return log_c + top + math.log1p(math.exp(min(low, high) - top))


@njit(cache=True)
def _kernel(x, mu, alpha, out):
    log_a = math.log(alpha)
    log_c = math.log1p(-alpha) - math.log1p(alpha)
    for i in range(out.size):
        out[i] = privatized_poisson_logpmf_at_nb(x[i], mu[i], alpha, log_a, log_c)


def privatized_poisson_logpmf(x, mu, alpha: float) -> np.ndarray:
    """``log P(X = x)`` of ``X = Y + tau``, ``Y ~ Pois(mu)``, ``tau ~ 2Geo(alpha)``, entrywise.

    The sum over the true count ``y`` in closed form (``c = (1 - alpha) / (1 + alpha)``):
    for ``x <= 0`` every ``y >= x``, so it is ``c alpha^-x exp(-(1 - alpha) mu)``; for
    ``x > 0`` it splits at ``y = x`` into ``c alpha^-x exp(-(1 - alpha) mu)
    P(Pois(alpha mu) > x)`` (``y > x``) and ``c sum_{y <= x} Pois(y; mu) alpha^(x - y)``,
    the latter as ``Pois(x; mu) sum_{j <= x} (x! / j!) (mu / alpha)^(j - x)`` where
    ``x <= mu / alpha`` (no cancellation at any alpha) and through the Poisson cdf at mean
    ``mu / alpha`` below ``x``.

    Parameters
    ----------
    x : array_like of int
        Privatized counts.
    mu : array_like of float
        Their Poisson rates (finite, >= 0), broadcast against ``x``.
    alpha : float
        The noise level in (0, 1).

    Returns
    -------
    ndarray of float64
        The log probabilities, of the broadcast shape of ``x`` and ``mu``.

    Raises
    ------
    ValueError, TypeError
        For non-integer ``x``, a negative or non-finite ``mu``, or ``alpha`` outside (0, 1).
    """
    x = integer_array(x, "x")
    mu = real_array(mu, "mu", low=0.0)
    alpha = float(real_array(alpha, "alpha", low=0.0, low_open=True, high=1.0,
                             high_open=True))
    (x, mu), shape = broadcast_params((x, mu), ("x", "mu"))
    out = np.empty(x.size)
    _kernel(x, mu, alpha, out)
    return finish(out, shape)
