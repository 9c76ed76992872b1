"""Every investigation runs in its quick form, prints its table and leaves the committed
results (``experiments/results``, and the benchmarks' ``bench/results``) alone."""
import hashlib
import importlib
import pkgutil

import pytest

import bench
import experiments

#: the investigations, each run here as ``python -m experiments.<name> --quick``
SCRIPTS = ("npmi_anomaly", "convergence", "starts", "long_nonprivate", "scale_moves",
           "slow_direction", "merged_topics", "network_heldout", "choose_k")


def _digest(*folders):
    """The hash of every file under ``folders``, subfolders included (``long_chains/``)."""
    return {p.as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for folder in folders for p in sorted(folder.rglob("*")) if p.is_file()}


def test_every_module_of_experiments_is_run_here():
    assert {m.name for m in pkgutil.iter_modules(experiments.__path__)} == set(SCRIPTS)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_quick_investigation_runs_and_writes_nothing(name, capsys):
    before = _digest(experiments.RESULTS, bench.RESULTS)
    importlib.import_module(f"experiments.{name}").main(["--quick"])
    printed = capsys.readouterr().out
    assert len(printed.splitlines()) >= 2, printed
    assert "wrote" not in printed
    assert _digest(experiments.RESULTS, bench.RESULTS) == before
