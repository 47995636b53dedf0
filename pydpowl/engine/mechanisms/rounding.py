"""Floating-point-safe releases: the release grid, the exact-sum rounding and its ``delta``.

Every release of the package (output and objective perturbation, the Laplace
and Gaussian releases) is made floating-point safe here: the exact real sum
``theta_hat + b`` is rounded to a power-of-two grid below the noise scale
(:func:`release_grid`), without the data-dependent rounding of the
floating-point sum, whose last bits otherwise reveal the minimiser (Mironov,
CCS 2012). :func:`floating_point_delta` gives the resulting ``delta`` under
the sampler model; the analysis is in docs/privacy_audit.md.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._validation import check_epsilon, check_int, check_positive

__all__ = ["RELEASE_GRID_BITS", "release_grid", "grid_for_scale", "round_release", "floating_point_delta", "SAMPLER_RADIUS_ULPS",
           "NORMAL_ABSOLUTE_ERROR", "SAMPLER_FAILURE"]

#: releases are rounded to 2^(floor(log2(Delta / epsilon)) - RELEASE_GRID_BITS): about 1/1000 to 1/2000 of the noise scale
RELEASE_GRID_BITS = 10


def release_grid(*, sensitivity: float, epsilon: float) -> Optional[float]:
    """The power of two ``2^(floor(log2(Delta / epsilon)) - RELEASE_GRID_BITS)`` (None for ``epsilon = inf``).

    A function of public settings only; the grid step lies in
    ``(lambda / 2^11, lambda / 2^10]`` for the noise scale ``lambda = Delta / epsilon``.
    """
    eps = check_epsilon(epsilon)
    if eps == math.inf:
        return None
    return grid_for_scale(check_positive("sensitivity", sensitivity) / eps)


def grid_for_scale(scale: float, *, bits: int = RELEASE_GRID_BITS) -> float:
    """The power of two ``2^(floor(log2(scale)) - bits)`` for noise of scale ``scale``.

    The step lies in ``(scale / 2^(bits+1), scale / 2^bits]``. ``bits`` is
    :data:`RELEASE_GRID_BITS` for every release of the package but the value
    of a rule (:mod:`pydpowl.privacy.value_estimate`, 20).
    """
    lam = float(scale)
    if not (math.isfinite(lam) and lam > 0):
        raise ValueError(f"the noise scale Delta / epsilon = {lam!r} must be finite and > 0.")
    exponent = math.frexp(lam)[1] - 1 - check_int("bits", bits, minimum=0)  # lam = m 2^e, m in [0.5, 1)
    if exponent < -1000:
        raise ValueError(f"the noise scale Delta / epsilon = {lam!r} is too small for a floating-point-safe grid "
                         "(it would be subnormal); nothing was released.")
    return math.ldexp(1.0, exponent)


def round_release(theta: ArrayLike, noise: ArrayLike, *, grid: float) -> NDArray[np.float64]:
    """The exact real sum ``theta + noise`` rounded to the nearest multiple of ``grid``.

    The floating-point sum ``fl(theta + noise)`` is not used as such: its
    rounding depends on the binade of ``theta`` (the private minimiser), which
    is what makes full-precision releases leak. Here the rounding error ``e`` of
    the sum is recovered exactly (Knuth's TwoSum), so the result is a function
    of the real number ``theta + noise`` alone; ties of the real sum go to the
    even multiple. This is the one place where pydpowl makes a release
    floating-point safe (:class:`~pydpowl.DPWeightedERM`, :class:`~pydpowl.DPOWL`,
    the JSON export and the R front end all go through it).

    Parameters
    ----------
    theta, noise : array-like of shape (d,)
        Finite doubles (the certified minimiser and the noise draw).
    grid : float
        A power of two (:func:`release_grid`).

    Raises
    ------
    ValueError
        If ``grid`` is not a power of two, or a sum reaches ``2^50 grid`` (then
        the grid is finer than double precision at that magnitude).
    """
    grid = check_positive("grid", grid)
    mant, _ = math.frexp(grid)
    if mant != 0.5 or grid < 2.0 ** -1000:
        raise ValueError(f"grid must be a normal power of two, got grid={grid!r}.")
    t = np.asarray(theta, dtype=np.float64)
    b = np.asarray(noise, dtype=np.float64)
    s = t + b
    if not np.all(np.isfinite(s)):
        raise ValueError("the release is not finite; nothing was released.")
    if np.any(np.abs(s) >= grid * 2.0 ** 50):
        raise ValueError(f"a released value exceeds 2^50 times the grid {grid!r}: the grid is finer than double "
                         "precision there; nothing was released.")
    bb = s - t
    err = (t - (s - bb)) + (b - bb)  # TwoSum: s + err == t + b exactly
    q = np.round(s / grid)  # s / grid and q * grid are exact (power of two, |q| < 2^50)
    r = s - q * grid  # exact, |r| <= grid / 2
    half = 0.5 * grid
    q = q + (err > half - r) - (err < -half - r)  # compares r + err with +-grid/2 exactly
    return q * grid


#: allowances of the sampler model behind :func:`floating_point_delta` (docs/privacy_audit.md)
SAMPLER_RADIUS_ULPS = 64          # relative error of the Gamma radius, in units of 2^-53
NORMAL_ABSOLUTE_ERROR = 2.0 ** -50  # absolute error of each N(0, 1) deviate
SAMPLER_FAILURE = 2.0 ** -40      # probability that a rejection step decides differently from exact arithmetic


def floating_point_delta(*, epsilon: float, dim: int, grid: float, noise_scale: float) -> float:
    """``delta`` of a release rounded by :func:`round_release`, under the sampler model.

    The ideal mechanism (exact real noise, then rounding) is ``epsilon``-DP by
    post-processing. The computed release differs from it only when the real
    sum lies within the sampler's error of a rounding boundary; that has
    probability at most ``delta_0`` for every dataset, so the release is
    ``(epsilon, (1 + e^epsilon) delta_0)``-DP. The model: the Gamma radius is
    within ``SAMPLER_RADIUS_ULPS`` ulps of an exact draw, each normal deviate
    within ``NORMAL_ABSOLUTE_ERROR``, the arithmetic of ``r z / ||z||`` adds
    ``d + 4`` ulps, and rejection decisions agree except with probability
    ``SAMPLER_FAILURE``. Derivation: docs/privacy_audit.md.

    Parameters
    ----------
    epsilon : float
    dim : int
        Number of released coefficients ``d``.
    grid : float
        The rounding grid.
    noise_scale : float
        ``lambda = Delta / epsilon``.

    Returns
    -------
    float
        ``(1 + e^epsilon) delta_0``.
    """
    from scipy import special

    eps = check_positive("epsilon", epsilon)
    d = check_int("dim", dim, minimum=1)
    g = check_positive("grid", grid)
    lam = check_positive("noise_scale", noise_scale)
    u = 2.0 ** -53
    T = 50.0 + 2.0 * d  # ||b|| <= T lambda outside probability P(Gamma(d) > T)
    tail = float(special.gammaincc(d, T))
    if d == 1:  # the direction is exactly +-1: only the radius' relative error
        kappa_u = (SAMPLER_RADIUS_ULPS + 5) * u
        omega = 3.0 * kappa_u * T / (1.0 - kappa_u)
        per_coord = 2.0 * kappa_u * math.exp(omega) / (1.0 - kappa_u) * (lam / g + 2.0 / math.e)
        return (1.0 + math.exp(eps)) * (SAMPLER_FAILURE + tail + per_coord)
    kappa_u = (SAMPLER_RADIUS_ULPS + d + 4) * u
    s0 = 2.0 ** -20  # ||z|| >= s0 outside probability P(chi2_d < s0^2)
    small_z = float(special.gammainc(d / 2.0, s0 * s0 / 2.0))
    direction = 2.0 * math.sqrt(d) * NORMAL_ABSOLUTE_ERROR  # |u~_k - u_k| <= direction / ||z||
    mean_inv_norm = math.exp(math.lgamma((d - 1) / 2.0) - math.lgamma(d / 2.0)) / math.sqrt(2.0)  # E 1/||z||
    c_max = kappa_u + direction / s0
    omega = 3.0 * c_max * T / (1.0 - c_max)
    sup_psi = math.exp(math.lgamma(d / 2.0) - math.lgamma((d - 1) / 2.0)) / math.sqrt(math.pi) if d >= 3 else 1.0
    per_coord = (2.0 * math.sqrt(2.0) * math.exp(omega) / (1.0 - c_max) * (kappa_u + direction * mean_inv_norm)
                 * (d * lam / g + 4.0 * sup_psi))
    return (1.0 + math.exp(eps)) * (SAMPLER_FAILURE + small_z + tail + d * per_coord)
