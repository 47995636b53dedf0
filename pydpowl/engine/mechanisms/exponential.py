"""The exponential mechanism: select index k with probability proportional to ``exp(epsilon s_k / (2 Delta_s))``.

Used by private tuning (:mod:`pydpowl.privacy.tuning`), private gamma
selection (:mod:`pydpowl.privacy.selection`) and DPpack's ``tune_*`` replay
(:mod:`pydpowl.interop.dppack`).

Two samplers, chosen by the stream:

* **Exact (default: a numpy Generator, from OS entropy unless seeded).** The
  output law is exactly the exponential mechanism's for the given scores. With
  ``x_k = epsilon (max_j s_j - s_k) / (2 Delta_s)`` computed as an exact
  rational (every double is one), the sampler proposes k uniformly and accepts
  it with probability exactly ``exp(-x_k)``, repeating until it accepts; the
  accepted index has probability ``exp(-x_k) / sum_j exp(-x_j)`` (rejection
  sampling). ``Bernoulli(exp(-x))`` is sampled exactly as Canonne, Kamath &
  Steinke (2020, Algorithm 1) do: for ``x`` in [0, 1], draw ``A_i ~
  Bernoulli(x / i)`` for ``i = 1, 2, ...`` until one fails and return whether
  the number of draws is odd (``P = sum_k (-x)^k / k! = exp(-x)``); for ``x >
  1``, ``floor(x)`` independent ``Bernoulli(exp(-1))`` and one
  ``Bernoulli(exp(-(x - floor x)))`` must all succeed. ``Bernoulli(a/b)`` for
  a rational is decided by comparing fair bits with the binary expansion of
  ``a/b`` until they differ, and the proposal is ``ceil(log2 K)`` fair bits
  rejected when ``>= K``; fair bits come from the generator's raw 64-bit words.
  No floating-point number is rounded anywhere, so the mechanism is
  ``epsilon``-DP with ``delta = 0`` (given scores of sensitivity ``Delta_s``).
  It runs a data-dependent number of rounds (expected at most K): its running
  time is not private.
* **DPpack's inversion (an R-compatible stream, replay only).** DPpack's
  ``ExponentialMechanism`` in its arithmetic: ``exp(eps * (s - max s) / (2
  sens))`` normalised, cumulated (R's sums in long double) and
  ``which.max(runif(1) <= cumsum(p))``. ``runif`` takes 2^32 equally likely
  values, so each probability is a multiple of 2^-32 up to rounding: a
  candidate can have probability 0 on one dataset and 2^-32 on a neighbour (an
  unbounded privacy loss). The replay is ``(epsilon, delta)``-DP with
  :func:`exponential_mechanism_delta` (``replay=True``), which its callers
  state (:class:`pydpowl.privacy.tuning.ModelSelection.selection_delta`).

The derivations are in docs/privacy_audit.md (section "The exponential mechanism").
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike

from ..._validation import check_int, check_positive
from ._common import is_r_stream, r_cumsum, r_sum
from .rounding import coupling_delta

__all__ = ["exponential_mechanism", "exponential_mechanism_delta"]

#: values R's ``runif`` takes with Mersenne-Twister (``fixup(y 2^-32)``, y a 32-bit word): the inversion's grid
R_UNIFORM_VALUES = 2 ** 32
#: generous bound, in units of 2^-52, on each computed cumulative probability's error per candidate
#: (scores' differences, the product and quotient, exp within 4 ulps, sums in long double; docs/privacy_audit.md)
_FP_ULPS_PER_CANDIDATE = 10


class FairBits:
    """Fair bits drawn 64 at a time from a numpy Generator's raw words (exact: every bit is a fair coin)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self._word = 0
        self._left = 0

    def bit(self) -> int:
        """One fair bit."""
        if self._left == 0:
            self._word = int(self._rng.integers(0, 2 ** 64, dtype=np.uint64))
            self._left = 64
        self._left -= 1
        out = self._word & 1
        self._word >>= 1
        return out

    def below(self, k: int) -> int:
        """A uniform integer in ``[0, k)``: ``ceil(log2 k)`` bits, rejected when ``>= k``."""
        m = (k - 1).bit_length()
        while True:
            v = 0
            for _ in range(m):
                v = (v << 1) | self.bit()
            if v < k:
                return v


def _bernoulli_rational(p: Fraction, bits: Any) -> bool:
    """True with probability exactly ``p`` in [0, 1]: fair bits against the binary expansion of ``p``.

    ``U = 0.b1 b2 ...`` (fair bits) is below ``p`` exactly when, at the first
    bit where they differ, ``U`` has 0 and ``p`` has 1; two random bits are
    needed on average.
    """
    a, b = p.numerator, p.denominator
    if a <= 0:
        return False
    if a >= b:
        return True
    while True:
        a *= 2
        digit = 1 if a >= b else 0
        if digit:
            a -= b
        u = bits.bit()
        if u != digit:
            return u < digit


def _bernoulli_exp_minus_unit(x: Fraction, bits: Any) -> bool:
    """``Bernoulli(exp(-x))`` for ``x`` in [0, 1] (Canonne, Kamath & Steinke 2020, Algorithm 1)."""
    k = 1
    while _bernoulli_rational(x / k, bits):
        k += 1
    return k % 2 == 1


