"""R's ``norm_rand()`` with ``normal.kind = "Inversion"``, and ``rnorm``.

Each normal uses exactly two uniforms: ``p = (trunc(2^27 u1) + u2) / 2^27`` and
``z = qnorm(p)`` by Wichura's AS 241 (PPND16), evaluated in R's operation order.
The central branch (``|p - 0.5| <= 0.425``, about 85% of draws) is plain
arithmetic and is vectorised with numpy; the tails need ``log``, which is taken
from the C library one element at a time (``math.log``), never from numpy,
whose SIMD ``log`` differs from glibc in the last bit for some arguments.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ._params import recycle

from ._uniform import words_to_unif

if TYPE_CHECKING:  # pragma: no cover
    from ._mt import WordStream

__all__ = ["BIG", "qnorm", "qnorm_vec", "norm_rand", "normals_from_words", "rnorm"]

#: R's BIG = 2^27 in the Inversion construction.
BIG = 134217728.0

# AS 241 coefficients, highest power first (R's literals).
_A = (2509.0809287301226727, 33430.575583588128105, 67265.770927008700853,
      45921.953931549871457, 13731.693765509461125, 1971.5909503065514427,
      133.14166789178437745, 3.387132872796366608)
_B = (5226.495278852854561, 28729.085735721942674, 39307.89580009271061,
      21213.794301586595867, 5394.1960214247511077, 687.1870074920579083,
      42.313330701600911252, 1.0)
_C = (7.7454501427834140764e-4, 0.0227238449892691845833, 0.24178072517745061177,
      1.27045825245236838258, 3.64784832476320460504, 5.7694972214606914055,
      4.6303378461565452959, 1.42343711074968357734)
_D = (1.05075007164441684324e-9, 5.475938084995344946e-4, 0.0151986665636164571966,
      0.14810397642748007459, 0.68976733498510000455, 1.6763848301838038494,
      2.05319162663775882187, 1.0)
_E = (2.01033439929228813265e-7, 2.71155556874348757815e-5, 0.0012426609473880784386,
      0.026532189526576123093, 0.29656057182850489123, 1.7848265399172913358,
      5.4637849111641143699, 6.6579046435011037772)
_F = (2.04426310338993978564e-15, 1.4215117583164458887e-7, 1.8463183175100546818e-5,
      7.868691311456132591e-4, 0.0148753612908506148525, 0.13692988092273580531,
      0.59983220655588793769, 1.0)


def _horner(coef: tuple, r):  # works on floats and on numpy arrays alike
    acc = coef[0] * r + coef[1]
    for c in coef[2:]:
        acc = acc * r + c
    return acc


def qnorm(p: float) -> float:
    """Standard normal quantile (lower tail), as R's ``qnorm(p)`` for ``0 <= p <= 1``."""
    if p <= 0.0:
        return -math.inf if p == 0.0 else math.nan
    if p >= 1.0:
        return math.inf if p == 1.0 else math.nan
    q = p - 0.5
    if abs(q) <= 0.425:
        r = 0.180625 - q * q
        val = q * _horner(_A, r) / _horner(_B, r)
    else:
        pt = (0.5 - p) + 0.5 if q > 0 else p
        r = math.sqrt(-math.log(pt))
        if r <= 5.0:
            r = r + -1.6
            val = _horner(_C, r) / _horner(_D, r)
        else:
            r = r + -5.0
            val = _horner(_E, r) / _horner(_F, r)
        if q < 0.0:
            val = -val
    return 0.0 + 1.0 * val  # R returns mu + sigma * val


