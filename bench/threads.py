"""How the topic sweeps use a machine's cores: thread scaling, and chains side by side.

``python -m bench.threads [scaling] [side_by_side] [bound] [--n N] [--quick]`` (every part by
default),
on the text-like data of :mod:`bench.sweep` (epsilon/N = 1, K = 50, N x N, default 10,000):

* ``scaling`` — one process; for every power of two T up to the machine's cores (and the core
  count itself), seconds per sweep of ours (``collapsed``), ``naive``, the non-private chain and
  the floor kernel (:mod:`bench.floor`) with ``numba.set_num_threads(T)``. The thread counts
  take turns sweep by sweep (after warm-up sweeps), so every count sees the same stretch of the
  chains and of the machine's load; medians, and the speed-up over one thread.
* ``side_by_side`` — for every P chains x T threads with P, T powers of two and P T up to the
  cores: P processes, each its own chain of ours on its own copy of the data with T threads,
  timed together after a common start; seconds per sweep of each chain and the sweeps per
  second of all of them. Where the total stops growing with P T, memory traffic, not cores,
  caps the machine.

* ``bound`` — what the code itself allows on more cores, measured on one thread: the share of
  a sweep of each chain that runs outside lpp's compiled parallel loops (Python, NumPy, serial
  kernels; from ``cProfile``), and the balance of ours' pass 1 over the engine's own row
  chunks for every power of two of threads up to :data:`BOUND_THREADS` (each chunk timed alone
  on one thread: the slowest against the mean). Together they bound the speed-up at T threads
  on a machine whose cores do not slow each other down (Amdahl's law with the slowest chunk);
  what a many-core machine gives short of that bound is memory and cache traffic.

The load average before and after each part is recorded. Writes ``bench/results/threads.json``
(the parts run this time replace their entries, each with the machine it ran on); ``--quick``
runs tiny and writes nothing.
"""
from __future__ import annotations

import argparse
import cProfile
import multiprocessing
import os
import pstats
import sys
import time

import numba
import numpy as np
from numba.core.dispatcher import Dispatcher

from bench import write_parts
from bench.floor import FloorKernel
from bench.pass1 import _pass1_timer
from bench.sweep import _load, text_data
from lpp.inference import GibbsSampler, TopicModel
from lpp.inference.engines import sparse_topics

#: the most threads the ``bound`` part projects to
BOUND_THREADS = 32


def powers_of_two(limit: int) -> list[int]:
    """1, 2, 4, ... up to ``limit``, and ``limit`` itself."""
    out = [1]
    while out[-1] * 2 <= limit:
        out.append(out[-1] * 2)
    return out if out[-1] == limit else out + [limit]


def part_scaling(n, k, rounds, warm):
    threads = powers_of_two(numba.config.NUMBA_NUM_THREADS)
    y = np.empty((n, n), dtype=np.int64)
    y_tilde, alpha, _, _, info = text_data(n, k, 1.0, true_counts=y)
    chains = {"collapsed": GibbsSampler.private(y_tilde, alpha, TopicModel(k), rng=1),
              "naive": GibbsSampler.private(y_tilde, alpha, TopicModel(k), method="naive",
                                            rng=1),
              "nonprivate": GibbsSampler.nonprivate(y, TopicModel(k), rng=1)}
    floor = FloorKernel(y_tilde)
    probe = chains["collapsed"]
    sweeps = {name: chain.sweep for name, chain in chains.items()}
    sweeps["floor"] = lambda: floor.sweep(probe.model, probe.state, probe.observed)
    load_before = _load()
    for t in threads:  # compile every kernel and leave the start's transient
        numba.set_num_threads(t)
        for sweep in sweeps.values():
            for _ in range(warm):
                sweep()
    times = {(name, t): [] for name in sweeps for t in threads}
    for _ in range(rounds):
        for t in threads:
            numba.set_num_threads(t)
            for name, sweep in sweeps.items():
                t0 = time.perf_counter()
                sweep()
                times[name, t].append(time.perf_counter() - t0)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    rows = []
    for name in sweeps:
        one = float(np.median(times[name, 1]))
        for t in threads:
            median = float(np.median(times[name, t]))
            rows.append({"sweep": name, "threads": t, "seconds": median,
                         "speedup": one / median, "all": times[name, t]})
    return {"D": n, "V": n, "K": k, "epsilon_over_n": 1.0, **info, "rounds": rounds,
            "warm_up_sweeps_per_thread_count": warm, "load_before": load_before,
            "load_after": _load(), "rows": rows}


