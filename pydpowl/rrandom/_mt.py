"""R's Mersenne-Twister state: ``set.seed`` seeding, ``.Random.seed`` and a word stream.

R's generator is textbook MT19937; only its seeding (an LCG scramble, see
:func:`seed_key`) and its state vector ``.Random.seed`` are R-specific. The raw
32-bit words come from :class:`numpy.random.MT19937` loaded with R's state
(``key`` = ``mt[0..623]``, ``pos`` = R's ``mti``), fetched in blocks through
``random_raw``. :class:`WordStream` keeps a cursor into the block, so the
exported state is exact: it is recomputed from the state saved at the start of
the block, advanced by the number of words actually consumed.
"""

from __future__ import annotations

import math
import numbers
import threading
from typing import Any, List, Optional, Tuple, TypedDict

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "KIND_CODE",
    "N_WORDS",
    "coerce_seed",
    "seed_key",
    "sgenrand_key",
    "state_to_r",
    "state_from_r",
    "WordStream",
]

#: R's literal for 2^-32 (it is exactly 2^-32).
TWO_M32 = 2.3283064365386963e-10
#: What ``unif_rand()`` returns for a zero word: half of R's rounded 1/(2^32 - 1).
UNIF_FIXUP = 0.5 * 2.328306437080797e-10

#: ``.Random.seed[1]`` for Mersenne-Twister (3) + 100 * Inversion (4) + 10000 * Rejection (1).
KIND_CODE = 10403
#: Number of MT19937 state words.
N_WORDS = 624

_MASK32 = 0xFFFFFFFF
_LCG_MULT = 69069
_SEED_MAX = 2147483647  # R's INT_MAX; INT_MIN is NA_integer_, so the range is symmetric


def coerce_seed(seed: Any) -> int:
    """Apply R's ``as.integer`` rules to a seed and check R's range.

    Parameters
    ----------
    seed : int or float
        Integers are taken as they are; finite doubles are truncated toward
        zero (``3.7 -> 3``, ``-3.7 -> -3``), as ``set.seed`` does.

    Returns
    -------
    int
        The seed, in ``[-2147483647, 2147483647]``.

    Raises
    ------
    TypeError
        If ``seed`` is not a real number (``bool``, ``None`` and strings are refused).
    ValueError
        If ``seed`` is NaN, infinite or outside ``[-2147483647, 2147483647]``
        after truncation (R turns those into ``NA`` and ``set.seed`` fails).
    """
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Real):
        raise TypeError(
            f"seed must be an integer or a real number (R's set.seed), "
            f"got {type(seed).__name__}."
        )
    if isinstance(seed, numbers.Integral):
        value = int(seed)
    else:
        x = float(seed)
        if math.isnan(x) or math.isinf(x):
            raise ValueError(
                f"seed must be finite and in [-{_SEED_MAX}, {_SEED_MAX}] "
                f"(R's set.seed), got seed={x!r}."
            )
        value = int(math.trunc(x))  # as.integer truncates toward zero
    if not -_SEED_MAX <= value <= _SEED_MAX:
        raise ValueError(
            f"seed must be in [-{_SEED_MAX}, {_SEED_MAX}] after truncation toward "
            f"zero (R's set.seed), got seed={seed!r}."
        )
    return value


def seed_key(seed: int) -> NDArray[np.uint32]:
    """The 624 MT words that R's ``set.seed(seed)`` stores (``mti`` becomes 624).

    The seed, read as an unsigned 32-bit word, is scrambled by 50 steps of the
    LCG ``x <- 69069 x + 1 (mod 2^32)``; the next 625 iterates fill R's seed
    slots, of which slot 0 (``mti``) is then overwritten with 624.

    Parameters
    ----------
    seed : int
        A seed already checked by :func:`coerce_seed`.

    Returns
    -------
    numpy.ndarray of uint32, shape (624,)
    """
    x = int(seed) & _MASK32
    for _ in range(50):
        x = (_LCG_MULT * x + 1) & _MASK32
    slots: List[int] = []
    for _ in range(N_WORDS + 1):
        x = (_LCG_MULT * x + 1) & _MASK32
        slots.append(x)
    return np.array(slots[1:], dtype=np.uint32)


def sgenrand_key(seed: int = 4357) -> NDArray[np.uint32]:
    """Words of the classic ``sgenrand`` initialisation R runs when ``mti == 625``.

    Each word takes the high 16 bits of two successive LCG iterates.
    """
    x = int(seed) & _MASK32
    words = []
    for _ in range(N_WORDS):
        hi = x & 0xFFFF0000
        x = (_LCG_MULT * x + 1) & _MASK32
        lo = (x & 0xFFFF0000) >> 16
        x = (_LCG_MULT * x + 1) & _MASK32
        words.append(hi | lo)
    return np.array(words, dtype=np.uint32)


