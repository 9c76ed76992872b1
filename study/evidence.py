"""The evidence behind the diagnoses of :mod:`study.diagnoses`, printed from the committed
tables: each diagnosis names one of these commands.

    python -m study.evidence heldout results/paper        # held-out MAE per chain index and copy
    python -m study.evidence chains results/paper         # does a chain's index explain the spread
    python -m study.evidence topics results/paper         # NPMI, coherence, chains, worst R-hat
    python -m study.evidence seeds results/paper          # runs behind the synthetic and VI cells
    python -m study.evidence cavi-cap results/paper       # the capped CAVI runs without their cap
    python -m study.evidence topics-regime results/paper  # Fig. 3's noise, uniform topics' score
    python -m study.evidence recovery-map results         # Fig. 3's regime on the recovery map
    python -m study.evidence central results/paper        # Laplace against each OPS truncation

The results folder defaults to ``results`` (the quick profile).
"""
from __future__ import annotations

import argparse
import json
from itertools import permutations
from math import factorial
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

__all__ = ["cavi_cap", "central", "chain_index_cells", "chain_index_share", "chains", "heldout",
           "main", "recovery_map", "seeds", "topics", "topics_regime"]


def _params(results: Path) -> dict:
    for path in (results / "params.yaml", results.parent / "params.yaml"):
        if path.is_file():
            return yaml.safe_load(path.read_text()) or {}
    return {}


def heldout(results: Path) -> str:
    """Held-out MAE of each chain index, over the copies, per method, C and ε/N; and the
    baseline that predicts zero for every held-out entry."""
    lines = []
    for name in ("network", "network_rows_cols"):
        tables = sorted((results / "eval").glob(f"*_{name}.csv"))
        for path in tables:
            t = pd.read_csv(path)
            zeros = t.loc[t.method == "zeros", "heldout_mae"]
            rows = t[(t.heldout_used == True) & t.method.isin(["collapsed", "naive"])]  # noqa: E712
            rows = rows.assign(chain=rows["chain"].fillna(0).astype(int))
            by_chain = rows.pivot_table(index=["C", "method", "epsilon_over_n"],
                                        columns="chain", values="heldout_mae",
                                        aggfunc=["min", "max"])
            lines += [f"{path}: held-out MAE of chain i over the copies (min, max); "
                      f"predicting zero: {zeros.iloc[0]:.3g}" if len(zeros) else f"{path}:",
                      by_chain.round(1).to_string(), ""]
    return "\n".join(lines)


#: the most relabellings of the chains within copies that :func:`chain_index_share`
#: enumerates (their sums held at once: 24 MB at 3 chains)
EXACT_RELABELLINGS = 10**6
#: how many it draws beyond that
SAMPLED_RELABELLINGS = 20_000


