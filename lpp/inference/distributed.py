"""The topic model's collapsed sparse Gibbs chain on a Dask cluster: the same chain, bit for bit.

Given ``phi``, a sweep of the fused sparse engine (:mod:`lpp.inference.fused.sparse_topics`)
is independent across documents, and its random streams are keyed by global row. So the
rows of a privatized corpus in the row-block format (:mod:`lpp.privatized_blocks`) are split
among workers, each worker reads only its own blocks (privatized counts; nothing else about
the data ever reaches it), and one sweep is

1. every block: the fused privacy step + allocation of its rows, by the engine's own
   :class:`~lpp.inference.fused.sparse_topics.SparseTopicPrivacy` (a layout built with the
   block's ``first_row``), given this block's ``theta`` rows and ``phi``;
2. one reduction: the K x V topic-word counts of the blocks summed on the client (integers:
   exact in any order) and the blocks' document-topic counts (D x K) gathered;
3. the model's own ``update_step`` on the client (``phi``, then ``theta``: O((D + V) K)
   Gamma draws, the same kernels and streams as in-process); ``theta`` rows and ``phi`` go out
   with the next sweep's tasks (one broadcast of ``phi``).

At saved iterations each block also returns the pieces of the log joint: the in-process run
sums the log-density terms in fixed flat blocks by numpy's pairwise summation, and
:func:`pairwise_plan` splits exactly that summation tree at the row-block boundaries, so the
client reassembles the identical float. Rates are the fixed-order product of
:func:`lpp.inference.models._kernels.product_kernel`, so they too do not depend on the split.
``mu_hat`` is returned as a lazy ``dask.array`` in row blocks (computed from the saved
samples on request), never as a dense D x V array on the client.

Starts and masks as in-process: ``init="data"`` allocates ``max(y_tilde, 0)`` on the workers
(streams keyed by global row) and updates the latents on the client; the expectation steps of
``init="em"`` add their topic-word table as a float sum in row order (a fixed-order kernel, not
BLAS), so each step runs through the workers' rows in order, passing the running sum along. A held-out mask stays on the client (the model's rate sums) and each
worker gets its blocks' rows of it; with a mask the log densities sum only the observed terms,
and :func:`pairwise_plan` splits those sums in the coordinates of the observed terms.

Memory: a worker keeps each block's privatized counts in their smallest integer type, the
engine's layout and its row-sized scratch; the engine's V-sized scratch tables are shared by
all blocks of the process (one block's pass at a time), so what a worker holds grows with its
rows, not with its number of blocks.

Faults: every task is a pure function of its inputs (a block file, a block index, factors
the client holds), and the chain's state lives on the client. A worker that dies mid-run
loses only recomputable results: the scheduler reruns its tasks elsewhere (or on the
restarted worker) and the chain continues identically. A dead client resumes from its
checkpoint bit for bit, as in-process.

Dask is imported only when a distributed fit runs: ``import lpp`` does not need it.
"""
from __future__ import annotations

import copy
import hashlib
import logging
import threading
import time
import uuid
from itertools import pairwise
from pathlib import Path

import numpy as np
from scipy import special
from tqdm import tqdm

from lpp._rng import Tag, derive_seed, replay_seed
from lpp._validation import positive_int
from lpp.distributions import two_sided_geometric_logpmf
from lpp.inference.chain import EM_INIT_SWEEPS, observed_entries
from lpp.inference.checkpoint import (
    CHECKPOINT_VERSION,
    check_resumable,
    read_checkpoint,
    write_checkpoint,
)
from lpp.inference.fit import check_schedule
from lpp.inference.fused.sparse_topics import (
    _MAX_CHUNKS,
    SparseTopicPrivacy,
    TopicCountsDraw,
    _Workspace,
    chunk_bounds,
)
from lpp.inference.models import make_model
from lpp.inference.models._kernels import (
    allocate_matrix_kernel,
    expected_allocation,
    product_kernel,
)
from lpp.inference.models.base import LOG_DENSITY_BLOCK, Observed
from lpp.inference.models.topics import TopicModel
from lpp.inference.privacy import make_privacy_step, noise_levels
from lpp.inference.result import FitResult
from lpp.privatized import _smallest_signed
from lpp.privatized_blocks import PrivatizedBlocks