def state_to_r(key: NDArray[np.uint32], pos: int) -> NDArray[np.int32]:
    """R's ``.Random.seed`` (626 int32) for an MT key and position."""
    out = np.empty(N_WORDS + 2, dtype=np.int32)
    out[0] = KIND_CODE
    out[1] = pos
    out[2:] = np.asarray(key, dtype=np.uint32).view(np.int32)
    return out


def state_from_r(vec: ArrayLike) -> Tuple[NDArray[np.uint32], int, NDArray[np.int32]]:
    """Read an R ``.Random.seed`` vector as R does when it loads one.

    Parameters
    ----------
    vec : array-like of int, length 626
        ``c(10403L, mti, mt[0..623])``; the words may be signed (as R shows
        them) or unsigned 32-bit values.

    Returns
    -------
    key : numpy.ndarray of uint32, shape (624,)
        The words numpy's MT19937 must hold so that its next output is R's.
    pos : int
        numpy's position, in ``[0, 624]``.
    r_vec : numpy.ndarray of int32, shape (626,)
        The vector as R holds it after its load-time fix-ups (``mti <= 0``
        becomes 624); this is what R would show before the next draw.

    Raises
    ------
    ValueError
        If the length is not 626, the kind code is not 10403 (Mersenne-Twister,
        Inversion, Rejection: R >= 3.6.0 defaults), a value does not fit in
        32 bits, or all 624 words are zero (R would then reseed from the clock,
        which cannot be reproduced).
    """
    if isinstance(vec, (str, bytes)):
        raise TypeError("state must be an integer vector of length 626, got a string.")
    arr = np.asarray(vec)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.trunc(arr)):
            raise ValueError("state must hold whole numbers only (R's .Random.seed is integer).")
    elif arr.dtype.kind not in "iu":
        raise TypeError(f"state must be an integer vector, got dtype {arr.dtype}.")
    if arr.ndim != 1 or arr.shape[0] != N_WORDS + 2:
        raise ValueError(
            f"state must be a vector of length {N_WORDS + 2} (R's .Random.seed for "
            f"Mersenne-Twister), got shape {arr.shape}."
        )
    kind, mti = int(arr[0]), int(arr[1])
    if kind != KIND_CODE:
        raise ValueError(
            f"state[0] (the RNG kind code) must be {KIND_CODE} (Mersenne-Twister, "
            f"Inversion, Rejection), got {kind}."
        )
    if not -(2**31) <= mti < 2**31:
        raise ValueError(f"state[1] (mti) must fit in int32, got {mti}.")
    words = arr[2:]
    bad = np.flatnonzero((words < -(2**31)) | (words >= 2**32))
    if bad.size:
        raise ValueError(
            f"state words must be 32-bit integers; {bad.size} do not (first at {int(bad[0]) + 2})."
        )
    key = (words.astype(np.int64) & _MASK32).astype(np.uint32)
    if not key.any():
        raise ValueError(
            "state words are all zero; R would reseed from the clock, which cannot "
            "be reproduced."
        )
    if mti <= 0:  # R's FixupSeeds on load
        mti = N_WORDS
    r_vec = state_to_r(key, mti)
    if mti == N_WORDS + 1:  # R runs sgenrand(4357) before its next twist
        key = sgenrand_key(4357)
    pos = min(mti, N_WORDS)  # any mti >= 624 twists before the next output
    return key, pos, r_vec


_SCRATCH = threading.local()


def _scratch_generator() -> np.random.MT19937:
    """This thread's work generator for recomputing a state (its state is always replaced before use; made once,
    as seeding a new MT19937 costs about 50 microseconds, more than the work itself)."""
    bitgen = getattr(_SCRATCH, "bitgen", None)
    if bitgen is None:
        bitgen = _SCRATCH.bitgen = np.random.MT19937(0)
    return bitgen


class _KeyPos(TypedDict):
    key: NDArray[np.uint32]
    pos: int


class _MTState(TypedDict):
    """``numpy.random.MT19937.state`` (the same keys as numpy's own typed dict)."""

    bit_generator: str
    state: _KeyPos


def _load(bitgen: np.random.MT19937, state: _MTState) -> None:
    bitgen.state = state