def qnorm_vec(p: NDArray[np.float64]) -> NDArray[np.float64]:
    """Vectorised :func:`qnorm`, bitwise equal to it element by element."""
    p = np.asarray(p, dtype=np.float64)
    out = np.empty_like(p)
    q = p - 0.5
    central = np.abs(q) <= 0.425
    if central.all():
        r = 0.180625 - q * q
        return 0.0 + 1.0 * (q * _horner(_A, r) / _horner(_B, r))
    qc = q[central]
    r = 0.180625 - qc * qc
    out[central] = qc * _horner(_A, r) / _horner(_B, r)
    tail = np.flatnonzero(~central)
    pt_all = p[tail]
    qt = q[tail]
    inner = (pt_all > 0.0) & (pt_all < 1.0)
    if not inner.all():  # boundaries (p = 1 happens with probability ~5e-17 per draw)
        edge = tail[~inner]
        pe = p[edge]
        out[edge] = np.where(pe == 0.0, -np.inf, np.where(pe == 1.0, np.inf, np.nan))
        tail, pt_all, qt = tail[inner], pt_all[inner], qt[inner]
    pt = np.where(qt > 0, (0.5 - pt_all) + 0.5, pt_all)
    logs = np.fromiter(map(math.log, pt.tolist()), dtype=np.float64, count=pt.shape[0])
    r = np.sqrt(-logs)
    val = np.empty_like(r)
    lo = r <= 5.0
    r1 = r[lo] + -1.6
    val[lo] = _horner(_C, r1) / _horner(_D, r1)
    hi = ~lo
    if hi.any():
        r2 = r[hi] + -5.0
        val[hi] = _horner(_E, r2) / _horner(_F, r2)
    val = np.where(qt < 0.0, -val, val)
    out[tail] = val
    return 0.0 + 1.0 * out


def norm_rand(stream: "WordStream") -> float:
    """One standard normal (R's ``norm_rand()``, Inversion): two uniforms."""
    u1 = stream.unif()
    w = int(BIG * u1) + stream.unif()
    return qnorm(w / BIG)


def normals_from_words(words: NDArray[np.uint64]) -> NDArray[np.float64]:
    """Standard normals from consecutive word pairs (``len(words)`` must be even).

    ``trunc(2^27 * u1)`` equals ``y1 >> 5`` exactly (also for the zero-word
    fix-up), and ``(hi + u2) / 2^27`` is one rounding plus an exact scaling.
    """
    y1 = words[0::2]
    u2 = words_to_unif(words[1::2])
    hi = (y1 >> np.uint64(5)).astype(np.float64)
    return qnorm_vec((hi + u2) / BIG)


def rnorm(
    stream: "WordStream", n: int, mean: NDArray[np.float64], sd: NDArray[np.float64]
) -> NDArray[np.float64]:
    """R's ``rnorm(n, mean, sd)`` with recycled parameter vectors.

    Per value: NaN (no draw) if ``mean`` is NaN, ``sd`` is not finite or
    ``sd < 0``; ``mean`` itself (no draw) if ``sd == 0`` or ``mean`` is
    infinite; otherwise ``mean + sd * norm_rand()``.
    """
    if n == 0:
        return np.empty(0, dtype=np.float64)
    if mean.shape[0] == 0 or sd.shape[0] == 0:
        return np.full(n, np.nan)
    if mean.shape[0] == 1 and sd.shape[0] == 1:
        mu, sigma = float(mean[0]), float(sd[0])
        if math.isnan(mu) or not math.isfinite(sigma) or sigma < 0.0:
            return np.full(n, np.nan)
        if sigma == 0.0 or not math.isfinite(mu):
            return np.full(n, mu)
        return mu + sigma * normals_from_words(stream.take(2 * n))
    M = recycle(mean, n)
    S = recycle(sd, n)
    out = np.full(n, np.nan)
    ok = ~np.isnan(M) & np.isfinite(S) & (S >= 0.0)
    fixed = ok & ((S == 0.0) | ~np.isfinite(M))
    out[fixed] = M[fixed]
    draw = ok & ~fixed
    k = int(draw.sum())
    if k:
        z = normals_from_words(stream.take(2 * k))
        out[draw] = M[draw] + S[draw] * z
    return out
