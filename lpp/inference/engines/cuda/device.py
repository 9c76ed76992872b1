"""The GPU backend: the thread bodies (:mod:`lpp.inference.engines.cuda.kernels`) as ``numba.cuda`` kernels, arrays in
device memory. Imported only when a chain asks for ``device="cuda"`` and numba-cuda is installed.

The kernels name ``cuda`` as this module's global (not a closure variable): numba-cuda's
simulator swaps that global for its own emulation when it runs them.
"""
from __future__ import annotations

import inspect
import warnings
from functools import lru_cache
from types import SimpleNamespace

import numpy as np
from numba import config as numba_config
from numba import cuda, float64, int64
from numba.core.errors import NumbaPerformanceWarning

from lpp.inference.engines.cuda.kernels import BODIES, SCRATCH, build_bodies

__all__ = ["CudaBackend"]


#: a kernel per body, its parameters spelled out: numba-cuda compiles a kernel for the types
#: of its arguments and does not take ``*args``
_KERNEL_SOURCE = """
def kernel(n, {params}):
    i = cuda.grid(1)
    if i < n:
{scratch}        body(i, {params}{extra})
"""
_SCRATCH_SOURCE = """        cum = cuda.local.array(n_topics, float64)
        hits = cuda.local.array(n_topics, int64)
"""


def _cuda_kernel(body, scratch: bool, n_topics: int):
    """A ``numba.cuda`` kernel running ``body`` for item ``cuda.grid(1)`` when below ``n``
    (with ``K``-long scratch arrays where the body takes them)."""
    names = list(inspect.signature(body.py_func).parameters)[1:]  # less the item
    if scratch:
        names = names[:-2]  # cum, hits: the kernel's own
    source = _KERNEL_SOURCE.format(params=", ".join(names),
                                   scratch=_SCRATCH_SOURCE if scratch else "",
                                   extra=", cum, hits" if scratch else "")
    namespace = {"cuda": cuda, "body": body, "float64": float64, "int64": int64,
                 "n_topics": n_topics}
    exec(compile(source, f"<lpp cuda kernel {body.py_func.__name__}>", "exec"), namespace)
    return cuda.jit(namespace["kernel"])


class CudaBackend:
    """The thread bodies as ``numba.cuda`` kernels, arrays in device memory."""

    name = "cuda"

    def __init__(self, threads_per_block: int = 128):
        self.threads_per_block = int(threads_per_block)

    @staticmethod
    def kernels(n_topics: int):
        return _cuda_kernels(n_topics)

    def launch(self, kernels, name: str, n: int, *args) -> None:
        if n > 0:
            tpb = self.threads_per_block
            with warnings.catch_warnings():
                # a launch over few items (K topics, a small matrix) is meant to be small
                warnings.simplefilter("ignore", NumbaPerformanceWarning)
                getattr(kernels, name)[(n + tpb - 1) // tpb, tpb](n, *args)

    def to_device(self, arr):
        return cuda.to_device(np.ascontiguousarray(arr))

    @staticmethod
    def to_host(arr):
        return arr.copy_to_host()

    def zeros(self, shape, dtype):
        arr = cuda.device_array(shape, dtype=dtype)
        self.fill_zero(arr)
        return arr

    def fill_zero(self, arr) -> None:
        flat = arr.reshape(arr.size)
        if flat.size:
            tpb = self.threads_per_block
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NumbaPerformanceWarning)
                _fill_kernel()[(flat.size + tpb - 1) // tpb, tpb](flat)

    def free_bytes(self):
        free, _ = cuda.current_context().get_memory_info()
        return int(free) if np.isfinite(free) else None  # the simulator has no bound

    def describe(self) -> str:
        if numba_config.ENABLE_CUDASIM:
            return "numba-cuda's simulator"
        name = cuda.get_current_device().name
        return name.decode() if isinstance(name, bytes) else str(name)


@cuda.jit(device=True)
def _atomic_add2(arr, i, j, x):
    cuda.atomic.add(arr, (i, j), x)


@lru_cache(maxsize=16)
def _cuda_kernels(n_topics: int):
    """Every body's kernel for ``n_topics`` topics (compiled on first launch)."""
    bodies = build_bodies(cuda.jit(device=True), _atomic_add2, n_topics)
    return SimpleNamespace(**{name: _cuda_kernel(getattr(bodies, name), name in SCRATCH,
                                                 n_topics)
                              for name in BODIES})


@lru_cache(maxsize=1)
def _fill_kernel():
    @cuda.jit
    def fill(flat):
        i = cuda.grid(1)
        if i < flat.size:
            flat[i] = 0
    return fill
