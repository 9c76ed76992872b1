"""What the random numbers cost a sweep: the engines' generator against a small inline one.

Every kernel draws from numba's ``np.random`` (MT19937), reseeded per row with
``(seed, iteration, row)`` (:mod:`lpp.randomness`). This script times, in one process and one thread:

* one uniform from that generator, and the reseed of a row;
* one uniform from xoshiro256+ (Blackman & Vigna) kept in local variables, seeded by
  splitmix64: the kind of generator a kernel could carry instead;

then runs the collapsed chain of ``bench/sweep.py``'s text-like data (ε/N = 1, K = 50) to
count about how many uniforms one sweep draws — one per positive entry (the conditional of y),
per token split in pass 1 (counts up to ``FEW_TRIALS``), per token placed in pass 2 (an alias
draw that lands outside E(d) at the first try), per topic total of Neg(d) (a Poisson draw of a
small mean), and two per Gamma draw of the updates — and projects the seconds a generator as
cheap as xoshiro256+ would save, beside the sweep's own median time.

``python -m bench.rng [--n N] [--quick]`` (default N = 3000; quick: 300 and fewer draws).
Writes ``bench/results/rng.json``.
"""
from __future__ import annotations

import sys
import time

import numba
import numpy as np
from numba import njit, uint64

from bench import best_time, machine, write_results
from lpp.randomness import seed_stream
from lpp.distributions import FEW_TRIALS

_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True)
def _mt_uniforms(n):
    seed_stream(1, 0, 0)
    acc = 0.0
    for _ in range(n):
        acc += np.random.random()
    return acc


@njit(cache=True)
def _splitmix(x):
    x += uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> uint64(27))) * uint64(0x94D049BB133111EB)
    return x, z ^ (z >> uint64(31))


@njit(cache=True)
def _xoshiro_uniforms(n):
    x, s0 = _splitmix(uint64(1))
    x, s1 = _splitmix(x)
    x, s2 = _splitmix(x)
    x, s3 = _splitmix(x)
    acc = 0.0
    for _ in range(n):
        r = s0 + s3
        t = s1 << uint64(17)
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = (s3 << uint64(45)) | (s3 >> uint64(19))
        acc += (r >> uint64(11)) * _TO_UNIT
    return acc


@njit(cache=True)
def _reseeds(n):
    for row in range(n):
        seed_stream(1, 0, row)
    return np.random.random()


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
    from bench.sweep import text_data
    from lpp.inference import GibbsSampler, TopicModel

    quick = "--quick" in argv
    n = 300 if quick else int(argv[argv.index("--n") + 1]) if "--n" in argv else 3000
    draws = 200_000 if quick else 50_000_000
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        mt = _per_call(_mt_uniforms, draws)
        xo = _per_call(_xoshiro_uniforms, draws)
        reseed = _per_call(_reseeds, max(1000, draws // 2500))
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
    saved = (total * (mt - xo) + 2 * n * reseed) / threads
    out = {"machine": machine(), "ns_per_uniform": {"mt19937": mt * 1e9, "xoshiro256+": xo * 1e9},
           "us_per_reseed": reseed * 1e6, "D": n, "V": n, "K": 50, "epsilon_over_n": 1.0, **info,
           "threads": threads, "sweep_seconds": sweep, "uniforms_about": counts,
           "projected_saving_seconds": saved}
    print(f"one thread: a uniform costs {mt * 1e9:.2f} ns from numba's MT19937 (the engines' "
          f"generator), {xo * 1e9:.2f} ns from an inline xoshiro256+; a row's reseed "
          f"{reseed * 1e6:.2f} us")
    print(f"{n} x {n}, K = 50, eps/N = 1, text-like data ({info['positive_fraction']:.1%} "
          f"positive), {threads} threads: {sweep:.3f} s per sweep (median of {n_timed})")
    for kind, count in counts.items():
        print(f"  {kind:<52s} {count:>12,d}")
    print(f"  {'in all, about':<52s} {total:>12,d} uniforms per sweep")
    print(f"a generator as cheap as xoshiro256+ (and no reseeds) would save about "
          f"{saved:.3f} s of the sweep ({saved / sweep:.0%})")
    if not quick:
        print(f"wrote {write_results('rng', out)}")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
