"""The topic model on a GPU, with numba-cuda (the optional extra ``lpp[gpu]``).

``fit_private(..., device="cuda")`` (and ``fit_nonprivate``, the estimators, the pipeline's
``device`` setting) selects these engines by the capabilities the model and the count source
declare, as the CPU's fused engines are selected: :class:`CudaSparseTopicEngine` for the
collapsed privacy step, :class:`CudaKnownTopicEngine` for known counts (the naive step, the
non-private chain). Nothing here is imported by ``import lpp``; asking for ``cuda`` without
numba-cuda or without a GPU is an error that names what is missing — never a silent fallback.

How a chain on the GPU relates to one on the CPU: the same model, the same exact conditionals,
the same phase seeds; a different generator (Philox, counter-based) and a different order of
work. So the two agree in distribution, not bit for bit; on one device a seed gives the same
chain bit for bit for any launch configuration (:mod:`.kernels`).

Testing hooks: :func:`launch_settings` sets the threads per block, or runs the same thread code
on the CPU (``emulate=True``, :class:`~.kernels.HostBackend`) — the statistical tests' twin of
the GPU engine. With ``NUMBA_ENABLE_CUDASIM=1`` numba-cuda's simulator runs the CUDA kernels
themselves on the CPU.
"""
from __future__ import annotations

import importlib.util
from contextlib import contextmanager

from lpp.inference.engines.cuda.engine import (
    CudaKnownTopicEngine,
    CudaSparseTopicEngine,
    DeviceCounts,
    DeviceState,
)
from lpp.inference.engines.cuda.kernels import HostBackend

__all__ = ["ENGINES", "CudaKnownTopicEngine", "CudaSparseTopicEngine", "DeviceCounts",
           "DeviceState", "backend", "launch_settings", "select_cuda_engine"]

#: the GPU engines, tried in order
ENGINES = (CudaSparseTopicEngine, CudaKnownTopicEngine)
#: threads per block of every launch (any value gives the same draws)
DEFAULT_THREADS_PER_BLOCK = 128

_settings = {"threads_per_block": DEFAULT_THREADS_PER_BLOCK, "emulate": False}


@contextmanager
def launch_settings(*, threads_per_block: int | None = None, emulate: bool | None = None):
    """Within the block, engines built for ``device="cuda"`` launch ``threads_per_block``
    threads per block, or (``emulate=True``) run their thread code on the CPU."""
    saved = dict(_settings)
    if threads_per_block is not None:
        if int(threads_per_block) < 1:
            raise ValueError(f"threads_per_block must be >= 1, got {threads_per_block}")
        _settings["threads_per_block"] = int(threads_per_block)
    if emulate is not None:
        _settings["emulate"] = bool(emulate)
    try:
        yield
    finally:
        _settings.clear()
        _settings.update(saved)


def backend():
    """The backend engines are built on now: the GPU (or numba-cuda's simulator), or the CPU
    under ``launch_settings(emulate=True)``. ImportError without numba-cuda, RuntimeError
    without a usable GPU."""
    if _settings["emulate"]:
        return HostBackend()
    if importlib.util.find_spec("numba_cuda") is None:
        raise ImportError("device='cuda' needs numba-cuda, which is not installed: "
                          "pip install lpp[gpu] (numba-cuda with the CUDA 12 toolkit wheels)")
    # the GPU's door: numba.cuda is imported only when a chain asks for device='cuda'
    from numba import cuda  # noqa: PLC0415

    if not cuda.is_available():
        raise RuntimeError("device='cuda' found no usable CUDA GPU (numba.cuda.is_available() "
                           "is False: no NVIDIA driver, no GPU, or no CUDA toolkit for "
                           "numba-cuda); fit with device='cpu'")
    from lpp.inference.engines.cuda.device import CudaBackend  # noqa: PLC0415

    return CudaBackend(_settings["threads_per_block"])


def select_cuda_engine(model, step, noise):
    """The GPU engine that applies to ``model``, ``step`` and ``noise``, or None."""
    if getattr(model, "collapse_theta", False) or getattr(model, "collapse_phi", False):
        return None
    for engine in ENGINES:
        if engine.applies(model, step, noise):
            return engine
    return None
