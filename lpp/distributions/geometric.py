"""Two-sided geometric 2Geo(alpha): ``P(k) = (1 - alpha)/(1 + alpha) alpha^|k|``, k in Z.

The noise of the geometric mechanism; ``alpha = exp(-epsilon/N)`` (see ``lpp.mechanism``).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from lpp.validation import broadcast_params, finish, integer_array, real_array


@njit(cache=True)
def two_sided_geometric_logpmf_nb(k, alpha):
    """``log P(k)`` of 2Geo(alpha), 0 < alpha < 1 (k integer-valued)."""
    return math.log1p(-alpha) - math.log1p(alpha) + abs(k) * math.log(alpha)


@njit(cache=True)
def _kernel(k, alpha, out):
    for i in range(out.size):
        out[i] = two_sided_geometric_logpmf_nb(k[i], alpha[i])


def two_sided_geometric_logpmf(k, alpha):
    """Vectorised log-pmf of 2Geo(alpha) at integers k; alpha in (0, 1)."""
    k = integer_array(k, "k")
    alpha = real_array(alpha, "alpha", low=0.0, low_open=True, high=1.0, high_open=True)
    (k, alpha), shape = broadcast_params((k, alpha), ("k", "alpha"))
    out = np.empty(k.size)
    _kernel(k, alpha, out)
    return finish(out, shape)
