"""The topic model's collapsed sparse Gibbs chain on a Dask cluster: the same chain, bit for bit.

Given ``phi``, a sweep of the fused sparse engine (:mod:`lpp.inference.engines.sparse_topics`)
is independent across documents, and its random streams are keyed by global row. So the
rows of a privatized corpus in the row-block format (:mod:`lpp.formats.privatized_blocks`) are split
among workers, each worker reads only its own blocks (privatized counts; nothing else about
the data ever reaches it), and one sweep is

1. every block: the fused privacy step + allocation of its rows, by the engine's own
   :class:`~lpp.inference.engines.sparse_topics.SparseTopicPrivacy` (a layout built with the
   block's ``first_row``), given this block's ``theta`` rows and ``phi``;
2. one reduction: the K x V topic-word counts of the blocks summed on the client (integers:
   exact in any order) and the blocks' document-topic counts (D x K) gathered;
3. the model's own ``update_step`` on the client (``phi``, then ``theta``: O((D + V) K)
   Gamma draws, the same kernels and streams as in-process); ``theta`` rows and ``phi`` go out
   with the next sweep's tasks (one broadcast of ``phi``).

At saved iterations each block also returns its rows' sums of the log-density terms; the
in-process run sums each row and then the rows in order (:mod:`lpp.inference.log_density`), so
the client, adding the blocks' row sums in row order, has the identical float. Rates are the fixed-order product of
:func:`lpp.inference.kernels.product_kernel`, so they too do not depend on the split.
``mu_hat`` is returned as a lazy ``dask.array`` in row blocks (computed from the saved
samples on request), never as a dense D x V array on the client.

Starts and masks as in-process: ``init="data"`` allocates ``max(y_tilde, 0)`` on the workers
(streams keyed by global row) and updates the latents on the client; the expectation steps of
``init="em"`` add their topic-word table as a float sum in row order (a fixed-order kernel, not
BLAS), so each step runs through the workers' rows in order, passing the running sum along. A held-out mask stays on the client (the model's rate sums) and each
worker gets its blocks' rows of it; with a mask the rows' sums skip the missing entries, on
the workers as in-process.

Memory: a worker keeps each block's privatized counts in their smallest integer type, the
engine's layout and its row-sized scratch; the engine's V-sized scratch tables are shared by
all blocks of the process (one block's pass at a time), so what a worker holds grows with its
rows, not with its number of blocks.

Faults: every task is a pure function of its inputs (a block file, a block index, factors
the client holds), and the chain's state lives on the client. A worker that dies mid-run
loses only recomputable results: the scheduler reruns its tasks elsewhere, and when the
workers that held blocks have left (a restarted worker has a new address) the client gives
the blocks to the workers there are now and repeats the step; the chain continues
identically. A cluster with no worker for :data:`NO_WORKER_SECONDS` fails the fit with
:class:`NoWorkersError` (after writing the checkpoint, when there is one); a scheduler that
does not answer within :data:`CONNECT_SECONDS` fails it with a ConnectionError naming the
address. A dead client resumes from its checkpoint bit for bit, as in-process. The clients a
fit opens are never made dask's default, so no call, failed or not, changes which scheduler
the process's other dask work (a result's lazy ``mu_hat``) uses.

Dask is imported only when a distributed fit runs: ``import lpp`` does not need it.
"""
from __future__ import annotations

import numpy as np

from lpp.randomness import replay_seed
from lpp.validation import positive_int
from lpp.inference.chain import observed_entries
from lpp.inference.models import make_model
from lpp.inference.models.topics import (
    TopicModel,
)
from lpp.inference.privacy import make_privacy_step
from lpp.inference.result import ChainResult, Entry, Record
from lpp.inference.runner import RunOptions, checkpoint_path, run_chain
from lpp.formats.privatized_blocks import PrivatizedBlocks
from lpp.inference.distributed.chain import ENGINE, NO_WORKER_SECONDS, DistributedChain, NoWorkersError, _lazy_mu_hat
from lpp.inference.distributed.cluster import CONNECT_SECONDS, DEFAULT_WORKERS, WORKER_ENV, WORKER_PRELOAD, _connect

__all__ = ["CONNECT_SECONDS", "DEFAULT_WORKERS", "DistributedChain", "ENGINE", "NO_WORKER_SECONDS", "NoWorkersError", "WORKER_ENV", "WORKER_PRELOAD", "fit_private_distributed"]


