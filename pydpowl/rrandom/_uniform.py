"""R's ``unif_rand()`` and ``runif``: uniforms from 32-bit Mersenne-Twister words.

``unif_rand()`` is ``y * 2^-32`` for the tempered word ``y`` (exact), except that
``y = 0`` gives ``0.5 * 2.328306437080797e-10`` (R's fix-up keeping draws in
``(0, 1)``). ``runif(n, a, b)`` returns ``a + (b - a) * u`` per value, ``a`` itself
without a draw when ``a == b``, and NaN (without a draw) for non-finite ends or
``b < a``. No elementary function is involved, so this vectorises exactly.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ._mt import TWO_M32, UNIF_FIXUP, WordStream
from ._params import recycle

__all__ = ["TWO_M32", "UNIF_FIXUP", "words_to_unif", "runif"]


def words_to_unif(words: NDArray[np.uint64]) -> NDArray[np.float64]:
    """Vectorised ``unif_rand()`` for an array of raw words (exact)."""
    u = words.astype(np.float64) * TWO_M32
    zero = words == 0
    if zero.any():
        u[zero] = UNIF_FIXUP
    return u


def runif(
    stream: "WordStream", n: int, a: NDArray[np.float64], b: NDArray[np.float64]
) -> NDArray[np.float64]:
    """R's ``runif(n, a, b)`` with recycled parameter vectors ``a`` and ``b``.

    Empty ``a`` or ``b`` give ``n`` NaN (R's ``NA``) without drawing.
    """
    if n == 0:
        return np.empty(0, dtype=np.float64)
    if a.shape[0] == 0 or b.shape[0] == 0:
        return np.full(n, np.nan)
    if a.shape[0] == 1 and b.shape[0] == 1:
        lo, hi = float(a[0]), float(b[0])
        if not (np.isfinite(lo) and np.isfinite(hi)) or hi < lo:
            return np.full(n, np.nan)
        if lo == hi:
            return np.full(n, lo)
        u = words_to_unif(stream.take(n))
        return lo + (hi - lo) * u
    A = recycle(a, n)
    B = recycle(b, n)
    out = np.full(n, np.nan)
    ok = np.isfinite(A) & np.isfinite(B) & (A <= B)
    same = ok & (A == B)
    out[same] = A[same]
    draw = ok & (A != B)
    k = int(draw.sum())
    if k:
        u = words_to_unif(stream.take(k))
        Ad, Bd = A[draw], B[draw]
        out[draw] = Ad + (Bd - Ad) * u
    return out
