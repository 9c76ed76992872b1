"""Two versions of the sampler side by side: seconds per sweep of a base revision and of the
working tree, on the same data, in alternating runs (so drift of a shared machine hits both).

    python -m bench.ab [--base REV] [--base-tree DIR] [--rounds R] [--cases A,B] [--n N]
                       [--out PATH] [--quick]

Each run is a fresh interpreter with one numba thread that imports ``lpp`` from its version's
tree (the base is exported with ``git archive`` to a temporary folder), builds the chain, warms it
up (compilation excluded) and times sweeps. Cases: text-like data (N x N, by default 1000 x 1000,
K = 50, eps/N = 1 and 3; the sparse engine), the naive method on it (the known-counts engine) and
the VI paper's dense data (K = 50, eps/N = 1), plus the dense collapsed and the Bessel sweeps on
the text-like data, and on a machine with a GPU the CUDA collapsed and naive sweeps (each sweep
synchronised before its time is read; e.g. ``--cases "text eps/N=1 cuda" --n 10000`` against
the revision of an earlier ``bench/results/gpu.json``). Prints the median of each version and
the ratio working / base (below 1: faster); writes ``bench/results/ab.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np

from bench import machine, write_json, write_results
from bench.sweep import text_data, vi_data

ROOT = Path(__file__).resolve().parents[1]

#: name -> (data maker, eps/N, sampler options)
CASES = {
    "text eps/N=1": (text_data, 1.0, {}),
    "text eps/N=3": (text_data, 3.0, {}),
    "text eps/N=1 naive": (text_data, 1.0, {"method": "naive"}),
    "VI data eps/N=1": (vi_data, 1.0, {}),
    "text eps/N=1 dense": (text_data, 1.0, {"sparse": False}),
    "text eps/N=1 bessel": (text_data, 1.0, {"method": "bessel"}),
    "text eps/N=1 cuda": (text_data, 1.0, {"device": "cuda"}),
    "text eps/N=1 naive cuda": (text_data, 1.0, {"method": "naive", "device": "cuda"}),
}
#: the cases run unless ``--cases`` names others: those that need no GPU
CPU_CASES = [name for name, (_, _, opts) in CASES.items() if "device" not in opts]

_CHILD = r"""
import inspect, json, sys, time
import numpy as np
from lpp.inference import GibbsSampler, TopicModel
data = np.load(sys.argv[1])
opts = json.loads(sys.argv[2]); n_warm, n_timed, k = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
key = "rng" if "rng" in inspect.signature(GibbsSampler.private).parameters else "seed"
sampler = GibbsSampler.private(data["y_tilde"], float(data["alpha"]), TopicModel(k),
                               **{key: 1}, **opts)
if opts.get("device") == "cuda":
    from numba import cuda
    finish = cuda.synchronize   # a launch returns before the device has done its work
else:
    finish = lambda: None
for _ in range(n_warm):
    sampler.sweep()
finish()
times = []
for _ in range(n_timed):
    t0 = time.perf_counter(); sampler.sweep(); finish(); times.append(time.perf_counter() - t0)
print(json.dumps({"median": float(np.median(times)), "engine": str(sampler.engine)}))
"""


def _export(rev: str, into: Path) -> Path:
    archive = into / "base.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", "-o", str(archive), rev,
                    "lpp"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "base", filter="data")
    return into / "base"


def _run(tree: Path, data: Path, opts: dict, n_warm: int, n_timed: int, k: int) -> dict:
    # the version's tree first; what the caller's path held after it (e.g. a --target install
    # of numba-cuda on a GPU machine)
    path = os.pathsep.join(p for p in (str(tree), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path, "NUMBA_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", _CHILD, str(data), json.dumps(opts),
                          str(n_warm), str(n_timed), str(k)],
                         env=env, cwd=tree, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(base: str = "HEAD", rounds: int = 3, quick: bool = False, cases=None,
         n: int = 1000, out: str | None = None, base_tree: str | None = None) -> dict:
    n, k = (200, 10) if quick else (n, 50)
    n_warm, n_timed = (1, 2) if quick else (3, 10)
    names = cases or (CPU_CASES[:1] if quick else CPU_CASES)
    unknown = set(names) - set(CASES)
    if unknown:
        raise ValueError(f"unknown cases {sorted(unknown)}; choose from {list(CASES)}")
    cases = {name: CASES[name] for name in names}
    rounds = 1 if quick else rounds
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if base_tree is None:
            base_tree = _export(base, tmp)
        else:
            base_tree = Path(base_tree).resolve()
            if not (base_tree / "lpp" / "__init__.py").is_file():
                raise ValueError(f"--base-tree {base_tree}: no lpp package in it")
        for name, (make, eps, opts) in cases.items():
            y_tilde, alpha, *_ = make(n, k, eps)
            data = tmp / "data.npz"
            np.savez(data, y_tilde=y_tilde, alpha=alpha)
            times = {"base": [], "working": []}
            engines = {}
            for _ in range(rounds):
                for side, tree in (("base", base_tree), ("working", ROOT)):
                    res = _run(tree, data, opts, n_warm, n_timed, k)
                    times[side].append(res["median"])
                    engines[side] = res["engine"]
            row = {"case": name, "engine": engines["working"],
                   "base_seconds": float(np.median(times["base"])),
                   "working_seconds": float(np.median(times["working"])), "runs": times}
            row["ratio"] = row["working_seconds"] / row["base_seconds"]
            rows.append(row)
            print(f"{name:>22} {row['engine']:>7}  base {row['base_seconds']:.4f} s  "
                  f"working {row['working_seconds']:.4f} s  ratio {row['ratio']:.3f}", flush=True)
    result = {"machine": machine(), "base": base, "size": [n, n, k], "rounds": rounds,
              "rows": rows}
    if not quick:
        if out:
            write_json(Path(out), result)
        else:
            write_results("ab", result)
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="HEAD", help="git revision to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--cases", help="comma-separated case names (default: all but the "
                        "CUDA ones)")
    parser.add_argument("--n", type=int, default=1000, help="rows and columns of the data")
    parser.add_argument("--out", default=None,
                        help="write the results here instead of bench/results/ab.json")
    parser.add_argument("--base-tree", default=None,
                        help="a folder holding the base's lpp package, exported beforehand "
                             "(where the checkout has no git history, e.g. a copy of the work "
                             "tree on another machine); --base then only labels it")
    args = parser.parse_args()
    main(args.base, args.rounds, args.quick, args.cases.split(",") if args.cases else None,
         args.n, args.out, args.base_tree)
