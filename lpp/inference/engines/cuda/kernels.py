"""The GPU engine's kernels: one thread per item (an entry, a row, or a cell of a factor), its
work written once as a *thread body* and launched by a backend.

:class:`~lpp.inference.engines.cuda.device.CudaBackend` launches each body as a ``numba.cuda`` kernel (on a GPU, or in numba-cuda's
simulator); :class:`HostBackend` runs the same bodies on the CPU with ``numba.njit``, one item
after another, where atomic additions become plain ones. The two run the same arithmetic on
the same streams; integer counts add up alike in any order. So the host backend is the GPU
engine's statistical twin, cheap enough for the Geweke and posterior tests, and the simulator
tests check that the CUDA kernels draw what it draws.

What makes a run independent of the launch configuration: every random draw is named by its
item (:mod:`lpp.inference.engines.cuda.functions`); counts are integers added atomically;
every floating-point sum is made by one thread in a fixed order, over fixed segments
(:data:`SEGMENTS`) where a sum is split — never by a tree over the threads of a block.
"""
from __future__ import annotations

import math
from functools import lru_cache
from types import SimpleNamespace

import numpy as np
from numba import njit

from lpp.inference.engines.cuda.functions import BULK_COUNT, UNDERFLOW, build_functions
from lpp.inference.engines.sparse_topics import RESIDUAL_RECOMPUTE

__all__ = ["BODIES", "SCRATCH", "SEGMENTS", "HostBackend", "build_bodies"]

#: a factor's column sums and the topics' cumulative word weights are split into this many
#: segments of rows, each summed by one thread in order, then the segments in order
SEGMENTS = 64
#: counts up to this are added to the topic totals token by token (two atomic additions each);
#: larger ones are tallied per topic first
FEW_TOKENS = 8
#: a (row, topic) cell's tokens on Neg(d) are split over Neg(d) in bulk (a binomial per
#: column) when drawing them one by one would take more uniforms, on average, than both
#: BULK_WORK and BULK_PER_COLUMN per column of the data (the values of the CPU engine's
#: :data:`lpp.inference.engines.sparse_topics.BULK_MIN` and ``BULK_PER_COLUMN``): only where
#: one (row, topic) holds thousands of noise tokens, or E(d) nearly all of the topic's mass
BULK_WORK = BULK_COUNT
BULK_PER_COLUMN = 4
#: error codes a kernel leaves in ``errors[0]``
ERROR_RATE = 1  # a Poisson rate that is NaN or above 2**53
ERROR_LATENT = 2  # a Gamma draw that is not a positive finite number


