"""Fit Poisson factorization models to privatized (or true) counts by Gibbs sampling.

Two entry points keep the privacy boundary explicit: :func:`fit_private` takes **only** the
privatized counts and the mechanism they were privatized with; :func:`fit_nonprivate` takes the
true counts (the non-private reference). Both take the data, the model and how to run in the
same few arguments: ``run=RunOptions(...)`` holds the schedule, the start, what is kept and the
checkpoint, built once and handed whole to every chain. Iterations are numbered 1..``n_iter``;
iteration ``t`` is saved when ``t > burn_in`` and ``(t - burn_in) % thin == 0``. Ctrl-C stops a
run after the current sweep's kernels return and gives back a usable partial result
(``interrupted=True``), written to the checkpoint when one is configured.
"""
from __future__ import annotations

import numpy as np

from lpp._numba_cache import compile_notice
from lpp.formats.files import folder_format
from lpp.formats.privatized import FORMAT_NAME as PRIVATIZED_FORMAT
from lpp.formats.privatized import PrivatizedData
from lpp.formats.privatized_blocks import FORMAT_NAME as BLOCKS_FORMAT
from lpp.formats.privatized_blocks import META_FILE, PrivatizedBlocks
from lpp.inference.chain import DEVICES, GibbsSampler
from lpp.inference.models import make_model
from lpp.inference.privacy import is_geometric
from lpp.inference.result import ChainResult, FitResult, Record
from lpp.inference.runner import RunOptions, run_chain
from lpp.randomness import chain_seeds, replay_seed
from lpp.validation import check_int, densify, masked_input, moved_keywords, warn_moved

__all__ = ["chain_checkpoint", "fit_nonprivate", "fit_private"]


def chain_checkpoint(checkpoint, chain: int):
    """The checkpoint file of chain ``chain`` of a fit whose checkpoint is ``checkpoint``:
    chain 0 uses it as given, chain c ``<stem>.chain<c><suffix>`` beside it."""
    return RunOptions(checkpoint=checkpoint).for_chain(chain).checkpoint


#: the keywords of earlier releases that describe the model (they go to make_model with a
#: model's name)
_MODEL_SETTINGS = ("n_components", "a0", "b0")


def _arguments(function: str, data, model, run, chains, deprecated: dict, *, name: str):
    """``(data, model, run, chains, mask)`` of a fit: the model as an instance, ``run`` a
    :class:`RunOptions`, and the mask of missing entries, read once here for the chains and
    the result alike: a ``numpy.ma`` array's own (:func:`lpp.validation.masked_input`, the
    data ``name``), or the one row-block data carry (:meth:`PrivatizedBlocks.with_mask`). The
    keywords of earlier releases (``deprecated``) are mapped to these with a FutureWarning
    that names the new place of each."""
    mask = getattr(data, "mask", None) if isinstance(data, PrivatizedBlocks) else None
    run, rest = moved_keywords(function, deprecated, RunOptions, run,
                               public="lpp.inference.RunOptions",
                               others=(*_MODEL_SETTINGS, "mask", "n_chains"))
    if deprecated:
        if "n_chains" in rest:
            if chains != 1:
                raise TypeError("give the number of chains once, as chains=")
            chains = rest["n_chains"]
        if rest.get("mask") is not None:
            if mask is not None:
                raise TypeError("the row-block data carry a mask already (with_mask)")
            mask = rest["mask"]
        described = {k: rest[k] for k in _MODEL_SETTINGS if k in rest}
        model = make_model(model, **described)
        warn_moved(function, deprecated,
                   "give the chain's settings as run=RunOptions(...), the number of chains as "
                   "chains=, missing entries as a numpy.ma masked array (np.ma.masked_array(y, "
                   "mask)), and the model as an object (TopicModel(K, a0=..., b0=...))",
                   stacklevel=3)
    elif isinstance(model, str):
        raise TypeError(f"model={model!r} needs its number of components: pass the model "
                        f"object, e.g. TopicModel(K), or make_model({model!r}, n_components=K)")
    data, mask = masked_input(data, mask, name)
    return data, make_model(model), run if run is not None else RunOptions(), chains, mask


