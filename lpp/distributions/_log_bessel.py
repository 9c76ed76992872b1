"""``log I_nu(x)`` (modified Bessel function of the first kind) in numba, for real nu >= 0.

Everything is computed as the *scaled* value ``log(I_nu(x) e^-x)`` (the x cancels exactly in
ratios such as I_{nu+1}/I_nu) and never forms I itself, so nothing overflows or underflows.
Three regimes, each accurate to a few ulps of the result:

* ``nu >= NU_UNIFORM``: Debye's uniform asymptotic expansion (DLMF 10.41.3), with the
  polynomials U_k(p) generated exactly from the recurrence DLMF 10.41.9 (rationals, at import)
  and summed to ``N_UNIFORM`` terms; uniform in x in (0, inf).
* ``nu < NU_UNIFORM`` and ``x <= X_SERIES``: the power series
  ``sum_k (x/2)^(2k+nu) / (k! Γ(k+nu+1))`` summed outward from its largest term (the
  Bessel-distribution mode) in units of that term; the terms are log-concave in k, so the
  geometric bound used to stop each side is rigorous.  It needs O(sqrt(x)) terms.
* ``nu < NU_UNIFORM`` and ``x > X_SERIES``: Hankel's large-argument expansion (DLMF 10.40.1),
  summed until its terms stop decreasing (the e^-2x companion term is below 1e-80 there).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numba import njit

from ._special import bd0_nb, stirling_correction_nb

NU_UNIFORM = 20.0
N_UNIFORM = 16
X_SERIES = 100.0
_LOG_2PI = math.log(2.0 * math.pi)
_SERIES_TOL = 1e-18


def _debye_polynomials(n_terms):
    """Coefficients of U_0..U_{n_terms-1}(p), row k holding the powers p^0 .. p^(3k).

    U_{k+1}(p) = p^2 (1 - p^2) U_k'(p) / 2 + (1/8) ∫_0^p (1 - 5 t^2) U_k(t) dt, U_0 = 1,
    evaluated in exact rational arithmetic.
    """
    polys = [[Fraction(1)]]
    for _ in range(n_terms - 1):
        u = polys[-1]
        nxt = [Fraction(0)] * (len(u) + 3)
        for j, c in enumerate(u):
            if j >= 1:  # (1/2)(p^2 - p^4) * j c p^(j-1)
                nxt[j + 1] += c * j / 2
                nxt[j + 3] -= c * j / 2
            nxt[j + 1] += c / (8 * (j + 1))  # (1/8) ∫ c t^j
            nxt[j + 3] -= 5 * c / (8 * (j + 3))  # -(5/8) ∫ c t^(j+2)
        polys.append(nxt)
    out = np.zeros((n_terms, 3 * n_terms - 2))
    for k, poly in enumerate(polys):
        assert all(c == 0 for c in poly[3 * k + 1:])
        out[k, : 3 * k + 1] = [float(c) for c in poly[: 3 * k + 1]]
    return out


DEBYE_U = _debye_polynomials(N_UNIFORM)


_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(8)
_GL_NODES = 0.5 * (_GL_NODES + 1.0)  # on [0, 1]
_GL_WEIGHTS = 0.5 * _GL_WEIGHTS


@njit(cache=True)
def _uniform_small_part(nu, x, coefs):
    """The O(log nu) part of the Debye form: ``-log(2 pi nu)/2 + log(p)/2 + log(sum U_k/nu^k)``."""
    hyp = math.hypot(nu, x)
    p = nu / hyp
    p2 = p * p
    inv_nu = 1.0 / nu
    total = 1.0
    scale = 1.0
    pk = 1.0
    for k in range(1, coefs.shape[0]):
        scale *= inv_nu
        pk *= p
        acc = 0.0
        for i in range(k, -1, -1):  # U_k = p^k * sum_i c[k + 2i] p^(2i)
            acc = acc * p2 + coefs[k, k + 2 * i]
        total += acc * pk * scale
    return -0.5 * (_LOG_2PI + math.log(nu)) + 0.5 * math.log(p) + math.log(total)


@njit(cache=True)
def _uniform_lead(nu, x):
    """``nu eta - x`` of the Debye form, O(nu) in size."""
    hyp = math.hypot(nu, x)
    # nu*eta - x = (hypot - x) + nu log(x / (nu + hypot)), with hypot - x = nu^2/(hypot + x)
    # and the log as -log1p((nu + hypot - x)/x): no rounding amplified by nu when x >> nu
    excess = nu * nu / (hyp + x)
    return excess - nu * math.log1p((nu + excess) / x)


@njit(cache=True)
def _log_ive_uniform(nu, x, coefs):
    return _uniform_lead(nu, x) + _uniform_small_part(nu, x, coefs)


@njit(cache=True)
def _lead_difference(nu, x):
    """``lead(nu + 1) - lead(nu) = -∫_nu^{nu+1} asinh(t/x) dt`` (d(nu eta)/d nu = -asinh(nu/x)),
    by 8-point Gauss-Legendre: no subtraction of two O(nu) numbers."""
    total = 0.0
    for i in range(_GL_NODES.size):
        total += _GL_WEIGHTS[i] * math.asinh((nu + _GL_NODES[i]) / x)
    return -total


@njit(cache=True)
def log_bessel_ratio_nb(nu, x):
    """``log(I_{nu+1}(x) / I_nu(x))`` for real ``nu >= 0``, ``x > 0``, accurate for huge nu."""
    if nu >= NU_UNIFORM:
        return (_lead_difference(nu, x) + _uniform_small_part(nu + 1.0, x, DEBYE_U)
                - _uniform_small_part(nu, x, DEBYE_U))
    return log_bessel_ive_nb(nu + 1.0, x) - log_bessel_ive_nb(nu, x)


@njit(cache=True)
def series_sum_from_mode(nu, x, m):
    """Terms ``t_k = (x/2)^(2k+nu) / (k! Γ(k+nu+1))`` in units of ``t_m``: returns
    ``(log sum_k t_k/t_m, sum_k k t_k / sum_k t_k)``.

    ``m`` should be (near) the largest term; the sums run outward from it with the ratios
    ``t_{k+1}/t_k = (x/2)^2 / ((k+1)(k+1+nu))`` and stop on a rigorous geometric tail bound
    (the ratios decrease in k).  The second value is the Bessel(nu, x) mean.
    """
    half_x = 0.5 * x
    q = half_x * half_x
    total = 1.0
    first = m
    # upward
    t = 1.0
    k = m
    while True:
        ratio = q / ((k + 1.0) * (k + 1.0 + nu))
        t *= ratio
        k += 1.0
        total += t
        first += k * t
        if ratio < 1.0 and t * ratio <= _SERIES_TOL * total * (1.0 - ratio):
            break
    # downward: t_{k-1}/t_k = k(k+nu)/q, decreasing as k decreases
    t = 1.0
    k = m
    while k > 0.0:
        ratio = k * (k + nu) / q
        t *= ratio
        k -= 1.0
        total += t
        first += k * t
        if ratio < 1.0 and t * ratio <= _SERIES_TOL * total * (1.0 - ratio):
            break
    return math.log(total), first / total


@njit(cache=True)
def saddle_log_term_scaled(k, nu, x):
    """``log t_k - x`` for the series term ``t_k = (x/2)^(2k+nu) / (k! Γ(k+nu+1))``.

    Loader's saddle-point form for k >= 1: with h = x/2, ``-bd0(k, h) - bd0(k+nu, h) -
    log(2 pi sqrt(k (k+nu))) - stirlerr(k) - stirlerr(k+nu)``: O(1) terms when k ≈ h ≈ k+nu,
    where the naive ``(2k+nu) log h - lgamma - lgamma - x`` cancels terms of size x log x.
    """
    if k == 0:
        return nu * math.log(0.5 * x) - x - math.lgamma(nu + 1.0)
    kf = float(k)
    half_x = 0.5 * x
    return (-bd0_nb(kf, half_x) - bd0_nb(kf + nu, half_x) - 0.5 * math.log(kf * (kf + nu))
            - _LOG_2PI - stirling_correction_nb(kf) - stirling_correction_nb(kf + nu))


@njit(cache=True)
def _log_ive_series(nu, x):
    """log(I_nu(x) e^-x) from the power series, summed outward from its largest term."""
    half_x = 0.5 * x
    m = math.floor(half_x * (x / (math.hypot(x, nu) + nu)))
    return saddle_log_term_scaled(m, nu, x) + series_sum_from_mode(nu, x, m)[0]


@njit(cache=True)
def _log_ive_hankel(nu, x):
    mu4 = 4.0 * nu * nu
    eight_x = 8.0 * x
    total = 1.0
    term = 1.0
    last = 1.0
    for k in range(1, 200):
        odd = 2.0 * k - 1.0
        term *= -(mu4 - odd * odd) / (k * eight_x)
        mag = abs(term)
        if mag >= last and odd > 2.0 * nu:  # diverging tail of the asymptotic series
            break
        total += term
        if mag <= 1e-17 * abs(total):
            break
        last = mag
    return math.log(total) - 0.5 * (_LOG_2PI + math.log(x))


@njit(cache=True)
def log_bessel_ive_nb(nu, x):
    """``log(I_nu(x) * exp(-x))`` for real ``nu >= 0``, ``x >= 0``.

    ``x = 0`` gives 0 for nu = 0 and -inf otherwise; ``x = inf`` gives -inf (I e^-x ~
    (2 pi x)^-1/2); ``nu = inf`` gives -inf; negative or nan arguments give nan.
    """
    if not (nu >= 0.0 and x >= 0.0):
        return math.nan
    if x == 0.0:
        return 0.0 if nu == 0.0 else -math.inf
    if math.isinf(x) or math.isinf(nu):
        return -math.inf
    if nu >= NU_UNIFORM:
        return _log_ive_uniform(nu, x, DEBYE_U)
    if x <= X_SERIES:
        return _log_ive_series(nu, x)
    return _log_ive_hankel(nu, x)


@njit(cache=True)
def log_bessel_i_nb(nu, x):
    """``log I_nu(x)`` for real ``nu >= 0``, ``x >= 0``; see :func:`log_bessel_ive_nb`."""
    if math.isinf(x) and nu >= 0.0 and not math.isinf(nu):
        return math.inf
    return log_bessel_ive_nb(nu, x) + x
