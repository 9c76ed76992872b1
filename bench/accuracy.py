"""Iterations to accuracy: MAE to the true rates against wall-clock seconds (VI paper's benchmark).

Data: :func:`bench.sweep.vi_data` — 1000 x 1000, K = 50, epsilon/N = 1, Gamma(0.2, scale 1)
factors (Schofield et al., appendix E; table of anchors.md §1: private MCMC MAE 0.208 after
3000 + 1000 iterations, naive 0.396).

Parts (``python -m bench.accuracy [curve] [long] [truth] [--quick]``):

* ``long`` — the paper's protocol with this package: ``collapsed`` for 3000 burn-in + 1000
  iterations and ``naive`` for 2000 + 1000, ``mu_hat`` averaged over 10 samples 100 apart; the
  collapsed value is the "converged MAE" of the sampler.
* ``curve`` — ``collapsed`` (sparse engine) and ``bessel``, each started with ``init="data"`` and
  with ``init="em"``, run for a fixed wall-clock budget (60 s, the EM start included); every 5th
  iteration's factors are kept with the time it was reached. The anytime
  estimate at time t averages ``theta @ phi`` over the kept samples in the second half of the
  iterations done by t (the first half is burn-in); its MAE to the true rates is reported against
  t. Post-processing is outside the clock.

* ``truth`` — ``collapsed`` and the non-private sampler started at the true factors (see
  :func:`part_truth`).

Writes ``bench/results/accuracy.json`` (the parts run replace their entries).
"""
from __future__ import annotations

import json
import os
import sys
import time

import numba
import numpy as np

from bench import RESULTS, machine, write_results
from bench.sweep import cpu_model, vi_data
from lpp.inference import GibbsSampler, TopicModel, fit_private

N, K, EPS = 1000, 50, 1.0
BUDGET = 60.0
KEEP_EVERY = 5
#: (result name, method, init) of the wall-clock curves
CURVES = (("collapsed", "collapsed", "data"), ("bessel", "bessel", "data"),
          ("collapsed_em", "collapsed", "em"), ("bessel_em", "bessel", "em"))
TRUTH_SWEEPS = 300


def _mae(mu_hat, mu):
    return float(np.mean(np.abs(mu_hat - mu)))


