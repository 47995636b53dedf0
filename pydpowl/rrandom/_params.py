"""Argument checks for the R-style samplers: counts and recycled parameter vectors."""

from __future__ import annotations

import math
import numbers
from typing import Any, Optional, Tuple

import numpy as np
from numpy.typing import NDArray

from .._validation import check_int

__all__ = ["check_count", "as_param", "recycle", "as_size", "as_shape"]


def check_count(name: str, value: Any) -> int:
    """A number of draws: an integer ``>= 0``."""
    return check_int(name, value, minimum=0)


def as_param(name: str, value: Any) -> NDArray[np.float64]:
    """A distribution parameter as a 1-D float64 vector, recycled by the samplers.

    Scalars give length 1. NaN and infinities are allowed: R's rules for them
    apply per value. 2-D input is refused because R would read it column-major.
    """
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be a real number or a 1-D array of them, got "
                        f"{type(value).__name__}.")
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}.")
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a scalar or 1-D, got shape {arr.shape}.")
    return np.array(arr, dtype=np.float64, ndmin=1)


def recycle(values: NDArray[np.float64], n: int) -> NDArray[np.float64]:
    """R's recycling: element ``i`` of the result is ``values[i % len(values)]``."""
    m = values.shape[0]
    if m == n:
        return values
    if m == 1:
        return np.full(n, values[0])
    return np.tile(values, -(-n // m))[:n]


def as_size(name: str, value: Any) -> int:
    """A sample size as R reads it: a finite number ``>= 0``, truncated toward zero."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}.")
    if isinstance(value, numbers.Integral):
        k = int(value)
    else:
        x = float(value)
        if not math.isfinite(x):
            raise ValueError(f"{name} must be finite and >= 0, got {name}={x!r}.")
        k = int(math.trunc(x))
    if k < 0:
        raise ValueError(f"{name} must be >= 0, got {name}={value!r}.")
    return k


def as_shape(size: Optional[Any]) -> Optional[Tuple[int, ...]]:
    """numpy's ``size`` argument as a shape tuple (``None`` stays ``None``)."""
    if size is None:
        return None
    if isinstance(size, numbers.Integral) and not isinstance(size, (bool, np.bool_)):
        shape: Tuple[int, ...] = (int(size),)
    else:
        try:
            shape = tuple(int(check_int("size", s, minimum=0)) for s in size)
        except TypeError:
            raise TypeError(
                f"size must be None, an integer or a tuple of integers, got "
                f"{type(size).__name__}."
            ) from None
    if any(s < 0 for s in shape):
        raise ValueError(f"size must be non-negative, got size={size!r}.")
    return shape
