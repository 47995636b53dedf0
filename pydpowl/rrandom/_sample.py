"""R's ``sample.int`` with ``sample.kind = "Rejection"`` (R >= 3.6.0).

* ``R_unif_index(n)``: ``bits = ceil(log2(n))``; draw ``bits // 16 + 1`` words,
  append their top 16 bits, keep the low ``bits`` bits, and retry while the
  value is ``>= n``. ``n = 1`` still consumes a word per call.
* Uniform sampling with replacement is vectorised exactly (attempts are
  fixed-size groups of words); without replacement it is a partial
  Fisher-Yates shuffle; the hash variant is used for ``n > 1e7`` as R does.
* With ``prob``: R's normalisation, then inversion on probabilities sorted by
  R's ``revsort`` (heapsort; ties are not stable, so it is reproduced exactly),
  Walker's alias method when more than 200 entries have ``n p > 0.1``, or
  sequential removal without replacement.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Dict, List, Optional, Union

import numpy as np
from numpy.typing import NDArray

from ._uniform import words_to_unif

if TYPE_CHECKING:  # pragma: no cover
    from ._mt import WordStream

__all__ = [
    "unif_index",
    "unif_index_many",
    "revsort",
    "fixup_prob",
    "sample_int",
]

_INT_MAX = 2147483647
_N_MAX = 4.5e15  # R refuses larger populations
_HASH_TRIES = 100


def _bits(dn: float) -> int:
    return int(math.ceil(math.log2(dn)))


def unif_index(stream: "WordStream", dn: float) -> float:
    """R's ``R_unif_index(dn)``: a uniform integer in ``[0, dn)``, as a float."""
    if dn <= 0:
        return 0.0
    bits = _bits(dn)
    chunks = bits // 16 + 1
    mask = (1 << bits) - 1
    word = stream.word
    while True:
        v = 0
        for _ in range(chunks):
            v = (v << 16) | (word() >> 16)  # 65536 * v + floor(65536 * unif_rand())
        v &= mask
        if v < dn:
            return float(v)


def unif_index_many(stream: "WordStream", dn: float, k: int) -> NDArray[np.float64]:
    """``k`` successive ``R_unif_index(dn)`` values (vectorised, exact)."""
    out = np.empty(k, dtype=np.float64)
    if k == 0:
        return out
    if dn <= 0:
        out[:] = 0.0  # R returns 0 without drawing
        return out
    bits = _bits(dn)
    chunks = bits // 16 + 1
    mask = np.uint64((1 << bits) - 1)
    accept_rate = dn / float(1 << bits)
    done = 0
    while done < k:
        need = k - done
        m = int(need / accept_rate * 1.05) + 16
        words = stream.peek(m * chunks).reshape(m, chunks) >> np.uint64(16)
        v = words[:, 0].copy()
        for j in range(1, chunks):
            v = v * np.uint64(65536) + words[:, j]  # wraps mod 2^64; only low bits are kept
        vf = (v & mask).astype(np.float64)  # exact: bits <= 53
        ok = np.flatnonzero(vf < dn)[:need]
        got = ok.shape[0]
        out[done : done + got] = vf[ok]
        done += got
        stream.advance((int(ok[-1]) + 1) * chunks if done == k else m * chunks)
    return out


def revsort(keys: List[float], ids: List[int]) -> None:
    """Sort ``keys`` into descending order in place, moving ``ids`` along (R's heapsort)."""
    n = len(keys)
    if n <= 1:
        return
    a = [0.0] + keys  # 1-based, as the algorithm is written
    ib = [0] + ids
    l_ = (n >> 1) + 1
    ir = n
    while True:
        if l_ > 1:
            l_ -= 1
            ra = a[l_]
            ii = ib[l_]
        else:
            ra = a[ir]
            ii = ib[ir]
            a[ir] = a[1]
            ib[ir] = ib[1]
            ir -= 1
            if ir == 1:
                a[1] = ra
                ib[1] = ii
                break
        i = l_
        j = l_ << 1
        while j <= ir:
            if j < ir and a[j] > a[j + 1]:
                j += 1
            if ra > a[j]:
                a[i] = a[j]
                ib[i] = ib[j]
                i = j
                j += j
            else:
                j = ir + 1
        a[i] = ra
        ib[i] = ii
    keys[:] = a[1:]
    ids[:] = ib[1:]


def fixup_prob(prob: NDArray[np.float64], size: int, replace: bool) -> NDArray[np.float64]:
    """R's checks and normalisation of ``prob`` (sum of the positive entries, in order)."""
    p = np.array(prob, dtype=np.float64)
    if not np.all(np.isfinite(p)):
        raise ValueError(
            f"prob must be finite; it has {int((~np.isfinite(p)).sum())} NaN or infinite "
            f"entries of {p.shape[0]} (R: 'NA in probability vector')."
        )
    if np.any(p < 0.0):
        raise ValueError(
            f"prob must be >= 0; {int((p < 0.0).sum())} of {p.shape[0]} entries are negative."
        )
    positive = p[p > 0.0]
    npos = positive.shape[0]
    if npos == 0 or (not replace and size > npos):
        raise ValueError(
            f"too few positive probabilities: prob has {npos} positive entries, and "
            + ("at least 1 is needed." if npos == 0 else f"replace=False needs size={size}.")
        )
    total = float(np.cumsum(positive)[-1])  # sequential, left-to-right, as R sums
    return p / total


def _prob_replace(stream: "WordStream", p: NDArray[np.float64], k: int) -> NDArray[np.int64]:
    """Inversion on revsort-ed probabilities: one uniform per draw."""
    n = p.shape[0]
    keys = p.tolist()
    perm = list(range(1, n + 1))
    revsort(keys, perm)
    cum = np.cumsum(np.array(keys))  # p[i] += p[i-1], in order
    u = words_to_unif(stream.take(k))
    j = np.searchsorted(cum[: n - 1], u, side="left")  # first j with u <= P[j], else n-1
    return np.array(perm, dtype=np.int64)[j]


