"""Skellam(mu1, mu2): the law of ``g1 - g2`` with independent ``g1 ~ Pois(mu1)``,
``g2 ~ Pois(mu2)``; ``P(k) = e^-(mu1+mu2) (mu1/mu2)^(k/2) I_|k|(2 sqrt(mu1 mu2))``.

Computed as ``-(sqrt(mu1) - sqrt(mu2))^2 + (k/2) log(mu1/mu2) + log(I_|k|(x) e^-x)`` with
``x = 2 sqrt(mu1 mu2)``, so it stays finite where scipy's pmf underflows (k = 500, mu = 1).
``mu2 = 0`` (``mu1 = 0``) is the Poisson law of k (of -k).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from lpp.validation import broadcast_params, finish, integer_array, real_array
from ._log_bessel import log_bessel_ive_nb
from .poisson import poisson_logpmf_nb


@njit(cache=True)
def skellam_logpmf_nb(k, mu1, mu2):
    """``log P(k)`` of Skellam(mu1, mu2) (k integer-valued, means mu1, mu2 >= 0)."""
    if mu2 == 0.0:
        return poisson_logpmf_nb(k, mu1)
    if mu1 == 0.0:
        return poisson_logpmf_nb(-k, mu2)
    s1 = math.sqrt(mu1)
    s2 = math.sqrt(mu2)
    diff = s1 - s2
    return (-diff * diff + 0.5 * k * (math.log(mu1) - math.log(mu2))
            + log_bessel_ive_nb(abs(float(k)), 2.0 * s1 * s2))


@njit(cache=True)
def _kernel(k, mu1, mu2, out):
    for i in range(out.size):
        out[i] = skellam_logpmf_nb(k[i], mu1[i], mu2[i])


def skellam_logpmf(k, mu1, mu2):
    """Vectorised log-pmf of Skellam(mu1, mu2) at integers k (means mu1, mu2 >= 0)."""
    k = integer_array(k, "k")
    mu1 = real_array(mu1, "mu1", low=0.0)
    mu2 = real_array(mu2, "mu2", low=0.0)
    (k, mu1, mu2), shape = broadcast_params((k, mu1, mu2), ("k", "mu1", "mu2"))
    out = np.empty(k.size)
    _kernel(k, mu1, mu2, out)
    return finish(out, shape)
