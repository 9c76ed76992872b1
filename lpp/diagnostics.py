"""Convergence diagnostics of Gibbs chains with ArviZ: InferenceData, R-hat, ESS, trace plots.

Several chains of the same model on the same data (different seeds) are exported to
``arviz.InferenceData``, so that the field's standard diagnostics apply unchanged: split
R-hat (Vehtari et al. 2021) and the bulk and tail effective sample sizes.

Only quantities that do not depend on how the components are labelled are exported: a
topic or community model is invariant to permuting its components, so chains that land on
the same mode with their components in another order must still agree. The exported
quantities, one value per saved sample, are

``log_joint``
    ``log p(Z, y, y_tilde)`` (``log p(Z, y)`` without a noise model) as the sampler recorded it;
``total_rate``
    ``sum mu`` over all entries (the diagonal of a network is 0 by construction);
``mu``
    the rates ``mu`` of a few fixed entries (``entry`` dimension, labelled ``"i,j"`` or by
    the names of their row and column).

``sample_stats`` holds the log joint again under ArviZ's name ``lp``. The ``draw``
coordinate is the 1-based sweep of each saved sample.

R-hat says *that* chains disagree, not why. :func:`chain_agreement` says which of two reasons
holds, quantity by quantity, with the numbers behind it: a chain still **drifting** (Geweke's
z of its own trace, the mean of its first 10 % against its last 50 %, beyond a bound set for a
5 % false-alarm rate over the chains; more sweeps are needed), or chains that are each
stationary yet sit at different levels, **modes** (their spread is spread of the posterior as
the sampler sees it: more chains, not more sweeps, show how much). Otherwise they **agree**, or
the chains are too short to tell (**unclear**).

ArviZ is imported lazily (importing it costs about a second), so ``import lpp`` does not pay
for it.
"""
from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence

import numpy as np

from lpp.formats.fits import SavedFit
from lpp.inference import FitResult, model_from_params

__all__ = ["rate_samples", "chain_quantities", "default_entries", "entry_labels",
           "to_inference_data", "convergence_summary", "chains_summary", "worst_rhat",
           "fit_diagnostics", "diagnostics_record", "geweke_z", "chain_agreement",
           "plot_traces"]

#: the exported quantities with their per-sample dimensions
QUANTITIES = ("log_joint", "total_rate", "mu")
#: R-hat above which stationary chains are said to sit in different modes (the bar chains
#: of a fit must meet before their scores are read as one posterior's)
MODE_RHAT = 1.1
#: the chance that stationary chains of nearly independent draws are called drifting, per
#: quantity (all chains together); short, strongly autocorrelated traces are called drifting
#: more often (ArviZ's ESS of a few dozen such draws runs high), which is what they need anyway:
#: more sweeps
DRIFT_FALSE_ALARM = 0.05
#: chain means at least this many within-chain standard deviations apart (and R-hat above
#: MODE_RHAT) make stationary chains "modes": short chains of one mode rarely get this far
#: apart, chains in different modes hardly overlap
MODE_SEPARATION = 2.0


def _arviz():
    with warnings.catch_warnings():
        # arviz announces its coming refactor once a day with a FutureWarning at import
        warnings.simplefilter("ignore", FutureWarning)
        import arviz
    return arviz


def _check_fit(fit) -> None:
    if not isinstance(fit, (FitResult, SavedFit)):
        raise TypeError(f"a fit must be an lpp.inference.FitResult or lpp.formats.fits.SavedFit; "
                        f"got {type(fit).__name__}")
    if np.size(fit.log_joint) == 0:
        raise ValueError("the fit saved no sample: nothing to diagnose")
    if not fit.samples:
        raise ValueError("the fit saved no latents (save_latents=False): its rates are unknown")


def _state(fit, s: int) -> dict:
    return {name: draws[s] for name, draws in fit.samples.items() if name != "y"}


