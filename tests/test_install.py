"""The library installs as a researcher installs it: the newest Python here, no lock.

A fresh virtual environment on the newest Python found, ``pip install`` of this working tree
with whatever versions the resolver picks inside pyproject.toml's ranges (the lock is not
used), then a small private fit in that environment, from a directory outside the work tree
so that the installed copy is the one imported.

What is installed is ``lpp`` alone, whole: the compendium's packages (``study``,
``data_prep``, ``bench``, ``experiments``) run from the repository root and are never
installed, where a top-level package of the same name would shadow a user's own.
"""
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the repository's top-level packages: the library and the compendium's own
TOP_LEVEL = tuple(sorted(p.parent.name for p in ROOT.glob("*/__init__.py")))
COMPENDIUM = tuple(name for name in TOP_LEVEL if name != "lpp")
#: what a build sees of a clone: pyproject.toml, the readme, the licence and every top-level
#: package (the compendium's too, which the build must leave out)
SOURCES = ("pyproject.toml", "README.md", "LICENSE", *TOP_LEVEL)

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
""" + f"""
# the compendium's packages stay in the repository: none of them was installed
import importlib.util
for name in {COMPENDIUM!r}:
    assert importlib.util.find_spec(name) is None, f"{{name}} was installed"
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


def _copy(names, src: Path) -> Path:
    src.mkdir(parents=True)
    for name in names:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(ROOT / name, src / name)
    return src


def _run(cmd, **kwargs):
    run = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    assert run.returncode == 0, f"{cmd} failed:\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
    return run.stdout


@pytest.mark.slow
def test_the_library_installs_without_the_lock_and_fits(tmp_path):
    src = _copy(SOURCES, tmp_path / "src")
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


# ---------------------------------------------------------------- what the distribution holds
def _library_files() -> list[str]:
    """Every file of lpp/ that a wheel must carry, relative to the root: git's list where
    this is a clone (what a commit holds; never a scratch or compiled file), else lpp/ on
    disk less Python's byte code."""
    listed = subprocess.run(["git", "ls-files", "-z", "--", "lpp"], cwd=ROOT,
                            capture_output=True, text=True)
    if listed.returncode == 0 and listed.stdout:
        return sorted(name for name in listed.stdout.split("\0") if name)
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "lpp").rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts)


def _has_build_backend() -> bool:
    """Whether this environment has the setuptools that pyproject.toml's build-system asks
    for (its one requirement, ``setuptools>=N``)."""
    [required] = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    name, _, minimum = required.partition(">=")
    assert name == "setuptools" and minimum.isdigit(), required
    try:
        return int(version("setuptools").split(".")[0]) >= int(minimum)
    except PackageNotFoundError:
        return False


def _as_package(path: str) -> str:
    return ".".join(Path(path).parent.parts)


def test_the_compendium_has_packages_beside_the_library():
    """The checks that none is installed would be empty without them."""
    assert "lpp" in TOP_LEVEL and {"study", "data_prep"} <= set(COMPENDIUM)


def test_setuptools_packages_lpp_alone_and_whole():
    """What ``pip install .`` packages, as setuptools finds it from pyproject.toml: the
    packages of lpp, every one that holds a module, and no other top-level package. lpp has
    no package data (pyproject.toml declares none), so every file it holds is a module."""
    setuptools = pytest.importorskip("setuptools", reason="setuptools finds the packages")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    find = config["packages"]["find"]
    # pyproject.toml's packages.find finds namespace packages unless told not to
    finder = (setuptools.find_namespace_packages if find.get("namespaces", True)
              else setuptools.find_packages)
    found = finder(where=str(ROOT / find.get("where", ["."])[0]),
                   include=find.get("include", ["*"]), exclude=find.get("exclude", ()))
    assert {name.split(".")[0] for name in found} == {"lpp"}, found
    files = _library_files()
    assert set(found) >= {_as_package(f) for f in files if f.endswith(".py")}
    assert "package-data" not in config and "data-files" not in config
    assert [f for f in files if not f.endswith(".py")] == []


@pytest.mark.slow
def test_the_wheel_holds_lpp_alone_and_whole(tmp_path):
    """``pip wheel`` of the library's sources with every package of the repository beside
    them: the wheel holds lpp's files, all of them, and no other top-level package."""
    src = _copy(SOURCES, tmp_path / "src")
    env = {k: v for k, v in os.environ.items() if k not in ("PIP_CONSTRAINT", "PYTHONPATH")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    # the build backend from this environment where it is recent enough (no index needed),
    # else pip fetches it into an isolated build environment, as `pip install .` does
    isolation = ["--no-build-isolation"] if _has_build_backend() else []
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *isolation,
          "-w", str(tmp_path / "dist"), str(src)], env=env, timeout=600)
    [wheel] = (tmp_path / "dist").glob("lpp-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/RECORD"))
        top_level = archive.read(f"{dist_info}/top_level.txt").decode().split()
    assert {n.split("/")[0] for n in names} - {dist_info} == {"lpp"}, sorted(names)
    assert top_level == ["lpp"]
    assert not set(_library_files()) - set(names)
    assert f"{dist_info}/licenses/LICENSE" in names