def _fit_chains(fit_one, n_chains: int, *, rng, run: RunOptions, mask):
    """The fit of ``fit_one(seed, run)`` run once for one chain (on ``rng`` as given), or once
    per chain, one after the other, each on its own seed (:func:`lpp.randomness.chain_seeds`)
    and checkpoint (:meth:`RunOptions.for_chain`)."""
    if check_int(n_chains, "chains", minimum=1) == 1:
        with compile_notice(run.progress):
            chains = [fit_one(rng, run)]
    else:
        if run.resume and rng is None:
            raise ValueError("resuming a fit of several chains needs its base seed: pass rng= "
                             "the seed of the run (result.seed)")
        seeds = chain_seeds(replay_seed(rng), n_chains)
        with compile_notice(run.progress):
            chains = [fit_one(seed, run.for_chain(c)) for c, seed in enumerate(seeds)]
    # the chains' samplers have checked the mask (a bool or 0/1 array, or a scipy.sparse one)
    exclude = None if mask is None else np.asarray(np.ma.getdata(densify(mask))).astype(bool)
    return FitResult(chains, exclude=exclude)


def _run(sampler: GibbsSampler, run: RunOptions, *, rng) -> ChainResult:
    run = run.checked()
    n_iter, burn_in, thin = run.n_iter, run.burn_in, run.thin
    names = list(sampler.state) if run.save_latents else []
    if run.save_counts:
        names.append("y")
    rec = Record(names, burn_in, thin, rates=run.save_rates)
    interrupted = run_chain(sampler, rec, n_iter=n_iter, burn_in=burn_in, thin=thin,
                            progress=run.progress, checkpoint=run.checkpoint,
                            checkpoint_every=run.checkpoint_every, resume=run.resume, rng=rng,
                            callback=run.callback, desc=f"{sampler.model.name}/{sampler.method}")
    arrays = rec.arrays()
    del rec  # and with it the spare running-sum buffer, one array of the data's size
    n_saved = arrays["saved_iterations"].size
    # the posterior mean in the running sum's own buffer: at the data's size, a further copy
    # would be the fit's peak memory
    mu_hat = (np.divide(arrays["mu_sum"], n_saved, out=arrays["mu_sum"])
              if n_saved and "mu_sum" in arrays else None)
    return ChainResult(
        method=sampler.method, model=sampler.model.params(), seed=sampler.seed, n_iter=n_iter,
        burn_in=burn_in, thin=thin, iterations_done=sampler.iteration, interrupted=interrupted,
        saved_iterations=arrays["saved_iterations"],
        samples={n: arrays[f"samples__{n}"] for n in names},
        mu_hat=mu_hat,
        log_joint=arrays["log_joint"], iter_seconds=arrays["iter_seconds"],
        state=sampler.state, aux=sampler.aux, engine=sampler.engine,
        data_fingerprint=sampler.fingerprint(), device=sampler.device)


