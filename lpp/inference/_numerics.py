"""Numba building blocks shared by the privacy step and the models.

Every function here draws from numba's per-thread ``np.random`` stream, so it must run inside
a block that its caller has seeded with :func:`lpp._rng.seed_stream`.

Conventions: Gamma distributions are parameterised by shape and **rate**; Poisson rates are
means. Integer counts are int64.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from lpp.distributions import poisson_logpmf_nb, standard_gamma_nb

#: problems with less work than this (entries, or rows x columns) run the serial twin of a kernel
SERIAL_BELOW = 16384

#: smallest positive normal double: the floor of every Gamma draw (see :func:`gamma_rate_nb`)
TINY = float(np.finfo(np.float64).tiny)

#: above this ``log(U) / shape`` the power is formed directly (``exp`` is far from underflow)
_LOG_POWER_LINEAR = -600.0



def parallel_and_serial(loop):
    """Compile ``loop`` (a function with a ``prange`` loop) twice: parallel, and serial.

    In a non-parallel compilation ``prange`` is plain ``range``. Kernels key their random
    streams by block, so both twins give identical results; the serial one avoids the thread
    pool's start-up cost on small problems (milliseconds on a busy machine).
    """
    return njit(parallel=True)(loop), njit(loop)


@njit
def gamma_rate_nb(shape, rate):
    """One Gamma(shape, rate) draw (mean ``shape / rate``), never below :data:`TINY`.

    Variates from :func:`lpp.distributions.standard_gamma_nb` (ziggurat normal inside Marsaglia
    and Tsang). For ``shape < 1`` the draw is ``Gamma(shape + 1) * U**(1/shape)``; when the
    power would underflow it is formed in log space, since the variate itself usually does not
    (with shape 0.01 a plain draw is 0.0 about once in a thousand), and a zero factor would make
    rates, allocation probabilities and the log prior degenerate. The result is floored at the
    smallest normal double; the floor moves only the mass below 2.2e-308, i.e. probability
    about ``(2.2e-308 * rate)**shape``.
    """
    if shape >= 1.0:
        x = standard_gamma_nb(shape) / rate
    else:
        g = standard_gamma_nb(shape + 1.0)
        log_power = math.log(np.random.random()) / shape
        if log_power > _LOG_POWER_LINEAR:
            x = g * math.exp(log_power) / rate
        else:
            x = math.exp(math.log(g) + log_power - math.log(rate))
    if x < TINY:
        return TINY
    return x


@njit
def multinomial_into_nb(n, weights, out):
    """Draw ``Multinomial(n, weights / sum(weights))`` into ``out`` (overwritten).

    ``weights`` (non-negative, positive sum) are turned **in place** into their running sums;
    each of the ``n`` trials is then one uniform and a binary search, O(K + n log K) in all.
    A cell of zero weight never receives a count. (Sequential binomials would be O(K) for any
    ``n``, but numba's binomial sampler triples the compile time of every kernel using it.)
    """
    n_cells = weights.size
    acc = 0.0
    for k in range(n_cells):
        out[k] = 0
        acc += weights[k]
        weights[k] = acc
    total = acc
    for _ in range(n):
        u = np.random.random() * total
        lo = 0
        hi = n_cells - 1
        while lo < hi:  # first cell whose running sum exceeds u
            mid = (lo + hi) // 2
            if weights[mid] > u:
                hi = mid
            else:
                lo = mid + 1
        while lo > 0 and weights[lo] == weights[lo - 1]:  # u rounded onto the total: step back
            lo -= 1
        out[lo] += 1


# ---------------------------------------------------------------------------------------------
# Poisson tails and truncated Poisson draws (the collapsed privacy step)
# ---------------------------------------------------------------------------------------------

@njit
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


@njit
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


@njit
def rescale_log_weights_nb(log_weights):
    """Replace log-weights in place by ``exp(log_w - max)``; return their sum (>= 1)."""
    top = log_weights.max()
    total = 0.0
    for k in range(log_weights.size):
        w = math.exp(log_weights[k] - top)
        log_weights[k] = w
        total += w
    return total
