"""R's ``exp_rand()`` (Ahrens & Dieter 1972, algorithm SA) and ``rexp``.

``exp_rand`` uses a data-dependent number of uniforms: one with probability
ln 2, otherwise ``2 + k``. No elementary function is involved, so it is
platform independent. For many draws the stream is processed *positionally*:
for every word position ``i`` of a block, :func:`exp_at_positions` computes the
value and the number of words an ``exp_rand()`` starting at ``i`` would use
(plain numpy arithmetic, exact). The draws actually made are then found by
following the chain ``i -> i + used[i]`` from the cursor (:func:`walk_chain`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Tuple

import numpy as np
from numpy.typing import NDArray

from ._params import recycle

from ._uniform import words_to_unif

if TYPE_CHECKING:  # pragma: no cover
    from ._mt import WordStream

__all__ = ["Q", "exp_rand", "exp_at_positions", "walk_chain", "exp_rand_many", "rexp"]

#: q[k] = sum_{i=1}^{k+1} (ln 2)^i / i!, R's 16 literals.
Q = (
    0.6931471805599453, 0.9333736875190459, 0.9888777961838675, 0.9984959252914960,
    0.9998292811061389, 0.9999833164100727, 0.9999985691438767, 0.9999998906925558,
    0.9999999924734159, 0.9999999995283275, 0.9999999999728814, 0.9999999999985598,
    0.9999999999999289, 0.9999999999999968, 0.9999999999999999, 1.0000000000000000,
)
_Q0 = Q[0]
_Q_TAIL = np.array(Q[1:], dtype=np.float64)

#: Below this many draws the scalar loop is used (it is also the reference path).
VECTOR_MIN = 32
#: Upper bound on the words examined per block.
MAX_BLOCK = 1 << 20


def exp_rand(stream: "WordStream") -> float:
    """One standard exponential, exactly as R's ``exp_rand()``."""
    a = 0.0
    u = stream.unif()
    while u <= 0.0 or u >= 1.0:  # never true for Mersenne-Twister; kept as R has it
        u = stream.unif()
    while True:
        u += u
        if u > 1.0:
            break
        a += _Q0
    u -= 1.0
    if u <= _Q0:
        return a + u
    i = 0
    umin = stream.unif()
    while True:
        ustar = stream.unif()
        if umin > ustar:
            umin = ustar
        i += 1
        if not u > Q[i]:
            break
    return a + umin * _Q0


def exp_at_positions(u: NDArray[np.float64]) -> Tuple[NDArray[np.int64], NDArray[np.float64]]:
    """``exp_rand()`` started at every position of a block of uniforms.

    Parameters
    ----------
    u : numpy.ndarray of float64, shape (W,)
        Consecutive uniforms of the stream.

    Returns
    -------
    used : numpy.ndarray of int64, shape (W,)
        Words an ``exp_rand()`` starting at position ``i`` consumes; 0 where
        that would run past the end of the block (unknown).
    value : numpy.ndarray of float64, shape (W,)
        Its result (meaningless where ``used`` is 0).
    """
    W = u.shape[0]
    a = np.zeros(W)
    v = u.copy()
    idx = np.arange(W)
    while idx.shape[0]:  # repeated doubling; a accumulates q[0] by repeated addition
        vi = v[idx]
        vi = vi + vi
        v[idx] = vi
        idx = idx[vi <= 1.0]
        a[idx] = a[idx] + _Q0
    v = v - 1.0
    used = np.ones(W, dtype=np.int64)
    value = a + v
    slow = np.flatnonzero(v > _Q0)
    if slow.shape[0]:
        k = np.searchsorted(_Q_TAIL, v[slow], side="left") + 1  # smallest i >= 1, v <= q[i]
        n_used = 2 + k
        inside = slow + n_used <= W
        used[slow[~inside]] = 0  # would run past the block: unknown here
        slow, k, n_used = slow[inside], k[inside], n_used[inside]
        umin = u[slow + 1]
        for j in range(1, int(k.max(initial=0)) + 1):
            more = np.flatnonzero(k >= j)
            cand = u[slow[more] + 1 + j]
            cur = umin[more]
            umin[more] = np.where(cur > cand, cand, cur)
        value[slow] = a[slow] + umin * _Q0
        used[slow] = n_used
    return used, value


def walk_chain(used: List[int], start: int, count: int) -> Tuple[List[int], int]:
    """Follow ``p -> p + used[p]`` from ``start`` for up to ``count`` steps.

    Stops early at an unknown position (``used[p] == 0``) or at the end of the
    block. Returns the visited positions and the position reached.
    """
    out: List[int] = []
    append = out.append
    p = start
    try:
        for _ in range(count):
            c = used[p]
            if not c:
                break
            append(p)
            p += c
    except IndexError:  # p ran to the end of the block
        pass
    return out, p


def exp_rand_many(stream: "WordStream", k: int) -> NDArray[np.float64]:
    """``k`` successive ``exp_rand()`` values, consuming the stream exactly as R."""
    out = np.empty(k, dtype=np.float64)
    if k < VECTOR_MIN:
        for i in range(k):
            out[i] = exp_rand(stream)
        return out
    done = 0
    while done < k:
        W = min(int((k - done) * 1.75) + 64, MAX_BLOCK)
        words = stream.peek(W)
        used, value = exp_at_positions(words_to_unif(words))
        pos, p = walk_chain(used.tolist(), 0, k - done)
        m = len(pos)
        out[done : done + m] = value[np.array(pos, dtype=np.int64)]
        done += m
        stream.advance(p)
    return out


def rexp(stream: "WordStream", n: int, scale: NDArray[np.float64]) -> NDArray[np.float64]:
    """R's ``rexp`` given the *scale* vector (R's wrapper passes ``1/rate``).

    Per value: 0 (no draw) if ``scale == 0``; NaN (no draw) if ``scale`` is
    negative, infinite or NaN; otherwise ``scale * exp_rand()``.
    """
    if n == 0:
        return np.empty(0, dtype=np.float64)
    if scale.shape[0] == 0:
        return np.full(n, np.nan)
    S = recycle(scale, n)
    out = np.full(n, np.nan)
    out[S == 0.0] = 0.0
    draw = np.isfinite(S) & (S > 0.0)
    k = int(draw.sum())
    if k == n:
        return S * exp_rand_many(stream, n)
    if k:
        out[draw] = S[draw] * exp_rand_many(stream, k)
    return out
