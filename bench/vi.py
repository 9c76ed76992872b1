"""Variational inference against MCMC on the VI paper's benchmark: seconds per iteration, MAE.

Data: :func:`bench.sweep.vi_data` — 1000 x 1000, K = 50, epsilon/N = 1 (Schofield et al.,
appendix E). Parts (``python -m bench.vi [collapsed] [paper] [naive] [truth] [mcmc]
[--quick]``; all by default; each part but ``mcmc`` stays within about two minutes on two
cores, ``mcmc`` takes three times ``MCMC_BUDGET``):

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
* ``mcmc`` — the collapsed Gibbs sampler from three starts, each for ``MCMC_BUDGET`` seconds
  of wall time with its start on the clock: ``data`` (the default), ``em`` (200 expectation
  sweeps) and ``vi`` (the collapsed CAVI's means, ``init=result.to_init()``, the CAVI's time
  included). For each, the anytime MAE against the time, of two running estimates (the average
  of the second half of the iterations so far, and of all of them), and the time each first
  comes within 5% of the converged MCMC MAE (:func:`bench.accuracy.converged_mae`, the mean of
  the long chains in ``bench/results/accuracy.json``), and the sweeps per effective sample of the
  rates (ArviZ's ESS at ``ESS_ENTRIES`` random entries, second half of the chain).

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

from bench import RESULTS, record_part, write_results
from bench.accuracy import _anytime_curve, converged_mae, first_within
from bench.paper_numbers import PAPER_NUMBERS
from bench.sweep import _median_sweep, text_data, vi_data
from lpp.inference import GibbsSampler, TopicModel
from lpp.inference.privacy import noise_levels
from lpp.vi import GammaFactor, VIOptions, collapsed_bound, fit_variational
from lpp.vi.driver import CollapsedEngine, prepare_fit

N, K, EPS = 1000, 50, 1.0
#: wall-clock seconds per start of the Gibbs chain (its start included)
MCMC_BUDGET = 120.0
MCMC_STARTS = ("data", "em", "vi")
#: random entries whose rates measure the chains' mixing
ESS_ENTRIES = 2000
METHODS = {"collapsed": "collapsed", "paper": "bessel", "naive": "naive",
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
    fit_variational(y_tilde[:60, :60], alpha, TopicModel(k), method=method, rng=2,
                    run=VIOptions(max_iter=3))
    init = None
    if name == "truth":
        init = {n: GammaFactor(np.full(x.shape, 100.0), 100.0 / x)
                for n, x in (("theta", theta), ("phi", phi))}
    load = _load()
    res = fit_variational(y_tilde, alpha, TopicModel(k), method=method, rng=1,
                          run=VIOptions(init=init))
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
    n, k = _sizes(quick)
    out = {}
    for data_name, make in (("vi", vi_data), ("text", text_data)):
        y_tilde, alpha, _, _, info = make(n, k, EPS)
        adapter, obs = prepare_fit(TopicModel(k), y_tilde.shape, None)
        levels = noise_levels(alpha, y_tilde.shape)
        row = {"positive_fraction": info["positive_fraction"]}
        q = fit_variational(y_tilde, alpha, TopicModel(k), rng=1,
                            run=VIOptions(max_iter=1, em_sweeps=5)).q
        for sparse in (True, False):
            engine = "sparse" if sparse else "dense"
            private = CollapsedEngine(adapter, y_tilde, levels, obs, True, sparse)
            naive = CollapsedEngine(adapter, np.maximum(y_tilde, 0), None, obs, False, sparse)
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


def _mixing(kept, n_entries):
    """Sweeps per effective sample of the rates: ArviZ's bulk ESS of ``mu`` at ``n_entries``
    random entries over the second half of the chain (its median and quartiles)."""
    import arviz  # noqa: PLC0415 (optional, lpp[diagnostics]: only the mcmc part needs it)

    rng = np.random.default_rng(0)
    theta0, phi0 = kept[0][2], kept[0][3]
    rows = rng.integers(theta0.shape[0], size=n_entries)
    cols = rng.integers(phi0.shape[1], size=n_entries)
    half = kept[len(kept) // 2:]
    if len(half) < 20:
        return {}
    draws = np.array([np.einsum("ik,ki->i", theta[rows], phi[:, cols])
                      for _, _, theta, phi in half])
    ess = np.asarray(arviz.ess(arviz.convert_to_dataset(draws[None]))["x"]).ravel()
    per = len(half) / ess
    return {"ess_draws": len(half), "sweeps_per_effective_sample": float(np.median(per)),
            "sweeps_per_effective_sample_quartiles": [float(np.quantile(per, 0.25)),
                                                      float(np.quantile(per, 0.75))]}


def part_mcmc(quick=False, vi=None):
    """The collapsed Gibbs sampler from three starts, each for the same wall-clock budget with
    its start on the clock: ``data`` (the default), ``em`` (200 expectation sweeps) and ``vi``
    (the collapsed CAVI's means, the CAVI's own time included)."""
    n, k = _sizes(quick)
    budget = 1.0 if quick else MCMC_BUDGET
    y_tilde, alpha, theta, phi, info = vi_data(n, k, EPS)
    mu = theta @ phi
    if vi is None:
        vi = part_vi("collapsed", quick)[1]
    GibbsSampler.private(y_tilde[:150, :150], alpha, TopicModel(k), rng=2).sweep()
    path = RESULTS / "accuracy.json"
    converged = (converged_mae(json.loads(path.read_text()))
                 if path.exists() and not quick else None)
    out = {"vi_seconds": vi.seconds, "vi_mae": _mae(vi.mu_hat, mu), "budget_seconds": budget,
           "converged_mcmc_mae": converged, "threads": numba.get_num_threads(),
           "load_before": _load()}
    for start in MCMC_STARTS:
        clock = time.perf_counter()
        init = vi.to_init() if start == "vi" else start
        sampler = GibbsSampler.private(y_tilde, alpha, TopicModel(k), rng=1, init=init)
        start_seconds = time.perf_counter() - clock + (vi.seconds if start == "vi" else 0.0)
        clock = time.perf_counter()
        kept = []
        while True:
            sampler.sweep()
            elapsed = time.perf_counter() - clock + start_seconds
            kept.append([sampler.iteration, elapsed, sampler.state["theta"],
                         sampler.state["phi"]])
            if elapsed >= budget:
                break
        curve = _anytime_curve(kept, mu) if len(kept) >= 10 else []
        run = {"start_seconds": start_seconds, "iterations": sampler.iteration,
               "engine": sampler.engine, "curve": curve, **_mixing(kept, ESS_ENTRIES)}
        del kept
        if converged is not None:
            for key in ("mae", "mae_from_start"):
                run[f"seconds_to_within_5pct_{key}"] = first_within(curve, 1.05 * converged,
                                                                    key)
        out[start] = run
        last = curve[-1] if curve else {"mae": float("nan"), "mae_from_start": float("nan")}
        print(f"MCMC from {start!r}: start {start_seconds:.1f} s, {sampler.iteration} sweeps in "
              f"{budget:.0f} s; running MAE {last['mae']:.4f} (second half), "
              f"{last['mae_from_start']:.4f} (all sweeps); within 5% of the converged "
              f"{converged} after {run.get('seconds_to_within_5pct_mae')} / "
              f"{run.get('seconds_to_within_5pct_mae_from_start')} s; "
              f"{run.get('sweeps_per_effective_sample', float('nan')):.1f} sweeps per effective "
              "sample of the rates", flush=True)
    out["load_after"] = _load()
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
    for start in MCMC_STARTS if m else ():
        run = m.get(start)
        if run is None or not run["curve"]:
            continue
        last = run["curve"][-1]
        label = f"MCMC from {start!r}"
        print(f"{label:<24s} {'':>10s} {run['iterations']:10d} {last['seconds']:9.1f} "
              f"{last['mae_from_start']:8.4f}   | MCMC "
              f"{PAPER_NUMBERS['mcmc_seconds_per_iteration']} s/it, "
              f"MAE {PAPER_NUMBERS['mcmc_mae']}")


def main(argv):
    quick = "--quick" in argv
    parts = ["engines", "collapsed", "paper", "naive", "truth", "mcmc"]
    chosen = [p for p in parts if p in argv] or parts
    path = RESULTS / "vi.json"
    results = json.loads(path.read_text()) if path.exists() and not quick else {}
    results["paper_numbers"] = PAPER_NUMBERS
    collapsed_fit = None
    for name in chosen:
        if name == "mcmc":
            part = part_mcmc(quick, collapsed_fit)
        elif name == "engines":
            part = part_engines(quick)
        else:
            part, fit = part_vi(name, quick)
            if name == "collapsed":
                collapsed_fit = fit
        record_part(results, name, part)
        if not quick:
            write_results("vi", results)
    print_table(results)
    if not quick:
        print(f"wrote {RESULTS / 'vi.json'}")


if __name__ == "__main__":
    main(sys.argv[1:])
