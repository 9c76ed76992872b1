"""The topic model's sweeps on a GPU beside the CPU, in one run (``python -m bench.gpu``).

At 10,000 x 10,000, K = 50, on the text-like data of :mod:`bench.sweep` (epsilon/N = 1, 2, 3),
it prints side by side, seconds per sweep:

* the CPU collapsed sweep (the sparse engine) at the thread count the machine offers;
* the CUDA *floor kernel*: one thread per positive entry of ``y_tilde``, a K-term dot product
  ``theta_d . phi_v`` and one uniform, plus the Gamma updates of theta and phi — the work every
  exact sweep must do, the yardstick of the engines;
* the CUDA collapsed sweep (ours), the naive sweep and (once, on the true counts of
  epsilon/N = 1) the non-private sweep;

then the device memory in use at its peak (sampled after each phase: the engines' buffers, and
the dense rates and counts a saved sweep forms) and the seconds of a 1,000-sweep
``fit_private(..., device="cuda")`` (burn-in 500, every 50th sweep saved: rates summed, log
joints), upload and transfers included, compilation not (it is timed apart); and whether a
seed repeats the chain bit for bit on the device with several block sizes.

Every sweep time is the median of timed sweeps after warm-up sweeps. Needs numba-cuda and a GPU;
``--quick`` runs a tiny version (numba-cuda's simulator will do) and writes nothing. Writes
``bench/results/gpu.json``, or ``--out PATH``.
"""
from __future__ import annotations

import argparse
import json
import time

import numba
import numpy as np
from numba import cuda

from bench import cpu_model, machine, write_results
from bench.sweep import _median_sweep, text_data
from lpp.formats.files import write_json
from lpp.inference import GibbsSampler, RunOptions, TopicModel, fit_private
from lpp.inference.engines.cuda import functions, launch_settings
from lpp.inference.engines.cuda.device import CudaBackend

_uniform = functions.build_functions(cuda.jit(device=True)).uniform


def _floor_kernel(n_topics):
    @cuda.jit
    def floor(n, rows, cols, theta, phi_t, k0, k1, iteration, sink):
        i = cuda.grid(1)
        if i < n:
            d = rows[i]
            v = cols[i]
            acc = 0.0
            for k in range(n_topics):
                acc += theta[d, k] * phi_t[v, k]
            u = _uniform(k0, k1, i, iteration, 0)
            if u * acc < 1e-300:  # never true on real rates: keeps the work from being dropped
                cuda.atomic.add(sink, 0, 1)
    return floor


class _Floor:
    """The floor kernel over the positive entries, then the engine's own Gamma updates."""

    def __init__(self, engine, y_tilde, n_topics, threads_per_block=128):
        positive = np.nonzero(y_tilde > 0)
        self.engine, self.tpb = engine, threads_per_block
        self.rows = cuda.to_device(positive[0].astype(np.int32))
        self.cols = cuda.to_device(positive[1].astype(np.int32))
        self.n = positive[0].size
        self.sink = cuda.to_device(np.zeros(1, dtype=np.int64))
        self.kernel = _floor_kernel(n_topics)
        self.iteration = 0

    def sweep(self, model, point):
        eng = self.engine
        self.iteration += 1
        blocks = (self.n + self.tpb - 1) // self.tpb
        self.kernel[blocks, self.tpb](self.n, self.rows, self.cols, point.theta_device,
                                      point.phi_t_device, np.uint64(1), np.uint64(2),
                                      self.iteration, self.sink)
        eng._update_factors(model, point, 1, self.iteration)
        cuda.synchronize()


