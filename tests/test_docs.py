"""The documentation builds with warnings as errors, and its API reference covers the package.

The reference is generated (autosummary, recursively over ``lpp``), so the check walks the
package as it is: every public module (no part of its dotted name starts with ``_``) must
have a page, and every name in its ``__all__`` an entry, whatever the modules are called.
"""
import importlib
import os
import pkgutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

pytest.importorskip("sphinx", reason="the documentation tools: pip install lpp[docs]")

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # a full build imports every module: about half a minute


@pytest.fixture(scope="module")
def html(tmp_path_factory):
    out = tmp_path_factory.mktemp("html")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         str(ROOT / "docs"), str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, f"sphinx-build -W failed:\n{run.stdout}\n{run.stderr}"
    return out


def inventory(html_dir: Path) -> dict:
    """``{name: role}`` of Sphinx's ``objects.inv`` (its documented objects)."""
    raw = (html_dir / "objects.inv").read_bytes()
    header_end = 0
    for _ in range(4):  # four plain-text header lines, then zlib
        header_end = raw.index(b"\n", header_end) + 1
    entries = {}
    for line in zlib.decompress(raw[header_end:]).decode().splitlines():
        name, role = line.split(" ", 2)[:2]
        if role.startswith("py:"):
            entries[name] = role
    return entries


def public_modules(package="lpp"):
    """Every public module of ``package``, imported, found by walking it."""
    root = importlib.import_module(package)
    modules = [root]
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}.",
                                      onerror=lambda name: None):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        modules.append(importlib.import_module(info.name))
    return modules


def test_the_docs_build_with_warnings_as_errors(html):
    for page in ("index.html", "quickstart.html", "api.html", "design.html"):
        assert (html / page).is_file(), page


def test_the_api_reference_covers_every_public_module_and_name(html):
    documented = inventory(html)
    modules = public_modules()
    assert len(modules) > 10  # the walk found the package
    missing_modules = [m.__name__ for m in modules if documented.get(m.__name__) != "py:module"]
    missing_names = [f"{m.__name__}.{name}" for m in modules
                     for name in getattr(m, "__all__", ())
                     if f"{m.__name__}.{name}" not in documented]
    assert not missing_modules, f"modules without a page: {missing_modules}"
    assert not missing_names, f"public names not in the reference: {missing_names}"


def test_the_user_guide_pages_are_in_the_toctree(html):
    """Every Markdown page of docs/ is built (Sphinx warns of one outside every toctree, and
    -W makes that an error): here, that each became a page."""
    for page in (ROOT / "docs").glob("*.md"):
        assert (html / f"{page.stem}.html").is_file(), page.name
