"""Saved chains as ArviZ's ``InferenceData``: the label-invariant quantities of each saved
sample (log joint, total rate, the rates of a few followed entries), one ArviZ chain per
chain. ArviZ is imported on first use (it costs about a second), so ``import lpp`` does not
pay for it.

**ArviZ 0.x and 1.x.** ``lpp.diagnostics`` works with both ArviZ lines (the compendium
pins 0.23.4; ``pip install lpp[diagnostics]`` may give 1.x) and gives the same numbers
under both. Everything that
depends on the installed ArviZ lives here:

* :func:`arviz_major` says which line is installed (``arviz.__version__``);
* :func:`to_inference_data` builds the object with that line's ``arviz.from_dict``: 0.x takes
  the groups as keywords (``posterior=..., sample_stats=..., posterior_attrs=...``) and returns
  an ``arviz.InferenceData``; 1.x takes one dict of groups (``{"posterior": ...}``, the
  attributes as ``attrs={"posterior": ...}``) and returns an ``xarray.DataTree``. Both hold
  the same ``posterior`` and ``sample_stats`` groups, so ``data.posterior[name]``,
  ``.sizes`` and ``.attrs`` read the same;
* :func:`is_inference_data` recognises either object (and a DataTree under 0.x) without
  touching ``arviz.InferenceData`` under 1.x, where that name is only a shim that warns
  (``arviz.MigrationWarning``); :func:`posterior_of` gives the posterior as an
  ``xarray.Dataset`` whichever it is.

The diagnostics themselves (:mod:`~lpp.diagnostics.convergence`) call only what both lines
share with the same meaning: ``arviz.rhat`` and ``arviz.ess`` on that Dataset or on plain
arrays. They do not call ``arviz.summary``: under 1.x its ``ess_tail`` takes its tail
quantiles from ``rcParams["stats.ci_prob"]`` (0.89, so 5.5 % and 94.5 %) where 0.x uses 5 %
and 95 %; the tail ESS is therefore asked for with those quantiles explicitly
(:data:`~lpp.diagnostics.convergence.TAIL_PROB`). R-hat, ESS and the verdicts then agree
between the two lines to rounding (about 1e-14 relative).
"""
from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence

import numpy as np

from lpp.inference import ChainResult, FitResult, model_from_params

__all__ = ["QUANTITIES", "arviz_major", "as_fits", "as_inference_data", "chain_quantities",
           "default_entries", "entry_labels", "is_inference_data", "posterior_of",
           "rate_samples", "require_arviz", "to_inference_data"]

#: the exported quantities with their per-sample dimensions
QUANTITIES = ("log_joint", "total_rate", "mu")


def require_arviz():
    """The ``arviz`` module (imported on first use)."""
    with warnings.catch_warnings():
        # arviz 0.23 announces its coming refactor once a day with a FutureWarning at import
        warnings.simplefilter("ignore", FutureWarning)
        try:
            import arviz
        except ImportError as exc:
            raise ModuleNotFoundError("the chains' diagnostics and their export need ArviZ: "
                                      "pip install 'lpp[diagnostics]'", name="arviz") from exc
    return arviz


def arviz_major() -> int:
    """The installed ArviZ's major version: 0 (``InferenceData``) or 1 and later (DataTree)."""
    return int(require_arviz().__version__.partition(".")[0])


def _data_tree_class():
    """``xarray.DataTree`` where this xarray has it (2024.10 and later), else None."""
    import xarray

    return getattr(xarray, "DataTree", None)


def is_inference_data(data) -> bool:
    """Whether ``data`` is already exported: an ``arviz.InferenceData`` (ArviZ 0.x) or an
    ``xarray.DataTree`` (what ArviZ 1.x uses instead; also accepted under 0.x).

    Never looks up ``arviz.InferenceData`` under ArviZ 1.x, where it warns.
    """
    tree = _data_tree_class()
    if tree is not None and isinstance(data, tree):
        return True
    return arviz_major() < 1 and isinstance(data, require_arviz().InferenceData)


def posterior_of(data):
    """The ``posterior`` group of an exported object as an ``xarray.Dataset`` (ArviZ 0.x's
    InferenceData holds one; a DataTree holds a node, converted here)."""
    posterior = data.posterior
    tree = _data_tree_class()
    return posterior.to_dataset() if tree is not None and isinstance(posterior, tree) \
        else posterior


def _chain(fit):
    """The one chain ``fit`` holds (a chain, a saved chain, or a fit of one chain), checked."""
    if isinstance(fit, FitResult):
        if fit.n_chains != 1:
            raise TypeError(f"a fit of {fit.n_chains} chains: pass one of its chains "
                            "(result.chains[c]) or give all of them to to_inference_data")
        fit = fit.chains[0]
    if not isinstance(fit, ChainResult):
        raise TypeError(f"a fit must be an lpp.inference.FitResult or ChainResult; got "
                        f"{type(fit).__name__}")
    if np.size(fit.log_joint) == 0:
        raise ValueError("the fit saved no sample: nothing to diagnose")
    if not fit.samples:
        raise ValueError("the fit saved no latents (save_latents=False): its rates are unknown")
    return fit


