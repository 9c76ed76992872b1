"""Seconds per Gibbs iteration of the topic model: collapsed vs bessel vs naive, 1 vs 2 threads.

Data: ``mu = theta @ phi`` with theta, phi ~ Gamma(0.2, rate 1) (mean count 0.04 K), ``y ~
Pois(mu)``, privatized at ``epsilon / N = 1`` (alpha = e^-1). Each cell is the median over
timed sweeps after one warm-up sweep (compilation excluded); "privacy" and "model" split the
sweep into the privacy step and allocation + factor updates + rates (with the sparse engine of
``collapsed`` the privacy draw is fused into the allocation, so "privacy" is ~0 and "model"
holds both; ``bench.sweep`` has the scaling table and the NumPy baseline).

Run: ``python -m bench.inference [--quick]``; writes ``bench/results/inference.json``.
"""
from __future__ import annotations

import sys
import time

import numba
import numpy as np

from bench import machine, write_results
from lpp.inference import GibbsSampler, TopicModel
from lpp.randomness import Tag, derive_seed
from lpp.mechanism import privatize

METHODS = ("collapsed", "bessel", "naive")


def _problem(n_docs, n_words, k, seed=0):
    rng = np.random.default_rng(seed)
    mu = rng.gamma(0.2, 1.0, (n_docs, k)) @ rng.gamma(0.2, 1.0, (k, n_words))
    alpha = float(np.exp(-1.0))
    return privatize(rng.poisson(mu), alpha, rng=rng), alpha


def _time_sweeps(sampler, n_timed):
    sampler.sweep()  # warm-up: compiles the kernels
    full, privacy, model = [], [], []
    for _ in range(n_timed):
        t0 = time.perf_counter()
        sampler.sweep()
        full.append(time.perf_counter() - t0)
        if sampler.engine != "dense":  # fused: the privacy draw happens inside the allocation
            privacy.append(0.0)
            model.append(full[-1])
            continue
        # the two halves again, separately, from the same point
        state, aux, mu, seed, it = (sampler.state, sampler.aux, sampler.mu, sampler.seed,
                                    sampler.iteration)
        t0 = time.perf_counter()
        y, _ = sampler.source.sample(mu, sampler.observed, aux, derive_seed(seed, Tag.PRIVACY), it)
        t1 = time.perf_counter()
        state = sampler.model.step(state, y, sampler.observed, derive_seed(seed, Tag.MODEL), it)
        sampler.model.rate(state)
        t2 = time.perf_counter()
        privacy.append(t1 - t0)
        model.append(t2 - t1)
    return float(np.median(full)), float(np.median(privacy)), float(np.median(model))


def main(quick=False):
    sizes = [(200, 200, 10)] if quick else [(200, 200, 10), (1000, 1000, 50)]
    n_timed = 2 if quick else 3
    threads_before = numba.get_num_threads()
    thread_counts = [1, 2] if numba.config.NUMBA_NUM_THREADS >= 2 else [1]
    rows = []
    for n_docs, n_words, k in sizes:
        y_tilde, alpha = _problem(n_docs, n_words, k)
        for method in METHODS:
            for n_threads in thread_counts:
                numba.set_num_threads(n_threads)
                sampler = GibbsSampler.private(y_tilde, alpha, TopicModel(k), method=method, rng=1)
                full, privacy, model = _time_sweeps(sampler, n_timed)
                rows.append({"docs": n_docs, "words": n_words, "topics": k, "method": method,
                             "threads": n_threads, "seconds_per_iteration": full,
                             "privacy_step": privacy, "model_step": model})
    numba.set_num_threads(threads_before)
    print("Topic model, epsilon/N = 1: seconds per Gibbs iteration (median)")
    print(f"{'D x V':>11} {'K':>3} {'method':>9} {'thr':>3} {'sweep':>8} {'privacy':>8} "
          f"{'model':>8}")
    for r in rows:
        print(f"{r['docs']:>5} x {r['words']:<5} {r['topics']:>3} {r['method']:>9} "
              f"{r['threads']:>3} {r['seconds_per_iteration']:>8.4f} {r['privacy_step']:>8.4f} "
              f"{r['model_step']:>8.4f}")
    if not quick:  # a quick run is a smoke test: the committed results stay
        path = write_results("inference", {"machine": machine(), "epsilon_over_n": 1.0,
                                           "timed_sweeps": n_timed, "rows": rows})
        print(f"wrote {path}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
