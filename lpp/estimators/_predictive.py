"""The held-out predictive log density that :meth:`PrivateTopicModel.score` averages: per
entry, the log of the predictive pmf averaged over posterior draws of the documents' topic
intensities, the topics fixed."""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from lpp.distributions import poisson_logpmf_nb, privatized_poisson_logpmf_at_nb


@njit(cache=True, parallel=True)
def _log_predictive_kernel(counts, theta_draws, phi, alpha, private, out):
    n_draws, n_docs, n_topics = theta_draws.shape
    n_words = phi.shape[1]
    phi_t = np.ascontiguousarray(phi.T)
    log_n = math.log(n_draws)
    log_a = math.log(alpha)
    log_c = math.log1p(-alpha) - math.log1p(alpha)
    for d in prange(n_docs):
        one = np.empty(n_draws)
        for v in range(n_words):
            x = counts[d, v]
            top = -math.inf
            for s in range(n_draws):
                mu = 0.0
                for k in range(n_topics):
                    mu += theta_draws[s, d, k] * phi_t[v, k]
                lp = (privatized_poisson_logpmf_at_nb(x, mu, alpha, log_a, log_c) if private
                      else poisson_logpmf_nb(x, mu))
                one[s] = lp
                top = max(top, lp)
            if top == -math.inf:
                out[d, v] = -math.inf
                continue
            total = 0.0
            for s in range(n_draws):  # the log of the draws' mean, scaled by the largest
                total += math.exp(one[s] - top)
            out[d, v] = top + math.log(total) - log_n


def log_predictive(counts, theta_draws, phi, alpha) -> np.ndarray:
    """``log((1/S) sum_s P(counts[d, v] | mu_s[d, v]))`` for every entry (D x V), with
    ``mu_s = theta_draws[s] @ phi``: the pmf of ``Pois(mu) + 2Geo(alpha)``, or of
    ``Pois(mu)`` for ``alpha=None``. Each entry on its own (bit-identical for any number of
    threads)."""
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    theta_draws = np.ascontiguousarray(theta_draws, dtype=np.float64)
    phi = np.ascontiguousarray(phi, dtype=np.float64)
    out = np.empty(counts.shape)
    _log_predictive_kernel(counts, theta_draws, phi, 0.5 if alpha is None else float(alpha),
                           alpha is not None, out)
    return out
