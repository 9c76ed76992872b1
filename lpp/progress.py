"""Progress bars: tqdm's text bar where tqdm is installed (``lpp[progress]``), none otherwise.

The library needs only numpy, scipy and numba; a long fit without tqdm still runs, counts its
iterations and can be interrupted, it just draws no bar. The text bar, not ``tqdm.auto``:
the latter warns in notebook kernels without ipywidgets.
"""
from __future__ import annotations

import warnings

try:
    from tqdm import tqdm
except ImportError:  # pragma: no cover - exercised by the import test without extras
    _warned = False

    class tqdm:  # noqa: N801 - stands in for tqdm.tqdm under its name
        """The part of tqdm's interface that lpp uses, drawing nothing."""

        def __init__(self, iterable=None, *, total=None, initial=0, disable=False, **_):
            global _warned
            if not disable and not _warned:
                _warned = True
                warnings.warn("install tqdm (pip install lpp[progress]) to see progress bars",
                              stacklevel=2)
            self.iterable, self.total, self.n = iterable, total, initial

        def __iter__(self):
            for item in self.iterable:
                self.n += 1
                yield item

        def update(self, n=1):
            self.n += n

        def set_postfix_str(self, *args, **kwargs):
            pass

        def close(self):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.close()
            return False

__all__ = ["tqdm"]
