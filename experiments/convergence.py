"""Do the quick profile's sweeps suffice? ``python -m experiments.convergence [--chains N] [--quick]``.

Reruns the pipeline's chains (same data, model, sweeps and burn-in as ``params.yaml``; seed 1
is the pipeline's own chain) with more seeds and a finer thinning, so each chain saves at
least ``MIN_DRAWS`` samples, and reports ArviZ's split R-hat and bulk / tail effective sample
sizes of the label-invariant quantities of :mod:`lpp.diagnostics` (log joint, total rate,
rates of the four largest entries), for the non-private fit and ``collapsed`` at the highest
noise (epsilon/N = 1, replicate 0) of both case studies. Writes
``experiments/results/convergence.json`` and a trace figure per case beside it (atomically);
``--quick`` runs two short chains on a small simulated corpus and writes nothing.

R-hat below 1.01 and a bulk ESS above 100 per quantity are the usual bars (Vehtari et al.
2021); with fewer chains and draws than that standard assumes, read the values as a
screening, not a certificate.
"""
from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

import numpy as np
import yaml

from experiments import RESULTS, machine, write_results
from lpp import diagnostics
from lpp.formats.counts import load_counts
from lpp.formats.files import atomic_write_bytes
from lpp.formats.privatized import load_privatized
from lpp.inference import RunOptions, TopicModel, fit_nonprivate, fit_private, make_model
from lpp.simulate import make_topics

ROOT = Path(__file__).resolve().parents[1]
MIN_DRAWS = 30


def cases(params: dict, data_root: Path) -> list[dict]:
    out = []
    for study, model, size in (("topics", "topics", "K"), ("network", "communities", "C")):
        settings = params[study]
        k = settings[size][0] if isinstance(settings[size], list) else settings[size]
        for method, source in (("nonprivate", data_root / "prepared" / study),
                               ("collapsed", data_root / "private" / study / "eps1.0_rep0")):
            out.append({"name": f"{study}_{method}", "model": model, "n_components": int(k),
                        "method": method, "source": source, "n_iter": settings["n_iter"],
                        "burn_in": settings["burn_in"]})
    return out


def load_case(case: dict):
    if case["method"] == "nonprivate":
        counts = load_counts(case["source"])
        return counts.counts.toarray(), None, counts.arrays.get("heldout")

    data = load_privatized(case["source"])
    return data.y_tilde, data.alpha, data.heldout


def run_case(case: dict, n_chains: int) -> tuple[dict, object]:
    y, alpha, mask = load_case(case)
    kept = case["n_iter"] - case["burn_in"]
    thin = max(1, kept // MIN_DRAWS)
    fits, seconds = [], []
    for seed in range(1, n_chains + 1):
        start = time.perf_counter()
        model = make_model(case["model"], n_components=case["n_components"])
        run = RunOptions(n_iter=case["n_iter"], burn_in=case["burn_in"], thin=thin,
                         progress=False)
        data = np.ma.masked_array(y, mask)
        if case["method"] == "nonprivate":
            fits.append(fit_nonprivate(data, model, run=run, rng=seed))
        else:
            fits.append(fit_private(data, alpha, model, method=case["method"], run=run,
                                    rng=seed))
        seconds.append(time.perf_counter() - start)
    idata = diagnostics.to_inference_data(fits)
    summary = diagnostics.convergence_summary(idata)
    record = {"settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in case.items()},
              "thin": thin, "chains": n_chains, "draws_per_chain": fits[0].n_saved,
              "seconds_per_chain": seconds,
              "diagnostics": {q: {c: float(summary.loc[q, c]) for c in summary.columns}
                              for q in summary.index}}
    title = (f"{case['name']}: {n_chains} chains, {case['n_iter']} sweeps "
             f"(burn-in {case['burn_in']}, thin {thin}), quick profile")
    return record, diagnostics.plot_traces(idata, title=title)


def print_case(name: str, record: dict) -> None:
    print(f"\n{name}: {record['chains']} chains x {record['draws_per_chain']} draws "
          f"(sweeps {record['settings']['n_iter']}, burn-in {record['settings']['burn_in']}, "
          f"thin {record['thin']})")
    print(f"{'quantity':<16}{'r_hat':>8}{'ess_bulk':>10}{'ess_tail':>10}")
    for quantity, d in record["diagnostics"].items():
        print(f"{quantity:<16}{d['r_hat']:>8.3f}{d['ess_bulk']:>10.1f}{d['ess_tail']:>10.1f}")


def quick_case():
    corpus = make_topics(rng=3, n_docs=30, n_topics=2, n_words=10)
    return {"name": "simulated_nonprivate", "model": "topics", "n_components": 2,
            "method": "nonprivate", "n_iter": 24, "burn_in": 8}, corpus.y


def main(argv=()) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chains", type=int, default=3)
    parser.add_argument("--data", type=Path, default=ROOT / "data",
                        help="folder holding prepared/ and private/")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(list(argv))
    # the figures are files: Agg chosen before pyplot loads a backend of its own
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    results = {}
    if args.quick:
        case, y = quick_case()
        fits = [fit_nonprivate(y, TopicModel(2),
                               run=RunOptions(n_iter=case["n_iter"], burn_in=case["burn_in"],
                                              thin=2, progress=False),
                               rng=seed)
                for seed in (1, 2)]
        summary = diagnostics.convergence_summary(fits)
        record = {"settings": case, "thin": 2, "chains": 2, "draws_per_chain": fits[0].n_saved,
                  "diagnostics": {q: {c: float(summary.loc[q, c]) for c in summary.columns}
                                  for q in summary.index}}
        print_case(case["name"], record)
        plt.close(diagnostics.plot_traces(fits))
        return {case["name"]: record}
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    for case in cases(params, args.data):
        record, figure = run_case(case, args.chains)
        print_case(case["name"], record)
        results[case["name"]] = record
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=90)
        plt.close(figure)
        path = RESULTS / f"convergence_{case['name']}.png"
        atomic_write_bytes(path, buffer.getvalue())
        print("wrote", path)
    results["machine"] = machine()
    print("wrote", write_results("convergence", results))
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
