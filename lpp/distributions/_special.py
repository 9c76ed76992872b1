"""Numba special functions shared by the distributions: log-gamma differences.

``lgamma_diff_nb(x, d) = lgamma(x + d) - lgamma(x)`` keeps its full relative precision when
both arguments are large (a plain difference of two ``lgamma`` values of size 1e5 loses
about 1e-11 in absolute terms, which would leak into log-pmf ratios of the samplers).
"""
from __future__ import annotations

import math

from numba import njit

HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
#: arguments at or above this use the Stirling series (7 terms: error < 1e-17 at x = 10)
_STIRLING_MIN = 10.0


@njit(cache=True)
def stirling_correction_nb(x):
    """``lgamma(x) - [(x - 1/2) log x - x + log sqrt(2 pi)]`` for ``x > 0``.

    It equals Loader's ``stirlerr(x)`` = ``lgamma(x + 1) - [(x + 1/2) log x - x + log sqrt(2 pi)]``.
    """
    if x < _STIRLING_MIN:
        return math.lgamma(x) - (x - 0.5) * math.log(x) + x - HALF_LOG_2PI
    r = 1.0 / x
    r2 = r * r
    # Bernoulli-number series B_2k / (2k (2k - 1) x^(2k - 1)), k = 1..7
    return r * (1.0 / 12.0 - r2 * (1.0 / 360.0 - r2 * (1.0 / 1260.0 - r2 * (
        1.0 / 1680.0 - r2 * (1.0 / 1188.0 - r2 * (691.0 / 360360.0 - r2 / 156.0))))))


@njit(cache=True)
def lgamma_diff_nb(x, d):
    """``lgamma(x + d) - lgamma(x)`` for ``x > 0`` and ``x + d > 0`` (``d`` may be negative)."""
    if d == 0:
        return 0.0
    y = x + d
    if x >= _STIRLING_MIN and y >= _STIRLING_MIN:
        return ((x - 0.5) * math.log1p(d / x) + d * math.log(y) - d
                + stirling_correction_nb(y) - stirling_correction_nb(x))
    return math.lgamma(y) - math.lgamma(x)


@njit(cache=True)
def bd0_nb(x, mean):
    """``x log(x / mean) + mean - x`` without cancellation (Loader 2000)."""
    if abs(x - mean) < 0.1 * (x + mean):
        v = (x - mean) / (x + mean)
        s = (x - mean) * v
        ej = 2.0 * x * v
        v2 = v * v
        j = 1
        while True:
            ej *= v2
            s_next = s + ej / (2 * j + 1)
            if s_next == s:
                return s_next
            s = s_next
            j += 1
    return x * math.log(x / mean) + mean - x