def rate_samples(fit) -> Iterator[np.ndarray]:
    """The Poisson rates ``mu`` of each saved sample, one data-shaped array at a time.

    Parameters
    ----------
    fit : lpp.inference.FitResult or lpp.formats.fits.SavedFit
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
    _check_fit(fit)
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
    fit : lpp.inference.FitResult or lpp.formats.fits.SavedFit
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
    _check_fit(fit)
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
    fit : lpp.inference.FitResult or lpp.formats.fits.SavedFit
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
    _check_fit(fit)
    model = model_from_params(fit.model)
    entries = _as_entries(entries, np.shape(fit.mu_hat))
    n_saved = np.size(fit.log_joint)
    total = np.empty(n_saved)
    picked = np.empty((n_saved, entries.shape[0]))
    for s in range(n_saved):
        total[s], picked[s] = _entry_rates(model, _state(fit, s), entries)
    return {"log_joint": np.asarray(fit.log_joint, dtype=np.float64).copy(),
            "total_rate": total, "mu": picked}


def _as_fits(fits) -> list:
    if isinstance(fits, (FitResult, SavedFit)):
        return [fits]
    if hasattr(fits, "chains"):  # a fit of several chains (ChainsResult, SavedChains)
        fits = fits.chains
    if not isinstance(fits, Sequence) or not fits:
        raise TypeError("fits must be a fit or a non-empty sequence of fits (one per chain)")
    fits = list(fits)
    for fit in fits:
        _check_fit(fit)
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
    fits : FitResult, SavedFit, a fit of several chains, or a sequence of fits
        One fit per chain, typically the same run with different seeds, or a fit of several
        chains (:class:`lpp.inference.ChainsResult`, :class:`lpp.formats.fits.SavedChains`). They
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
    arviz.InferenceData
        ``posterior`` with ``log_joint``, ``total_rate`` (chain, draw) and ``mu`` (chain, draw,
        entry); ``sample_stats`` with ``lp`` (the log joint). The posterior's attributes record
        the model and each chain's method and seed.

    Raises
    ------
    TypeError, ValueError
        For objects that are not fits, or chains that disagree (model, shape, iterations).
    """
    fits = _as_fits(fits)
    shape = np.shape(fits[0].mu_hat)
    entries = (default_entries(fits[0], n_entries) if entries is None
               else _as_entries(entries, shape))
    per_chain = [chain_quantities(fit, entries) for fit in fits]
    posterior = {name: np.stack([q[name] for q in per_chain]) for name in QUANTITIES}
    labels = entry_labels(entries, names)
    arviz = _arviz()
    methods = [fit.method for fit in fits]
    seeds = [int(fit.seed if isinstance(fit, FitResult) else fit.meta["seed"]) for fit in fits]
    return arviz.from_dict(
        posterior=posterior,
        sample_stats={"lp": posterior["log_joint"].copy()},
        coords={"draw": np.asarray(fits[0].saved_iterations, dtype=np.int64), "entry": labels},
        dims={"mu": ["entry"]},
        posterior_attrs={"model": str(model_from_params(fits[0].model).params()),
                         "methods": ",".join(methods), "seeds": ",".join(map(str, seeds))},
    )


def _as_idata(data, **kwargs):
    arviz = _arviz()
    if isinstance(data, arviz.InferenceData):
        return data
    return to_inference_data(data, **kwargs)


def convergence_summary(data, **kwargs):
    """R-hat and bulk / tail ESS of every exported quantity, one row per scalar.

    Parameters
    ----------
    data : arviz.InferenceData or fits
        An InferenceData from :func:`to_inference_data`, or the fits themselves (then
        ``kwargs`` go to :func:`to_inference_data`). R-hat needs at least 2 chains.

    Returns
    -------
    pandas.DataFrame
        Columns ``r_hat``, ``ess_bulk``, ``ess_tail`` (ArviZ's rank-normalised split R-hat
        and ESS), indexed by quantity (``mu[i,j]`` for the followed entries).

    Raises
    ------
    ValueError
        With fewer than 2 chains, or fewer than 4 draws per chain (split R-hat halves them).
    """
    idata = _as_idata(data, **kwargs)
    posterior = idata.posterior
    if posterior.sizes["chain"] < 2:
        raise ValueError("R-hat compares chains: give at least 2 (fits with different seeds)")
    if posterior.sizes["draw"] < 4:
        raise ValueError("need at least 4 saved samples per chain for split R-hat and ESS")
    arviz = _arviz()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return arviz.summary(idata, kind="diagnostics", var_names=list(QUANTITIES),
                             round_to="none")[["r_hat", "ess_bulk", "ess_tail"]]


