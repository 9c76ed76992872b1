"""Every benchmark runs in its quick form, prints its table and leaves the committed results alone."""
import hashlib
import importlib
import pkgutil

import pytest

import bench
from bench import RESULTS

#: each benchmark's quick form: the arguments of its ``main`` (``python -m bench.<name>
#: --quick`` where not named here)
ARGUMENTS = {
    "sweep": ["numpy", "scaling", "large", "--quick"],
    "accuracy": ["long", "curve", "truth", "--quick"],
    "tables": [],
}
#: the benchmarks whose ``main`` takes ``quick=True`` instead of a command line
QUICK_KEYWORD = ("bessel", "mechanism", "metrics", "inference")
#: every benchmark run here (gpu: the CUDA kernels in numba-cuda's simulator)
SCRIPTS = ("bessel", "distributed", "estimators", "mechanism", "metrics", "inference", "lda",
           "loaders", "pass1", "rng", "saved_sweep", "score", "sweep", "accuracy", "tables",
           "vi", "central_runtime", "compile", "gpu", "threads")
#: modules of bench/ that are not run here, and why
NOT_RUN = {
    "ab": "exports a git revision and times it in fresh interpreters",
    "floor": "a kernel that bench.sweep and bench.pass1 time, no script",
    "memory": "what a process holds, read by bench.estimators and bench.distributed, no script",
    "paper_numbers": "the VI paper's numbers that bench.vi and bench.accuracy print, no script",
    "reference_numpy": "the NumPy sampler of bench.sweep, tested in test_reference_numpy.py",
}


def _digest(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*"))}


def test_every_module_of_bench_is_run_here_or_says_why_not():
    modules = {m.name for m in pkgutil.iter_modules(bench.__path__)}
    assert modules == set(SCRIPTS) | set(NOT_RUN)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_quick_benchmark_runs_and_writes_nothing(name, capsys):
    before = _digest(RESULTS)
    module = importlib.import_module(f"bench.{name}")
    if name in QUICK_KEYWORD:
        module.main(quick=True)
    else:
        module.main(ARGUMENTS.get(name, ["--quick"]))
    printed = capsys.readouterr().out
    assert len(printed.splitlines()) >= 2, printed
    assert "wrote" not in printed
    assert _digest(RESULTS) == before
