"""What the README's example costs the first time: numba compiling the kernels it calls.

    python -m bench.compile [--rounds R] [--base REV] [--quick]

Runs the README's python block in a fresh interpreter with an empty ``NUMBA_CACHE_DIR``
(nothing compiled yet, as on a new machine or after lpp changes), listing every jitted
function numba compiles (``numba.core.event``'s ``numba:compile`` events) with its own
seconds — a kernel's time less the helpers compiled inside it — and the block's wall time;
then once more on the cache that run filled (the time every later run takes). ``--base REV``
runs a git revision's ``lpp`` (exported with ``git archive``) the same way, alternating with
the working tree, and prints the ratio of their first-run times (the revision must run
today's README example: one from before an API the example uses stops with its error). Prints the table of the
working tree's first round, every round's totals and the 1-minute load average before and
after; writes ``bench/results/compile.json``. ``--quick`` runs the block once on lpp's own
cache (usually compiling nothing) and writes nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import machine, write_results
from bench.ab import ROOT, _export

#: the README's first python block (the library's fifteen-line example)
_FENCE = re.compile(r"^```python\n(?P<body>.*?)^```", re.S | re.M)

_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from numba.core import event

compiled, stack = {}, []


class Timer(event.Listener):
    def on_start(self, ev):
        stack.append(time.perf_counter())

    def on_end(self, ev):
        elapsed = time.perf_counter() - stack.pop()
        disp = ev.data["dispatcher"]
        fn = disp.py_func
        name = f"{fn.__module__}.{fn.__qualname__}"
        if disp.targetoptions.get("parallel"):
            name += " [parallel]"
        row = compiled.setdefault(name, {"seconds": 0.0, "signatures": []})
        row["seconds"] += elapsed
        row["signatures"].append(str(ev.data["args"]))
        for outer in range(len(stack)):  # the callers' own time excludes this compilation
            stack[outer] += elapsed


code = open(sys.argv[1]).read()
with event.install_listener("numba:compile", Timer()):
    exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
print(json.dumps({"wall": time.perf_counter() - t0, "compiled": compiled}))
"""


def readme_example(readme: Path = ROOT / "README.md") -> str:
    return _FENCE.search(readme.read_text())["body"]


def run_example(tree: Path, script: Path, cache: str | None) -> dict:
    """The README block in a fresh interpreter importing ``lpp`` from ``tree``: its wall time
    and the seconds of each function compiled (``cache`` None: lpp's own cache folder)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("NUMBA_CACHE_DIR", None)
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = cache
    done = subprocess.run([sys.executable, "-c", _CHILD, str(script)], env=env, cwd=tree,
                          capture_output=True, text=True)
    if done.returncode:
        # a --base revision older than the README's API cannot run today's example
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise SystemExit(f"the README example failed with the lpp of {tree}: {last}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _table(run: dict) -> list[dict]:
    rows = [{"function": name, "seconds": row["seconds"], "signatures": row["signatures"]}
            for name, row in run["compiled"].items()]
    rows.sort(key=lambda r: -r["seconds"])
    return rows


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m bench.compile", description=__doc__)
    parser.add_argument("--rounds", type=int, default=2, help="fresh-cache runs per version")
    parser.add_argument("--base", default=None, help="a git revision to compare with")
    parser.add_argument("--quick", action="store_true",
                        help="one run on lpp's own cache, working tree only; writes nothing")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        script = tmp / "readme_example.py"
        script.write_text(readme_example())
        trees = {"working": ROOT}
        if args.base and not args.quick:
            trees = {"base": _export(args.base, tmp), "working": ROOT}
        rounds = 1 if args.quick else args.rounds
        runs = {side: [] for side in trees}
        for r in range(rounds):
            for side, tree in trees.items():
                if args.quick:
                    runs[side].append({"first": run_example(tree, script, None)})
                    continue
                cache = tmp / f"cache-{side}-{r}"
                cache.mkdir()
                first = run_example(tree, script, str(cache))
                again = run_example(tree, script, str(cache))
                runs[side].append({"first": first, "cached": again})
    load_after = os.getloadavg()[0]

    first = runs["working"][0]["first"]
    rows = _table(first)
    compile_total = sum(r["seconds"] for r in rows)
    print(f"The README's example, fresh NUMBA_CACHE_DIR (working tree, round 1): "
          f"{len(rows)} functions compiled")
    print(f"{'seconds':>8}  {'sigs':>4}  function")
    for row in rows:
        print(f"{row['seconds']:8.2f}  {len(row['signatures']):>4}  {row['function']}")
    print(f"{compile_total:8.2f}        compiling, of {first['wall']:.1f} s for the whole block")
    totals = {}
    for side, side_runs in runs.items():
        firsts = [run["first"]["wall"] for run in side_runs]
        cached = [run["cached"]["wall"] for run in side_runs if "cached" in run]
        totals[side] = {"first_seconds": firsts, "cached_seconds": cached}
        print(f"{side}: first run " + ", ".join(f"{t:.1f}" for t in firsts) + " s"
              + (("; cached " + ", ".join(f"{t:.1f}" for t in cached) + " s") if cached else ""))
    if "base" in totals:
        ratios = [w / b for w, b in zip(totals["working"]["first_seconds"],
                                        totals["base"]["first_seconds"])]
        print("first run, working / base: " + ", ".join(f"{r:.2f}" for r in ratios))
        totals["ratio_first"] = ratios
    print(f"load average (1 min) {load_before:.2f} before, {load_after:.2f} after, "
          f"on {os.cpu_count()} cores")
    result = {"machine": machine(), "base": args.base, "rounds": rounds, "totals": totals,
              "compiled": rows, "compile_seconds": compile_total,
              "load_before": load_before, "load_after": load_after}
    if not args.quick:
        print(f"wrote {write_results('compile', result)}")
    return result


if __name__ == "__main__":
    main()
