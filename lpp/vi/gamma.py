"""Gamma variational factors: their expectations and their terms of the evidence lower bound.

Every latent array of a Poisson factorization gets an independent ``Gamma(shape, rate)``
factor per element (the optimal mean-field family under the models' Gamma priors). A factor is
stored as a pair of arrays; the helpers here give what the updates and the bound need:
``E[x] = shape / rate``, ``E[log x] = digamma(shape) - log(rate)``, the geometric expectation
``exp(E[log x])`` and ``Var[x] = shape / rate^2``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special


@dataclass(frozen=True)
class GammaFactor:
    """Independent ``Gamma(shape, rate)`` factors, one per element of a latent array."""

    shape: np.ndarray
    rate: np.ndarray

    @property
    def mean(self) -> np.ndarray:
        return self.shape / self.rate

    @property
    def log_mean(self) -> np.ndarray:
        """``E[log x]``."""
        return special.digamma(self.shape) - np.log(self.rate)

    @property
    def geometric(self) -> np.ndarray:
        """``exp(E[log x])``."""
        return np.exp(self.log_mean)

    @property
    def var(self) -> np.ndarray:
        return self.shape / self.rate**2

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """One draw of every element (floored at the smallest normal double)."""
        return np.maximum(rng.gamma(self.shape) / self.rate, np.finfo(np.float64).tiny)


def gamma_elbo_term(q: GammaFactor, a0: float, b0: float) -> float:
    """``E_q[log p(x)] - E_q[log q(x)]`` summed over elements, prior ``Gamma(a0, rate b0)``.

    Parameters
    ----------
    q : GammaFactor
        The variational factors.
    a0, b0 : float
        Shape and rate of the prior.

    Returns
    -------
    float
        Minus the summed Kullback-Leibler divergence from the prior.
    """
    a, b = q.shape, q.rate
    e_log = special.digamma(a) - np.log(b)
    e_x = a / b
    prior = a0 * math.log(b0) - math.lgamma(a0) + (a0 - 1.0) * e_log - b0 * e_x
    entropy = a - np.log(b) + special.gammaln(a) + (1.0 - a) * special.digamma(a)
    return float(np.sum(prior + entropy))
