"""The dependency lists agree: ranges for the library, exact pins for the compendium.

``pyproject.toml`` declares what the library accepts in a researcher's own environment:
compatible ranges and ``requires-python``. ``requirements.txt``, ``requirements.lock`` and
``environment.yml`` pin the exact versions the compendium is built and tested with (the
README's commands). So:

* every exact pin (of requirements.txt, environment.yml and the lock) lies in the range
  pyproject.toml gives that package, and the pinned Python in ``requires-python``;
* requirements.txt and environment.yml pin the same packages at the same versions: conda
  cannot be solved on our machines, so this comparison is what keeps environment.yml honest;
* requirements.txt installs the runtime dependencies and every extra but ``interactive``
  (``gpu``'s numba-cuda without its ``cu12`` toolkit wheels: the tests need only its
  simulator), and the lock pins each of them at the version requirements.txt does.
"""
import re
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
# conda-forge names that differ from PyPI names
CONDA_TO_PYPI = {"matplotlib-base": "matplotlib", "seaborn-base": "seaborn", "dask-core": "dask"}
CONDA_ONLY = {"python", "pip"}
PIN = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*==\s*([^\s;#]+)\s*$")
#: pyproject extras that requirements.txt and environment.yml install as well
INSTALLED_EXTRAS = ("progress", "distributed", "diagnostics", "gpu", "compendium", "test",
                    "pipeline", "docs")
#: the Python versions the library supports: requires-python admits them, the classifiers name them
SUPPORTED_PYTHONS = ("3.11", "3.12", "3.13")


def _parse_pins(specs, source):
    pins = {}
    for spec in specs:
        m = PIN.match(spec)
        if not m:
            raise AssertionError(f"{source}: {spec!r} is not an exact '==' pin")
        name = canonicalize_name(m.group(1))
        if name in pins:
            raise AssertionError(f"{source}: {name} listed twice")
        pins[name] = m.group(2)
    return pins


def _project():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def pyproject_ranges(extras=INSTALLED_EXTRAS):
    """``{name: SpecifierSet}`` of the runtime dependencies and ``extras``: a package named in
    several lists must carry the same range in each."""
    project = _project()
    lists = {"dependencies": project["dependencies"]}
    lists.update({extra: project["optional-dependencies"][extra] for extra in extras})
    ranges = {}
    for source, specs in lists.items():
        for spec in specs:
            req = Requirement(spec)
            name = canonicalize_name(req.name)
            assert req.marker is None and not req.url, f"pyproject.toml {source}: {spec!r}"
            if ranges.setdefault(name, req.specifier) != req.specifier:
                raise AssertionError(f"pyproject.toml: {name} is {ranges[name]} and "
                                     f"{req.specifier} ({source})")
    return ranges


def requirements_pins():
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    specs = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    return _parse_pins(specs, "requirements.txt")


def lock_pins():
    lines = (ROOT / "requirements.lock").read_text().splitlines()
    specs = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    return _parse_pins(specs, "requirements.lock")


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


def outside_ranges(pins, ranges):
    """The pins of ``pins`` that the ranges of ``ranges`` do not allow."""
    return {name: (version, str(ranges[name])) for name, version in pins.items()
            if name in ranges and not ranges[name].contains(version, prereleases=True)}


def test_the_library_needs_numpy_scipy_and_numba_only():
    project = _project()
    runtime = {canonicalize_name(Requirement(s).name) for s in project["dependencies"]}
    assert runtime == {"numpy", "scipy", "numba", "llvmlite"}
    extras = project["optional-dependencies"]
    assert "pytest" in {Requirement(s).name for s in extras["test"]}
    assert "dvc" in {Requirement(s).name for s in extras["pipeline"]}
    assert "sphinx" in {Requirement(s).name for s in extras["docs"]}


def test_pyproject_declares_ranges_not_pins():
    """A researcher's own environment must be able to satisfy the library: no exact pins,
    a lower bound on every runtime dependency, and Python 3.11 to 3.13."""
    for name, spec in pyproject_ranges(tuple(_project()["optional-dependencies"])).items():
        assert not any(s.operator in ("==", "===") for s in spec), f"{name} is pinned: {spec}"
    for spec in _project()["dependencies"]:
        assert any(s.operator in (">=", "~=") for s in Requirement(spec).specifier), spec
    requires = SpecifierSet(_project()["requires-python"])
    assert all(requires.contains(v) for v in SUPPORTED_PYTHONS), requires
    named = {c.rsplit(" :: ", 1)[1] for c in _project()["classifiers"]
             if c.startswith("Programming Language :: Python :: 3.")}
    assert named == set(SUPPORTED_PYTHONS)


def test_requirements_install_the_runtime_and_the_extras():
    assert requirements_pins().keys() == pyproject_ranges().keys()


def test_requirements_pins_lie_in_pyproject_ranges():
    assert not outside_ranges(requirements_pins(), pyproject_ranges())


def test_lock_pins_lie_in_pyproject_ranges():
    assert not outside_ranges(lock_pins(), pyproject_ranges())


def test_lock_agrees_with_requirements():
    lock = lock_pins()
    disagree = {k: (v, lock.get(k)) for k, v in requirements_pins().items() if lock.get(k) != v}
    assert not disagree, f"requirements.lock disagrees with requirements.txt: {disagree}"


def test_environment_yml_matches_requirements(path=ROOT / "environment.yml"):
    pins = requirements_pins()
    env_pins, env_python = environment_pins(path)
    assert env_pins == pins, (
        f"only in environment.yml: {sorted(env_pins.keys() - pins.keys())}; "
        f"only in requirements.txt: {sorted(pins.keys() - env_pins.keys())}; "
        f"different pins: {sorted(k for k in pins.keys() & env_pins.keys() if pins[k] != env_pins[k])}"
    )
    # the compendium's Python: one minor version, inside the library's range
    assert env_python is not None
    m = re.fullmatch(r"python\s*==\s*(\d+\.\d+)\.\*", env_python)
    assert m, f"environment.yml: {env_python!r} is not 'python==X.Y.*'"
    assert SpecifierSet(_project()["requires-python"]).contains(m.group(1) + ".0")


def test_requirements_name_the_compendiums_python():
    """requirements.txt's header states the Python its pins are for: environment.yml's."""
    _, env_python = environment_pins()
    minor = re.search(r"(\d+\.\d+)", env_python).group(1)
    assert f"Python {minor}" in (ROOT / "requirements.txt").read_text().splitlines()[0]


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda t: t.replace("  - gensim==4.4.0\n", "  - gensim=4.4.0\n"), "not an exact"),
        (lambda t: t.replace("  - pip:\n", "  - statsmodels==0.14.4\n  - pip:\n"),
         "only in environment.yml"),
        (lambda t: t.replace("  - gensim==4.4.0\n", "  - gensim==4.3.3\n"), "different pins"),
    ],
)
def test_drift_is_caught(tmp_path, edit, message):
    """The comparison itself must catch a prefix pin, an extra package and another version."""
    fake = tmp_path / "environment.yml"
    fake.write_text(edit((ROOT / "environment.yml").read_text()))
    with pytest.raises(AssertionError, match=message):
        test_environment_yml_matches_requirements(fake)


def test_a_pin_outside_the_range_is_caught():
    ranges = pyproject_ranges()
    assert outside_ranges({"numpy": "1.26.4"}, ranges) == {"numpy": ("1.26.4", str(ranges["numpy"]))}
    assert not outside_ranges({"numpy": str(Version("2.0.2"))}, ranges)
