"""Iterations to accuracy: MAE to the true rates against wall-clock seconds (VI paper's benchmark).

Data: :func:`bench.sweep.vi_data` — 1000 x 1000, K = 50, epsilon/N = 1, Gamma(0.2, scale 1)
factors (Schofield et al., appendix E: private MCMC MAE 0.36 after 5000 + 2500 iterations at
about 0.8 s per iteration single-threaded; VI 0.52).

Parts (``python -m bench.accuracy [curve] [long] [truth] [--quick]``):

* ``long`` — the paper's protocol with this package: ``collapsed`` for 3000 burn-in + 1000
  iterations, one chain per seed of ``LONG_SEEDS``, and ``naive`` for 2000 + 1000 (first seed).
  Every 10th iteration is saved: ``mae`` averages ``mu`` over 10 of them 100 apart (the paper's
  estimate), ``mae_all`` over all 100 — the less noisy estimate of the posterior mean. The
  "converged MAE" that the curves are held to (:func:`converged_mae`) is the mean of the
  collapsed chains' ``mae_all``; ``mae_pooled`` (the MAE of the chains' averaged posterior
  means) is printed beside it.
* ``curve`` — ``collapsed`` (sparse engine) and ``bessel``, each started with ``init="data"`` and
  with ``init="em"``, run for a fixed wall-clock budget (60 s, the EM start included); every
  iteration's factors are kept with the time it was reached. The anytime estimate at
  iteration t averages ``theta @ phi`` over the iterations in the second half of those done by
  t (the first half is burn-in; the cut is rounded down to a multiple of ``CURVE_EVERY``), and
  its MAE to the true rates is reported every ``CURVE_EVERY`` iterations against the time.
  Post-processing is outside the clock.

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

from bench import RESULTS, record_part, write_results
from bench.paper_numbers import MCMC_BURN_IN, PAPER_NUMBERS
from bench.sweep import vi_data
from lpp.inference import GibbsSampler, RunOptions, TopicModel, fit_private

N, K, EPS = 1000, 50, 1.0
BUDGET = 60.0
#: iterations between the points of a wall-clock curve (and the granularity of its burn-in cut)
CURVE_EVERY = 10
#: the seed paper's private MCMC on these data (Schofield et al., appendix E)
SEED_PAPER = {"mcmc_mae": PAPER_NUMBERS["mcmc_mae"], "burn_in": MCMC_BURN_IN,
              "collect": PAPER_NUMBERS["mcmc_iterations"] - MCMC_BURN_IN,
              "seconds_per_iteration": PAPER_NUMBERS["mcmc_seconds_per_iteration"]}
#: iterations between the saved samples of the long runs (the paper keeps every 100th)
LONG_THIN = 10
#: iterations after burn-in of the long runs
LONG_COLLECT = 1000
#: seeds of the long collapsed chains whose mean MAE is the converged MAE
LONG_SEEDS = (1, 2)
#: thinning of the chains started at the truth
KEEP_EVERY = 5
#: (result name, method, init) of the wall-clock curves
CURVES = (("collapsed", "collapsed", "data"), ("bessel", "bessel", "data"),
          ("collapsed_em", "collapsed", "em"), ("bessel_em", "bessel", "em"))
TRUTH_SWEEPS = 300


def _mae(mu_hat, mu):
    return float(np.mean(np.abs(mu_hat - mu)))


def _long_chain(y_tilde, alpha, k, method, burn, collect, seed, mu):
    """One chain of the paper's protocol: ``(posterior mean of the rates, its record)``."""
    t0 = time.perf_counter()
    res = fit_private(y_tilde, alpha, TopicModel(k), method=method,
                      run=RunOptions(n_iter=burn + collect, burn_in=burn, thin=LONG_THIN,
                                     save_latents=True, progress=False),
                      rng=seed)
    seconds = time.perf_counter() - t0
    step = 100 // LONG_THIN  # the paper's 10 samples, 100 iterations apart
    paper = [t @ f for t, f in zip(res.samples["theta"][step - 1::step],
                                   res.samples["phi"][step - 1::step])]
    return res.mu_hat, {"seed": seed, "burn_in": burn, "collected": collect,
                        "samples": res.n_saved, "mae": _mae(np.mean(paper, axis=0), mu),
                        "paper_samples": len(paper), "mae_all": _mae(res.mu_hat, mu),
                        "seconds": seconds, "engine": res.engine,
                        "median_iteration_seconds": float(np.median(res.iter_seconds[1:]))}