def _side_chain(n, k, threads, warm, timed, start, out):
    """One process of the side-by-side part: its own data and chain, ``threads`` threads."""
    numba.set_num_threads(threads)
    y_tilde, alpha, _, _, _ = text_data(n, k, 1.0)
    chain = GibbsSampler.private(y_tilde, alpha, TopicModel(k), rng=1)
    for _ in range(warm):
        chain.sweep()
    start.wait()
    t0 = time.perf_counter()
    times = []
    for _ in range(timed):
        s0 = time.perf_counter()
        chain.sweep()
        times.append(time.perf_counter() - s0)
    out.put({"wall": time.perf_counter() - t0, "times": times})


def part_side_by_side(n, k, warm, timed):
    cores = os.cpu_count() or 1
    context = multiprocessing.get_context("spawn")
    load_before = _load()
    cells = []
    for p in powers_of_two(cores):
        for t in powers_of_two(cores):
            if p * t > cores:
                continue
            start, out = context.Barrier(p), context.Queue()
            procs = [context.Process(target=_side_chain, args=(n, k, t, warm, timed, start, out))
                     for _ in range(p)]
            for proc in procs:
                proc.start()
            results = [out.get() for _ in procs]
            for proc in procs:
                proc.join()
            wall = max(r["wall"] for r in results)
            per_chain = float(np.median([np.median(r["times"]) for r in results]))
            cells.append({"chains": p, "threads": t, "cores_used": p * t,
                          "seconds_per_sweep": per_chain, "sweeps_per_second": p * timed / wall})
    best_single = max(c["sweeps_per_second"] for c in cells if c["chains"] == 1)
    for c in cells:
        c["vs_one_chain_on_most_threads"] = c["sweeps_per_second"] / best_single
    return {"D": n, "V": n, "K": k, "epsilon_over_n": 1.0, "warm_up_sweeps": warm,
            "timed_sweeps": timed, "load_before": load_before, "load_after": _load(),
            "cells": cells}


def parallel_loops() -> set:
    """lpp's compiled parallel loops, as ``cProfile`` names functions: ``(file, line, name)``."""
    found = set()
    for name, module in list(sys.modules.items()):
        if name != "lpp" and not name.startswith("lpp."):
            continue
        for value in vars(module).values():
            for item in value if isinstance(value, tuple) else (value,):
                if isinstance(item, Dispatcher) and item.targetoptions.get("parallel"):
                    code = item.py_func.__code__
                    found.add((code.co_filename, code.co_firstlineno, code.co_name))
    return found


def serial_seconds(sweep, sweeps: int) -> tuple[float, float]:
    """``(seconds per sweep, seconds per sweep outside lpp's parallel loops)`` over ``sweeps``
    sweeps under ``cProfile``: the part that more threads cannot shorten."""
    profile = cProfile.Profile()
    start = time.perf_counter()
    profile.enable()
    for _ in range(sweeps):
        sweep()
    profile.disable()
    whole = time.perf_counter() - start
    loops = parallel_loops()
    inside = sum(stat[2] for key, stat in pstats.Stats(profile).stats.items() if key in loops)
    return whole / sweeps, max(whole - inside, 0.0) / sweeps


def chunk_seconds(chain, y_tilde, alpha, k, most_threads, repeat):
    """Ours' pass 1 at the chain's point, each of the engine's row chunks for T threads timed
    alone on the current thread (the best of ``repeat`` rounds), for every power of two T up to
    ``most_threads``; ``(chunks the engine allows, {T: seconds of each chunk})``."""
    layout, workspace, _, _, run = _pass1_timer(chain, y_tilde, alpha, k)
    run(layout.cols, layout.values)  # compiles
    out = {}
    for threads in powers_of_two(most_threads):
        bounds = sparse_topics.chunk_bounds(layout.indptr, k,
                                            min(threads, workspace.most_chunks))
        # rounds over all the chunks, so that a burst of other work on the machine hits one
        # round of several chunks rather than every round of one chunk
        rounds = [[run(layout.cols, layout.values, bounds[c:c + 1], bounds[c + 1:c + 2])[0]
                   for c in range(bounds.size - 1)] for _ in range(repeat)]
        out[threads] = np.min(rounds, axis=0).tolist()
    return workspace.most_chunks, out


