"""Does the Enron network's held-out task separate the methods?

``python -m experiments.network_heldout``.

The paper (Schein et al. 2019, Sec. 5.2) holds out "all elements of the count matrix that
involved the top fifty senders or recipients", computes each method's posterior mean rate
``mu_hat`` (Eq. 17) on them and reports its mean absolute error against the true counts. The
pipeline scores its network fits that way on two masks (``block``: top senders x top
recipients, the default; ``rows_cols``: a top sender's row or a top recipient's column, the
paper's text) and predicting zero everywhere beats every method on both. This script asks why,
on the quick profile's data and fits (``data/prepared/network*``, ``data/private/network*``,
``results/fits/network*``):

- **entries**: the held-out entries' distribution (share of zeros, quantiles, the share of
  the total that the heaviest 1 / 5 / 10 % of entries hold: the zero predictor's absolute
  error is the total, so that share is its error's share too), beside the observed entries';
- **baselines** scored exactly as the methods are: zero; the observed entries' mean (private:
  the mean of ``y~`` over them, unbiased since the noise has mean zero); a rank-one Poisson
  fit ``a_i b_j`` of the observed entries (non-private: maximum likelihood on the true counts;
  ``naive``: on ``max(y~, 0)``; ``private``: the package's collapsed Gibbs sampler on ``y~``,
  the topic model with one topic, the held-out entries and the diagonal masked);
- **readings**: every fit and baseline under each score: ``mae`` (the paper's: posterior mean
  rate), ``mae_median`` (the posterior predictive median, MAE's optimal point prediction),
  ``mae_nonzero`` (``mae`` on the held-out entries with a count), ``log_mae`` (``|log1p mu_hat
  - log1p y|``), ``spearman`` (rank correlation of ``mu_hat`` with ``y``), ``auc`` (of the
  predictive ``P(y > 0)`` for a link) and ``loglik`` (mean Poisson predictive
  log-likelihood); and per reading whether ours and naive (paired by privatized copy) and
  ours and non-private (unpaired) differ beyond the spread, as ``study.claims`` judges it;
- **seeds**: whether the quick profile's fits have their own chain seeds per copy and level,
  and, in the paper profile's score tables (``results/paper/eval``), how much of the spread
  of log held-out MAE over chains x copies the chain's index explains (sum-of-squares share,
  permutation p-value with chains shuffled within each copy).

``--quick`` runs it all on a small simulated network (nothing written); the full run writes
``experiments/results/network_heldout.json`` (atomically).
"""
from __future__ import annotations

import argparse
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.stats

from experiments import write_results
from lpp.formats.counts import load_counts
from lpp.formats.fits import load_fit, read_metadata
from lpp.formats.privatized import SimulationWarning, canonical_counts, load_privatized
from lpp.inference import CommunityModel, RunOptions, TopicModel, fit_nonprivate, fit_private, make_model
from lpp.inference.models import model_from_params
from lpp.mechanism import alpha_from_epsilon, privatize, truncate
from lpp.metrics import network_masks, predictive_log_likelihood
from lpp.simulate import make_network

ROOT = Path(__file__).resolve().parents[1]
SEED = 61
TOP_SHARES = (0.01, 0.05, 0.10)
QUANTILES = (0.5, 0.75, 0.9, 0.95, 0.99)
#: each reading and whether a larger value is better
READINGS = {"mae": False, "mae_median": False, "mae_nonzero": False, "log_mae": False,
            "spearman": True, "auc": True, "loglik": True}
FIT_NAME = re.compile(r"(?P<method>[a-z]+)_C(?P<C>\d+)(?:_eps(?P<eps>[\d.]+)_rep(?P<rep>\d+))?")


# ---- the held-out entries