def fit_private_distributed(data, model, *, cluster=None, n_workers: int = DEFAULT_WORKERS,
                            alpha=None, method="collapsed", rng=None, mask=None,
                            run: RunOptions | None = None, **run_settings) -> ChainResult:
    """The topic model's collapsed sparse chain on a Dask cluster, over row-block data.

    The implementation of ``lpp.inference.fit_private(..., cluster=...)``: call that. For the
    same seed the chain equals the in-process
    ``fit_private(..., run=RunOptions(sparse=True))`` on the same data, mask and init bit for
    bit (saved ``theta``/``phi``, ``mu_hat``, log joint), whatever
    the number of workers or blocks.

    Parameters
    ----------
    data : PrivatizedBlocks or path
        Privatized counts in the row-block format (:mod:`lpp.formats.privatized_blocks`), on storage
        every worker can read; its ``alpha`` (constant within rows) is the noise level.
    model : TopicModel
        The topic model.
    cluster : None, True, int, str, dask.distributed.Client or Cluster
        None or True starts a ``LocalCluster(n_workers, threads_per_worker=1,
        processes=True)`` (its HTTP server on a free port) for the run, an int one with that
        many workers; a scheduler address, a Client or a Cluster uses a running cluster
        (connected within :data:`CONNECT_SECONDS`). Workers may die and be replaced during
        the fit; if the cluster has no worker for :data:`NO_WORKER_SECONDS` (60 s), the fit
        writes its checkpoint and raises :class:`NoWorkersError`.
    n_workers : int
        Workers of the LocalCluster started when ``cluster`` is None or True.
    alpha : None
        Must be None: the row-block format carries alpha.
    method : "collapsed"
        The only privacy step the distributed engine runs.
    mask : array_like of bool, optional
        True = missing, the data's shape (None: the mask the data carry,
        :meth:`PrivatizedBlocks.with_mask`). It is held by the client (one byte per entry)
        and each worker receives the rows of its blocks.
    rng : int, numpy.random.Generator or None
        As for :func:`lpp.inference.fit_private`.
    run : RunOptions, optional
        How the chain runs and what it keeps (:class:`lpp.inference.runner.RunOptions`:
        ``n_iter``, ``burn_in``, ``thin``, ``init``, ``progress``, ``checkpoint``,
        ``checkpoint_every``, ``resume``, ``callback``); the distributed fit saves the latents
        (``mu_hat`` is computed from them), never the counts. Its ``init`` as for
        ``fit_private``: the allocation of ``init="data"`` runs on the workers, the
        expectation steps of ``init="em"`` pass through the workers in row order (their
        topic-word sum is a float sum in row order; these steps are not parallel). Its
        ``sparse`` None or True: the distributed fit is the sparse engine.
    **run_settings
        The fields of ``run`` by name, instead of ``run`` (e.g. ``n_iter=200``).

    Returns
    -------
    ChainResult
        The chain (``fit_private`` makes it a fit): ``engine="sparse-distributed"``; ``samples`` holds ``theta`` and ``phi``; ``mu_hat`` is
        a lazy ``dask.array`` in row blocks (``numpy.asarray`` it for small data, or compute it
        block by block).

    Raises
    ------
    TypeError, ValueError
        For data not in the row-block format, an alpha, a model other than the topic model, a
        privacy step other than the collapsed one, ``sparse=False``, ``save_counts=True``,
        ``save_latents=False``, a bad mask or init, bad iteration settings, a mismatched
        checkpoint or a ``cluster`` string that is not a scheduler address.
    ConnectionError
        When no scheduler answers at the address within :data:`CONNECT_SECONDS` (5 s).
    NoWorkersError
        When the cluster has had no worker for :data:`NO_WORKER_SECONDS` (60 s).
    """
    run = RunOptions.of(run, **run_settings)
    if isinstance(data, np.ndarray):
        raise TypeError("the distributed fit reads privatized row blocks "
                        "(lpp.formats.privatized_blocks), not an array: write them with "
                        "lpp.formats.privatized_blocks.PrivatizedBlockWriter or privatize_blocks")
    if alpha is not None:
        raise ValueError("the row-block format carries alpha: pass alpha=None with a cluster")
    if make_privacy_step(method).name != "collapsed":
        raise ValueError(f"the distributed fit runs the collapsed privacy step only, not "
                         f"method={method!r}")
    init = run.init
    if run.sparse is False:
        raise ValueError("the distributed fit is the sparse engine: sparse=False has no "
                         "distributed form")
    if run.save_counts:
        raise ValueError("the distributed fit does not gather the counts y (save_counts=True "
                         "would form D x V arrays on the client)")
    if not run.save_latents:
        raise ValueError("the distributed fit computes mu_hat from the saved latents: "
                         "save_latents=False is not supported")
    data = data if isinstance(data, PrivatizedBlocks) else PrivatizedBlocks(data)
    mask = data.mask if mask is None else mask
    model = make_model(model)
    if not isinstance(model, TopicModel) or "row_column_factors" not in model.capabilities:
        raise TypeError(f"the distributed fit runs the topic model's sparse engine, not the "
                        f"{model.name!r} model")
    if getattr(model, "collapse_theta", False):
        raise ValueError("the distributed fit does not reassign tokens (collapse_theta=True): "
                         "fit in-process")
    if getattr(model, "collapse_phi", False):
        raise ValueError("collapse_phi=True runs on known counts in-process (fit_nonprivate, "
                         "or method='naive'), not in the distributed fit")
    run = run.checked()
    n_workers = positive_int(n_workers, "n_workers")
    observed = observed_entries(model, data.shape, mask) if mask is not None else None
    if not (isinstance(init, dict) or init in ("prior", "data", "em")):
        raise ValueError("init must be 'data', 'em', 'prior' or a dict of latent arrays, "
                         f"got {init!r}")
    path = checkpoint_path(run.checkpoint, run.resume)
    seed = replay_seed(rng)

    client, owned = _connect(cluster, n_workers)
    try:
        chain = DistributedChain(client, data, model, seed, init, observed)
        return _run(chain, run, path=path, rng=rng)
    finally:
        for c in owned:
            c.close()


