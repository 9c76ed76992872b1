"""Speed measurements, run as ``python -m bench.<name>``.

Each script prints a table and writes ``bench/results/<name>.json`` (atomically), with the
machine and the code's revision (:func:`machine`). Timings are informative only: they depend on
the machine and on its load; tests never assert on them. ``profiles/run.py`` records the same
:func:`machine` beside a profile's stage times.
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from pathlib import Path

from lpp.formats.files import write_json

RESULTS = Path(__file__).resolve().parent / "results"


def best_time(fn, repeat=3):
    """Best wall time of ``repeat`` calls of ``fn()`` (seconds)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def cpu_model() -> str:
    """The CPU's model name (Linux's ``/proc/cpuinfo``), or ``"unknown"``."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


#: the folders of a checkout that hold code (what a timing or a pipeline output depends on)
CODE_PATHS = ("lpp", "bench", "study", "notebooks", "data_prep", "experiments", "profiles")


def code_revision(repo: Path = RESULTS.parents[1]) -> str:
    """The git commit of the checkout ``repo`` (this one by default), ``+changes`` appended
    when tracked files of its code (:data:`CODE_PATHS`) differ from it; ``"unknown"`` outside a
    git checkout. A result file is only comparable with another made at the same revision (or
    one that did not change the code it times)."""
    def git(*args):
        done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if not commit:
        return "unknown"
    changed = git("status", "--porcelain", "--untracked-files=no", "--", *CODE_PATHS)
    return commit + ("+changes" if changed else "")


def machine():
    """What a result depends on besides the code's inputs: Python, numpy, numba and its thread
    count, the cores and the CPU's model, and the code's revision (:func:`code_revision`)."""
    import numba
    import numpy

    return {"python": platform.python_version(), "machine": platform.machine(),
            "cpu_count": os.cpu_count(), "numba": numba.__version__,
            "numba_threads": numba.get_num_threads(), "numpy": numpy.__version__,
            "cpu_model": cpu_model(), "revision": code_revision()}


def write_results(name, payload):
    """Write ``bench/results/<name>.json`` atomically (temp file + rename)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    return write_json(RESULTS / f"{name}.json", payload)


def record_part(record: dict, name: str, payload: dict) -> dict:
    """Put the part ``name`` just run into ``record`` (a result file's contents) with the
    machine it ran on (:func:`machine`). The file's own ``machine`` describes the parts that
    name none (files written before parts carried their own), so running one part never
    relabels the others."""
    here = machine()
    record.setdefault("machine", here)
    record[name] = {**payload, "machine": here}
    return record


def write_parts(name: str, parts: dict, results: Path = RESULTS):
    """Write the parts just run into ``<results>/<name>.json`` (:func:`record_part`), keeping
    the parts of the file that were not run."""
    path = results / f"{name}.json"
    record = json.loads(path.read_text()) if path.exists() else {}
    for part, payload in parts.items():
        record_part(record, part, payload)
    results.mkdir(parents=True, exist_ok=True)
    return write_json(path, record)
