"""Suite-wide settings: property tests are derandomized, so every run (CI's included) tries
the same examples, and keep no example database in the work tree.

The library's own tests (``tests/lpp``) also run where only ``pip install lpp[test]`` is
installed, without the extras and the compendium's packages (CI's second step, on the newest
Python). Two things make that possible:

* a warning filter that names a class of an optional package is added here, only where that
  package is installed (in ``pyproject.toml`` it would need the package to start pytest);
* ``--skip-missing-extras`` turns a test that fails for want of an optional package into a
  skip that names the package: an import of a package that is not installed, anywhere in the
  failure's chain of exceptions, or lpp's own request to ``pip install lpp[<extra>]``. A
  missing module of a package that *is* installed (``lpp`` itself included) still fails.
  Without the option nothing is skipped: the full suite needs every package.

The GPU engine's tests run its CUDA kernels in numba-cuda's simulator (set here, before numba
is imported) unless ``NUMBA_ENABLE_CUDASIM=0`` asks for the machine's GPU.
"""
import importlib.util
import os
import re

import types

import pytest
from hypothesis import settings

# the GPU engine's kernels run in numba-cuda's simulator unless a run asks for the real device
# (NUMBA_ENABLE_CUDASIM=0 on a machine with a GPU); read when numba.cuda is first imported
os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

settings.register_profile("lpp", derandomize=True, database=None, deadline=None)
settings.load_profile("lpp")

#: warning filters of the compendium's stack, each applied only where its package is installed
OPTIONAL_FILTERS = {
    "pandas": "ignore::pandas.errors.Pandas4Warning",   # seaborn 0.13.2 against pandas 3
}
#: lpp's message when an optional feature is used without its extra
EXTRA_REQUEST = re.compile(r"pip install lpp\[(\w+)\]")
#: pytest's report of a test module that could not be imported
NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")


def pytest_addoption(parser):
    parser.addoption(
        "--skip-missing-extras", action="store_true", default=False,
        help="skip (naming the package) the tests that need an optional package that is not "
             "installed, as where only lpp[test] is",
    )


def pytest_configure(config):
    for package, line in OPTIONAL_FILTERS.items():
        if importlib.util.find_spec(package) is not None:
            config.addinivalue_line("filterwarnings", line)


def _not_installed(module: str) -> bool:
    return importlib.util.find_spec(module.partition(".")[0]) is None


def missing_extra(exc):
    """The optional package whose absence made ``exc``, or None for any other failure."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ModuleNotFoundError) and exc.name and _not_installed(exc.name):
            return exc.name.partition(".")[0]
        request = EXTRA_REQUEST.search(str(exc))
        if request:
            return f"lpp[{request.group(1)}]"
        exc = exc.__cause__ or exc.__context__
    return None


def _skip(report, path, lineno, reason):
    report.outcome = "skipped"
    report.longrepr = (str(path), lineno, f"Skipped: {reason}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.excinfo is not None \
            and item.config.getoption("--skip-missing-extras"):
        missing = missing_extra(call.excinfo.value)
        if missing:
            _skip(report, item.path, item.location[1] or 0, f"{item.name} needs {missing}, which is not installed")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if report.failed and isinstance(collector, pytest.Module) \
            and collector.config.getoption("--skip-missing-extras"):
        names = NO_MODULE.findall(str(report.longrepr))
        if names and _not_installed(names[-1]):
            _skip(report, collector.path, 0, f"needs {names[-1].partition('.')[0]}, "
                                          f"which is not installed")


@pytest.fixture(scope="session")
def toy_topic_chains():
    """A small simulated corpus and two short non-private topic chains of it (seeds 11 and
    12; ``schedule`` their ``n_iter``, ``burn_in``, ``thin``), shared by the tests of the
    chains' diagnostics (lpp.diagnostics) and of the pipeline's diagnosis (study.diagnose)."""
    # imported at first use: every test run loads this file, and importing the samplers
    # (numba) takes seconds
    from lpp.inference import RunOptions, TopicModel, fit_nonprivate  # noqa: PLC0415
    from lpp.simulate import make_topics  # noqa: PLC0415

    corpus = make_topics(rng=4, n_docs=24, n_topics=2, n_words=10)
    schedule = {"n_iter": 14, "burn_in": 4, "thin": 2}
    chains = [fit_nonprivate(corpus.y, TopicModel(2), rng=seed,
                             run=RunOptions(progress=False, **schedule)) for seed in (11, 12)]
    return types.SimpleNamespace(corpus=corpus, chains=chains, schedule=schedule)