class _FactorRecord(Record):
    """The record of a distributed run: the saved factors and their log joint, no running sum
    of the rates (``mu_hat`` is formed from the saved factors at the end, block by block)."""

    def book(self, chain: DistributedChain, seconds: float) -> None:
        t = chain.iteration
        if self.is_saved(t):
            entry = Entry((t, seconds, {n: chain.state[n] for n in self.names},
                            chain.log_joint(), None))
        else:
            entry = Entry((t, seconds, None, None, None))
        chain.release()
        self.entries.append(entry)


def _explain_lost_workers(exc: NoWorkersError, path, chain: DistributedChain) -> NoWorkersError:
    if path is None:
        return NoWorkersError(f"{exc}; the chain's progress is lost (a fit with a checkpoint "
                              f"keeps it)")
    return NoWorkersError(f"{exc}; the checkpoint {path} holds the chain's {chain.iteration} "
                          f"iterations: give the cluster workers and run the fit again with "
                          f"resume=True")


def _run(chain: DistributedChain, run: RunOptions, *, path, rng) -> ChainResult:
    n_iter, burn_in, thin = run.n_iter, run.burn_in, run.thin
    rec = _FactorRecord(["theta", "phi"], burn_in, thin)
    interrupted = run_chain(chain, rec, n_iter=n_iter, burn_in=burn_in, thin=thin,
                            progress=run.progress, checkpoint=path,
                            checkpoint_every=run.checkpoint_every, resume=run.resume, rng=rng,
                            callback=run.callback, faults=(NoWorkersError,),
                            explain_fault=_explain_lost_workers, desc=f"topics/{ENGINE}")
    out = rec.arrays()
    theta_s, phi_s = out["samples__theta"], out["samples__phi"]
    mu_hat = (_lazy_mu_hat(theta_s, phi_s, chain.rows, chain.shape[1])
              if out["saved_iterations"].size else None)
    return ChainResult(
        method="collapsed", model=chain.model.params(), seed=chain.seed, n_iter=n_iter,
        burn_in=burn_in, thin=thin, iterations_done=chain.iteration, interrupted=interrupted,
        saved_iterations=out["saved_iterations"], samples={"theta": theta_s, "phi": phi_s},
        mu_hat=mu_hat, log_joint=out["log_joint"], iter_seconds=out["iter_seconds"],
        state=chain.state, aux={}, engine=ENGINE)