def part_bound(n, k, warm, sweeps, repeat, most_threads=BOUND_THREADS):
    y = np.empty((n, n), dtype=np.int64)
    y_tilde, alpha, _, _, info = text_data(n, k, 1.0, true_counts=y)
    numba.set_num_threads(1)
    load_before = _load()
    try:
        chains = {"collapsed": GibbsSampler.private(y_tilde, alpha, TopicModel(k), rng=1),
                  "naive": GibbsSampler.private(y_tilde, alpha, TopicModel(k), method="naive",
                                                rng=1),
                  "nonprivate": GibbsSampler.nonprivate(y, TopicModel(k), rng=1)}
        serial = {}
        for name, chain in chains.items():
            for _ in range(warm):
                chain.sweep()
            whole, outside = serial_seconds(chain.sweep, sweeps)
            serial[name] = {"engine": chain.engine, "seconds": whole, "serial_seconds": outside,
                            "serial_share": outside / whole}
        most_chunks, chunks = chunk_seconds(chains["collapsed"], y_tilde, alpha, k,
                                            most_threads, repeat)
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    ours = serial["collapsed"]
    rows = []
    for threads, seconds in chunks.items():
        seconds = np.asarray(seconds)
        imbalance = float(seconds.max() / seconds.mean())
        # Amdahl's law, the parallel part waiting for the slowest chunk; with fewer chunks
        # than threads the chunks are the limit
        parallel = (ours["seconds"] - ours["serial_seconds"]) * imbalance / seconds.size
        rows.append({"threads": threads, "chunks": int(seconds.size), "chunk_seconds":
                     seconds.tolist(), "slowest_over_mean": imbalance,
                     "speedup_bound": ours["seconds"] / (ours["serial_seconds"] + parallel)})
    return {"D": n, "V": n, "K": k, "epsilon_over_n": 1.0, **info, "warm_up_sweeps": warm,
            "profiled_sweeps": sweeps, "most_chunks": most_chunks, "serial": serial,
            "rows": rows, "load_before": load_before, "load_after": _load()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", help="scaling, side_by_side, bound (default: all)")
    parser.add_argument("--n", type=int, default=None, help="rows = columns (default 10,000)")
    parser.add_argument("--quick", action="store_true", help="a tiny run; writes nothing")
    args = parser.parse_args(argv)
    parts = ["scaling", "side_by_side", "bound"]
    unknown = set(args.parts) - set(parts)
    if unknown:
        parser.error(f"unknown parts {sorted(unknown)}: choose from {', '.join(parts)}")
    args.parts = args.parts or parts
    n = args.n or (80 if args.quick else 10_000)
    k = 5 if args.quick else 50
    out = {}
    if "scaling" in args.parts:
        part = out["scaling"] = part_scaling(n, k, rounds=2 if args.quick else 5,
                                             warm=1 if args.quick else 3)
        print(f"seconds per sweep at {n} x {n}, K = {k}, eps/N = 1 (load "
              f"{part['load_before']} -> {part['load_after']}); speed-up over one thread")
        for row in part["rows"]:
            print(f"  {row['sweep']:>10s} {row['threads']:3d} threads {row['seconds']:8.4f} s "
                  f"{row['speedup']:6.2f}x")
    if "side_by_side" in args.parts:
        part = out["side_by_side"] = part_side_by_side(n, k, warm=1 if args.quick else 3,
                                                       timed=2 if args.quick else 5)
        print(f"chains of ours side by side at {n} x {n} (load {part['load_before']} -> "
              f"{part['load_after']})")
        for c in part["cells"]:
            print(f"  {c['chains']:3d} chains x {c['threads']:3d} threads: "
                  f"{c['seconds_per_sweep']:8.4f} s per sweep each, "
                  f"{c['sweeps_per_second']:7.2f} sweeps/s in all "
                  f"({c['vs_one_chain_on_most_threads']:.2f}x one chain on the most threads)")
    if "bound" in args.parts:
        part = out["bound"] = part_bound(n, k, warm=1 if args.quick else 8,
                                         sweeps=1 if args.quick else 3,
                                         repeat=1 if args.quick else 3)
        print(f"on one thread at {n} x {n} (load {part['load_before']} -> "
              f"{part['load_after']}): seconds per sweep, and outside the parallel loops")
        for name, row in part["serial"].items():
            print(f"  {name:>10s} {row['seconds']:8.4f} s, {row['serial_seconds']:7.4f} s "
                  f"({100 * row['serial_share']:.1f} %)")
        print("  ours' pass 1 over the row chunks of T threads: slowest chunk / mean, and the "
              "bound on the speed-up")
        for row in part["rows"]:
            print(f"  {row['threads']:3d} threads ({row['chunks']:2d} chunks): "
                  f"{row['slowest_over_mean']:.3f}, at most {row['speedup_bound']:.1f}x")
    if args.quick:
        return out
    print(f"wrote {write_parts('threads', out)}")
    return out


if __name__ == "__main__":
    main()
