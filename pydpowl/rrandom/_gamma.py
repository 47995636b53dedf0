"""R's ``rgamma(n, shape, scale)``: Ahrens & Dieter's GD (shape >= 1) and GS (shape < 1).

The scalar functions follow R's operation order literally; ``log``, ``exp`` and
``expm1`` come from the C library through :mod:`math`. R caches the
shape-dependent constants between calls; they are pure functions of the shape,
so recomputing them (here: an LRU cache) gives identical bits.

Many draws with one shape are computed positionally (see :mod:`._exp`):

* GD: for every word position of a block, the "immediate", "squeeze" and
  "quotient" tests (steps 2-5, 2 or 3 words) are evaluated with numpy; a
  Python loop then walks the positions actually used and runs the rare
  rejection loop (step 6 onwards) with the scalar code at the point where
  it starts.
* GS: a try uses one uniform plus one ``exp_rand()``, whatever its outcome, so
  the chain of tries is known before any acceptance test; the tests are then
  evaluated only on the tries actually made.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Tuple

import numpy as np
from numpy.typing import NDArray

from ._exp import Chain, exp_at, exp_at_positions, exp_rand
from ._normal import BIG, norm_rand, qnorm_vec
from ._params import recycle
from ._uniform import words_to_unif

if TYPE_CHECKING:  # pragma: no cover
    from ._mt import WordStream

__all__ = ["rgamma_one", "rgamma_same_shape", "rgamma"]

_SQRT32 = 5.656854
_EXP_M1 = 0.36787944117144232159
_TAU = -0.71874483771719
_Q = (2.424e-4, 2.4511e-4, -7.388e-5, 0.00144121, 0.00801191, 0.02083148, 0.04166669)
_A = (0.1233795, -0.1367177, 0.1423657, -0.1662921, 0.2000062, -0.250003, 0.3333333)

#: Below this many draws the scalar loop is used (it is also the reference path).
VECTOR_MIN = 32
#: Upper bound on the words examined per block.
MAX_BLOCK = 1 << 20


def _log(x: float) -> float:
    # C's log without Python's exceptions: log(0) = -inf, log(x < 0) = NaN
    if x > 0.0:
        return math.log(x)
    return -math.inf if x == 0.0 else math.nan


@functools.lru_cache(maxsize=64)
def _gd_constants(a: float) -> Tuple[float, float, float, float, float, float, float]:
    """``(s2, s, d, q0, b, si, c)`` for shape ``a >= 1``, in R's operation order."""
    s2 = a - 0.5
    s = math.sqrt(s2)
    d = _SQRT32 - s * 12.0
    r = 1.0 / a
    q0 = ((((((_Q[0] * r + _Q[1]) * r + _Q[2]) * r + _Q[3]) * r + _Q[4]) * r + _Q[5]) * r
          + _Q[6]) * r
    if a <= 3.686:
        b = 0.463 + s + 0.178 * s2
        si = 1.235
        c = 0.195 / s - 0.079 + 0.16 * s
    elif a <= 13.022:
        b = 1.654 + 0.0076 * s2
        si = 1.68 / s + 0.275
        c = 0.062 / s + 0.024
    else:
        b = 1.77
        si = 0.75
        c = 0.1515 / s
    return s2, s, d, q0, b, si, c


def _poly_a(v):  # ((((((a7 v + a6) v + a5) v + a4) v + a3) v + a2) v + a1), floats or arrays
    acc = _A[0] * v + _A[1]
    for coef in _A[2:]:
        acc = acc * v + coef
    return acc


def _quotient(t: float, s: float, s2: float, q0: float) -> float:
    v = t / (s + s)
    if abs(v) <= 0.25:
        return q0 + 0.5 * t * t * _poly_a(v) * v
    return q0 - s * t + 0.25 * t * t + (s2 + s2) * _log(1.0 + v)


def _gd_tail(stream: "WordStream", a: float) -> float:
    """GD steps 6-7 (the double-exponential rejection loop); returns ``x``."""
    s2, s, _d, q0, b, si, c = _gd_constants(a)
    while True:
        e = exp_rand(stream)
        u = stream.unif()
        u = u + u - 1.0
        if u < 0.0:
            t = b - si * e
        else:
            t = b + si * e
        if t >= _TAU:
            q = _quotient(t, s, s2, q0)
            if q > 0.0:
                w = math.expm1(q)
                if c * abs(u) <= w * math.exp(e - 0.5 * t * t):
                    break
    return s + 0.5 * t


