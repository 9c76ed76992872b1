"""What the random numbers cost a sweep: the engines' generator against numba's own.

Every kernel draws from a xoshiro256+ stream of :mod:`lpp.randomness`, seeded per row with
``(seed, iteration, row)``; numba's ``np.random`` (MT19937), which the kernels used before,
is the reference. This script times, in one process and one thread:

* one uniform from each generator, and the reseed of a row (``seed_block`` against
  ``np.random.seed``, which takes a 32-bit key);

then runs the collapsed chain of ``bench/sweep.py``'s text-like data (ε/N = 1, K = 50) to
count about how many uniforms one sweep draws — one per positive entry (the conditional of y),
per token split in pass 1 (counts up to ``FEW_TRIALS``), per token placed in pass 2 (an alias
draw that lands outside E(d) at the first try), per topic total of Neg(d) (a Poisson draw of a
small mean), and two per Gamma draw of the updates — and gives the seconds of the sweep that
the engines' generator saves against MT19937, beside the sweep's own median time.

``python -m bench.rng [--n N] [--quick]`` (default N = 3000; quick: 300 and fewer draws).
Writes ``bench/results/rng.json``.
"""
from __future__ import annotations

import sys
import time

import numba
import numpy as np
from numba import njit

from bench import best_time, machine, write_results
from bench.sweep import text_data
from lpp.inference import GibbsSampler, TopicModel
from lpp.randomness import block_key, new_stream, seed_block, uniform
from lpp.distributions import FEW_TRIALS

@njit(cache=True)
def _mt_uniforms(n):
    np.random.seed(1)
    acc = 0.0
    for _ in range(n):
        acc += np.random.random()
    return acc


@njit(cache=True)
def _stream_uniforms(n):
    rng = new_stream()
    seed_block(rng, 1, 0, 0)
    acc = 0.0
    for _ in range(n):
        acc += uniform(rng)
    return acc


@njit(cache=True)
def _mt_reseeds(n):
    for row in range(n):
        np.random.seed(np.uint32(block_key(1, 0, row) >> np.uint64(32)))
    return np.random.random()


@njit(cache=True)
def _stream_reseeds(n):
    """Reseeds, each followed by the row's first uniform (a loop of reseeds alone would leave
    only the last one to the compiler)."""
    rng = new_stream()
    acc = 0.0
    for row in range(n):
        seed_block(rng, 1, 0, row)
        acc += uniform(rng)
    return acc


def _per_call(fn, n):
    """Best seconds per unit of ``fn(n)`` (compiled first)."""
    fn(10)
    return best_time(lambda: fn(n)) / n


def uniforms_per_sweep(sampler) -> dict:
    """About how many uniforms one sweep of the collapsed sparse chain draws, by kind, read
    from its last draw of the counts (the module docstring says what each kind counts)."""
    draw = sampler._snap.counts  # the engine's compact draw (``sampler.y`` would densify it)
    layout = draw.layout
    n_rows, n_cols = layout.shape
    n_topics = sampler.model.n_components
    positive = int(np.count_nonzero(layout.values > 0))
    return {"conditional of y (positive entries)": positive,
            "split of pass 1 (tokens of counts <= FEW_TRIALS)":
                int(np.minimum(draw.pos_y, FEW_TRIALS).sum()),
            "topic totals of Neg(d)": n_rows * n_topics,
            "columns of pass 2 (tokens)": draw.n_tokens,
            "Gamma updates (2 per draw)": 2 * (n_rows + n_cols) * n_topics}


def main(argv=()):
    quick = "--quick" in argv
    n = 300 if quick else int(argv[argv.index("--n") + 1]) if "--n" in argv else 3000
    draws = 200_000 if quick else 50_000_000
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        mt = _per_call(_mt_uniforms, draws)
        xo = _per_call(_stream_uniforms, draws)
        mt_reseed = _per_call(_mt_reseeds, max(1000, draws // 2500))
        reseed = _per_call(_stream_reseeds, max(1000, draws // 25)) - xo
    finally:
        numba.set_num_threads(threads)
    y_tilde, alpha, _, _, info = text_data(n, 50, 1.0)
    sampler = GibbsSampler.private(y_tilde, alpha, TopicModel(50), rng=1)
    n_warm, n_timed = (2, 3) if quick else (6, 5)
    for _ in range(n_warm):
        sampler.sweep()
    times = []
    for _ in range(n_timed):
        start = time.perf_counter()
        sampler.sweep()
        times.append(time.perf_counter() - start)
    sweep = float(np.median(times))
    counts = uniforms_per_sweep(sampler)
    total = sum(counts.values())
    # both passes reseed the generator once per row
    saved = (total * (mt - xo) + 2 * n * (mt_reseed - reseed)) / threads
    out = {"machine": machine(), "ns_per_uniform": {"mt19937": mt * 1e9, "xoshiro256+": xo * 1e9},
           "us_per_reseed": {"mt19937": mt_reseed * 1e6, "xoshiro256+": reseed * 1e6},
           "D": n, "V": n, "K": 50, "epsilon_over_n": 1.0, **info,
           "threads": threads, "sweep_seconds": sweep, "uniforms_about": counts,
           "saving_against_mt19937_seconds": saved}
    print(f"one thread: a uniform costs {xo * 1e9:.2f} ns from the engines' xoshiro256+ stream, "
          f"{mt * 1e9:.2f} ns from numba's MT19937; a row's reseed {reseed * 1e6:.3f} us "
          f"against {mt_reseed * 1e6:.2f} us")
    print(f"{n} x {n}, K = 50, eps/N = 1, text-like data ({info['positive_fraction']:.1%} "
          f"positive), {threads} threads: {sweep:.3f} s per sweep (median of {n_timed})")
    for kind, count in counts.items():
        print(f"  {kind:<52s} {count:>12,d}")
    print(f"  {'in all, about':<52s} {total:>12,d} uniforms per sweep")
    print(f"against numba's MT19937 (and its reseeds) the engines' generator saves about "
          f"{saved:.3f} s of the sweep ({saved / (sweep + saved):.0%} of what it would take)")
    if not quick:
        print(f"wrote {write_results('rng', out)}")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
