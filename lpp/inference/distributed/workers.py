"""The workers' side of the distributed chain: each worker's blocks, the engine's scratch tables
shared by the blocks of one process, and the tasks of a sweep (pure functions of their inputs).
"""
from __future__ import annotations

import copy
import threading
import time

import numpy as np

from lpp.inference.engines.sparse_topics import (
    SparseTopicPrivacy,
    TopicCountsDraw,
    Workspace,
    chunk_bounds,
)
from lpp.inference.kernels import MAX_CHUNKS, product_kernel
from lpp.inference.models.topics.kernels import allocate_matrix_kernel, expected_allocation
from lpp.inference.log_density import geometric_row_sums, poisson_row_sums
from lpp.inference.models.base import Observed
from lpp.inference.privacy import noise_levels
from lpp.formats.privatized import _smallest_signed
from lpp.formats.privatized_blocks import PrivatizedBlocks


#: per worker process, the engine's scratch tables by ``(n_cols, n_topics)``: shared by all the
#: blocks the process holds (they are the same size whatever the block's rows), and the lock
#: that gives them to one block's pass at a time
_SHARED_TABLES: dict = {}
_TABLES_LOCK = threading.Lock()


def _block_workspace(indptr: np.ndarray, n_cols: int, n_topics: int) -> Workspace:
    """A block's workspace whose K x V and chunks x V tables are views of the process's shared
    ones; only ``residual`` (rows x K) and the chunk bounds are the block's own. Chunking changes
    no draw (streams are keyed by row, partial counts are integers)."""
    shared = _SHARED_TABLES.get((n_cols, n_topics))
    if shared is None:
        largest = np.arange(MAX_CHUNKS + 1, dtype=np.int64)  # a stand-in with the most chunks
        shared = _SHARED_TABLES[(n_cols, n_topics)] = Workspace(largest, n_cols, n_topics)
    ws = copy.copy(shared)
    n_rows = indptr.size - 1
    ws.chunks = chunks = int(max(1, min(n_rows, shared.chunks)))
    ws.bounds = chunk_bounds(indptr, n_topics, chunks)
    for name in ("col_partials", "markers", "cumulative", "free_cols"):
        setattr(ws, name, getattr(shared, name)[:chunks])
    ws._wide_partials = None
    ws.residual = np.empty((n_rows, n_topics))
    return ws


class _BlockPrivacy(SparseTopicPrivacy):
    """The engine's privacy step on one row block, its scratch tables shared in the process."""

    def workspace(self, n_topics: int) -> Workspace:
        ws = self._workspace
        if ws is None or ws.prob.shape[0] != n_topics:
            ws = self._workspace = _block_workspace(self.layout.indptr, self.layout.shape[1],
                                                    n_topics)
        return ws


class _Block:
    """One row block on its worker: privatized counts, noise levels, the observed entries (None:
    all) and the engine's layout.

    ``y_tilde`` is kept in the smallest signed type that holds it (as stored): only the log
    noise and the start of the chain read it, and int64 would be the largest array a worker
    holds.
    """

    def __init__(self, path: str, b: int, missing=None):
        data = PrivatizedBlocks(path)
        self.first_row = int(data.bounds[b])
        y_tilde, self.alpha = data.read_block(b)
        shape = y_tilde.shape
        if missing is None:
            self.observed = None
            observed = np.broadcast_to(np.True_, shape)  # complete data: no mask array
        else:
            self.observed = observed = ~np.ascontiguousarray(missing, dtype=bool)
        self.privacy = _BlockPrivacy(y_tilde, noise_levels(self.alpha, shape), observed,
                                     first_row=self.first_row)
        self.y_tilde = _smallest_signed(y_tilde)

    @property
    def shape(self):
        return self.y_tilde.shape

    def is_observed(self) -> np.ndarray:
        """The observed entries as a contiguous bool array (made on request when all are)."""
        return self.observed if self.observed is not None else np.ones(self.shape, dtype=bool)

    def nbytes(self) -> int:
        lay = self.privacy.layout
        extra = 0 if self.observed is None else self.observed.nbytes
        ws = self.privacy._workspace
        extra += 0 if ws is None else ws.residual.nbytes
        return int(self.y_tilde.nbytes + lay.indptr.nbytes + lay.cols.nbytes
                   + lay.values.nbytes + extra)


def _open_block(path: str, b: int, missing=None) -> _Block:
    return _Block(path, b, missing)


def _init_allocate(block: _Block, theta: np.ndarray, phi: np.ndarray, seed: int):
    """The allocation of ``max(y_tilde, 0)`` of ``init="data"`` for the block's rows:
    ``(doc_topic, word_topic)`` as :meth:`TopicModel.allocate` draws them for those rows."""
    y0 = np.maximum(block.y_tilde, 0).astype(np.int64)
    return allocate_matrix_kernel(y0, block.is_observed(), theta, np.ascontiguousarray(phi.T),
                                  seed, 0, first_row=block.first_row)