def chain_index_share(values: np.ndarray) -> tuple[float, float]:
    """``(share, p)`` of a copies x chains table: the share of its within-copy variation that
    the chain's index explains, and the exact permutation p-value of that share.

    Each copy's values are centred on their mean; the share is the sum of squares of the
    chain-index means of the centred values (times the copies) over their total sum of
    squares. Under chains independent across copies, the labels within a copy are
    exchangeable: ``p`` is the fraction of all ``(chains!) ** copies`` relabellings, within
    each copy, whose share is at least the observed one (the observed labelling among them).
    Beyond :data:`EXACT_RELABELLINGS` of them (5 chains on 3 copies already make 1.7 million)
    ``p`` is estimated instead from :data:`SAMPLED_RELABELLINGS` uniform ones drawn on a fixed
    seed, as ``(1 + at least as large) / (1 + drawn)``. When chains share their seeds across
    copies and a chain's mode follows its seed, one index stands out in every copy and the
    share nears one.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2 or values.shape[1] < 2:
        return float("nan"), float("nan")
    copies, n_chains = values.shape
    centred = values - values.mean(axis=1, keepdims=True)
    total = float((centred ** 2).sum())
    if not total > 0:
        return float("nan"), float("nan")
    observed = float((centred.sum(axis=0) ** 2).sum() / (copies * total))
    if factorial(n_chains) ** copies > EXACT_RELABELLINGS:
        labels = np.tile(np.arange(n_chains), (SAMPLED_RELABELLINGS, copies, 1))
        labels = np.random.default_rng(0).permuted(labels, axis=2)
        sums = np.take_along_axis(centred[None], labels, axis=2).sum(axis=1)
        shares = (sums ** 2).sum(axis=1) / (copies * total)
        return observed, float((1 + np.sum(shares >= observed - 1e-12))
                               / (1 + SAMPLED_RELABELLINGS))
    # every relabelling of one copy's chains, then the chain-index sums over the copies of
    # every combination of relabellings, built one copy at a time: (chains!) ** copies rows
    orders = np.array(list(permutations(range(n_chains))))
    sums = centred[0][orders]
    for row in centred[1:]:
        sums = (sums[:, None, :] + row[orders][None, :, :]).reshape(-1, n_chains)
    shares = (sums ** 2).sum(axis=1) / (copies * total)
    return observed, float(np.mean(shares >= observed - 1e-12))


def chain_index_cells(table: pd.DataFrame) -> pd.DataFrame:
    """Per method, C and ε/N of a network score table's private fits on a held-out design:
    the copies, and the share of the within-copy spread of log held-out MAE that the chain's
    index explains with its exact permutation p (:func:`chain_index_share`); the cells ranked
    by the share, largest first."""
    rows = table[(table.heldout_used == True)  # noqa: E712
                 & table.method.isin(["collapsed", "naive"])]
    rows = rows.assign(chain=rows["chain"].fillna(0).astype(int),
                       copy=rows["fit"].str.extract(r"rep(\d+)")[0].astype(int),
                       log_mae=np.log(rows["heldout_mae"]))
    cells = []
    for (method, c, level), cell in rows.groupby(["method", "C", "epsilon_over_n"]):
        values = cell.pivot_table(index="copy", columns="chain", values="log_mae")
        share, p = chain_index_share(values.dropna().to_numpy())
        cells.append({"method": method, "C": c, "epsilon_over_n": level,
                      "copies": len(values), "share": share, "p": p})
    return pd.DataFrame(cells).sort_values("share", ascending=False)


def chains(results: Path) -> str:
    """Per held-out design, method, C and ε/N: the share of the spread of log held-out MAE
    over copies x chains that the chain's index explains, within copies, and its exact
    permutation p-value (:func:`chain_index_share`); the cells ranked by it."""
    lines = []
    for name in ("network", "network_rows_cols"):
        for path in sorted((results / "eval").glob(f"*_{name}.csv")):
            ranked = chain_index_cells(pd.read_csv(path))
            lines += [f"{path}: share of the spread of log held-out MAE that the chain's index "
                      f"explains (within copies), exact permutation p; "
                      f"{int((ranked.p <= 0.05).sum())} of {len(ranked)} cells at p <= 0.05",
                      ranked.round(3).to_string(index=False), ""]
    return "\n".join(lines)


def topics(results: Path) -> str:
    """NPMI and coherence per method and ε/N: mean, standard deviation over every chain and
    copy, the chains behind them and the worst R-hat."""
    lines = []
    for path in sorted((results / "eval").glob("*_topics.csv")):
        t = pd.read_csv(path)
        t = t[t.method.isin(["collapsed", "naive", "nonprivate"])]
        summary = t.groupby(["method", "epsilon_over_n"], dropna=False).agg(
            npmi=("npmi", "mean"), npmi_sd=("npmi", "std"), npmi_zero=("npmi_zero", "mean"),
            coherence=("coherence", "mean"), coherence_sd=("coherence", "std"),
            chains=("fit", "size"), worst_rhat=("rhat", "max"))
        lines += [f"{path}:", summary.round(3).to_string(), ""]
    return "\n".join(lines)


def seeds(results: Path) -> str:
    """The seeds and chains behind the synthetic figures' and the VI benchmark's cells."""
    params = _params(results)
    lines = []
    for section in ("synthetic_communities", "synthetic_topics", "vi_benchmark"):
        settings = params.get(section) or {}
        kept = {k: v for k, v in settings.items() if "seed" in k or "chain" in k}
        lines.append(f"{section}: {kept}")
    bench = results / "vi" / "benchmark.csv"
    if bench.is_file():
        t = pd.read_csv(bench)
        lines.append(f"{bench}: runs per method {t.groupby('method').size().to_dict()}; "
                     f"MAE {t.groupby('method')['mae'].mean().round(3).to_dict()}")
    return "\n".join(lines)


def cavi_cap(results: Path, *, cap_factor: int = 10) -> str:
    """The VI benchmark's runs of the paper's CAVI that stopped at the authors' cap of
    iterations before their stopping rule, fitted again on the same data and seed with the
    cap ``cap_factor`` times higher: the iterations the rule needs. The one summary that fits
    rather than reads (about 75 s a run at the paper's 1,000 x 1,000, 2 cores); the runs
    that stopped by the rule are listed as they are."""
    from lpp.inference import TopicModel
    from lpp.vi.driver import VIOptions, fit_variational
    from study import vi_benchmark as vb
    from study.score_tables import converged

    settings = _params(results).get("vi_benchmark") or {}
    table = pd.read_csv(results / "vi" / "benchmark.csv")
    runs = table[table.method == "paper CAVI"]
    done = converged(runs)
    lines = [f"{results / 'vi' / 'benchmark.csv'}: the paper's CAVI, "
             f"{int(done.sum())} of {len(runs)} runs stopped by the authors' rule in "
             f"{', '.join(str(int(i)) for i in runs.iterations[done])} iterations"]
    n, k = int(settings["n"]), int(settings["K"])
    method = next(method for label, _, _, method in vb.ROWS if label == "paper CAVI")
    for _, row in runs[~done].iterrows():
        seed = int(row["run_seed"])
        data = vb.make_benchmark_data(n, k, epsilon_over_n=float(settings["epsilon_over_n"]),
                                      shape=float(settings["factor_shape"]),
                                      rate=float(settings["factor_rate"]),
                                      rng=vb.data_seed(seed))
        fit_seed = vb.method_seed(seed, "paper CAVI")
        if fit_seed != int(row["seed"]):
            raise ValueError(f"seed {seed}: the CAVI's seed {fit_seed} is not the table's "
                             f"{int(row['seed'])} (other settings than the run's?)")
        cap = int(row["iterations"]) * cap_factor
        res = fit_variational(data.y_tilde, data.alpha, TopicModel(k), method=method,
                              rng=fit_seed, run=VIOptions(max_iter=cap))
        state = "stopped by the rule" if res.converged else "still not converged"
        lines.append(f"seed {seed}: stopped at the cap of {int(row['iterations'])} (MAE "
                     f"{row['mae']:.4f}); with a cap of {cap}: {res.iterations} iterations, "
                     f"{state} (MAE {np.mean(np.abs(res.mu_hat - data.mu)):.4f})")
    return "\n".join(lines)


def topics_regime(results: Path) -> str:
    """Fig. 3's regime: the share of documents whose noise level exceeds 0.9 at each α0, the
    distance of uniform topics to the true ones, and each seed's distances."""
    from scipy.stats import beta

    from lpp.simulate import make_topics

    params = _params(results).get("synthetic_topics") or {}
    c = float(params.get("concentration", 10.0))
    lines = []
    for alpha0 in params.get("alpha0_levels", [0.2, 0.5, 0.8]):
        share = beta(c * alpha0, c * (1 - alpha0)).sf(0.9)
        lines.append(f"α0={alpha0}: {share:.0%} of documents have α_d > 0.9 (2Geo sd > 13)")
    for seed in params.get("seeds", []):
        corpus = make_topics(rng=seed)
        phi = corpus.phi / corpus.phi.sum(axis=1, keepdims=True)
        uniform = np.sqrt(0.5 * ((np.sqrt(phi) - np.sqrt(1 / phi.shape[1])) ** 2).sum(1)).mean()
        lines.append(f"seed {seed}: {corpus.y.sum(1).mean():.1f} tokens per document; uniform "
                     f"topics' Hellinger distance {uniform:.3f}")
    scores = results / "synthetic" / "topics.json"
    if scores.is_file():
        for row in json.loads(scores.read_text()).get("per_seed", []):
            lines.append(f"seed {row['seed']}, α0={row['alpha0']}: ours {row['collapsed']:.3f}, "
                         f"naive {row['naive']:.3f}")
    return "\n".join(lines)


def recovery_map(results: Path) -> str:
    """Fig. 3's regime on the recovery map (:data:`study.claims.FIG3_TOKENS`, the low and high
    noise levels): each method's support score of the aligned posterior mean per seed and
    chain, the runs at or above the threshold, and the map's own table of every cell."""
    from study.claims import FIG3_HIGH_NOISE, FIG3_LOW_NOISE, FIG3_TOKENS

    path = results / "synthetic" / "recovery_map.json"
    if not path.is_file():
        return (f"{path}: absent (the recovery_map stage has not been run at this scale: "
                "python profiles/run.py --stages recovery_map)")
    record = json.loads(path.read_text())
    threshold = record["limits"]["threshold"]
    runs = pd.DataFrame(record["runs"])
    lines = [f"{path}: threshold {threshold:.3f} (uniform topics {record['limits']['uniform']:.3f},"
             f" the truth {record['limits']['truth']:.3f})"]
    for alpha0 in (FIG3_LOW_NOISE, FIG3_HIGH_NOISE):
        cell = runs[np.isclose(runs.doc_length, FIG3_TOKENS) & np.isclose(runs.alpha0, alpha0)]
        table = cell.pivot_table(index=["seed", "chain"], columns="method",
                                 values="mean_support")
        above = (table >= threshold).sum().to_dict()
        lines += [f"{FIG3_TOKENS:g} tokens/doc, α0 = {alpha0:g}: support score per seed and "
                  f"chain (runs at or above the threshold: {above})", table.round(3).to_string(),
                  ""]
    table = results / "synthetic" / "recovery_map.md"
    if table.is_file():
        lines.append(table.read_text().split("\n## ")[0].strip())
    return "\n".join(lines)


def central(results: Path) -> str:
    """Laplace against each OPS truncation on the HMM stand-ins, per ε: mean and standard
    deviation over the splits of the per-record held-out log-likelihood difference."""
    t = pd.read_csv(results / "central" / "heldout_loglik.csv")
    lines = []
    for dataset, rows in t[t.model == "hmm"].groupby("dataset"):
        wide = rows.pivot_table(index=["split", "epsilon"], columns="route",
                                values="loglik_per_record")
        ops = [c for c in wide.columns if str(c).startswith("ops")]
        diff = wide[ops].sub(wide["laplace"], axis=0).groupby("epsilon").agg(["mean", "std"])
        lines += [f"{dataset}: OPS − Laplace per record", diff.round(4).to_string(), ""]
    return "\n".join(lines)


_EVIDENCE = {"heldout": heldout, "chains": chains, "cavi-cap": cavi_cap, "topics": topics,
             "seeds": seeds, "topics-regime": topics_regime, "recovery-map": recovery_map,
             "central": central}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m study.evidence",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("evidence", choices=sorted(_EVIDENCE))
    parser.add_argument("results", nargs="?", default="results", type=Path,
                        help="the results folder (results, or results/paper)")
    args = parser.parse_args(argv)
    print(_EVIDENCE[args.evidence](args.results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