def reproducibility(n: int, k: int, sweeps: int) -> dict:
    """Whether the same seed repeats the chain bit for bit on this device, with 128 threads
    per block twice and with 32 and 512 (the theta and phi of the last sweep compared)."""
    y_tilde, alpha, _, _, _ = text_data(n, k, 1.0, seed=3)
    finals = {}
    for label, tpb in (("128", 128), ("128 again", 128), ("32", 32), ("512", 512)):
        with launch_settings(threads_per_block=tpb):
            fit = fit_private(y_tilde, alpha, TopicModel(k),
                              run=RunOptions(n_iter=sweeps, progress=False, save_counts=True),
                              rng=7, device="cuda")
        finals[label] = (fit.state["theta"], fit.state["phi"], fit.samples["y"][-1])
    base = finals["128"]
    return {f"identical_{label}": all(np.array_equal(a, b) for a, b in zip(base, other))
            for label, other in finals.items() if label != "128"} | {
        "n": n, "K": k, "sweeps": sweeps}


class _PhaseTimer(CudaBackend):
    """The GPU backend with a synchronisation after every launch, timing each kernel."""

    def __init__(self):
        super().__init__()
        self.seconds = {}

    def launch(self, kernels, name, n, *args):
        cuda.synchronize()
        t0 = time.perf_counter()
        super().launch(kernels, name, n, *args)
        cuda.synchronize()
        self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - t0


def phases(y_tilde, alpha, k, sweeps) -> dict:
    """Seconds per sweep of each kernel of the collapsed sweep (each launch synchronised)."""
    chain = GibbsSampler.private(y_tilde, alpha, TopicModel(k), rng=1, device="cuda")
    timer = _PhaseTimer()
    chain._fused.backend = timer
    chain.sweep()
    timer.seconds.clear()
    t0 = time.perf_counter()
    for _ in range(sweeps):
        chain.sweep()
    per_sweep = {name: sec / sweeps for name, sec in sorted(timer.seconds.items(),
                                                            key=lambda kv: -kv[1])}
    return {"sweep_synchronised": (time.perf_counter() - t0) / sweeps, "kernels": per_sweep}


