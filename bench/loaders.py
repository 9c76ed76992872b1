"""What the readers of lpp's folders cost: a base revision beside the working tree.

    python -m bench.loaders [--base REV] [--rounds R] [--quick]

The readers check every array's header against the folder's metadata before they read the
data; this times them on folders of ordinary size, the base revision's code and the working
tree's in alternating fresh interpreters (each imports ``lpp`` from its own tree; the base is
exported with ``git archive``). The folders are written once by the base's code, in a version
both read: a privatized matrix (``load_privatized``), the same in four row blocks
(``PrivatizedBlocks(...).to_dense()``) and a sparse count matrix (``load_counts``). Prints the
best seconds of each reader per version and the ratio working / base (below 1: faster);
writes ``bench/results/loaders.json``. ``--quick`` times the working tree alone on small
folders and writes nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from bench import machine, write_results
from bench.ab import ROOT, _export

_WRITE = r"""
import sys
import numpy as np
import scipy.sparse as sp
from pathlib import Path
from lpp.formats.counts import write_counts
from lpp.formats.privatized import save_privatized
from lpp.formats.privatized_blocks import PrivatizedBlockWriter

out, n_rows, n_cols = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
alpha = float(np.exp(-1.0))
y_tilde = rng.poisson(0.3, (n_rows, n_cols)) + rng.geometric(1 - alpha, (n_rows, n_cols)) \
    - rng.geometric(1 - alpha, (n_rows, n_cols))
rows = [f"d{i}" for i in range(n_rows)]
cols = [f"w{j}" for j in range(n_cols)]
settings = dict(epsilon=1.0, N=1.0, randomness="system", mechanism="fast", source="bench")
save_privatized(out / "single", y_tilde, alpha, row_ids=rows, column_ids=cols, **settings)
with PrivatizedBlockWriter(out / "blocks", n_cols=n_cols, column_ids=cols, **settings) as w:
    for lo, hi in zip(range(0, n_rows, n_rows // 4), range(n_rows // 4, n_rows + 1, n_rows // 4)):
        w.write(y_tilde[lo:hi], alpha, rows[lo:hi])
counts = sp.random(n_rows, n_cols, density=0.02, format="csr", random_state=1,
                   data_rvs=lambda k: rng.integers(1, 5, k)).astype(np.int64)
write_counts(out / "counts", counts, row_ids=rows, column_ids=cols, kind="bench", params={},
             inputs={}, summary={})
"""

_TIME = r"""
import json, sys, time
from lpp.formats.counts import load_counts
from lpp.formats.privatized import load_privatized
from lpp.formats.privatized_blocks import PrivatizedBlocks

folder, repeat = sys.argv[1], int(sys.argv[2])
readers = {"load_privatized": lambda: load_privatized(folder + "/single"),
           "blocks to_dense": lambda: PrivatizedBlocks(folder + "/blocks").to_dense(),
           "load_counts": lambda: load_counts(folder + "/counts")}
best = {}
for name, read in readers.items():
    read()  # imports and first touches of the files
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter(); read(); times.append(time.perf_counter() - t0)
    best[name] = min(times)
print(json.dumps(best))
"""


def _python(tree: Path, script: str, *args) -> str:
    env = {**os.environ, "PYTHONPATH": str(tree), "NUMBA_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", script, *map(str, args)], env=env, cwd=tree,
                         capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m bench.loaders", description=__doc__)
    parser.add_argument("--base", default="HEAD", help="the git revision to compare with")
    parser.add_argument("--rounds", type=int, default=5, help="alternating runs per version")
    parser.add_argument("--quick", action="store_true", help="small folders, working tree only")
    args = parser.parse_args(argv)
    n_rows, n_cols, repeat = (40, 30, 2) if args.quick else (2000, 5000, 5)
    rounds = 1 if args.quick else args.rounds
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        trees = {"working": ROOT} if args.quick else {"base": _export(args.base, tmp),
                                                       "working": ROOT}
        folders = tmp / "folders"
        folders.mkdir()
        _python(trees.get("base", ROOT), _WRITE, folders, n_rows, n_cols)
        runs = {side: [] for side in trees}
        for _ in range(rounds):
            for side, tree in trees.items():
                runs[side].append(json.loads(_python(tree, _TIME, folders, repeat)))
    rows = []
    print(f"Readers of a {n_rows} x {n_cols} matrix, best seconds of {repeat} reads, "
          f"{rounds} alternating runs per version")
    print(f"{'reader':<18} " + " ".join(f"{side:>10}" for side in trees) + "   ratio")
    for reader in runs["working"][0]:
        best = {side: min(run[reader] for run in runs[side]) for side in trees}
        row = {"reader": reader, **{f"{side}_seconds": best[side] for side in trees}}
        if "base" in best:
            row["ratio"] = best["working"] / best["base"]
        rows.append(row)
        ratio = f"{row['ratio']:7.3f}" if "ratio" in row else ""
        print(f"{reader:<18} " + " ".join(f"{best[side]:10.4f}" for side in trees) + f" {ratio}")
    result = {"machine": machine(), "base": None if args.quick else args.base,
              "size": [n_rows, n_cols], "repeat": repeat, "rounds": rounds, "rows": rows,
              "load": os.getloadavg()[0]}
    if not args.quick:
        print(f"wrote {write_results('loaders', result)}")
    return result


if __name__ == "__main__":
    main()