def chains_summary(fits, *, exclude=None, n_entries: int = 4):
    """The convergence summary a fit of several chains reports about itself.

    Parameters
    ----------
    fits : a fit of several chains, or a sequence of at least 2 fits
        As for :func:`to_inference_data`.
    exclude : array_like of bool, optional
        Entries never followed (the fit's mask), see :func:`default_entries`.
    n_entries : int
        Entries followed: the largest posterior-mean rates of the first chain.

    Returns
    -------
    summary : pandas.DataFrame
        :func:`convergence_summary` of the chains with the ``verdict`` and ``separation`` of
        :func:`chain_agreement`.
    entries : ndarray of int64
        The followed entries (``n x ndim``).
    """
    fits = _as_fits(fits)
    entries = default_entries(fits[0], n_entries, exclude=exclude)
    idata = to_inference_data(fits, entries=entries)
    summary = convergence_summary(idata)
    return summary.join(_agreement(idata, summary)[["verdict", "separation"]]), entries


def fit_diagnostics(result, *, n_entries: int = 4):
    """ArviZ's split R-hat and bulk / tail ESS of a fit of several chains, and whether its
    chains agree, drift or sit in different modes.

    Parameters
    ----------
    result : lpp.inference.ChainsResult
        A fit of several chains; entries outside its ``exclude`` (the fit's mask) are followed.
    n_entries : int
        The rates followed besides the log joint and the total rate: those of the
        ``n_entries`` largest posterior-mean entries of chain 0.

    Returns
    -------
    pandas.DataFrame
        Columns ``r_hat``, ``ess_bulk``, ``ess_tail``, ``verdict`` (``"agree"``,
        ``"drifting"``, ``"modes"`` or ``"unclear"``) and ``separation`` (the range of the
        chain means in within-chain standard deviations), one row per quantity
        (:func:`chains_summary`).
    """
    return chains_summary(result.chains, exclude=getattr(result, "exclude", None),
                          n_entries=n_entries)[0]


def diagnostics_record(result) -> dict:
    """:func:`fit_diagnostics` as ``fit.json`` keeps it (:func:`lpp.formats.fits.save_fit`).

    Returns
    -------
    dict
        ``rhat_max`` (the worst R-hat), ``verdicts`` (how many quantities got each verdict)
        and ``quantities`` (``{name: {"r_hat", "ess_bulk", "ess_tail", "verdict",
        "separation"}}``); where they cannot be computed (e.g. chains interrupted at
        different sweeps, or fewer than 4 saved samples) ``rhat_max`` None and
        ``unavailable`` the reason.
    """
    try:
        summary = fit_diagnostics(result)
    except ValueError as exc:
        return {"rhat_max": None, "unavailable": str(exc)}
    verdicts = summary["verdict"].value_counts()
    return {"rhat_max": worst_rhat(summary),
            "verdicts": {str(v): int(n) for v, n in sorted(verdicts.items())},
            "quantities": {name: {k: (v if isinstance(v, str) else float(v))
                                  for k, v in row.items()}
                           for name, row in summary.iterrows()}}


def worst_rhat(summary) -> float:
    """The largest R-hat of a :func:`convergence_summary` table (NaN where none is finite):
    the one number a score table keeps of a fit's convergence."""
    values = np.asarray(summary["r_hat"], dtype=np.float64)
    values = values[np.isfinite(values)]
    return float(values.max()) if values.size else float("nan")


