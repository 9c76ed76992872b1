"""Argument checks shared by the pipeline modules."""
from __future__ import annotations

import numbers


def check_int(name: str, value, minimum: int, *, allow_none: bool = False) -> None:
    """Raise TypeError unless ``value`` is an int (not a bool), ValueError if below ``minimum``."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int{' or None' if allow_none else ''}, "
                        f"got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
