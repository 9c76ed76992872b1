"""The count step of the collapsed CAVI: ``q(y)`` for every entry, ``r = E[y] / G`` and the
entries' part of the bound.

* :class:`DenseCounts` — any model: every entry visited (compiled, blocks of :data:`BLOCK`
  entries in parallel; each block's partial sum is formed on one thread and the blocks are
  added in order, so the result does not depend on the number of threads). The parts of the
  bound that do not change (``log((1 - a)/(1 + a))``, ``log y!``) are summed once.
* :class:`SparseTopicCounts` — the topic model: only the positive (and missing) entries are
  visited; on the others ``q(y) = Pois(alpha G)``, so their expected allocations
  ``alpha G_dk`` are summed per row and per column from ``sum_v G_phi[k, v]`` and
  ``sum_d alpha_d G_theta[d, k]``, minus the visited entries' share. A sweep costs
  ``O(positive entries x K + (D + V) x K)``. Rows (then columns, through a fixed permutation)
  are processed in parallel, each by one thread in a fixed order.

Both run in calls of bounded work (:func:`lpp.inference.numerics.call_ranges`: a count factor
costs up to about 4e4 steps near large counts), so that Ctrl-C is handled between them.

The entries' part of the bound is ``sum_obs [log Z_i + log((1 - a)/(1 + a)) - E mu_i]``
(private) or ``sum_obs [y_i log G_i - log y_i! - E mu_i]`` (true counts); the ``E mu`` part is
left to the caller (it is a sum of products of means).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange
from scipy import special

from lpp.inference.numerics import call_ranges
from lpp.vi.counts import count_factor_nb

#: entries per block of the dense kernel
BLOCK = 8192


def count_factor_steps(values: np.ndarray) -> np.ndarray:
    """Work of the count factor of each entry (:func:`lpp.vi.counts.count_factor_nb`: up to
    four Poisson tails of about 9 sqrt(count) terms, at most 1e4 each), for
    :func:`lpp.inference.numerics.call_ranges`."""
    return 16.0 + 4.0 * np.minimum(9.0 * np.sqrt(np.maximum(values, 0).astype(np.float64)), 1e4)


@njit(cache=True, parallel=True)
def _dense_kernel(yt, alpha, g, observed, private, with_bound, b_lo, b_hi, r, block_sums):
    n = yt.size
    for i in prange(b_hi - b_lo):
        b = b_lo + i
        acc = 0.0
        for e in range(b * BLOCK, min(n, (b + 1) * BLOCK)):
            if not observed[e]:
                r[e] = 0.0
                continue
            ge = g[e]
            if private:
                log_z, mean = count_factor_nb(yt[e], alpha[e], ge)
                acc += log_z
            else:
                mean = float(yt[e])
                if with_bound and yt[e] > 0:
                    acc += yt[e] * (math.log(ge) if ge > 0.0 else -math.inf)
            r[e] = mean / ge if mean > 0.0 and ge > 0.0 else 0.0
        block_sums[b] = acc


class DenseCounts:
    """Every entry of a data-shaped array (any model).

    Parameters
    ----------
    y : int64 array
        Privatized counts (``private``) or true counts.
    alpha : float array, same shape
        Noise level per entry (ignored unless ``private``).
    observed : bool array, same shape
        True where the entry carries likelihood.
    private : bool
    """

    def __init__(self, y, alpha, observed, private: bool):
        self.shape = y.shape
        self.private = bool(private)
        self._y = np.ascontiguousarray(y, dtype=np.int64).reshape(-1)
        self._alpha = np.ascontiguousarray(alpha, dtype=np.float64).reshape(-1)
        self._observed = np.ascontiguousarray(observed, dtype=bool).reshape(-1)
        # the parts of the bound that do not change between iterations, summed once
        if self.private:
            a = self._alpha[self._observed]
            self.constant = float(np.log((1.0 - a) / (1.0 + a)).sum())
        else:
            y_obs = self._y[self._observed]
            self.constant = -float(special.gammaln(y_obs[y_obs > 0] + 1.0).sum())
        steps = count_factor_steps(self._y) if self.private else np.ones(self._y.size)
        starts = np.arange(0, self._y.size, BLOCK)
        self._calls = call_ranges(np.add.reduceat(steps, starts) if starts.size else steps)

    def step(self, g, *, bound: bool = True):
        """``(r, entries' bound without -E mu)`` for the geometric rates ``g`` (data-shaped);
        with ``bound=False`` only ``r`` (the bound is NaN; the private count factors are still
        computed in full)."""
        n = self._y.size
        r = np.empty(self.shape)
        sums = np.zeros((n + BLOCK - 1) // BLOCK)
        g = np.ascontiguousarray(g).reshape(-1)
        for b_lo, b_hi in self._calls:
            _dense_kernel(self._y, self._alpha, g, self._observed, self.private, bound, b_lo,
                          b_hi, r.reshape(-1), sums)
        return r, (float(sums.sum()) + self.constant if bound else math.nan)


class SparseTopicCounts:
    """Positive and missing entries of a D x V matrix, by row (CSR) and by column.

    Parameters
    ----------
    y : int64 array (D, V)
        Privatized counts (``private``) or true counts.
    alpha_rows : float array (D,)
        Noise level per row (ignored unless ``private``).
    observed : bool array (D, V)
        True where the entry carries likelihood.
    private : bool
    """

    def __init__(self, y, alpha_rows, observed, private: bool):
        self.shape = y.shape
        self.private = bool(private)
        special = (y > 0) | ~observed
        rows, cols = np.nonzero(special)  # row-major: CSR order
        self.indptr = np.zeros(y.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=y.shape[0]), out=self.indptr[1:])
        self.cols = cols.astype(np.int64)
        self.rows = rows.astype(np.int64)
        self.values = y[rows, cols].astype(np.int64)
        self.missing = ~observed[rows, cols]
        order = np.lexsort((rows, cols))  # by column, rows ascending within a column
        self.col_order = order.astype(np.int64)
        self.col_ptr = np.zeros(y.shape[1] + 1, dtype=np.int64)
        np.cumsum(np.bincount(cols, minlength=y.shape[1]), out=self.col_ptr[1:])
        self.alpha_rows = np.ascontiguousarray(alpha_rows, dtype=np.float64)
        nonpos = observed & (y <= 0)
        if self.private:
            # constant part of the aggregated log Z: -log(alpha_d) sum of y_tilde <= 0
            const = -np.log(self.alpha_rows) * np.where(nonpos, y, 0).sum(axis=1)
            const += (np.log((1 - self.alpha_rows) / (1 + self.alpha_rows))
                      * observed.sum(axis=1))
            self.row_constant = np.ascontiguousarray(const, dtype=np.float64)
        else:
            self.row_constant = np.zeros(y.shape[0])
        self.n_special = int(self.values.size)
        steps = count_factor_steps(self.values) if self.private else np.ones(self.values.size)
        cum = np.concatenate(([0.0], np.cumsum(steps)))
        self._row_calls = call_ranges(np.diff(cum[self.indptr]) + 1.0)

    def step(self, g_theta, g_phi):
        """``(doc_topic, topic_word, entries' bound without -E mu)`` for the geometric factors
        ``g_theta`` (D x K) and ``g_phi`` (K x V)."""
        g_theta = np.ascontiguousarray(g_theta)
        g_phi_t = np.ascontiguousarray(g_phi.T)
        alpha = self.alpha_rows if self.private else np.zeros(self.shape[0])
        col_total = g_phi_t.sum(axis=0)                     # K: sum_v G_phi[k, v]
        weighted = (alpha[:, None] * g_theta).sum(axis=0)   # K: sum_d alpha_d G_theta[d, k]
        w = np.empty(self.n_special)
        doc_topic = np.empty_like(g_theta)
        row_bound = np.empty(self.shape[0])
        for lo, hi in self._row_calls:
            _rows_kernel(self.indptr, self.cols, self.values, self.missing, alpha, self.private,
                         g_theta, g_phi_t, col_total, lo, hi, w, doc_topic, row_bound)
        word_topic = np.empty_like(g_phi_t)
        _cols_kernel(self.col_ptr, self.col_order, self.rows, w, g_theta, g_phi_t, weighted,
                     word_topic)
        bound = float((row_bound + self.row_constant).sum())
        return doc_topic, np.ascontiguousarray(word_topic.T), bound

    def missing_sums(self, e_theta, e_phi):
        """``(sum over missing v of E phi[:, v] per row (D x K), sum over missing d of
        E theta[d] per column (V x K), sum over missing entries of E mu)``."""
        e_phi_t = np.ascontiguousarray(e_phi.T)
        by_row = np.zeros_like(e_theta)
        by_col = np.zeros_like(e_phi_t)
        idx = np.flatnonzero(self.missing)
        if idx.size:
            r, c = self.rows[idx], self.cols[idx]
            np.add.at(by_row, r, e_phi_t[c])
            np.add.at(by_col, c, e_theta[r])
            mu = float(np.einsum("ek,ek->", e_theta[r], e_phi_t[c]))
        else:
            mu = 0.0
        return by_row, by_col, mu


@njit(cache=True, parallel=True)
def _rows_kernel(indptr, cols, values, missing, alpha, private, g_theta, g_phi_t, col_total,
                 row_lo, row_hi, w, doc_topic, row_bound):
    k = g_theta.shape[1]
    for i in prange(row_hi - row_lo):
        d = row_lo + i
        a = alpha[d]
        gt = g_theta[d]
        acc = np.zeros(k)
        special_g = 0.0
        bound = 0.0
        for e in range(indptr[d], indptr[d + 1]):
            gp = g_phi_t[cols[e]]
            ge = 0.0
            for kk in range(k):
                ge += gt[kk] * gp[kk]
            special_g += ge
            if missing[e]:
                we = -a
            elif private:
                log_z, mean = count_factor_nb(values[e], a, ge)
                bound += log_z
                we = mean / ge - a if ge > 0.0 else -a
            elif ge > 0.0:
                bound += values[e] * math.log(ge) - math.lgamma(values[e] + 1.0)
                we = values[e] / ge
            else:  # a zero rate under a positive count: the bound is -inf
                bound = -math.inf
                we = 0.0
            w[e] = we
            for kk in range(k):
                acc[kk] += we * gp[kk]
        row_g = 0.0
        for kk in range(k):
            row_g += gt[kk] * col_total[kk]
            doc_topic[d, kk] = gt[kk] * (a * col_total[kk] + acc[kk])
        # non-positive observed entries: log Z = -y_tilde log a (in row_constant) + a G
        row_bound[d] = bound + a * (row_g - special_g)


@njit(cache=True, parallel=True)
def _cols_kernel(col_ptr, col_order, rows, w, g_theta, g_phi_t, weighted, word_topic):
    n_cols, k = g_phi_t.shape
    for v in prange(n_cols):
        acc = weighted.copy()
        for p in range(col_ptr[v], col_ptr[v + 1]):
            e = col_order[p]
            we = w[e]
            gt = g_theta[rows[e]]
            for kk in range(k):
                acc[kk] += we * gt[kk]
        for kk in range(k):
            word_topic[v, kk] = g_phi_t[v, kk] * acc[kk]