def _gd_unscaled(stream: "WordStream", a: float) -> Tuple[float, bool]:
    s2, s, d, q0, _b, _si, _c = _gd_constants(a)
    t = norm_rand(stream)
    x = s + 0.5 * t
    ret = x * x
    if t >= 0.0:
        return ret, False
    u = stream.unif()
    if d * u <= t * t * t:
        return ret, False
    if x > 0.0:
        if _log(1.0 - u) <= _quotient(t, s, s2, q0):
            return ret, False
    return _gd_tail(stream, a), True  # scaled later as (scale * x) * x


def _gs(stream: "WordStream", a: float) -> float:
    e = 1.0 + _EXP_M1 * a
    while True:
        p = e * stream.unif()
        if p >= 1.0:
            x = -_log((e - p) / a)
            if exp_rand(stream) >= (1.0 - a) * _log(x):
                return x
        else:
            x = math.exp(_log(p) / a)
            if exp_rand(stream) >= x:
                return x


def rgamma_one(stream: "WordStream", a: float, scale: float) -> float:
    """One draw of R's ``rgamma(1, shape = a, scale = scale)``."""
    if math.isnan(a) or math.isnan(scale):
        return math.nan
    if a <= 0.0 or scale <= 0.0:
        return 0.0 if (scale == 0.0 or a == 0.0) else math.nan
    if math.isinf(a) or math.isinf(scale):
        return math.inf
    if a < 1.0:
        return scale * _gs(stream, a)
    value, late = _gd_unscaled(stream, a)
    return (scale * value) * value if late else scale * value