def _walker(stream: "WordStream", p: NDArray[np.float64], k: int) -> NDArray[np.int64]:
    """Walker's alias method on the unsorted probabilities."""
    n = p.shape[0]
    q = (p * n).tolist()
    hl = [0] * n
    h = -1
    lo = n
    for i in range(n):
        if q[i] < 1.0:
            h += 1
            hl[h] = i
        else:
            lo -= 1
            hl[lo] = i
    alias = list(range(n))  # R leaves unassigned slots uninitialised; see module notes
    if h >= 0 and lo < n:
        for kk in range(n - 1):
            i = hl[kk]
            j = hl[lo]
            alias[i] = j
            q[j] += q[i] - 1.0
            if q[j] < 1.0:
                lo += 1
            if lo >= n:
                break
    q = [qi + i for i, qi in enumerate(q)]
    out = np.empty(k, dtype=np.int64)
    dn = float(n)
    for d in range(k):
        kk = int(unif_index(stream, dn))
        ru = kk + stream.unif()
        out[d] = kk + 1 if ru < q[kk] else alias[kk] + 1
    return out


def _prob_noreplace(stream: "WordStream", p: NDArray[np.float64], k: int) -> NDArray[np.int64]:
    """Sequential removal on revsort-ed probabilities: one uniform per draw."""
    n = p.shape[0]
    keys = p.tolist()
    perm = list(range(1, n + 1))
    revsort(keys, perm)
    pk = np.array(keys)
    pm = np.array(perm, dtype=np.int64)
    out = np.empty(k, dtype=np.int64)
    total = 1.0
    for i in range(k):
        n1 = n - 1 - i
        rt = total * stream.unif()
        mass = np.cumsum(pk[:n1])  # mass += p[j], in order
        j = int(np.searchsorted(mass, rt, side="left"))  # first j with rt <= mass, else n1
        out[i] = pm[j]
        total -= pk[j]
        pk = np.delete(pk, j)
        pm = np.delete(pm, j)
    return out


def _fisher_yates(stream: "WordStream", n: int, k: int) -> NDArray[np.int64]:
    pool: Union[List[int], Dict[int, int]]
    out = np.empty(k, dtype=np.int64)
    if n <= 1_000_000:
        pool = list(range(n))
        for i in range(k):
            j = int(unif_index(stream, float(n)))
            out[i] = pool[j] + 1
            n -= 1
            pool[j] = pool[n]
    else:  # the same algorithm on a sparse view of [0, n)
        pool = {}
        for i in range(k):
            j = int(unif_index(stream, float(n)))
            out[i] = pool.get(j, j) + 1
            n -= 1
            pool[j] = pool.get(n, n)
    return out


def _hash_sample(stream: "WordStream", dn: float, k: int) -> NDArray[np.int64]:
    """R's ``sample2``: redraw duplicates (at most 100 tries per value, as R)."""
    out = np.empty(k, dtype=np.int64)
    seen = set()
    for i in range(k):
        for _ in range(_HASH_TRIES):
            v = int(unif_index(stream, dn)) + 1
            if v not in seen:
                break
        out[i] = v
        seen.add(v)
    return out


def _check_size(size: int, n: float, replace: bool) -> None:
    if not replace and size > n:
        raise ValueError(
            f"size must be <= the population size n={n!r} when replace=False, "
            f"got size={size}."
        )


def sample_int(
    stream: "WordStream",
    n: float,
    size: int,
    replace: bool,
    prob: Optional[NDArray[np.float64]],
) -> NDArray[np.int64]:
    """R's ``sample.int(n, size, replace, prob)``: 1-based indices as int64.

    Parameters
    ----------
    stream : WordStream
    n : float
        Population size (R truncates it where it needs an integer).
    size : int
        Number of draws, ``>= 0``.
    replace : bool
    prob : numpy.ndarray or None
        Weights of length ``trunc(n)``, normalised as R does.

    Raises
    ------
    ValueError
        With R's conditions: invalid ``n``, ``size`` larger than the
        population without replacement, wrong ``prob`` length or values.
    """
    if not math.isfinite(n) or n < 0 or n > _N_MAX or (size > 0 and n == 0):
        raise ValueError(
            f"n must be finite and in [0, 4.5e15] (and > 0 when size > 0), got n={n!r}."
        )
    use_hash = n > 1e7 and not replace and prob is None and size <= n / 2
    if use_hash:
        return _hash_sample(stream, n, size)
    if prob is not None:
        if n > _INT_MAX:
            raise ValueError(f"n must be <= {_INT_MAX} when prob is given, got n={n!r}.")
        ni = int(n)
        _check_size(size, ni, replace)
        if prob.shape[0] != ni:
            raise ValueError(
                f"prob must have one entry per population element ({ni}), "
                f"got {prob.shape[0]}."
            )
        p = fixup_prob(prob, size, replace)
        if not replace:
            return _prob_noreplace(stream, p, size)
        nc = int(np.count_nonzero(ni * p > 0.1))
        if nc > 200:
            return _walker(stream, p, size)
        return _prob_replace(stream, p, size)
    _check_size(size, n, replace)
    if n > _INT_MAX or size > _INT_MAX:
        if replace:
            return unif_index_many(stream, n, size).astype(np.int64) + 1
        return _fisher_yates(stream, int(n), size)
    ni = int(n)
    if replace or size < 2:
        return unif_index_many(stream, float(ni), size).astype(np.int64) + 1
    return _fisher_yates(stream, ni, size)
