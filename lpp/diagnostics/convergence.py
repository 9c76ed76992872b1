"""Whether chains have converged: ArviZ's split R-hat and bulk / tail ESS of the exported
quantities, Geweke's (1992) z of each chain's drift, and the verdict of the chains' agreement
(agree, drifting, modes, unclear) with the numbers behind it.

Only ``arviz.rhat`` and ``arviz.ess`` are called, on an ``xarray.Dataset`` or plain arrays,
with every setting that differs between ArviZ 0.x and 1.x given explicitly (the tail ESS's
quantiles, :data:`TAIL_PROB`), so both give the same numbers (see
:mod:`lpp.diagnostics.export`)."""
from __future__ import annotations

import numpy as np

from lpp.diagnostics.export import (
    QUANTITIES,
    as_fits,
    as_inference_data,
    default_entries,
    posterior_of,
    require_arviz,
    to_inference_data,
)

__all__ = ["DRIFT_FALSE_ALARM", "MODE_RHAT", "MODE_SEPARATION", "TAIL_PROB", "agreement_of",
           "chain_agreement", "chains_summary", "convergence_summary", "diagnostics_record",
           "fit_diagnostics", "geweke_z", "worst_rhat"]

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
#: the quantiles whose indicator chains give the tail ESS (its minimum over the two): ArviZ
#: 0.x's default, stated because ArviZ 1.x's summary takes them from ``stats.ci_prob`` (0.89)
TAIL_PROB = (0.05, 0.95)


def convergence_summary(data, **kwargs):
    """R-hat and bulk / tail ESS of every exported quantity, one row per scalar.

    Parameters
    ----------
    data : arviz.InferenceData, xarray.DataTree or fits
        What :func:`to_inference_data` returned, or the fits themselves (then
        ``kwargs`` go to :func:`to_inference_data`). R-hat needs at least 2 chains.

    Returns
    -------
    pandas.DataFrame
        Columns ``r_hat``, ``ess_bulk``, ``ess_tail`` (ArviZ's rank-normalised split R-hat
        and ESS; the tail ESS at the quantiles :data:`TAIL_PROB`), indexed by quantity
        (``mu[i,j]`` for the followed entries), as ArviZ 0.x's ``arviz.summary`` gives them.

    Raises
    ------
    ValueError
        With fewer than 2 chains, or fewer than 4 draws per chain (split R-hat halves them).
    """
    posterior = posterior_of(as_inference_data(data, **kwargs))[list(QUANTITIES)]
    if posterior.sizes["chain"] < 2:
        raise ValueError("R-hat compares chains: give at least 2 (fits with different seeds)")
    if posterior.sizes["draw"] < 4:
        raise ValueError("need at least 4 saved samples per chain for split R-hat and ESS")
    return _diagnostics_table(posterior)


def _diagnostics_table(posterior):
    """R-hat, bulk and tail ESS of each scalar in ``posterior`` (a Dataset of QUANTITIES), the
    table ``arviz.summary(kind="diagnostics")`` of ArviZ 0.x gives, under any ArviZ."""
    import pandas as pd

    arviz = require_arviz()
    columns = {"r_hat": arviz.rhat(posterior),
               "ess_bulk": arviz.ess(posterior, method="bulk"),
               "ess_tail": arviz.ess(posterior, method="tail", prob=TAIL_PROB)}
    index = []
    for name in QUANTITIES:
        if posterior[name].ndim == 2:
            index.append(name)
        else:
            index.extend(f"{name}[{label}]" for label in map(str, posterior["entry"].values))
    return pd.DataFrame({column: np.concatenate([np.ravel(np.asarray(values[name].values,
                                                                      dtype=np.float64))
                                                 for name in QUANTITIES])
                         for column, values in columns.items()}, index=index)


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
    fits = as_fits(fits)
    entries = default_entries(fits[0], n_entries, exclude=exclude)
    idata = to_inference_data(fits, entries=entries)
    summary = convergence_summary(idata)
    return summary.join(_agreement(idata, summary)[["verdict", "separation"]]), entries


def fit_diagnostics(result, *, n_entries: int = 4):
    """ArviZ's split R-hat and bulk / tail ESS of a fit of several chains, and whether its
    chains agree, drift or sit in different modes.

    Parameters
    ----------
    result : lpp.inference.FitResult
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
    ess = float(require_arviz().ess(last[None, :])) if last.size >= 4 else float(last.size)
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
    data : arviz.InferenceData, xarray.DataTree or fits
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
    idata = as_inference_data(data, **kwargs)
    return _agreement(idata, convergence_summary(idata))


def _agreement(idata, summary):
    """:func:`chain_agreement` of ``idata`` given its :func:`convergence_summary`."""
    import pandas as pd

    posterior = posterior_of(idata)
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
