"""The data terms of the log joint, summed row by row in one fixed order.

Both terms are sums over the observed entries: the Poisson log likelihood
``y log mu - mu - log y!`` and the noise's ``log 2Geo(y_tilde - y; alpha)``. Each is formed
here in one compiled pass over the entries, without temporaries of the data's size, and summed
by one rule: a row's terms (a row is a leading index; its entries in C order, the missing ones
skipped) are added in order, then the rows' sums in row order (:func:`ordered_sum`). Rows are
independent, so the row sums may be computed on any number of threads, or by Dask workers
holding row blocks, and the total is the same float.

The passes are cheap because most terms are trivial: where ``y = 0`` the likelihood term is
``-mu`` (no logarithm), and the noise term is ``log((1 - alpha) / (1 + alpha)) + |y_tilde - y|
log alpha`` with the two logarithms taken once per noise level, not per entry. At 10,000 x
10,000 the two passes are over ten times faster than NumPy/SciPy over blocks of entries
(``xlogy`` and ``gammaln`` of every entry, and their temporaries), which every saved sweep
would pay (``bench/README.md``, *What a saved sweep costs*, from
``bench/results/saved_sweep.json``).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from lpp.inference.numerics import SERIAL_BELOW, parallel_and_serial

__all__ = ["ordered_sum", "poisson_row_sums", "poisson_factor_row_sums", "geometric_row_sums"]


@njit(cache=True)
def ordered_sum(values) -> float:
    """``values`` added one after another, in order (no reassociation: the same float on every
    CPU and for any split of the rows that is put back in order)."""
    total = 0.0
    for i in range(values.size):
        total += values[i]
    return total


@njit(cache=True, inline="always")
def _add_poisson_term(total, count, rate):
    """``total + log Pois(count; rate)``, a zero count as ``- rate`` (the dense and the CSR
    row sums add the same terms in the same order)."""
    if count == 0:
        return total - rate
    return total + (count * math.log(rate) - rate - math.lgamma(count + 1.0))


def _poisson_rows(y, mu, mask, complete, out):
    n_rows, n_cols = y.shape
    for d in prange(n_rows):
        total = 0.0
        for v in range(n_cols):
            if not complete and not mask[d, v]:
                continue
            total = _add_poisson_term(total, y[d, v], mu[d, v])
        out[d] = total


_poisson_kernels = parallel_and_serial(_poisson_rows)


def _poisson_csr_rows(indptr, indices, values, theta, phi, mask, complete, out):
    n_rows = indptr.size - 1
    n_inner, n_cols = phi.shape
    for d in prange(n_rows):
        # the row's rates as lpp.inference.kernels.product_kernel forms them: over k in order
        rates = np.empty(n_cols)
        for v in range(n_cols):
            rates[v] = 0.0
        for k in range(n_inner):
            weight = theta[d, k]
            for v in range(n_cols):
                rates[v] += weight * phi[k, v]
        # then _poisson_rows's sum, the counts read off the row's sorted entries
        j, end = indptr[d], indptr[d + 1]
        total = 0.0
        for v in range(n_cols):
            count = np.int64(0)
            if j < end and indices[j] == v:
                count = values[j]
                j += 1
            if not complete and not mask[d, v]:
                continue
            total = _add_poisson_term(total, count, rates[v])
        out[d] = total


_poisson_csr_kernels = parallel_and_serial(_poisson_csr_rows)


def _geometric_rows(y_tilde, y, log_norm, log_alpha, per_entry, mask, complete, out):
    n_rows, n_cols = y.shape
    # the index of an entry's level: d * n_cols + v per entry, else d (one level per row)
    row_step = np.int64(n_cols) if per_entry else np.int64(1)
    step = np.int64(1) if per_entry else np.int64(0)
    for d in prange(n_rows):
        first = d * row_step
        total = 0.0
        for v in range(n_cols):
            if not complete and not mask[d, v]:
                continue
            j = first + step * v
            total += log_norm[j] + abs(y_tilde[d, v] - y[d, v]) * log_alpha[j]
        out[d] = total


_geometric_kernels = parallel_and_serial(_geometric_rows)


def _rows(a: np.ndarray) -> np.ndarray:
    """``a`` as a C-contiguous (rows, entries per row) array (a vector is one row)."""
    a = np.ascontiguousarray(a)
    if a.ndim < 2:
        return a.reshape(1, -1)
    return a.reshape(a.shape[0], math.prod(a.shape[1:]))


def _mask_rows(observed):
    """``(mask, complete)`` for the kernels; a complete mask is not read."""
    if observed is None or observed.complete:
        return np.ones((1, 1), dtype=np.bool_), True
    return _rows(observed.is_observed), False


def poisson_row_sums(y: np.ndarray, mu: np.ndarray, observed=None) -> np.ndarray:
    """Per row, the sum over its observed entries of ``log Pois(y; mu)``.

    ``y`` holds integer counts, ``mu`` the rates (same shape); ``observed`` an
    :class:`~lpp.inference.models.base.Observed` or None (every entry). A zero rate under a
    positive count gives ``-inf``, as the density does."""
    y2, mu2 = _rows(y), _rows(np.asarray(mu, dtype=np.float64))
    if y2.shape != mu2.shape:
        raise ValueError(f"counts of shape {np.shape(y)} and rates of shape {np.shape(mu)} differ")
    mask, complete = _mask_rows(observed)
    out = np.empty(y2.shape[0])
    _poisson_kernels[y2.size < SERIAL_BELOW](y2, mu2, mask, complete, out)
    return out


def poisson_factor_row_sums(indptr, indices, values, theta, phi, observed=None) -> np.ndarray:
    """:func:`poisson_row_sums` of CSR counts (``indptr``, sorted ``indices``, int64
    ``values``) and the rates ``theta @ phi``, neither made dense: each row's rates are formed
    in a buffer of one row, in :func:`lpp.inference.kernels.product_kernel`'s order, and summed
    in :func:`poisson_row_sums`'s, so the row sums are the same floats as those of the dense
    counts and ``product_kernel(theta, phi)``."""
    theta = np.ascontiguousarray(theta, dtype=np.float64)
    phi = np.ascontiguousarray(phi, dtype=np.float64)
    mask, complete = _mask_rows(observed)
    out = np.empty(theta.shape[0])
    _poisson_csr_kernels[theta.shape[0] * phi.shape[1] < SERIAL_BELOW](
        indptr, indices, values, theta, phi, mask, complete, out)
    return out


def geometric_row_sums(y_tilde: np.ndarray, y: np.ndarray, noise, observed=None) -> np.ndarray:
    """Per row, the sum over its observed entries of ``log 2Geo(y_tilde - y; alpha)``.

    ``noise`` is the data's :class:`~lpp.inference.privacy.NoiseLevels` (one level, one per
    row, or one per entry); rows are its leading index."""
    yt2, y2 = _rows(y_tilde), _rows(y)
    if yt2.shape != y2.shape:
        raise ValueError(f"privatized counts of shape {np.shape(y_tilde)} and counts of shape "
                         f"{np.shape(y)} differ")
    n_rows, row_len = y2.shape
    per_entry = noise.stride == 1 and y2.size > 1
    alpha = np.asarray(noise.values, dtype=np.float64)
    if not per_entry and alpha.size == 1:  # one level: the same for every row
        alpha = np.full(n_rows, alpha[0])
    log_norm = np.log1p(-alpha) - np.log1p(alpha)
    log_alpha = np.log(alpha)
    mask, complete = _mask_rows(observed)
    out = np.empty(n_rows)
    _geometric_kernels[y2.size < SERIAL_BELOW](yt2, y2, log_norm, log_alpha, per_entry, mask,
                                               complete, out)
    return out