__all__ = ["DEFAULT_WORKERS", "DistributedChain", "fit_private_distributed", "pairwise_plan"]

log = logging.getLogger(__name__)

#: environment of the local cluster's single-threaded workers: one numba thread each (numba
#: would otherwise start a thread per core in every worker process, so W workers on one
#: machine would run W times more threads than it has cores)
WORKER_ENV = {"NUMBA_NUM_THREADS": "1"}
#: workers of the LocalCluster started when no cluster is given
DEFAULT_WORKERS = 2
#: the engine name recorded in results and checkpoints
ENGINE = "sparse-distributed"
#: numpy's pairwise summation: leaves of at most this many terms are summed by an unrolled loop
_PW_BLOCKSIZE = 128


# ---------------------------------------------------------------------------------------------
# numpy's pairwise summation, split at row-block boundaries
# ---------------------------------------------------------------------------------------------

def _pairwise_tree(lo: int, n: int, cuts: np.ndarray):
    """The summation tree numpy uses for ``a[lo:lo + n].sum()`` (a contiguous float64 array),
    cut at ``cuts`` (sorted flat offsets of segment starts).

    A node inside one segment is a request ``("sum", lo, n)``; a leaf (at most
    :data:`_PW_BLOCKSIZE` terms) that straddles a cut is ``("terms", lo, n)`` (its raw terms,
    summed once reassembled); otherwise ``("+", left, right)`` as numpy recurses: ``n2 = n // 2``
    rounded down to a multiple of 8.
    """
    seg = np.searchsorted(cuts, lo, side="right")
    inside = seg >= cuts.size or lo + n <= cuts[seg]
    if inside:
        return ("sum", lo, n)
    if n <= _PW_BLOCKSIZE:
        return ("terms", lo, n)
    n2 = n // 2
    n2 -= n2 % 8
    return ("+", _pairwise_tree(lo, n2, cuts), _pairwise_tree(lo + n2, n - n2, cuts))


def pairwise_plan(n_total: int, starts, blocks=None) -> list:
    """Summation trees of the flat blocks of :data:`LOG_DENSITY_BLOCK` terms, split at the
    segment ``starts`` (flat offsets, the first 0): one tree per block, in order.

    Summing the leaves of each tree as :func:`evaluate_plan` does and adding the trees' values
    to ``0.0`` in order gives exactly the float that the in-process log densities compute over
    the whole flat array. ``blocks`` (``(lo, n)`` pairs) replaces the fixed blocks: with a
    held-out mask the in-process sums run over the observed terms of each fixed block, i.e.
    over blocks of unequal lengths in the coordinates of the observed terms.
    """
    cuts = np.asarray(sorted({int(s) for s in starts} | {0}), dtype=np.int64)[1:]
    if blocks is None:
        blocks = [(lo, min(LOG_DENSITY_BLOCK, n_total - lo))
                  for lo in range(0, n_total, LOG_DENSITY_BLOCK)]
    return [_pairwise_tree(int(lo), int(n), cuts) for lo, n in blocks if n > 0]


def _requests(tree, out):
    if tree[0] == "+":
        _requests(tree[1], out)
        _requests(tree[2], out)
    else:
        out.append(tree)
    return out


def _segment_requests(plan, starts, ends) -> list[list[tuple[int, int]]]:
    """Per segment, the local ``(lo, hi)`` ranges whose sums (or raw terms) it must return."""
    per_seg = [[] for _ in starts]
    for tree in plan:
        for kind, lo, n in _requests(tree, []):
            for s, (a, b) in enumerate(zip(starts, ends)):
                x, y = max(a, lo), min(b, lo + n)
                if x < y:
                    per_seg[s].append((x - a, y - a))
    return per_seg


def evaluate_plan(plan, starts, ends, pieces) -> float:
    """The total of the terms from each segment's answers to :func:`_segment_requests`
    (``pieces[s]``: for each request, a float sum or an array of raw terms)."""
    cursor = [iter(p) for p in pieces]

    def value(tree):
        kind = tree[0]
        if kind == "+":
            left = value(tree[1])
            return left + value(tree[2])
        _, lo, n = tree
        parts = []
        for s, (a, b) in enumerate(zip(starts, ends)):
            if max(a, lo) < min(b, lo + n):
                parts.append(next(cursor[s]))
        if kind == "sum":
            return parts[0]
        return np.concatenate(parts).sum()

    total = 0.0
    for tree in plan:
        total += float(value(tree))
    return total


