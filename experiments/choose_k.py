"""Can the built-in score choose the number of topics K on privatized counts?

    python -m experiments.choose_k [--quick] [--eps E ...] [--ks K ...] [--folds F]
                                   [--sweeps S] [--no-write]

Data: ``lpp.simulate.make_topics`` with a known ``K_TRUE`` = 5 well-separated topics (200
short documents of 30 expected tokens over 100 words, 20 own words per topic), privatized at
each epsilon/N = E (default 1 and 3; ``lpp.mechanism.privatize``, a fixed seed).

For each E, F-fold cross-validation over the documents (default 4 folds, one fixed shuffle):
for each candidate K (default 2, 3, 5, 8) ``PrivateTopicModel(K, alpha=alpha, n_iter=S)``
(collapsed Gibbs, S = 300 sweeps) is fitted to the training documents' privatized counts and
scored on the held-out documents' (``score``: the mean per entry of the held-out predictive
log-likelihood); the score times the fold's entries is the fold's **total** held-out
log-likelihood in nats. The same, ``method="nonprivate"`` on the true counts: the proxy a data
owner, who holds them, could compute. Per K it prints the mean score per entry, the held-out
total over the folds (every entry is held out once), and against K_TRUE the paired difference
of the totals, its standard error over the folds (``sqrt(F) * sd`` of the per-fold
differences) and their ratio ``z``; and the Monte Carlo spread of the score itself (fold 0
scored again with another seed: the difference of the two totals).

Writes ``experiments/results/choose_k.json`` (not with ``--quick`` or ``--no-write``).
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from experiments import machine, write_results
from lpp.estimators import PrivateTopicModel
from lpp.mechanism import alpha_from_epsilon, privatize
from lpp.simulate import make_topics

K_TRUE = 5
#: the corpus: make_topics' arguments
CORPUS = dict(n_docs=200, n_topics=K_TRUE, n_words=100, words_per_topic=20, doc_length=30.0)
QUICK_CORPUS = dict(n_docs=40, n_topics=2, n_words=10, words_per_topic=5, doc_length=20.0)


def folds_of(n_docs: int, n_folds: int, seed: int = 0) -> list:
    """The held-out documents of each fold: one shuffle, cut into ``n_folds`` parts."""
    return np.array_split(np.random.default_rng(seed).permutation(n_docs), n_folds)


def cross_validate(counts, alpha, ks, folds, sweeps, method) -> dict:
    """Per K, per fold: the score and the fold's total; fold 0 rescored with another seed."""
    out = {}
    for k in ks:
        rows = []
        for f, held in enumerate(folds):
            train = np.setdiff1d(np.arange(counts.shape[0]), held)
            est = PrivateTopicModel(k, alpha=alpha, method=method, n_iter=sweeps,
                                    random_state=f, progress=False).fit(counts[train])
            start = time.perf_counter()
            score = est.score(counts[held])
            row = {"fold": f, "entries": int(counts[held].size), "score": score,
                   "total": score * counts[held].size,
                   "score_seconds": round(time.perf_counter() - start, 2)}
            if f == 0:
                again = est.set_params(random_state=100).score(counts[held])
                row["rescored_total"] = again * counts[held].size
            rows.append(row)
        out[str(k)] = rows
    return out


def summarise(per_k: dict, k_ref: int) -> list:
    """Per K: mean score per entry, held-out total, the paired difference of the totals
    against ``k_ref`` with its standard error over the folds, and the score's MC spread."""
    ref = np.array([r["total"] for r in per_k[str(k_ref)]])
    rows = []
    for k, folds in per_k.items():
        totals = np.array([r["total"] for r in folds])
        diff = totals - ref
        n = len(diff)
        se = float(np.sqrt(n) * diff.std(ddof=1)) if n > 1 else float("nan")
        entries = sum(r["entries"] for r in folds)
        rows.append({"k": int(k), "score": float(np.mean([r["score"] for r in folds])),
                     "total": float(totals.sum()), "entries": entries,
                     "diff": float(diff.sum()), "diff_per_entry": float(diff.sum() / entries),
                     "se": se, "z": float(diff.sum() / se) if se > 0 else None,
                     "best_folds": None,
                     "mc_spread": float(abs(folds[0]["rescored_total"] - folds[0]["total"]))})
    best = np.argmax([[r["total"] for r in folds] for folds in per_k.values()], axis=0)
    for i, row in enumerate(rows):
        row["best_folds"] = int((best == i).sum())
    return rows


def _print(title: str, rows: list, k_ref: int) -> None:
    print(title)
    print(f"{'K':>3} {'score/entry':>12} {'total nats':>11} {f'- K={k_ref}':>9} "
          f"{'se':>7} {'z':>6} {'best in folds':>13} {'MC spread':>9}")
    for r in rows:
        z = "" if r["z"] is None else f"{r['z']:.1f}"
        print(f"{r['k']:>3} {r['score']:12.5f} {r['total']:11.1f} {r['diff']:9.1f} "
              f"{r['se']:7.1f} {z:>6} {r['best_folds']:>13} {r['mc_spread']:9.1f}")


def main(argv=()) -> dict:
    parser = argparse.ArgumentParser(prog="python -m experiments.choose_k")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--eps", type=float, nargs="+", default=[1.0, 3.0])
    parser.add_argument("--ks", type=int, nargs="+", default=[2, 3, 5, 8])
    parser.add_argument("--folds", type=int, default=4)
    parser.add_argument("--sweeps", type=int, default=300)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(list(argv))
    corpus_args, k_ref = CORPUS, K_TRUE
    if args.quick:
        corpus_args, k_ref = QUICK_CORPUS, QUICK_CORPUS["n_topics"]
        args.eps, args.ks, args.folds, args.sweeps = [1.0], [1, 2], 2, 10
    corpus = make_topics(rng=0, **corpus_args)
    folds = folds_of(corpus.y.shape[0], args.folds)
    out = {"machine": machine(), "invocation": vars(args), "corpus": corpus_args,
           "k_true": k_ref, "tokens": int(corpus.y.sum()), "cases": {}}
    started = time.perf_counter()
    per_k = cross_validate(corpus.y, None, args.ks, folds, args.sweeps, "nonprivate")
    out["cases"]["nonprivate"] = {"folds": per_k, "summary": summarise(per_k, k_ref)}
    _print(f"non-private (true counts), {corpus.y.shape[0]} x {corpus.y.shape[1]}, K_true = "
           f"{k_ref}, {args.folds} folds", out["cases"]["nonprivate"]["summary"], k_ref)
    for eps in args.eps:
        alpha = float(alpha_from_epsilon(eps, 1))
        y_tilde = privatize(corpus.y, alpha, rng=1)
        per_k = cross_validate(y_tilde, alpha, args.ks, folds, args.sweeps, "collapsed")
        out["cases"][f"eps={eps:g}"] = {"alpha": alpha, "folds": per_k,
                                        "summary": summarise(per_k, k_ref)}
        _print(f"eps/N = {eps:g} (privatized counts)", out["cases"][f"eps={eps:g}"]["summary"],
               k_ref)
    out["seconds"] = round(time.perf_counter() - started, 1)
    if not (args.quick or args.no_write):
        print(f"wrote {write_results('choose_k', out)}")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
