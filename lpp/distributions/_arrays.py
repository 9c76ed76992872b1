"""Input checks shared by the public (vectorised) functions: clear errors, never silent NaN."""
from __future__ import annotations

import numpy as np


def _as_numeric(x, name):
    arr = np.asarray(x)
    if arr.dtype == bool:
        raise TypeError(f"{name} must be numeric, got a boolean array")
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must be a real number or array of them, got dtype {arr.dtype}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    return arr


def check_integer_valued(x, name):
    """int64 array of the integer values in ``x`` (integer dtype, or floats with integer values)."""
    arr = _as_numeric(x, name)
    if np.issubdtype(arr.dtype, np.floating):
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} must be finite")
        if np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must hold integers, got non-integer values")
        if np.any(np.abs(arr) > 2.0**62):
            raise ValueError(f"{name} is too large for int64")
    elif arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{name} is too large for int64")
    return arr.astype(np.int64)


def check_real(x, name, *, low=None, low_open=False, high=None, high_open=False,
               allow_inf=False):
    """float64 array of ``x`` with bounds checked (closed unless ``*_open``)."""
    arr = _as_numeric(x, name).astype(np.float64)
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    if not allow_inf and np.isinf(arr).any():
        raise ValueError(f"{name} must be finite")
    if low is not None and (np.any(arr <= low) if low_open else np.any(arr < low)):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low}, got "
                         f"min {arr.min()!r}")
    if high is not None and (np.any(arr >= high) if high_open else np.any(arr > high)):
        raise ValueError(f"{name} must be {'<' if high_open else '<='} {high}, got "
                         f"max {arr.max()!r}")
    return arr


def broadcast_params(arrays, names, size=None):
    """Broadcast ``arrays`` together (and to ``size`` if given); flat contiguous copies + shape."""
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
        if size is not None:
            size = (int(size),) if np.ndim(size) == 0 else tuple(int(s) for s in size)
            if np.broadcast_shapes(shape, size) != size:
                raise ValueError
            shape = size
    except ValueError:
        shapes = ", ".join(f"{n}{a.shape}" for n, a in zip(names, arrays))
        extra = f" and size {size}" if size is not None else ""
        raise ValueError(f"shapes do not broadcast together: {shapes}{extra}") from None
    flat = tuple(np.ascontiguousarray(np.broadcast_to(a, shape)).ravel() for a in arrays)
    return flat, shape


def finish(flat, shape):
    """Reshape a flat result; 0-d results come back as numpy scalars."""
    return flat.reshape(shape)[()]
