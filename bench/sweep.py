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
* ``large`` — 10 000 x 10 000, K = 50, epsilon/N = 1 (text-like data) in a fresh subprocess:
  24 sweeps through ``fit_private`` (the last two saved, so ``mu_hat`` and the log joint are
  formed), with the process's peak resident memory (``ru_maxrss``, data generation included).

Every time is the median of timed sweeps after warm-up sweeps (numba's compilation excluded).
The machine is shared: the load average before and after each part is recorded. Writes
``bench/results/sweep.json`` (the parts run this time replace their entries).
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

from bench import RESULTS, machine, write_results
from lpp.inference import GibbsSampler, TopicModel, fit_private
from lpp.mechanism import privatize

#: rows generated at a time (bounds the temporary float arrays of the generator)
_GEN_ROWS = 500


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def _generate(n_docs, n_words, k, eps, seed, theta_shape, theta_rate, phi_shape, phi_rate):
    """``theta ~ Gamma(theta_shape, rate theta_rate)``, ``phi`` likewise, ``y ~ Pois(theta phi)``,
    privatized at ``alpha = exp(-eps)``; generated in row blocks. Returns the true rates only for
    small problems (they are needed for MAE)."""
    rng = np.random.default_rng(seed)
    theta = rng.gamma(theta_shape, 1.0 / theta_rate, (n_docs, k))
    phi = rng.gamma(phi_shape, 1.0 / phi_rate, (k, n_words))
    alpha = float(np.exp(-eps))
    y_tilde = np.empty((n_docs, n_words), dtype=np.int64)
    nonzero = 0
    for lo in range(0, n_docs, _GEN_ROWS):
        y = rng.poisson(theta[lo:lo + _GEN_ROWS] @ phi)
        nonzero += int(np.count_nonzero(y))
        y_tilde[lo:lo + _GEN_ROWS] = privatize(y, alpha, rng=rng)
    info = {"true_nonzero_fraction": nonzero / y_tilde.size,
            "positive_fraction": float(np.count_nonzero(y_tilde > 0) / y_tilde.size)}
    return y_tilde, alpha, theta, phi, info


def vi_data(n, k, eps, seed=0):
    """The VI paper's synthetic benchmark (Schofield et al., appendix E): factors from a Gamma
    prior; shape 0.2, scale 1 as in the authors' ``bptf/code/test.py`` (the paper does not print
    them). Dense true counts: at K = 50 about 74% of the entries are non-zero."""
    return _generate(n, n, k, eps, seed, 0.2, 1.0, 0.2, 1.0)


def text_data(n, k, eps, seed=0):
    """Text-like data: ``theta ~ Gamma(0.1, rate 1)``, ``phi ~ Gamma(0.1, rate 10)`` — a few
    percent of the true counts are non-zero, as in document-word matrices."""
    return _generate(n, n, k, eps, seed, 0.1, 1.0, 0.1, 10.0)


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
    from bench.reference_numpy import NumpyBesselTopicSampler

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
    res = fit_private(y_tilde, alpha, TopicModel(k), n_iter=n_iter, burn_in=n_iter - 2,
                      rng=1, progress=False)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    secs = res.iter_seconds.tolist()
    print(json.dumps({"D": n, "V": n, "K": k, "epsilon_over_n": eps, **info,
                      "engine": res.engine, "generate_seconds": t_gen, "iter_seconds": secs,
                      "early_sweep_median": float(np.median(secs[1:6])),
                      "unsaved_sweep_median": float(np.median(secs[n_iter - 12:n_iter - 2])),
                      "saved_sweep_seconds": secs[-2:], "peak_rss_bytes": rss,
                      "threads": numba.get_num_threads()}))


def part_large(quick=False):
    n, n_iter = (2000, 14) if quick else (10000, 24)
    load_before = _load()
    proc = subprocess.run([sys.executable, "-c",
                           f"from bench.sweep import _large_child; _large_child({n}, 50, 1.0, "
                           f"{n_iter})"], capture_output=True, text=True, check=True)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out.update({"load_before": load_before, "load_after": _load()})
    print(f"\n{n} x {n}, K = 50, epsilon/N = 1 (text data, {out['positive_fraction']:.1%} "
          f"positive): sweep {out['unsaved_sweep_median']:.2f} s (sweeps 2-6: "
          f"{out['early_sweep_median']:.2f} s), saved sweeps "
          f"{out['saved_sweep_seconds']}, peak RSS {out['peak_rss_bytes'] / 2**30:.2f} GiB")
    return out


PARTS = {"numpy": part_numpy, "scaling": part_scaling, "large": part_large}


def main(argv):
    quick = "--quick" in argv
    chosen = [p for p in PARTS if p in argv] or list(PARTS)
    path = RESULTS / "sweep.json"
    results = json.loads(path.read_text()) if path.exists() and not quick else {}
    results["machine"] = {**machine(), "cpu_model": cpu_model()}
    for name in chosen:
        results[name] = PARTS[name](quick)
    if not quick:
        print(f"wrote {write_results('sweep', results)}")


if __name__ == "__main__":
    main(sys.argv[1:])