def _answer(terms: np.ndarray, requests, plan_kinds) -> list:
    return [terms[lo:hi].sum() if kind == "sum" else terms[lo:hi].copy()
            for (lo, hi), kind in zip(requests, plan_kinds)]


# ---------------------------------------------------------------------------------------------
# the workers' side
# ---------------------------------------------------------------------------------------------

#: per worker process, the engine's scratch tables by ``(n_cols, n_topics)``: shared by all the
#: blocks the process holds (they are the same size whatever the block's rows), and the lock
#: that gives them to one block's pass at a time
_SHARED_TABLES: dict = {}
_TABLES_LOCK = threading.Lock()


def _block_workspace(indptr: np.ndarray, n_cols: int, n_topics: int) -> _Workspace:
    """A block's workspace whose K x V and chunks x V tables are views of the process's shared
    ones; only ``residual`` (rows x K) and the chunk bounds are the block's own. Chunking changes
    no draw (streams are keyed by row, partial counts are integers)."""
    shared = _SHARED_TABLES.get((n_cols, n_topics))
    if shared is None:
        largest = np.arange(_MAX_CHUNKS + 1, dtype=np.int64)  # a stand-in with the most chunks
        shared = _SHARED_TABLES[(n_cols, n_topics)] = _Workspace(largest, n_cols, n_topics)
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

    def workspace(self, n_topics: int) -> _Workspace:
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


def _log_pieces(result, block: _Block, theta: np.ndarray, phi: np.ndarray, requests, kinds):
    """The block's answers for the log likelihood and the log noise, terms computed as the
    in-process :meth:`log_likelihood` / :meth:`log_noise` compute them."""
    y = result[2].dense().reshape(-1)
    mu = product_kernel(theta, phi).reshape(-1)
    lik = special.xlogy(y, mu) - mu - special.gammaln(y + 1.0)
    keep = None if block.observed is None else block.observed.reshape(-1)
    lik_pieces = _answer(lik if keep is None else lik[keep], requests, kinds)
    del lik, mu
    alpha = np.repeat(block.alpha[:, 0], block.shape[1])
    noise = two_sided_geometric_logpmf(block.y_tilde.reshape(-1) - y, alpha)
    return lik_pieces, _answer(noise if keep is None else noise[keep], requests, kinds)


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


# ---------------------------------------------------------------------------------------------
# the client's side
# ---------------------------------------------------------------------------------------------

class _AllObserved(Observed):
    """Every entry observed, without a D x V mask (the rate sums need only the shape)."""

    def __init__(self, shape):
        self.is_observed = np.broadcast_to(np.True_, tuple(shape))
        self.n_missing = 0
        self.complete = True
        self._weights = None
        self._missing = (np.empty(0, np.int64), np.empty(0, np.int64))


def _connect(cluster, n_workers: int):
    """``(client, owned)``: a Client for ``cluster`` and what this call opened (closed by the
    caller at the end of the fit, in order)."""
    from dask.distributed import Client, LocalCluster

    if cluster is None or cluster is True or (isinstance(cluster, (int, np.integer))
                                              and not isinstance(cluster, bool)):
        workers = n_workers if cluster is None or cluster is True else positive_int(
            cluster, "cluster (a number of local workers)")
        local = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                             dashboard_address=":0", env=WORKER_ENV)
        client = Client(local)
        return client, [client, local]
    if isinstance(cluster, Client):
        return cluster, []
    if isinstance(cluster, str) or hasattr(cluster, "scheduler_address"):
        client = Client(cluster)
        return client, [client]
    raise TypeError("cluster must be True or a number of local workers, a scheduler address, "
                    f"a dask Client or a Cluster, got {type(cluster).__name__}")


