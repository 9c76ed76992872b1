"""Variational inference against MCMC on the VI paper's benchmark: seconds per iteration, MAE.

Data: :func:`bench.sweep.vi_data` — 1000 x 1000, K = 50, epsilon/N = 1 (Schofield et al.,
appendix E). Parts (``python -m bench.vi [collapsed] [paper] [naive] [truth] [mcmc]
[--quick]``; all by default; each part stays within about two minutes on two cores):

* ``collapsed`` — the exact collapsed CAVI (sparse engine) to convergence (tol 1e-4, as the
  paper's);
* ``paper`` — the paper's CAVI (Bessel mode, delta method) with its own stopping rule
  (relative objective change 1e-4, at most 200 iterations);
* ``naive`` — standard CAVI on ``max(y_tilde, 0)``;
* ``truth`` — the collapsed CAVI started at the true factors (Gamma factors of shape 100
  centred on them): the MAE of the optimum nearest the truth, i.e. what a better start could
  give; the gap to ``collapsed`` is the cost of local optima, not of the mean-field family;
* ``engines`` — the sparse against the dense engine of the collapsed CAVI, on the dense VI data
  and on text-like data (:func:`bench.sweep.text_data`): median seconds per iteration and per
  start sweep (on the naive counts), each engine forced; the ratio sets
  ``lpp.vi.driver.SPARSE_MAX_SHARE``;
* ``mcmc`` — the collapsed Gibbs sampler started from the collapsed CAVI's means
  (``init=result.to_init()``), for a wall-clock budget; its anytime MAE (average of the
  second half of the iterations so far) against the time, VI time included, and the time to
  come within 5% of the converged MCMC MAE (the long chain of ``bench/results/accuracy.json``).

For every VI method: median seconds per iteration, iterations, total seconds, converged flag,
MAE of ``E_q[theta] E_q[phi]`` to the true rates, and the exact collapsed bound of its Gamma
factors (:func:`lpp.vi.collapsed_bound`; one scale for all methods). Numba's compilation is
excluded (a small fit first). The paper's own numbers are printed beside ours: MCMC MAE 0.36
at 0.8 s per iteration, VI MAE 0.52 at 2.8 s per iteration (about 100 iterations).

Writes ``bench/results/vi.json`` atomically (the parts run replace their entries); ``--quick``
runs a tiny version and writes nothing.
"""
from __future__ import annotations

import json
import os
import sys
import time

import numba
import numpy as np

from bench import RESULTS, machine, write_results
from bench.accuracy import _anytime_curve
from bench.sweep import _median_sweep, cpu_model, text_data, vi_data
from lpp.inference import GibbsSampler, TopicModel
from lpp.vi import GammaFactor, collapsed_bound, fit_variational
from lpp.vi.benchmark import PAPER_NUMBERS

N, K, EPS = 1000, 50, 1.0
MCMC_BUDGET = 30.0
METHODS = {"collapsed": "collapsed", "paper": "bessel-mode", "naive": "naive",
           "truth": "collapsed"}


def _sizes(quick):
    return (120, 5) if quick else (N, K)


def _load():
    return [round(x, 2) for x in os.getloadavg()]


def _mae(a, b):
    return float(np.mean(np.abs(a - b)))


def part_vi(name, quick=False):
    n, k = _sizes(quick)
    y_tilde, alpha, theta, phi, info = vi_data(n, k, EPS)
    mu = theta @ phi
    method = METHODS[name]
    fit_variational(y_tilde[:60, :60], alpha, TopicModel(k), method=method, rng=2, max_iter=3)
    init = None
    if name == "truth":
        init = {n: GammaFactor(np.full(x.shape, 100.0), 100.0 / x)
                for n, x in (("theta", theta), ("phi", phi))}
    load = _load()
    res = fit_variational(y_tilde, alpha, TopicModel(k), method=method, rng=1, init=init)
    out = {"method": method, "engine": res.engine, "iterations": res.iterations,
           "converged": res.converged, "tol": res.tol, "max_iter": res.max_iter,
           "seconds": res.seconds, "start_seconds": res.start_seconds,
           "median_iteration_seconds": float(np.median(res.iter_seconds)),
           "mae": _mae(res.mu_hat, mu), "final_objective": float(res.objective[-1]),
           "collapsed_bound": collapsed_bound(y_tilde, alpha, TopicModel(k), res.q),
           "threads": numba.get_num_threads(), "load_before": load, "load_after": _load(),
           "D": n, "K": k, "epsilon_over_n": EPS, **info}
    print(f"{name:>10s} ({method}): {res.iterations} iterations, "
          f"{out['median_iteration_seconds']:.3f} s/iteration, {res.seconds:.1f} s "
          f"({res.start_seconds:.1f} s of them the EM-like start), "
          f"converged {res.converged}, MAE {out['mae']:.4f}, "
          f"collapsed bound {out['collapsed_bound']:.6g}", flush=True)
    return out, res


