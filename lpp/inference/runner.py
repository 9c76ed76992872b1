"""The run loop every Gibbs chain goes through, in-process or on a Dask cluster.

A *chain* is anything with a Markov step and a restorable state: ``sweep()``, ``iteration``
(sweeps done), ``seed``, ``model``, ``method``, ``engine``, ``state`` and ``aux`` (dicts of
arrays), ``restore(state, aux, iteration)`` and ``fingerprint()`` (the data it runs on). A
*record* books each completed sweep (:class:`lpp.inference.result.Record` or a subclass).
:func:`run_chain` owns what every run shares: the schedule's checks, resuming from a checkpoint
and writing it every ``checkpoint_every`` sweeps, the progress bar, an optional per-sweep
callback, and Ctrl-C, which stops after the current sweep and keeps what was done (the
partial result is written to the checkpoint when one is configured).
"""
from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path

from lpp.formats.kinds import CHECKPOINT_FORMAT, FIT_FORMAT, file_kind
from lpp.inference.checkpoint import CHECKPOINT_VERSION, open_checkpoint, write_checkpoint
from lpp.progress import tqdm
from lpp.validation import check_schedule, split_options

log = logging.getLogger(__name__)

__all__ = ["RunOptions", "run_chain"]


@dataclass(frozen=True)
class RunOptions:
    """How a fit runs each chain and what it keeps: the settings every fit function hands on
    whole (to each chain, to the cluster's chain), instead of one keyword each.

    Attributes
    ----------
    n_iter, burn_in, thin : int
        Total sweeps; iteration t (1-based) is saved when t > burn_in and
        (t - burn_in) % thin == 0.
    save_latents, save_counts : bool
        Keep the saved draws of the latents / of the counts ``y``.
    save_rates : bool
        Sum the rates of the saved sweeps into the posterior mean ``mu_hat`` (an array of the
        data's size); False keeps nothing of the data's size and gives ``mu_hat=None``.
    progress : bool or None
        tqdm bar (``lpp[progress]``); None shows it on interactive terminals only.
    checkpoint : path or None
        The checkpoint file of the fit (chain 0's; :meth:`for_chain` gives the others').
    checkpoint_every : int
        Sweeps between checkpoint writes.
    resume : bool
        Continue from the checkpoint when it exists.
    callback : callable or None
        ``callback(chain)`` after every sweep.
    init : {"data", "em", "prior"}, dict or callable
        The chain's start (:func:`lpp.inference.fit_private` says what each does).
    sparse : bool or None
        None uses a fused engine where one applies, False never, True requires one.
    """

    n_iter: int = 1000
    burn_in: int = 0
    thin: int = 1
    save_latents: bool = True
    save_counts: bool = False
    save_rates: bool = True
    progress: bool | None = None
    checkpoint: object = None
    checkpoint_every: int = 100
    resume: bool = False
    callback: object = None
    init: object = "data"
    sparse: bool | None = None

    @classmethod
    def of(cls, run: "RunOptions | None" = None, **settings) -> "RunOptions":
        """``run`` as given, or the options named by ``settings`` (not both)."""
        if run is None:
            return cls(**settings)
        if not isinstance(run, cls):
            raise TypeError(f"run must be a RunOptions, got {type(run).__name__}")
        if settings:
            raise TypeError(f"give {sorted(settings)} in run=RunOptions(...), not beside it")
        return run

    @classmethod
    def split(cls, settings: dict) -> "tuple[RunOptions, dict]":
        """``(RunOptions of the fields among settings, the other settings)``: for code that
        forwards keyword settings to a fit, e.g. ``run, rest = RunOptions.split(kwargs);
        fit_private(y_tilde, mechanism, model, run=run, **rest)``."""
        return split_options(cls, settings)

    def checked(self) -> "RunOptions":
        """The options with a validated schedule (:func:`lpp.validation.check_schedule`)."""
        n_iter, burn_in, thin, every = check_schedule(self.n_iter, self.burn_in, self.thin,
                                                      self.checkpoint_every)
        return replace(self, n_iter=n_iter, burn_in=burn_in, thin=thin, checkpoint_every=every)

    def for_chain(self, chain: int) -> "RunOptions":
        """The options of chain ``chain`` of a fit of several: its own checkpoint file beside
        the fit's (chain 0 uses the fit's), ``<stem>.chain<c><suffix>``."""
        if self.checkpoint is None or chain == 0:
            return self
        path = Path(self.checkpoint)
        return replace(self, checkpoint=path.with_name(f"{path.stem}.chain{chain}{path.suffix}"))


