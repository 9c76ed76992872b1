"""Input checks with clear messages, shared by the privacy step, the models and the driver."""
from __future__ import annotations

import numbers

import numpy as np


def as_count_array(values, name: str, *, signed: bool) -> np.ndarray:
    """Return ``values`` as a C-contiguous int64 array, or raise naming the problem.

    Integer arrays and float arrays holding whole numbers are accepted; ``signed=False``
    additionally requires every value to be ``>= 0`` (true counts), ``signed=True`` allows
    negative values (privatized counts).
    """
    arr = np.asarray(values)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer)
                                 or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must be an array of integer counts, got dtype {arr.dtype}")
    if arr.ndim == 0 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty array of counts, got shape {arr.shape}")
    if np.issubdtype(arr.dtype, np.floating):
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} holds NaN or infinite values")
        if np.any(arr != np.round(arr)):
            raise ValueError(f"{name} holds non-integer values; counts must be whole numbers")
        if np.any(np.abs(arr) >= 2.0**62):
            raise ValueError(f"{name} holds values too large for int64 counts")
    if not signed and np.any(arr < 0):
        raise ValueError(f"{name} holds negative values; true counts must be >= 0")
    return np.ascontiguousarray(arr, dtype=np.int64)


def positive_int(value, name: str) -> int:
    """``value`` as a Python int >= 1, or a TypeError/ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


def non_negative_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return int(value)


def positive_float(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value) or value <= 0.0:
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


def observed_mask(mask, shape: tuple[int, ...]) -> np.ndarray:
    """The user's ``mask`` (True = missing) as a C-contiguous bool array of *observed* entries."""
    if mask is None:
        return np.ones(shape, dtype=bool)
    arr = np.asarray(mask)
    if arr.dtype != bool:
        if not np.issubdtype(arr.dtype, np.integer) or not np.isin(arr, (0, 1)).all():
            raise TypeError("mask must be a boolean array (True marks a missing entry)")
        arr = arr.astype(bool)
    if arr.shape != tuple(shape):
        raise ValueError(f"mask has shape {arr.shape} but the data have shape {tuple(shape)}")
    return np.ascontiguousarray(~arr)