def _assign(n_blocks: int, workers: list[str]) -> list[str]:
    """Contiguous blocks per worker (block b to worker b * W // n_blocks)."""
    return [workers[b * len(workers) // n_blocks] for b in range(n_blocks)]


class DistributedChain:
    """The chain's point on the client and its row blocks on the cluster.

    Attributes
    ----------
    state : dict
        ``theta`` (D x K) and ``phi`` (K x V) at the current point.
    iteration : int
        Sweeps done.
    seed : int
        The base seed of every random stream.
    bytes_moved : int
        Bytes of task inputs and results that crossed between client and workers so far.
    last_seconds : dict
        Wall time of the last sweep's two halves: ``"blocks"`` (the workers' passes and the
        reduction) and ``"client"`` (the latent updates on the client); and
        ``"worker_compute"``, the passes' own seconds summed per worker, of the busiest worker
        (``"blocks"`` minus it is scheduling and transfer).
    last_block_seconds : list of float
        Seconds of each block's pass in the last sweep, timed on its worker.
    """

    def __init__(self, client, data: PrivatizedBlocks, model: TopicModel, seed: int, init,
                 observed: Observed | None = None):
        self.client, self.data, self.model, self.seed = client, data, model, seed
        self.shape = data.shape
        self.observed = _AllObserved(self.shape) if observed is None else observed
        masked = not self.observed.complete
        self._mask_digest = (hashlib.sha256(self.observed.is_observed.tobytes()).hexdigest()
                             if masked else None)
        bounds = data.bounds
        self.rows = [(int(bounds[b]), int(bounds[b + 1])) for b in range(data.n_blocks)]
        workers = sorted(client.scheduler_info()["workers"])
        if not workers:
            raise ValueError("the cluster has no workers")
        self.placement = _assign(data.n_blocks, workers)
        self.blocks = [client.submit(_open_block, str(data.path), b,
                                     self._missing(lo, hi) if masked else None,
                                     workers=[w], allow_other_workers=True, pure=False,
                                     key=f"lpp-block-{data.path.name}-{b}-{uuid.uuid4().hex}")
                       for b, ((lo, hi), w) in enumerate(zip(self.rows, self.placement))]
        self.bytes_moved = 0
        self.last_seconds, self.last_block_seconds = {}, []
        self.state, self.iteration = self._start(init), 0
        n_cols = self.shape[1]
        self._starts, self._ends, blocks = self._plan_coordinates(n_cols)
        self._plan = pairwise_plan(self.shape[0] * n_cols, self._starts, blocks)
        self._requests, self._kinds = [], []
        for s, reqs in enumerate(_segment_requests(self._plan, self._starts, self._ends)):
            self._requests.append(reqs)
            self._kinds.append(self._kinds_of(s))
        self._last = None  # the last sweep's futures, kept for its log joint

    def _missing(self, lo: int, hi: int) -> np.ndarray:
        """The held-out entries of rows ``[lo, hi)`` (True = missing), as the workers take them."""
        return ~self.observed.is_observed[lo:hi]

    def _plan_coordinates(self, n_cols: int):
        """Segment starts and ends and the log-density blocks, in the coordinates of the terms
        that the in-process sums add: every entry, or with a mask the observed ones only."""
        starts = [lo * n_cols for lo, _ in self.rows]
        ends = [hi * n_cols for _, hi in self.rows]
        if self.observed.complete:
            return starts, ends, None
        flat = self.observed.is_observed.reshape(-1)
        n_total = flat.size
        marks = sorted(set(range(0, n_total, LOG_DENSITY_BLOCK)) | set(starts) | {n_total})
        observed_before = {0: 0}
        for a, b in pairwise(marks):
            observed_before[b] = observed_before[a] + int(np.count_nonzero(flat[a:b]))
        blocks = []
        for lo in range(0, n_total, LOG_DENSITY_BLOCK):
            hi = min(lo + LOG_DENSITY_BLOCK, n_total)
            blocks.append((observed_before[lo], observed_before[hi] - observed_before[lo]))
        return ([observed_before[a] for a in starts], [observed_before[b] for b in ends],
                blocks)

    # ----- the chain's start ------------------------------------------------------------------
    def _start(self, init) -> dict:
        """The initial point, as :class:`lpp.inference.GibbsSampler` makes it."""
        model, seed, shape = self.model, self.seed, self.shape
        if isinstance(init, dict):
            return model.check_state(init, shape)
        if init not in ("prior", "data", "em"):
            raise ValueError("init must be 'data', 'em', 'prior' or a dict of latent arrays, "
                             f"got {init!r}")
        state = model.sample_prior(shape, derive_seed(seed, Tag.INIT_PRIOR))
        if init == "data":
            state = self._data_step(state)
        elif init == "em":
            state = self._em_steps(state)
        return state

    def _data_step(self, state: dict) -> dict:
        """One model sweep on ``max(y_tilde, 0)``: allocation on the workers, the updates here."""
        client, theta, phi = self.client, state["theta"], state["phi"]
        init_seed = derive_seed(self.seed, Tag.INIT_STEP)
        alloc_seed = derive_seed(init_seed, Tag.ALLOCATE)
        parts = client.gather([
            client.submit(_init_allocate, blk, theta[lo:hi], phi, alloc_seed, workers=[w],
                          allow_other_workers=True, pure=False)
            for blk, (lo, hi), w in zip(self.blocks, self.rows, self.placement)])
        doc_topic = np.concatenate([p[0] for p in parts])
        word_topic = parts[0][1].copy()
        for p in parts[1:]:
            word_topic += p[1]  # integers: exact in any order
        self.bytes_moved += (theta.nbytes + phi.nbytes * len(parts) + doc_topic.nbytes
                             + word_topic.nbytes * len(parts))
        stats = {"doc_topic": doc_topic, "topic_word": np.ascontiguousarray(word_topic.T)}
        return self.model.update_step(state, stats, self.observed, init_seed, 0)

    def _em_segments(self) -> list[tuple[int, int, str]]:
        """``(lo, hi, worker)``: each worker's rows (its blocks are contiguous). The expectation
        step's sums run in row order whatever the split, so any cut continues them exactly."""
        first = {}
        for (lo, _), w in zip(self.rows, self.placement):
            first.setdefault(w, lo)
        cuts = sorted((lo, w) for w, lo in first.items())
        ends = [lo for lo, _ in cuts[1:]] + [self.shape[0]]
        return [(lo, hi, w) for (lo, w), hi in zip(cuts, ends) if hi > lo]

    def _em_steps(self, state: dict) -> dict:
        """``EM_INIT_SWEEPS`` expectation steps. Each step runs through the segments in row
        order (the topic-word sum is a float sum in row order, continued segment by segment);
        the updates of the latents are made here."""
        client, model, path = self.client, self.model, str(self.data.path)
        masked = not self.observed.complete
        segments = self._em_segments()
        held = [client.submit(_open_em_rows, path, lo, hi,
                              self._missing(lo, hi) if masked else None, workers=[w],
                              allow_other_workers=True, pure=False)
                for lo, hi, w in segments]
        try:
            for _ in range(EM_INIT_SWEEPS):
                theta, phi = state["theta"], state["phi"]
                before, doc_parts = None, []
                for rows, (lo, hi, w) in zip(held, segments):
                    before = client.submit(_em_rows, rows, np.ascontiguousarray(theta[lo:hi]),
                                           phi, before, workers=[w], allow_other_workers=True,
                                           pure=False)
                    doc_parts.append(client.submit(_first, before, workers=[w],
                                                   allow_other_workers=True, pure=False))
                doc_topic = np.concatenate(client.gather(doc_parts))
                topic_word = client.submit(_second, before, pure=False).result()
                self.bytes_moved += (theta.nbytes + doc_topic.nbytes
                                     + phi.nbytes * 2 * len(segments))
                state = model.expectation_update(state, doc_topic, topic_word, self.observed)
        finally:
            del held
        return model.check_state(state, self.shape)

    def _kinds_of(self, s):
        a, b = self._starts[s], self._ends[s]
        kinds = []
        for tree in self._plan:
            for kind, lo, n in _requests(tree, []):
                if max(a, lo) < min(b, lo + n):
                    kinds.append(kind)
        return kinds

    def restore(self, state: dict, iteration: int) -> None:
        self.state = self.model.check_state(state, self.shape)
        self.iteration = int(iteration)
        self._last = None

    def sweep(self) -> None:
        """One iteration; the client's point changes in one assignment at the end."""
        client = self.client
        t = self.iteration
        start = time.perf_counter()
        theta, phi = self.state["theta"], self.state["phi"]
        privacy_seed = derive_seed(self.seed, Tag.PRIVACY)
        model_seed = derive_seed(self.seed, Tag.MODEL)
        futures = [client.submit(_sweep_block, blk, theta[lo:hi], phi, privacy_seed, t,
                                 workers=[w], allow_other_workers=True, pure=False)
                   for blk, (lo, hi), w in zip(self.blocks, self.rows, self.placement)]
        counts = client.gather([client.submit(_counts_of, f, workers=[w],
                                              allow_other_workers=True, pure=False)
                                for f, w in zip(futures, self.placement)])
        doc_topic = np.concatenate([c[0] for c in counts])
        topic_word = counts[0][1].copy()
        for c in counts[1:]:
            topic_word += c[1]
        self.bytes_moved += (theta.nbytes + phi.nbytes * len(futures) + doc_topic.nbytes
                             + topic_word.nbytes * len(futures))
        reduced = time.perf_counter()
        state = self.model.update_step(self.state, {"doc_topic": doc_topic,
                                                    "topic_word": topic_word},
                                       self.observed, model_seed, t)
        self.last_seconds = {"blocks": reduced - start,
                             "client": time.perf_counter() - reduced}
        compute = {}
        for c, w in zip(counts, self.placement):
            compute[w] = compute.get(w, 0.0) + c[2]
        self.last_seconds["worker_compute"] = max(compute.values())
        self.last_block_seconds = [c[2] for c in counts]
        self.state, self.iteration, self._last = state, t + 1, futures  # the commit point

    def log_joint(self) -> float:
        """log p(theta, phi, y, y_tilde) at the current point, as the in-process chain sums it."""
        if self._last is None:
            raise RuntimeError("the log joint needs the draw of the last sweep")
        client = self.client
        theta, phi = self.state["theta"], self.state["phi"]
        pieces = client.gather([
            client.submit(_log_pieces, f, blk, theta[lo:hi], phi, reqs, kinds, workers=[w],
                          allow_other_workers=True, pure=False)
            for f, blk, (lo, hi), w, reqs, kinds in zip(self._last, self.blocks, self.rows,
                                                         self.placement, self._requests,
                                                         self._kinds)])
        self.bytes_moved += theta.nbytes + phi.nbytes * len(pieces)
        lik = evaluate_plan(self._plan, self._starts, self._ends, [p[0] for p in pieces])
        noise = evaluate_plan(self._plan, self._starts, self._ends, [p[1] for p in pieces])
        return self.model.log_prior(self.state) + lik + noise

    def release(self) -> None:
        self._last = None

    def worker_memory(self) -> dict[str, int]:
        """Peak resident bytes of each worker process so far."""
        return self.client.run(_worker_memory)

    def worker_holdings(self) -> dict[str, dict[str, int]]:
        """Per worker: resident and peak bytes, and the bytes of its blocks and shared tables."""
        return self.client.run(_worker_holdings)

    def fingerprint(self) -> str:
        out = "blocks:" + ",".join(self.data.meta["block_sha256"])
        return out if self._mask_digest is None else f"{out};mask:{self._mask_digest}"


def _lazy_mu_hat(theta_samples, phi_samples, rows, n_cols):
    import dask
    import dask.array as da

    blocks = [da.from_delayed(dask.delayed(_mu_hat_block, pure=True)(theta_samples[:, lo:hi],
                                                                      phi_samples),
                              shape=(hi - lo, n_cols), dtype=np.float64)
              for lo, hi in rows]
    return da.concatenate(blocks, axis=0)


def fit_private_distributed(data, model, *, cluster=None, n_workers: int = DEFAULT_WORKERS,
                            alpha=None, method="collapsed", n_components=None, a0=None,
                            b0=None, n_iter: int = 1000, burn_in: int = 0, thin: int = 1,
                            rng=None, mask=None, init="data", save_latents: bool = True,
                            save_counts: bool = False, progress=None, checkpoint=None,
                            checkpoint_every: int = 100, resume: bool = False, sparse=None,
                            callback=None) -> FitResult:
    """The topic model's collapsed sparse chain on a Dask cluster, over row-block data.

    The implementation of ``lpp.inference.fit_private(..., cluster=...)``: call that. For the
    same seed the chain equals the in-process ``fit_private(..., sparse=True)`` on the same
    data, mask and init bit for bit (saved ``theta``/``phi``, ``mu_hat``, log joint), whatever
    the number of workers or blocks.

    Parameters
    ----------
    data : PrivatizedBlocks or path
        Privatized counts in the row-block format (:mod:`lpp.privatized_blocks`), on storage
        every worker can read; its ``alpha`` (constant within rows) is the noise level.
    model : TopicModel or "topics"
        The topic model (with ``n_components``, ``a0``, ``b0`` as for ``fit_private``).
    cluster : None, True, int, str, dask.distributed.Client or Cluster
        None or True starts a ``LocalCluster(n_workers, threads_per_worker=1,
        processes=True)`` (its HTTP server on a free port) for the run, an int one with that
        many workers; a scheduler address, a Client or a Cluster uses a running cluster.
    n_workers : int
        Workers of the LocalCluster started when ``cluster`` is None or True.
    alpha : None
        Must be None: the row-block format carries alpha.
    method : "collapsed"
        The only privacy step the distributed engine runs.
    mask : array_like of bool, optional
        As for ``fit_private`` (True = missing, the data's shape). It is held by the client
        (one byte per entry) and each worker receives the rows of its blocks.
    init : {"data", "em", "prior"} or dict
        As for ``fit_private``: the allocation of ``init="data"`` runs on the workers, the
        expectation steps of ``init="em"`` pass through the workers in row order (their
        topic-word sum is a float sum in row order; these steps are not parallel).
    n_iter, burn_in, thin, rng, progress, checkpoint, checkpoint_every, resume
        As for :func:`lpp.inference.fit_private`.
    save_latents, save_counts, sparse
        Accepted for the signature of ``fit_private``; the distributed fit saves the latents
        (``mu_hat`` is computed from them), never the counts, and is the sparse engine.
    callback : callable, optional
        Called as ``callback(chain)`` after each completed sweep (monitoring, tests).

    Returns
    -------
    FitResult
        ``engine="sparse-distributed"``; ``samples`` holds ``theta`` and ``phi``; ``mu_hat`` is
        a lazy ``dask.array`` in row blocks (``numpy.asarray`` it for small data, or compute it
        block by block).

    Raises
    ------
    TypeError, ValueError
        For data not in the row-block format, an alpha, a model other than the topic model, a
        privacy step other than the collapsed one, ``sparse=False``, ``save_counts=True``,
        ``save_latents=False``, a bad mask or init, bad iteration settings or a mismatched
        checkpoint.
    """
    if isinstance(data, np.ndarray):
        raise TypeError("the distributed fit reads privatized row blocks "
                        "(lpp.privatized_blocks), not an array: write them with "
                        "lpp.privatized_blocks.PrivatizedBlockWriter or privatize_blocks")
    if alpha is not None:
        raise ValueError("the row-block format carries alpha: pass alpha=None with a cluster")
    if make_privacy_step(method).name != "collapsed":
        raise ValueError(f"the distributed fit runs the collapsed privacy step only, not "
                         f"method={method!r}")
    if sparse is False:
        raise ValueError("the distributed fit is the sparse engine: sparse=False has no "
                         "distributed form")
    if save_counts:
        raise ValueError("the distributed fit does not gather the counts y (save_counts=True "
                         "would form D x V arrays on the client)")
    if not save_latents:
        raise ValueError("the distributed fit computes mu_hat from the saved latents: "
                         "save_latents=False is not supported")
    data = data if isinstance(data, PrivatizedBlocks) else PrivatizedBlocks(data)
    model = make_model(model, n_components, a0, b0)
    if not isinstance(model, TopicModel) or "row_column_factors" not in model.capabilities:
        raise TypeError(f"the distributed fit runs the topic model's sparse engine, not the "
                        f"{model.name!r} model")
    n_iter, burn_in, thin, checkpoint_every = check_schedule(n_iter, burn_in, thin,
                                                             checkpoint_every)
    n_workers = positive_int(n_workers, "n_workers")
    observed = observed_entries(model, data.shape, mask) if mask is not None else None
    if not (isinstance(init, dict) or init in ("prior", "data", "em")):
        raise ValueError("init must be 'data', 'em', 'prior' or a dict of latent arrays, "
                         f"got {init!r}")
    path = Path(checkpoint) if checkpoint is not None else None
    if resume and path is None:
        raise ValueError("resume=True needs the checkpoint path")
    seed = replay_seed(rng)

    client, owned = _connect(cluster, n_workers)
    try:
        chain = DistributedChain(client, data, model, seed, init, observed)
        return _run(chain, n_iter=n_iter, burn_in=burn_in, thin=thin, progress=progress,
                    path=path, checkpoint_every=checkpoint_every, resume=resume,
                    callback=callback)
    finally:
        for c in owned:
            c.close()


def _run(chain: DistributedChain, *, n_iter, burn_in, thin, progress, path, checkpoint_every,
         resume, callback) -> FitResult:
    names = ["theta", "phi"]
    meta = {"version": CHECKPOINT_VERSION, "method": "collapsed", "engine": ENGINE,
            "model": chain.model.params(), "seed": chain.seed, "burn_in": burn_in,
            "thin": thin, "save": names, "data": chain.fingerprint()}
    saved_t, log_joint, seconds, samples = [], [], [], {n: [] for n in names}
    if resume and path.exists():
        saved_meta, groups, extra = read_checkpoint(path)
        check_resumable(path, saved_meta, meta)
        chain.seed = meta["seed"] = int(saved_meta["seed"])
        chain.restore(groups["state"], int(saved_meta["iteration"]))
        saved_t = [int(t) for t in extra["saved_iterations"]]
        log_joint = [float(v) for v in extra["log_joint"]]
        seconds = [float(v) for v in extra["iter_seconds"]]
        samples = {n: list(groups["samples"][n]) if saved_t else [] for n in names}

    def arrays():
        out = {"saved_iterations": np.array(saved_t, dtype=np.int64),
               "log_joint": np.array(log_joint, dtype=np.float64),
               "iter_seconds": np.array(seconds, dtype=np.float64)}
        for n in names:
            out[f"samples__{n}"] = np.stack(samples[n]) if samples[n] else np.empty((0,))
        return out

    def write(interrupted: bool) -> None:
        write_checkpoint(path, {**meta, "iteration": chain.iteration, "n_iter": n_iter,
                                "interrupted": interrupted}, chain.state, {}, arrays())

    def book(secs: float) -> None:
        t = chain.iteration
        if t > burn_in and (t - burn_in) % thin == 0:
            lj = chain.log_joint()
            for n in names:
                samples[n].append(chain.state[n])
            log_joint.append(lj)
            saved_t.append(t)
        chain.release()
        seconds.append(secs)  # the entry's last write: len(seconds) is the iterations booked

    interrupted = False
    bar = tqdm(total=n_iter, initial=chain.iteration, desc=f"topics/{ENGINE}",
               disable=(not progress) if progress is not None else None, leave=False)
    try:
        while chain.iteration < n_iter:
            t0 = time.perf_counter()
            chain.sweep()
            book(time.perf_counter() - t0)
            bar.update(1)
            if callback is not None:
                callback(chain)
            t = chain.iteration
            if path is not None and t % checkpoint_every == 0 and t < n_iter:
                write(False)
    except KeyboardInterrupt:
        interrupted = True
        if len(seconds) < chain.iteration:  # the sweep committed but was not booked
            book(float("nan"))
        log.warning("interrupted after %d of %d iterations; returning the partial result",
                    chain.iteration, n_iter)
    finally:
        bar.close()
    if path is not None:
        write(interrupted)

    out = arrays()
    theta_s, phi_s = out["samples__theta"], out["samples__phi"]
    mu_hat = (_lazy_mu_hat(theta_s, phi_s, chain.rows, chain.shape[1]) if saved_t else None)
    return FitResult(
        method="collapsed", model=chain.model.params(), seed=chain.seed, n_iter=n_iter,
        burn_in=burn_in, thin=thin, iterations_done=chain.iteration, interrupted=interrupted,
        saved_iterations=out["saved_iterations"], samples={"theta": theta_s, "phi": phi_s},
        mu_hat=mu_hat, log_joint=out["log_joint"], iter_seconds=out["iter_seconds"],
        state=chain.state, aux={}, engine=ENGINE)
