"""Speed measurements, run as ``python -m bench.<name>``.

Each script prints a table and writes ``bench/results/<name>.json`` (atomically). Timings are
informative only: they depend on the machine and on its load; tests never assert on them.
"""
from __future__ import annotations

import os
import platform
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


def machine():
    import numba
    import numpy

    return {"python": platform.python_version(), "machine": platform.machine(),
            "cpu_count": os.cpu_count(), "numba": numba.__version__,
            "numba_threads": numba.get_num_threads(), "numpy": numpy.__version__}


def write_results(name, payload):
    """Write ``bench/results/<name>.json`` atomically (temp file + rename)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    return write_json(RESULTS / f"{name}.json", payload)
