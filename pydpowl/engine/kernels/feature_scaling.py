"""DPpack's feature preprocessing in one pass (numba); see :class:`pydpowl.engine.preprocessing.FeatureScaler`."""

from __future__ import annotations

import numpy as np

from .caching import kernel
from .row_sweeps import BLOCK

__all__ = ["clip_and_scale_rows"]

_jit = kernel  # numba.njit(nogil=True), cached where the set-up compiled it (see .caching)


@_jit
def clip_and_scale_rows(X, lower, upper, col_scale, dim_scale, off, Z):  # pragma: no cover - compiled
    """Clip, intercept and scale into the column-major ``Z`` with the same floating-point operations as
    ``(clip(X) / col_scale) / dim_scale``; returns the number of clipped entries.

    Rows go in blocks of ``BLOCK``: each column of the block of the row-major
    ``X`` is copied to a contiguous buffer, then clipped, counted and scaled
    into ``Z`` by loops the compiler vectorises.
    """
    n, p = X.shape
    count = 0
    if off == 1:
        Z[:, 0] = (1.0 / col_scale[0]) / dim_scale
    column = np.empty(BLOCK)
    for start in range(0, n, BLOCK):
        stop = min(start + BLOCK, n)
        b = stop - start
        for j in range(p):
            _copy(column, X[start:stop, j], b)
            z = Z[start:stop, off + j]
            count += _clip_into(z, column, lower[j], upper[j], b)
            _divide_twice(z, col_scale[off + j], dim_scale, b)
    return count


@_jit
def _copy(out, x, b):  # pragma: no cover - compiled
    """``out[:b] = x[:b]``."""
    for i in range(b):
        out[i] = x[i]


@_jit
def _clip_into(z, x, lower, upper, b):  # pragma: no cover - compiled
    """``z[:b] = clip(x[:b], lower, upper)``; returns how many entries were clipped."""
    count = 0
    for i in range(b):
        v = min(max(x[i], lower), upper)
        count += v != x[i]
        z[i] = v
    return count


@_jit
def _divide_twice(z, first, second, b):  # pragma: no cover - compiled
    """``z[:b] = (z[:b] / first) / second``."""
    for i in range(b):
        z[i] = (z[i] / first) / second