def entry_distribution(y: np.ndarray) -> dict:
    """Share of zeros, mean, quantiles, and the share of the total the heaviest entries hold."""
    y = np.sort(np.asarray(y, dtype=np.float64))[::-1]
    total = y.sum()
    out = {"entries": int(y.size), "zeros": float(np.mean(y == 0)), "mean": float(y.mean()),
           "max": float(y[0])}
    out.update({f"q{round(q * 100)}": float(np.quantile(y, q)) for q in QUANTILES})
    for share in TOP_SHARES:
        top = max(1, int(round(share * y.size)))
        out[f"top{round(share * 100)}pct_share"] = float(y[:top].sum() / total) if total else np.nan
    return out


def heaviest_error_share(mu_hat: np.ndarray, y: np.ndarray, share: float = 0.05) -> float:
    """The share of a prediction's total absolute error on the heaviest ``share`` of entries."""
    order = np.argsort(-y, kind="stable")
    error = np.abs(mu_hat - y)[order]
    top = max(1, int(round(share * y.size)))
    return float(error[:top].sum() / error.sum()) if error.sum() else np.nan


# ---- predictions

def rank_one_mle(y: np.ndarray, observed: np.ndarray, n_iter: int = 2000,
                 tol: float = 1e-10) -> np.ndarray:
    """Maximum-likelihood rates ``a_i b_j`` of a Poisson matrix on its observed entries.

    Alternating exact updates (each maximises the likelihood in one factor): ``a_i = sum_j
    y_ij / sum_j b_j`` over row i's observed entries, and likewise ``b_j``. A row (column)
    with no observed entry has no likelihood: it gets the mean factor of the others, the
    guess an exchangeable prior makes.
    """
    w = observed.astype(np.float64)
    yo = np.where(observed, y, 0).astype(np.float64)
    row_sums, col_sums = yo.sum(1), yo.sum(0)
    a = row_sums / max(1.0, row_sums.max())
    b = np.ones(y.shape[1])
    for _ in range(n_iter):
        a_new = np.divide(row_sums, w @ b, out=np.zeros_like(row_sums), where=(w @ b) > 0)
        b_new = np.divide(col_sums, a_new @ w, out=np.zeros_like(col_sums),
                          where=(a_new @ w) > 0)
        change = np.max(np.abs(np.outer(a_new, b_new) - np.outer(a, b)))
        a, b = a_new, b_new
        if change < tol:
            break
    return _fill_unseen(a[None], b[None], observed)[0]


