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

Faults: every task is a pure function of its inputs (a block file, a block index, factors
the client holds), and the chain's state lives on the client. A worker that dies mid-run
loses only recomputable results: the scheduler reruns its tasks elsewhere (or on the
restarted worker) and the chain continues identically. A dead client resumes from its
checkpoint bit for bit, as in-process.

Dask is imported only when a distributed fit runs: ``import lpp`` does not need it.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
from scipy import special
from tqdm import tqdm

from lpp._rng import Tag, derive_seed, replay_seed
from lpp._validation import positive_int
from lpp.distributions import two_sided_geometric_logpmf
from lpp.inference.checkpoint import (
    CHECKPOINT_VERSION,
    check_resumable,
    read_checkpoint,
    write_checkpoint,
)
from lpp.inference.fused.sparse_topics import SparseTopicPrivacy
from lpp.inference.fit import check_schedule
from lpp.inference.models import make_model
from lpp.inference.models._kernels import product_kernel
from lpp.inference.models.base import LOG_DENSITY_BLOCK, Observed
from lpp.inference.models.topics import TopicModel
from lpp.inference.privacy import noise_levels
from lpp.inference.result import FitResult
from lpp.privatized_blocks import PrivatizedBlocks

__all__ = ["DEFAULT_WORKERS", "DistributedChain", "fit_private_distributed", "pairwise_plan"]

log = logging.getLogger(__name__)

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


def pairwise_plan(n_total: int, starts) -> list:
    """Summation trees of the flat blocks of :data:`LOG_DENSITY_BLOCK` terms, split at the
    segment ``starts`` (flat offsets, the first 0): one tree per block, in order.

    Summing the leaves of each tree as :func:`evaluate_plan` does and adding the trees' values
    to ``0.0`` in order gives exactly the float that the in-process log densities compute over
    the whole flat array.
    """
    cuts = np.asarray(sorted({int(s) for s in starts} | {0}), dtype=np.int64)[1:]
    return [_pairwise_tree(lo, min(LOG_DENSITY_BLOCK, n_total - lo), cuts)
            for lo in range(0, n_total, LOG_DENSITY_BLOCK)]


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

class _Block:
    """One row block on its worker: privatized counts, noise levels and the engine's layout."""

    def __init__(self, path: str, b: int):
        data = PrivatizedBlocks(path)
        self.first_row = int(data.bounds[b])
        self.y_tilde, self.alpha = data.read_block(b)
        shape = self.y_tilde.shape
        observed = np.broadcast_to(np.True_, shape)  # complete data: no mask array
        self.privacy = SparseTopicPrivacy(self.y_tilde, noise_levels(self.alpha, shape),
                                          observed, first_row=self.first_row)

    def nbytes(self) -> int:
        lay = self.privacy.layout
        return int(self.y_tilde.nbytes + lay.indptr.nbytes + lay.cols.nbytes
                   + lay.values.nbytes)


def _open_block(path: str, b: int) -> _Block:
    return _Block(path, b)


def _sweep_block(block: _Block, theta: np.ndarray, phi: np.ndarray, seed: int, iteration: int):
    """The fused privacy step + allocation of the block's rows: ``(doc_topic, topic_word,
    draw)``; the draw of ``y`` stays on the worker for the log joint."""
    draw = block.privacy.sample(seed, iteration)
    doc_topic, topic_word = draw.realize(theta, phi)
    return doc_topic, topic_word, draw


def _counts_of(result):
    return result[0], result[1]


def _log_pieces(result, block: _Block, theta: np.ndarray, phi: np.ndarray, requests, kinds):
    """The block's answers for the log likelihood and the log noise, terms computed as the
    in-process :meth:`log_likelihood` / :meth:`log_noise` compute them."""
    y = result[2].dense().reshape(-1)
    mu = product_kernel(theta, phi).reshape(-1)
    lik = special.xlogy(y, mu) - mu - special.gammaln(y + 1.0)
    lik_pieces = _answer(lik, requests, kinds)
    del lik, mu
    alpha = np.repeat(block.alpha[:, 0], block.y_tilde.shape[1])
    noise = two_sided_geometric_logpmf(block.y_tilde.reshape(-1) - y, alpha)
    return lik_pieces, _answer(noise, requests, kinds)


