"""The CAVI of Schofield, Schein, Wu & Wallach (appendix D), with its approximations.

Per entry the factors are: Gamma ``q(lam+)``, ``q(lam-)`` (prior ``Gamma(1, rate (1-a)/a)``, so
the optimal rate is ``1/a`` and only the shapes ``1 + E g+``, ``1 + E g-`` move); a point mass
at the mode of the optimal Bessel factor of ``m = min(y_tilde+, g-)``,

    a = 2 sqrt(G[lam-] G[lam+ + mu]),  nu = |y_tilde|,  m = floor((sqrt(a^2 + nu^2) - nu) / 2);

then ``y_tilde+ = m`` (``y_tilde <= 0``) or ``m + y_tilde``, ``g- = m - y_tilde`` or ``m``;
and the multinomial over ``(g+, y_1..y_K)`` with weights ``(G[lam+], G[mu_1], ..)``, read as
the binomial ``E y = y_tilde+ G[mu] / (G[mu] + G[lam+])`` followed by the split of ``E y``
over the components in proportion to ``G_ik``. The two geometric expectations with no closed
form, ``G[mu]`` and ``G[lam+ + mu]``, use the delta method
``E log X ~ log E X - Var X / (2 (E X)^2)`` (:func:`delta_log_mean`), with the model's exact
``E mu`` and ``Var mu``.

Objective and stopping rule (as in the authors' code): the Poisson-factorization bound with the
expected counts in place of data, ``sum_obs (E y log G_i - E mu_i) + sum (E log p - E log q)``
over the latents, tracked every iteration; the fit stops when its relative change is below
``tol`` (default 1e-4) or after ``max_iter`` iterations (default 200). It is a surrogate, not a
bound on the evidence: the point masses and the delta method leave no exact ELBO.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

#: the authors' stopping rule
PAPER_TOL = 1e-4
PAPER_MAX_ITER = 200
BLOCK = 8192


def delta_log_mean(mean, var):
    """Delta-method ``E[log X] ~ log E[X] - Var[X] / (2 E[X]^2)`` (elementwise)."""
    mean = np.asarray(mean, dtype=np.float64)
    return np.log(mean) - np.asarray(var) / (2.0 * mean * mean)


@njit(cache=True, parallel=True)
def _entries_kernel(yt, observed, e_mu, v_mu, g_sum, lp_shape, lm_shape, lam_rate,
                    r, lp_new, lm_new, mode, block_sums):
    n = yt.size
    for b in prange(block_sums.size):
        acc = 0.0
        for e in range(b * BLOCK, min(n, (b + 1) * BLOCK)):
            if not observed[e]:
                r[e] = 0.0
                lp_new[e] = lp_shape[e]
                lm_new[e] = lm_shape[e]
                mode[e] = 0
                continue
            rate = lam_rate[e]
            ps = lp_shape[e]
            e_lp = ps / rate
            v_lp = ps / (rate * rate)
            log_rate = math.log(rate)
            g_lp = math.exp(_digamma(ps) - log_rate)
            g_lm = math.exp(_digamma(lm_shape[e]) - log_rate)
            em = e_mu[e]
            if em > 0.0:
                g_mu = em * math.exp(-v_mu[e] / (2.0 * em * em))
            else:
                g_mu = 0.0
            s = em + e_lp
            g_lpmu = s * math.exp(-(v_mu[e] + v_lp) / (2.0 * s * s))
            a = 2.0 * math.sqrt(g_lm * g_lpmu)
            y = yt[e]
            nu = abs(float(y))
            m = math.floor((math.sqrt(a * a + nu * nu) - nu) / 2.0)
            if y <= 0:
                y_plus = m
                g_minus = m - y
            else:
                y_plus = m + y
                g_minus = m
            ey = y_plus * g_mu / (g_mu + g_lp) if y_plus > 0 else 0.0
            lp_new[e] = 1.0 + (y_plus - ey)
            lm_new[e] = 1.0 + g_minus
            mode[e] = m
            gs = g_sum[e]
            r[e] = ey / gs if gs > 0.0 else 0.0
            if ey > 0.0:
                acc += ey * math.log(gs)
        block_sums[b] = acc


@njit(cache=True)
def _digamma(x):
    """digamma for x > 0 (recurrence to x >= 6, then the asymptotic series); NaN otherwise (the
    recurrence never reaches 6 from -inf or from below -2**53, where ``x + 1 == x``)."""
    if not x > 0.0:
        return math.nan
    acc = 0.0
    while x < 6.0:
        acc -= 1.0 / x
        x += 1.0
    inv = 1.0 / x
    inv2 = inv * inv
    return (acc + math.log(x) - 0.5 * inv
            - inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (
                1.0 / 240 - inv2 / 132)))))


def paper_entries_step(y_tilde, observed, e_mu, v_mu, g_sum, lp_shape, lm_shape, lam_rate):
    """One pass of the per-entry factors; returns ``(r, lp_shape, lm_shape, mode, sum E y log G)``.

    All arrays data-shaped; ``lam_rate`` is ``1 / alpha`` per entry.
    """
    n = y_tilde.size
    r = np.empty(y_tilde.shape)
    lp_new = np.empty(y_tilde.shape)
    lm_new = np.empty(y_tilde.shape)
    mode = np.empty(y_tilde.shape, dtype=np.int64)
    sums = np.zeros((n + BLOCK - 1) // BLOCK)
    flat = [np.ascontiguousarray(x).reshape(-1) for x in
            (y_tilde, observed, e_mu, v_mu, g_sum, lp_shape, lm_shape, lam_rate)]
    _entries_kernel(*flat, r.reshape(-1), lp_new.reshape(-1), lm_new.reshape(-1),
                    mode.reshape(-1), sums)
    return r, lp_new, lm_new, mode, float(sums.sum())
