"""Every benchmark runs in its quick form, prints its table and leaves the committed results alone."""
import hashlib
import importlib
import pkgutil

import pytest

import bench
from bench import RESULTS

SCRIPTS = {
    "bessel": lambda m: m.main(quick=True),
    "distributed": lambda m: m.main(["--quick"]),
    "estimators": lambda m: m.main(["--quick"]),
    "mechanism": lambda m: m.main(quick=True),
    "metrics": lambda m: m.main(quick=True),
    "inference": lambda m: m.main(quick=True),
    "lda": lambda m: m.main(["--quick"]),
    "loaders": lambda m: m.main(["--quick"]),
    "pass1": lambda m: m.main(["--quick"]),
    "rng": lambda m: m.main(["--quick"]),
    "saved_sweep": lambda m: m.main(["--quick"]),
    "score": lambda m: m.main(["--quick"]),
    "sweep": lambda m: m.main(["numpy", "scaling", "large", "--quick"]),
    "accuracy": lambda m: m.main(["long", "curve", "truth", "--quick"]),
    "tables": lambda m: m.main(),
    "vi": lambda m: m.main(["--quick"]),
    "central_runtime": lambda m: m.main(["--quick"]),
    "compile": lambda m: m.main(["--quick"]),
    "gpu": lambda m: m.main(["--quick"]),   # the CUDA kernels in numba-cuda's simulator
    "threads": lambda m: m.main(["--quick"]),
}
#: modules of bench/ that are not run here, and why
NOT_RUN = {
    "ab": "exports a git revision and times it in fresh interpreters",
    "floor": "a kernel that bench.sweep and bench.pass1 time, no script",
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
    SCRIPTS[name](importlib.import_module(f"bench.{name}"))
    printed = capsys.readouterr().out
    assert len(printed.splitlines()) >= 2, printed
    assert "wrote" not in printed
    assert _digest(RESULTS) == before