def fit_private(y_tilde, mechanism, model, *, method="collapsed", run=None, rng=None,
                chains: int = 1, device: str = "cpu", cluster=None, **deprecated):
    """Locally private posterior inference from privatized counts only.

    Parameters
    ----------
    y_tilde : array_like of int, numpy.ma.MaskedArray, or PrivatizedBlocks
        Privatized counts ``y + 2Geo(alpha)`` (whole numbers, may be negative, adding up to at
        most 1e15 in absolute value); a scipy.sparse matrix is densified (once: privatized
        counts are dense by nature). **Missing entries** (held out: no likelihood) are the
        masked entries of a ``numpy.ma`` masked array (True = missing), e.g.
        ``np.ma.masked_array(y_tilde, heldout)``. The community model always masks its
        diagonal. An index whose entries are all masked is an error, except for a node of the
        community model (its memberships then follow the prior). With ``cluster``: the
        privatized data in the row-block format
        (:class:`lpp.formats.privatized_blocks.PrivatizedBlocks` or its directory; a mask
        by :meth:`PrivatizedBlocks.with_mask`).
    mechanism : GeometricMechanism, float, array_like or None
        The mechanism the counts were privatized with
        (:class:`lpp.mechanism.GeometricMechanism`, e.g. ``GeometricMechanism(epsilon=1.0,
        N=1)``), or its noise level ``alpha = exp(-epsilon / N)`` in (0, 1): a scalar, one
        value per row (shape ``(D, 1)``) or per entry. Optional for ``method="naive"``; None
        with ``cluster`` (the row-block format carries it). A mechanism of another kind runs
        with the steps it was registered with
        (:func:`lpp.inference.privacy.register_mechanism`), in this process.
    model : PoissonFactorization
        ``TopicModel(K)``, ``CommunityModel(C)``, ``CPTensorModel(R)`` or your own subclass
        (:func:`lpp.inference.models.make_model` builds one from a name, with the Gamma prior's
        shape ``a0`` and rate ``b0``, defaults 0.1 and 1, each in [1e-6, 1e6]).
    method : str or PrivacyStep
        ``"collapsed"`` (exact conditional, default), ``"bessel"`` (the paper's augmentation),
        ``"naive"`` (fit ``max(y_tilde, 0)`` as if true), or a :class:`PrivacyStep` instance.
    run : RunOptions, optional
        How each chain runs and what it keeps (:class:`lpp.inference.runner.RunOptions`;
        default ``RunOptions()``): ``n_iter``, ``burn_in``, ``thin`` (iteration t, 1-based, is
        saved when t > burn_in and (t - burn_in) % thin == 0, ``thin`` at most
        ``n_iter - burn_in``), ``init``, ``sparse``, ``save_latents``, ``save_counts``,
        ``save_rates``, ``progress``, ``callback``, ``checkpoint``, ``checkpoint_every``,
        ``resume``. The fields:

        * ``init`` — ``"data"`` (default): prior draw, then one model sweep on
          ``max(y_tilde, 0)`` (all the noise's positive mass starts in the rates); ``"em"``:
          prior draw, then ``EM_INIT_SWEEPS`` expectation sweeps on ``max(y_tilde, 0)`` (a
          start near a mode of the naive counts; topic and community models); ``"prior"``; a
          dict of latent arrays; or a callable ``start(model, source, observed, seed)``
          returning one, such as :func:`lpp.vi.dispersed_start` (one over-dispersed draw
          around the variational fit of the chain's target: none of the noise's mass,
          different for every seed; not with ``cluster``).
        * ``sparse`` — None uses a fused engine where one applies, False never, True requires
          one. For a model with row/column factors (the topic model): ``method="collapsed"``
          with alpha constant within rows (same posterior, other random streams than the dense
          sweep) and ``method="naive"`` (only the positive entries are allocated; the same
          chain bit for bit).
        * ``save_latents``, ``save_counts`` — keep the saved draws of the latents / of the
          counts ``y``.
        * ``save_rates`` — sum the rates of the saved sweeps into ``mu_hat`` (True, the
          default: an array of the data's size, and the rates formed at every saved sweep);
          False gives ``mu_hat=None`` and keeps nothing of the data's size (a fit that needs
          only the latents' draws or their means). A checkpoint resumes only with the setting
          it was written with. A cluster's fit forms ``mu_hat`` from its saved factors either
          way.
        * ``progress`` — tqdm bar (``lpp[progress]``); None shows it on interactive terminals
          only.
        * ``callback`` — ``callback(chain)`` after every sweep (e.g. to log a trace); the
          chain's ``state``, ``iteration`` and ``log_joint()`` are read-only to it.
        * ``checkpoint`` — an ``.npz`` checkpoint written every ``checkpoint_every``
          iterations, at the end and on Ctrl-C. ``resume=True`` continues from it when it
          exists (same data, method, model, burn_in, thin; ``n_iter`` at least the
          checkpoint's iteration; an int ``rng`` must be the checkpoint's seed, None takes
          it). The file carries a sha256 digest of the chain's point, record, schedule, seed,
          model, method and a fingerprint of the data: a damaged, edited or mismatched
          checkpoint is refused with a ValueError naming the file (delete it or pass
          ``resume=False`` to start over). Temporary files of a killed write are removed when
          the next run starts; one run per checkpoint path at a time.
    rng : int, numpy.random.Generator or None
        An int in [0, 2**63) is the base seed of every random stream; a Generator or None draws
        one. ``result.seed`` records it, and ``rng=result.seed`` repeats the run bit for bit,
        with any number of threads.
    chains : int
        Independent chains of the fit (default 1), run one after the other: chain 0 on the
        base seed of ``rng`` (the one-chain run), chain c on a seed derived from it and c
        (:func:`lpp.randomness.chain_seeds`). With a checkpoint, chain c >= 1 checkpoints to
        :func:`chain_checkpoint`; resuming needs ``rng`` (the base seed). Start the chains
        dispersed (``init=lpp.vi.dispersed_start``, or any start that draws from the seed) so
        that their disagreement means something.
    device : {"cpu", "cuda"}
        Where the sweeps run. ``"cuda"`` runs the topic model (``method="collapsed"`` with
        alpha constant within rows, or ``"naive"``) on a GPU with numba-cuda
        (``pip install 'lpp[gpu]'``; :mod:`lpp.inference.engines.cuda`): the same posterior,
        other random streams, so the chain equals a CPU chain in distribution, not bit for bit;
        the same seed on the same GPU repeats it bit for bit. Without numba-cuda or a GPU it is
        an error (no silent fallback). Fully observed data only (no mask), not with
        ``cluster``.
    cluster : None, True, int, str, dask.distributed.Client or Cluster
        None (default) runs in this process. Otherwise the topic model's sparse chain runs on
        a Dask cluster (:mod:`lpp.inference.distributed`), row blocks of the data on the
        workers: True starts a local cluster of ``DEFAULT_WORKERS`` worker processes for the
        run, an int one of that many; a scheduler address, a ``Client`` or a ``Cluster`` uses a
        running one. The chain equals the in-process ``sparse=True`` chain bit for bit, also
        when workers die and are replaced mid-run; a cluster left without workers for 60 s
        fails the fit (``NoWorkersError``, after writing the checkpoint), an address that does
        not answer within 5 s at once (``ConnectionError``).
        Supports ``method="collapsed"``, the topic model, a mask, every ``init`` but a
        callable, checkpoints; not ``save_counts`` nor ``save_latents=False``. Dask is
        imported only here. Several chains run on the cluster one after the other.
    **deprecated
        The keywords of earlier releases (``n_iter=``, ``mask=``, ``n_chains=``,
        ``n_components=``, ...), accepted with a FutureWarning that names their place in the
        arguments above.

    Returns
    -------
    FitResult
        The fit's chains (:class:`ChainResult` each: draws, log joint, timings, last point)
        and their pooled rates ``mu_hat``; a fit of one chain also offers its chain's
        attributes as its own (``result.samples``). :mod:`lpp.diagnostics` gives ArviZ's
        R-hat / ESS of a fit of several.

    Raises
    ------
    TypeError, ValueError
        For counts that are not whole numbers, alpha outside (0, 1) or of a shape that does not
        fit, unknown methods or models, bad iteration settings or a mismatched checkpoint;
        with ``cluster``, for what the distributed fit does not support.

    Examples
    --------
    >>> import numpy as np
    >>> from lpp.inference import RunOptions, TopicModel, fit_private
    >>> from lpp.mechanism import GeometricMechanism, privatize
    >>> mechanism = GeometricMechanism(epsilon=1.0, N=1)
    >>> y = np.random.default_rng(0).poisson(2.0, size=(30, 40))
    >>> y_tilde = privatize(y, mechanism, rng=1)
    >>> fit = fit_private(y_tilde, mechanism, TopicModel(3),
    ...                   run=RunOptions(n_iter=20, burn_in=10, progress=False), rng=2)
    >>> fit.samples["phi"].shape
    (10, 3, 40)
    """
    y_tilde, model, run, chains, mask = _arguments("fit_private", y_tilde, model, run, chains,
                                                   deprecated, name="y_tilde")
    alpha = mechanism
    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {device!r}")
    if cluster is not None and device != "cpu":
        raise ValueError("device='cuda' runs in this process; a cluster's chain runs on the "
                         "workers' CPUs (pass cluster=None)")
    if cluster is not None and not is_geometric(mechanism):
        raise ValueError(f"a cluster's row-block chains run the geometric mechanism; "
                         f"{type(mechanism).__name__} runs in this process (cluster=None)")
    if cluster is not None and callable(run.init):
        raise ValueError("a callable init (such as lpp.vi.dispersed_start) reads the data in "
                         "this process, which the cluster's row-block data are not: compute "
                         "the start in-process (GibbsSampler.private(...).state on the dense "
                         "data) and pass it as init=dict, or use init='data' / 'em'")
    _refuse_private_folder(y_tilde)
    if cluster is None and _is_block_format(y_tilde):
        raise TypeError("row-block data (lpp.formats.privatized_blocks) are fitted on a "
                        "cluster: pass cluster=True (a local one) or a Client, or load them "
                        "with .to_dense() when they fit in memory")

    def fit_one(seed, chain_run):
        if cluster is not None:
            # the only door to Dask: the in-process path below never imports it
            from lpp.inference.distributed import fit_private_distributed

            return fit_private_distributed(
                y_tilde, model, cluster=cluster, alpha=alpha, method=method, rng=seed,
                mask=mask, run=chain_run)
        sampler = GibbsSampler.private(y_tilde, alpha, model, method=method, rng=seed,
                                       mask=mask, init=chain_run.init, sparse=chain_run.sparse,
                                       device=device)
        return _run(sampler, chain_run, rng=seed)

    return _fit_chains(fit_one, chains, rng=rng, run=run, mask=mask)


