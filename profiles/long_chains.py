"""Convergence of one paper-scale topic fit, with chains of a chosen length.

    python profiles/long_chains.py                       # collapsed, epsilon/N = 1, 2 x 1,000 sweeps
    python profiles/long_chains.py --n-iter 3000 --burn-in 1500   # longer chains
    python profiles/long_chains.py --n-iter 3000 --burn-in 1500 --continue-chains  # the fit's, run on
    python profiles/long_chains.py --summary-only        # only read the fit again
    python profiles/long_chains.py --all-fits            # read every topic fit of the work tree

The whole cut paper profile (``profiles/paper_cuts.yaml``) takes most of a day. This script
runs one of its topic fits alone, by default ours (``collapsed``) at
epsilon/N = 1 on the first privatized copy, with ``--chains`` chains of ``--n-iter`` sweeps, in
the paper profile's work tree (:mod:`profiles.run`; the stage and everything it depends on,
which DVC skips when up to date). The infer stage checkpoints its chains, so a run stopped
part way continues where it stopped when started again (also with a larger ``--n-iter``);
with ``--continue-chains`` a finished fit's chains run on to ``--n-iter`` (and a burn-in at
least the fit's) instead of starting over (``profiles/run.py --continue-chains``). Then ArviZ's
split R-hat and bulk / tail ESS of the label-invariant quantities (:mod:`lpp.diagnostics`),
whether the chains drift, agree or sit in different modes
(:func:`lpp.diagnostics.chain_agreement`, with each chain's mean and Geweke z) and each chain's
total rate and log joint over its saved sweeps go to
``experiments/results/long_chains/long_<fit>.json`` and ``.csv``, and the trace figure beside
them, ``enron_trace_long_<fit>.png`` (``--results`` and ``--figures`` choose other folders).
These are the records of an investigation, kept with the others in ``experiments/results/``:
the paper profile's folders (``results/paper/``, ``figures/paper/``) hold only what its
pipeline makes, each file an output of ``results/paper/dvc.lock`` (:mod:`study.provenance`).

With ``--all-fits`` nothing runs: every topic fit in the work tree (non-private, ours and naive
at each level) is read as with ``--summary-only``, and one row per fit (chains, sweeps, worst
R-hat, the log joint's and the total rate's R-hat and verdict, seconds per sweep) goes to
``experiments/results/long_chains/topic_fits.csv`` (:func:`summarize_all`).

The work tree's ``params.yaml`` is left with these topic settings, so a later
``python profiles/run.py`` writes the profile's own settings back (and reruns the topic fits).
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

import numpy as np
import yaml

from lpp.diagnostics import (chain_agreement, convergence_summary, plot_traces,
                             to_inference_data, worst_rhat)
from lpp.formats.fits import load_chains

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import ROOT, _work_tree, merged_settings, run_stages, set_aside_fits  # noqa: E402

#: where the records and trace figures go by default: with the investigations' records, since
#: no stage of the pipeline makes them
RECORDS = ROOT / "experiments" / "results" / "long_chains"


def fit_name(method: str, level: float, rep: int) -> str:
    return f"{method}_eps{float(level)}_rep{rep}"


def summarize(fit_dir: Path, name: str, results: Path, figures: Path) -> dict:
    """Write the diagnostics of the saved chains in ``fit_dir``; return the record."""
    # the trace figures are files: Agg chosen before plot_traces loads pyplot
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")

    chains = load_chains(fit_dir)
    data = to_inference_data(chains, n_entries=4)
    summary = convergence_summary(data)
    agreement = chain_agreement(data)
    summary = summary.join(agreement[["verdict", "separation"]])
    total = data.posterior["total_rate"].values  # chains x saved sweeps
    log_joint = data.posterior["log_joint"].values
    record = {
        "fit": name, "n_chains": len(chains), "seeds": [c.seed for c in chains],
        "saved_iterations": [int(t) for t in chains[0].saved_iterations],
        "seconds_per_sweep": float(np.median(np.concatenate([c.iter_seconds[1:]
                                                             for c in chains]))),
        "rhat_max": worst_rhat(summary),
        "quantities": {q: {k: (v if isinstance(v, str) else float(v)) for k, v in row.items()}
                       for q, row in summary.iterrows()},
        "agreement": {q: {k: row[k] for k in ("verdict", "chain_means", "within_sd",
                                               "separation", "drift_z")}
                      for q, row in agreement.iterrows()},
        "total_rate": {"first_saved": total[:, 0].tolist(), "last_saved": total[:, -1].tolist(),
                       "mean": total.mean(axis=1).tolist()},
        "log_joint": {"first_saved": log_joint[:, 0].tolist(),
                      "last_saved": log_joint[:, -1].tolist(),
                      "mean": log_joint.mean(axis=1).tolist()},
    }
    results.mkdir(parents=True, exist_ok=True)
    (results / f"long_{name}.json").write_text(json.dumps(record, indent=1) + "\n")
    summary.to_csv(results / f"long_{name}.csv")
    figures.mkdir(parents=True, exist_ok=True)
    fig = plot_traces(data, title=f"Enron, {name}: {len(chains)} chains")
    fig.savefig(figures / f"enron_trace_long_{name}.png", dpi=110)
    return record


def summarize_all(fits_dir: Path, results: Path, figures: Path) -> list[dict]:
    """:func:`summarize` for every fit folder (one holding ``fit.json``) under ``fits_dir``, in
    name order, and one row per fit in ``topic_fits.csv`` in ``results``; the rows."""
    rows = []
    for fit_dir in sorted(p.parent for p in fits_dir.glob("*/fit.json")):
        record = summarize(fit_dir, fit_dir.name, results, figures)
        quantities = record["quantities"]
        rows.append({"fit": fit_dir.name, "chains": record["n_chains"],
                     "last_sweep": record["saved_iterations"][-1],
                     "saved_per_chain": len(record["saved_iterations"]),
                     "rhat_max": round(record["rhat_max"], 3),
                     **{f"{q}_{key}": (round(quantities[q][key], 3) if key != "verdict"
                                       else quantities[q][key])
                        for q in ("log_joint", "total_rate")
                        for key in ("r_hat", "ess_bulk", "verdict")},
                     "seconds_per_sweep": round(record["seconds_per_sweep"], 3)})
    if not rows:
        raise FileNotFoundError(f"no fit (a folder with fit.json) under {fits_dir}")
    results.mkdir(parents=True, exist_ok=True)
    with open(results / "topic_fits.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--method", default="collapsed")
    parser.add_argument("--level", type=float, default=1.0)
    parser.add_argument("--n-iter", type=int, default=1000)
    parser.add_argument("--burn-in", type=int, default=500)
    parser.add_argument("--thin", type=int, default=10)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--work-tree", type=Path, default=ROOT.parent / "lpp-paper")
    parser.add_argument("--results", type=Path, default=RECORDS,
                        help="folder of the records (long_<fit>.json, .csv, topic_fits.csv)")
    parser.add_argument("--figures", type=Path, default=RECORDS,
                        help="folder of the trace figures (enron_trace_long_<fit>.png)")
    parser.add_argument("--summary-only", action="store_true")
    parser.add_argument("--all-fits", action="store_true",
                        help="only read every topic fit of the work tree (no run)")
    parser.add_argument("--continue-chains", action="store_true",
                        help="run the finished fit's chains on instead of starting them over")
    args = parser.parse_args(argv)

    work = args.work_tree.resolve()
    if args.all_fits:
        for row in summarize_all(work / "results" / "fits" / "topics", args.results,
                                 args.figures):
            print(json.dumps(row))
        return 0
    name = fit_name(args.method, args.level, 0)
    if not args.summary_only:
        settings = merged_settings(ROOT / "profiles" / "paper.yaml",
                                   ROOT / "profiles" / "paper_cuts.yaml")
        if args.level not in settings["privacy"]["levels"]:
            parser.error(f"--level {args.level} is not one of privacy.levels "
                         f"{settings['privacy']['levels']}")
        settings["topics"].update(n_iter=args.n_iter, burn_in=args.burn_in, thin=args.thin,
                                  n_chains=args.chains)
        _work_tree(work)
        (work / "params.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
        stage = f"infer_private_topics@{args.method}-{args.level}-0"
        if args.continue_chains:
            set_aside_fits(work, [stage])
        run_stages(work, [stage])
    record = summarize(work / "results" / "fits" / "topics" / name, name, args.results,
                       args.figures)
    print(json.dumps({k: record[k] for k in ("fit", "n_chains", "seconds_per_sweep",
                                             "rhat_max", "total_rate")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
