"""R's ``rt(n, df)`` (Student's t, central): ``norm_rand() / sqrt(rchisq(df) / df)``.

Per value R draws the numerator first (one ``norm_rand()``, two words), then
``rchisq(df) = rgamma(shape = df / 2, scale = 2)``, and returns
``num / sqrt(chisq / df)``. An infinite ``df`` returns ``norm_rand()`` alone;
NaN or ``df <= 0`` gives NaN without a draw.

Many draws with one ``df >= 2`` (gamma shape >= 1, algorithm GD) are computed
positionally like ``rgamma``: a draw starting at word ``i`` is a normal from
words ``i, i+1`` followed by a GD draw starting at ``i + 2``, whose length
:class:`~pydpowl.rrandom._gamma._GDPlan` knows for every position. Other
cases are drawn one value at a time in R's order.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ._exp import Chain
from ._gamma import _GDPlan, rgamma_one
from ._normal import norm_rand, normals_from_words
from ._params import recycle

if TYPE_CHECKING:  # pragma: no cover
    from ._mt import WordStream

__all__ = ["rt_one", "rt"]

#: Below this many draws the scalar loop is used (it is also the reference path).
VECTOR_MIN = 32
#: Upper bound on the words examined per block.
MAX_BLOCK = 1 << 20


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


def _rt_many_gd(stream: "WordStream", df: float, k: int) -> NDArray[np.float64]:
    """``k`` draws of ``rt(1, df)`` for one finite ``df >= 2``, block by block."""
    a = df / 2.0
    out = np.empty(k, dtype=np.float64)
    done = 0
    while done < k:
        W = min(int((k - done) * 4.8) + 64, MAX_BLOCK)
        base = stream.words_used
        words = stream.peek(W)
        plan = _GDPlan(words[2:], a)  # GD started at word i + 2 is plan position i
        step = np.where(plan.step > 0, plan.step + 2, 0)
        chain = Chain(step)
        p = 0
        while done < k:
            pos, p = chain.walk(p, k - done)
            m = pos.shape[0]
            if m:
                pairs = np.empty(2 * m, dtype=np.uint64)
                pairs[0::2], pairs[1::2] = words[pos], words[pos + 1]
                num = normals_from_words(pairs)
                value, late = plan.values(pos)
                chisq = np.where(late, (2.0 * value) * value, 2.0 * value)
                out[done : done + m] = num / np.sqrt(chisq / df)
                done += m
            if done == k or p >= step.shape[0]:
                break
            # the gamma's rejection loop runs past the block: scalar code from here
            stream.advance(base + p - stream.words_used)
            out[done] = rt_one(stream, df)
            done += 1
            p = stream.words_used - base
        stream.advance(max(base + p - stream.words_used, 0))
    return out


def rt(stream: "WordStream", n: int, df: NDArray[np.float64]) -> NDArray[np.float64]:
    """R's ``rt(n, df)`` with a recycled ``df`` vector (empty ``df`` gives NaN)."""
    if n == 0:
        return np.empty(0, dtype=np.float64)
    if df.shape[0] == 0:
        return np.full(n, np.nan)
    if df.shape[0] == 1 and n >= VECTOR_MIN and math.isfinite(df[0]) and df[0] >= 2.0:
        return _rt_many_gd(stream, float(df[0]), n)
    D = recycle(df, n).tolist()
    return np.fromiter((rt_one(stream, d) for d in D), dtype=np.float64, count=n)
