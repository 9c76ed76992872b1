import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

import lpp
from lpp import _numba_cache
from lpp.inference.numerics import parallel_and_serial

PACKAGE = Path(lpp.__file__).resolve().parent


def test_the_digest_changes_with_any_source_file(tmp_path):
    copy = tmp_path / "lpp"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = _numba_cache.source_digest(copy)
    assert before == _numba_cache.source_digest(PACKAGE)
    helper = copy / "distributions" / "poisson.py"
    helper.write_text(helper.read_text() + "\n# a helper in another module changed\n")
    assert _numba_cache.source_digest(copy) != before


def test_each_source_version_gets_its_own_cache_folder(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", "import lpp, numba; print(numba.config.CACHE_DIR)"],
                         env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert out == str(tmp_path / "lpp" / "numba" / _numba_cache.source_digest()[:16])


def test_a_cache_folder_chosen_by_the_user_is_kept(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "mine"))
    out = subprocess.run([sys.executable, "-c", "import lpp, numba; print(numba.config.CACHE_DIR)"],
                         env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert out == str(tmp_path / "mine")


def _cumulative(x, out):
    for i in range(x.shape[0]):
        out[i] = x[: i + 1].sum()


def test_the_twins_have_separate_cache_entries_and_agree():
    parallel, serial = parallel_and_serial(_cumulative)
    assert parallel.py_func.__qualname__ != serial.py_func.__qualname__
    x = np.arange(10.0)
    a, b = np.empty(10), np.empty(10)
    parallel(x, a)
    serial(x, b)
    np.testing.assert_array_equal(a, b)
    assert serial.py_func.__name__.endswith("_serial")


def test_a_fit_that_compiles_says_so_once(monkeypatch):
    """The first compilation inside the block prints one line naming the cache; a second
    block in the same process, and a block told to stay silent, print nothing."""
    import io

    from numba import njit

    from lpp import _numba_cache

    monkeypatch.setattr(_numba_cache, "_told", False)
    monkeypatch.setenv("NUMBA_CACHE_DIR", "/somewhere/kept")
    out = io.StringIO()
    with _numba_cache.compile_notice(False, stream=out):
        njit(lambda x: x + 1)(1)
    assert out.getvalue() == ""
    with _numba_cache.compile_notice(True, stream=out):
        njit(lambda x: x + 2)(1)
        njit(lambda x: x + 3)(1)
    assert out.getvalue().count("\n") == 1
    assert "compiling" in out.getvalue() and "/somewhere/kept" in out.getvalue()
    with _numba_cache.compile_notice(True, stream=out):
        njit(lambda x: x + 4)(1)
    assert out.getvalue().count("\n") == 1
    tty = io.StringIO()
    monkeypatch.setattr(_numba_cache, "_told", False)
    with _numba_cache.compile_notice(None, stream=tty):  # not a terminal: as the progress bar
        njit(lambda x: x + 5)(1)
    assert tty.getvalue() == ""