def part_long(quick=False):
    n, k = (200, 10) if quick else (N, K)
    collect = 200 if quick else LONG_COLLECT
    y_tilde, alpha, theta, phi, info = vi_data(n, k, EPS)
    mu = theta @ phi
    out = {"load_before": [round(x, 2) for x in os.getloadavg()], **info}
    for method, burn, seeds in (("collapsed", 3000, LONG_SEEDS), ("naive", 2000, LONG_SEEDS[:1])):
        if quick:
            burn = 100
        chains, means = [], []
        for seed in seeds:
            mu_hat, chain = _long_chain(y_tilde, alpha, k, method, burn, collect, seed, mu)
            chains.append(chain)
            means.append(mu_hat)
            print(f"{method:>9s} seed {seed}: {burn} + {collect} iterations, MAE "
                  f"{chain['mae']:.4f} ({chain['paper_samples']} samples 100 apart), "
                  f"{chain['mae_all']:.4f} ({chain['samples']} samples) "
                  f"({chain['seconds']:.0f} s, {chain['median_iteration_seconds']:.3f} s/it)",
                  flush=True)
        # the first chain's numbers at the top level: the paper's protocol is one chain
        out[method] = {**chains[0], "chains": chains,
                       "mae_all_mean": float(np.mean([c["mae_all"] for c in chains])),
                       "mae_pooled": _mae(np.mean(means, axis=0), mu)}
        if len(chains) > 1:
            print(f"{method:>9s}: mean of the chains' MAE {out[method]['mae_all_mean']:.4f}, "
                  f"MAE of their pooled mean {out[method]['mae_pooled']:.4f}", flush=True)
    print(f"seed paper (private MCMC): MAE {SEED_PAPER['mcmc_mae']} after "
          f"{SEED_PAPER['burn_in']} + {SEED_PAPER['collect']} iterations at "
          f"{SEED_PAPER['seconds_per_iteration']} s/it single-threaded", flush=True)
    out["paper_numbers"] = dict(SEED_PAPER)
    out["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return out


def converged_mae(accuracy: dict) -> float:
    """The yardstick of the wall-clock curves: the mean MAE of the long collapsed chains."""
    return accuracy["long"]["collapsed"]["mae_all_mean"]


def _run_for(sampler, budget):
    kept = []
    start = time.perf_counter()
    while True:
        sampler.sweep()
        elapsed = time.perf_counter() - start
        kept.append([sampler.iteration, elapsed, sampler.state["theta"], sampler.state["phi"]])
        if elapsed >= budget and len(kept) >= CURVE_EVERY:  # a curve has at least one point
            return kept, sampler.iteration, elapsed


def first_within(curve, target, key="mae"):
    """Seconds at the first point of ``curve`` whose ``key`` is at most ``target`` (or None)."""
    hit = [c for c in curve if c[key] <= target]
    return hit[0]["seconds"] if hit else None


def _anytime_curve(kept, mu):
    """MAE of the running estimates at every ``CURVE_EVERY``-th iteration.

    ``mae`` averages the second half of the iterations done (the first half is burn-in; the cut
    is rounded down to a multiple of ``CURVE_EVERY``); ``mae_from_start`` averages all of them,
    the better estimate when the chain starts near the posterior (from a variational fit).
    Prefix sums of ``theta @ phi`` kept at the curve's points make each window a difference
    of two sums: one product per iteration in all.
    """
    if [it for it, *_ in kept] != list(range(1, len(kept) + 1)):
        raise ValueError("the curve needs every iteration from the first")
    running = np.zeros_like(mu)
    prefix = {0: running.copy()}  # sum of the rates over iterations 1..t, at the points t
    curve = []
    for it, elapsed, theta, phi in kept:
        running += theta @ phi
        if it % CURVE_EVERY:
            continue
        prefix[it] = running.copy()
        cut = (it // 2) // CURVE_EVERY * CURVE_EVERY
        for old in [t for t in prefix if t < cut]:
            del prefix[old]
        curve.append({"iteration": it, "seconds": elapsed, "samples": it - cut,
                      "mae": _mae((running - prefix[cut]) / (it - cut), mu),
                      "mae_from_start": _mae(running / it, mu)})
    return curve


def part_curve(quick=False):
    n, k, budget = (200, 10, 2.0) if quick else (N, K, BUDGET)
    y_tilde, alpha, theta, phi, info = vi_data(n, k, EPS)
    mu = theta @ phi
    out = {"budget_seconds": budget, "threads": numba.get_num_threads(),
           "load_before": [round(x, 2) for x in os.getloadavg()], **info}
    for name, method, init in CURVES:
        # compile outside the clock: a throw-away sweep on a small copy
        GibbsSampler.private(y_tilde[:150, :150], alpha, TopicModel(k), method=method,
                             rng=2, init=init).sweep()
        start = time.perf_counter()  # the initialisation (EM sweeps) is on the clock
        sampler = GibbsSampler.private(y_tilde, alpha, TopicModel(k), method=method, rng=1,
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
    chains = {"collapsed": GibbsSampler.private(y_tilde, alpha, TopicModel(k), rng=1,
                                                init=truth),
              "nonprivate": GibbsSampler.nonprivate(y, TopicModel(k), rng=1, init=truth)}
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
    for name in chosen:
        record_part(results, name, parts[name](quick))
        if not quick:  # a later part's failure keeps what this one measured
            write_results("accuracy", results)
    if "long" in results and "curve" in results and not quick:
        target = 1.05 * converged_mae(results)
        for method, _, _ in CURVES:
            hit = first_within(results["curve"][method]["curve"], target)
            results["curve"][method]["seconds_to_within_5pct"] = hit
            print(f"{method}: within 5% of the converged MAE ({target:.4f}) after {hit:.1f} s"
                  if hit is not None else f"{method}: not within 5% in budget")
    if not quick:
        print(f"wrote {write_results('accuracy', results)}")


if __name__ == "__main__":
    main(sys.argv[1:])
