"""Whether longer chains bring the non-private topic chains to agree: R-hat by window.

    python -m experiments.long_nonprivate [--quick] [--data DIR] [--k K] [--sweeps S] [--chains C]
                                    [--every E] [--no-write]

The non-private chain on the true counts is the yardstick of every private one, and at the
paper's size (``--data``: prepared topic counts, by default the paper profile's work tree,
``../lpp-paper/data/prepared/topics``, 10,000 x 10,000) it costs about 0.1 s per sweep, so its
chains can be run far longer than the private ones. C chains (seeds of a fit of C chains from
seed 1, :func:`lpp.randomness.chain_seeds`; data start, the data's held-out mask) run S sweeps;
every E sweeps the **total rate** ``sum mu`` and the **log joint** ``log p(y, theta, phi)`` up
to a constant (the Poisson likelihood of every entry, held-out ones included, formed on the
non-zero counts, plus the Gamma prior of the factors) are recorded. For windows of the run
(the second half of the first 1,000 sweeps, then 1,000 sweeps at a time, then the last half)
it prints ArviZ's rank-normalised split R-hat and bulk ESS across the chains and the verdict of
:func:`lpp.diagnostics.agreement_of` (agree, drifting, modes), with each chain's mean: whether
R-hat falls as the chains grow, or they settle apart. ``--quick`` runs text-like data of
``bench.sweep`` (80 x 80, K = 4) instead. Writes ``experiments/results/long_nonprivate.json`` (not
with ``--quick`` or ``--no-write``).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy import sparse

from bench.sweep import text_data
from data_prep import load_counts
from experiments import machine, write_results
from lpp.diagnostics import agreement_of
from lpp.diagnostics.export import require_arviz
from lpp.inference import RunOptions, TopicModel, fit_nonprivate

arviz = require_arviz()  # without ArviZ's once-a-day FutureWarning at import

ROOT = Path(__file__).resolve().parents[1]
#: entries of the non-zero counts taken at a time when the log likelihood is formed
_BLOCK = 200_000


class Trace:
    """``callback`` of a fit: every ``every`` sweeps, the chain's total rate and log joint."""

    def __init__(self, counts, every: int, a0: float, b0: float):
        coo = counts.tocoo()
        self.rows, self.cols = coo.row, coo.col
        self.values = coo.data.astype(np.float64)
        self.every, self.a0, self.b0 = every, a0, b0
        self.points: dict[int, list] = {}

    def log_joint(self, theta, phi) -> float:
        loglik = 0.0
        for lo in range(0, self.rows.size, _BLOCK):
            r, c = self.rows[lo:lo + _BLOCK], self.cols[lo:lo + _BLOCK]
            mu = np.einsum("ik,ki->i", theta[r], phi[:, c])
            loglik += float(self.values[lo:lo + _BLOCK] @ np.log(mu))
        loglik -= float(theta.sum(axis=0) @ phi.sum(axis=1))
        prior = ((self.a0 - 1.0) * (np.log(theta).sum() + np.log(phi).sum())
                 - self.b0 * (theta.sum() + phi.sum()))
        return loglik + float(prior)

    def __call__(self, chain) -> None:
        if chain.iteration % self.every:
            return
        theta, phi = chain.model.row_column_factors(chain.state)
        self.points.setdefault(int(chain.seed), []).append(
            (chain.iteration, float(theta.sum(axis=0) @ phi.sum(axis=1)),
             self.log_joint(theta, phi)))


def windows(n_sweeps: int) -> list[tuple[int, int]]:
    """(first, last] sweeps of each window: 500-1000, then blocks of 1000, then the last half."""
    if n_sweeps < 2000:
        return [(n_sweeps // 2, n_sweeps)]
    cuts = [(500, 1000)] + [(lo, min(lo + 1000, n_sweeps)) for lo in range(1000, n_sweeps, 1000)]
    return cuts + [(n_sweeps // 2, n_sweeps)]


def summarize(points: dict, n_sweeps: int) -> list[dict]:
    """R-hat, bulk ESS and agreement of both traces across the chains, per window."""
    sweeps = np.array([p[0] for p in next(iter(points.values()))])
    traces = {"total_rate": np.array([[p[1] for p in pts] for pts in points.values()]),
              "log_joint": np.array([[p[2] for p in pts] for pts in points.values()])}
    rows = []
    for lo, hi in windows(n_sweeps):
        keep = (sweeps > lo) & (sweeps <= hi)
        if keep.sum() < 8:
            continue
        row = {"window": [lo, hi], "points": int(keep.sum())}
        for name, values in traces.items():
            part = values[:, keep]
            r_hat = float(arviz.rhat(part))
            agreement = agreement_of(part, r_hat)
            row[name] = {"r_hat": r_hat, "ess_bulk": float(arviz.ess(part)),
                         "verdict": agreement["verdict"],
                         "chain_means": agreement["chain_means"],
                         "separation": agreement["separation"]}
        rows.append(row)
    return rows


def _data(args):
    if args.quick:
        true = np.zeros((80, 80), dtype=np.int64)
        text_data(80, 4, 1.0, seed=0, true_counts=true)
        return sparse.csr_matrix(true), None, "text-like 80 x 80 (bench.sweep)"

    data = load_counts(args.data)
    return data.counts, data.arrays.get("heldout"), str(args.data)


def main(argv=()) -> dict:
    parser = argparse.ArgumentParser(prog="python -m experiments.long_nonprivate")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--data", type=Path,
                        default=ROOT.parent / "lpp-paper" / "data" / "prepared" / "topics")
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--sweeps", type=int, default=4000)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(list(argv))
    if args.quick:
        args.k, args.sweeps, args.every = 4, 120, 2
    counts, heldout, source = _data(args)
    trace = Trace(counts, args.every, a0=0.1, b0=1.0)
    start = time.perf_counter()
    fit_nonprivate(np.ma.masked_array(counts.toarray(), heldout), TopicModel(args.k),
                   run=RunOptions(n_iter=args.sweeps, burn_in=args.sweeps - 1, thin=1, init="data",
                                  save_latents=False, progress=not args.quick, callback=trace),
                   rng=1, chains=args.chains)
    seconds = time.perf_counter() - start
    rows = summarize(trace.points, args.sweeps)
    print(f"non-private topic chains on {source}: {counts.shape[0]} x {counts.shape[1]}, "
          f"K = {args.k}, {args.chains} chains x {args.sweeps} sweeps, {seconds:.0f} s")
    print(f"{'sweeps':>11} {'quantity':>10} {'R-hat':>6} {'ESS':>6} {'verdict':>9}  chain means")
    for row in rows:
        for name in ("log_joint", "total_rate"):
            q = row[name]
            means = ", ".join(f"{m:.6g}" for m in q["chain_means"])
            print(f"{row['window'][0]:>5}-{row['window'][1]:<5} {name:>10} {q['r_hat']:6.3f} "
                  f"{q['ess_bulk']:6.0f} {q['verdict']:>9}  {means}")
    out = {"machine": machine(), "settings": {k: str(v) for k, v in vars(args).items()},
           "data": source, "seconds": seconds, "windows": rows,
           "traces": {str(seed): pts for seed, pts in trace.points.items()}}
    if not (args.quick or args.no_write):
        write_results("long_nonprivate", out)
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
