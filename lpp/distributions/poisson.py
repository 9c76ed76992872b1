"""Poisson log-pmf, log-cdf and log-survival in numba (stable in both tails), and wrappers.

``poisson_logpmf_nb`` uses Loader's saddle-point form (``-stirlerr(k) - bd0(k, lam) -
log sqrt(2 pi k)``), accurate to a few ulps even for k, lam ~ 1e9.  The log-cdf and
log-survival functions sum pmf ratios outward from the point nearest the mode, in units of
the first term, so a tail probability of 1e-300 or 1e-3000 is as accurate as one of 0.3; the
side holding more than about half the mass is obtained as ``log1p(-other side)``.  Cost:
O(min(k, sqrt(lam))) near the centre, a handful of terms in the tails.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from lpp._validation import broadcast_params, finish, integer_array, real_array
from ._special import bd0_nb, stirling_correction_nb

_LOG_2PI = math.log(2.0 * math.pi)
_SUM_TOL = 1e-18


@njit(cache=True)
def poisson_logpmf_nb(k, lam):
    """``log P(X = k)``, ``X ~ Pois(lam)``; -inf for k < 0 (k integer-valued, lam >= 0)."""
    if not lam >= 0.0:
        return math.nan
    if k < 0:
        return -math.inf
    if lam == 0.0:
        return 0.0 if k == 0 else -math.inf
    if k == 0:
        return -lam
    kf = float(k)
    return -stirling_correction_nb(kf) - bd0_nb(kf, lam) - 0.5 * (_LOG_2PI + math.log(kf))


@njit(cache=True)
def _log_sum_down(k, lam):
    """``log sum_{j=0..k} P(j)/P(k)`` for ``k <= lam`` (ratios j/lam shrink going down)."""
    total = 1.0
    t = 1.0
    j = k
    while j > 0:
        t *= j / lam
        total += t
        j -= 1
        r = j / lam  # next ratio; the rest is at most t r / (1 - r)
        if t * r <= _SUM_TOL * total * (1.0 - r):
            break
    return math.log(total)


@njit(cache=True)
def _log_sum_up(k, lam):
    """``log sum_{j>=k} P(j)/P(k)`` for ``k + 1 > lam`` (ratios lam/(j+1) shrink going up)."""
    total = 1.0
    t = 1.0
    j = k
    while True:
        r = lam / (j + 1.0)
        t *= r
        total += t
        j += 1
        r_next = lam / (j + 1.0)
        if t * r_next <= _SUM_TOL * total * (1.0 - r_next):
            break
    return math.log(total)


@njit(cache=True)
def poisson_logcdf_nb(k, lam):
    """``log P(X <= k)``, ``X ~ Pois(lam)`` (k integer-valued, lam >= 0); -inf for k < 0."""
    if not lam >= 0.0:
        return math.nan
    if k < 0:
        return -math.inf
    if lam == 0.0:
        return 0.0
    if math.isinf(lam):
        return -math.inf
    kf = float(k)
    if kf <= lam:
        return poisson_logpmf_nb(k, lam) + _log_sum_down(kf, lam)
    log_sf = poisson_logpmf_nb(k + 1, lam) + _log_sum_up(kf + 1.0, lam)
    return math.log1p(-math.exp(log_sf))


@njit(cache=True)
def poisson_logsf_nb(k, lam):
    """``log P(X > k)``, ``X ~ Pois(lam)`` (k integer-valued, lam >= 0); 0 for k < 0."""
    if not lam >= 0.0:
        return math.nan
    if k < 0:
        return 0.0
    if lam == 0.0:
        return -math.inf
    if math.isinf(lam):
        return 0.0
    kf = float(k)
    if kf + 1.0 >= lam:
        return poisson_logpmf_nb(k + 1, lam) + _log_sum_up(kf + 1.0, lam)
    log_cdf = poisson_logpmf_nb(k, lam) + _log_sum_down(kf, lam)
    return math.log1p(-math.exp(log_cdf))


@njit(cache=True)
def _poisson_kernel(which, k, lam, out):
    for i in range(out.size):
        if which == 0:
            out[i] = poisson_logpmf_nb(k[i], lam[i])
        elif which == 1:
            out[i] = poisson_logcdf_nb(k[i], lam[i])
        else:
            out[i] = poisson_logsf_nb(k[i], lam[i])


def _poisson(which, k, lam):
    k = integer_array(k, "k")
    lam = real_array(lam, "lam", low=0.0)
    (k, lam), shape = broadcast_params((k, lam), ("k", "lam"))
    out = np.empty(k.size)
    _poisson_kernel(which, k, lam, out)
    return finish(out, shape)


def poisson_logpmf(k, lam):
    """Vectorised ``log P(X = k)``, ``X ~ Pois(lam)`` (rate = mean = lam >= 0)."""
    return _poisson(0, k, lam)


def poisson_logcdf(k, lam):
    """Vectorised ``log P(X <= k)``, ``X ~ Pois(lam)``; stable in both tails."""
    return _poisson(1, k, lam)


def poisson_logsf(k, lam):
    """Vectorised ``log P(X > k)``, ``X ~ Pois(lam)``; stable in both tails."""
    return _poisson(2, k, lam)


# ---------------------------------------------------------------------------------------------
# Poisson tails and truncated Poisson draws (the collapsed privacy step)
# ---------------------------------------------------------------------------------------------

@njit(cache=True)
def truncated_poisson_at_most_nb(lam, n, log_cdf_n):
    """One draw of Pois(lam) conditioned on ``X <= n`` (``n >= 0``).

    ``log_cdf_n = log P(X <= n)`` is passed in because the caller has it already. When the
    mode lies inside (``lam < n``) the draw is by rejection from the untruncated Poisson, which
    accepts with probability ``P(X <= n) >= P(X <= lam) > 1/e`` (Teicher 1955). Otherwise the
    pmf increases on ``0..n`` and inversion walks down from ``n``.
    """
    if lam <= 0.0 or n == 0:
        return 0
    if lam < n:
        while True:
            x = np.random.poisson(lam)
            if x <= n:
                return x
    p = math.exp(poisson_logpmf_nb(n, lam) - log_cdf_n)
    u = np.random.random()
    x = n
    acc = p
    while acc < u and x > 0:
        p *= x / lam
        x -= 1
        acc += p
    return x


@njit(cache=True)
def truncated_poisson_above_nb(lam, n, log_sf_n):
    """One draw of Pois(lam) conditioned on ``X > n`` (``n >= 0``, ``lam > 0``).

    ``log_sf_n = log P(X > n)``. When the mode is above the cut (``lam > n + 1``) the draw is
    by rejection from the untruncated Poisson (acceptance at least about 1/4); otherwise the pmf
    decreases from ``n + 1`` and inversion walks up from there.
    """
    if lam > n + 1.0:
        while True:
            x = np.random.poisson(lam)
            if x > n:
                return x
    p = math.exp(poisson_logpmf_nb(n + 1, lam) - log_sf_n)
    u = np.random.random()
    x = n + 1
    acc = p
    while acc < u and p > 0.0:
        x += 1
        p *= lam / x
        acc += p
    return x