def _map(fn, arr: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.fromiter(map(fn, arr.tolist()), dtype=np.float64, count=arr.shape[0])


def _quotient_vec(t: NDArray[np.float64], s: float, s2: float, q0: float) -> NDArray[np.float64]:
    """:func:`_quotient` element by element (same operations; ``log`` from the C library).

    The callers guarantee ``t > -2s`` (``x > 0``, or ``t >= tau``), so ``1 + v > 0``.
    """
    v = t / (s + s)
    q = np.empty_like(t)
    small = np.abs(v) <= 0.25
    ts, vs = t[small], v[small]
    q[small] = q0 + (((0.5 * ts) * ts) * _poly_a(vs)) * vs
    big = ~small
    tb = t[big]
    q[big] = ((q0 - s * tb) + (0.25 * tb) * tb) + (s2 + s2) * _map(math.log, 1.0 + v[big])
    return q


def _gd_tails(u: NDArray[np.float64], starts: NDArray[np.int64],
              a: float) -> Tuple[NDArray[np.int64], NDArray[np.float64]]:
    """GD's rejection loop (steps 6-7) started at each position of ``starts``, all at once.

    Each try is one ``exp_rand()`` then one uniform; the tries of all starts
    are evaluated in waves with the scalar code's operations (:func:`_gd_tail`).

    Returns
    -------
    used : numpy.ndarray of int64
        Words the loop consumes from its start; 0 where it runs past the block.
    x : numpy.ndarray of float64
        ``s + 0.5 * t`` of the accepted try (the unscaled value; see ``late``).
    """
    s2, s, _d, q0, b, si, c = _gd_constants(a)
    W = u.shape[0]
    used = np.zeros(starts.shape[0], dtype=np.int64)
    x = np.zeros(starts.shape[0], dtype=np.float64)
    alive = np.arange(starts.shape[0])
    cur = starts.copy()
    while alive.shape[0]:
        alive = alive[cur[alive] < W]  # a try starting past the block is unknown here
        pos = cur[alive]
        e_used, e = exp_at(u, pos)
        known = (e_used > 0) & (pos + e_used < W)  # the uniform after exp_rand is in the block
        alive, pos, e_used, e = alive[known], pos[known], e_used[known], e[known]
        uu = u[pos + e_used]
        uu = uu + uu - 1.0
        t = np.where(uu < 0.0, b - si * e, b + si * e)
        accept = np.zeros(alive.shape[0], dtype=bool)
        go = np.flatnonzero(t >= _TAU)
        if go.shape[0]:
            q = _quotient_vec(t[go], s, s2, q0)
            pos_q = q > 0.0
            go, q = go[pos_q], q[pos_q]
            w = _map(math.expm1, q)
            tg = t[go]
            accept[go] = c * np.abs(uu[go]) <= w * _map(math.exp, e[go] - (0.5 * tg) * tg)
        nxt = pos + e_used + 1
        done = alive[accept]
        used[done] = nxt[accept] - starts[done]
        x[done] = s + 0.5 * t[accept]
        cur[alive] = nxt
        alive = alive[~accept]
    return used, x


class _GDPlan:
    """GD (shape >= 1) started at every word position of a block of ``W`` words.

    ``step[i]`` is the number of words a draw starting at position ``i``
    consumes: 2 when ``t >= 0`` (that is ``p >= 0.5``, no ``qnorm`` needed),
    3 when the squeeze or the quotient test accepts, ``3 + tail`` when the
    rejection loop accepts within the block, and 0 when it runs past the block
    (the draw is then made with the scalar code). Values are computed only for
    the positions a chain actually visits (:meth:`values`).
    """

    def __init__(self, words: NDArray[np.uint64], a: float) -> None:
        s2, s, d, q0, _b, _si, _c = _gd_constants(a)
        self.a, self.s = a, s
        W = words.shape[0]
        m = W - 2
        u = words_to_unif(words)
        hi = (words[:m] >> np.uint64(5)).astype(np.float64)
        self.p = (hi + u[1 : m + 1]) / BIG  # norm_rand() = qnorm(p); t >= 0 iff p >= 0.5
        step = np.full(m, 2, dtype=np.int64)
        neg = np.flatnonzero(self.p < 0.5)
        tn = qnorm_vec(self.p[neg])
        xn = s + 0.5 * tn
        un = u[neg + 2]
        ok = d * un <= (tn * tn) * tn  # squeeze
        rest = np.flatnonzero(~ok & (xn > 0.0))
        if rest.shape[0]:
            # 1 - u > 0 for a uniform; x > 0 gives t > -2s, so 1 + t/(2s) > 0 in the quotient
            ok[rest] = _map(math.log, 1.0 - un[rest]) <= _quotient_vec(tn[rest], s, s2, q0)
        step[neg] = 3
        tails = neg[~ok]
        t_used, t_x = _gd_tails(u, tails + 3, a)
        step[tails] = np.where(t_used > 0, 3 + t_used, 0)
        self.step = step
        self.neg, self.neg_ret, self.neg_ok = neg, xn * xn, ok
        self.tails, self.tail_x = tails, t_x

    def values(self, pos: NDArray[np.int64]) -> Tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """``(value, late)`` of the draws starting at ``pos`` (see :func:`_gd_many`)."""
        value = np.empty(pos.shape[0], dtype=np.float64)
        late = np.zeros(pos.shape[0], dtype=bool)
        is_pos = self.p[pos] >= 0.5
        i = np.flatnonzero(is_pos)
        x = self.s + 0.5 * qnorm_vec(self.p[pos[i]])
        value[i] = x * x
        j = np.flatnonzero(~is_pos)
        k = np.searchsorted(self.neg, pos[j])
        early = self.neg_ok[k]
        value[j[early]] = self.neg_ret[k[early]]
        jt = j[~early]
        value[jt] = self.tail_x[np.searchsorted(self.tails, pos[jt])]
        late[jt] = True
        return value, late


def _gd_many(stream: "WordStream", a: float, k: int) -> Tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """``k`` GD draws without the scale: ``(value, late)``.

    ``value`` is ``x * x`` for early acceptances and ``x`` for draws accepted in
    the rejection loop (``late``), whose scaled result is ``(scale * x) * x``.
    """
    value = np.empty(k, dtype=np.float64)
    late = np.zeros(k, dtype=bool)
    done = 0
    while done < k:
        W = min(int((k - done) * 2.7) + 64, MAX_BLOCK)
        base = stream.words_used
        plan = _GDPlan(stream.peek(W), a)
        chain = Chain(plan.step)
        n_pos = plan.step.shape[0]
        p = 0
        while done < k:
            pos, p = chain.walk(p, k - done)
            m = pos.shape[0]
            if m:
                value[done : done + m], late[done : done + m] = plan.values(pos)
                done += m
            if done == k or p >= n_pos:
                break
            # the rejection loop of the draw at p runs past the block: scalar code
            stream.advance(base + p - stream.words_used)
            value[done], late[done] = _gd_unscaled(stream, a)
            done += 1
            p = stream.words_used - base
        stream.advance(max(base + p - stream.words_used, 0))
    return value, late


def _gs_many(stream: "WordStream", a: float, k: int) -> NDArray[np.float64]:
    """``k`` GS draws (shape ``a < 1``) without the scale."""
    out = np.empty(k, dtype=np.float64)
    e = 1.0 + _EXP_M1 * a
    one_minus_a = 1.0 - a
    done = 0
    while done < k:
        W = min(int((k - done) * 4.0) + 256, MAX_BLOCK)
        words = stream.peek(W)
        u = words_to_unif(words)
        e_used, e_val = exp_at_positions(u)
        try_used = np.zeros(W, dtype=np.int64)
        known = e_used[1:] > 0
        try_used[:-1][known] = 1 + e_used[1:][known]
        pos, _ = Chain(try_used).walk(0, W)
        if pos.shape[0] == 0:
            out[done] = _gs(stream, a)
            done += 1
            continue
        p = e * u[pos]
        ex = e_val[pos + 1]
        x = np.empty_like(p)
        acc = np.empty(p.shape[0], dtype=bool)
        big = p >= 1.0
        # p > 0, (e - p) / a > 0 and x >= ~1 here, so math.log never sees 0
        if big.any():
            xb = -_map(math.log, (e - p[big]) / a)
            x[big] = xb
            acc[big] = ex[big] >= one_minus_a * _map(math.log, xb)
        small = ~big
        if small.any():
            xs = _map(math.exp, _map(math.log, p[small]) / a)
            x[small] = xs
            acc[small] = ex[small] >= xs
        hits = np.flatnonzero(acc)[: k - done]
        if hits.shape[0] == 0:  # no acceptance in this block: one scalar draw
            out[done] = _gs(stream, a)
            done += 1
            continue
        m = hits.shape[0]
        out[done : done + m] = x[hits]
        done += m
        last = int(pos[hits[-1]])
        stream.advance(last + int(try_used[last]))
    return out


def rgamma_same_shape(stream: "WordStream", a: float, k: int) -> Tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """``k`` unscaled draws for one finite shape ``a > 0``: ``(value, late)``.

    The draw scaled by ``scale`` is ``scale * value``, except where ``late``,
    where it is ``(scale * value) * value``.
    """
    if k < VECTOR_MIN:
        value = np.empty(k, dtype=np.float64)
        late = np.zeros(k, dtype=bool)
        for i in range(k):
            if a < 1.0:
                value[i] = _gs(stream, a)
            else:
                value[i], late[i] = _gd_unscaled(stream, a)
        return value, late
    if a < 1.0:
        return _gs_many(stream, a, k), np.zeros(k, dtype=bool)
    return _gd_many(stream, a, k)


def rgamma(
    stream: "WordStream", n: int, shape: NDArray[np.float64], scale: NDArray[np.float64]
) -> NDArray[np.float64]:
    """R's ``rgamma(n, shape, scale = scale)`` with recycled parameter vectors."""
    if n == 0:
        return np.empty(0, dtype=np.float64)
    if shape.shape[0] == 0 or scale.shape[0] == 0:
        return np.full(n, np.nan)
    A = recycle(shape, n)
    S = recycle(scale, n)
    draw = np.isfinite(A) & np.isfinite(S) & (A > 0.0) & (S > 0.0)
    out = np.where(
        np.isnan(A) | np.isnan(S),
        np.nan,
        np.where(
            (A <= 0.0) | (S <= 0.0),
            np.where((A == 0.0) | (S == 0.0), 0.0, np.nan),
            np.inf,
        ),
    )
    idx = np.flatnonzero(draw)
    if idx.shape[0] == 0:
        return out
    shapes = A[idx]
    if np.all(shapes == shapes[0]):
        value, late = rgamma_same_shape(stream, float(shapes[0]), idx.shape[0])
        Sd = S[idx]
        out[idx] = np.where(late, (Sd * value) * value, Sd * value)
        return out
    for i in idx.tolist():  # several shapes: R's order, one draw at a time
        out[i] = rgamma_one(stream, float(A[i]), float(S[i]))
    return out