def _device_in_use() -> int:
    free, total = cuda.current_context().get_memory_info()
    return int(total - free) if np.isfinite(total) else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny run; writes nothing")
    parser.add_argument("--n", type=int, default=None, help="rows = columns (default 10,000)")
    parser.add_argument("--out", default=None, help="write the results here instead")
    args = parser.parse_args(argv)
    quick = args.quick
    n = args.n or (12 if quick else 10_000)
    k = 3 if quick else 50
    levels = (1.0,) if quick else (1.0, 2.0, 3.0)
    warm, timed = (1, 2) if quick else (2, 5)
    fit_iter, fit_burn, fit_thin = (6, 2, 2) if quick else (1000, 500, 50)
    if not cuda.is_available():
        raise SystemExit("bench.gpu needs a CUDA GPU (or NUMBA_ENABLE_CUDASIM=1 with --quick)")

    rows = []
    peak = 0
    device_name = None
    compile_seconds = None
    true_counts = np.empty((n, n), dtype=np.int64)
    for eps in levels:
        t0 = time.perf_counter()
        y_tilde, alpha, _, _, info = text_data(n, k, eps, seed=0,
                                               true_counts=true_counts if eps == 1.0 else None)
        gen_seconds = time.perf_counter() - t0
        row = {"epsilon_over_n": eps, **info, "generate_seconds": gen_seconds}
        if eps == 1.0:
            cpu = GibbsSampler.private(y_tilde, alpha, TopicModel(k), rng=1)
            row["cpu_collapsed"], _ = _median_sweep(cpu.sweep, warm, timed)
            row["cpu_threads"] = numba.get_num_threads()
            del cpu
        for label, method in (("cuda_collapsed", "collapsed"), ("cuda_naive", "naive")):
            chain = GibbsSampler.private(y_tilde, alpha, TopicModel(k), method=method, rng=1,
                                         device="cuda")
            device_name = chain.device
            if compile_seconds is None:
                t0 = time.perf_counter()
                chain.sweep()
                compile_seconds = time.perf_counter() - t0
            row[label], _ = _median_sweep(chain.sweep, warm, timed)
            peak = max(peak, _device_in_use())
            if method == "collapsed":
                floor = _Floor(chain._fused, y_tilde, k)
                point = chain._snap.state
                model = chain.model
                row["cuda_floor"], _ = _median_sweep(lambda: floor.sweep(model, point), warm,
                                                     timed)
                chain.mu  # the dense rates and counts of a saved sweep
                chain.log_joint()
                peak = max(peak, _device_in_use())
                row["engine_device_bytes"] = chain._fused.device_bytes(k)
                row["phases"] = phases(y_tilde, alpha, k, timed)
                del floor
            del chain
        if eps == 1.0:
            chain = GibbsSampler.nonprivate(true_counts, TopicModel(k), rng=1, device="cuda")
            row["cuda_nonprivate"], _ = _median_sweep(chain.sweep, warm, timed)
            del chain
        row["collapsed_over_floor"] = row["cuda_collapsed"] / row["cuda_floor"]
        if "cpu_collapsed" in row:
            row["cpu_over_cuda_collapsed"] = row["cpu_collapsed"] / row["cuda_collapsed"]
        rows.append(row)
        if eps == 1.0:
            t0 = time.perf_counter()
            fit = fit_private(y_tilde, alpha, TopicModel(k),
                              run=RunOptions(n_iter=fit_iter, burn_in=fit_burn, thin=fit_thin,
                                             progress=False),
                              rng=1, device="cuda")
            fit_seconds = time.perf_counter() - t0
            peak = max(peak, _device_in_use())
            fit_record = {"n_iter": fit_iter, "burn_in": fit_burn, "thin": fit_thin,
                          "seconds": fit_seconds, "n_saved": int(fit.n_saved),
                          "log_joint_last": float(fit.log_joint[-1])}
            del fit

    repro = reproducibility(8 if quick else 2000, k, 3 if quick else 20)
    out = {"D": n, "V": n, "K": k, "data": "text-like (bench.sweep.text_data)",
           "device": device_name, **machine(),
           "compile_seconds": compile_seconds, "device_memory_peak_bytes": peak,
           "fit": fit_record, "reproducibility": repro, "rows": rows}
    cols = ("cpu_collapsed", "cuda_floor", "cuda_collapsed", "cuda_naive", "cuda_nonprivate")
    print(f"seconds per sweep at {n} x {n}, K = {k}; CPU: {cpu_model()} "
          f"({rows[0]['cpu_threads']} threads); GPU: {device_name}")
    print("eps/N | " + " | ".join(cols) + " | collapsed/floor | cpu/collapsed")
    for r in rows:
        cells = [f"{r[c]:.4f}" if c in r else "-" for c in cols]
        ratio = f"{r.get('cpu_over_cuda_collapsed', float('nan')):.1f}"
        print(f"{r['epsilon_over_n']:g} | " + " | ".join(cells)
              + f" | {r['collapsed_over_floor']:.2f} | {ratio}")
    print(f"peak device memory in use: {peak / 2**30:.2f} GiB; kernels compiled in "
          f"{compile_seconds:.1f} s; {fit_iter}-sweep fit (burn-in {fit_burn}, thin {fit_thin}): "
          f"{fit_record['seconds']:.1f} s")
    for r in rows:
        kernels = ", ".join(f"{name} {sec * 1e3:.2f}" for name, sec in
                            r["phases"]["kernels"].items())
        print(f"eps/N = {r['epsilon_over_n']:g}, collapsed sweep by kernel (ms, synchronised): "
              f"{kernels}")
    print(f"same seed, {repro['sweeps']} sweeps at {repro['n']}^2: bit-identical "
          + ", ".join(f"{key[10:]}: {val}" for key, val in repro.items()
                      if key.startswith("identical_")))
    if quick:
        return out
    if args.out:
        write_json(args.out, out)
        print(f"wrote {args.out}")
    else:
        print(f"wrote {write_results('gpu', out)}")
    print(json.dumps({r["epsilon_over_n"]: r["cuda_collapsed"] for r in rows}))
    return out


if __name__ == "__main__":
    main()