def _mu_hat_block(theta_samples: np.ndarray, phi_samples: np.ndarray) -> np.ndarray:
    """The mean of the saved rates of a row block, summed in the in-process order."""
    total = product_kernel(theta_samples[0], phi_samples[0])
    for s in range(1, theta_samples.shape[0]):
        total = total + product_kernel(theta_samples[s], phi_samples[s])
    return total / theta_samples.shape[0]


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
    """``(client, owned)``: a Client for ``cluster`` and whether this call started it."""
    from dask.distributed import Client, LocalCluster

    if cluster is None:
        local = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                             dashboard_address=":0")
        return Client(local), [local]
    if isinstance(cluster, Client):
        return cluster, []
    if isinstance(cluster, str):
        client = Client(cluster)
        return client, []
    if hasattr(cluster, "scheduler_address"):
        return Client(cluster), []
    raise TypeError("cluster must be None, a scheduler address, a dask Client or a Cluster, "
                    f"got {type(cluster).__name__}")


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
        reduction) and ``"client"`` (the latent updates on the client).
    """

    def __init__(self, client, data: PrivatizedBlocks, model: TopicModel, seed: int, init):
        self.client, self.data, self.model, self.seed = client, data, model, seed
        self.shape = data.shape
        self.observed = _AllObserved(self.shape)
        bounds = data.bounds
        self.rows = [(int(bounds[b]), int(bounds[b + 1])) for b in range(data.n_blocks)]
        workers = sorted(client.scheduler_info()["workers"])
        if not workers:
            raise ValueError("the cluster has no workers")
        self.placement = _assign(data.n_blocks, workers)
        self.blocks = [client.submit(_open_block, str(data.path), b, workers=[w],
                                     allow_other_workers=True, pure=True,
                                     key=f"lpp-block-{data.path.name}-{b}-{id(self)}")
                       for b, w in enumerate(self.placement)]
        if isinstance(init, dict):
            state = model.check_state(init, self.shape)
        elif init == "prior":
            state = model.sample_prior(self.shape, derive_seed(seed, Tag.INIT_PRIOR))
        else:
            raise ValueError("the distributed chain starts from init='prior' or a dict of "
                             f"latent arrays, got {init!r}")
        self.state, self.iteration = state, 0
        self.bytes_moved = 0
        self.last_seconds = {}
        n_cols = self.shape[1]
        starts = [lo * n_cols for lo, _ in self.rows]
        ends = [hi * n_cols for _, hi in self.rows]
        self._plan = pairwise_plan(self.shape[0] * n_cols, starts)
        self._starts, self._ends = starts, ends
        self._requests, self._kinds = [], []
        for s, reqs in enumerate(_segment_requests(self._plan, starts, ends)):
            self._requests.append(reqs)
            self._kinds.append(self._kinds_of(s))
        self._last = None  # the last sweep's futures, kept for its log joint

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

    def fingerprint(self) -> str:
        return "blocks:" + ",".join(self.data.meta["block_sha256"])


def _lazy_mu_hat(theta_samples, phi_samples, rows, n_cols):
    import dask
    import dask.array as da

    blocks = [da.from_delayed(dask.delayed(_mu_hat_block, pure=True)(theta_samples[:, lo:hi],
                                                                      phi_samples),
                              shape=(hi - lo, n_cols), dtype=np.float64)
              for lo, hi in rows]
    return da.concatenate(blocks, axis=0)


def fit_private_distributed(data, model, *, cluster=None, n_workers: int = DEFAULT_WORKERS,
                            n_components=None, a0=None, b0=None, n_iter: int = 1000,
                            burn_in: int = 0, thin: int = 1, rng=None, init="prior",
                            progress=None, checkpoint=None, checkpoint_every: int = 100,
                            resume: bool = False, callback=None) -> FitResult:
    """The topic model's collapsed sparse chain on a Dask cluster, over row-block data.

    For the same seed the chain equals :func:`lpp.inference.fit_private` with ``sparse=True``
    on the same data bit for bit (saved ``theta``/``phi``, ``mu_hat``, log joint), whatever the
    number of workers or blocks.

    Parameters
    ----------
    data : PrivatizedBlocks or path
        Privatized counts in the row-block format (:mod:`lpp.privatized_blocks`), on storage
        every worker can read. Alpha must be constant within rows (it is, in that format); every
        entry is observed (no held-out mask).
    model : TopicModel or "topics"
        The topic model (with ``n_components``, ``a0``, ``b0`` as for ``fit_private``).
    cluster : None, str, dask.distributed.Client or Cluster
        None starts a ``LocalCluster(n_workers, threads_per_worker=1, processes=True)`` (its
        HTTP server on a free port) for the run; a scheduler address or a Client uses a
        running cluster.
    n_workers : int
        Workers of the LocalCluster started when ``cluster`` is None.
    n_iter, burn_in, thin, rng, progress, checkpoint, checkpoint_every, resume
        As for :func:`lpp.inference.fit_private`.
    init : "prior" or dict
        A prior draw (as ``fit_private(init="prior")``) or a dict of latent arrays.
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
        For data not in the row-block format, a model other than the topic model, bad
        iteration settings, an unsupported init or a mismatched checkpoint.
    """
    if isinstance(data, np.ndarray):
        raise TypeError("the distributed fit reads privatized row blocks "
                        "(lpp.privatized_blocks), not an array")
    data = data if isinstance(data, PrivatizedBlocks) else PrivatizedBlocks(data)
    model = make_model(model, n_components, a0, b0)
    if not isinstance(model, TopicModel):
        raise TypeError(f"the distributed fit runs the topic model's sparse engine, not the "
                         f"{model.name!r} model")
    n_iter, burn_in, thin, checkpoint_every = check_schedule(n_iter, burn_in, thin,
                                                             checkpoint_every)
    n_workers = positive_int(n_workers, "n_workers")
    path = Path(checkpoint) if checkpoint is not None else None
    if resume and path is None:
        raise ValueError("resume=True needs the checkpoint path")
    seed = replay_seed(rng)

    client, owned = _connect(cluster, n_workers)
    try:
        chain = DistributedChain(client, data, model, seed, init)
        return _run(chain, n_iter=n_iter, burn_in=burn_in, thin=thin, progress=progress,
                    path=path, checkpoint_every=checkpoint_every, resume=resume,
                    callback=callback)
    finally:
        if owned:
            client.close()
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
