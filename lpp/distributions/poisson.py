"""Poisson log-pmf, log-cdf and log-survival in numba (stable in both tails), and wrappers.

``poisson_logpmf_nb`` uses Loader's saddle-point form (``-stirlerr(k) - bd0(k, lam) -
log sqrt(2 pi k)``), accurate to a few ulps even for k, lam ~ 1e9.  The log-cdf and
log-survival functions sum pmf ratios outward from the point nearest the mode, in units of
the first term, so a tail probability of 1e-300 or 1e-3000 is as accurate as one of 0.3; the
side holding more than about half the mass is obtained as ``log1p(-other side)``.  Cost:
O(min(k, sqrt(lam))) near the centre, a handful of terms in the tails. From a mean of
:data:`LARGE_MEAN` on, a count within ``lam / 64`` of the mean (where the sums would need up
to about 9 sqrt(lam) terms, 1e9 at lam = 1e16) takes Temme's uniform asymptotic expansion of
the incomplete gamma function instead: O(1), within about 1e-14 of the exact sums there.

Draws take a stream of :mod:`lpp.randomness` as their first argument. :func:`poisson_nb` is
exact (inversion below a mean of 10, Hormann's PTRS above) and total: a mean that is NaN,
infinite or above :data:`MAX_MEAN` gives -1, which callers turn into an error. The truncated
draws cost O(1) expected work at any mean.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from lpp.validation import broadcast_params, finish, integer_array, real_array
from lpp.randomness import standard_exponential, uniform

from ._special import bd0_nb, lgamma_diff_nb, stirling_correction_nb

_LOG_2PI = math.log(2.0 * math.pi)
_SUM_TOL = 1e-18
#: from this mean on, tails near the centre and truncated draws use O(1) methods; below it the
#: sums and walks near the centre take at most about 9 sqrt(lam) < 1e4 steps
LARGE_MEAN = 2.0**20
#: a count within ``lam * _NEAR`` of the mean counts as near the centre; further out the sums
#: and walks need fewer than about 40 / _NEAR = 2600 steps
_NEAR = 2.0**-6
#: the largest mean :func:`poisson_nb` draws from: counts above 2**53 are not exact in float64,
#: and numba's sampler loops forever from about 9.2e18 (and on NaN or infinity)
MAX_MEAN = 2.0**53
_SQRT_PI = math.sqrt(math.pi)
#: Temme's coefficients: c_k(eta) = sum_n _TEMME[k][n] eta^n (DLMF 8.12; as in Cephes/SciPy)
_TEMME = np.array([
    [-3.3333333333333333e-1, 8.3333333333333333e-2, -1.4814814814814815e-2,
     1.1574074074074074e-3, 3.527336860670194e-4, -1.7875514403292181e-4,
     3.9192631785224378e-5, -2.1854485106799922e-6, -1.85406221071516e-6,
     8.296711340953086e-7],
    [-1.8518518518518519e-3, -3.4722222222222222e-3, 2.6455026455026455e-3,
     -9.9022633744855967e-4, 2.0576131687242798e-4, -4.0187757201646091e-7,
     -1.8098550334489978e-5, 7.6491609160811101e-6, -1.6120900894563446e-6,
     4.6471278028074343e-9],
    [4.1335978835978836e-3, -2.6813271604938272e-3, 7.7160493827160494e-4,
     2.0093878600823045e-6, -1.0736653226365161e-4, 5.2923448829120125e-5,
     -1.2760635188618728e-5, 3.4235787340961381e-8, 1.3721957309062933e-6,
     -6.298992138380055e-7],
])


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
    """``log sum_{j=0..k} P(j)/P(k)`` for ``k <= lam`` (ratios j/lam shrink going down).

    ``k`` is an integer: a float counter stops moving at 2**53 (``j - 1 == j``) and the loop
    would never end.
    """
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
    """``log sum_{j>=k} P(j)/P(k)`` for ``k + 1 > lam`` (ratios lam/(j+1) shrink going up);
    ``k`` an integer, as in :func:`_log_sum_down`."""
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
def _near_large_mean(kf, lam):
    """Whether the tail sums at ``(k, lam)`` would be long: a large mean, k near it."""
    return lam >= LARGE_MEAN and abs(kf - lam) <= _NEAR * lam


@njit(cache=True)
def _erfcx_large(z):
    """``exp(z^2) erfc(z)`` for ``z >= 10`` (asymptotic series; relative error < 1e-16)."""
    inv = 1.0 / (2.0 * z * z)
    total = 1.0
    term = 1.0
    for n in range(1, 30):
        term *= -(2.0 * n - 1.0) * inv
        total += term
        if abs(term) < 1e-17:
            break
    return total / (z * _SQRT_PI)


@njit(cache=True)
def _log_gamma_tail_large(a, x, upper):
    """``log Q(a, x)`` (``upper``) or ``log P(a, x)``, the regularised incomplete gamma
    functions, for large ``a`` and ``x`` near ``a`` (``|x/a - 1| <~ 1e-2``).

    Temme's uniform expansion (DLMF 8.12.3-8.12.4), three terms:
    ``Q = erfc(z)/2 + R`` and ``P = erfc(-z)/2 - R`` with ``z^2 = a eta^2 / 2 = bd0(a, x)``
    (sign of ``x - a``) and ``R = exp(-z^2) / sqrt(2 pi a) * sum_k c_k(eta) / a^k``. The tail
    side is formed as ``exp(-z^2)`` times a sum of positive terms, so it keeps its relative
    accuracy far below the smallest double.
    """
    z2 = bd0_nb(a, x)
    z = math.sqrt(z2) if x >= a else -math.sqrt(z2)
    eta = z * math.sqrt(2.0 / a)
    series = 0.0
    for k in range(_TEMME.shape[0] - 1, -1, -1):  # sum_k c_k(eta) / a^k by Horner in 1/a
        c_k = 0.0
        for n in range(_TEMME.shape[1] - 1, -1, -1):
            c_k = c_k * eta + _TEMME[k, n]
        series = series / a + c_k
    r = series / math.sqrt(2.0 * math.pi * a)
    s = z if upper else -z
    sign = 1.0 if upper else -1.0
    if s >= 10.0:
        return -z2 + math.log(0.5 * _erfcx_large(s) + sign * r)
    if s >= 0.0:
        return math.log(0.5 * math.erfc(s) + sign * math.exp(-z2) * r)
    return math.log1p(-0.5 * math.erfc(-s) + sign * math.exp(-z2) * r)


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
    if _near_large_mean(kf, lam):
        return _log_gamma_tail_large(kf + 1.0, lam, True)
    if kf <= lam:
        return poisson_logpmf_nb(k, lam) + _log_sum_down(k, lam)
    log_sf = poisson_logpmf_nb(k + 1, lam) + _log_sum_up(k + 1, lam)
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
    if _near_large_mean(kf, lam):
        return _log_gamma_tail_large(kf + 1.0, lam, False)
    if kf + 1.0 >= lam:
        return poisson_logpmf_nb(k + 1, lam) + _log_sum_up(k + 1, lam)
    log_cdf = poisson_logpmf_nb(k, lam) + _log_sum_down(k, lam)
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

#: below this mean a Poisson draw is by inversion (one uniform, about ``lam`` steps), from it on by
#: Hormann's transformed rejection (PTRS, as NumPy's ``Generator.poisson``; his bound)
_INVERSION_MEAN = 10.0


@njit(cache=True)
def poisson_nb(rng, lam):
    """One Pois(lam) draw from the stream ``rng`` (:mod:`lpp.randomness`); -1 when ``lam`` is
    negative, NaN, infinite or above :data:`MAX_MEAN`, for the caller to refuse.

    Exact: below a mean of 10 by inversion, the cumulative pmf walked up from 0 against one
    uniform; from 10 on by Hormann's (1993) transformed rejection with squeeze (PTRS)."""
    if not (0.0 <= lam <= MAX_MEAN):
        return np.int64(-1)
    if lam < _INVERSION_MEAN:
        u = uniform(rng)
        p = math.exp(-lam)
        acc = p
        k = 0
        # the walk stops within about 40 terms at lam < 10; it ends where the pmf vanishes
        # in case rounding leaves the cumulative sum just below u
        while acc <= u and p > 0.0:
            k += 1
            p *= lam / k
            acc += p
        return np.int64(k)
    return _poisson_ptrs(rng, lam)


