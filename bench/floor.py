"""The floor kernel of a topic-model sweep: the least work any exact sweep on privatized data
must do, timed as the yardstick of the engines (``python -m bench.sweep large``).

Per positive entry of ``y_tilde`` (CSR, built once): one K-term dot product
``theta[d, :] . phi[:, v]`` (the rate every exact conditional of that entry needs) and one
uniform draw; then the Gamma updates of ``phi`` and ``theta`` (the model's own
``update_step`` on all-zero allocation totals). Rows are spread over threads as the engines
spread them, with the same prefetch of the next entries' ``phi`` rows, and the result of every
dot product is consumed, so none is optimised away.
"""
from __future__ import annotations

import time

import numpy as np
from numba import njit, prange

from lpp.inference.engines.prefetch import prefetch_row
from lpp.randomness import new_stream, seed_block, uniform

_PREFETCH_AHEAD = 12
_CHUNKS = 32


@njit(cache=True)
def _floor_rows(indptr, cols, theta, phi_t, row_lo, row_hi):
    n_topics = theta.shape[1]
    sink = 0.0
    last_entry = indptr[row_hi]
    rng = new_stream()
    for d in range(row_lo, row_hi):
        seed_block(rng, 1, 0, d)
        for idx in range(indptr[d], indptr[d + 1]):
            if idx + _PREFETCH_AHEAD < last_entry:
                prefetch_row(phi_t, cols[idx + _PREFETCH_AHEAD])
            v = cols[idx]
            s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
            whole = n_topics - n_topics % 8
            for k in range(0, whole, 8):
                s0 += theta[d, k] * phi_t[v, k]
                s1 += theta[d, k + 1] * phi_t[v, k + 1]
                s2 += theta[d, k + 2] * phi_t[v, k + 2]
                s3 += theta[d, k + 3] * phi_t[v, k + 3]
                s4 += theta[d, k + 4] * phi_t[v, k + 4]
                s5 += theta[d, k + 5] * phi_t[v, k + 5]
                s6 += theta[d, k + 6] * phi_t[v, k + 6]
                s7 += theta[d, k + 7] * phi_t[v, k + 7]
            total = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
            for k in range(whole, n_topics):
                total += theta[d, k] * phi_t[v, k]
            sink += total * uniform(rng)
    return sink


@njit(cache=True, parallel=True)
def _floor_pass(indptr, cols, theta, phi_t, bounds, sinks):
    for ch in prange(bounds.size - 1):
        sinks[ch] = _floor_rows(indptr, cols, theta, phi_t, bounds[ch], bounds[ch + 1])


class FloorKernel:
    """The floor of a sweep on ``y_tilde`` (the positive entries laid out once)."""

    def __init__(self, y_tilde: np.ndarray):
        positive = y_tilde > 0
        self.indptr = np.zeros(y_tilde.shape[0] + 1, dtype=np.int64)
        np.cumsum(positive.sum(axis=1), out=self.indptr[1:])
        self.cols = np.nonzero(positive)[1].astype(np.int32)
        work = self.indptr.astype(np.float64) + np.arange(self.indptr.size)
        inner = np.searchsorted(work, work[-1] * np.arange(1, _CHUNKS) / _CHUNKS)
        self.bounds = np.concatenate(([0], inner, [y_tilde.shape[0]])).astype(np.int64)
        self.sinks = np.zeros(_CHUNKS)

    @property
    def nnz(self) -> int:
        return int(self.cols.size)

    def sweep(self, model, state, observed, seed: int = 1, iteration: int = 0):
        """One floor sweep: the dot products and uniforms, then ``model.update_step``."""
        theta, phi = model.row_column_factors(state)
        phi_t = np.ascontiguousarray(phi.T)
        _floor_pass(self.indptr, self.cols, theta, phi_t, self.bounds, self.sinks)
        stats = {"doc_topic": np.zeros(theta.shape, dtype=np.int64),
                 "topic_word": np.zeros(phi.shape, dtype=np.int64)}
        return model.update_step(state, stats, observed, seed, iteration)

    def time_once(self, model, state, observed, iteration: int = 0) -> tuple[float, float]:
        """``(seconds of a whole floor sweep, seconds of its entry pass)`` at ``state``, once
        (compiled on the first call: call once untimed before timing)."""
        theta, phi = model.row_column_factors(state)
        phi_t = np.ascontiguousarray(phi.T)
        t0 = time.perf_counter()
        _floor_pass(self.indptr, self.cols, theta, phi_t, self.bounds, self.sinks)
        entries = time.perf_counter() - t0
        t0 = time.perf_counter()
        self.sweep(model, state, observed, 1, iteration)
        return time.perf_counter() - t0, entries

    def timed(self, model, state, observed, n: int = 3) -> tuple[float, float]:
        """``(median seconds of a whole floor sweep, median seconds of its entry pass)``."""
        self.sweep(model, state, observed)  # compile
        times = np.array([self.time_once(model, state, observed, i) for i in range(n)])
        return float(np.median(times[:, 0])), float(np.median(times[:, 1]))
