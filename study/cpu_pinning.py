"""The same numeric kernels on every x86-64 CPU, so that the pipeline's digits do not depend on it.

Two libraries under NumPy pick their code for the CPU they run on, and the picks round
differently in the last bit:

* OpenBLAS takes its SkylakeX kernels on a CPU with AVX-512 and its Haswell kernels on an AVX2
  one (an AMD Zen, an older Intel); they block and fuse the sums of a matrix product
  differently. ``OPENBLAS_CORETYPE=Haswell`` makes it take the Haswell kernels on every CPU that
  can run them (AVX2 with FMA).
* NumPy compiles many loops for several instruction sets beyond its baseline (AVX2, AVX-512)
  and dispatches to the best one the CPU has; they do not all round alike (``exp`` and ``log``
  of float64 have AVX-512 versions, and a VI score moved in its last digit between NumPy's
  AVX2 and AVX-512 paths). ``NPY_DISABLE_CPU_FEATURES`` naming every dispatch target this CPU
  supports makes NumPy run its baseline loops, which every x86-64 CPU it runs on runs alike.

Measured on an Intel AVX-512 machine: OpenBLAS's SkylakeX kernels and its Haswell kernels give
the synthetic communities' MAE and the VI synthetic bound different 16th digits, and
``exp``/``log`` of a million gamma draws differ in their bits between NumPy's AVX-512 and
baseline paths. The notebook runner (:mod:`study.notebook`) sets both variables for the kernels
it starts, before they import NumPy. Nothing is set on other architectures, where the CPU cannot
run the Haswell kernels (then OpenBLAS chooses), or where a variable is set already (the user's
choice stands). The numba kernels of :mod:`lpp` need no pin: their sums run in a fixed order on
every CPU.
"""
from __future__ import annotations

import os
import platform

#: the OpenBLAS kernels every x86-64 CPU with AVX2 and FMA can run
PINNED_CORETYPE = "Haswell"
_HASWELL_FLAGS = frozenset({"avx2", "fma"})


def cpu_flags(cpuinfo: str = "/proc/cpuinfo") -> set[str]:
    """The CPU's feature flags as Linux lists them (empty where that file is unreadable)."""
    try:
        with open(cpuinfo) as fh:
            for line in fh:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def numpy_dispatch_targets() -> list[str]:
    """NumPy's dispatch targets beyond its baseline that this CPU supports (what
    ``NPY_DISABLE_CPU_FEATURES`` may name without a warning)."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return [name for name in __cpu_dispatch__ if __cpu_features__.get(name)]


def pin_numeric_kernels(environ=None, flags=None, machine=None, dispatch_targets=None) -> dict:
    """Set ``OPENBLAS_CORETYPE`` and ``NPY_DISABLE_CPU_FEATURES`` in ``environ`` (default
    ``os.environ``) where this CPU needs them and they are not set already.

    ``flags``, ``machine`` and ``dispatch_targets`` stand for this machine's
    (:func:`cpu_flags`, :func:`platform.machine`, :func:`numpy_dispatch_targets`). Returns the two variables' values
    now in effect (None: not set). Only processes started afterwards, or NumPy imported
    afterwards, see them.
    """
    environ = os.environ if environ is None else environ
    machine = platform.machine() if machine is None else machine
    if machine.lower() in ("x86_64", "amd64"):
        if "OPENBLAS_CORETYPE" not in environ and \
                _HASWELL_FLAGS <= (cpu_flags() if flags is None else set(flags)):
            environ["OPENBLAS_CORETYPE"] = PINNED_CORETYPE
        if "NPY_DISABLE_CPU_FEATURES" not in environ:
            targets = numpy_dispatch_targets() if dispatch_targets is None else dispatch_targets
            if targets:
                environ["NPY_DISABLE_CPU_FEATURES"] = " ".join(targets)
    return {name: environ.get(name) for name in ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES")}