def geweke_z(x) -> float:
    """Geweke's z of one chain's trace: the mean of its first 10 % against that of its last 50 %.

    The variance of each mean comes from the last half alone (its variance over ArviZ's bulk
    ESS, scaled to each window's length): under the hypothesis that the trace is stationary
    both windows come from the same process, and a trend inside the first window, which would
    inflate a variance estimated there, counts against the trace instead. About N(0, 1) for a
    stationary trace of nearly independent draws; wider for a short, strongly autocorrelated
    one (ArviZ's ESS of a few dozen such draws runs high); large ``|z|`` means the chain
    still moves.

    Raises
    ------
    ValueError
        For fewer than 4 values or values that are not finite.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or x.size < 4 or not np.isfinite(x).all():
        raise ValueError(f"geweke_z needs one finite trace of at least 4 values; got shape "
                         f"{x.shape}")
    n = x.size
    first, last = x[: max(2, n // 10)], x[n - n // 2:]
    ess = float(_arviz().ess(last[None, :])) if last.size >= 4 else float(last.size)
    ess = min(ess, last.size) if np.isfinite(ess) else float(last.size)
    var_mean_last = float(last.var(ddof=1)) / max(ess, 1.0)
    se = np.sqrt(var_mean_last * (1.0 + last.size / first.size))
    diff = float(first.mean() - last.mean())
    return diff / se if se > 0 else (0.0 if diff == 0 else float("inf"))


def _drift_bound(n_chains: int) -> float:
    """``|z|`` beyond which one of ``n_chains`` stationary chains is called drifting: the
    two-sided normal quantile at :data:`DRIFT_FALSE_ALARM` split over the chains."""
    from scipy.stats import norm

    return float(norm.isf(DRIFT_FALSE_ALARM / (2 * n_chains)))


def agreement_of(values, r_hat: float) -> dict:
    """:func:`chain_agreement`'s row for one scalar quantity: ``values`` is chains x draws."""
    values = np.asarray(values, dtype=np.float64)
    means = values.mean(axis=1)
    within = float(np.sqrt(values.var(axis=1, ddof=1).mean()))
    gap = float(means.max() - means.min())
    drift = np.array([geweke_z(chain) for chain in values])
    separation = gap / within if within > 0 else (0.0 if gap == 0 else float("inf"))
    if np.abs(drift).max() > _drift_bound(values.shape[0]):
        verdict = "drifting"
    elif r_hat <= MODE_RHAT:
        verdict = "agree"
    elif separation >= MODE_SEPARATION:
        verdict = "modes"
    else:
        verdict = "unclear"
    return {"verdict": verdict, "r_hat": float(r_hat), "chain_means": means.tolist(),
            "within_sd": within, "separation": separation, "drift_z": drift.tolist()}


def chain_agreement(data, **kwargs):
    """Whether the chains agree, still drift, or sit in different modes, per quantity.

    Parameters
    ----------
    data : arviz.InferenceData or fits
        As for :func:`convergence_summary` (at least 2 chains of at least 4 draws).

    Returns
    -------
    pandas.DataFrame
        Indexed by quantity like :func:`convergence_summary`, with columns

        ``verdict``
            ``"drifting"`` when some chain's :func:`geweke_z` exceeds the bound of a
            :data:`DRIFT_FALSE_ALARM` false-alarm rate over the chains (two-sided, split
            evenly): more sweeps are needed; else ``"agree"`` when R-hat is at most
            :data:`MODE_RHAT`; else ``"modes"`` when the chain means lie at least
            :data:`MODE_SEPARATION` within-chain standard deviations apart: more chains show
            the spread; else ``"unclear"`` (chains too short to tell: more draws);
        ``r_hat``
            ArviZ's split R-hat;
        ``chain_means``
            each chain's mean (a list);
        ``within_sd``
            the standard deviation of the draws within a chain, pooled over the chains;
        ``separation``
            the range of the chain means in units of ``within_sd`` (a few units or more:
            the chains' histograms hardly overlap);
        ``drift_z``
            each chain's :func:`geweke_z` (a list).

    Raises
    ------
    ValueError
        As :func:`convergence_summary`.
    """
    idata = _as_idata(data, **kwargs)
    return _agreement(idata, convergence_summary(idata))