def part_long(quick=False):
    n, k = (200, 10) if quick else (N, K)
    y_tilde, alpha, theta, phi, info = vi_data(n, k, EPS)
    mu = theta @ phi
    out = {"load_before": [round(x, 2) for x in os.getloadavg()], **info}
    for method, burn in (("collapsed", 3000), ("naive", 2000)):
        if quick:
            burn = 200
        t0 = time.perf_counter()
        res = fit_private(y_tilde, alpha, TopicModel(k), method=method, n_iter=burn + 1000,
                          burn_in=burn, thin=100, seed=1, save_latents=False, progress=False)
        out[method] = {"burn_in": burn, "samples": res.n_saved, "mae": _mae(res.mu_hat, mu),
                       "seconds": time.perf_counter() - t0, "engine": res.engine,
                       "median_iteration_seconds": float(np.median(res.iter_seconds[1:]))}
        print(f"{method:>9s}: {burn} + 1000 iterations, MAE {out[method]['mae']:.4f} "
              f"({out[method]['seconds']:.0f} s)", flush=True)
    out["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return out


def _run_for(sampler, budget):
    kept = []
    start = time.perf_counter()
    while True:
        sampler.sweep()
        elapsed = time.perf_counter() - start
        if sampler.iteration % KEEP_EVERY == 0:
            kept.append([sampler.iteration, elapsed, sampler.state["theta"],
                         sampler.state["phi"]])
        if elapsed >= budget:
            return kept, sampler.iteration, elapsed


def _anytime_curve(kept, mu):
    curve = []
    total = np.zeros_like(mu)
    window = []  # indices of kept samples in the second half of the iterations so far
    for i, (it, elapsed, _, _) in enumerate(kept):
        lo = next(j for j, s in enumerate(kept) if s[0] > it // 2)
        window = list(range(lo, i + 1))
        total = sum(kept[j][2] @ kept[j][3] for j in window)
        curve.append({"iteration": it, "seconds": elapsed,
                      "mae": _mae(total / len(window), mu), "samples": len(window)})
    return curve


def part_curve(quick=False):
    n, k, budget = (200, 10, 5.0) if quick else (N, K, BUDGET)
    y_tilde, alpha, theta, phi, info = vi_data(n, k, EPS)
    mu = theta @ phi
    out = {"budget_seconds": budget, "threads": numba.get_num_threads(),
           "load_before": [round(x, 2) for x in os.getloadavg()], **info}
    for name, method, init in CURVES:
        # compile outside the clock: a throw-away sweep on a small copy
        GibbsSampler.private(y_tilde[:150, :150], alpha, TopicModel(k), method=method,
                             seed=2).sweep()
        start = time.perf_counter()  # the initialisation (EM sweeps) is on the clock
        sampler = GibbsSampler.private(y_tilde, alpha, TopicModel(k), method=method, seed=1,
                                       init=init)
        init_seconds = time.perf_counter() - start
        kept, iters, elapsed = _run_for(sampler, budget - init_seconds)
        for entry in kept:
            entry[1] += init_seconds
        out[name] = {"engine": sampler.engine, "init": init, "init_seconds": init_seconds,
                     "iterations": iters, "seconds": elapsed + init_seconds,
                     "curve": _anytime_curve(kept, mu)}
        last = out[name]["curve"][-1]
        print(f"{name:>12s}: init {init_seconds:.1f} s, {iters} iterations in "
              f"{out[name]['seconds']:.0f} s, anytime MAE {last['mae']:.4f}", flush=True)
    out["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return out


def part_truth(quick=False):
    """Chains started at the true factors: where the posterior itself puts the MAE.

    ``collapsed`` on the privatized data, and the non-private sampler on an independent draw
    of true counts from the same rates (the benchmark keeps no true counts). If a chain started
    at the truth drifts to the same MAE as a long run from a random start, the long run's MAE
    is the posterior's, not a failure to mix."""
    n, k, sweeps = (200, 10, 60) if quick else (N, K, TRUTH_SWEEPS)
    y_tilde, alpha, theta, phi, info = vi_data(n, k, EPS)
    mu = theta @ phi
    y = np.random.default_rng(5).poisson(mu)
    truth = {"theta": theta, "phi": phi}
    out = {"sweeps": sweeps, "average_from": sweeps // 3, **info}
    chains = {"collapsed": GibbsSampler.private(y_tilde, alpha, TopicModel(k), seed=1,
                                                init=truth),
              "nonprivate": GibbsSampler.nonprivate(y, TopicModel(k), seed=1, init=truth)}
    for name, sampler in chains.items():
        total, count, trace = np.zeros_like(mu), 0, []
        for it in range(1, sweeps + 1):
            sampler.sweep()
            current = sampler.state["theta"] @ sampler.state["phi"]
            if it > sweeps // 3 and it % KEEP_EVERY == 0:
                total += current
                count += 1
            if it % 20 == 0 or it == 1:
                trace.append({"iteration": it, "current_mae": _mae(current, mu),
                              "average_mae": _mae(total / count, mu) if count else None})
        out[name] = {"trace": trace, "final_current_mae": trace[-1]["current_mae"],
                     "average_mae": trace[-1]["average_mae"], "samples_averaged": count}
        print(f"{name:>10s} from the truth: current-sample MAE {trace[-1]['current_mae']:.4f}, "
              f"average of {count} samples {trace[-1]['average_mae']:.4f}", flush=True)
    return out


def main(argv):
    quick = "--quick" in argv
    parts = {"long": part_long, "curve": part_curve, "truth": part_truth}
    chosen = [p for p in parts if p in argv] or list(parts)
    path = RESULTS / "accuracy.json"
    results = json.loads(path.read_text()) if path.exists() and not quick else {}
    results["machine"] = {**machine(), "cpu_model": cpu_model()}
    for name in chosen:
        results[name] = parts[name](quick)
    if "long" in results and "curve" in results and not quick:
        target = 1.05 * results["long"]["collapsed"]["mae"]
        for method, _, _ in CURVES:
            hit = [c for c in results["curve"][method]["curve"] if c["mae"] <= target]
            results["curve"][method]["seconds_to_within_5pct"] = hit[0]["seconds"] if hit else None
            print(f"{method}: within 5% of the converged MAE ({target:.4f}) after "
                  f"{hit[0]['seconds']:.1f} s" if hit else f"{method}: not within 5% in budget")
    if not quick:
        print(f"wrote {write_results('accuracy', results)}")


if __name__ == "__main__":
    main(sys.argv[1:])
