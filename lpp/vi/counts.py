"""The variational factor of one privatized count, and the Bessel mode of the paper's CAVI.

Collapsed CAVI: with the noise integrated out and the geometric expectation ``g = G_i`` of the
rate given, the optimal factor of a true count is

    q(y) = g**y / y! * alpha**|y_tilde - y| / Z(y_tilde, alpha, g),   y = 0, 1, ...

For ``y_tilde <= 0`` it is ``Pois(alpha g)`` exactly: ``log Z = -y_tilde log(alpha) + alpha g``
and ``E[y] = alpha g`` (so such entries can be handled in aggregate). For ``y_tilde > 0`` it is
a two-piece law: weights ``alpha**y_tilde (g/alpha)**y / y!`` up to ``y_tilde`` and
``alpha**-y_tilde (alpha g)**y / y!`` above. :func:`count_factor_nb` returns ``log Z`` and
``E[y]``: by a direct sum of the weights scaled so that the ``y = 0`` weight is 1 (ratios
``lam / j``, no special functions) while the scaled weights stay far from overflow, otherwise in
log space from Poisson cdfs (``sum_{y<=n} y lam^y/y! = lam e^lam P(Pois(lam) <= n - 1)``).

The paper's CAVI replaces the Bessel factor of ``m = min(y_tilde+, g-)`` by a point mass at its
mode, :func:`bessel_mode_point_nb` (order ``|y_tilde|``, never the signed value).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from lpp.validation import noise_level_array
from lpp.distributions import poisson_logcdf_nb, poisson_logsf_nb

#: the direct sum serves y_tilde up to this and g / alpha up to DIRECT_MAX_RATE (its scaled
#: weights stay below e^500); beyond, the log-space cdf form is used
DIRECT_MAX_COUNT = 512
DIRECT_MAX_RATE = 500.0
_SERIES_TOL = 1e-17
#: 1/j for the sums' ratios (a product per term instead of a division)
_RECIPROCALS = 1.0 / np.arange(1, DIRECT_MAX_COUNT + 64, dtype=np.float64)
#: below this geometric rate the factor is a point mass at y = 0
_TINY_RATE = 1e-300


@njit(cache=True, inline="always")
def _logaddexp(a, b):
    if a < b:
        a, b = b, a
    if b == -math.inf:
        return a
    return a + math.log1p(math.exp(b - a))


@njit(cache=True)
def _direct(y_tilde, lam_low, lam_high):
    """``(log of the scaled normaliser, scaled first moment / normaliser)`` by summation.

    The upper tail stops once its remaining terms are below ``_SERIES_TOL`` of the normaliser
    (absolute error of ``E[y]`` below about 1e-17): with ratio ``r <= 1/2`` past that point,
    the rest of the normaliser is below ``2 t r`` and the rest of the first moment below
    ``4 (j + 1) t r``.
    """
    z = 1.0
    m1 = 0.0
    t = 1.0
    for j in range(1, y_tilde + 1):
        t *= lam_low * _RECIPROCALS[j - 1]
        z += t
        m1 += j * t
    j = y_tilde
    n_table = _RECIPROCALS.size
    while True:
        j += 1
        t *= lam_high * _RECIPROCALS[j - 1] if j <= n_table else lam_high / j
        z += t
        m1 += j * t
        r = lam_high * _RECIPROCALS[j] if j < n_table else lam_high / (j + 1.0)
        if r <= 0.5 and 4.0 * (j + 1.0) * t * r <= _SERIES_TOL * z:
            break
    return math.log(z), m1 / z


@njit(cache=True)
def count_factor_nb(y_tilde, alpha, g):
    """``(log Z, E_q[y])`` of ``q(y) ∝ g^y / y! alpha^|y_tilde - y|`` (see the module notes).

    ``alpha`` in (0, 1), ``g >= 0``; ``log Z`` includes every factor shown (not the
    mechanism's constant ``(1 - alpha) / (1 + alpha)``).
    """
    log_alpha = math.log(alpha)
    if y_tilde <= 0:
        return -y_tilde * log_alpha + alpha * g, alpha * g
    if g < _TINY_RATE:
        return y_tilde * log_alpha, 0.0
    lam_low = g / alpha
    lam_high = alpha * g
    if y_tilde <= DIRECT_MAX_COUNT and lam_low <= DIRECT_MAX_RATE:
        log_z, mean = _direct(y_tilde, lam_low, lam_high)
        return y_tilde * log_alpha + log_z, mean
    return _log_space(y_tilde, log_alpha, lam_low, lam_high)


@njit(cache=True)
def _log_space(y_tilde, log_alpha, lam_low, lam_high):
    """``(log Z, E[y])`` of the two-piece count factor for ``y_tilde > 0`` from Poisson log-cdf
    and log-survival values (any size of count or rate)."""
    log_w_low = y_tilde * log_alpha + lam_low + poisson_logcdf_nb(y_tilde, lam_low)
    log_w_high = -y_tilde * log_alpha + lam_high + poisson_logsf_nb(y_tilde, lam_high)
    log_z = _logaddexp(log_w_low, log_w_high)
    m_low = math.exp(math.log(lam_low) + y_tilde * log_alpha + lam_low
                     + poisson_logcdf_nb(y_tilde - 1, lam_low) - log_z)
    m_high = math.exp(math.log(lam_high) - y_tilde * log_alpha + lam_high
                      + poisson_logsf_nb(y_tilde - 1, lam_high) - log_z)
    return log_z, m_low + m_high


@njit(cache=True)
def count_factor_log_space_nb(y_tilde, alpha, g):
    """:func:`count_factor_nb` always by the log-space cdf form (a cross-check of the sum)."""
    log_alpha = math.log(alpha)
    if y_tilde <= 0 or g < _TINY_RATE:
        return count_factor_nb(y_tilde, alpha, g)
    lam_low = g / alpha
    lam_high = alpha * g
    return _log_space(y_tilde, log_alpha, lam_low, lam_high)


def count_factor(y_tilde, alpha, g, *, log_space: bool = False):
    """Vectorised :func:`count_factor_nb` over broadcast arrays; returns ``(log_z, mean)``.

    Parameters
    ----------
    y_tilde : array_like of int
        Privatized counts (may be negative).
    alpha : array_like of float
        Noise levels in (0, 1).
    g : array_like of float
        Geometric expectations of the rates (>= 0).
    log_space : bool
        Use the log-space form throughout (for checks).

    Returns
    -------
    log_z, mean : ndarray
        ``log Z`` and ``E_q[y]`` per entry.

    Raises
    ------
    ValueError
        When ``alpha`` is outside (0, 1) or ``g`` is negative or not finite.
    """
    yt, a, gg = np.broadcast_arrays(np.asarray(y_tilde, dtype=np.int64),
                                    noise_level_array(alpha),
                                    np.asarray(g, dtype=np.float64))
    if not np.isfinite(gg).all() or np.any(gg < 0):
        raise ValueError("g must be finite and >= 0")
    log_z = np.empty(yt.shape)
    mean = np.empty(yt.shape)
    _factor_loop(yt.ravel(), a.ravel(), gg.ravel(), log_space, log_z.reshape(-1),
                 mean.reshape(-1))
    return log_z, mean


@njit(cache=True)
def _factor_loop(yt, a, g, log_space, log_z, mean):
    for e in range(yt.size):
        if log_space:
            log_z[e], mean[e] = count_factor_log_space_nb(yt[e], a[e], g[e])
        else:
            log_z[e], mean[e] = count_factor_nb(yt[e], a[e], g[e])


@njit(cache=True)
def bessel_mode_point_nb(y_tilde, a):
    """Mode of ``Bessel(nu = |y_tilde|, a)``: ``floor((sqrt(a^2 + nu^2) - nu) / 2)``."""
    nu = abs(float(y_tilde))
    return math.floor((math.sqrt(a * a + nu * nu) - nu) / 2.0)
