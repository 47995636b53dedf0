"""R's ``rt(n, df)`` (Student's t, central): ``norm_rand() / sqrt(rchisq(df) / df)``.

Per value R draws the numerator first (one ``norm_rand()``, two words), then
``rchisq(df) = rgamma(shape = df / 2, scale = 2)``, and returns
``num / sqrt(chisq / df)``. An infinite ``df`` returns ``norm_rand()`` alone;
NaN or ``df <= 0`` gives NaN without a draw. Draws interleave a normal and a
gamma per value, so they are made one at a time in R's order.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ._gamma import rgamma_one
from ._normal import norm_rand
from ._params import recycle

if TYPE_CHECKING:  # pragma: no cover
    from ._mt import WordStream

__all__ = ["rt_one", "rt"]


def rt_one(stream: "WordStream", df: float) -> float:
    """One draw of R's ``rt(1, df)``."""
    if math.isnan(df) or df <= 0.0:
        return math.nan
    if math.isinf(df):
        return norm_rand(stream)
    num = norm_rand(stream)
    chisq = rgamma_one(stream, df / 2.0, 2.0)  # R's rchisq(df)
    denom = math.sqrt(chisq / df)
    if denom == 0.0:  # chisq underflowed to 0 (tiny df): IEEE division, as in C
        return math.nan if num == 0.0 or math.isnan(num) else math.copysign(math.inf, num)
    return num / denom


def rt(stream: "WordStream", n: int, df: NDArray[np.float64]) -> NDArray[np.float64]:
    """R's ``rt(n, df)`` with a recycled ``df`` vector (empty ``df`` gives NaN)."""
    if n == 0:
        return np.empty(0, dtype=np.float64)
    if df.shape[0] == 0:
        return np.full(n, np.nan)
    D = recycle(df, n).tolist()
    return np.fromiter((rt_one(stream, d) for d in D), dtype=np.float64, count=n)
