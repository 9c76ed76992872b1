"""Fit Poisson factorization models to privatized (or true) counts by Gibbs sampling.

Two entry points keep the privacy boundary explicit: :func:`fit_private` takes **only** the
privatized counts and the mechanism's ``alpha``; :func:`fit_nonprivate` takes the true counts
(the non-private reference). Iterations are numbered 1..``n_iter``; iteration ``t`` is saved
when ``t > burn_in`` and ``(t - burn_in) % thin == 0``. Ctrl-C stops a run after the current
sweep's kernels return and gives back a usable partial result (``interrupted=True``), written
to the checkpoint when one is configured.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path

from tqdm import tqdm  # the text bar: tqdm.auto warns in kernels without ipywidgets

from lpp._validation import non_negative_int, positive_int
from lpp.inference.chain import GibbsSampler
from lpp.inference.checkpoint import (
    CHECKPOINT_VERSION,
    check_resumable,
    read_checkpoint,
    write_checkpoint,
)
from lpp.inference.models import make_model
from lpp.inference.result import FitResult, _Record

__all__ = ["fit_nonprivate", "fit_private"]

log = logging.getLogger(__name__)


def check_schedule(n_iter, burn_in, thin, checkpoint_every) -> tuple[int, int, int, int]:
    """Validated ``(n_iter, burn_in, thin, checkpoint_every)`` of a run (burn_in < n_iter)."""
    n_iter = positive_int(n_iter, "n_iter")
    burn_in = non_negative_int(burn_in, "burn_in")
    thin = positive_int(thin, "thin")
    if burn_in >= n_iter:
        raise ValueError(f"burn_in ({burn_in}) must be smaller than n_iter ({n_iter})")
    if thin > n_iter - burn_in:
        raise ValueError(f"thin ({thin}) is longer than the {n_iter - burn_in} iterations after "
                         "burn-in, so no draw would be saved (and mu_hat would be None): lower "
                         "thin or burn_in, or raise n_iter")
    return n_iter, burn_in, thin, positive_int(checkpoint_every, "checkpoint_every")


def _run(sampler: GibbsSampler, *, n_iter, burn_in, thin, save_latents, save_counts, progress,
         checkpoint, checkpoint_every, resume) -> FitResult:
    n_iter, burn_in, thin, checkpoint_every = check_schedule(n_iter, burn_in, thin,
                                                             checkpoint_every)
    names = list(sampler.state) if save_latents else []
    if save_counts:
        names.append("y")
    rec = _Record(names, burn_in, thin)
    meta = {"version": CHECKPOINT_VERSION, "method": sampler.method, "engine": sampler.engine,
            "model": sampler.model.params(), "seed": sampler.seed, "burn_in": burn_in,
            "thin": thin, "save": names, "data": sampler.fingerprint()}
    path = Path(checkpoint) if checkpoint is not None else None
    if resume and path is None:
        raise ValueError("resume=True needs the checkpoint path")

    if resume and path.exists():
        saved_meta, groups, extra = read_checkpoint(path)
        check_resumable(path, saved_meta, meta)
        sampler.seed = meta["seed"] = int(saved_meta["seed"])
        sampler.restore(groups["state"], groups["aux"], int(saved_meta["iteration"]))
        rec.load(extra, groups["samples"])

    def write(interrupted: bool) -> None:
        write_checkpoint(path, {**meta, "iteration": sampler.iteration, "n_iter": n_iter,
                                "interrupted": interrupted},
                         sampler.state, sampler.aux, rec.arrays())

    interrupted = False
    bar = tqdm(total=n_iter, initial=sampler.iteration,
               desc=f"{sampler.model.name}/{sampler.method}",
               disable=(not progress) if progress is not None else None, leave=False)
    try:
        while sampler.iteration < n_iter:
            t0 = time.perf_counter()
            sampler.sweep()
            rec.book(sampler, time.perf_counter() - t0)
            bar.update(1)
            t = sampler.iteration
            if path is not None and t % checkpoint_every == 0 and t < n_iter:
                write(False)
    except KeyboardInterrupt:
        interrupted = True
        if rec.last_t < sampler.iteration:  # the sweep committed but its entry was not appended
            rec.book(sampler, float("nan"))
        log.warning("interrupted after %d of %d iterations; returning the partial result",
                    sampler.iteration, n_iter)
    finally:
        bar.close()
    if path is not None:
        write(interrupted)

    arrays = rec.arrays()
    n_saved = arrays["saved_iterations"].size
    return FitResult(
        method=sampler.method, model=sampler.model.params(), seed=sampler.seed, n_iter=n_iter,
        burn_in=burn_in, thin=thin, iterations_done=sampler.iteration, interrupted=interrupted,
        saved_iterations=arrays["saved_iterations"],
        samples={n: arrays[f"samples__{n}"] for n in names},
        mu_hat=arrays["mu_sum"] / n_saved if n_saved else None,
        log_joint=arrays["log_joint"], iter_seconds=arrays["iter_seconds"],
        state=sampler.state, aux=sampler.aux, engine=sampler.engine)


def fit_private(y_tilde, alpha, model, *, method="collapsed", n_components=None, a0=None,
                b0=None, n_iter: int = 1000, burn_in: int = 0, thin: int = 1, rng=None,
                mask=None, init="data", save_latents: bool = True, save_counts: bool = False,
                progress=None, checkpoint=None, checkpoint_every: int = 100,
                resume: bool = False, sparse=None, cluster=None) -> FitResult:
    """Locally private posterior inference from privatized counts only.

    Parameters
    ----------
    y_tilde : array_like of int, or PrivatizedBlocks
        Privatized counts ``y + 2Geo(alpha)`` (whole numbers, may be negative, adding up to at
        most 1e15 in absolute value); a scipy.sparse matrix is densified, a ``numpy.ma``
        masked array's mask joins ``mask``. With ``cluster``: the privatized data in the
        row-block format (:class:`lpp.privatized_blocks.PrivatizedBlocks` or its directory).
    alpha : float or array_like or None
        The geometric mechanism's parameter in (0, 1), ``alpha = exp(-epsilon / N)``: a scalar,
        one value per row (shape ``(D, 1)``) or per entry. Optional for ``method="naive"``;
        None with ``cluster`` (the row-block format carries it).
    model : PoissonFactorization or str
        ``TopicModel(K)``, ``CommunityModel(C)``, ``CPTensorModel(R)``, your own subclass, or a
        name of :data:`lpp.inference.models.MODELS` with ``n_components`` (and optionally
        ``a0``, ``b0``: Gamma prior shape and rate, defaults 0.1 and 1, each in [1e-6, 1e6]).
    method : str or PrivacyStep
        ``"collapsed"`` (exact conditional, default), ``"bessel"`` (the paper's augmentation),
        ``"naive"`` (fit ``max(y_tilde, 0)`` as if true), or a :class:`PrivacyStep` instance.
    n_iter, burn_in, thin : int
        Total sweeps; iteration t (1-based) is saved when t > burn_in and
        (t - burn_in) % thin == 0 (``thin`` at most ``n_iter - burn_in``).
    rng : int, numpy.random.Generator or None
        An int in [0, 2**63) is the base seed of every random stream; a Generator or None draws
        one. ``result.seed`` records it, and ``rng=result.seed`` repeats the run bit for bit,
        with any number of threads.
    mask : array_like of bool, optional
        The data's shape, **True = missing** (held out: no likelihood), as in ``numpy.ma``;
        a masked array as data adds its own mask to this one. The community model always
        masks its diagonal. An index whose entries are all masked is an error.
    init : {"data", "em", "prior"} or dict
        ``"data"``: prior draw, then one model sweep on ``max(y_tilde, 0)``; ``"em"``: prior
        draw, then ``EM_INIT_SWEEPS`` expectation sweeps (a start near a posterior mode; topic
        and community models); ``"prior"``; or a dict of latent arrays.
    save_latents, save_counts : bool
        Keep the saved draws of the latents / of the counts ``y``.
    progress : bool or None
        tqdm bar; None shows it on interactive terminals only.
    checkpoint : path, optional
        An ``.npz`` checkpoint written every ``checkpoint_every`` iterations, at the end and on
        Ctrl-C. ``resume=True`` continues from it when it exists (same data, method, model,
        burn_in, thin; ``n_iter`` may grow; the run keeps the checkpoint's seed).
    sparse : bool or None
        None uses a fused engine where one applies (collapsed step, a model with row/column
        factors, alpha constant within rows), False never, True requires one. Both target the
        same posterior; the random streams differ.
    cluster : None, True, int, str, dask.distributed.Client or Cluster
        None (default) runs in this process. Otherwise the topic model's sparse chain runs on
        a Dask cluster (:mod:`lpp.inference.distributed`), row blocks of the data on the
        workers: True starts a local cluster of ``DEFAULT_WORKERS`` worker processes for the
        run, an int one of that many; a scheduler address, a ``Client`` or a ``Cluster`` uses a
        running one. The chain equals the in-process ``sparse=True`` chain bit for bit.
        Supports ``method="collapsed"``, the topic model, ``mask``, every ``init``,
        checkpoints; not ``save_counts`` nor ``save_latents=False``. Dask is imported only
        here.

    Returns
    -------
    FitResult

    Raises
    ------
    TypeError, ValueError
        For counts that are not whole numbers, alpha outside (0, 1) or of a shape that does not
        fit, unknown methods or models, bad iteration settings or a mismatched checkpoint;
        with ``cluster``, for what the distributed fit does not support.
    """
    if cluster is not None:
        # the only door to Dask: the in-process path below never imports it
        from lpp.inference.distributed import fit_private_distributed

        return fit_private_distributed(
            y_tilde, model, cluster=cluster, alpha=alpha, method=method,
            n_components=n_components, a0=a0, b0=b0, n_iter=n_iter, burn_in=burn_in,
            thin=thin, rng=rng, mask=mask, init=init, save_latents=save_latents,
            save_counts=save_counts, progress=progress, checkpoint=checkpoint,
            checkpoint_every=checkpoint_every, resume=resume, sparse=sparse)
    if _is_block_format(y_tilde):
        raise TypeError("row-block data (lpp.privatized_blocks) are fitted on a cluster: pass "
                        "cluster=True (a local one) or a Client, or load them with "
                        ".to_dense() when they fit in memory")
    model = make_model(model, n_components, a0, b0)
    sampler = GibbsSampler.private(y_tilde, alpha, model, method=method, rng=rng, mask=mask,
                                   init=init, sparse=sparse)
    return _run(sampler, n_iter=n_iter, burn_in=burn_in, thin=thin, save_latents=save_latents,
                save_counts=save_counts, progress=progress, checkpoint=checkpoint,
                checkpoint_every=checkpoint_every, resume=resume)


def _is_block_format(data) -> bool:
    from lpp.privatized_blocks import META_FILE, PrivatizedBlocks  # light: no Dask

    return isinstance(data, PrivatizedBlocks) or (
        isinstance(data, (str, Path)) and (Path(data) / META_FILE).is_file())


def fit_nonprivate(y, model, *, n_components=None, a0=None, b0=None, n_iter: int = 1000,
                   burn_in: int = 0, thin: int = 1, rng=None, mask=None, init="data",
                   save_latents: bool = True, save_counts: bool = False, progress=None,
                   checkpoint=None, checkpoint_every: int = 100, resume: bool = False) -> FitResult:
    """Non-private Poisson factorization of the true counts ``y`` (the reference method).

    Parameters
    ----------
    y : array_like of int
        True counts (non-negative whole numbers, adding up to at most 1e15); a scipy.sparse
        matrix is densified, a ``numpy.ma`` masked array's mask joins ``mask``.
    model, n_components, a0, b0, n_iter, burn_in, thin, rng, mask, init, save_latents, \
save_counts, progress, checkpoint, checkpoint_every, resume
        As for :func:`fit_private`.

    Returns
    -------
    FitResult
    """
    model = make_model(model, n_components, a0, b0)
    sampler = GibbsSampler.nonprivate(y, model, rng=rng, mask=mask, init=init)
    return _run(sampler, n_iter=n_iter, burn_in=burn_in, thin=thin, save_latents=save_latents,
                save_counts=save_counts, progress=progress, checkpoint=checkpoint,
                checkpoint_every=checkpoint_every, resume=resume)