def _agreement(idata, summary):
    """:func:`chain_agreement` of ``idata`` given its :func:`convergence_summary`."""
    import pandas as pd

    posterior = idata.posterior
    rows = {}
    for name in QUANTITIES:
        values = posterior[name].values  # chain x draw (x entry)
        if values.ndim == 2:
            rows[name] = agreement_of(values, summary.loc[name, "r_hat"])
            continue
        for e, label in enumerate(map(str, posterior["entry"].values)):
            quantity = f"{name}[{label}]"
            rows[quantity] = agreement_of(values[:, :, e], summary.loc[quantity, "r_hat"])
    return pd.DataFrame.from_dict(rows, orient="index")


def plot_traces(data, *, var_names=("log_joint", "total_rate", "mu"), title=None,
                chain_colours=None, **kwargs):
    """Trace figure: a row per quantity, its per-chain histograms (left) and values by sweep
    (right), one colour per chain (``mu``: one line style per followed entry).

    Drawn with matplotlib directly rather than ``arviz.plot_trace``, whose 0.23 release calls
    matplotlib API deprecated in 3.11.

    Parameters
    ----------
    data : arviz.InferenceData or fits
        As for :func:`convergence_summary` (one chain is enough here).
    var_names : sequence of str
        Which quantities to draw.
    title : str, optional
        The figure's title (e.g. the profile, sweeps and data set).
    chain_colours : sequence of colours, optional
        One per chain, cycled; by default matplotlib's colour cycle.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        For quantities that were not exported.
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    var_names = list(var_names)
    unknown = set(var_names) - set(QUANTITIES)
    if unknown or not var_names:
        raise ValueError(f"unknown quantities {sorted(unknown)}; choose from {QUANTITIES}")
    posterior = _as_idata(data, **kwargs).posterior
    sweeps = posterior["draw"].values
    figure, axes = plt.subplots(len(var_names), 2, figsize=(10, 2.4 * len(var_names)),
                                gridspec_kw={"width_ratios": [1, 2.5]}, squeeze=False)
    styles = ["-", "--", ":", "-."]
    for row, name in zip(axes, var_names):
        values = posterior[name].values  # (chain, draw) or (chain, draw, entry)
        values = values[..., None] if values.ndim == 2 else values
        for c in range(values.shape[0]):
            colour = (f"C{c % 10}" if chain_colours is None
                      else chain_colours[c % len(chain_colours)])
            for e in range(values.shape[2]):
                style = styles[e % len(styles)]
                row[0].hist(values[c, :, e], bins="auto", histtype="step", color=colour,
                            linestyle=style)
                row[1].plot(sweeps, values[c, :, e], color=colour, linestyle=style, lw=0.8,
                            label=f"chain {c}" if e == 0 else None)
        row[0].set_title(name)
        row[0].set_yticks([])
        # large values (a log joint of -1.5e6) would overlap with the default ticks
        row[0].xaxis.set_major_locator(plt.MaxNLocator(3))
        row[1].set_xlabel("sweep")
        if values.shape[2] == 1:
            row[1].set_title(name)
            continue
        # the entries' labels (actor names, document and word) are too long for a title
        row[1].set_title(f"{name} at {values.shape[2]} entries (line style)")
        entries = [Line2D([], [], color="0.3", linestyle=styles[e % len(styles)], label=label)
                   for e, label in enumerate(map(str, posterior["entry"].values))]
        row[1].legend(handles=entries, title="row, column", title_fontsize="x-small",
                      fontsize="x-small", loc="best", framealpha=0.7)
    axes[0, 1].legend(fontsize="small", loc="best")
    if title:
        figure.suptitle(title)
    figure.tight_layout()
    return figure
