"""Sweeps until a chain is stationary, from each start (``init``) of the collapsed sampler.

    python -m experiments.starts [--quick] [--n N] [--k K] [--sweeps S] [--eps E] [--chains C]
                           [--starts data em dispersed data-scaled]

Data: text-like counts of :func:`bench.sweep.text_data` (N x N, K topics), privatized at
epsilon/N = E. For each start (``data``, ``em``, ``dispersed``, and ``data-scaled``: the data
start with ``theta`` scaled so that the total rate is ``sum y_tilde``, which estimates the true
total count without bias) C chains (seeds 1..C) run S sweeps of the collapsed sampler (sparse
engine), recording the **total rate** ``sum mu`` after every sweep and the **log joint** every
``LOG_JOINT_EVERY`` sweeps.

How stationarity is judged: Geweke's diagnostic searched over burn-ins. For a candidate
burn-in ``b`` (every ``GRID`` sweeps up to half the run) the trace after ``b`` is split into its
first 10 % and last 50 %; ``z`` is the difference of their means over its standard error (each
half's variance of the mean by batch means, ``BATCHES`` batches, so autocorrelation counts).
A chain's trace is stationary from the first ``b`` with ``|z| < 2`` for both the total rate and
the log joint; the table reports that ``b`` per chain ("> S/2" when none passes), plus the
split R-hat (ArviZ, rank-normalised) of the total rate and the log joint over the chains' last
halves, which says whether the chains agree once stationary. The start's own cost (the CAVI of
``dispersed``, the expectation sweeps of ``em``) is reported in seconds and in sweeps'
worth. Writes ``experiments/results/starts.json`` (not with ``--quick``).
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from experiments import machine, write_results
from bench.sweep import text_data
from lpp.diagnostics import geweke_z
from lpp.inference import GibbsSampler, TopicModel
from lpp.vi import chain_start
from lpp.diagnostics.export import require_arviz

arviz = require_arviz()  # without ArviZ's once-a-day FutureWarning at import

STARTS = ("data", "em", "dispersed", "data-scaled")
#: the log joint is dense work (every entry): recorded every this many sweeps
LOG_JOINT_EVERY = 5
#: burn-in candidates are this many sweeps apart
GRID = 25
#: values a window after a burn-in needs at least
MIN_WINDOW = 10


def stationary_from(traces: dict, n_sweeps: int) -> int | None:
    """The first burn-in (in sweeps) after which every trace passes ``|z| < 2``; None if none
    up to half the run. ``traces``: name -> (sweeps, values)."""
    for burn in range(0, n_sweeps // 2 + 1, GRID):
        ok = True
        for sweeps, values in traces.values():
            window = values[sweeps > burn]
            if window.size < MIN_WINDOW or abs(geweke_z(window)) >= 2:
                ok = False
                break
        if ok:
            return burn
    return None


def scaled_to_data(chain, y_tilde) -> dict:
    """The chain's state with ``theta`` scaled so that the total rate equals ``sum y_tilde``:
    the geometric noise is symmetric, so that sum estimates the true total count without bias."""
    state = dict(chain.state)
    theta, phi = chain.model.row_column_factors(state)
    scale = float(y_tilde.sum()) / float(theta.sum(axis=0) @ phi.sum(axis=1))
    state["theta"] = np.maximum(theta * scale, np.finfo(np.float64).tiny)  # none may underflow
    return state


def run_chain(y_tilde, alpha, k, init, seed, n_sweeps, collapse_theta=False):
    t0 = time.perf_counter()
    model = TopicModel(k, collapse_theta=collapse_theta)
    if init == "data-scaled":  # the data start with its total mass set to the data's
        chain = GibbsSampler.private(y_tilde, alpha, model, rng=seed, init="data", sparse=True)
        init = scaled_to_data(chain, y_tilde)
    chain = GibbsSampler.private(y_tilde, alpha, model, rng=seed, init=chain_start(init),
                                 sparse=True)
    start_seconds = time.perf_counter() - t0
    total, joint, joint_at, times = [], [], [], []
    for _ in range(n_sweeps):
        t = time.perf_counter()
        chain.sweep()
        times.append(time.perf_counter() - t)
        theta, phi = model.row_column_factors(chain.state)
        total.append(float(theta.sum(axis=0) @ phi.sum(axis=1)))
        if chain.iteration % LOG_JOINT_EVERY == 0:
            joint.append(chain.log_joint())
            joint_at.append(chain.iteration)
    sweeps = np.arange(1, n_sweeps + 1)
    traces = {"total_rate": (sweeps, np.array(total)),
              "log_joint": (np.array(joint_at), np.array(joint))}
    return {"start_seconds": start_seconds, "sweep_seconds": float(np.median(times[1:])),
            "total_rate": total, "log_joint": joint, "log_joint_at": joint_at,
            "stationary_from": stationary_from(traces, n_sweeps)}


def _split_rhat(chains: list[np.ndarray]) -> float:
    return float(arviz.rhat(np.stack(chains)))


def main(argv=()) -> dict:
    parser = argparse.ArgumentParser(prog="python -m experiments.starts")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--sweeps", type=int, default=400)
    parser.add_argument("--eps", type=float, default=1.0)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--starts", nargs="+", choices=STARTS, default=list(STARTS),
                        help="which starts to run (default: all)")
    parser.add_argument("--collapse-theta", action="store_true",
                        help="every sweep reassigns the tokens with theta summed out "
                             "(TopicModel(collapse_theta=True))")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(list(argv))
    if args.quick:
        args.n, args.k, args.sweeps = 120, 5, 60
    y_tilde, alpha, _, _, info = text_data(args.n, args.k, args.eps, seed=0)
    print(f"starts: {args.n}^2, K = {args.k}, eps/N = {args.eps}, {args.sweeps} sweeps, "
          + ("theta collapsed, " if args.collapse_theta else "")
          + f"{args.chains} chains per start; positive share of y_tilde "
          f"{info['positive_fraction']:.3f}, sum max(y_tilde, 0) "
          f"{int(np.maximum(y_tilde, 0).sum())}")
    out = {"machine": machine(), "settings": vars(args), "data": info, "starts": {}}
    print(f"{'start':>10} {'chain':>5} {'start s':>8} {'= sweeps':>8} {'rate@1':>11} "
          f"{'rate@end':>11} {'stationary from':>15}")
    for init in args.starts:
        runs = [run_chain(y_tilde, alpha, args.k, init, seed, args.sweeps, args.collapse_theta)
                for seed in range(1, args.chains + 1)]
        half = args.sweeps // 2
        record = {"chains": runs}
        if args.chains > 1:
            record["rhat_last_half"] = {
                "total_rate": _split_rhat([np.array(r["total_rate"][half:]) for r in runs]),
                "log_joint": _split_rhat([np.array(r["log_joint"][len(r["log_joint"]) // 2:])
                                          for r in runs])}
        out["starts"][init] = record
        for c, r in enumerate(runs):
            stat = r["stationary_from"]
            print(f"{init:>10} {c:>5} {r['start_seconds']:8.1f} "
                  f"{r['start_seconds'] / r['sweep_seconds']:8.0f} {r['total_rate'][0]:11.4g} "
                  f"{r['total_rate'][-1]:11.4g} "
                  f"{(str(stat) if stat is not None else f'> {half}'):>15}")
        if args.chains > 1:
            rh = record["rhat_last_half"]
            print(f"{init:>10}  R-hat over the last half: total rate {rh['total_rate']:.3f}, "
                  f"log joint {rh['log_joint']:.3f}")
    if not (args.quick or args.no_write):
        print(f"wrote {write_results('starts', out)}")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
