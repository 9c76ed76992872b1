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

Cost model, its components calibrated in the same run (on the 1-worker run of each size)
and checked against every measured sweep, then extrapolated:

    sweep(N) = L  +  a * max_w work_w  +  b * (D + V) K

``L``: a sweep's two rounds of pinned tasks moving the sweep's bytes (theta rows and phi
out, the counts back) but doing no work, timed; ``a``: seconds per work unit of the blocks'
passes, timed on the workers themselves (work of a block: entries of E times K, plus rows
times K; ``work_w`` sums a worker's blocks); ``b``: seconds per Gamma draw of the client's
updates, timed. Memory per worker: a base (the worker's peak less what it holds: interpreter,
Dask, lpp, numba's compiled kernels), its blocks' data and a sweep's draws (both in proportion
to its rows, measured on the worker) and the scratch tables its blocks share (fixed, chunks x
V x K). The load average is printed and saved.

The model is for workers on machines of their own. Here the W = 2 runs put two workers on one
2-core machine, where they slow each other's block passes (one memory system and last-level
cache; the sparse pass is memory-bound): each check of a W > 1 run also shows that measured
slowdown (its median block pass over the W = 1 run's) and the prediction with it.

Writes ``bench/results/distributed.json`` (not with ``--quick``).
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path

import numba
import numpy as np

from bench import RESULTS, machine, write_results
from bench.memory import process_memory
from bench.sweep import text_data
from lpp.formats.privatized_blocks import PrivatizedBlocks, PrivatizedBlockWriter
from lpp.inference import GibbsSampler, TopicModel

K, EPS, SEED = 50, 1.0, 1
N_BLOCKS = 8
#: the corpus the model extrapolates to: 10^6 documents x 10^4 words, 29% positive entries
TARGET = {"D": 10**6, "V": 10**4, "positive_fraction": 0.29}
GIB = 2.0**30
ROOT = Path(__file__).resolve().parents[1]


def _write_blocks(y_tilde, alpha, path):
    n, v = y_tilde.shape
    cuts = np.linspace(0, n, N_BLOCKS + 1).astype(int)
    with PrivatizedBlockWriter(path, n_cols=v, epsilon=EPS, N=1.0, randomness="simulation", mechanism="fast",
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


def _in_process(path, n_warm, n_timed):
    """The in-process sweep as a user runs it, in a fresh process: the privatized blocks read
    into one matrix, the sampler built, sweeps timed on 1 and 2 threads; its peak resident
    memory is that process's (the benchmark's own data generation is not counted)."""
    code = ("import json, sys; from bench.distributed import _in_process_child; "
            "print(json.dumps(_in_process_child(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))))")
    done = subprocess.run([sys.executable, "-c", code, str(path), str(n_warm), str(n_timed)],
                          check=True, capture_output=True, text=True, cwd=ROOT)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return {int(k) if k.isdigit() else k: v for k, v in out.items()}


def _in_process_child(path, n_warm, n_timed):
    y_tilde, alpha = PrivatizedBlocks(path).to_dense()
    out = {}
    for threads in (1, 2):
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        sampler = GibbsSampler.private(y_tilde, alpha, TopicModel(K), rng=SEED, init="prior",
                                       sparse=True)
        out[threads], _ = _median(sampler.sweep, n_warm, n_timed)
        del sampler
    out["peak_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return out


def _distributed(path, n_workers, n_warm, n_timed):
    # Dask is an optional extra (lpp[distributed]): only this part of the benchmark needs it.
    # The engine is imported here too, not at the top: a worker imports this module to run
    # _rss, and its memory before the engine's import (_import_engine) is the bare worker's
    from dask.distributed import Client, LocalCluster  # noqa: PLC0415

    from lpp.inference.distributed import (  # noqa: PLC0415
        WORKER_ENV,
        WORKER_PRELOAD,
        DistributedChain,
    )

    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0", env=WORKER_ENV,
                      preload=[WORKER_PRELOAD]) as cluster, \
            Client(cluster) as client:
        bare = client.run(_rss)
        client.run(_import_engine)
        imported = client.run(_rss)
        chain = DistributedChain(client, PrivatizedBlocks(path), TopicModel(K), SEED, "prior")
        before = [0]

        def sweep():
            before[0] = chain.bytes_moved
            chain.sweep()
            chain.release()

        seconds, parts = _median(sweep, n_warm, n_timed,
                                 lambda: (dict(chain.last_seconds),
                                          chain.bytes_moved - before[0],
                                          list(chain.last_block_seconds)))
        chain_work = [_block_work(chain, b) for b in range(len(chain.rows))]
        chain.sweep()  # one more, its draws held while the holdings are taken
        holdings = chain.worker_holdings()
        chain.release()
        memory = chain.worker_memory()
        # the worker that peaked highest, and what it holds
        top = max(memory, key=memory.get)
        breakdown = {"bare_worker_bytes": int(bare[top]),
                     "imports_bytes": int(imported[top] - bare[top]),
                     "block_bytes": holdings[top]["block_bytes"],
                     "shared_table_bytes": holdings[top]["shared_table_bytes"],
                     "draw_bytes": holdings[top]["draw_bytes"],
                     "rss_after_bytes": holdings[top]["rss"]}

        theta, phi = chain.state["theta"], chain.state["phi"]

        def ping():
            # the sweep's two rounds of pinned tasks doing no work but moving the sweep's bytes:
            # theta rows and phi out, arrays of the counts' shapes back
            first = [client.submit(_echo, theta[lo:hi], phi, workers=[w], pure=False)
                     for (lo, hi), w in zip(chain.rows, chain.placement)]
            client.gather([client.submit(_noop, f, workers=[w], pure=False)
                           for f, w in zip(first, chain.placement)])

        latency, _ = _median(ping, 1, n_timed)
    block_seconds = np.median(np.array([p[2] for p in parts]), axis=0)
    return {"seconds": seconds, "latency_seconds": latency,
            "blocks_seconds": float(np.median([p[0]["blocks"] for p in parts])),
            "worker_compute_seconds": float(np.median([p[0]["worker_compute"] for p in parts])),
            "block_seconds": block_seconds.tolist(), "block_work": chain_work,
            "client_seconds": float(np.median([p[0]["client"] for p in parts])),
            "bytes_per_sweep": int(parts[-1][1]),
            "peak_bytes_per_worker": int(max(memory.values())), "memory_breakdown": breakdown}


def _noop(x):
    return x


def _echo(theta, phi):
    return np.zeros(theta.shape, np.int64), np.zeros(phi.shape, np.int64)


def _block_work(chain, b):
    """Work units of block b's pass: entries of E times K plus its rows' topic totals."""
    lo, hi = chain.rows[b]
    nnz = chain.client.submit(lambda blk: blk.privacy.layout.nnz, chain.blocks[b],
                              pure=False).result()
    return int(nnz * K + (hi - lo) * K)


def _rss() -> int:
    return process_memory("VmRSS").get("VmRSS", 0)


def _import_engine():
    import lpp.inference.distributed  # noqa: F401  (what a worker imports to run its blocks)


def _layout_size(y_tilde):
    return int(np.count_nonzero(y_tilde > 0))


def cost_model(rows):
    """The cost model's components, calibrated on the 1-worker run of each size, and its
    predictions for every run and for the target corpus.

    ``sweep(N) = L + a * max_w work_w + b * (D + V) K``: ``L`` the measured round trip of a
    sweep's two rounds of tasks moving the sweep's bytes but doing no work; ``a`` seconds per
    work unit of the blocks' passes, timed on the workers (``work``: entries of E times K plus
    rows times K); ``b`` seconds per Gamma draw of the client's updates. Memory per worker:
    ``base + block_bytes + shared tables + draw``, where ``base`` is the worker's resident
    bytes before it holds data (interpreter, Dask, lpp, numba's compiled kernels), the blocks'
    bytes are proportional to its rows and the shared tables are fixed (chunks x V x K).
    """
    fit = {r["D"]: r for r in rows if r["workers"] == 1}
    a = float(np.median([sum(r["block_seconds"]) / sum(r["block_work"]) for r in fit.values()]))
    b = float(np.median([r["client_seconds"] / ((r["D"] + r["V"]) * K) for r in fit.values()]))
    base = float(np.median([_base_bytes(r) for r in fit.values()]))
    latency = float(max(r["latency_seconds"] for r in rows))

    def per_worker(r, n):
        """The busiest worker's share of the work, with the blocks placed as the chain does."""
        work = [0] * n
        for i, w in enumerate(r["block_work"]):
            work[i * n // len(r["block_work"])] += w
        return max(work)

    def memory(d, v, n, fit_row=None):
        rows_w = -(-d // n)
        if fit_row is not None:  # the measured data bytes of this size, shared out by rows
            m = fit_row["memory_breakdown"]
            data = m["block_bytes"] * rows_w / d + m["draw_bytes"] * rows_w / d
            return base + data + m["shared_table_bytes"]
        return base + _data_bytes(d, v, rows_w)

    checks = []
    for r in rows:
        t = r["latency_seconds"] + a * per_worker(r, r["workers"]) + b * (r["D"] + r["V"]) * K
        mem = memory(r["D"], r["V"], r["workers"], fit.get(r["D"]))
        check = {"D": r["D"], "workers": r["workers"], "measured_s": r["seconds"],
                 "predicted_s": t, "time_error": t / r["seconds"] - 1,
                 "measured_worker_gib": r["peak_bytes_per_worker"] / GIB,
                 "predicted_worker_gib": mem / GIB,
                 "memory_error": mem / r["peak_bytes_per_worker"] - 1}
        alone = fit.get(r["D"])
        if r["workers"] > 1 and alone is not None:
            # workers sharing one machine slow each other's block passes (one memory system,
            # one last-level cache); the model is for workers on machines of their own, so
            # this factor, measured here, is shown with what the model predicts with it
            slowdown = float(np.median(r["block_seconds"]) / np.median(alone["block_seconds"]))
            t_shared = (r["latency_seconds"] + a * slowdown * per_worker(r, r["workers"])
                        + b * (r["D"] + r["V"]) * K)
            check.update(colocated_slowdown=slowdown, predicted_colocated_s=t_shared,
                         colocated_time_error=t_shared / r["seconds"] - 1)
        checks.append(check)
    d, v = TARGET["D"], TARGET["V"]
    nnz = TARGET["positive_fraction"] * d * v
    target = [{"workers": n, "sweep_s": latency + a * (nnz * K + d * K) / n + b * (d + v) * K,
               "worker_gib": memory(d, v, n) / GIB}
              for n in (1, 8, 32, 128, 512)]
    return {"a": a, "b": b, "latency": latency, "base_bytes": base, "checks": checks,
            "target": target}


def _base_bytes(r):
    """A worker's resident bytes before it holds data: the peak less what it holds."""
    m = r["memory_breakdown"]
    return r["peak_bytes_per_worker"] - m["block_bytes"] - m["shared_table_bytes"] - m["draw_bytes"]


def _data_bytes(d, v, rows):
    """Bytes a worker holds for ``rows`` rows of the target corpus: y_tilde (1 byte per entry
    at epsilon/N = 1), the layout (8 bytes per positive entry), the draw (8 per positive entry,
    4 per token: about one token per entry), the document-topic counts and residuals
    (16 K per row), plus the shared tables (32 chunks x V x K int32 and 3 x 32 x V)."""
    pos = TARGET["positive_fraction"] * rows * v
    return rows * v + 16 * pos + 4 * rows * v + 16 * K * rows + 32 * v * (4 * K + 24)


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
        with tempfile.TemporaryDirectory() as tmp:
            _write_blocks(y_tilde, alpha, tmp)
            del y_tilde
            ip = _in_process(tmp, n_warm, n_timed)
            in_proc[n] = ip
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
    load = os.getloadavg()
    print(f"command: python -m bench.distributed {' '.join(argv)}".rstrip()
          + ("" if "--large" in argv or "--only-large" in argv else
             "   (10,000^2: add --large, or --only-large to add it to the saved 3000^2 rows)"))
    print(f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on {os.cpu_count()} cores: "
          "the machine is shared, compare the ratios of one run")
    print(f"{'D=V':>6} {'W':>2} {'in-proc s':>9} {'dist s':>7} {'latency':>7} {'overhead':>8} "
          f"{'MB/sweep':>8} {'GiB/worker':>10} {'vs in-proc':>10}")
    for r in rows:
        print(f"{r['D']:>6} {r['workers']:>2} {r['in_process_s']:>9.3f} {r['seconds']:>7.3f} "
              f"{r['latency_seconds']:>7.3f} "
              f"{r['overhead']:>8.1%} {r['bytes_per_sweep'] / 1e6:>8.1f} "
              f"{r['peak_bytes_per_worker'] / GIB:>10.2f} {r['worker_vs_in_process_peak']:>10.0%}")
    print("memory of the highest worker (MiB): bare dask worker, + lpp imports, blocks' data, "
          "a sweep's draws, shared tables, resident after the sweeps, peak")
    for r in rows:
        m = r["memory_breakdown"]
        print(f"  D={r['D']} W={r['workers']}: {m['bare_worker_bytes'] / 2**20:.0f}, "
              f"+{m['imports_bytes'] / 2**20:.0f}, {m['block_bytes'] / 2**20:.0f}, "
              f"{m['draw_bytes'] / 2**20:.0f}, "
              f"{m['shared_table_bytes'] / 2**20:.0f}, {m['rss_after_bytes'] / 2**20:.0f}, "
              f"{r['peak_bytes_per_worker'] / 2**20:.0f}")
    print("cost model check (fitted on W=1):")
    for c in model["checks"]:
        shared = ("" if "colocated_slowdown" not in c else
                  f"; with the workers' measured slowdown on one machine "
                  f"(x{c['colocated_slowdown']:.2f}) {c['predicted_colocated_s']:.3f} "
                  f"({c['colocated_time_error']:+.0%})")
        print(f"  D={c['D']} W={c['workers']}: time {c['measured_s']:.3f} s measured, "
              f"{c['predicted_s']:.3f} predicted ({c['time_error']:+.0%}){shared}; memory "
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
