"""Naive Bayes over categorical records (the one-state HMM): non-private, Laplace and OPS.

Every record's ``D`` fields are independent categoricals, ``phi_d ~ Dirichlet(gamma)``; the
sufficient statistics are the corpus-wide counts per field. The posterior is conjugate, so
"Gibbs sampling" is a direct draw per field:

* non-private and Laplace: ``Dirichlet(gamma + c_d)`` with the true counts or with counts
  released by :func:`release_laplace` (``epsilon / D`` per field, sensitivity 2 under
  ``"replace"``, clipped at zero);
* OPS: ``Dirichlet((gamma + c_d - 1)/T + 1)`` truncated to ``phi_d >= a0_d``, with ``T`` and
  ``a0_d`` from :func:`lpp.central.hmm.ops_settings` (relation ``"replace"``).
"""
from __future__ import annotations

import numpy as np
from scipy import special

from lpp.randomness import as_generator
from lpp.validation import real_array
from . import conjugate, mechanisms

__all__ = ["field_totals", "release_laplace", "sample_posterior", "heldout_loglik"]


def field_totals(counts):
    """Per-field category totals from per-step counts, summed exactly.

    Parameters
    ----------
    counts : sequence of array_like of int
        Per field ``(n_steps, K_d)``, ``K_d >= 2``: non-negative integers (an integer array,
        or floats holding whole numbers) of at most
        :data:`lpp.central.mechanisms.MAX_STATISTIC` each.

    Returns
    -------
    tuple of ndarray of int64
        Per field ``(K_d,)``; summed in int64 where no partial sum can leave it, else in Python
        integers, so a total is never rounded or wrapped.

    Raises
    ------
    TypeError
        Counts of bools, durations, dates or objects.
    ValueError
        No field, a field that is not ``(n_steps, K_d)``, negative, non-integer or too large
        counts, or a total beyond int64 (each message names ``counts[d]``).
    """
    out = []
    for d, c in enumerate(counts):
        name = f"counts[{d}]"
        arr = mechanisms.integer_statistics(c, name, non_negative=True)
        if arr.ndim != 2 or arr.shape[1] < 2:
            raise ValueError(f"{name} must be (n_steps, K_d) with K_d >= 2")
        out.append(mechanisms.exact_sum(arr, name, axis=0))
    if not out:
        raise ValueError("counts holds no field")
    return tuple(out)


def release_laplace(totals, epsilon, *, rng=None):
    """Laplace release of the per-field totals, ``epsilon / D`` each (relation ``"replace"``).

    Parameters
    ----------
    totals : sequence of array_like of int
        True category totals per field (:func:`field_totals`): non-negative integers of at
        most :data:`lpp.central.mechanisms.MAX_STATISTIC`.
    epsilon, rng
        As in :func:`lpp.central.mechanisms.release_fields`.

    Returns
    -------
    tuple of ndarray of int64
        Released totals: exactly ``totals[d] + noise``, clipped at zero.

    Raises
    ------
    TypeError, ValueError
        As :func:`lpp.central.mechanisms.release_fields`, naming ``totals[d]``; no field.
    """
    if not len(totals):
        raise ValueError("totals holds no field")
    return mechanisms.release_fields(totals, epsilon, "totals", rng)


def sample_posterior(totals, *, n_samples=1, temperature=1.0, a0=None, gamma=1.0, rng=None):
    """Draws of ``phi_d`` per field from the (tempered, truncated) posterior.

    Parameters
    ----------
    totals : sequence of array_like
        Per-field totals (true or released), each ``(K_d,)``, >= 0.
    n_samples : int, keyword-only
    temperature : float, keyword-only
        ``T >= 1``; 1 with ``a0=None`` is the exact posterior.
    a0 : None or sequence of float, keyword-only
        Per-field truncation (OPS).
    gamma : float, keyword-only
        Symmetric Dirichlet prior (>= 1 for OPS).
    rng : Generator, int or None, keyword-only

    Returns
    -------
    tuple of ndarray
        Per field ``(n_samples, K_d)``.

    Raises
    ------
    ValueError
        Negative totals, ``T < 1``, ``a0`` of the wrong length or range.
    """
    gen = as_generator(rng)
    if float(temperature) < 1.0:
        raise ValueError(f"temperature must be >= 1, got {temperature}")
    if a0 is not None and len(a0) != len(totals):
        raise ValueError(f"a0 has {len(a0)} entries for {len(totals)} fields")
    out = []
    for d, t in enumerate(totals):
        c = real_array(t, f"totals[{d}]", low=0.0)
        if c.ndim != 1 or c.size < 2:
            raise ValueError(f"totals[{d}] must be 1-d with >= 2 categories")
        alpha = np.tile(conjugate.tempered_params(c, temperature, gamma), (int(n_samples), 1))
        if a0 is None:
            g = gen.standard_gamma(alpha)
            out.append(g / g.sum(axis=1, keepdims=True))
        else:
            out.append(conjugate.sample_truncated_dirichlet(alpha, a0[d], rng=gen))
    return tuple(out)


def heldout_loglik(test_counts, phi):
    """``sum_{t,d,k} c[t, d, k] log phi_d[k]`` of held-out counts (multinomial constants out).

    Parameters
    ----------
    test_counts : sequence of array_like
        Per field ``(n_steps, K_d)`` or ``(K_d,)``.
    phi : sequence of array_like
        Per field ``(K_d,)``.

    Returns
    -------
    float
    """
    return float(sum(special.xlogy(np.asarray(c, float), np.asarray(p)[None] if np.ndim(c) == 2
                                   else np.asarray(p)).sum()
                     for c, p in zip(test_counts, phi)))
