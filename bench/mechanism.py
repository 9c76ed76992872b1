"""Speed of the fast (numpy, floating point) and exact (CKS20, integer-only) 2Geo samplers.

Run: ``python -m bench.mechanism [--quick]``; writes ``bench/results/mechanism.json``.
"""
from __future__ import annotations

import sys
from fractions import Fraction

from bench import best_time, machine, write_results
from lpp.mechanism import ExactAlpha, sample_two_sided_geometric

RATIOS = [Fraction(5), Fraction(1), Fraction(1, 3), Fraction(1, 10), Fraction(1, 100)]


def main(quick=False):
    n_fast, n_exact = (200_000, 2_000) if quick else (2_000_000, 20_000)
    rows = []
    for ratio in RATIOS:
        alpha = ExactAlpha(ratio)
        fast = best_time(lambda: sample_two_sided_geometric(float(alpha), n_fast, rng=1))
        exact = best_time(lambda: sample_two_sided_geometric(alpha, n_exact, rng=1, exact=True),
                          repeat=2)
        system = best_time(lambda: sample_two_sided_geometric(alpha, n_exact, rng="system",
                                                              exact=True), repeat=1)
        rows.append({"epsilon_over_n": str(ratio), "alpha": float(alpha),
                     "fast_per_s": n_fast / fast, "exact_per_s": n_exact / exact,
                     "exact_system_per_s": n_exact / system,
                     "fast_over_exact": (n_fast / fast) / (n_exact / exact)})
    print("Two-sided geometric samplers, draws per second")
    print(f"{'eps/N':>6} {'alpha':>7} {'fast':>10} {'exact':>10} {'exact(os)':>10} {'ratio':>7}")
    for r in rows:
        print(f"{r['epsilon_over_n']:>6} {r['alpha']:>7.4f} {r['fast_per_s']:>10.3g} "
              f"{r['exact_per_s']:>10.3g} {r['exact_system_per_s']:>10.3g} "
              f"{r['fast_over_exact']:>7.0f}")
    if not quick:  # a quick run is a smoke test: the committed results stay
        path = write_results("mechanism", {"machine": machine(), "n_fast": n_fast,
                                           "n_exact": n_exact, "rows": rows})
        print(f"wrote {path}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
