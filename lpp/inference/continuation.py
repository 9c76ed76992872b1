"""Running a saved fit's chains on: a checkpoint written at the end of a saved chain.

A chain that stopped is continued from its checkpoint (:mod:`lpp.inference.checkpoint`); a
chain that finished has left only its fit (:mod:`lpp.formats.fits`; a fit directory handed as
a checkpoint, or a checkpoint as a fit, is refused naming it: :mod:`lpp.formats.kinds`). When the fit saved the chain's
last sweep, that draw is the chain's whole point: the chains of the package keep nothing
between sweeps but their latents (their ``aux`` is empty), and every random stream is keyed by
the seed and the iteration. So :func:`checkpoint_from_fit` can write the checkpoint the run
would have left, and ``fit_private(..., run=RunOptions(checkpoint=path, resume=True, ...))`` (or
``fit_nonprivate``) with a larger ``n_iter`` runs the chain on exactly as if it had never
stopped. A larger burn-in is allowed too: the saved draws up to it are dropped and the running
sum of the rates is formed again from those kept, in the run's order and arithmetic, so the
result equals that of one run with the new settings.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np

from lpp.formats.result import FitResult
from lpp.inference.checkpoint import write_checkpoint
from lpp.inference.fit import chain_checkpoint
from lpp.inference.runner import run_meta
from lpp.randomness import chain_seeds
from lpp.validation import check_int

log = logging.getLogger(__name__)

__all__ = ["checkpoint_from_fit", "checkpoints_from_fit"]


def _refuse(saved, problem: str):
    where = saved.metadata.data if saved.metadata is not None else None
    return ValueError(f"cannot continue the chain of seed {saved.seed} fitted to "
                      f"{where or 'the fit'}: {problem}")


def _check_continuable(saved, chain, burn_in: int, thin: int, trust_data: bool) -> None:
    params = json.loads(json.dumps(chain.model.params()))
    if saved.method != chain.method:
        raise _refuse(saved, f"it ran method {saved.method!r}, the chain given runs "
                             f"{chain.method!r}")
    if saved.model != params:
        raise _refuse(saved, f"its model is {saved.model}, the chain's {params}")
    recorded = saved.data_fingerprint
    if recorded is None and not trust_data:
        raise _refuse(saved, "the fit recorded no fingerprint of its data, so the chain's data "
                             "cannot be checked against it; pass trust_data=True if they are "
                             "the fit's own data, mask and noise levels")
    if recorded is not None and recorded != chain.fingerprint():
        raise _refuse(saved, "the chain's data, mask or noise levels are not the fit's (their "
                             "fingerprints differ)")
    if saved.engine not in (None, chain.engine):
        raise _refuse(saved, f"it ran on the {saved.engine!r} engine, the chain given on "
                             f"{chain.engine!r} (pass the same sparse= setting)")
    done = int(saved.iterations_done)
    if saved.iter_seconds.shape != (done,):
        raise _refuse(saved, f"its record does not hold the {done} sweeps it claims")
    last = int(saved.saved_iterations[-1]) if saved.saved_iterations.size else None
    if last != done:
        raise _refuse(saved, f"its last sweep ({done}) was not saved (last saved: {last}), so "
                             "the fit does not hold the chain's point; runs whose n_iter - "
                             "burn_in is a multiple of thin save it")
    missing = sorted(set(chain.state) - set(saved.samples))
    if missing:
        raise _refuse(saved, f"it saved no draws of {missing} (fitted with "
                             "save_latents=False?)")
    carried = sorted(set(chain.aux) | set(getattr(chain, "carries", ())))
    if carried:
        raise _refuse(saved, f"the chain also carries {carried} between sweeps, which a fit "
                             "does not save")
    if thin != int(saved.thin):
        raise _refuse(saved, f"it saved every {saved.thin}th sweep, the continuing run every "
                             f"{thin}th (a checkpoint keeps its run's thinning)")
    old = int(saved.burn_in)
    if burn_in < old or (burn_in - old) % thin:
        raise _refuse(saved, f"burn_in={burn_in} must be the fit's {old} or larger by a multiple "
                             f"of its thin {thin} (so that the kept draws are the new run's)")


def checkpoint_from_fit(saved, chain, path, *, burn_in: int | None = None,
                        thin: int | None = None, save_latents: bool = True,
                        trust_data: bool = False) -> Path:
    """Write the checkpoint from which a run continues the saved chain ``saved``.

    Parameters
    ----------
    saved : lpp.inference.ChainResult
        One chain of a saved fit (an item of ``FitResult.load(path).chains``); its last sweep
        must be saved (``n_iter - burn_in`` a multiple of ``thin``) with the latents.
    chain : GibbsSampler
        A chain of the fit's model and method on its data, mask and noise levels, built as the
        continuing run builds it (``GibbsSampler.private(...)`` or ``.nonprivate(...)``, the
        same ``sparse``); it is left at the saved chain's last point, with its seed.
    path : path-like
        The checkpoint to write (atomically): chain ``c`` of a fit of several goes to
        ``lpp.inference.fit.chain_checkpoint(path, c)``, as :func:`checkpoints_from_fit` does.
    burn_in : int, optional
        The continuing run's burn-in: the fit's (default), or larger by a multiple of its
        ``thin``; saved draws up to it are dropped.
    thin : int, optional
        The continuing run's ``thin``, which must be the fit's (the default).
    save_latents : bool
        The continuing run's ``save_latents``. (``save_counts`` cannot be continued: fits do not
        keep the sampled counts.)
    trust_data : bool
        Continue a fit that recorded no fingerprint of its data (one saved before fits recorded
        it) without checking the chain's data against it. A fit that recorded one is always
        checked.

    Returns
    -------
    pathlib.Path
        ``path``. Run ``fit_private(..., rng=<the fit's seed>, run=RunOptions(burn_in=burn_in,
        thin=<the fit's>, n_iter=<more>, checkpoint=path, resume=True))`` to continue.

    Raises
    ------
    ValueError
        Naming what does not match: method, model, data, engine, an unsaved last sweep, missing
        latents, a chain that carries more than its latents, another thinning, or a burn-in the
        saved draws do not fit.
    """
    burn_in = int(saved.burn_in) if burn_in is None else check_int(burn_in, "burn_in",
                                                                   minimum=0)
    thin = int(saved.thin) if thin is None else check_int(thin, "thin", minimum=1)
    _check_continuable(saved, chain, burn_in, thin, trust_data)
    done = int(saved.iterations_done)
    chain.seed = int(saved.seed)
    keep = np.flatnonzero(saved.saved_iterations > burn_in)
    names = list(chain.state) if save_latents else []
    mu_sum = None
    for i in keep:  # the record's running sum, formed as the run formed it
        chain.restore({n: saved.samples[n][i] for n in chain.state}, {},
                      int(saved.saved_iterations[i]))
        mu_sum = chain.mu.copy() if mu_sum is None else mu_sum + chain.mu
    if mu_sum is not None and burn_in == int(saved.burn_in) and not np.array_equal(
            mu_sum / keep.size, saved.mu_hat):
        log.warning("the rates' running sum formed again from the saved draws does not give the "
                    "fit's mu_hat bit for bit (another BLAS or CPU?); the continued chain is the "
                    "same, its mu_hat may differ in the last digits")
    state = {n: saved.samples[n][-1] for n in chain.state}
    chain.restore(state, {}, done)
    arrays = {"saved_iterations": saved.saved_iterations[keep].astype(np.int64),
              "log_joint": saved.log_joint[keep].astype(np.float64),
              "iter_seconds": saved.iter_seconds.astype(np.float64)}
    for n in names:
        arrays[f"samples__{n}"] = saved.samples[n][keep] if keep.size else np.empty((0,))
    if mu_sum is not None:
        arrays["mu_sum"] = mu_sum
    ck_meta = {**run_meta(chain, names, burn_in, thin), "iteration": done, "n_iter": done,
               "interrupted": False}
    write_checkpoint(Path(path), ck_meta, chain.state, {}, arrays)
    return Path(path)


def checkpoints_from_fit(fit, make_chain, checkpoint, *, burn_in: int | None = None,
                         thin: int | None = None, save_latents: bool = True,
                         trust_data: bool = False) -> list[Path]:
    """:func:`checkpoint_from_fit` for every chain of a saved fit (one or several).

    ``fit`` is a fit directory or a :class:`lpp.inference.FitResult` (``FitResult.load``); ``make_chain(seed)``
    builds the chain of that seed as the continuing run does (called once per chain, one chain
    in memory at a time); chain ``c``'s checkpoint is
    :func:`lpp.inference.fit.chain_checkpoint` of ``checkpoint``, where ``fit_private(...,
    chains=<the fit's>, rng=<the fit's seed>, run=RunOptions(checkpoint=checkpoint,
    resume=True, ...))`` looks for it.
    """
    chains = list(FitResult.load(fit).chains if isinstance(fit, (str, Path))
                  else FitResult.of(fit).chains)
    seeds = [int(c.seed) for c in chains]
    if seeds != chain_seeds(seeds[0], len(seeds)):
        raise ValueError(f"the fit's chains have seeds {seeds}, not those a fit of "
                         f"{len(seeds)} chains derives from {seeds[0]}: continue them one by "
                         "one with checkpoint_from_fit")
    return [checkpoint_from_fit(saved, make_chain(seed), chain_checkpoint(checkpoint, c),
                                burn_in=burn_in, thin=thin, save_latents=save_latents,
                                trust_data=trust_data)
            for c, (saved, seed) in enumerate(zip(chains, seeds))]
