"""The chain's point on the client and its row blocks on the cluster (:class:`DistributedChain`).
"""
from __future__ import annotations

import functools
import hashlib
import logging
import threading
import time
import uuid

import numpy as np

from lpp.randomness import Tag, derive_seed
from lpp.inference.chain import EM_INIT_SWEEPS
from lpp.inference.log_density import ordered_sum
from lpp.inference.models.base import Observed
from lpp.inference.models.topics import TopicModel
from lpp.formats.privatized_blocks import PrivatizedBlocks
from lpp.inference.distributed.workers import (
    _counts_of,
    _em_rows,
    _first,
    _init_allocate,
    _log_pieces,
    _mu_hat_block,
    _open_block,
    _open_em_rows,
    _second,
    _sweep_block,
    _worker_holdings,
    _worker_memory,
)


log = logging.getLogger(__name__)

#: the engine name recorded in results and checkpoints
ENGINE = "sparse-distributed"
#: seconds a distributed fit waits for the cluster to have a worker again (a restart, an
#: adaptive cluster scaling up) before it fails; the chain's state is on the client, so the
#: fit resumes from its checkpoint on a working cluster
NO_WORKER_SECONDS = 60
#: seconds between the looks at the cluster while a fit waits on its tasks
_POLL_SECONDS = 1.0

class _AllObserved(Observed):
    """Every entry observed, without a D x V mask (the rate sums need only the shape)."""

    def __init__(self, shape):
        self.is_observed = np.broadcast_to(np.True_, tuple(shape))
        self.n_missing = 0
        self.complete = True
        self._weights = None
        self._missing = (np.empty(0, np.int64), np.empty(0, np.int64))


class NoWorkersError(RuntimeError):
    """The cluster has had no workers for :data:`NO_WORKER_SECONDS`."""


