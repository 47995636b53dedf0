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

__all__ = ["Q", "exp_rand", "exp_at", "exp_at_positions", "walk_chain", "Chain", "exp_rand_many", "rexp"]

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


#: ``_A_SUMS[j]`` = q[0] added to 0.0 j times in turn, exactly as R's loop accumulates it.
_A_SUMS = np.zeros(1100, dtype=np.float64)
for _j in range(1, _A_SUMS.shape[0]):
    _A_SUMS[_j] = _A_SUMS[_j - 1] + _Q0
del _j


def _doubling(u: NDArray[np.float64]) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Steps 1-3 of ``exp_rand`` for uniforms ``u`` in (0, 1): ``(a, u')``.

    R doubles ``u`` until it exceeds 1 (``j`` doublings, all exact) and adds
    q[0] to ``a`` after each doubling but the last. With ``u = m 2^e``,
    ``0.5 <= m < 1``, ``j = 1 - e`` when ``m > 0.5`` and ``2 - e`` when
    ``u`` is a power of two. ``a`` is read from the table of repeated sums,
    so it has R's bits; ``u' = u 2^j - 1`` is exact.
    """
    m, e = np.frexp(u)
    j: NDArray[np.int64] = np.where(m > 0.5, 1, 2) - e.astype(np.int64)
    return _A_SUMS[j - 1], np.ldexp(u, j) - 1.0


def exp_at(u: NDArray[np.float64], starts: NDArray[np.int64]) -> Tuple[NDArray[np.int64], NDArray[np.float64]]:
    """``exp_rand()`` started at the given positions of a block of uniforms.

    Parameters
    ----------
    u : numpy.ndarray of float64, shape (W,)
        Consecutive uniforms of the stream.
    starts : numpy.ndarray of int64
        Positions in ``0..W-1``.

    Returns
    -------
    used : numpy.ndarray of int64
        Words an ``exp_rand()`` starting there consumes; 0 where that would
        run past the end of the block (unknown).
    value : numpy.ndarray of float64
        Its result (meaningless where ``used`` is 0).
    """
    W = u.shape[0]
    a, v = _doubling(u[starts])
    used = np.ones(starts.shape[0], dtype=np.int64)
    value = a + v
    slow = np.flatnonzero(v > _Q0)
    if slow.shape[0]:
        k = np.searchsorted(_Q_TAIL, v[slow], side="left") + 1  # smallest i >= 1, v <= q[i]
        n_used = 2 + k
        inside = starts[slow] + n_used <= W
        used[slow[~inside]] = 0  # would run past the block: unknown here
        slow, k, n_used = slow[inside], k[inside], n_used[inside]
        first = starts[slow] + 1
        umin = u[first]
        for j in range(1, int(k.max(initial=0)) + 1):
            more = np.flatnonzero(k >= j)
            cand = u[first[more] + j]
            cur = umin[more]
            umin[more] = np.where(cur > cand, cand, cur)
        value[slow] = a[slow] + umin * _Q0
        used[slow] = n_used
    return used, value


def exp_at_positions(u: NDArray[np.float64]) -> Tuple[NDArray[np.int64], NDArray[np.float64]]:
    """``exp_rand()`` started at every position of a block of uniforms (see :func:`exp_at`)."""
    return exp_at(u, np.arange(u.shape[0], dtype=np.int64))


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


class Chain:
    """:func:`walk_chain` with numpy jump tables, built once per block.

    ``nxt[p] = p + used[p]``; an unknown position (``used[p] == 0``) and every
    position past the block point to themselves. ``levels`` squarings give
    ``f^(2^l)`` together with a flag saying whether the ``2^l`` positions from
    ``p`` are all known. :meth:`walk` follows only every ``2^levels``-th
    position in Python, fills in the positions in between with one gather per
    level, and takes the last few steps one by one.
    """

    def __init__(self, used: NDArray[np.int64], levels: int = 4) -> None:
        n = used.shape[0]
        pad = int(used.max(initial=0)) + 1
        nxt = np.arange(n + pad, dtype=np.int64)
        nxt[:n] += used
        live = np.zeros(n + pad, dtype=bool)
        np.greater(used, 0, out=live[:n])
        self.n = n
        self.jumps, self.oks = [nxt], [live]
        for _ in range(levels):
            j, o = self.jumps[-1], self.oks[-1]
            self.oks.append(o & o[j])
            self.jumps.append(j[j])

    def walk(self, start: int, count: int) -> Tuple[NDArray[np.int64], int]:
        """Same as ``walk_chain(used, start, count)``, with the positions as an array."""
        nxt, live = self.jumps[0], self.oks[0]
        if count <= 0 or start >= self.n or not live[start]:
            return np.empty(0, dtype=np.int64), start
        levels = len(self.jumps) - 1
        span = 1 << levels
        top_j, top_ok = self.jumps[-1], self.oks[-1]
        marks = []
        p = start
        left = count
        while left >= span and top_ok[p]:
            marks.append(p)
            p = int(top_j[p])
            left -= span
        cur = np.array(marks, dtype=np.int64)
        for lev in range(levels - 1, -1, -1):
            out = np.empty(2 * cur.shape[0], dtype=np.int64)
            out[0::2] = cur
            out[1::2] = self.jumps[lev][cur]
            cur = out
        rest = []
        while left > 0 and live[p]:
            rest.append(p)
            p = int(nxt[p])
            left -= 1
        if rest:
            cur = np.concatenate((cur, np.array(rest, dtype=np.int64)))
        return cur, p


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
        pos, p = Chain(used).walk(0, k - done)
        m = pos.shape[0]
        out[done : done + m] = value[pos]
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
