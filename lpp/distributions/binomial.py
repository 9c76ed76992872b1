"""Exact binomial draws for numba kernels, from a stream of :mod:`lpp.randomness`.

:func:`binomial_nb` draws ``Binom(n, p)`` in ``O(log n)`` expected work at any size:

* with ``m = n min(p, 1 - p)`` below :data:`INVERSION_MEAN`, by inversion: one uniform against
  the cumulative pmf walked up from 0 (about ``m`` steps);
* above, by splitting at an order statistic (Knuth, TAOCP vol. 2, 3.4.1; Devroye 1986, X.4):
  the ``i``-th smallest of ``n`` uniforms is ``X ~ Beta(i, n + 1 - i)``; if ``X > p`` the count
  lies among the ``i - 1`` uniforms below ``X``, uniform on ``(0, X)``, so it is
  ``Binom(i - 1, p / X)``; otherwise it is ``i`` plus those of the ``n - i`` uniforms above
  ``X``, uniform on ``(X, 1)``, that fall below ``p``: ``i + Binom(n - i, (p - X) / (1 - X))``.
  With ``i`` near ``n p`` each step shrinks the trials by a factor of about ``sqrt(n p)``
  until inversion takes over. ``X`` is ``G1 / (G1 + G2)`` for two Gamma draws.

The kernels call it for the rare large counts (the conditional binomials of a multinomial
above :data:`lpp.distributions.LARGE_COUNT`, the thinning of the Bessel step).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from lpp.randomness import uniform

from ._gamma_sampler import standard_gamma_nb

#: below this mean (of the rarer outcome) a draw is by inversion
INVERSION_MEAN = 16.0


@njit(cache=True)
def _binomial_inversion(rng, n, p):
    """``Binom(n, p)`` for ``p <= 1/2`` and ``n p`` small: the pmf's running sum against one
    uniform, each term from the last by ``(n - k) / (k + 1) * p / (1 - p)``."""
    q = 1.0 - p
    ratio = p / q
    term = math.exp(n * math.log1p(-p))
    acc = term
    u = uniform(rng)
    k = 0
    # stops where the pmf vanishes, should rounding leave the sum just below u
    while acc <= u and term > 0.0 and k < n:
        term *= (n - k) / (k + 1.0) * ratio
        k += 1
        acc += term
    return k


@njit(cache=True)
def binomial_nb(rng, n, p):
    """One ``Binom(n, p)`` draw (``n >= 0``, ``0 <= p <= 1``); -1 for a NaN ``p``."""
    if math.isnan(p):
        return np.int64(-1)
    n = np.int64(n)
    # the draw is base + sign * Binom(n, p); Binom(n, p) = n - Binom(n, 1 - p) keeps p <= 1/2
    base = np.int64(0)
    sign = np.int64(1)
    while True:
        if n <= 0 or p <= 0.0:
            return base
        if p >= 1.0:
            return base + sign * n
        if p > 0.5:
            base += sign * n
            sign = -sign
            p = 1.0 - p
        if n * p < INVERSION_MEAN:
            return base + sign * _binomial_inversion(rng, n, p)
        i = np.int64(n * p) + 1  # 1 <= i <= n, as n p <= n / 2 and n p >= 16
        g1 = standard_gamma_nb(rng, float(i))
        g2 = standard_gamma_nb(rng, float(n + 1 - i))
        x = g1 / (g1 + g2)
        if x > p:
            n = i - 1
            p = p / x
        else:
            base += sign * i
            n -= i
            p = (p - x) / (1.0 - x)