def build_bodies(jit, add2, n_topics: int):
    """The thread bodies for ``n_topics`` topics, compiled with ``jit``; ``add2(arr, i, j, x)``
    adds ``x`` to ``arr[i, j]`` (atomically on a GPU)."""
    F = build_functions(jit)
    uniform, two_piece, gamma_rate = F.uniform, F.two_piece, F.gamma_rate
    pick, split_count, split_bulk, binomial = F.pick, F.split_count, F.split_bulk, F.binomial
    K = n_topics

    @jit
    def topic_dot(theta, d, phi_t, v):
        """``mu = sum_k theta[d, k] phi[k, v]``, in the order of :func:`topic_prefix`."""
        acc = 0.0
        for k in range(K):
            acc += theta[d, k] * phi_t[v, k]
        return acc

    @jit
    def topic_prefix(theta, d, phi_t, v, cum):
        acc = 0.0
        for k in range(K):
            acc += theta[d, k] * phi_t[v, k]
            cum[k] = acc
        return acc

    @jit
    def topic_prefix_log(theta, d, phi_t, v, cum):
        """The weights relative to the largest, when their plain sum underflows."""
        top = -math.inf
        for k in range(K):
            w = math.log(theta[d, k]) + math.log(phi_t[v, k])
            if w > top:
                top = w
        acc = 0.0
        for k in range(K):
            acc += math.exp(math.log(theta[d, k]) + math.log(phi_t[v, k]) - top)
            cum[k] = acc
        return acc

    @jit
    def allocate(count, d, v, theta, phi_t, mu, k0, k1, item, iteration, index,
                 doc_topic, word_topic, cum, hits):
        """Split ``count`` over topics (``cum`` holds the prefix sums of total ``mu``). Up to
        :data:`~lpp.inference.engines.cuda.functions.BULK_COUNT` tokens, a uniform and a pick
        each (the same uniforms and picks whether added one by one or tallied, so the counts do
        not depend on that path); above, conditional binomials, ``O(K log count)``."""
        total = mu
        if not total > UNDERFLOW:
            total = topic_prefix_log(theta, d, phi_t, v, cum)
        if count <= FEW_TOKENS:  # token by token: no tally of K hits to clear and sweep
            for _ in range(count):
                u = uniform(k0, k1, item, iteration, index)
                index += 1
                k = pick(cum, total, u)
                add2(doc_topic, d, k, 1)
                add2(word_topic, v, k, 1)
            return
        if count <= BULK_COUNT:
            split_count(count, cum, total, hits, k0, k1, item, iteration, index)
        else:  # token by token the thread's work would grow with the count without bound
            split_bulk(count, cum, hits, k0, k1, item, iteration, index)
        for k in range(K):
            h = hits[k]
            if h:
                add2(doc_topic, d, k, h)
                add2(word_topic, v, k, h)

    @jit
    def collapsed_entry(i, rows, cols, values, alpha_rows, theta, phi_t, k0, k1, iteration,
                        pos_y, doc_topic, word_topic, errors, cum, hits):
        """Entry ``i`` of E (positive or unobserved): the exact conditional of ``y`` given
        ``y_tilde`` and the rate, then its split over topics."""
        y_tilde = values[i]
        if y_tilde <= 0:  # unobserved: no likelihood, no count
            pos_y[i] = 0
            return
        d = rows[i]
        v = cols[i]
        mu = topic_dot(theta, d, phi_t, v)
        alpha = alpha_rows[d]
        y, index = two_piece(y_tilde, mu / alpha, mu * alpha, k0, k1, i, iteration, 0)
        if y < 0:
            errors[0] = ERROR_RATE
            y = 0
        pos_y[i] = y
        if y > 0:  # most noise entries draw 0: only now the prefix sums (the same total)
            total = topic_prefix(theta, d, phi_t, v, cum)
            allocate(y, d, v, theta, phi_t, total, k0, k1, i, iteration, index, doc_topic,
                     word_topic, cum, hits)

    @jit
    def known_entry(i, rows, cols, values, theta, phi_t, k0, k1, iteration, doc_topic,
                    word_topic, cum, hits):
        """Non-zero entry ``i`` of known counts, split over topics."""
        d = rows[i]
        v = cols[i]
        mu = topic_prefix(theta, d, phi_t, v, cum)
        allocate(values[i], d, v, theta, phi_t, mu, k0, k1, i, iteration, 0, doc_topic,
                 word_topic, cum, hits)

    @jit
    def excluded_mass(t, indptr, cols, phi_t, out):
        """``out[d, k] = sum over E(d) of phi[k, v]`` (cell ``t = d K + k``)."""
        d = t // K
        k = t % K
        acc = 0.0
        for idx in range(indptr[d], indptr[d + 1]):
            acc += phi_t[cols[idx], k]
        out[d, k] = acc

    @jit
    def negative_totals(t, indptr, cols, alpha_rows, theta, phi_t, phi_sums, excluded, k0, k1,
                        iteration, neg_counts, residuals, doc_topic, errors):
        """Cell ``t = d K + k``: the tokens of topic k on the row's non-positive entries,
        ``Pois(alpha_d theta[d, k] R[d, k])`` with ``R[d, k] = sum over Neg(d) of phi[k, v]``
        (kept in ``residuals``: :func:`negative_tokens` weighs its rejection's cost by it)."""
        d = t // K
        k = t % K
        residual = phi_sums[k] - excluded[d, k]
        if residual < RESIDUAL_RECOMPUTE * phi_sums[k]:
            lo = indptr[d]
            hi = indptr[d + 1]
            residual = 0.0
            for v in range(phi_t.shape[0]):
                if lo < hi and cols[lo] == v:
                    lo += 1
                else:
                    residual += phi_t[v, k]
        rate = alpha_rows[d] * theta[d, k] * residual
        n, _ = two_piece(0, rate, rate, k0, k1, t, iteration, 0)
        if n < 0:
            errors[0] = ERROR_RATE
            n = 0
        neg_counts[d, k] = n
        residuals[d, k] = residual
        doc_topic[d, k] += n

    @jit
    def guide_cells(t, cum_phi, guide):
        """``guide[k, b]``: the first column whose cumulative weight in topic k exceeds the
        fraction ``b / G`` of the total (``t = k G + b``, G columns of ``guide``)."""
        n_guide = guide.shape[1]
        k = t // n_guide
        b = t % n_guide
        row = cum_phi[k]
        guide[k, b] = pick(row, row[row.size - 1], b / n_guide)

    @jit
    def guided_pick(row, guide_row, u):
        """``pick(row, total, u)`` by the guide table (Chen and Asau's indexed search): start
        at the guide's cell of ``u`` and step to the first column whose cumulative weight
        exceeds ``u * total`` — the same column, in O(1) steps on average."""
        last = row.size - 1
        target = u * row[last]
        v = guide_row[min(int(u * guide_row.size), guide_row.size - 1)]
        while v > 0 and row[v - 1] > target:
            v -= 1
        while v < last and row[v] <= target:
            v += 1
        return v

    @jit
    def in_layout(bitmap, d, v):
        """Whether column ``v`` of row ``d`` is in E(d) (one bit per cell)."""
        return (np.int64(bitmap[d, v >> 5]) >> (v & 31)) & 1

    @jit
    def negative_bulk(t, d, k, n, bitmap, phi_t, k0, k1, iteration, counts, to_dense):
        """The ``n`` tokens of cell ``t`` split over the columns of Neg(d) by one multinomial
        with the weights ``phi[k, v]``: conditional binomials in column order, the last column
        of positive weight taking what is left. The weights themselves, not the increments
        of the topic's prefix sums, which lose the digits of a column's weight beside a much
        larger prefix (a huge count's column before it)."""
        rest = 0.0
        last = -1
        for v in range(phi_t.shape[0]):
            w = phi_t[v, k]
            if w > 0.0 and not in_layout(bitmap, d, v):
                rest += w
                last = v
        left = np.int64(n)
        index = 0
        for v in range(last + 1):
            w = phi_t[v, k]
            if not w > 0.0 or in_layout(bitmap, d, v):
                continue
            if v == last:
                c = left
            else:
                # rest is a running difference: rounding may leave it at or below w
                p = w / rest if rest > w else 1.0
                c, index = binomial(left, p, k0, k1, t, iteration, index)
                if c < 0:  # a NaN weight: leave the tokens to the columns after it
                    c = 0
                rest -= w
            if c > 0:
                left -= c
                if to_dense:
                    add2(counts, d, v, c)
                else:
                    add2(counts, v, k, c)
            if left == 0:
                break

    @jit
    def negative_tokens(t, bitmap, cum_phi, guide, phi_t, neg_counts, residuals, k0, k1,
                        iteration, counts, to_dense):
        """Cell ``t = d K + k``: the columns of its tokens, drawn from ``phi[k, :]`` and
        rejected on E(d); each adds 1 to ``counts[v, k]`` (the topic-word counts) or, with
        ``to_dense``, to ``counts[d, v]`` (the dense draw of y).

        A token costs ``Phi_k / R[d, k]`` uniforms on average (the rejection's acceptance rate
        is ``R[d, k] / Phi_k``). Where the cell's tokens would cost more than
        :data:`BULK_WORK` uniforms and :data:`BULK_PER_COLUMN` per column of the data, they are
        split over Neg(d) in bulk instead (:func:`negative_bulk`, ``O(V log n)``): token by
        token, the work would grow without bound with the tokens and with the mass that E(d)
        holds (one huge count puts almost all of its topic's mass on its column, and a
        rejection of nearly every draw)."""
        d = t // K
        k = t % K
        n = neg_counts[d, k]
        if n == 0:
            return
        row = cum_phi[k]
        budget = max(BULK_WORK, BULK_PER_COLUMN * row.size)
        if n * row[row.size - 1] > budget * residuals[d, k]:
            negative_bulk(t, d, k, n, bitmap, phi_t, k0, k1, iteration, counts, to_dense)
            return
        guide_row = guide[k]
        index = 0
        got = 0
        while got < n:
            u = uniform(k0, k1, t, iteration, index)
            index += 1
            v = guided_pick(row, guide_row, u)
            if in_layout(bitmap, d, v):
                continue
            got += 1
            if to_dense:
                add2(counts, d, v, 1)
            else:
                add2(counts, v, k, 1)

    @jit
    def segment_sums(t, mat, out):
        """``out[k, s]``: column k of ``mat`` summed over segment s of its rows
        (``t = k SEGMENTS + s``)."""
        k = t // SEGMENTS
        s = t % SEGMENTS
        n = mat.shape[0]
        length = (n + SEGMENTS - 1) // SEGMENTS
        acc = 0.0
        for r in range(s * length, min((s + 1) * length, n)):
            acc += mat[r, k]
        out[k, s] = acc

    @jit
    def segment_offsets(k, partial, offsets, totals):
        """The segments' starting sums (exclusive scan) and the column's total, in order."""
        acc = 0.0
        for s in range(SEGMENTS):
            offsets[k, s] = acc
            acc += partial[k, s]
        totals[k] = acc

    @jit
    def segment_prefix(t, mat, offsets, cum):
        """``cum[k, r] = sum_{j <= r} mat[j, k]``, segment by segment from its offset."""
        k = t // SEGMENTS
        s = t % SEGMENTS
        n = mat.shape[0]
        length = (n + SEGMENTS - 1) // SEGMENTS
        acc = offsets[k, s]
        for r in range(s * length, min((s + 1) * length, n)):
            acc += mat[r, k]
            cum[k, r] = acc

    @jit
    def gamma_cell(t, counts, a0, b0, sums, k0, k1, iteration, out, errors):
        """``out[r, k] ~ Gamma(a0 + counts[r, k], b0 + sums[k])`` (cell ``t = r K + k``)."""
        r = t // K
        k = t % K
        x, _ = gamma_rate(a0 + counts[r, k], b0 + sums[k], k0, k1, t, iteration, 0)
        if not (x > 0.0 and x < math.inf):
            errors[0] = ERROR_LATENT
        out[r, k] = x

    @jit
    def rate_cell(t, theta, phi_t, out):
        """``out[d, v] = sum_k theta[d, k] phi[k, v]`` in topic order."""
        n_cols = phi_t.shape[0]
        out[t // n_cols, t % n_cols] = topic_dot(theta, t // n_cols, phi_t, t % n_cols)

    @jit
    def scatter_entry(i, rows, cols, pos_y, dense):
        dense[rows[i], cols[i]] = pos_y[i]

    @jit
    def dense_row_loglik(d, dense, theta, phi_t, out):
        """``sum_v y log mu - log y!`` over the row's positive counts (the ``-mu`` terms are
        added on the host from the factors' sums)."""
        acc = 0.0
        for v in range(dense.shape[1]):
            y = dense[d, v]
            if y > 0:
                acc += y * math.log(topic_dot(theta, d, phi_t, v)) - math.lgamma(y + 1.0)
        out[d] = acc

    @jit
    def sparse_row_loglik(d, indptr, cols, values, theta, phi_t, out):
        """As :func:`dense_row_loglik`, over the non-zero entries of a CSR layout."""
        acc = 0.0
        for idx in range(indptr[d], indptr[d + 1]):
            y = values[idx]
            acc += (y * math.log(topic_dot(theta, d, phi_t, cols[idx]))
                    - math.lgamma(y + 1.0))
        out[d] = acc

    @jit
    def row_noise_distance(d, indptr, values, pos_y, neg_counts, neg_tilde_sums, out):
        """``sum over observed v of |y_tilde - y|`` for row d: the positive entries one by
        one; on Neg(d), where ``y >= 0 >= y_tilde``, the row's tokens less the fixed
        ``sum over Neg(d) of y_tilde``."""
        acc = 0.0
        for idx in range(indptr[d], indptr[d + 1]):
            y_tilde = values[idx]
            if y_tilde > 0:
                acc += abs(y_tilde - pos_y[idx])
        tokens = 0
        for k in range(K):
            tokens += neg_counts[d, k]
        out[d] = acc + tokens - neg_tilde_sums[d]

    return SimpleNamespace(
        collapsed_entry=collapsed_entry, known_entry=known_entry, excluded_mass=excluded_mass,
        negative_totals=negative_totals, negative_tokens=negative_tokens, guide_cells=guide_cells,
        segment_sums=segment_sums, segment_offsets=segment_offsets,
        segment_prefix=segment_prefix, gamma_cell=gamma_cell, rate_cell=rate_cell,
        scatter_entry=scatter_entry, dense_row_loglik=dense_row_loglik,
        sparse_row_loglik=sparse_row_loglik, row_noise_distance=row_noise_distance,
        guided_pick=guided_pick, in_layout=in_layout)


#: the bodies that need the per-thread scratch of K weights and K hit counts
SCRATCH = ("collapsed_entry", "known_entry")
BODIES = ("collapsed_entry", "known_entry", "excluded_mass", "negative_totals",
           "negative_tokens", "guide_cells", "segment_sums", "segment_offsets", "segment_prefix", "gamma_cell",
           "rate_cell", "scatter_entry", "dense_row_loglik", "sparse_row_loglik",
           "row_noise_distance")


# ---------------------------------------------------------------------------------------------
# backends: how arrays live and how a body is launched over its items
# ---------------------------------------------------------------------------------------------

@njit
def _host_add2(arr, i, j, x):
    arr[i, j] += x


def _host_launcher(body, scratch: bool, n_topics: int):
    """``run(n, *args)``: ``body(i, *args)`` for i = 0..n-1, in order, in one compiled loop."""
    if scratch:
        @njit
        def run(n, *args):
            cum = np.empty(n_topics)
            hits = np.empty(n_topics, dtype=np.int64)
            for i in range(n):
                body(i, *args, cum, hits)
    else:
        @njit
        def run(n, *args):
            for i in range(n):
                body(i, *args)
    return run


class HostBackend:
    """The thread bodies run on the CPU with numba, one item after another (the statistical
    twin of the GPU engine; see the module docstring)."""

    name = "host"

    def __init__(self):
        self.threads_per_block = None

    @staticmethod
    @lru_cache(maxsize=16)
    def kernels(n_topics: int):
        bodies = build_bodies(njit, _host_add2, n_topics)
        return SimpleNamespace(**{name: _host_launcher(getattr(bodies, name), name in SCRATCH,
                                                       n_topics)
                                  for name in BODIES})

    def launch(self, kernels, name: str, n: int, *args) -> None:
        if n > 0:
            getattr(kernels, name)(n, *args)

    to_device = staticmethod(lambda arr: np.array(arr, order="C", copy=True))
    to_host = staticmethod(lambda arr: np.array(arr, order="C", copy=True))

    @staticmethod
    def zeros(shape, dtype):
        return np.zeros(shape, dtype=dtype)

    @staticmethod
    def fill_zero(arr) -> None:
        arr.fill(0)

    @staticmethod
    def free_bytes():
        return None

    @staticmethod
    def describe() -> str:
        return "the CPU (host emulation of the CUDA kernels)"
