"""What a saved sweep costs beyond a sweep, at the paper's size.

A fit saves every ``thin``-th sweep after the burn-in; each saved sweep adds the dense rates
``mu`` (one product of the factors), the dense counts ``y`` (the sparse engine's compact draw,
made dense), the running sum of the rates behind ``mu_hat``, and the log joint. This script
takes the collapsed chain of ``bench/sweep.py``'s text-like data (K = 50, default ε/N = 2 and
N = 10,000, as in the paper profile's topic fits) after a few sweeps and times, in one process:

* one unsaved sweep (the yardstick);
* ``mu`` and dense ``y``;
* the log joint's two data terms by :mod:`lpp.inference.log_density` (one compiled pass per
  term, each row summed in order) beside a NumPy/SciPy evaluation of the same terms over
  blocks of 2**20 entries (``xlogy``, ``gammaln`` and the 2Geo log-pmf of every entry), the
  reference the compiled pass is measured against (their relative difference is printed);
* the running sum added into a spare array (what the run's record does) beside an add into a
  new array of the data's size.

``python -m bench.saved_sweep [--n N] [--eps E] [--quick]`` (quick: N = 300, writes nothing).
Writes ``bench/results/saved_sweep.json``: the best of three calls of each, and the three
calls in order (a new array of the data's size can cost seconds of page faults on one call and
not the next, depending on what the kernel has at hand; the running sum never allocates).
"""
from __future__ import annotations

import os
import sys
import time

import numba
import numpy as np
from scipy import special

from bench import machine, write_results
from bench.sweep import text_data
from lpp.inference import GibbsSampler, TopicModel
from lpp.distributions import two_sided_geometric_logpmf

#: entries per block of the NumPy reference (its temporaries stay small)
REFERENCE_BLOCK = 1 << 20


def reference_log_likelihood(y, mu) -> float:
    """sum of log Pois(y; mu) by NumPy/SciPy over blocks of entries (every entry observed)."""
    y, mu = np.ravel(y), np.ravel(mu)
    total = 0.0
    for lo in range(0, y.size, REFERENCE_BLOCK):
        part = slice(lo, lo + REFERENCE_BLOCK)
        total += float((special.xlogy(y[part], mu[part]) - mu[part]
                        - special.gammaln(y[part] + 1.0)).sum())
    return total


def reference_log_noise(y_tilde, y, noise) -> float:
    """sum of log 2Geo(y_tilde - y; alpha) by NumPy over blocks of entries."""
    y_tilde, y = np.ravel(y_tilde), np.ravel(y)
    total = 0.0
    for lo in range(0, y.size, REFERENCE_BLOCK):
        hi = min(lo + REFERENCE_BLOCK, y.size)
        alpha = noise.values[np.arange(lo, hi) // noise.stride]
        total += float(two_sided_geometric_logpmf(y_tilde[lo:hi] - y[lo:hi], alpha).sum())
    return total


def _three_times(fn) -> list[float]:
    """Wall seconds of three calls of ``fn()``, in order."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def measure(n: int, eps: float, warm_up: int = 4) -> dict:
    y_tilde, alpha, _, _, info = text_data(n, 50, eps)
    chain = GibbsSampler.private(y_tilde, alpha, TopicModel(50), rng=1)
    for _ in range(warm_up):
        chain.sweep()
    sweep = _three_times(chain.sweep)
    mu = chain.mu
    y = chain.y
    draw = chain._snap.counts  # the sparse engine's compact draw of y

    def dense_again():
        draw._dense = None  # the draw caches its dense form
        return draw.dense()

    seconds = {"sweep (unsaved)": sweep,
               "mu (product of the factors, a new array)": _three_times(
                   lambda: chain.model.rate(chain.state)),
               "y made dense (a new array)": _three_times(dense_again)}
    lik = chain.model.log_likelihood(y, mu, chain.observed)
    noise = chain.source.log_noise(y, chain.observed)
    ref_lik = reference_log_likelihood(y, mu)
    ref_noise = reference_log_noise(y_tilde, y, chain.source.noise)
    seconds["log likelihood, lpp.inference.log_density"] = _three_times(
        lambda: chain.model.log_likelihood(y, mu, chain.observed))
    seconds["log likelihood, NumPy reference"] = _three_times(
        lambda: reference_log_likelihood(y, mu))
    seconds["log noise, lpp.inference.log_density"] = _three_times(
        lambda: chain.source.log_noise(y, chain.observed))
    seconds["log noise, NumPy reference"] = _three_times(
        lambda: reference_log_noise(y_tilde, y, chain.source.noise))
    running = mu.copy()
    spare = np.zeros_like(mu)
    seconds["running sum, into the spare array"] = _three_times(
        lambda: np.add(running, mu, out=spare))
    seconds["running sum, into a new array"] = _three_times(lambda: running + mu)
    calls = seconds
    seconds = {name: min(times) for name, times in calls.items()}
    return {"D": n, "V": n, "K": 50, "epsilon_over_n": eps, **info,
            "threads": numba.get_num_threads(), "seconds": seconds, "calls": calls,
            "relative_difference": {"log likelihood": abs(lik - ref_lik) / abs(ref_lik),
                                    "log noise": abs(noise - ref_noise) / abs(ref_noise)},
            "log_density_speedup": {
                "log likelihood": seconds["log likelihood, NumPy reference"]
                / seconds["log likelihood, lpp.inference.log_density"],
                "log noise": seconds["log noise, NumPy reference"]
                / seconds["log noise, lpp.inference.log_density"]}}


def main(argv=()) -> int:
    quick = "--quick" in argv
    n = 300 if quick else int(argv[argv.index("--n") + 1]) if "--n" in argv else 10_000
    eps = float(argv[argv.index("--eps") + 1]) if "--eps" in argv else 2.0
    load_before = [round(x, 2) for x in os.getloadavg()]
    result = measure(n, eps)
    result["load_before"] = load_before
    result["load_after"] = [round(x, 2) for x in os.getloadavg()]
    print(f"saved sweep at {n} x {n}, K = 50, eps/N = {eps}, {result['threads']} threads "
          f"(load {load_before} before, {result['load_after']} after)")
    print(f"  {'seconds (best of 3; the 3 calls in order)':48s}")
    for name, value in result["seconds"].items():
        calls = ", ".join(f"{t:.3f}" for t in result["calls"][name])
        print(f"  {name:48s} {value:8.3f} s  ({calls})")
    for name, value in result["relative_difference"].items():
        print(f"  {name}: relative difference to the reference {value:.1e}")
    if not quick:
        write_results("saved_sweep", {"machine": machine(), **result})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
