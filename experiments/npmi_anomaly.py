"""Why does the private topics' NPMI beat the non-private one? ``python -m experiments.npmi_anomaly``.

Scores the saved topic fits of the pipeline (``results/fits/topics/*``) against the true
counts (``data/prepared/topics``) under each suspect, one column each:

- ``-1`` / ``0``: the score of a pair of top words that never co-occur (ours: ``-1``, NPMI's
  limit; Lau et al.'s toolkit: ``0``), against the fitted documents as reference (the paper's
  choice, D = 1,000 in the quick profile);
- ``10k`` / ``all``: the same with a larger reference corpus: the fitted documents plus other
  eligible Enron emails (at least ``min_tokens`` tokens) on the same vocabulary, to the paper's
  D = 10,000 and to every eligible email (needs ``data/raw``; skipped when absent);
- ``mean-phi``: the top words of the posterior mean of ``phi`` instead of the paper's average
  of per-sample scores;
- ``--nonprivate-seeds 2 3``: the non-private chain rerun with other seeds at the pipeline's
  settings (one row each, with the chain's mean log joint), to see its seed-to-seed spread;
- ``never``: the share of top-word pairs that never co-occur in the fitted documents, and
  ``log10 DF``: the mean log10 document frequency of the top words.

Every value is averaged over the saved samples (the paper's per-sample averaging), then over
the fits of a group (the privatized replicates); ``±`` is the sd over replicates. The last
lines correlate, over every sampled topic, its NPMI with its words' document frequency.

``--quick`` scores made-up topics on a small simulated corpus (no data needed, nothing
written); the full run writes ``experiments/results/npmi_anomaly.json`` (atomically).
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import yaml

from data_prep.corpus import load_documents
from data_prep.tokens import Tokenizer
from experiments import write_results
from lpp.formats.counts import load_counts
from lpp.formats.fits import load_fit
from lpp.formats.privatized import canonical_counts
from lpp.inference import fit_nonprivate
from lpp.metrics import ReferenceCorpus, mean_over_topics, npmi, top_words
from lpp.inference import RunOptions, TopicModel

ROOT = Path(__file__).resolve().parents[1]
N_TOP = 10
PAPER_DOCS = 10_000
SEED = 2019


def group_of(name: str) -> str:
    """``collapsed_eps1.0_rep2`` -> ``collapsed eps/N=1.0``; ``nonprivate`` stays."""
    match = re.fullmatch(r"(\w+?)_eps([\d.]+)_rep\d+", name)
    return f"{match[1]} eps/N={match[2]}" if match else name


def sample_scores(phi_samples, references: dict) -> dict:
    """Per-sample scores of one fit, averaged over its samples (the paper's order)."""
    fitted = references["fitted"]
    per_sample = {}
    topic_npmi, topic_df = [], []
    for phi in phi_samples:
        words = top_words(phi, N_TOP)
        values = {}
        for label, corpus in references.items():
            minus_one = npmi(words, corpus)
            values[f"{label} -1"] = mean_over_topics(minus_one)
            values[f"{label} 0"] = mean_over_topics(npmi(words, corpus, no_cooccurrence=0.0))
            if label == "fitted":
                topic_npmi.append(minus_one)
        i, j = np.triu_indices(N_TOP, k=1)
        joint = fitted.pair_frequencies(words[:, i].ravel(), words[:, j].ravel())
        values["never"] = float(np.mean(joint == 0))
        log_df = np.log10(fitted.document_frequency[words])
        values["log10 DF"] = float(log_df.mean())
        topic_df.append(log_df.mean(axis=1))
        for key, value in values.items():
            per_sample.setdefault(key, []).append(value)
    scores = {key: float(np.mean(v)) for key, v in per_sample.items()}
    mean_phi = np.mean(phi_samples, axis=0)
    scores["mean-phi -1"] = mean_over_topics(npmi(top_words(mean_phi, N_TOP), fitted))
    return scores, np.concatenate(topic_npmi), np.concatenate(topic_df)


def analyse(fits: dict, references: dict) -> dict:
    """``fits``: name -> S x K x V phi samples. Returns the table and the pooled correlations."""
    groups, pooled = {}, {}
    for name in sorted(fits):
        scores, t_npmi, t_df = sample_scores(fits[name], references)
        groups.setdefault(group_of(name), []).append(scores)
        kind = "nonprivate" if name.startswith("nonprivate") else name.split("_")[0]
        pooled.setdefault(kind, ([], []))
        pooled[kind][0].append(t_npmi)
        pooled[kind][1].append(t_df)
    table = {}
    for group, rows in groups.items():
        table[group] = {key: [float(np.mean([r[key] for r in rows])),
                              float(np.std([r[key] for r in rows]))] for key in rows[0]}
        table[group]["n_fits"] = len(rows)
    correlation = {}
    for kind, (t_npmi, t_df) in pooled.items():
        x, y = np.concatenate(t_df), np.concatenate(t_npmi)
        correlation[kind] = {"pearson_r": float(np.corrcoef(x, y)[0, 1]), "topics": int(x.size)}
    return {"table": table, "npmi_vs_log10_df": correlation,
            "reference_documents": {k: int(v.n_documents) for k, v in references.items()}}


def print_report(result: dict) -> None:
    table = result["table"]
    refs = result["reference_documents"]
    columns = [(f"{label} {c}", f"D={refs[label]} {c}") for label in refs for c in ("-1", "0")]
    columns += [("mean-phi -1", "mean-phi -1"), ("never", "never"), ("log10 DF", "log10 DF")]
    print("NPMI of the top-10 words, per-sample averaged; mean ± sd over replicates")
    print(f"{'group':<24}" + "".join(f"{title:>18}" for _, title in columns))
    order = sorted(table, key=lambda g: (g != "nonprivate", g))
    for group in order:
        cells = "".join(f"{table[group][key][0]:>11.4f} ±{table[group][key][1]:.3f}"
                        for key, _ in columns)
        print(f"{group + ' (' + str(table[group]['n_fits']) + ')':<24}{cells}")
    for kind, c in result["npmi_vs_log10_df"].items():
        print(f"{kind}: corr(topic NPMI [-1, fitted docs], mean log10 DF of its words) = "
              f"{c['pearson_r']:+.3f} over {c['topics']} sampled topics")


def load_fits(folder: Path) -> dict:
    fits = {}
    for path in sorted(p for p in folder.iterdir() if (p / "fit.json").exists()):
        fits[path.name] = load_fit(path).samples["phi"]
    if not fits:
        raise FileNotFoundError(f"no fit under {folder}")
    return fits


def refit_nonprivate(counts, seeds, fits: dict, log_joints: dict) -> None:
    """Rerun the non-private chain with other seeds at the pipeline's settings (params.yaml),
    adding ``"nonprivate seed s"`` to ``fits`` and its mean log joint to ``log_joints``."""
    settings = yaml.safe_load((ROOT / "params.yaml").read_text())["topics"]
    y = counts.counts.toarray()
    for seed in seeds:
        fit = fit_nonprivate(y, TopicModel(settings["K"]),
                             run=RunOptions(n_iter=settings["n_iter"], burn_in=settings["burn_in"],
                                            thin=settings["thin"], progress=False),
                             rng=seed)
        fits[f"nonprivate seed {seed}"] = fit.samples["phi"]
        log_joints[f"nonprivate seed {seed}"] = float(fit.log_joint.mean())


def extended_references(counts, raw: Path, sizes) -> dict:
    """The fitted documents plus other eligible emails on the same vocabulary, for each size
    (``None``: every eligible email). The extra documents are a seeded uniform sample."""
    params = counts.meta["params"]
    tokenizer = Tokenizer.from_params(params["min_token_length"], params["stop_words"])
    documents, _ = load_documents(params["format"], raw, tokenizer=tokenizer,
                                  body_rule=params["body_rule"], id_column=params["id_column"],
                                  text_column=params["text_column"],
                                  message_column=params["message_column"])
    position = {doc_id: r for r, doc_id in enumerate(documents.ids)}
    fitted_rows = np.array([position[d] for d in counts.row_ids])
    eligible = np.flatnonzero(documents.lengths >= params["min_tokens"])
    others = np.setdiff1d(eligible, fitted_rows)
    others = others[np.random.default_rng(SEED).permutation(others.size)]
    column = {word: c for c, word in enumerate(counts.column_ids)}
    out = {}
    for label, size in sizes.items():
        n_extra = others.size if size is None else max(0, min(size, eligible.size)
                                                          - fitted_rows.size)
        rows = np.sort(np.concatenate([fitted_rows, others[:n_extra]]))
        bag, types = documents.counts_for(rows)
        keep = [c for c, t in enumerate(types) if t in column]
        target = np.array([column[types[c]] for c in keep], dtype=np.int64)
        bag = sp.csc_array(bag)[:, keep].tocoo()
        matrix = sp.csr_array((bag.data, (bag.row, target[bag.col])),
                              shape=(rows.size, len(column)))
        out[label] = ReferenceCorpus(matrix)
    return out


def quick_inputs():
    """A small simulated corpus and made-up fits: frequent-word topics vs rare-word topics."""
    rng = np.random.default_rng(SEED)
    n_docs, n_words = 300, 120
    popularity = 1.0 / np.arange(1, n_words + 1)
    counts = rng.poisson(np.outer(rng.gamma(2.0, 1.0, n_docs), popularity) * 3.0)
    counts[np.arange(n_docs), rng.integers(0, n_words, n_docs)] += 1
    fits = {}
    for name, emphasis in (("nonprivate", 0.0), ("collapsed_eps1.0_rep0", 1.0),
                           ("collapsed_eps1.0_rep1", 1.0), ("naive_eps1.0_rep0", -1.0)):
        weight = popularity ** emphasis
        fits[name] = rng.gamma(1.0, 1.0, size=(3, 5, n_words)) * weight
    corpus = ReferenceCorpus(counts)
    references = {"fitted": corpus, "half": ReferenceCorpus(counts[: n_docs // 2])}
    return fits, references


def main(argv=()) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", type=Path, default=ROOT / "results/fits/topics")
    parser.add_argument("--counts", type=Path, default=ROOT / "data/prepared/topics")
    parser.add_argument("--raw", type=Path,
                        default=ROOT / "data/raw/enron/enron_emails_subset.csv.gz")
    parser.add_argument("--nonprivate-seeds", type=int, nargs="*", default=[],
                        help="rerun the non-private chain with these seeds too")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(list(argv))
    log_joints = {}
    if args.quick:
        fits, references = quick_inputs()
    else:
        # the fits are in the private folders' canonical order: the truth must be too
        counts = canonical_counts(load_counts(args.counts))
        references = {"fitted": ReferenceCorpus(counts.counts)}
        if args.raw.exists():
            references.update(extended_references(
                counts, args.raw, {"10k": PAPER_DOCS, "all": None}))
        else:
            print(f"({args.raw} is absent: no larger reference corpus)")
        fits = load_fits(args.fits)
        if args.nonprivate_seeds:
            log_joints["nonprivate"] = float(load_fit(args.fits / "nonprivate").log_joint.mean())
            refit_nonprivate(counts, args.nonprivate_seeds, fits, log_joints)
    result = analyse(fits, references)
    result["mean_log_joint"] = log_joints
    for name, value in log_joints.items():
        print(f"{name}: mean log joint {value:.0f}")
    print_report(result)
    if not args.quick:
        result["inputs"] = {"fits": str(args.fits), "counts": str(args.counts),
                            "raw": str(args.raw) if args.raw.exists() else None}
        print("wrote", write_results("npmi_anomaly", result))
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
