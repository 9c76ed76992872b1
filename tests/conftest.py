"""Suite-wide settings: property tests are derandomized, so every run (CI's included) tries
the same examples, and keep no example database in the work tree.

A warning filter that names a class of an optional package is added here, only where that
package is installed: in ``pyproject.toml`` it would need the package to start pytest at all,
and the library's own tests also run where only ``pip install lpp[test]`` is installed."""
import importlib.util

from hypothesis import settings

settings.register_profile("lpp", derandomize=True, database=None, deadline=None)
settings.load_profile("lpp")

#: warning filters of the compendium's stack, each applied only where its package is installed
OPTIONAL_FILTERS = {
    "pandas": "ignore::pandas.errors.Pandas4Warning",   # seaborn 0.13.2 against pandas 3
}


def pytest_configure(config):
    for package, line in OPTIONAL_FILTERS.items():
        if importlib.util.find_spec(package) is not None:
            config.addinivalue_line("filterwarnings", line)