def part_engines(quick=False):
    from lpp.vi.driver import _CollapsedEngine, _prepare

    n, k = _sizes(quick)
    out = {}
    for data_name, make in (("vi", vi_data), ("text", text_data)):
        y_tilde, alpha, _, _, info = make(n, k, EPS)
        adapter, obs = _prepare(TopicModel(k), y_tilde.shape, None)
        alpha_full = np.full(y_tilde.shape, alpha)
        row = {"positive_fraction": info["positive_fraction"]}
        q = fit_variational(y_tilde, alpha, TopicModel(k), rng=1, max_iter=1, em_sweeps=5).q
        for sparse in (True, False):
            engine = "sparse" if sparse else "dense"
            private = _CollapsedEngine(adapter, y_tilde, alpha_full, obs, True, sparse)
            naive = _CollapsedEngine(adapter, np.maximum(y_tilde, 0), None, obs, False, sparse)
            state = {"point": adapter.model.sample_prior(y_tilde.shape, 1)}

            def start_sweep():
                state["point"] = naive.expectation_sweep(state["point"])

            row[f"{engine}_start_sweep_s"] = _median_sweep(start_sweep, 2, 5)[0]
            row[f"{engine}_iteration_s"] = _median_sweep(lambda: private.iterate(q), 2, 5)[0]
        row["dense_vs_sparse_iteration"] = row["dense_iteration_s"] / row["sparse_iteration_s"]
        row["dense_vs_sparse_start"] = row["dense_start_sweep_s"] / row["sparse_start_sweep_s"]
        out[data_name] = row
        print(f"engines on {data_name} data ({row['positive_fraction']:.0%} positive): "
              f"iteration sparse {row['sparse_iteration_s']:.3f} s, dense "
              f"{row['dense_iteration_s']:.3f} s (ratio {row['dense_vs_sparse_iteration']:.2f}); "
              f"start sweep sparse {row['sparse_start_sweep_s']:.3f} s, dense "
              f"{row['dense_start_sweep_s']:.3f} s "
              f"(ratio {row['dense_vs_sparse_start']:.2f})", flush=True)
    out["threads"] = numba.get_num_threads()
    return out


def part_mcmc(quick=False, vi=None):
    n, k = _sizes(quick)
    budget = 3.0 if quick else MCMC_BUDGET
    y_tilde, alpha, theta, phi, info = vi_data(n, k, EPS)
    mu = theta @ phi
    if vi is None:
        vi = part_vi("collapsed", quick)[1]
    GibbsSampler.private(y_tilde[:150, :150], alpha, TopicModel(k), rng=2).sweep()
    start = time.perf_counter()
    sampler = GibbsSampler.private(y_tilde, alpha, TopicModel(k), rng=1, init=vi.to_init())
    kept = []
    while True:
        sampler.sweep()
        elapsed = time.perf_counter() - start
        kept.append([sampler.iteration, elapsed + vi.seconds, sampler.state["theta"],
                     sampler.state["phi"]])
        if elapsed >= budget:
            break
    curve = _anytime_curve(kept, mu) if len(kept) >= 10 else []
    out = {"vi_seconds": vi.seconds, "vi_mae": _mae(vi.mu_hat, mu), "budget_seconds": budget,
           "iterations": sampler.iteration, "engine": sampler.engine, "curve": curve,
           "threads": numba.get_num_threads()}
    path = RESULTS / "accuracy.json"
    if path.exists() and not quick:
        converged = json.loads(path.read_text())["long"]["collapsed"]["mae_all"]
        hit = [c for c in curve if c["mae"] <= 1.05 * converged]
        out["converged_mcmc_mae"] = converged
        out["seconds_to_within_5pct"] = hit[0]["seconds"] if hit else None
    last = curve[-1]["mae"] if curve else float("nan")
    print(f"VI-started MCMC: VI {vi.seconds:.1f} s (MAE {out['vi_mae']:.4f}), then "
          f"{sampler.iteration} sweeps in {budget:.0f} s; anytime MAE {last:.4f}; within 5% of "
          f"the converged MCMC MAE after {out.get('seconds_to_within_5pct')} s", flush=True)
    return out


def print_table(results):
    print("\nmethod                   s/iteration  iterations   seconds     MAE   "
          "| Schofield et al.")
    for name in METHODS:
        r = results.get(name)
        if r is None:
            continue
        theirs = (f"{PAPER_NUMBERS['vi_seconds_per_iteration']:.1f} s/it, "
                  f"MAE {PAPER_NUMBERS['vi_mae']}" if name == "paper" else "")
        label = "collapsed VI from truth" if name == "truth" else name + " VI"
        print(f"{label:<24s} {r['median_iteration_seconds']:10.3f} {r['iterations']:10d} "
              f"{r['seconds']:9.1f} {r['mae']:8.4f}   | {theirs}")
    m = results.get("mcmc")
    if m:
        last = m["curve"][-1] if m["curve"] else {"mae": float("nan"), "seconds": float("nan")}
        print(f"{'VI-started MCMC':<24s} {'':>10s} {m['iterations']:10d} {last['seconds']:9.1f} "
              f"{last['mae']:8.4f}   | MCMC {PAPER_NUMBERS['mcmc_seconds_per_iteration']} s/it, "
              f"MAE {PAPER_NUMBERS['mcmc_mae']}")


def main(argv):
    quick = "--quick" in argv
    parts = ["engines", "collapsed", "paper", "naive", "truth", "mcmc"]
    chosen = [p for p in parts if p in argv] or parts
    path = RESULTS / "vi.json"
    results = json.loads(path.read_text()) if path.exists() and not quick else {}
    results["machine"] = {**machine(), "cpu_model": cpu_model()}
    results["paper_numbers"] = PAPER_NUMBERS
    collapsed_fit = None
    for name in chosen:
        if name == "mcmc":
            results[name] = part_mcmc(quick, collapsed_fit)
        elif name == "engines":
            results[name] = part_engines(quick)
        else:
            results[name], fit = part_vi(name, quick)
            if name == "collapsed":
                collapsed_fit = fit
        if not quick:
            write_results("vi", results)
    print_table(results)
    if not quick:
        print(f"wrote {RESULTS / 'vi.json'}")


if __name__ == "__main__":
    main(sys.argv[1:])