def _state(fit, s: int) -> dict:
    return {name: draws[s] for name, draws in fit.samples.items() if name != "y"}


def rate_samples(fit) -> Iterator[np.ndarray]:
    """The Poisson rates ``mu`` of each saved sample, one data-shaped array at a time.

    Parameters
    ----------
    fit : lpp.inference.ChainResult
        A fit that saved its latents.

    Yields
    ------
    ndarray of float64
        ``model.rate(state_s)`` for each saved sample ``s`` in order; pass the iterator to
        :func:`lpp.metrics.predictive_log_likelihood`.

    Raises
    ------
    TypeError, ValueError
        For an object that is not a fit, or a fit without saved samples or latents.
    """
    fit = _chain(fit)
    model = model_from_params(fit.model)
    for s in range(np.size(fit.log_joint)):
        yield model.rate(_state(fit, s))


def _entry_rates(model, state, entries: np.ndarray) -> tuple[float, np.ndarray]:
    """Total rate and the rates at ``entries`` (n x ndim), without the full rate when the model
    factors as theta @ phi (a 10,000 x 10,000 rate matrix is 800 MB)."""
    if "row_column_factors" in model.capabilities:
        theta, phi = model.row_column_factors(state)
        total = float(theta.sum(axis=0) @ phi.sum(axis=1))
        picked = np.einsum("nk,kn->n", theta[entries[:, 0]], phi[:, entries[:, 1]])
        return total, picked
    mu = model.rate(state)
    return float(mu.sum()), mu[tuple(entries.T)]


def default_entries(fit, n: int = 4, *, exclude=None) -> np.ndarray:
    """``n`` fixed entries to follow: those with the largest posterior mean rate in ``fit``.

    Rates near 0 carry little information on mixing, so the largest are followed. Ties go to
    the lower flat index.

    Parameters
    ----------
    fit : lpp.inference.ChainResult
    n : int
        How many entries.
    exclude : array_like of bool, optional
        Entries never to follow (True), e.g. the held-out mask: the data say nothing there,
        so the chains may disagree for reasons that are not mixing.

    Returns
    -------
    ndarray of int64
        ``n x ndim`` indices.

    Raises
    ------
    ValueError
        If ``n`` is not in ``[1, number of eligible entries]`` or ``exclude`` has another shape.
    """
    fit = _chain(fit)
    mu_hat = np.asarray(fit.mu_hat)
    eligible = np.ones(mu_hat.shape, dtype=bool)
    if exclude is not None:
        exclude = np.asarray(exclude)
        if exclude.shape != mu_hat.shape or exclude.dtype != np.bool_:
            raise ValueError(f"exclude must be a boolean {mu_hat.shape} mask; got "
                             f"{exclude.dtype} {exclude.shape}")
        eligible = ~exclude
    n = int(n)
    if not (1 <= n <= int(eligible.sum())):
        raise ValueError(f"n must lie in [1, {int(eligible.sum())}]; got {n}")
    order = np.argsort(-mu_hat.ravel(), kind="stable")
    flat = order[eligible.ravel()[order]][:n]
    return np.stack(np.unravel_index(flat, mu_hat.shape), axis=1).astype(np.int64)


def _as_entries(entries, shape) -> np.ndarray:
    entries = np.asarray(entries)
    if entries.ndim != 2 or entries.shape[1] != len(shape) or entries.shape[0] == 0:
        raise ValueError(f"entries must be a non-empty n x {len(shape)} array of indices; "
                         f"got shape {entries.shape}")
    if not np.issubdtype(entries.dtype, np.integer):
        raise TypeError(f"entries must be integer indices; got dtype {entries.dtype}")
    if (entries < 0).any() or (entries >= np.asarray(shape)).any():
        raise ValueError(f"entries must lie inside the data's shape {tuple(shape)}")
    return entries.astype(np.int64)


def chain_quantities(fit, entries) -> dict[str, np.ndarray]:
    """The exported quantities of one chain: ``{"log_joint": (S,), "total_rate": (S,),
    "mu": (S, n)}`` for its ``S`` saved samples and the ``n`` given entries.

    Parameters
    ----------
    fit : lpp.inference.ChainResult
    entries : array_like of int
        ``n x ndim`` indices of the followed entries (e.g. :func:`default_entries`).

    Returns
    -------
    dict of ndarray

    Raises
    ------
    TypeError, ValueError
        For a bad fit or entries outside the data.
    """
    fit = _chain(fit)
    model = model_from_params(fit.model)
    entries = _as_entries(entries, np.shape(fit.mu_hat))
    n_saved = np.size(fit.log_joint)
    total = np.empty(n_saved)
    picked = np.empty((n_saved, entries.shape[0]))
    for s in range(n_saved):
        total[s], picked[s] = _entry_rates(model, _state(fit, s), entries)
    return {"log_joint": np.asarray(fit.log_joint, dtype=np.float64).copy(),
            "total_rate": total, "mu": picked}


