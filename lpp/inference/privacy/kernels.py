"""The numba kernels of the privacy steps (:mod:`lpp.inference.privacy.steps`): the exact
collapsed conditional of each count, and the Bessel augmentation's counts and noise rates.

Random numbers: the kernels work on fixed blocks of :data:`BLOCK_SIZE` consecutive entries (C
order) and seed each block's stream with ``(seed, iteration, block)``, so a draw depends on the
seed and the iteration only — not on the number of threads. Each kernel is a loop over blocks,
compiled parallel and run in the interpreter for small data
(:func:`lpp.inference.numerics.parallel_and_interpreted`): both draw the same numbers.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from lpp.distributions import (
    binomial_nb,
    poisson_logcdf_nb,
    poisson_logsf_nb,
    poisson_nb,
    sample_bessel_nb,
    standard_gamma_nb,
    truncated_poisson_above_nb,
    truncated_poisson_at_most_nb,
)
from lpp.distributions.bessel import MAX_PARAMETER as BESSEL_MAX_PARAMETER
from lpp.distributions.poisson import MAX_MEAN
from lpp.inference.numerics import CALL_STEPS, SERIAL_BELOW, call_ranges, parallel_and_interpreted
from lpp.randomness import new_stream, seed_block, uniform

__all__ = ["BLOCK_SIZE", "INVERSION_MAX_COUNT", "INVERSION_MAX_RATE", "bessel_counts_kernel",
           "collapsed_kernel", "lambda_kernel", "positive_by_inversion_at",
           "sample_true_count_collapsed_nb"]

#: entries per random-stream block of the privacy kernels
BLOCK_SIZE = 4096
#: the direct inversion of the positive case serves y_tilde up to this and mu / alpha up to
#: INVERSION_MAX_RATE (its terms, scaled to P(0) = 1, stay below e^500); beyond, log-space pieces
INVERSION_MAX_COUNT = 256
INVERSION_MAX_RATE = 500.0
_SERIES_TOL = 1e-17
#: 1/j for the inversion's ratios (a product per term instead of a division); beyond the table's
#: end the division is done
_RECIPROCALS = 1.0 / np.arange(1, 2 * INVERSION_MAX_COUNT + 2, dtype=np.float64)
_N_RECIPROCALS = _RECIPROCALS.size

# ---------------------------------------------------------------------------------------------
# collapsed kernel
# ---------------------------------------------------------------------------------------------

@njit(cache=True)
def _positive_by_inversion(rng, y_tilde, alpha, mu):
    """Exact draw for ``y_tilde > 0`` by inversion of the whole conditional: one uniform, then
    :func:`positive_by_inversion_at`."""
    return positive_by_inversion_at(y_tilde, alpha, mu, uniform(rng))


@njit(cache=True)
def positive_by_inversion_at(y_tilde, alpha, mu, u):
    """The draw for ``y_tilde > 0`` by inversion of the whole conditional at the uniform ``u``.

    With weights scaled so that ``w_0 = 1``, successive ratios are ``w_j / w_(j-1) = mu /
    (alpha j)`` for ``j <= y_tilde`` and ``alpha mu / j`` beyond, so the normaliser is a sum of
    products (no logarithms, no special functions). The uniform ``u`` is drawn first and the
    target ``u * total`` is located lazily: the pieces up to ``y_tilde`` are summed exactly and
    the upper tail is first bracketed by its leading term and a geometric bound on the rest.
    When the whole bracket of the target falls inside one cell of the lower piece — nearly
    always when ``alpha mu`` is small, as it is on noise entries — that cell is the draw, the
    same one a fully summed normaliser would give. Otherwise the upper tail is summed until the
    rest is below 1e-17 of the total and the target is located in the full series.
    """
    lam_low = mu / alpha
    lam_high = alpha * mu
    low = 1.0
    t = 1.0
    for j in range(1, y_tilde + 1):
        t *= lam_low * _RECIPROCALS[j - 1]
        low += t
    top = t  # w_(y_tilde)
    if y_tilde + 1 < _N_RECIPROCALS:
        ratio_first = lam_high * _RECIPROCALS[y_tilde]
        ratio_rest = lam_high * _RECIPROCALS[y_tilde + 1]  # bounds every later ratio
        if ratio_rest < 1.0:
            first = top * ratio_first
            target_lo = u * (low + first)
            target_hi = u * (low + first / (1.0 - ratio_rest))
            if target_hi < low:
                acc = 1.0
                t = 1.0
                j = 0
                while acc <= target_lo:  # stops by j = y_tilde, where acc == low
                    j += 1
                    t *= lam_low * _RECIPROCALS[j - 1]
                    acc += t
                if acc > target_hi:
                    return j
    total = low
    t = top
    j = y_tilde
    while True:
        j += 1
        r = lam_high * _RECIPROCALS[j - 1] if j <= _N_RECIPROCALS else lam_high / j
        t *= r
        total += t
        r = lam_high / (j + 1.0) if j >= _N_RECIPROCALS else lam_high * _RECIPROCALS[j]
        if r < 1.0 and t * r <= _SERIES_TOL * total * (1.0 - r):
            break
    last = j
    target = u * total
    acc = 1.0
    t = 1.0
    j = 0
    while acc <= target and j < last:
        j += 1
        lam = lam_low if j <= y_tilde else lam_high
        t *= lam * _RECIPROCALS[j - 1] if j <= _N_RECIPROCALS else lam / j
        acc += t
    return j


@njit(cache=True)
def sample_true_count_collapsed_nb(rng, y_tilde, alpha, mu):
    """One exact draw from ``P(y | y_tilde, mu) ∝ Pois(y; mu) alpha**|y_tilde - y|``; -1 for a
    rate that is NaN, infinite or above :data:`lpp.distributions.poisson.MAX_MEAN`."""
    if mu <= 0.0:
        return 0
    if not mu <= MAX_MEAN:
        return -1
    if y_tilde <= 0:
        return poisson_nb(rng, alpha * mu)
    if y_tilde <= INVERSION_MAX_COUNT and mu <= INVERSION_MAX_RATE * alpha:
        return _positive_by_inversion(rng, y_tilde, alpha, mu)
    log_alpha = math.log(alpha)
    lam_low = mu / alpha
    lam_high = alpha * mu
    log_cdf_low = poisson_logcdf_nb(y_tilde, lam_low)
    log_sf_high = poisson_logsf_nb(y_tilde, lam_high)
    # weights of the pieces y <= y_tilde and y > y_tilde (common factor e^-mu dropped)
    log_w_low = y_tilde * log_alpha + lam_low + log_cdf_low
    log_w_high = -y_tilde * log_alpha + lam_high + log_sf_high
    diff = log_w_low - log_w_high
    if diff > 700.0:
        p_high = 0.0
    else:
        p_high = 1.0 / (1.0 + math.exp(diff))
    if uniform(rng) < p_high:
        return truncated_poisson_above_nb(rng, lam_high, y_tilde, log_sf_high)
    return truncated_poisson_at_most_nb(rng, lam_low, y_tilde, log_cdf_low)


@njit(cache=True)
def _collapsed_block(y_tilde, mu, observed, alpha_values, alpha_stride, seed, iteration, b, out):
    rng = new_stream()
    seed_block(rng, seed, iteration, b)
    for e in range(b * BLOCK_SIZE, min(y_tilde.size, (b + 1) * BLOCK_SIZE)):
        if observed[e]:
            alpha = alpha_values[e // alpha_stride]
            out[e] = sample_true_count_collapsed_nb(rng, y_tilde[e], alpha, mu[e])
        else:
            out[e] = 0


def _collapsed_loop(y_tilde, mu, observed, alpha_values, alpha_stride, seed, iteration, b_lo,
                    b_hi, out):
    for b in prange(b_hi - b_lo):
        _collapsed_block(y_tilde, mu, observed, alpha_values, alpha_stride, seed, iteration,
                         b_lo + b, out)


_collapsed_parallel, _collapsed_serial = parallel_and_interpreted(_collapsed_loop)


def collapsed_kernel(y_tilde, mu, observed, alpha_values, alpha_stride, seed, iteration, out):
    kernel = _collapsed_serial if y_tilde.size < SERIAL_BELOW else _collapsed_parallel
    for b_lo, b_hi in call_ranges(_collapsed_steps(y_tilde)):
        kernel(y_tilde, mu, observed, alpha_values, alpha_stride, seed, iteration, b_lo, b_hi,
               out)


#: steps of the collapsed draw of a positive count y~ at most: about 9 sqrt(y~) terms of a tail
#: sum near the centre (:mod:`lpp.distributions.poisson`), never more than this
_COLLAPSED_MAX_STEPS = 10_000


def _collapsed_steps(y_tilde: np.ndarray) -> np.ndarray:
    """Steps per block of :func:`_collapsed_kernel` (bounded by the largest count when that
    fits one call)."""
    n_blocks = (y_tilde.size + BLOCK_SIZE - 1) // BLOCK_SIZE
    top = float(max(y_tilde.max(), 0))
    per_entry = 16.0 + min(9.0 * math.sqrt(top), _COLLAPSED_MAX_STEPS)
    if per_entry * y_tilde.size <= CALL_STEPS:
        return np.full(n_blocks, per_entry * BLOCK_SIZE)
    positive = np.sqrt(np.maximum(y_tilde, 0).astype(np.float64))
    steps = 16.0 + np.minimum(9.0 * positive, _COLLAPSED_MAX_STEPS)
    return np.add.reduceat(steps, np.arange(0, y_tilde.size, BLOCK_SIZE))


# ---------------------------------------------------------------------------------------------
# Bessel kernels
# ---------------------------------------------------------------------------------------------

@njit(cache=True)
def _bessel_counts_block(y_tilde, mu, observed, lam_plus, lam_minus, seed, iteration, b,
                         y_out, g_plus_out, g_minus_out):
    rng = new_stream()
    seed_block(rng, seed, iteration, b)
    for e in range(b * BLOCK_SIZE, min(y_tilde.size, (b + 1) * BLOCK_SIZE)):
        if not observed[e]:
            y_out[e] = 0
            g_plus_out[e] = 0
            g_minus_out[e] = 0
            continue
        yt = y_tilde[e]
        m_e = mu[e]
        lp = lam_plus[e]
        a = 2.0 * math.sqrt((lp + m_e) * lam_minus[e])
        if not a <= BESSEL_MAX_PARAMETER:  # NaN or beyond the sampler: marked for the caller
            y_out[e] = -1
            g_plus_out[e] = 0
            g_minus_out[e] = 0
            continue
        # m = min(y_tilde+, g-) given their difference y_tilde (Theorem 3)
        m = sample_bessel_nb(rng, abs(yt), a)
        if yt <= 0:
            y_plus = m
            g_minus = m - yt
        else:
            g_minus = m
            y_plus = m + yt
        if m_e <= 0.0 or y_plus == 0:
            y = 0
        else:
            y = binomial_nb(rng, y_plus, m_e / (m_e + lp))
        y_out[e] = y
        g_plus_out[e] = y_plus - y
        g_minus_out[e] = g_minus


def _bessel_counts_loop(y_tilde, mu, observed, lam_plus, lam_minus, seed, iteration, b_lo, b_hi,
                        y_out, g_plus_out, g_minus_out):
    for b in prange(b_hi - b_lo):
        _bessel_counts_block(y_tilde, mu, observed, lam_plus, lam_minus, seed, iteration,
                             b_lo + b, y_out, g_plus_out, g_minus_out)


_bessel_counts_parallel, _bessel_counts_serial = parallel_and_interpreted(_bessel_counts_loop)

#: steps of one entry of the Bessel step (a Bessel, a binomial and two Gamma draws)
_BESSEL_STEPS = 32.0


def _block_ranges(size: int, steps_per_entry: float) -> list[tuple[int, int]]:
    n_blocks = (size + BLOCK_SIZE - 1) // BLOCK_SIZE
    return call_ranges(np.full(n_blocks, steps_per_entry * BLOCK_SIZE))


def bessel_counts_kernel(y_tilde, mu, observed, lam_plus, lam_minus, seed, iteration, *out):
    kernel = _bessel_counts_serial if y_tilde.size < SERIAL_BELOW else _bessel_counts_parallel
    for b_lo, b_hi in _block_ranges(y_tilde.size, _BESSEL_STEPS):
        kernel(y_tilde, mu, observed, lam_plus, lam_minus, seed, iteration, b_lo, b_hi, *out)


@njit(cache=True)
def _lambda_block(g_plus, g_minus, observed, scale_values, scale_stride, seed, iteration, b,
                  lam_plus, lam_minus):
    rng = new_stream()
    seed_block(rng, seed, iteration, b)
    for e in range(b * BLOCK_SIZE, min(g_plus.size, (b + 1) * BLOCK_SIZE)):
        if observed[e]:
            scale = scale_values[e // scale_stride]
            lam_plus[e] = standard_gamma_nb(rng, 1.0 + g_plus[e]) * scale
            lam_minus[e] = standard_gamma_nb(rng, 1.0 + g_minus[e]) * scale


def _lambda_loop(g_plus, g_minus, observed, scale_values, scale_stride, seed, iteration, b_lo,
                 b_hi, lam_plus, lam_minus):
    for b in prange(b_hi - b_lo):
        _lambda_block(g_plus, g_minus, observed, scale_values, scale_stride, seed, iteration,
                      b_lo + b, lam_plus, lam_minus)


_lambda_parallel, _lambda_serial = parallel_and_interpreted(_lambda_loop)


def lambda_kernel(g_plus, g_minus, observed, scale_values, scale_stride, seed, iteration,
                   lam_plus, lam_minus):
    """``lam± ~ Gamma(1 + g±, scale)`` in place, for observed entries."""
    kernel = _lambda_serial if g_plus.size < SERIAL_BELOW else _lambda_parallel
    for b_lo, b_hi in _block_ranges(g_plus.size, _BESSEL_STEPS):
        kernel(g_plus, g_minus, observed, scale_values, scale_stride, seed, iteration, b_lo,
               b_hi, lam_plus, lam_minus)