def _is_block_format(data) -> bool:
    return (isinstance(data, PrivatizedBlocks)
            or folder_format(data, META_FILE) == BLOCKS_FORMAT)


def _refuse_private_folder(data) -> None:
    """A one-file private folder (or what its reader returns) is not a matrix: say how to
    pass it, rather than fail on its dtype or take it for row-block data."""
    if isinstance(data, PrivatizedData) or folder_format(data, META_FILE) == PRIVATIZED_FORMAT:
        raise TypeError("y_tilde is a private folder (lpp.formats.privatized): pass its "
                        "matrix and noise level, data = load_privatized(path); "
                        "fit_private(data.y_tilde, data.alpha, ...)")


def fit_nonprivate(y, model, *, run=None, rng=None, chains: int = 1, device: str = "cpu",
                   **deprecated):
    """Non-private Poisson factorization of the true counts ``y`` (the reference method).

    Parameters
    ----------
    y : array_like of int, numpy.ma.MaskedArray, or scipy.sparse matrix or array
        True counts (non-negative whole numbers, adding up to at most 1e15); the masked
        entries of a ``numpy.ma`` masked array are missing, as for :func:`fit_private`. A
        scipy.sparse matrix or array (any format, int or float holding whole numbers) stays
        sparse where the known-counts engine runs the chain (a model with row/column factors,
        ``run.sparse`` not False, ``device="cpu"``): with ``save_rates=False`` nothing of the
        data's size is formed (the log joint's rates are formed one row at a time), and the
        chain equals the one on the same counts given dense, bit for bit. Elsewhere it is
        densified once; ``mu_hat`` and saved draws of ``y`` (``save_counts``) are D x V
        whatever the input.
    model, rng, chains, **deprecated
        As for :func:`fit_private`.
    run : RunOptions, optional
        As for :func:`fit_private`; its ``sparse``: None (default) allocates only the observed
        non-zero counts, laid out once, where the model has row/column factors (the topic
        model); False always scans the dense matrix; True requires the former. Both draw the
        same chain, bit for bit.
    device : {"cpu", "cuda"}
        As for :func:`fit_private` (the non-private chain runs on the GPU's known-counts
        engine).

    Returns
    -------
    FitResult
        As for :func:`fit_private`.
    """
    y, model, run, chains, mask = _arguments("fit_nonprivate", y, model, run, chains,
                                             deprecated, name="y")

    def fit_one(seed, chain_run):
        sampler = GibbsSampler.nonprivate(y, model, rng=seed, mask=mask, init=chain_run.init,
                                          sparse=chain_run.sparse, device=device)
        return _run(sampler, chain_run, rng=seed)

    return _fit_chains(fit_one, chains, rng=rng, run=run, mask=mask)