@njit(cache=True)
def _poisson_ptrs(rng, lam):
    """Hormann's PTRS for ``lam >= 10``: a transformed uniform, accepted by a squeeze or by
    the log-pmf."""
    slam = math.sqrt(lam)
    log_lam = math.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2.0)
    while True:
        u = uniform(rng) - 0.5
        v = uniform(rng)
        us = 0.5 - abs(u)
        if us == 0.0:  # U = 0 exactly: outside the hat's support
            continue
        k = math.floor((2.0 * a / us + b) * u + lam + 0.43)
        if us >= 0.07 and v <= v_r:
            return np.int64(k)
        if k < 0.0 or (us < 0.013 and v > us):
            continue
        if (math.log(v) + math.log(inv_alpha) - math.log(a / (us * us) + b)
                <= -lam + k * log_lam - math.lgamma(k + 1.0)):
            return np.int64(k)


@njit(cache=True)
def truncated_poisson_at_most_nb(rng, lam, n, log_cdf_n):
    """One draw of Pois(lam) conditioned on ``X <= n`` (``n >= 0``); -1 for a NaN ``lam``.

    ``log_cdf_n = log P(X <= n)`` is passed in because the caller has it already. When the
    mode lies inside (``lam < n``) the draw is by rejection from the untruncated Poisson, which
    accepts with probability ``P(X <= n) >= P(X <= lam) > 1/e`` (Teicher 1955). Otherwise the
    pmf increases on ``0..n`` and inversion walks down from ``n``; near a mean of
    :data:`LARGE_MEAN` or more, where that walk would be long, :func:`_at_most_near_mean`
    draws in O(1) instead.
    """
    if math.isnan(lam):
        return np.int64(-1)
    if lam <= 0.0 or n == 0:
        return 0
    if lam < n:
        while True:
            x = poisson_nb(rng, lam)
            if x <= n:  # -1 included: a mean the sampler cannot take
                return x
    if _near_large_mean(float(n), lam):
        return _at_most_near_mean(rng, lam, n)
    p = math.exp(poisson_logpmf_nb(n, lam) - log_cdf_n)
    u = uniform(rng)
    x = n
    acc = p
    while acc < u and x > 0:
        p *= x / lam
        x -= 1
        acc += p
    return x


