"""DPpack's feature preprocessing in one pass (numba); see :class:`pydpowl.engine.preprocessing.FeatureScaler`."""

from __future__ import annotations

import numba

__all__ = ["clip_and_scale_rows"]


@numba.njit(cache=True, nogil=True)
def clip_and_scale_rows(X, lower, upper, col_scale, dim_scale, off, Z):  # pragma: no cover - compiled
    """Clip, intercept and scale into ``Z`` with the same floating-point operations as
    ``(clip(X) / col_scale) / dim_scale``; returns the number of clipped entries."""
    n, p = X.shape
    count = 0
    for i in range(n):
        if off == 1:
            Z[i, 0] = (1.0 / col_scale[0]) / dim_scale
        for j in range(p):
            x = X[i, j]
            v = min(max(x, lower[j]), upper[j])
            if v != x:
                count += 1
            Z[i, off + j] = (v / col_scale[off + j]) / dim_scale
    return count