def as_fits(fits) -> list:
    if isinstance(fits, ChainResult):
        return [fits]
    if isinstance(fits, FitResult):  # in memory or read from disk
        fits = fits.chains
    if not isinstance(fits, Sequence) or not fits:
        raise TypeError("fits must be a fit or a non-empty sequence of fits (one per chain)")
    fits = [_chain(fit) for fit in fits]
    first = fits[0]
    model = model_from_params(first.model).params()
    for c, fit in enumerate(fits[1:], start=1):
        if model_from_params(fit.model).params() != model:
            raise ValueError(f"chain {c} fits another model ({model_from_params(fit.model).params()}) than "
                             f"chain 0 ({model})")
        if np.shape(fit.mu_hat) != np.shape(first.mu_hat):
            raise ValueError(f"chain {c} was fitted to data of shape {np.shape(fit.mu_hat)}; "
                             f"chain 0 to {np.shape(first.mu_hat)}")
        if not np.array_equal(fit.saved_iterations, first.saved_iterations):
            raise ValueError(f"chain {c} saved other iterations than chain 0; chains must share "
                             "n_iter, burn_in and thin")
    return fits


def entry_labels(entries, names=None) -> list[str]:
    """The label of each followed entry: its indices, or the names of its row and column.

    Parameters
    ----------
    entries : array_like of int
        ``n x ndim`` indices.
    names : sequence of sequences of str, optional
        One sequence of names per axis (e.g. the actors of a network for its rows and
        columns, the documents and words of a corpus); None labels entries by index.

    Returns
    -------
    list of str
        ``"i,j"`` by index, or ``"name_i, name_j"``.

    Raises
    ------
    ValueError
        If ``names`` has not one sequence per axis, or an index lies outside its names.
    """
    entries = np.asarray(entries)
    if names is None:
        return [",".join(str(int(i)) for i in e) for e in entries]
    if len(names) != entries.shape[1]:
        raise ValueError(f"names must give one sequence per axis ({entries.shape[1]}); "
                         f"got {len(names)}")
    for axis, axis_names in enumerate(names):
        if entries[:, axis].max() >= len(axis_names):
            raise ValueError(f"axis {axis} has {len(axis_names)} names; an entry has index "
                             f"{int(entries[:, axis].max())}")
    return [", ".join(str(names[axis][int(i)]) for axis, i in enumerate(e)) for e in entries]


def to_inference_data(fits, *, entries=None, n_entries: int = 4, names=None):
    """Export one or several chains (fits of one model to the same data) to InferenceData.

    Parameters
    ----------
    fits : ChainResult, a fit (FitResult), or a sequence of chains
        One fit per chain, typically the same run with different seeds, or a fit of several
        chains (:class:`lpp.inference.FitResult`, in memory or loaded). They
        must share the model, the data's shape and the saved iterations.
    entries : array_like of int, optional
        ``n x ndim`` indices of the entries whose rates are followed; by default the
        ``n_entries`` largest of the first chain's posterior mean (:func:`default_entries`).
    n_entries : int
        How many entries to follow when ``entries`` is not given.
    names : sequence of sequences of str, optional
        The names of the rows and columns (e.g. actors, documents and words): the entries'
        labels (the ``entry`` coordinate), see :func:`entry_labels`; by default their indices.

    Returns
    -------
    arviz.InferenceData (ArviZ 0.x) or xarray.DataTree (ArviZ 1.x)
        ``posterior`` with ``log_joint``, ``total_rate`` (chain, draw) and ``mu`` (chain, draw,
        entry); ``sample_stats`` with ``lp`` (the log joint). The posterior's attributes record
        the model and each chain's method and seed. The two objects hold the same groups,
        variables, coordinates and attributes (see the module's notes).

    Raises
    ------
    TypeError, ValueError
        For objects that are not fits, or chains that disagree (model, shape, iterations).
    """
    fits = as_fits(fits)
    shape = np.shape(fits[0].mu_hat)
    entries = (default_entries(fits[0], n_entries) if entries is None
               else _as_entries(entries, shape))
    per_chain = [chain_quantities(fit, entries) for fit in fits]
    posterior = {name: np.stack([q[name] for q in per_chain]) for name in QUANTITIES}
    labels = entry_labels(entries, names)
    arviz = require_arviz()
    methods = [fit.method for fit in fits]
    seeds = [int(fit.seed) for fit in fits]
    groups = {"posterior": posterior, "sample_stats": {"lp": posterior["log_joint"].copy()}}
    coords = {"draw": np.asarray(fits[0].saved_iterations, dtype=np.int64), "entry": labels}
    dims = {"mu": ["entry"]}
    attrs = {"model": str(model_from_params(fits[0].model).params()),
             "methods": ",".join(methods), "seeds": ",".join(map(str, seeds))}
    if arviz_major() >= 1:  # one dict of groups, a DataTree back
        return arviz.from_dict(groups, coords=coords, dims=dims, attrs={"posterior": attrs})
    return arviz.from_dict(**groups, coords=coords, dims=dims, posterior_attrs=attrs)


def as_inference_data(data, **kwargs):
    """``data`` itself if already exported (:func:`is_inference_data`), else
    :func:`to_inference_data` of the fits with ``kwargs``."""
    if is_inference_data(data):
        return data
    return to_inference_data(data, **kwargs)