def _fill_unseen(a: np.ndarray, b: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """Rates (S, V, V) from row and column factors (S, V): rows and columns with no observed
    entry take the mean factor of those with one; the diagonal is zero."""
    rows, cols = observed.any(1), observed.any(0)
    a, b = a.copy(), b.copy()
    a[:, ~rows] = a[:, rows].mean(1, keepdims=True)
    b[:, ~cols] = b[:, cols].mean(1, keepdims=True)
    rates = a[:, :, None] * b[:, None, :]
    for r in rates:
        np.fill_diagonal(r, 0.0)
    return rates


def rank_one_private(y_tilde, alpha, observed, *, n_iter, burn_in, thin, seed) -> np.ndarray:
    """Rate samples (S, V, V) of a rank-one Poisson model fitted to ``y~`` by the private
    collapsed Gibbs sampler: the topic model with one topic on the rows and columns with an
    observed entry, the unobserved entries masked (the others as in :func:`rank_one_mle`)."""
    rows, cols = observed.any(1), observed.any(0)
    block = np.ix_(rows, cols)
    result = fit_private(np.ma.masked_array(y_tilde[block], ~observed[block]),
                         alpha, TopicModel(1), method="collapsed",
                         run=RunOptions(n_iter=n_iter, burn_in=burn_in, thin=thin), rng=seed)
    samples = result.chains[0].samples
    n_saved = samples["theta"].shape[0]
    a = np.zeros((n_saved, observed.shape[0]))
    b = np.zeros((n_saved, observed.shape[1]))
    a[:, rows] = samples["theta"][:, :, 0]
    b[:, cols] = samples["phi"][:, 0, :]
    return _fill_unseen(a, b, observed)


def chain_rate_samples(model, samples: dict) -> np.ndarray:
    """The rates of each saved sample of a chain, stacked (S, V, V), diagonal zero."""
    latents = {k: v for k, v in samples.items() if k != "y"}
    n_saved = next(iter(latents.values())).shape[0]
    rates = np.stack([model.rate({k: v[s] for k, v in latents.items()}) for s in range(n_saved)])
    for r in rates:
        np.fill_diagonal(r, 0.0)
    return rates


# ---- readings

def predictive_median(rates: np.ndarray) -> np.ndarray:
    """Median of the posterior predictive, a mixture over samples of Poisson(rate), per entry.

    The mixture's median lies between its components' medians; a bisection over that range
    finds the smallest k with mixture cdf >= 1/2.
    """
    lo = scipy.stats.poisson.ppf(0.5, rates).min(0)
    hi = scipy.stats.poisson.ppf(0.5, rates).max(0)
    while np.any(hi > lo):
        mid = np.floor((lo + hi) / 2)
        enough = scipy.stats.poisson.cdf(mid, rates).mean(0) >= 0.5
        hi = np.where(enough, mid, hi)
        lo = np.where(enough, lo, mid + 1)
    return hi


def link_auc(score: np.ndarray, linked: np.ndarray) -> float:
    """Area under the ROC curve of ``score`` for ``linked`` (Mann-Whitney, ties halved)."""
    n_pos, n_neg = int(linked.sum()), int((~linked).sum())
    if n_pos == 0 or n_neg == 0:
        return np.nan
    ranks = scipy.stats.rankdata(score)
    return float((ranks[linked].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def readings(rates: np.ndarray, y: np.ndarray, mask: np.ndarray) -> dict:
    """Every reading of a prediction (rate samples (S, V, V); one sample for a point
    prediction) on the entries of ``mask``."""
    held = rates[:, mask]
    truth = y[mask].astype(np.float64)
    mu_hat = held.mean(0)
    nonzero = truth > 0
    spearman = (float(scipy.stats.spearmanr(mu_hat, truth).statistic)
                if np.ptp(mu_hat) > 0 and np.ptp(truth) > 0 else np.nan)
    return {"mae": float(np.abs(mu_hat - truth).mean()),
            "mae_median": float(np.abs(predictive_median(held) - truth).mean()),
            "mae_nonzero": float(np.abs(mu_hat - truth)[nonzero].mean()),
            "log_mae": float(np.abs(np.log1p(mu_hat) - np.log1p(truth)).mean()),
            "spearman": spearman,
            "auc": link_auc(1.0 - np.exp(-held).mean(0), nonzero),
            "loglik": float(predictive_log_likelihood(iter(rates), y, mask)),
            "heaviest5pct_error_share": heaviest_error_share(mu_hat, truth)}


# ---- the spread (study.claims's rule)

def paired_decision(ours: pd.Series, other: pd.Series) -> dict:
    """Ours vs another method paired by copy: mean difference, its sd, the copies where ours
    is ahead, and ``decided`` where |mean| exceeds the sd (paired t above the root of the
    copies)."""
    diff = (ours - other).dropna()
    spread = float(diff.std(ddof=1)) if diff.size > 1 else np.nan
    mean = float(diff.mean())
    return {"diff": mean, "spread": spread, "ours_ahead": int((diff < 0).sum()),
            "copies": int(diff.size), "decided": bool(abs(mean) > spread)}


def unpaired_decision(ours: np.ndarray, other: np.ndarray) -> dict:
    """Ours vs a reference fitted apart: difference of means against the root of the summed
    variances over every chain and copy."""
    spread = float(np.sqrt(np.var(ours, ddof=1) + np.var(other, ddof=1)))
    mean = float(np.mean(ours) - np.mean(other))
    return {"diff": mean, "spread": spread, "decided": bool(abs(mean) > spread)}


def separation(table: pd.DataFrame) -> list[dict]:
    """Per reading, C and level: ours vs naive (paired by copy) and ours vs non-private."""
    rows = []
    private = table[table.method.isin(["collapsed", "naive"])]
    for (C, eps), cell in private.groupby(["C", "eps"]):
        ours = cell[cell.method == "collapsed"].set_index("rep")
        naive = cell[cell.method == "naive"].set_index("rep")
        nonprivate = table[(table.method == "nonprivate") & (table.C == C)]
        for reading, higher in READINGS.items():
            sign = -1.0 if higher else 1.0  # differences oriented so that < 0 favours ours
            row = {"C": int(C), "eps": float(eps), "reading": reading,
                   "vs_naive": paired_decision(sign * ours[reading], sign * naive[reading])}
            if len(nonprivate):
                row["vs_nonprivate"] = unpaired_decision(sign * ours[reading].to_numpy(),
                                                         sign * nonprivate[reading].to_numpy())
            rows.append(row)
    return rows


def separation_summary(rows: list[dict]) -> dict:
    """Per reading: cells decided ours-better / ours-worse against naive and non-private."""
    out = {}
    for reading in READINGS:
        mine = [r for r in rows if r["reading"] == reading]
        entry = {"cells": len(mine)}
        for other in ("vs_naive", "vs_nonprivate"):
            decided = [r[other] for r in mine if other in r and r[other]["decided"]]
            entry[other] = {"ours_better": sum(d["diff"] < 0 for d in decided),
                            "ours_worse": sum(d["diff"] > 0 for d in decided)}
        out[reading] = entry
    return out


# ---- the chains' seeds

def chain_effect(table: pd.DataFrame, n_permutations: int = 2000, rng=SEED) -> pd.DataFrame:
    """How much of log held-out MAE's spread over copies x chains the chain index explains.

    Per (method, C, level) with several chains on several copies: the share of the sum of
    squares about the grand mean due to the chain index (the copy's share beside it), the
    permutation p-value of that share (chains shuffled within each copy: exchangeable when
    chains are independent across copies), the chain index most often worst, in how many
    copies it is worst, and its MAE over the other chains' mean (min and max over copies).
    """
    rng = np.random.default_rng(rng)
    masked = table.fit.str.fullmatch(FIT_NAME.pattern) & table.chain.notna()  # no _unmasked
    private = table[masked & table.method.isin(["collapsed", "naive"])].copy()
    private["rep"] = private.fit.str.extract(r"rep(\d+)$")[0].astype(int)
    rows = []
    for (method, C, eps), cell in private.groupby(["method", "C", "epsilon_over_n"]):
        grid = cell.pivot_table(index="rep", columns="chain", values="heldout_mae").dropna()
        if grid.shape[0] < 2 or grid.shape[1] < 2:
            continue
        logs = np.log(grid.to_numpy())
        total = ((logs - logs.mean()) ** 2).sum()

        def chain_share(values):
            return grid.shape[0] * ((values.mean(0) - values.mean()) ** 2).sum() / total

        observed = chain_share(logs)
        null = np.array([chain_share(rng.permuted(logs, axis=1)) for _ in range(n_permutations)])
        worst = grid.to_numpy().argmax(1)
        index = int(np.bincount(worst).argmax())
        others = np.delete(grid.to_numpy(), index, axis=1).mean(1)
        ratio = grid.to_numpy()[:, index] / others
        rows.append({"method": method, "C": int(C), "eps": float(eps), "copies": grid.shape[0],
                     "chains": grid.shape[1], "chain_share": float(observed),
                     "copy_share": float(grid.shape[1] * ((logs.mean(1) - logs.mean()) ** 2).sum()
                                         / total),
                     "p_value": float((1 + (null >= observed).sum()) / (1 + n_permutations)),
                     "worst_chain": int(grid.columns[index]),
                     "worst_in_copies": int((worst == index).sum()),
                     "worst_ratio_min": float(ratio.min()), "worst_ratio_max": float(ratio.max())})
    return pd.DataFrame(rows)


def seed_record(fits_dir: Path) -> dict:
    """The quick profile's chain seeds: distinct per (level, copy)? shared across methods?"""
    seeds = {}
    for meta in sorted(fits_dir.glob("*/fit.json")):
        match = FIT_NAME.fullmatch(meta.parent.name)
        if match is None or match["eps"] is None:
            continue
        chains = list(read_metadata(meta).seeds)
        seeds[meta.parent.name] = {"method": match["method"], "C": int(match["C"]),
                                   "release": (match["eps"], match["rep"]), "seeds": chains}
    by_release = {}
    for entry in seeds.values():
        by_release.setdefault(entry["release"], set()).update(entry["seeds"])
    distinct = [s for seeds_ in by_release.values() for s in seeds_]
    return {"fits": len(seeds), "releases": len(by_release),
            "one_seed_set_per_release": all(len(s) == len(next(iter(seeds.values()))["seeds"])
                                            for s in by_release.values()),
            "seeds_distinct_across_releases": len(distinct) == len(set(distinct)),
            "chains_per_fit": sorted({len(e["seeds"]) for e in seeds.values()})}


# ---- inputs

def saved_predictions(fits_dir: Path) -> list[dict]:
    """Rate samples of every chain of the masked network fits in ``fits_dir``."""
    out = []
    for path in sorted(p for p in fits_dir.iterdir() if (p / "fit.json").exists()):
        match = FIT_NAME.fullmatch(path.name)
        if match is None:  # the arXiv design's unmasked fits and anything else
            continue
        fit = load_fit(path)
        model = model_from_params(fit.model)
        for c, chain in enumerate(fit.chains):
            out.append({"fit": path.name, "method": match["method"], "C": int(match["C"]),
                        "eps": float(match["eps"]) if match["eps"] else np.nan,
                        "rep": int(match["rep"]) if match["rep"] else -1, "chain": c,
                        "rates": chain_rate_samples(model, chain.samples),
                        "mu_hat": np.asarray(chain.mu_hat)})
    return out


def baselines(y, observed, releases, *, n_iter, burn_in, thin) -> list[dict]:
    """The baseline predictions: zero and the observed mean, rank-one fits, per copy."""
    off = ~np.eye(y.shape[0], dtype=bool)
    rows = [{"fit": "zeros", "method": "zeros", "eps": np.nan, "rep": -1,
             "rates": np.zeros((1, *y.shape))},
            {"fit": "observed_mean", "method": "mean_true", "eps": np.nan, "rep": -1,
             "rates": np.where(off, y[observed].mean(), 0.0)[None]},
            {"fit": "rank1_true", "method": "rank1_true", "eps": np.nan, "rep": -1,
             "rates": rank_one_mle(y, observed)[None]}]
    for (eps, rep), (y_tilde, alpha) in sorted(releases.items()):
        common = {"eps": eps, "rep": rep}
        rows.append({"fit": f"observed_mean_eps{eps}_rep{rep}", "method": "mean_private",
                     "rates": np.where(off, y_tilde[observed].mean(), 0.0)[None], **common})
        rows.append({"fit": f"rank1_naive_eps{eps}_rep{rep}", "method": "rank1_naive",
                     "rates": rank_one_mle(truncate(y_tilde), observed)[None], **common})
        rows.append({"fit": f"rank1_private_eps{eps}_rep{rep}", "method": "rank1_private",
                     "rates": rank_one_private(y_tilde, alpha, observed, n_iter=n_iter,
                                               burn_in=burn_in, thin=thin,
                                               seed=SEED + 1000 * rep + int(10 * eps)),
                     **common})
    return rows


def design_inputs(root: Path, design: str):
    """The true counts (canonical order), held-out mask, privatized copies and fits of one
    design (``network`` or ``network_rows_cols``) of the quick profile."""
    truth = canonical_counts(load_counts(root / "data/prepared" / design))
    y = truth.counts.toarray()
    heldout = np.asarray(truth.arrays["heldout"], dtype=bool)
    releases = {}
    for folder in sorted((root / "data/private" / design).glob("eps*_rep*")):
        match = re.fullmatch(r"eps([\d.]+)_rep(\d+)", folder.name)
        with warnings.catch_warnings():  # the simulation study's copies: known, and said
            warnings.simplefilter("ignore", SimulationWarning)
            data = load_privatized(folder)
        releases[(float(match[1]), int(match[2]))] = (np.asarray(data.y_tilde), data.alpha)
    return y, heldout, releases, saved_predictions(root / "results/fits" / design)


def quick_inputs():
    """A small simulated network, a block held-out mask, two privatized copies, short fits."""
    rng = np.random.default_rng(SEED)
    net = make_network(rng=rng, n_nodes=24, n_communities=3, shape=0.3, rate=0.2)
    y = net.y
    heldout = np.zeros(y.shape, dtype=bool)
    heldout[:6, :6] = True
    np.fill_diagonal(heldout, False)
    model = make_model("communities", n_components=2)
    settings = {"n_iter": 12, "burn_in": 6, "thin": 2}
    fits = []
    for c, chain in enumerate(fit_nonprivate(np.ma.masked_array(y, heldout), CommunityModel(2),
                                             rng=1, chains=2,
                                             run=RunOptions(n_iter=12, burn_in=6, thin=2)).chains):
        fits.append({"fit": "nonprivate_C2", "method": "nonprivate", "C": 2, "eps": np.nan,
                     "rep": -1, "chain": c, "rates": chain_rate_samples(model, chain.samples),
                     "mu_hat": chain.mu_hat})
    releases = {}
    alpha = alpha_from_epsilon(2.0, 1.0)
    for rep in range(2):
        y_tilde = privatize(y, alpha, rng=rng)
        releases[(2.0, rep)] = (y_tilde, alpha)
        for method in ("collapsed", "naive"):
            chain = fit_private(np.ma.masked_array(y_tilde, heldout), alpha, CommunityModel(2),
                                method=method, rng=10 + rep,
                                run=RunOptions(n_iter=12, burn_in=6, thin=2)).chains[0]
            fits.append({"fit": f"{method}_C2_eps2.0_rep{rep}", "method": method, "C": 2,
                         "eps": 2.0, "rep": rep, "chain": 0, "mu_hat": chain.mu_hat,
                         "rates": chain_rate_samples(model, chain.samples)})
    table = pd.DataFrame({"fit": [f"{m}_C2_eps1.0_rep{r}" for m in ("collapsed", "naive")
                                  for r in range(3) for _ in range(3)],
                          "method": [m for m in ("collapsed", "naive") for _ in range(9)],
                          "C": 2, "epsilon_over_n": 1.0, "chain": [0, 1, 2] * 6,
                          "heldout_mae": rng.gamma(20.0, 1.0, 18) * ([1, 1, 4] * 6)})
    return {"simulated": (y, heldout, releases, fits)}, {"simulated": table}, None, settings


# ---- the analysis

def analyse_design(y, heldout, releases, fits, settings) -> dict:
    # the score table's entries: off the diagonal (never modelled, 0 in data and rates)
    masks = network_masks(y.shape, heldout)
    heldout, observed = masks["heldout"], masks["observed"]
    entries = {"heldout": entry_distribution(y[heldout]),
               "observed": entry_distribution(y[observed])}
    rows = []
    for fit in fits + baselines(y, observed, releases, **settings):
        scores = readings(fit["rates"], y, heldout)
        if "mu_hat" in fit:  # the saved posterior mean is what the score table reads
            scores["mae_saved_mu_hat"] = float(np.abs(fit["mu_hat"][heldout] - y[heldout]).mean())
        rows.append({k: v for k, v in fit.items() if k not in ("rates", "mu_hat")} | scores)
    table = pd.DataFrame(rows)
    methods = table[table.method.isin(["collapsed", "naive", "nonprivate"])]
    cells = separation(methods)
    return {"entries": entries, "table": table, "separation": cells,
            "summary": separation_summary(cells)}


def group_means(table: pd.DataFrame) -> pd.DataFrame:
    """Mean and sd of every reading per method (and C for the fits), over chains x copies."""
    keys = table.assign(C=table.get("C", np.nan)).fillna({"C": 0})
    return keys.groupby(["method", "C"])[list(READINGS)].agg(["mean", "std"])


def print_report(results: dict, effects: dict, seeds) -> None:
    pd.set_option("display.width", 200)
    for design, result in results.items():
        print(f"\n== {design}: held-out vs observed entries")
        print(pd.DataFrame(result["entries"]).T.round(3).to_string())
        print(f"\n== {design}: readings per method, mean over chains x copies (sd)")
        means = group_means(result["table"])
        shown = pd.DataFrame({r: [f"{m:.3g} ({s:.2g})" for m, s in means[r].to_numpy()]
                              for r in READINGS}, index=means.index)
        print(shown.to_string())
        print(f"\n== {design}: cells (C x level) decided beyond the spread, per reading")
        for reading, entry in result["summary"].items():
            naive, nonprivate = entry["vs_naive"], entry["vs_nonprivate"]
            print(f"{reading:12s} of {entry['cells']}: vs naive better {naive['ours_better']} "
                  f"worse {naive['ours_worse']}; vs non-private better "
                  f"{nonprivate['ours_better']} worse {nonprivate['ours_worse']}")
    for design, effect in effects.items():
        print(f"\n== chain index vs copy in log held-out MAE ({design})")
        print(effect.round(3).to_string(index=False) if len(effect) else "(no multi-chain fits)")
    if seeds is not None:
        print("\n== the quick profile's fit seeds:", seeds)


def jsonable(value):
    """NaN and infinities as None, numpy scalars as Python's, recursively."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (np.integer, np.bool_)):
        return value.item()
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None
    return value


def _shown(path: Path) -> str:
    """A path as the record keeps it: relative to the repository when inside it, so that the
    record names no machine's folders."""
    path = Path(path).resolve()
    try:
        return path.relative_to(ROOT).as_posix() or "."
    except ValueError:
        return str(path)


def main(argv=()) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the work tree whose data/ and results/fits/ are read")
    parser.add_argument("--designs", nargs="*", default=["network", "network_rows_cols"])
    parser.add_argument("--paper-tables", type=Path, nargs="*",
                        default=[ROOT / "results/paper/eval/enron_network.csv",
                                 ROOT / "results/paper/eval/enron_network_rows_cols.csv"])
    parser.add_argument("--sweeps", type=int, nargs=3, default=[500, 250, 10],
                        metavar=("N_ITER", "BURN_IN", "THIN"),
                        help="the private rank-one fit's run (the quick profile's network run)")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(list(argv))
    if args.quick:
        inputs, tables, seeds, settings = quick_inputs()
    else:
        settings = dict(zip(("n_iter", "burn_in", "thin"), args.sweeps))
        inputs = {d: design_inputs(args.root, d) for d in args.designs}
        tables = {p.stem: pd.read_csv(p) for p in args.paper_tables}
        seeds = seed_record(args.root / "results/fits/network")
    effects = {name: chain_effect(table) for name, table in tables.items()}
    results = {d: analyse_design(*inputs[d], settings) for d in inputs}
    print_report(results, effects, seeds)
    record = {"designs": {d: {"entries": r["entries"], "summary": r["summary"],
                              "separation": r["separation"],
                              "scores": r["table"].to_dict(orient="records")}
                          for d, r in results.items()},
              "chain_effect": {n: e.to_dict(orient="records") for n, e in effects.items()},
              "seeds": seeds}
    if not args.quick:
        record["inputs"] = {"root": _shown(args.root), "designs": args.designs,
                            "paper_tables": [_shown(p) for p in args.paper_tables],
                            "rank1_private_sweeps": settings}
        print("wrote", write_results("network_heldout", jsonable(record)))
    return record


if __name__ == "__main__":
    main(sys.argv[1:])