def bernoulli_exp_minus(x: Fraction, bits: Any) -> bool:
    """True with probability exactly ``exp(-x)`` for a rational ``x >= 0``."""
    if x < 0:
        raise ValueError(f"x must be >= 0, got {x!r}.")
    whole = x.numerator // x.denominator
    one = Fraction(1)
    for _ in range(whole):
        if not _bernoulli_exp_minus_unit(one, bits):
            return False
    return _bernoulli_exp_minus_unit(x - whole, bits)


def sample_exact_index(exponents: Sequence[Fraction], bits: Any) -> int:
    """Index k with probability exactly ``exp(-x_k) / sum_j exp(-x_j)`` (rational ``x_k >= 0``, one of them 0).

    Rejection from the uniform proposal: accept k with probability ``exp(-x_k)``.
    """
    K = len(exponents)
    while True:
        k = bits.below(K)
        if bernoulli_exp_minus(exponents[k], bits):
            return k


def _check_scores(scores: ArrayLike) -> np.ndarray:
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1 or s.size == 0 or not np.all(np.isfinite(s)):
        raise ValueError("scores must be a non-empty 1-D array of finite numbers.")
    return s


def exponential_mechanism(scores: ArrayLike, *, epsilon: float, sensitivity: float, rng: Any) -> int:
    """Index k drawn with probability proportional to ``exp(epsilon * s_k / (2 * sensitivity))``.

    With a numpy Generator the law is exactly that (the exact sampler of the
    module docstring: ``epsilon``-DP). With an R-compatible stream
    (:class:`pydpowl.RRandom`, replay of DPpack only, an opt-in that warns
    where it is chosen) it is DPpack's ``ExponentialMechanism`` draw, by
    inversion of one ``runif``: then it is ``(epsilon, delta)``-DP with
    ``delta =`` :func:`exponential_mechanism_delta` ``(replay=True)``, which
    the caller accounts (:class:`pydpowl.privacy.tuning.ModelSelection`'s
    ``selection_delta``).

    Parameters
    ----------
    scores : array-like of float
        Utilities (larger is better), finite.
    epsilon : float
        Budget in (0, inf).
    sensitivity : float
        Largest change of any score when one record is replaced, in (0, inf).
    rng : numpy.random.Generator or RRandom

    Returns
    -------
    int
        The selected index (0-based).
    """
    eps = check_positive("epsilon", epsilon)
    sens = check_positive("sensitivity", sensitivity)
    s = _check_scores(scores)
    if is_r_stream(rng):
        return _dppack_inversion(s, eps, sens, rng)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator or an R-compatible stream, got {type(rng).__name__}.")
    top = Fraction(float(s.max()))
    scale = Fraction(eps) / (2 * Fraction(sens))
    exponents = [scale * (top - Fraction(float(v))) for v in s]
    return sample_exact_index(exponents, FairBits(rng))


def _dppack_inversion(s: np.ndarray, eps: float, sens: float, rng: Any) -> int:
    """DPpack's ``ExponentialMechanism`` in its arithmetic: ``which.max(runif(1) <= cumsum(p))``."""
    p = np.exp(eps * (s - s.max()) / (2.0 * sens))
    total = r_sum(p)
    cumulative = r_cumsum(p / total)
    u = float(rng.uniform())
    hits = np.flatnonzero(u <= cumulative)
    return int(hits[0]) if hits.size else 0  # R's which.max of all FALSE is the first index


def exponential_mechanism_delta(*, epsilon: float, n_candidates: int, replay: bool = False) -> float:
    """The ``delta`` of :func:`exponential_mechanism` with ``n_candidates`` candidates.

    ``0`` for the exact sampler (a numpy Generator). For DPpack's inversion
    (``replay=True``, an R stream): every candidate's probability ``q_k`` is
    within ``2^-32 + 2 eta`` of the exact ``p_k``, and the tail above the last
    cumulative sum (at most ``2^-32 + eta``) goes to the first candidate, with
    ``eta = (10 K + 2) 2^-52`` bounding each computed cumulative sum's error;
    so the total variation ``TV = (1/2) sum_k |q_k - p_k|`` is at most
    ``((K + 1) 2^-32 + (2K + 1) eta) / 2`` on every dataset and
    ``q(S|D) <= p(S|D) + TV <= e^eps p(S|D') + TV <= e^eps q(S|D') + (1 + e^eps) TV``.

    Parameters
    ----------
    epsilon : float
        Budget of the mechanism, in (0, inf).
    n_candidates : int
        ``K``, at least 1 (public).
    replay : bool, default=False
        True for the inversion of DPpack's draw (an R-compatible stream).

    Returns
    -------
    float
        ``(1 + e^epsilon) TV`` for the replay, 0 otherwise.
    """
    eps = check_positive("epsilon", epsilon)
    K = check_int("n_candidates", n_candidates, minimum=1)
    if not replay:
        return 0.0
    eta = (_FP_ULPS_PER_CANDIDATE * K + 2) * 2.0 ** -52
    tv = 0.5 * ((K + 1) / R_UNIFORM_VALUES + (2 * K + 1) * eta)
    return coupling_delta(eps, tv)
