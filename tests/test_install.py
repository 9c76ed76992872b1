"""The library installs as a researcher installs it: the newest Python here, no lock.

A fresh virtual environment on the newest Python found, ``pip install`` of this working tree
with whatever versions the resolver picks inside pyproject.toml's ranges (the lock is not
used), then a small private fit in that environment, from a directory outside the work tree
so that the installed copy is the one imported.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: what pip needs to build the package (pyproject's packages.find, its readme)
SOURCES = ("pyproject.toml", "README.md", "lpp", "data_prep", "study")

FIT = """
import sys
import numpy as np, numba, scipy
import lpp
from lpp.mechanism import alpha_from_epsilon, privatize
from lpp.inference import TopicModel, fit_private

y = np.random.default_rng(0).poisson(2.0, size=(12, 9))
alpha = alpha_from_epsilon(epsilon=1.0, N=1.0)
y_tilde = privatize(y, alpha, rng=1)
res = fit_private(y_tilde, alpha, TopicModel(3), n_iter=40, burn_in=20, rng=1, progress=False)
assert res.mu_hat.shape == (12, 9) and np.isfinite(res.mu_hat).all()
assert res.samples["phi"].shape == (20, 3, 9)
print(sys.version.split()[0], "numpy", np.__version__, "scipy", scipy.__version__,
      "numba", numba.__version__, "lpp from", lpp.__file__)
"""


def newest_python() -> str:
    """The newest Python 3 that runs here: ``python3.N`` on PATH or a pyenv version (pyenv's
    shims of versions that are not selected do not run), else this interpreter."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = [shutil.which(f"python3.{minor}") for minor in range(11, 30)]
    candidates += [str(p) for p in sorted(pyenv.glob("3.*/bin/python3"))]
    best, best_version = sys.executable, sys.version_info[:2]
    for exe in filter(None, candidates):
        run = subprocess.run([exe, "-c", "import sys, venv; print(*sys.version_info[:2])"],
                             capture_output=True, text=True)
        if run.returncode == 0:
            version = tuple(map(int, run.stdout.split()))
            if version > best_version:
                best, best_version = exe, version
    return best


def _run(cmd, **kwargs):
    run = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    assert run.returncode == 0, f"{cmd} failed:\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
    return run.stdout


@pytest.mark.slow
def test_the_library_installs_without_the_lock_and_fits(tmp_path):
    src = tmp_path / "src"
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            src.mkdir(exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    venv = tmp_path / "venv"
    _run([newest_python(), "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    # no -c requirements.lock, and no constraint file from the environment either
    env = {k: v for k, v in os.environ.items()
           if k not in ("PIP_CONSTRAINT", "PYTHONPATH", "NUMBA_CACHE_DIR")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    _run([str(python), "-m", "pip", "install", "-q", str(src)], env=env, timeout=1200)
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")
    out = _run([str(python), "-c", FIT], cwd=tmp_path, env=env, timeout=1200)
    assert f"lpp from {venv}" in out, out
    print(out)
