"""Run time of the central HMM's three routes: non-private, Laplace-released counts, OPS.

Foulds et al. (UAI 2016, Section 5) report that the Laplace mechanism's overhead "is paid once
up-front, and did not greatly affect the runtime, while OPS roughly doubled the runtime". This
script times one Gibbs fit of the 10-state naive-Bayes HMM (:func:`lpp.central.hmm.fit_hmm`,
200 sweeps, 100 burn-in: the paper's settings) on one held-out split of a war-logs-shaped data
set (:func:`lpp.central.simulate.make_war_logs`) by each route: non-private, Laplace (the
release included) and OPS (``epsilon`` 1, ``M`` 10), best of ``--repeat`` runs each (numba's
compilation excluded by a short fit first), and prints each route's time relative to the
non-private fit. ``python -m bench.central_runtime [--quick] [--repeat R] [--out PATH]``;
writes ``bench/results/central_runtime.json`` or ``PATH`` (the pipeline's ``central_runtime``
stage writes ``results/central/runtime.json``, which the claims read; ``--quick``: a tiny
version, nothing written).

The same numbers give the cost of the ``central_hmm`` stage at the paper's settings: one split
fits naive Bayes (cheap) and 1 + E + E M HMMs (non-private; Laplace and OPS at E levels of
epsilon, M truncations); the stage runs ``n_splits`` splits per data set.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from bench import best_time, machine, write_json, write_results
from lpp.central import heldout, hmm, simulate

N_STATES, N_ITER, BURN_IN = 10, 200, 100
EPSILON, M_FACTOR = 1.0, 10.0


def measure(kind="iraq", *, scale=1.0, n_iter=N_ITER, burn_in=BURN_IN, repeat=3, seed=2016):
    """Best wall time (s) of one fit by each route, and each relative to the non-private one."""
    data = simulate.make_war_logs(kind, scale=scale, rng=np.random.default_rng([seed, 0]))
    held = heldout.heldout_splits(data.n_steps, 0.1, 1, rng=seed)[0]
    kw = dict(n_iter=n_iter, burn_in=burn_in, heldout=held, test_counts=data.counts)
    a0, temperature = hmm.ops_settings(data.n_categories, EPSILON, M_FACTOR)

    def nonprivate():
        hmm.fit_hmm(data.counts, data.chain, N_STATES, rng=1, **kw)

    def laplace():
        released = hmm.release_laplace(data.counts, EPSILON, rng=2)
        hmm.fit_hmm(released, data.chain, N_STATES, rng=2, **kw)

    def ops():
        hmm.fit_hmm(data.counts, data.chain, N_STATES, temperature=temperature, a0=a0, rng=3,
                    **kw)

    # compile every route's kernels first (kept out of the timings): released counts are
    # real-valued, and the tempered, truncated draws take paths of their own
    warm = dict(kw, n_iter=2, burn_in=1)
    hmm.fit_hmm(data.counts, data.chain, N_STATES, rng=0, **warm)
    hmm.fit_hmm(hmm.release_laplace(data.counts, EPSILON, rng=0), data.chain, N_STATES, rng=0,
                **warm)
    hmm.fit_hmm(data.counts, data.chain, N_STATES, temperature=temperature, a0=a0, rng=0,
                **warm)
    seconds = {name: best_time(fn, repeat) for name, fn in
               (("nonprivate", nonprivate), ("laplace", laplace), ("ops", ops))}
    return {"data": data.name, "steps": data.n_steps,
            "median_records": float(np.median(data.n_records)), "n_states": N_STATES,
            "n_iter": n_iter, "burn_in": burn_in, "epsilon": EPSILON, "m_factor": M_FACTOR,
            "seconds": seconds,
            "relative": {name: s / seconds["nonprivate"] for name, s in seconds.items()}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.central_runtime",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a tiny run; writes nothing")
    parser.add_argument("--repeat", type=int, default=3, help="runs per route (best kept)")
    parser.add_argument("--out", type=Path, default=None,
                        help="write the JSON here instead of bench/results/central_runtime.json "
                             "(the pipeline's central_runtime stage: results/central/runtime.json)")
    args = parser.parse_args(argv)
    settings = dict(scale=0.05, n_iter=20, burn_in=10, repeat=1) if args.quick else dict(
        repeat=args.repeat)
    results = {kind: measure(kind, **settings) for kind in ("iraq", "afghanistan")}
    for kind, r in results.items():
        print(f"{r['data']}: " + ", ".join(
            f"{name} {r['seconds'][name]:.2f} s ({r['relative'][name]:.2f}x)"
            for name in r["seconds"]))
    if not args.quick:
        payload = {"machine": machine(), "results": results}
        if args.out is None:
            write_results("central_runtime", payload)
        else:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            write_json(args.out, payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