@njit(cache=True)
def _at_most_near_mean(rng, lam, n):
    """Pois(lam) given ``X <= n`` for ``1 <= n <= lam``, O(1) expected work at any size.

    Within one standard deviation of the mean: rejection from the untruncated Poisson
    (acceptance ``P(X <= n) >= P(X <= lam - sqrt(lam))``, about 0.16). Further down the pmf
    ratios ``P(n - m - 1) / P(n - m) = (n - m) / lam`` are at most ``r = n / lam``, so
    ``m = n - X`` is drawn from the geometric law ``r^m`` and accepted with probability
    ``P(n - m) / (P(n) r^m) = n! / ((n - m)! n^m)`` (at least about 1/2 here).
    """
    delta = lam - n
    if delta <= math.sqrt(lam):
        while True:
            x = poisson_nb(rng, lam)
            if x <= n:
                return x
    log_r = math.log1p(-delta / lam)
    log_n = math.log(float(n))
    while True:
        m = math.floor(-standard_exponential(rng) / log_r)
        if m > n:
            continue
        log_accept = lgamma_diff_nb(float(n) - m + 1.0, m) - m * log_n
        if -standard_exponential(rng) <= log_accept:
            return np.int64(n - np.int64(m))


@njit(cache=True)
def truncated_poisson_above_nb(rng, lam, n, log_sf_n):
    """One draw of Pois(lam) conditioned on ``X > n`` (``n >= 0``, ``lam > 0``); -1 for a mean
    :func:`poisson_nb` cannot take.

    ``log_sf_n = log P(X > n)``. When the mode is above the cut (``lam > n + 1``) the draw is
    by rejection from the untruncated Poisson (acceptance at least about 1/4); otherwise the pmf
    decreases from ``n + 1`` and inversion walks up from there; near a mean of
    :data:`LARGE_MEAN` or more :func:`_above_near_mean` draws in O(1) instead.
    """
    if math.isnan(lam):
        return np.int64(-1)
    if lam > n + 1.0:
        while True:
            x = poisson_nb(rng, lam)
            if x > n or x < 0:
                return x
    if _near_large_mean(float(n), lam):
        return _above_near_mean(rng, lam, n)
    p = math.exp(poisson_logpmf_nb(n + 1, lam) - log_sf_n)
    u = uniform(rng)
    x = n + 1
    acc = p
    while acc < u and p > 0.0:
        x += 1
        p *= lam / x
        acc += p
    return x


@njit(cache=True)
def _above_near_mean(rng, lam, n):
    """Pois(lam) given ``X > n`` for ``lam <= n + 1``, O(1) expected work at any size: as
    :func:`_at_most_near_mean`, upwards. ``m = X - n - 1`` has pmf ratios
    ``lam / (n + 2 + m) <= r = lam / (n + 2)``; a geometric ``m`` is accepted with probability
    ``(n + 2)^m (n + 1)! / (n + 1 + m)!``."""
    delta = n + 1.0 - lam
    if delta <= math.sqrt(lam):
        while True:
            x = poisson_nb(rng, lam)
            if x > n or x < 0:
                return x
    base = float(n) + 2.0
    log_r = math.log1p(-(base - lam) / base)
    log_base = math.log(base)
    while True:
        m = math.floor(-standard_exponential(rng) / log_r)
        log_accept = m * log_base - lgamma_diff_nb(base, m)
        if -standard_exponential(rng) <= log_accept:
            return np.int64(n + 1 + np.int64(m))
