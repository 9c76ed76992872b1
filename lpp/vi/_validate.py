"""Input checks of the variational entry points (clear errors before any work is done)."""
from __future__ import annotations

import numbers

import numpy as np


def count_array(values, name: str, *, signed: bool) -> np.ndarray:
    """``values`` as C-contiguous int64 counts, or a TypeError/ValueError naming the problem."""
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
    if not signed and np.any(arr < 0):
        raise ValueError(f"{name} holds negative values; true counts must be >= 0")
    return np.ascontiguousarray(arr, dtype=np.int64)


def noise_array(alpha, shape) -> np.ndarray:
    """``alpha`` broadcast to the data's ``shape`` (float64, each in (0, 1))."""
    if alpha is None:
        raise TypeError("alpha is required for the private methods (the mechanism's noise level)")
    arr = np.asarray(alpha)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.floating)
                                 or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"alpha must be a real number or array, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all() or np.any(arr <= 0.0) or np.any(arr >= 1.0):
        raise ValueError("alpha must lie strictly between 0 and 1 "
                         "(alpha = exp(-epsilon / N) with epsilon, N > 0)")
    try:
        full = np.broadcast_to(arr, shape)
    except ValueError:
        raise ValueError(f"alpha of shape {arr.shape} does not broadcast to the data's shape "
                         f"{tuple(shape)}") from None
    return np.ascontiguousarray(full)


def observed_from_mask(mask, shape) -> np.ndarray:
    """The user's ``mask`` (True = missing, as in ``numpy.ma``) as a bool array of observed."""
    if mask is None:
        return np.ones(shape, dtype=bool)
    arr = np.asarray(mask)
    if arr.dtype != bool:
        raise TypeError("mask must be a boolean array (True marks a missing entry)")
    if arr.shape != tuple(shape):
        raise ValueError(f"mask has shape {arr.shape} but the data have shape {tuple(shape)}")
    return np.ascontiguousarray(~arr)


def iteration_cap(value, name: str = "max_iter") -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


def tolerance(value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"tol must be a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value) or value < 0.0:
        raise ValueError(f"tol must be a finite number >= 0, got {value}")
    return value


def non_negative(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return int(value)
