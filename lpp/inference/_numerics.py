"""How the compiled kernels run: a parallel and a serial twin of each, and when to use which.

The samplers' random draws themselves live in :mod:`lpp.distributions` (Gamma, truncated
Poisson, multinomial allocation).
"""
from __future__ import annotations

import types

from numba import njit

#: problems with less work than this (entries, or rows x columns) run the serial twin of a kernel
SERIAL_BELOW = 16384


def parallel_and_serial(loop):
    """Compile ``loop`` (a function with a ``prange`` loop) twice: parallel, and serial.

    In a non-parallel compilation ``prange`` is plain ``range``. Kernels key their random
    streams by block, so both twins give identical results; the serial one avoids the thread
    pool's start-up cost on small problems (milliseconds on a busy machine).

    Both are cached on disk (see :mod:`lpp._numba_cache`). numba names a cache file after the
    function's qualified name, so the serial twin is compiled from a copy of ``loop`` with a
    name of its own; otherwise the twins would overwrite each other's cache entries.
    """
    serial = types.FunctionType(loop.__code__, loop.__globals__, f"{loop.__name__}_serial",
                                loop.__defaults__, loop.__closure__)
    serial.__qualname__ = f"{loop.__qualname__}_serial"
    return njit(parallel=True, cache=True)(loop), njit(cache=True)(serial)
