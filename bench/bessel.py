"""Draws per second of the exact Bessel sampler over a (nu, a) grid.

Two workloads, both on one thread:

* ``fixed``: ``sample_bessel(nu, a, size=n)`` — one envelope, many draws (its setup is
  shared by the kernel across equal parameters);
* ``varying``: ``sample_bessel_nb`` with different parameters on every call, as in a Gibbs
  sweep where every entry has its own (|y~|, a) — pays the envelope setup on each draw.

Run: ``python -m bench.bessel [--quick]``; writes ``bench/results/bessel.json``.
"""
from __future__ import annotations

import sys

import numba
import numpy as np
from numba import njit

from bench import best_time, machine, write_results
from lpp.randomness import new_stream, seed_block
from lpp.distributions import sample_bessel, sample_bessel_nb
from lpp.distributions._bessel_sampler import _bessel_envelope
from lpp.distributions._log_bessel import series_sum_from_mode

NUS = [0.0, 1.0, 10.0, 100.0, 1e3, 1e4]
AS = [1e-8, 0.1, 1.0, 10.0, 100.0, 1e3, 1e4, 1e6]


def acceptance_rate(nu, a):
    """Exact acceptance probability: pmf mass over envelope mass, both in mode units."""
    m, _, d_r, _, _, tail_r, _, n_left, _, _, tail_l = _bessel_envelope(nu, a)
    return float(np.exp(series_sum_from_mode(nu, a, m)[0]) / (d_r + n_left + tail_r + tail_l))


@njit
def _varying(nu, a, n, seed):
    rng = new_stream()
    seed_block(rng, seed, 0, 0)
    total = 0
    for i in range(n):
        # a relative jitter of 1e-12 makes every call a fresh (nu, a): no envelope reuse
        total += sample_bessel_nb(rng, nu, a * (1.0 + 1e-12 * (i & 1023)))
    return total


def main(quick=False):
    n = 50_000 if quick else 200_000
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        sample_bessel(1.0, 1.0, size=10, rng=0)  # compile
        _varying(1.0, 1.0, 10, 0)
        rows = []
        for nu in NUS:
            for a in AS:
                fixed = best_time(lambda: sample_bessel(nu, a, size=n, rng=1))
                varying = best_time(lambda: _varying(nu, a, n, 1))
                rows.append({"nu": nu, "a": a, "fixed_per_s": n / fixed,
                             "varying_per_s": n / varying,
                             "acceptance": acceptance_rate(nu, a)})
    finally:
        numba.set_num_threads(before)
    print(f"Exact Bessel sampler, draws per second (1 thread, {n} draws per cell)")
    print(f"{'nu':>8} {'a':>8} {'fixed':>12} {'varying':>12} {'accept':>7}")
    for r in rows:
        print(f"{r['nu']:>8g} {r['a']:>8g} {r['fixed_per_s']:>12.3g} {r['varying_per_s']:>12.3g}"
              f" {r['acceptance']:>7.3f}")
    fixed = [r["fixed_per_s"] for r in rows]
    varying = [r["varying_per_s"] for r in rows]
    print(f"min/median over the grid: fixed {min(fixed):.3g}/{np.median(fixed):.3g}, "
          f"varying {min(varying):.3g}/{np.median(varying):.3g}")
    if not quick:  # a quick run is a smoke test: the committed results stay
        path = write_results("bessel", {"machine": machine(), "draws_per_cell": n,
                                        "threads": 1, "rows": rows})
        print(f"wrote {path}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