class _EMRows:
    """Rows ``[lo, hi)`` of ``max(y_tilde, 0)`` for the expectation steps of ``init="em"``
    (read from whichever blocks hold them)."""

    def __init__(self, path: str, lo: int, hi: int, missing=None):
        data = PrivatizedBlocks(path)
        bounds = data.bounds
        parts = []
        for b in range(int(np.searchsorted(bounds, lo, side="right")) - 1, data.n_blocks):
            a, c = int(bounds[b]), int(bounds[b + 1])
            if a >= hi:
                break
            y_tilde, _ = data.read_block(b)
            parts.append(np.maximum(y_tilde[max(lo, a) - a:min(hi, c) - a], 0))
        self.y0 = np.concatenate(parts).astype(np.int64)
        self.is_observed = (np.ones(self.y0.shape, dtype=bool) if missing is None
                            else ~np.ascontiguousarray(missing, dtype=bool))


def _open_em_rows(path: str, lo: int, hi: int, missing=None) -> _EMRows:
    return _EMRows(path, lo, hi, missing)


def _em_rows(rows: _EMRows, theta: np.ndarray, phi: np.ndarray, before):
    """One expectation step over the rows: ``(doc_topic rows, topic_word so far)``, the running
    topic-word sum continued from ``before`` (the previous rows' result, or None)."""
    topic_word = np.zeros_like(phi) if before is None else before[1].copy()
    return expected_allocation(theta, phi, rows.y0, rows.is_observed, topic_word), topic_word


def _first(result):
    return result[0]


def _second(result):
    return result[1]


def _sweep_block(block: _Block, theta: np.ndarray, phi: np.ndarray, seed: int, iteration: int):
    """The fused privacy step + allocation of the block's rows: ``(doc_topic, topic_word,
    draw)``; the draw of ``y`` stays on the worker for the log joint."""
    with _TABLES_LOCK:  # a worker with several threads runs its blocks' passes in turn
        start = time.perf_counter()
        draw = block.privacy.sample(seed, iteration)
        doc_topic, topic_word = draw.realize(theta, phi)
        seconds = time.perf_counter() - start
    return doc_topic, topic_word, draw, seconds


def _counts_of(result):
    """The block's counts for the reduction, and the seconds its pass took on the worker."""
    return result[0], result[1], result[3]


def _log_pieces(result, block: _Block, theta: np.ndarray, phi: np.ndarray):
    """The block's rows' sums of the log likelihood and of the log noise, by the in-process
    rule (:mod:`lpp.inference.log_density`): the client puts them in row order and adds them."""
    y = result[2].dense()
    mu = product_kernel(theta, phi)
    observed = None if block.observed is None else Observed(block.observed)
    return (poisson_row_sums(y, mu, observed),
            geometric_row_sums(block.y_tilde, y, noise_levels(block.alpha, block.shape),
                               observed))


def _mu_hat_block(theta_samples: np.ndarray, phi_samples: np.ndarray) -> np.ndarray:
    """The mean of the saved rates of a row block, summed in the in-process order."""
    total = product_kernel(theta_samples[0], phi_samples[0])
    for s in range(1, theta_samples.shape[0]):
        total = total + product_kernel(theta_samples[s], phi_samples[s])
    return total / theta_samples.shape[0]


def _worker_holdings(dask_worker=None) -> dict[str, int]:
    """What a worker process holds: its resident and peak bytes, the bytes of its row blocks'
    data (privatized counts, layouts, masks, per-block scratch), of the draws of a sweep whose
    results are still held, and of the scratch tables its blocks share."""
    blocks = draws = 0
    if dask_worker is not None:
        for value in list(dask_worker.data.values()):
            if isinstance(value, _Block):
                blocks += value.nbytes()
            elif (isinstance(value, tuple) and len(value) == 4
                  and isinstance(value[2], TopicCountsDraw)):  # a sweep's result, still held
                draw = value[2]
                draws += sum(a.nbytes for a in (value[0], value[1], draw.pos_y, draw.token_ptr,
                                                draw.token_cols))
    shared = sum(sum(a.nbytes for a in vars(ws).values() if isinstance(a, np.ndarray))
                 for ws in _SHARED_TABLES.values())
    status = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(("VmRSS:", "VmHWM:")):
                status[line.split(":")[0]] = int(line.split()[1]) * 1024
    return {"rss": status.get("VmRSS", 0), "peak": status.get("VmHWM", 0),
            "block_bytes": int(blocks), "draw_bytes": int(draws),
            "shared_table_bytes": int(shared)}


def _worker_memory() -> int:
    # VmHWM, not ru_maxrss: Linux keeps ru_maxrss across execve, so a worker spawned by a big
    # client process would report the client's peak
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0
