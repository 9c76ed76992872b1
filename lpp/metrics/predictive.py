"""Held-out Poisson predictive log-likelihood of saved posterior samples: a proper score.

MAE rewards shrinkage on sparse counts (its minimiser is the predictive *median*, which is 0
for every Poisson rate below log 2, so "predict zero everywhere" beats any honest posterior
mean). The log predictive density is a proper scoring rule: in expectation it is maximised
only by the true predictive distribution, so it cannot be gamed that way. For each scored
entry ``(i, j)`` it is the log of the posterior predictive pmf, estimated by the mean over the
``S`` saved samples of the rates::

    lpd[i, j] = log( (1/S) sum_s Pois(y[i, j]; mu_s[i, j]) )
              = logsumexp_s( log Pois(y[i, j]; mu_s[i, j]) ) - log S

computed in log space (a running ``logaddexp`` over samples), so that entries whose pmf
underflows in every sample still get a finite score. The samples are consumed one at a time,
so memory holds one data-shaped array, never S of them.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy import special

from lpp.validation import check_counts
from lpp.metrics._inputs import stored_values

__all__ = ["pointwise_predictive_log_likelihood", "predictive_log_likelihood"]


def _as_counts(y):
    if sp.issparse(y):
        if y.ndim != 2:
            raise ValueError(f"a sparse y must be 2-d; got {y.ndim}-d")
        check_counts(stored_values(y), "y")
        return np.asarray(y.toarray())
    y = np.asarray(y)
    check_counts(y, "y")
    return y


def _as_mask(mask, shape):
    if mask is None:
        return None
    mask = mask.toarray() if sp.issparse(mask) else np.asarray(mask)
    if mask.dtype != np.bool_:
        raise TypeError(f"mask must be boolean (True = scored entry); got dtype {mask.dtype}")
    if mask.shape != shape:
        raise ValueError(f"mask must have the shape of y; got {mask.shape} vs {shape}")
    if not mask.any():
        raise ValueError("mask selects no entries; nothing to score")
    return mask


def pointwise_predictive_log_likelihood(rate_samples, y, mask=None) -> np.ndarray:
    """Log posterior predictive pmf of each scored entry, averaged over the rate samples.

    Parameters
    ----------
    rate_samples : array_like or iterable of array_like
        The Poisson rates ``mu`` of each saved sample: an array of shape ``(S,) + y.shape``,
        or any iterable (e.g. a generator) yielding ``S`` arrays of ``y``'s shape, consumed
        once. Rates must be finite and non-negative; a rate of 0 gives the pmf 1 at a zero
        count and 0 (log: ``-inf``) at a positive one.
    y : array_like or scipy.sparse matrix
        The held-out true counts (non-negative integers).
    mask : array_like of bool, optional
        True marks the scored entries (e.g. the held-out block); None scores every entry.

    Returns
    -------
    ndarray of float64
        ``log((1/S) sum_s Pois(y; mu_s))`` of the scored entries, flattened in C order
        (of shape ``y.shape`` when ``mask`` is None). ``-inf`` only where every sample
        gives the observed count probability exactly 0.

    Raises
    ------
    ValueError
        If ``y`` is not a count array, a sample's shape differs from ``y``'s, a rate is
        negative or not finite, there are no samples, or the mask selects nothing.
    TypeError
        If the mask is not boolean.
    """
    y = _as_counts(y)
    mask = _as_mask(mask, y.shape)
    counts = (y if mask is None else y[mask]).astype(np.float64)
    log_norm = special.gammaln(counts + 1.0)
    if isinstance(rate_samples, np.ndarray) and rate_samples.shape[1:] != y.shape:
        raise ValueError(f"rate_samples must have shape (S,) + {y.shape}; "
                         f"got {rate_samples.shape}")
    total, n_samples = None, 0
    for s, rates in enumerate(rate_samples):
        rates = np.asarray(rates, dtype=np.float64)
        if rates.shape != y.shape:
            raise ValueError(f"rate sample {s} has shape {rates.shape}; y has {y.shape}")
        rates = rates if mask is None else rates[mask]
        if not np.isfinite(rates).all() or (rates < 0).any():
            raise ValueError(f"rate sample {s} has a negative or non-finite rate")
        with np.errstate(divide="ignore"):
            log_pmf = special.xlogy(counts, rates) - rates - log_norm
        total = log_pmf if total is None else np.logaddexp(total, log_pmf)
        n_samples += 1
    if n_samples == 0:
        raise ValueError("rate_samples holds no sample")
    return total - math.log(n_samples)


def predictive_log_likelihood(rate_samples, y, mask=None) -> float:
    """Mean over the scored entries of the log posterior predictive pmf (higher is better).

    The per-entry values are those of :func:`pointwise_predictive_log_likelihood` (see there
    for the parameters); their mean, not their sum, so that scores of data sets or held-out
    sets of different sizes are comparable. Multiply by the number of scored entries for the
    total log predictive density.

    Returns
    -------
    float
        ``mean over scored (i, j) of log((1/S) sum_s Pois(y[i, j]; mu_s[i, j]))``; ``-inf``
        if some entry has a zero predictive probability in every sample.
    """
    return float(np.mean(pointwise_predictive_log_likelihood(rate_samples, y, mask)))
