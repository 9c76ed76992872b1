"""The package's front door: a docstring that maps it, and the installed version."""
from importlib.metadata import PackageNotFoundError, version

import lpp


def test_package_docstring_and_version():
    assert lpp.__doc__ and "lpp.inference" in lpp.__doc__
    try:
        expect = version("lpp")
    except PackageNotFoundError:
        expect = "0+unknown"
    assert isinstance(lpp.__version__, str) and lpp.__version__ == expect