def checkpoint_path(checkpoint, resume: bool) -> Path | None:
    """The checkpoint's path, checked before any work starts (a bad path would otherwise fail,
    or overwrite someone's file, at the first checkpoint write, after the sweeps before it).

    Raises
    ------
    ValueError
        Naming the path and the setting ``checkpoint``: ``resume=True`` without a path; a path
        that is a folder (a saved fit's included), or lies under a file; an existing file that
        is not a checkpoint (:func:`lpp.formats.kinds.file_kind`: the data file of a saved
        fit, say), which a run would overwrite. A checkpoint is overwritten by
        ``resume=False``, a damaged one included.
    """
    path = Path(checkpoint) if checkpoint is not None else None
    if resume and path is None:
        raise ValueError("resume=True needs the checkpoint path")
    if path is None:
        return None
    if path.is_dir():
        what = "a saved fit's folder (format 'lpp.fit')" if file_kind(path) == FIT_FORMAT \
            else "a folder"
        raise ValueError(f"checkpoint={str(path)!r} is {what}: name a checkpoint file, e.g. "
                         f"checkpoint={str(path / 'fit.checkpoint.npz')!r}")
    above = next((p for p in path.parents if os.path.lexists(p)), None)
    if above is not None and not above.is_dir():
        raise ValueError(f"checkpoint={str(path)!r} lies under {above}, which is not a folder")
    # an empty file holds nothing that a write could lose
    kind = file_kind(path) if path.is_file() and path.stat().st_size else CHECKPOINT_FORMAT
    if path.is_file() and kind != CHECKPOINT_FORMAT:
        if kind == FIT_FORMAT:
            raise ValueError(f"checkpoint={str(path)!r} is the data file of a saved fit "
                             "(format 'lpp.fit'), not a checkpoint (format 'lpp.checkpoint'): "
                             "a run would overwrite it; to run the fit's chains on, write "
                             "their checkpoints with lpp.inference.checkpoints_from_fit")
        raise ValueError(f"checkpoint={str(path)!r} is an existing file that is not a "
                         "checkpoint: a run would overwrite it; name another checkpoint file, "
                         "or delete this one")
    return path


def run_meta(chain, names, burn_in: int, thin: int) -> dict:
    """What a checkpoint of ``chain`` records of its run, saving the latents ``names``: the
    settings a resumed run must share with it (:data:`lpp.inference.checkpoint.RESUME_KEYS`)
    and the seed."""
    return {"version": CHECKPOINT_VERSION, "method": chain.method, "engine": chain.engine,
            "model": chain.model.params(), "seed": chain.seed, "burn_in": burn_in,
            "thin": thin, "save": list(names), "data": chain.fingerprint()}


def run_chain(chain, record, *, n_iter: int, burn_in: int = 0, thin: int = 1, progress,
              checkpoint=None, checkpoint_every: int = 1, resume: bool = False, rng=None,
              callback=None, stop=None, status=None, faults: tuple = (), explain_fault=None,
              desc: str) -> bool:
    """Run ``chain`` to ``n_iter`` sweeps, booking each in ``record``; True if interrupted.

    ``n_iter``, ``burn_in``, ``thin`` and ``checkpoint_every`` are the checked schedule
    (:func:`lpp.validation.check_schedule`). ``callback(chain)``, if given, runs after every
    sweep; ``stop(chain)`` ends the run early when it returns True (a converged optimiser);
    ``status(chain)`` is a short text shown beside the bar. An exception of ``faults`` (e.g. a
    cluster that lost its workers) ends the run like Ctrl-C, keeping what was done — a sweep
    not booked yet is undone by ``chain.step_back()`` and the checkpoint written — and then
    raises ``explain_fault(exc, checkpoint path or None, chain)``. With ``resume`` and an existing
    ``checkpoint`` the chain and the record continue from it: the file must pass its digest and
    describe the same model, method, engine, schedule and data, an iteration within
    ``n_iter``, and the seed of an int ``rng`` (:func:`lpp.inference.checkpoint.open_checkpoint`);
    the seed it recorded is kept.
    """
    path = checkpoint_path(checkpoint, resume)
    meta = None if path is None else run_meta(chain, record.names, burn_in, thin)
    resumed = open_checkpoint(path, meta, n_iter=n_iter, rng=rng, resume=resume)
    if resumed is not None:
        saved_meta, groups, extra = resumed
        chain.seed = meta["seed"] = int(saved_meta["seed"])
        chain.restore(groups["state"], groups["aux"], int(saved_meta["iteration"]))
        record.load(extra, groups["samples"])

    def write(interrupted: bool) -> None:
        write_checkpoint(path, {**meta, "iteration": chain.iteration, "n_iter": n_iter,
                                "interrupted": interrupted},
                         chain.state, chain.aux, record.arrays())

    interrupted = False

    def new_bar():
        return tqdm(total=n_iter, initial=chain.iteration, desc=desc,
                    disable=(not progress) if progress is not None else None, leave=False)

    bar = new_bar()
    first_sweep = True
    try:
        while chain.iteration < n_iter:
            t0 = time.perf_counter()
            chain.sweep()
            record.book(chain, time.perf_counter() - t0)
            if first_sweep:
                # the run's first sweep also compiles numba's kernels (or loads them): a bar
                # started after it measures the rate, and the time left, on sweeps alone
                first_sweep = False
                bar.close()
                bar = new_bar()
            else:
                bar.update(1)
            if status is not None:
                bar.set_postfix_str(status(chain), refresh=False)
            if callback is not None:
                callback(chain)
            if stop is not None and stop(chain):
                break
            t = chain.iteration
            if path is not None and t % checkpoint_every == 0 and t < n_iter:
                write(False)
    except KeyboardInterrupt:
        interrupted = True
        if record.last_t < chain.iteration:  # the sweep committed but its entry was not booked
            record.book(chain, float("nan"))
        log.warning("interrupted after %d of %d iterations; returning the partial result",
                    chain.iteration, n_iter)
    except faults as exc:
        if record.last_t < chain.iteration:  # booking that sweep needs what failed
            chain.step_back()
        if path is not None:
            write(True)
        raise explain_fault(exc, path, chain) from None
    finally:
        bar.close()
    if path is not None:
        write(interrupted)
    return interrupted
