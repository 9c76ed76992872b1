"""The three dependency lists (pyproject.toml, requirements.txt, environment.yml) must agree.

conda cannot be solved on our machines, so this comparison is what keeps environment.yml
honest: same packages, same exact pins, same Python. pyproject.toml keeps the tools that only
run the tests and the pipeline (pytest, dvc) out of the runtime dependencies, in the extras
``test`` and ``pipeline``; requirements.txt and environment.yml install those too.
"""
import re
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
# conda-forge names that differ from PyPI names
CONDA_TO_PYPI = {"matplotlib-base": "matplotlib", "seaborn-base": "seaborn", "dask-core": "dask"}
CONDA_ONLY = {"python", "pip"}
PIN = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*==\s*([^\s;#]+)\s*$")
#: pyproject extras that requirements.txt and environment.yml install as well
INSTALLED_EXTRAS = ("progress", "distributed", "diagnostics", "compendium", "test", "pipeline")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _parse_pins(specs, source):
    pins = {}
    for spec in specs:
        m = PIN.match(spec)
        if not m:
            raise AssertionError(f"{source}: {spec!r} is not an exact '==' pin")
        name = _norm(m.group(1))
        if name in pins:
            raise AssertionError(f"{source}: {name} listed twice")
        pins[name] = m.group(2)
    return pins


def pyproject_pins():
    """The runtime pins plus those of :data:`INSTALLED_EXTRAS`, and ``requires-python``."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = _parse_pins(project["dependencies"], "pyproject.toml")
    for extra in INSTALLED_EXTRAS:  # extras may share a package, never with another pin
        for name, pin in _parse_pins(project["optional-dependencies"][extra], extra).items():
            if pins.setdefault(name, pin) != pin:
                raise AssertionError(f"pyproject.toml: {name} pinned {pins[name]} and {pin}")
    return pins, project["requires-python"]


def test_the_library_needs_numpy_scipy_and_numba_only():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = _parse_pins(project["dependencies"], "pyproject.toml")
    assert runtime.keys() == {"numpy", "scipy", "numba", "llvmlite"}
    assert "pytest" in _parse_pins(project["optional-dependencies"]["test"], "test")
    assert "dvc" in _parse_pins(project["optional-dependencies"]["pipeline"], "pipeline")


def requirements_pins():
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    specs = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    return _parse_pins(specs, "requirements.txt")


def environment_pins(path=ROOT / "environment.yml"):
    env = yaml.safe_load(Path(path).read_text())
    assert env["channels"][0] == "conda-forge"
    specs, python = [], None
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            continue  # the pip section installs lpp itself
        name = re.split(r"[=<>\s]", dep, maxsplit=1)[0]
        if name == "python":
            python = dep
            continue
        if name in CONDA_ONLY:
            continue
        # conda's single '=' means a prefix match (2.4.6 -> 2.4.6.*): insist on '=='
        specs.append(CONDA_TO_PYPI.get(name, name) + dep[len(name):])
    return _parse_pins(specs, "environment.yml"), python


def test_requirements_match_pyproject():
    pins, _ = pyproject_pins()
    assert requirements_pins() == pins


def test_environment_yml_matches_pyproject(path=ROOT / "environment.yml"):
    pins, requires_python = pyproject_pins()
    env_pins, env_python = environment_pins(path)
    assert env_pins == pins, (
        f"only in environment.yml: {sorted(env_pins.keys() - pins.keys())}; "
        f"only in pyproject: {sorted(pins.keys() - env_pins.keys())}; "
        f"different pins: {sorted(k for k in pins.keys() & env_pins.keys() if pins[k] != env_pins[k])}"
    )
    assert env_python is not None and env_python.replace("python", "").strip("=") in (
        requires_python.strip("=")
    )


def test_lock_agrees_with_direct_pins():
    lock = _parse_pins(
        [ln for ln in (ROOT / "requirements.lock").read_text().splitlines() if ln.strip()],
        "requirements.lock",
    )
    pins, _ = pyproject_pins()
    disagree = {k: (v, lock.get(k)) for k, v in pins.items() if lock.get(k) != v}
    assert not disagree, f"requirements.lock disagrees with the direct pins: {disagree}"


@pytest.mark.parametrize(
    "bad, message",
    [
        ("  - gensim=4.4.0\n", "not an exact"),
        ("  - statsmodels==0.14.4\n", "only in environment.yml"),
    ],
)
def test_drift_is_caught(tmp_path, bad, message):
    """The comparison itself must catch a prefix pin and an extra package."""
    text = (ROOT / "environment.yml").read_text()
    if "gensim" in bad:
        text = text.replace("  - gensim==4.4.0\n", bad)
    else:
        text = text.replace("  - pip:\n", bad + "  - pip:\n")
    fake = tmp_path / "environment.yml"
    fake.write_text(text)
    with pytest.raises(AssertionError, match=message):
        test_environment_yml_matches_pyproject(fake)
