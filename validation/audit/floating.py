"""Bit-level audit: do the least significant bits of a release reveal the dataset?

The mechanism ``theta_hat + b`` is epsilon-DP over the reals. A release computed
in double precision is ``fl(theta_hat + b)``; when ``b`` nearly cancels a
coordinate of ``theta_hat`` the sum is exact (Sterbenz) and keeps the
floating-point grid of ``theta_hat``, so the number of trailing zero bits of a
small release coordinate tells which binade ``theta_hat`` lies in. Neighbouring
datasets whose minimisers lie in different binades are then distinguishable far
beyond epsilon (Mironov, "On significance of the least significant bits for
differential privacy", CCS 2012). This affects every floating-point
implementation of output perturbation, DPpack included.

The test here looks at one coordinate ``k`` at a time and at regions
``{exponent(z_k) = e and lowest set bit of z_k <= 2^b}`` (or ``>= 2^b``), picks
the best on the selection half and bounds epsilon on the evaluation half
exactly as :mod:`validation.audit.blackbox` does. :func:`round_releases`
post-processes releases onto a coarse grid, which removes the signal.
"""

from __future__ import annotations

import math
from typing import List, Optional, Tuple

import numpy as np
from numpy.typing import NDArray

from .blackbox import _bound_from_counts, _bounds_vectorised

__all__ = ["lowest_set_bit", "lsb_lower_bound", "round_releases", "LsbBound"]


def lowest_set_bit(z: NDArray[np.float64]) -> NDArray[np.int64]:
    """Exponent ``b`` of the lowest set bit of each float (``z`` a multiple of ``2^b`` but not ``2^(b-1)``).

    Zero maps to a large sentinel (``2**30``).
    """
    z = np.asarray(z, dtype=np.float64)
    mant, exp = np.frexp(np.abs(z))  # |z| = mant * 2^exp, mant in [0.5, 1)
    m = (mant * 2.0 ** 53).astype(np.int64)  # exact: a 53-bit integer
    safe = np.where(m == 0, 1, m)
    tz = np.log2(safe & -safe).astype(np.int64)  # trailing zeros
    return np.where(m == 0, 2 ** 30, exp.astype(np.int64) - 53 + tz)


class LsbBound:
    """Result of the bit-level test (same fields as an EpsilonBound, plus the region)."""

    def __init__(self, epsilon_lb: float, q_count: int, p_count: int, n_eval: int, region: str) -> None:
        self.epsilon_lb = epsilon_lb
        self.q_count = q_count
        self.p_count = p_count
        self.n_eval = n_eval
        self.region = region

    def as_dict(self) -> dict:
        return {"epsilon_lb": self.epsilon_lb, "q_count": self.q_count, "p_count": self.p_count,
                "n_eval": self.n_eval, "region": self.region}


def _features(Z: NDArray[np.float64]) -> Tuple[NDArray[np.int64], NDArray[np.int64]]:
    return np.frexp(np.abs(Z))[1].astype(np.int64), lowest_set_bit(Z)


def _regions(E0, L0, E1, L1, min_count: int) -> List[Tuple[int, int, int, bool]]:
    """Candidate (coordinate, exponent, bit, at_most) regions with enough releases in the binade."""
    out = []
    for k in range(E0.shape[1]):
        exps, counts = np.unique(np.concatenate([E0[:, k], E1[:, k]]), return_counts=True)
        for e in exps[counts >= min_count]:
            bits = np.unique(np.concatenate([L0[E0[:, k] == e, k], L1[E1[:, k] == e, k]]))
            for b in bits:
                out.append((k, int(e), int(b), True))
                out.append((k, int(e), int(b), False))
    return out


def _in_region(E, L, region) -> NDArray[np.bool_]:
    k, e, b, at_most = region
    return (E[:, k] == e) & ((L[:, k] <= b) if at_most else (L[:, k] >= b))


def lsb_lower_bound(samples0: NDArray[np.float64], samples1: NDArray[np.float64], *,
                    alpha: float = 0.05) -> LsbBound:
    """Select a bit-level region on the first halves, bound epsilon on the second halves."""
    samples0 = np.asarray(samples0, dtype=np.float64)
    samples1 = np.asarray(samples1, dtype=np.float64)
    m = min(samples0.shape[0], samples1.shape[0]) // 2
    E0, L0 = _features(samples0[:m])
    E1, L1 = _features(samples1[:m])
    best: Tuple[float, Optional[Tuple[int, int, int, bool]], int] = (-math.inf, None, 0)
    for region in _regions(E0, L0, E1, L1, min_count=max(10, m // 200)):
        k0, k1 = int(_in_region(E0, L0, region).sum()), int(_in_region(E1, L1, region).sum())
        for favours, (kq, kp) in enumerate(((k0, k1), (k1, k0))):
            if kq <= kp:
                continue
            lb = float(_bounds_vectorised(np.array([kq]), np.array([kp]), m, alpha)[0])
            if lb > best[0]:
                best = (lb, region, favours)
    if best[1] is None:
        return LsbBound(0.0, 0, 0, m, "none (no region separates the samples)")
    region, favours = best[1], best[2]
    E0, L0 = _features(samples0[m:2 * m])
    E1, L1 = _features(samples1[m:2 * m])
    k0, k1 = int(_in_region(E0, L0, region).sum()), int(_in_region(E1, L1, region).sum())
    kq, kp = (k0, k1) if favours == 0 else (k1, k0)
    lb = _bound_from_counts(kq, kp, m, alpha)[0]
    k, e, b, at_most = region
    text = (f"coef {k}: abs(z) in [2^{e - 1}, 2^{e}) and lowest set bit {'<=' if at_most else '>='} 2^{b}, "
            f"favours D{'' if favours == 0 else chr(39)}")
    return LsbBound(max(0.0, lb), kq, kp, m, text)


def round_releases(Z: NDArray[np.float64], grid: float) -> NDArray[np.float64]:
    """Post-process releases onto multiples of ``grid`` (free in privacy terms over the reals)."""
    return np.round(np.asarray(Z, dtype=np.float64) / grid) * grid
