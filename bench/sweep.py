"""Seconds per Gibbs sweep of the private topic model: scaling, the NumPy baseline, 10k x 10k.

Parts (``python -m bench.sweep [scaling] [numpy] [large] [--quick]``; all three by default):

* ``numpy`` — 1000 x 1000, K = 50, epsilon/N = 1 on the VI paper's synthetic data
  (:func:`vi_data`): the NumPy reference of the paper's Bessel sweep
  (:mod:`bench.reference_numpy`) against this package's ``collapsed`` (sparse engine),
  ``collapsed`` (dense engine) and ``bessel`` samplers, all timed in the same process, so the
  ratios are like for like.
* ``scaling`` — D = V in {1000, 3000, 10000}, K in {20, 50}, epsilon/N in {1, 3}, 1 and 2
  threads, sparse collapsed engine, on text-like data (:func:`text_data`) and, for D = 1000,
  also on the VI data. After 10 warm-up sweeps (4 at D = 10,000: a chain started from the data
  costs more in its first sweeps, while its rates on the noise entries are still high), the
  timed 1- and 2-thread sweeps alternate, so both see the same stretch of the chain.
* ``large`` — 10 000 x 10 000, K = 50, text-like data, epsilon/N in {1, 2, 3}, each in a
  fresh subprocess: seconds per sweep of ours (``collapsed``), ``naive`` and, at epsilon/N = 1,
  the non-private chain on the true counts, against the *floor kernel* (:mod:`bench.floor`: one
  K-term dot product and one uniform per positive entry of ``y_tilde``, plus the Gamma
  updates), which is the yardstick, timed in alternating rounds on one thread and on the
  machine's threads (ratios within one process); the non-private chain on a sparser matrix
  (about 1.1 % non-zero, as the Enron paper matrix); and 24 sweeps through ``fit_private`` at
  epsilon/N = 1 (the last two saved, so ``mu_hat`` and the log joint are formed) with the
  process's peak resident memory (``ru_maxrss``, data generation included). ``--quick``: the
  same at 600 x 600.

Every time is the median of timed sweeps after warm-up sweeps (numba's compilation excluded).
The machine is shared: the load average before and after each part is recorded. Writes
``bench/results/sweep.json``: the parts run this time replace their entries, each with the
machine it ran on.
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

import numba
import numpy as np

from bench import write_parts
from bench.floor import FloorKernel
from bench.reference_numpy import NumpyBesselTopicSampler
from bench.tables import level_by_threads
from lpp.inference import GibbsSampler, RunOptions, TopicModel, fit_private
from lpp.mechanism import privatize

#: rows generated at a time (bounds the temporary float arrays of the generator)
_GEN_ROWS = 500


def _generate(n_docs, n_words, k, eps, seed, theta_shape, theta_rate, phi_shape, phi_rate,
              true_counts=None):
    """``theta ~ Gamma(theta_shape, rate theta_rate)``, ``phi`` likewise, ``y ~ Pois(theta phi)``,
    privatized at ``alpha = exp(-eps)``; generated in row blocks. The true counts are written
    into ``true_counts`` when it is given (a D x V int64 array)."""
    rng = np.random.default_rng(seed)
    theta = rng.gamma(theta_shape, 1.0 / theta_rate, (n_docs, k))
    phi = rng.gamma(phi_shape, 1.0 / phi_rate, (k, n_words))
    alpha = float(np.exp(-eps))
    y_tilde = np.empty((n_docs, n_words), dtype=np.int64)
    nonzero = 0
    for lo in range(0, n_docs, _GEN_ROWS):
        y = rng.poisson(theta[lo:lo + _GEN_ROWS] @ phi)
        nonzero += int(np.count_nonzero(y))
        if true_counts is not None:
            true_counts[lo:lo + _GEN_ROWS] = y
        y_tilde[lo:lo + _GEN_ROWS] = privatize(y, alpha, rng=rng)
    info = {"true_nonzero_fraction": nonzero / y_tilde.size,
            "positive_fraction": float(np.count_nonzero(y_tilde > 0) / y_tilde.size)}
    return y_tilde, alpha, theta, phi, info


def vi_data(n, k, eps, seed=0):
    """The VI paper's synthetic benchmark (Schofield et al., appendix E): factors from a Gamma
    prior; shape 0.2, scale 1 as in the authors' ``bptf/code/test.py`` (the paper does not print
    them). Dense true counts: at K = 50 about 74% of the entries are non-zero."""
    return _generate(n, n, k, eps, seed, 0.2, 1.0, 0.2, 1.0)


def text_data(n, k, eps, seed=0, true_counts=None):
    """Text-like data: ``theta ~ Gamma(0.1, rate 1)``, ``phi ~ Gamma(0.1, rate 10)`` — a few
    percent of the true counts are non-zero, as in document-word matrices."""
    return _generate(n, n, k, eps, seed, 0.1, 1.0, 0.1, 10.0, true_counts)


def sparse_text_data(n, k, eps, seed=0, true_counts=None):
    """Sparser text-like data, ``phi ~ Gamma(0.1, rate 45)``: about 1.1 % of the true counts
    are non-zero, as in the Enron paper matrix."""
    return _generate(n, n, k, eps, seed, 0.1, 1.0, 0.1, 45.0, true_counts)


def _median_sweep(sweep, n_warm, n_timed):
    for _ in range(n_warm):
        sweep()
    times = []
    for _ in range(n_timed):
        t0 = time.perf_counter()
        sweep()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), times


def _load():
    return [round(x, 2) for x in os.getloadavg()]


# ---------------------------------------------------------------------------------------------

def part_numpy(quick=False):
    n, k, eps = (300, 20, 1.0) if quick else (1000, 50, 1.0)
    y_tilde, alpha, _, _, info = vi_data(n, k, eps)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    load_before = _load()
    rows = []
    ref = NumpyBesselTopicSampler(y_tilde, alpha, k, seed=1)
    t_ref, all_ref = _median_sweep(ref.sweep, 1, 3)
    rows.append({"sampler": "numpy reference (bessel)", "seconds": t_ref, "all": all_ref})
    for label, method, sparse in (("lpp collapsed, sparse engine", "collapsed", None),
                                  ("lpp collapsed, dense engine", "collapsed", False),
                                  ("lpp bessel (dense)", "bessel", None)):
        sampler = GibbsSampler.private(y_tilde, alpha, TopicModel(k), method=method, rng=1,
                                       sparse=sparse)
        t, all_t = _median_sweep(sampler.sweep, 2, 5)
        rows.append({"sampler": label, "engine": sampler.engine, "seconds": t, "all": all_t})
    for r in rows:
        r["speedup_vs_numpy"] = t_ref / r["seconds"]
    out = {"D": n, "V": n, "K": k, "epsilon_over_n": eps, "data": "vi", **info,
           "threads": numba.get_num_threads(), "load_before": load_before,
           "load_after": _load(), "rows": rows}
    print(f"\nNumPy baseline, {n} x {n}, K = {k}, epsilon/N = {eps} (VI data; "
          f"{info['positive_fraction']:.0%} positive), {out['threads']} threads")
    for r in rows:
        print(f"  {r['sampler']:<32s} {r['seconds']:8.3f} s   x{r['speedup_vs_numpy']:6.1f}")
    return out


def part_scaling(quick=False):
    sizes = [300, 600] if quick else [1000, 3000, 10000]
    cells = []
    load_before = _load()
    for data_name, make in (("text", text_data), ("vi", vi_data)):
        for n in sizes:
            if data_name == "vi" and n != sizes[0]:
                continue
            for k in (20, 50):
                for eps in (1.0, 3.0):
                    y_tilde, alpha, _, _, info = make(n, k, eps)
                    sampler = GibbsSampler.private(y_tilde, alpha, TopicModel(k), rng=1)
                    del y_tilde
                    n_warm, n_timed = (4, 3) if n >= 10000 else (10, 5)
                    numba.set_num_threads(2)
                    for _ in range(n_warm):  # past the first sweeps' transient
                        sampler.sweep()
                    times = {1: [], 2: []}
                    for _ in range(n_timed):  # alternate, so both see the same chain states
                        for threads in (1, 2):
                            numba.set_num_threads(threads)
                            t0 = time.perf_counter()
                            sampler.sweep()
                            times[threads].append(time.perf_counter() - t0)
                    for threads, all_t in times.items():
                        t = float(np.median(all_t))
                        cells.append({"data": data_name, "D": n, "V": n, "K": k,
                                      "epsilon_over_n": eps, "threads": threads, "seconds": t,
                                      "all": all_t, "warm_up_sweeps": n_warm,
                                      "engine": sampler.engine, **info})
                        print(f"  {data_name:4s} {n:>6d} K={k:<3d} eps/N={eps:<3g} "
                              f"thr={threads}  {t:8.4f} s  (positive "
                              f"{info['positive_fraction']:.1%})", flush=True)
                    del sampler
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return {"cells": cells, "load_before": load_before, "load_after": _load()}


def _large_child(n, k, eps, n_iter):
    """Runs in a fresh process: generate, fit ``n_iter`` sweeps (the last two saved), report
    times and peak memory. ``early_sweep_median``: sweeps 2-6, still in the start's transient
    (the first compiles); ``unsaved_sweep_median``: the last ten unsaved sweeps."""
    t0 = time.perf_counter()
    y_tilde, alpha, _, _, info = text_data(n, k, eps)
    t_gen = time.perf_counter() - t0
    res = fit_private(y_tilde, alpha, TopicModel(k),
                      run=RunOptions(n_iter=n_iter, burn_in=n_iter - 2, progress=False), rng=1)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    secs = res.iter_seconds.tolist()
    print(json.dumps({"D": n, "V": n, "K": k, "epsilon_over_n": eps, **info,
                      "engine": res.engine, "generate_seconds": t_gen, "iter_seconds": secs,
                      "early_sweep_median": float(np.median(secs[1:6])),
                      "unsaved_sweep_median": float(np.median(secs[n_iter - 12:n_iter - 2])),
                      "saved_sweep_seconds": secs[-2:], "peak_rss_bytes": rss,
                      "threads": numba.get_num_threads()}))


def _seconds(call) -> float:
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


def _timed_chain(sampler, n_warm, n_timed):
    median, times = _median_sweep(sampler.sweep, n_warm, n_timed)
    return {"engine": sampler.engine, "seconds": median, "all": times}


def _engines_child(n, k, eps, n_warm, n_timed, nonprivate, data="text"):
    """Runs in a fresh process: on one data set, the median seconds per sweep of every method
    (sweeps after ``n_warm`` warm-up sweeps from the data start) and of the floor kernel
    (:mod:`bench.floor`) at the collapsed chain's point, at the machine's threads and (in
    ``one_thread``) at one. The private chains and the floor are timed in alternating rounds
    (ours, the floor at ours' point, naive; each thread count in turn; a chain's draws do not
    depend on its threads), so that a change in the machine's speed during the run reaches all
    of them alike and their ratios hold."""
    make = {"text": text_data, "sparse_text": sparse_text_data}[data]
    y = np.empty((n, n), dtype=np.int64) if nonprivate else None
    y_tilde, alpha, _, _, info = make(n, k, eps, true_counts=y)
    out = {"D": n, "V": n, "K": k, "epsilon_over_n": eps, "data": data, **info,
           "threads": numba.get_num_threads(), "warm_up_sweeps": n_warm}
    if nonprivate:
        chain = GibbsSampler.nonprivate(y, TopicModel(k), rng=1)
        out["nonprivate"] = _timed_chain(chain, n_warm, n_timed)
        del chain, y
        if data != "text":  # the sparse matrix is there for the non-private chain alone
            return out
    ours = GibbsSampler.private(y_tilde, alpha, TopicModel(k), rng=1)
    naive = GibbsSampler.private(y_tilde, alpha, TopicModel(k), method="naive", rng=1)
    floor = FloorKernel(y_tilde)
    for _ in range(n_warm):
        ours.sweep()
        naive.sweep()
    floor.sweep(ours.model, ours.state, ours.observed)  # compile
    most = numba.get_num_threads()
    times = {threads: {"collapsed": [], "floor": [], "floor_entries": [], "naive": []}
             for threads in sorted({1, most})}
    for i in range(n_timed):
        for threads, at in times.items():
            numba.set_num_threads(threads)
            at["collapsed"].append(_seconds(ours.sweep))
            whole, entries = floor.time_once(ours.model, ours.state, ours.observed, i)
            at["floor"].append(whole)
            at["floor_entries"].append(entries)
            at["naive"].append(_seconds(naive.sweep))
    numba.set_num_threads(most)
    for threads, at in times.items():
        part = {name: {"engine": chain.engine, "seconds": float(np.median(at[name])),
                       "all": at[name]} for name, chain in (("collapsed", ours), ("naive", naive))}
        part["floor"] = {"seconds": float(np.median(at["floor"])),
                         "entry_pass_seconds": float(np.median(at["floor_entries"])),
                         "all": at["floor"], "entries": floor.nnz}
        if threads == most:
            out.update(part)
        else:
            out["one_thread"] = part
    return out


def _run_child(code: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def part_large(quick=False):
    """Every method's sweep at 10,000 x 10,000, K = 50 (text-like data), against the floor:
    one fresh process per noise level (the non-private chain on the true counts with
    epsilon/N = 1), one for the sparser matrix, one for the private fit's peak memory."""
    n, k, n_iter = (600, 50, 14) if quick else (10000, 50, 24)
    n_warm, n_timed = (2, 3) if quick else (12, 7)
    load_before = _load()
    levels = []
    for eps in (1.0, 2.0, 3.0):
        levels.append(_run_child(
            f"import json; from bench.sweep import _engines_child; print(json.dumps("
            f"_engines_child({n}, {k}, {eps}, {n_warm}, {n_timed}, {eps == 1.0})))"))
    sparse = _run_child(
        f"import json; from bench.sweep import _engines_child; print(json.dumps("
        f"_engines_child({n}, {k}, 1.0, {n_warm}, {n_timed}, True, 'sparse_text')))")
    fit = _run_child(f"from bench.sweep import _large_child; _large_child({n}, {k}, 1.0, "
                     f"{n_iter})")
    out = {"levels": levels, "sparse_nonprivate": sparse, "private_fit": fit,
           "load_before": load_before, "load_after": _load()}
    print(f"\n{n} x {n}, K = {k}, text-like data; median s per sweep of {n_timed} alternating "
          f"rounds after {n_warm} warm-up sweeps. The floor: one {k}-term dot product "
          "theta[d] . phi[:, v] and one uniform draw per positive entry of y_tilde, plus the "
          "Gamma updates of phi and theta")
    print(f"  {'eps/N':>5s} {'threads':>7s} {'positive':>8s} {'floor':>7s} {'ours':>7s} "
          f"{'ours/floor':>10s} {'naive':>7s} {'naive/ours':>10s} {'nonprivate':>10s}")
    for lv in levels:
        for threads, part in level_by_threads(lv).items():
            floor, ours, naive = (part["floor"]["seconds"], part["collapsed"]["seconds"],
                                  part["naive"]["seconds"])
            nonprivate = (f"{part['nonprivate']['seconds']:10.3f}"
                          if "nonprivate" in part else " " * 10)
            print(f"  {lv['epsilon_over_n']:5g} {threads:7d} {lv['positive_fraction']:8.1%} "
                  f"{floor:7.3f} {ours:7.3f} {ours / floor:10.2f} {naive:7.3f} "
                  f"{naive / ours:10.2f} {nonprivate}")
    print(f"  non-private on a sparser matrix ({sparse['true_nonzero_fraction']:.1%} of the "
          f"true counts non-zero): {sparse['nonprivate']['seconds']:.3f} s per sweep "
          f"(engine {sparse['nonprivate']['engine']})")
    print(f"  private fit (fit_private, eps/N = 1, {n_iter} sweeps, the last two saved): sweep "
          f"{fit['unsaved_sweep_median']:.2f} s (sweeps 2-6: {fit['early_sweep_median']:.2f} "
          f"s), peak RSS {fit['peak_rss_bytes'] / 2**30:.2f} GiB")
    print(f"  load average before {out['load_before']}, after {out['load_after']}")
    return out


PARTS = {"numpy": part_numpy, "scaling": part_scaling, "large": part_large}


def main(argv):
    quick = "--quick" in argv
    chosen = [p for p in PARTS if p in argv] or list(PARTS)
    results = {name: PARTS[name](quick) for name in chosen}
    if not quick:
        print(f"wrote {write_parts('sweep', results)}")


if __name__ == "__main__":
    main(sys.argv[1:])
