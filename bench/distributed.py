"""In-process vs distributed sweeps of the sparse topic chain, and a cost model for big corpora.

``python -m bench.distributed [--quick] [--large | --only-large]``: text-like data
(:func:`bench.sweep.text_data`, K = 50, epsilon/N = 1) of D = V = 3000 (300 with ``--quick``;
``--large`` adds 10,000; ``--only-large`` runs 10,000 and keeps the other sizes' rows of the
results file, refitting the cost model on all of them), written
in the row-block format (8 blocks). In one run:

* the in-process sparse sweep (:class:`lpp.inference.GibbsSampler`) with 1 and 2 numba threads;
* the distributed sweep (:class:`lpp.inference.distributed.DistributedChain`) on a
  ``LocalCluster`` of 1 and of 2 single-threaded worker processes: seconds per sweep, its two
  halves (workers + reduction, client updates), bytes moved per sweep, peak memory per worker.

Times are medians of timed sweeps after warm-up sweeps (the warm-up includes numba's
compilation in each fresh worker process). The overhead compares the distributed sweep on W
workers with the in-process sweep on W threads.

Cost model (fitted on the 1-worker run, checked on the 2-worker run, then extrapolated):

    sweep(N) = L  +  a * (|E| K + D K) / N  +  b * (D + V) K

``L``: the scheduling latency of one sweep's two rounds of tasks (measured directly: the same
tasks doing nothing); ``a``: seconds per unit of the workers' passes (entries of E times
topics, plus topic totals), the reduction and the transfers included; ``b``: seconds per
Gamma draw of the client's updates. Memory per worker:
the block's privatized counts (8 bytes per entry), its layout (12 bytes per entry of E), the
draw (8 bytes per entry of E, 4 per token) and the engine's fixed tables (about 64 MiB), plus
the interpreter and libraries (measured: the 1-worker run's peak minus its data).

Writes ``bench/results/distributed.json`` (not with ``--quick``).
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from itertools import pairwise

import numba
import numpy as np

from bench import RESULTS, machine, write_results
from bench.sweep import text_data

K, EPS, SEED = 50, 1.0, 1
N_BLOCKS = 8
#: the corpus the model extrapolates to: 10^6 documents x 10^4 words, 29% positive entries
TARGET = {"D": 10**6, "V": 10**4, "positive_fraction": 0.29}
GIB = 2.0**30


def _write_blocks(y_tilde, alpha, path):
    from lpp.privatized_blocks import PrivatizedBlockWriter

    n, v = y_tilde.shape
    cuts = np.linspace(0, n, N_BLOCKS + 1).astype(int)
    with PrivatizedBlockWriter(path, n_cols=v, epsilon=EPS, N=1.0, seed=0, mechanism="fast",
                               source="bench", column_ids=[str(i) for i in range(v)]) as w:
        for lo, hi in pairwise(cuts):
            w.write(y_tilde[lo:hi], alpha, [str(r) for r in range(lo, hi)])


def _median(fn, n_warm, n_timed, extra=None):
    for _ in range(n_warm):
        fn()
    times, parts = [], []
    for _ in range(n_timed):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if extra is not None:
            parts.append(extra())
    return float(np.median(times)), parts


def _in_process(y_tilde, alpha, n_warm, n_timed):
    from lpp.inference import GibbsSampler, TopicModel

    out = {}
    for threads in (1, 2):
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        sampler = GibbsSampler.private(y_tilde, alpha, TopicModel(K), rng=SEED, init="prior",
                                       sparse=True)
        out[threads], _ = _median(sampler.sweep, n_warm, n_timed)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    import resource

    out["peak_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return out


def _distributed(path, n_workers, n_warm, n_timed):
    from dask.distributed import Client, LocalCluster

    from lpp.inference import TopicModel
    from lpp.inference.distributed import DistributedChain
    from lpp.privatized_blocks import PrivatizedBlocks

    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        chain = DistributedChain(client, PrivatizedBlocks(path), TopicModel(K), SEED, "prior")
        before = [0]

        def sweep():
            before[0] = chain.bytes_moved
            chain.sweep()
            chain.release()

        seconds, parts = _median(sweep, n_warm, n_timed,
                                 lambda: (dict(chain.last_seconds),
                                          chain.bytes_moved - before[0]))
        memory = chain.worker_memory()

        def ping():  # the sweep's two rounds of pinned tasks, doing nothing
            first = [client.submit(_noop, b, workers=[w], pure=False)
                     for b, w in enumerate(chain.placement)]
            client.gather([client.submit(_noop, f, workers=[w], pure=False)
                           for f, w in zip(first, chain.placement)])

        latency, _ = _median(ping, 1, n_timed)
    return {"seconds": seconds, "latency_seconds": latency, "blocks_seconds": float(np.median([p[0]["blocks"] for p in parts])),
            "client_seconds": float(np.median([p[0]["client"] for p in parts])),
            "bytes_per_sweep": int(parts[-1][1]),
            "peak_bytes_per_worker": int(max(memory.values()))}


def _noop(x):
    return x


def _layout_size(y_tilde):
    return int(np.count_nonzero(y_tilde > 0))


def cost_model(rows):
    """Fit ``a, b, c`` on the 1-worker runs, check on the 2-worker runs, extrapolate."""
    fit = [r for r in rows if r["workers"] == 1]
    a = float(np.median([max(r["blocks_seconds"] - r["latency_seconds"], 0.0)
                         / (r["nnz"] * K + r["D"] * K) for r in fit]))
    latency = float(max(r["latency_seconds"] for r in rows))
    b = float(np.median([r["client_seconds"] / ((r["D"] + r["V"]) * K) for r in fit]))
    base = float(np.median([r["peak_bytes_per_worker"] - _worker_data_bytes(r["D"], r["V"],
                                                                           r["nnz"], r["tokens"])
                            for r in fit]))

    def predict(d, v, nnz, tokens, n, lat=latency):
        t = lat + a * (nnz * K + d * K) / n + b * (d + v) * K
        mem = base + _worker_data_bytes(d // n, v, nnz // n, tokens // n)
        return t, mem

    checks = []
    for r in rows:
        t, mem = predict(r["D"], r["V"], r["nnz"], r["tokens"], r["workers"],
                         r["latency_seconds"])
        checks.append({"D": r["D"], "workers": r["workers"], "measured_s": r["seconds"],
                       "predicted_s": t, "time_error": t / r["seconds"] - 1,
                       "measured_worker_gib": r["peak_bytes_per_worker"] / GIB,
                       "predicted_worker_gib": mem / GIB,
                       "memory_error": mem / r["peak_bytes_per_worker"] - 1})
    d, v = TARGET["D"], TARGET["V"]
    nnz = int(TARGET["positive_fraction"] * d * v)
    per_entry_tokens = float(np.median([r["tokens"] / (r["D"] * r["V"]) for r in rows]))
    tokens = int(per_entry_tokens * d * v)
    target = [{"workers": n, "sweep_s": predict(d, v, nnz, tokens, n)[0],
               "worker_gib": predict(d, v, nnz, tokens, n)[1] / GIB}
              for n in (1, 8, 32, 128, 512)]
    return {"a": a, "b": b, "latency": latency, "base_bytes": base, "checks": checks, "target": target}


def _worker_data_bytes(rows, v, nnz, tokens):
    return 8 * rows * v + 20 * nnz + 4 * tokens + 8 * rows * K + (64 << 20)


def main(argv=()):
    quick = "--quick" in argv
    # quick: blocks under the serial threshold, so fresh workers compile the serial kernels only
    sizes = [300] if quick else [3000] + ([10000] if "--large" in argv else [])
    rows, in_proc = [], {}
    if "--only-large" in argv and not quick:
        sizes = [10000]
        old = json.loads((RESULTS / "distributed.json").read_text())
        rows = [r for r in old["rows"] if r["D"] not in sizes]
        in_proc = {int(k): v for k, v in old["in_process"].items() if int(k) not in sizes}
    n_warm, n_timed = (1, 2) if quick else (3, 5)
    for n in sizes:
        y_tilde, alpha, _, _, info = text_data(n, K, EPS)
        nnz = _layout_size(y_tilde)
        ip = _in_process(y_tilde, alpha, n_warm, n_timed)
        in_proc[n] = ip
        with tempfile.TemporaryDirectory() as tmp:
            _write_blocks(y_tilde, alpha, tmp)
            del y_tilde
            for workers in (1, 2):
                r = _distributed(tmp, workers, n_warm, n_timed)
                r.update({"D": n, "V": n, "workers": workers, "nnz": nnz,
                          "tokens": int(info["true_nonzero_fraction"] * n * n),
                          "in_process_s": ip[workers],
                          "overhead": r["seconds"] / ip[workers] - 1,
                          "worker_vs_in_process_peak": r["peak_bytes_per_worker"]
                          / ip["peak_bytes"]})
                rows.append(r)
    model = cost_model(rows)
    print(f"{'D=V':>6} {'W':>2} {'in-proc s':>9} {'dist s':>7} {'latency':>7} {'overhead':>8} "
          f"{'MB/sweep':>8} {'GiB/worker':>10} {'vs in-proc':>10}")
    for r in rows:
        print(f"{r['D']:>6} {r['workers']:>2} {r['in_process_s']:>9.3f} {r['seconds']:>7.3f} "
              f"{r['latency_seconds']:>7.3f} "
              f"{r['overhead']:>8.1%} {r['bytes_per_sweep'] / 1e6:>8.1f} "
              f"{r['peak_bytes_per_worker'] / GIB:>10.2f} {r['worker_vs_in_process_peak']:>10.0%}")
    print("cost model check (fitted on W=1):")
    for c in model["checks"]:
        print(f"  D={c['D']} W={c['workers']}: time {c['measured_s']:.3f} s measured, "
              f"{c['predicted_s']:.3f} predicted ({c['time_error']:+.0%}); memory "
              f"{c['measured_worker_gib']:.2f} GiB measured, {c['predicted_worker_gib']:.2f} "
              f"predicted ({c['memory_error']:+.0%})")
    print(f"predicted for {TARGET['D']:.0e} x {TARGET['V']:.0e}, K={K}:")
    for t in model["target"]:
        print(f"  {t['workers']:>4} workers: {t['sweep_s']:9.1f} s/sweep, "
              f"{t['worker_gib']:8.1f} GiB per worker")
    if not quick:
        payload = {"machine": machine(), "load": list(os.getloadavg()), "K": K,
                   "epsilon_over_n": EPS, "rows": rows, "in_process": in_proc,
                   "cost_model": model}
        print(f"wrote {write_results('distributed', payload)}")


if __name__ == "__main__":
    main(sys.argv[1:])
