"""The privatized count ``X = Y + tau``, ``Y ~ Pois(mu)``, ``tau ~ 2Geo(alpha)``: its log-pmf in
closed form (the predictive density of a private model at privatized data)."""
from __future__ import annotations

import math

import numpy as np

from .poisson import poisson_logcdf, poisson_logpmf, poisson_logsf

__all__ = ["privatized_poisson_logpmf"]


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
    x : ndarray of int
        Privatized counts.
    mu : ndarray of float
        Their Poisson rates (finite, >= 0), shaped as ``x``.
    alpha : float
        The noise level in (0, 1).

    Returns
    -------
    ndarray of float64
        The log probabilities, shaped as ``x``.
    """
    x = np.asarray(x, dtype=np.int64)
    mu = np.asarray(mu, dtype=np.float64)
    log_a = math.log(alpha)
    log_c = math.log1p(-alpha) - math.log1p(alpha)
    out = log_c - x * log_a - (1.0 - alpha) * mu
    positive = x > 0
    if positive.any():
        k, m = x[positive], mu[positive]
        lam = m / alpha
        high = -k * log_a - (1.0 - alpha) * m + poisson_logsf(k, alpha * m)
        low = np.empty(k.shape)
        above = k > lam  # the mean mu / alpha below x: lam + log cdf has no cancellation
        if above.any():
            low[above] = (k[above] * log_a - m[above] + lam[above]
                          + poisson_logcdf(k[above], lam[above]))
        near = ~above
        if near.any():
            low[near] = poisson_logpmf(k[near], m[near]) + _log_sum_down(k[near], lam[near])
        out[positive] = log_c + np.logaddexp(low, high)
    return out


def _log_sum_down(k, lam):
    """``log sum_{j=0..k} (k! / j!) lam^(j - k)`` for integers ``1 <= k <= lam``: the terms
    ``prod_{i < m} (k - i) / lam`` shrink, and the sum stops when the rest is negligible."""
    total = np.ones(k.shape)
    term = np.ones(k.shape)
    active = np.arange(k.size)
    m = 0
    while active.size:
        term[active] *= (k[active] - m) / lam[active]
        total[active] += term[active]
        m += 1
        ratio = (k[active] - m) / lam[active]  # the rest is at most term * ratio / (1 - ratio)
        going = (ratio > 0) & (term[active] * ratio > 1e-17 * total[active] * (1.0 - ratio))
        active = active[going]
    return np.log(total)
