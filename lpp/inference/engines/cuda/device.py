"""The GPU backend: the thread bodies (:mod:`.kernels`) as ``numba.cuda`` kernels, arrays in
device memory. Imported only when a chain asks for ``device="cuda"`` and numba-cuda is installed.

The kernels name ``cuda`` as this module's global (not a closure variable): numba-cuda's
simulator swaps that global for its own emulation when it runs them.
"""
from __future__ import annotations

from functools import lru_cache
from types import SimpleNamespace

import numpy as np
from numba import config as numba_config
from numba import cuda, float64, int64

from lpp.inference.engines.cuda.kernels import BODIES, SCRATCH, build_bodies

__all__ = ["CudaBackend"]


def _cuda_kernel(body, scratch: bool, n_topics: int):
    """A ``numba.cuda`` kernel running ``body`` for item ``cuda.grid(1)`` when below ``n``."""
    if scratch:
        @cuda.jit
        def kernel(n, *args):
            i = cuda.grid(1)
            if i < n:
                cum = cuda.local.array(n_topics, float64)
                hits = cuda.local.array(n_topics, int64)
                body(i, *args, cum, hits)
    else:
        @cuda.jit
        def kernel(n, *args):
            i = cuda.grid(1)
            if i < n:
                body(i, *args)
    return kernel


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
