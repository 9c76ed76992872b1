"""Every benchmark runs in its quick form, prints its table and leaves the committed results alone."""
import hashlib
import importlib

import pytest

from bench import RESULTS

SCRIPTS = {
    "bessel": lambda m: m.main(quick=True),
    "distributed": lambda m: m.main(["--quick"]),
    "mechanism": lambda m: m.main(quick=True),
    "metrics": lambda m: m.main(quick=True),
    "inference": lambda m: m.main(quick=True),
    "pass1": lambda m: m.main(["--quick"]),
    "rng": lambda m: m.main(["--quick"]),
    "saved_sweep": lambda m: m.main(["--quick"]),
    "sweep": lambda m: m.main(["numpy", "scaling", "large", "--quick"]),
    "accuracy": lambda m: m.main(["long", "curve", "truth", "--quick"]),
    "tables": lambda m: m.main(),
    "vi": lambda m: m.main(["--quick"]),
    "npmi_anomaly": lambda m: m.main(["--quick"]),
    "convergence": lambda m: m.main(["--quick"]),
    "starts": lambda m: m.main(["--quick"]),
    "long_nonprivate": lambda m: m.main(["--quick"]),
    "scale_moves": lambda m: m.main(["--quick"]),
    "slow_direction": lambda m: m.main(["--quick"]),
    "central_runtime": lambda m: m.main(["--quick"]),
}


def _digest(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*"))}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_quick_benchmark_runs_and_writes_nothing(name, capsys):
    before = _digest(RESULTS)
    SCRIPTS[name](importlib.import_module(f"bench.{name}"))
    printed = capsys.readouterr().out
    assert len(printed.splitlines()) >= 2, printed
    assert "wrote" not in printed
    assert _digest(RESULTS) == before