class _BlocksLost(Exception):
    """Workers that held row blocks have left the cluster (handled by ``_on_cluster``)."""

    def __init__(self, workers: list[str]):
        super().__init__(f"workers {workers} left the cluster")
        self.workers = workers


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
        self.iteration, self.placements = 0, 0
        self._last = self._last_inputs = None  # the last sweep's futures and their inputs
        self._place(self._workers())
        self.bytes_moved = 0
        self.last_seconds, self.last_block_seconds = {}, []
        self.state = self._start(init)

    # ----- the blocks on the workers, and the faults ------------------------------------------
    def _place(self, workers: list[str]) -> None:
        """Give the row blocks to ``workers`` (contiguous blocks per worker), each opened by its
        worker from the block file; the futures of an earlier placement are dropped."""
        masked = not self.observed.complete
        self.placement = _assign(self.data.n_blocks, workers)
        self.blocks = [self.client.submit(
            _open_block, str(self.data.path), b, self._missing(lo, hi) if masked else None,
            workers=[w], allow_other_workers=True, pure=False,
            key=f"lpp-block-{self.data.path.name}-{b}-{uuid.uuid4().hex}")
            for b, ((lo, hi), w) in enumerate(zip(self.rows, self.placement))]
        self._last = None  # drawn again from its inputs if its log joint is asked for
        self.placements += 1

    def _workers(self, since: float | None = None) -> list[str]:
        """The cluster's workers, waiting for one while there is none; :class:`NoWorkersError`
        once the cluster has had none for :data:`NO_WORKER_SECONDS` (counted from ``since``)."""
        since = time.monotonic() if since is None else since
        while True:
            workers = sorted(self.client.nthreads())
            if workers:
                return workers
            if time.monotonic() - since >= NO_WORKER_SECONDS:
                raise NoWorkersError(
                    f"the Dask cluster at {self.client.scheduler.address} has had no workers "
                    f"for {NO_WORKER_SECONDS} s (all of them were lost, or none started)")
            time.sleep(_POLL_SECONDS)

    def _gather(self, futures) -> list:
        """The results of ``futures``. While they are pending, the cluster is watched: when a
        worker that holds blocks has left, :class:`_BlocksLost` (see :meth:`_on_cluster`); when
        no worker is left, :class:`NoWorkersError` after :data:`NO_WORKER_SECONDS`.

        Dask reruns a lost worker's tasks elsewhere, but a task that found no worker at all
        keeps waiting for the one it was placed on even when a new worker joins (a restarted
        worker has a new address): without this watch such a fit would wait forever.
        """
        placed = set(self.placement)
        # woken by the futures themselves (distributed.wait would need a default client)
        wake = threading.Event()
        for future in futures:
            future.add_done_callback(lambda _: wake.set())
        while True:
            wake.clear()
            if all(future.done() for future in futures):
                return self.client.gather(futures)
            if wake.wait(_POLL_SECONDS):
                continue
            workers = set(self.client.nthreads())
            if not workers:
                workers = set(self._workers(since=time.monotonic() - _POLL_SECONDS))
            if not placed <= workers:
                raise _BlocksLost(sorted(placed - workers))

    def _on_cluster(self, step):
        """``step()`` (a function that submits tasks and gathers their results), run again on a
        new placement of the blocks while workers holding blocks leave the cluster. Every task
        is a pure function of the client's state, so the results are those the lost workers
        would have given."""
        while True:
            try:
                return step()
            except _BlocksLost as lost:
                log.warning("workers %s left the cluster; their row blocks go to the workers "
                            "there are now and the step runs again", ", ".join(lost.workers))
                self._place(self._workers())

    def _missing(self, lo: int, hi: int) -> np.ndarray:
        """The held-out entries of rows ``[lo, hi)`` (True = missing), as the workers take them."""
        return ~self.observed.is_observed[lo:hi]

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
        parts = self._on_cluster(lambda: self._gather([
            client.submit(_init_allocate, blk, theta[lo:hi], phi, alloc_seed, workers=[w],
                          allow_other_workers=True, pure=False)
            for blk, (lo, hi), w in zip(self.blocks, self.rows, self.placement)]))
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
        model = self.model
        held = {}  # the placement's segments and their rows on the workers
        try:
            for _ in range(EM_INIT_SWEEPS):
                doc_topic, topic_word, n_segments = self._on_cluster(
                    functools.partial(self._em_step, held, state["theta"], state["phi"]))
                self.bytes_moved += (state["theta"].nbytes + doc_topic.nbytes
                                     + state["phi"].nbytes * 2 * n_segments)
                state = model.expectation_update(state, doc_topic, topic_word, self.observed)
        finally:
            held.clear()
        return model.check_state(state, self.shape)

    def _em_step(self, held: dict, theta: np.ndarray, phi: np.ndarray):
        """One expectation step through the segments: ``(doc_topic, topic_word, segments)``.
        ``held`` keeps the segments' rows on the workers for the current placement."""
        client = self.client
        if held.get("placement") != self.placements:
            masked = not self.observed.complete
            segments = self._em_segments()
            held.update(placement=self.placements, segments=segments, rows=[
                client.submit(_open_em_rows, str(self.data.path), lo, hi,
                              self._missing(lo, hi) if masked else None, workers=[w],
                              allow_other_workers=True, pure=False)
                for lo, hi, w in segments])
        segments = held["segments"]
        before, doc_parts = None, []
        for rows, (lo, hi, w) in zip(held["rows"], segments):
            before = client.submit(_em_rows, rows, np.ascontiguousarray(theta[lo:hi]), phi,
                                   before, workers=[w], allow_other_workers=True, pure=False)
            doc_parts.append(client.submit(_first, before, workers=[w],
                                           allow_other_workers=True, pure=False))
        parts = self._gather([*doc_parts, client.submit(_second, before, pure=False)])
        return np.concatenate(parts[:-1]), parts[-1], len(segments)

    #: what a run records of the chain (lpp.inference.runner): its privacy step and engine
    method = "collapsed"
    engine = ENGINE

    @property
    def aux(self) -> dict:
        """The collapsed step keeps no auxiliary variables."""
        return {}

    def restore(self, state: dict, aux: dict, iteration: int) -> None:
        self.state = self.model.check_state(state, self.shape)
        self.iteration = int(iteration)
        self.release()

    def _submit_sweep(self, theta: np.ndarray, phi: np.ndarray, t: int) -> list:
        """The futures of sweep ``t``'s block passes from the point ``(theta, phi)``."""
        privacy_seed = derive_seed(self.seed, Tag.PRIVACY)
        return [self.client.submit(_sweep_block, blk, theta[lo:hi], phi, privacy_seed, t,
                                   workers=[w], allow_other_workers=True, pure=False)
                for blk, (lo, hi), w in zip(self.blocks, self.rows, self.placement)]

    def _sweep_counts(self, theta: np.ndarray, phi: np.ndarray, t: int):
        """``(futures of the block passes, their counts and seconds)`` of sweep ``t``."""
        futures = self._submit_sweep(theta, phi, t)
        return futures, self._gather([
            self.client.submit(_counts_of, f, workers=[w], allow_other_workers=True, pure=False)
            for f, w in zip(futures, self.placement)])

    def sweep(self) -> None:
        """One iteration; the client's point changes in one assignment at the end."""
        t = self.iteration
        start = time.perf_counter()
        theta, phi = self.state["theta"], self.state["phi"]
        model_seed = derive_seed(self.seed, Tag.MODEL)
        futures, counts = self._on_cluster(functools.partial(self._sweep_counts, theta, phi, t))
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
        # the commit point (the inputs too: the log joint may have to draw the sweep again)
        self.state, self.iteration, self._last, self._last_inputs = (state, t + 1, futures,
                                                                     (theta, phi, t))

    def _gather_log_pieces(self) -> list:
        """Every block's pieces of the log joint at the current point."""
        if self._last is None:  # its draws were on workers that left: draw them again
            self._last = self._submit_sweep(*self._last_inputs)
        theta, phi = self.state["theta"], self.state["phi"]
        return self._gather([
            self.client.submit(_log_pieces, f, blk, theta[lo:hi], phi, workers=[w],
                               allow_other_workers=True, pure=False)
            for f, blk, (lo, hi), w in zip(self._last, self.blocks, self.rows, self.placement)])

    def log_joint(self) -> float:
        """log p(theta, phi, y, y_tilde) at the current point, as the in-process chain sums it."""
        if self._last_inputs is None:
            raise RuntimeError("the log joint needs the draw of the last sweep")
        theta, phi = self.state["theta"], self.state["phi"]
        pieces = self._on_cluster(self._gather_log_pieces)
        self.bytes_moved += theta.nbytes + phi.nbytes * len(pieces)
        # the blocks' rows in row order, added as the in-process chain adds its rows' sums
        lik = ordered_sum(np.concatenate([p[0] for p in pieces]))
        noise = ordered_sum(np.concatenate([p[1] for p in pieces]))
        return self.model.log_prior(self.state) + lik + noise

    def release(self) -> None:
        self._last = self._last_inputs = None

    def step_back(self) -> None:
        """Return to the point before the last sweep (kept until :meth:`release`), e.g. when
        the cluster is lost before that sweep's log joint is computed."""
        theta, phi, t = self._last_inputs
        self.restore({"theta": theta, "phi": phi}, {}, t)

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