def _mt_state(key: NDArray[np.uint32], pos: int) -> _MTState:
    return {
        "bit_generator": "MT19937",
        "state": {"key": np.array(key, dtype=np.uint32), "pos": int(pos)},
    }


class WordStream:
    """R's stream of tempered 32-bit MT words, fetched in blocks, read with a cursor.

    Parameters
    ----------
    key : numpy.ndarray of uint32, shape (624,)
        MT state words ``mt[0..623]``.
    pos : int
        Index of the next word to temper, in ``[0, 624]`` (624 = twist first).

    Notes
    -----
    Words are fetched from :class:`numpy.random.MT19937` with ``random_raw`` in
    blocks of at least :attr:`BLOCK`. ``_base`` is the generator state at the
    first word of the current block and ``_cur`` the number of its words
    consumed, so the state after exactly the consumed words can always be
    recomputed. Unconsumed words are never dropped when a new block is fetched.
    """

    #: Minimum number of words fetched at once.
    BLOCK = 4096

    def __init__(self, key: NDArray[np.uint32], pos: int) -> None:
        self._bitgen = np.random.MT19937(0)  # its own seed is irrelevant: the state is replaced
        self.reset(key, pos)

    def reset(self, key: NDArray[np.uint32], pos: int) -> None:
        """Load an MT state and forget the buffered words."""
        _load(self._bitgen, _mt_state(key, pos))
        self._base: _MTState = self._bitgen.state
        self._buf: NDArray[np.uint64] = np.empty(0, dtype=np.uint64)
        self._lst: Optional[List[int]] = None
        self._cur = 0
        self._offset = 0  # words consumed before the current block

    # -- bookkeeping ----------------------------------------------------------------
    @property
    def words_used(self) -> int:
        """Number of 32-bit words consumed since the last :meth:`reset`."""
        return self._offset + self._cur

    def state(self) -> Tuple[NDArray[np.uint32], int]:
        """The MT ``(key, pos)`` after exactly the consumed words."""
        if self._cur == self._buf.shape[0]:
            st = self._bitgen.state  # the generator stands right after the block
        else:
            st = self._state_at(self._cur)
        return np.array(st["state"]["key"], dtype=np.uint32), int(st["state"]["pos"])

    def _state_at(self, k: int) -> _MTState:
        tmp = _scratch_generator()
        tmp.state = self._base
        while k > 0:  # advance in bounded chunks to bound memory
            step = min(k, 1 << 20)
            tmp.random_raw(step)
            k -= step
        return tmp.state

    def _refill(self, need: int) -> None:
        """Make at least ``need`` unconsumed words available after the cursor."""
        left = self._buf[self._cur :]
        if left.shape[0]:
            self._base = self._state_at(self._cur)
        else:
            self._base = self._bitgen.state
        self._offset += self._cur
        fetch = max(need - left.shape[0], self.BLOCK)
        new = self._bitgen.random_raw(fetch)
        self._buf = np.concatenate((left, new)) if left.shape[0] else new
        self._cur = 0
        self._lst = None

    # -- vector access --------------------------------------------------------------
    def peek(self, k: int) -> NDArray[np.uint64]:
        """The next ``k`` words, without consuming them (read-only view)."""
        if self._buf.shape[0] - self._cur < k:
            self._refill(k)
        view = self._buf[self._cur : self._cur + k]
        view.flags.writeable = False
        return view

    def advance(self, k: int) -> None:
        """Consume ``k`` words."""
        if k < 0:
            raise ValueError(f"k must be >= 0, got k={k}.")
        if self._buf.shape[0] - self._cur < k:
            self._refill(k)
        self._cur += k

    def take(self, k: int) -> NDArray[np.uint64]:
        """Consume and return the next ``k`` words."""
        out = self.peek(k)
        self._cur += k
        return out

    # -- scalar access (hot loops) ------------------------------------------------
    def word(self) -> int:
        """Consume one word and return it as a Python int."""
        c = self._cur
        if c >= self._buf.shape[0]:
            self._refill(1)
            c = 0
        lst = self._lst
        if lst is None:
            lst = self._lst = self._buf.tolist()
        self._cur = c + 1
        return lst[c]

    def unif(self) -> float:
        """R's ``unif_rand()``: one word times 2^-32, with R's fix-up for 0."""
        c = self._cur
        if c >= self._buf.shape[0]:
            self._refill(1)
            c = 0
        lst = self._lst
        if lst is None:
            lst = self._lst = self._buf.tolist()
        self._cur = c + 1
        y = lst[c]
        return y * TWO_M32 if y else UNIF_FIXUP
