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

import functools
import math
from typing import Any, Optional, Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._validation import check_epsilon, check_int, check_positive

__all__ = ["RELEASE_GRID_BITS", "release_grid", "finite_release_grid", "grid_for_scale", "round_release",
           "floating_point_delta",
           "SAMPLER_RADIUS_ULPS", "NORMAL_ABSOLUTE_ERROR", "SAMPLER_FAILURE", "STREAMS", "r_gamma_radius_model",
           "coupling_delta"]

#: releases are rounded to 2^(floor(log2(Delta / epsilon)) - RELEASE_GRID_BITS): about 1/1000 to 1/2000 of the
#: noise scale
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


def finite_release_grid(*, sensitivity: float, epsilon: float) -> float:
    """:func:`release_grid` for a finite ``epsilon`` (a release that draws noise): there is always a grid.

    Raises
    ------
    ValueError
        If ``epsilon`` is ``inf``.
    """
    grid = release_grid(sensitivity=sensitivity, epsilon=epsilon)
    if grid is None:
        raise ValueError(f"a release grid needs a finite epsilon, got epsilon={epsilon!r}.")
    return grid


def grid_for_scale(scale: float, *, bits: int = RELEASE_GRID_BITS) -> float:
    """The power of two ``2^(floor(log2(scale)) - bits)`` for noise of scale ``scale``.

    The step lies in ``(scale / 2^(bits+1), scale / 2^bits]``. ``bits`` is
    :data:`RELEASE_GRID_BITS` for every release of the package but the value
    of a rule (:mod:`pydpowl.evaluation.private`, 20).
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


def coupling_delta(epsilon: float, failure: float) -> float:
    """``min(1, (1 + e^epsilon) failure)``: the ``delta`` of a computed release that equals an ``epsilon``-DP
    ideal release except on an event of probability at most ``failure`` on every dataset.

    ``P(R(D) in S) <= P(R*(D) in S) + p <= e^eps P(R*(D') in S) + p <= e^eps P(R(D') in S) + (1 + e^eps) p``.
    """
    if failure <= 0.0:
        return 0.0
    log_delta = math.log1p(math.exp(min(epsilon, 745.0))) + math.log(failure) if epsilon < 745.0 else \
        epsilon + math.log(failure)
    return 1.0 if log_delta >= 0.0 else math.exp(log_delta)


#: allowances of the sampler model behind :func:`floating_point_delta` (docs/privacy_audit.md)
SAMPLER_RADIUS_ULPS = 64          # relative error of the Gamma radius, in units of 2^-53
NORMAL_ABSOLUTE_ERROR = 2.0 ** -50  # absolute error of each N(0, 1) deviate
SAMPLER_FAILURE = 2.0 ** -40      # probability that a rejection step decides differently from exact arithmetic
#: the noise streams :func:`floating_point_delta` has a sampler model for
STREAMS = ("numpy", "R")
#: values R's ``unif_rand()`` takes with Mersenne-Twister (``y 2^-32``): the resolution of R's uniforms
_R_UNIFORM_RESOLUTION = 2.0 ** -32


def _radius_absolute_error(d: int) -> float:
    """Bound, in units of the noise scale, on the radius error of the draws where a relative bound fails.

    numpy's Gamma(d >= 2) is Marsaglia-Tsang: ``r = b V``, ``V = (1 + c X)^3``
    (``b = d - 1/3``, ``c = 1/sqrt(9 b)``) from one normal deviate ``X``; an
    error ``eta`` in ``X`` moves ``r`` by ``3 b c (1 + c X)^2 eta``, which is
    within ``SAMPLER_RADIUS_ULPS`` ulps of ``r`` unless ``1 + c X < 3 c eta /
    (64 u)``; there it is below ``3 b c (3 c eta / (64 u))^2 eta``. R's GD
    (``r = (s + t/2)^2``, ``t`` a normal from 59 random bits) is bounded the
    same way. ``d = 1`` (an exponential deviate): ``eta``.
    """
    if d == 1:
        return NORMAL_ABSOLUTE_ERROR
    b = d - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * b)
    knee = 3.0 * c * NORMAL_ABSOLUTE_ERROR / (SAMPLER_RADIUS_ULPS * 2.0 ** -53)
    return 3.0 * b * c * knee * knee * NORMAL_ABSOLUTE_ERROR


@functools.lru_cache(maxsize=256)
def r_gamma_radius_model(dim: int) -> Tuple[float, float, float]:
    """R's ``rgamma(1, dim)`` against the sampler model: ``(p_late, relative_error, flip_probability)``.

    R's GD algorithm (Ahrens & Dieter 1982; :mod:`pydpowl.rrandom._gamma`)
    returns most draws from a normal deviate (steps 2-7, within the model), but
    a fraction ``p_late`` from its double-exponential rejection loop (step 8),
    where ``r = (s + t/2)^2``, ``t = b +- si e`` and ``e = exp_rand()`` is built
    from 32-bit uniforms: coupled with an exact exponential, ``e`` is off by at
    most ``2^(j-32)`` (``j`` doublings of the uniform, ``e`` in ``[(j-1) ln 2,
    j ln 2)``, probability ``2^-j e^(e - (j-1) ln 2)`` of that branch) or
    ``ln 2 2^-32`` (the other branch), so ``E[max error of e | e] e^-e <= (1 +
    ln 2 e^-e) 2^-32``, and ``r`` is off by ``si |x| delta_e``. Computed by
    quadrature over the accepted law of step 8:

    * ``p_late = int_{t < 0} phi(t) P(squeeze and quotient tests reject | t) dt``;
    * ``relative_error = p_late E_accepted[si |x| delta_e] / dim``: the
      size-biased mean relative error of the radius (``E r = dim``), which
      replaces ``SAMPLER_RADIUS_ULPS u`` in the slab bound for those draws;
    * ``flip_probability``: a decision on a 32-bit uniform flips with
      probability at most ``2^-32`` per boundary: one in steps 3-7, and per
      step-8 try the sign, the acceptance (2), ``exp_rand``'s doublings (at most
      64 boundaries) and branch tests (at most ``2^(j - 32)`` each, ``E 2^j <=
      32``): ``2^-32 (1 + 101 E[tries])``, ``E[tries] = p_late / P(accept a try)``.
    """
    from scipy import integrate, stats

    from ...rrandom._gamma import _TAU, _gd_constants, _quotient

    d = check_int("dim", dim, minimum=1)
    s2, s, dd, q0, b, si, c = _gd_constants(float(d))

    def reach(t: float) -> float:  # P_u(steps 3-7 reject | t), u uniform(0, 1)
        lo_squeeze = t ** 3 / dd if dd < 0 else math.inf  # d u <= t^3 accepts u >= t^3 / d when d < 0
        lo_quotient = -math.expm1(min(_quotient(t, s, s2, q0), 700.0)) if s + 0.5 * t > 0 else math.inf
        return min(max(min(lo_squeeze, lo_quotient), 0.0), 1.0)

    def accept(e: float, sign: float) -> float:  # P_u(step 11 accepts | e, sign), |u| uniform(0, 1)
        t = b + sign * si * e
        if t < _TAU:
            return 0.0
        q = _quotient(t, s, s2, q0)
        if q <= 0.0:
            return 0.0
        return min(1.0, math.exp(min(q + e - 0.5 * t * t, 700.0) + math.log1p(-math.exp(-q))) / c)

    def quad(f: Any, lo: float, hi: float) -> float:
        return float(integrate.quad(f, lo, hi, limit=400)[0])

    p_late = quad(lambda t: float(stats.norm.pdf(t)) * reach(t), -40.0, 0.0)
    e_max = 32.0 * math.log(2.0)  # exp_rand's value is below 32 ln 2 + 1 (at most 32 doublings)
    p_try = sum(quad(lambda e, g=g: 0.5 * math.exp(-e) * accept(e, g), 0.0, e_max + 1.0) for g in (-1.0, 1.0))
    weighted = sum(quad(lambda e, g=g: 0.5 * (1.0 + math.log(2.0) * math.exp(-e)) * _R_UNIFORM_RESOLUTION
                        * accept(e, g) * si * abs(s + 0.5 * (b + g * si * e)), 0.0, e_max + 1.0)
                   for g in (-1.0, 1.0))
    relative = p_late * (weighted / p_try) / d
    flips = _R_UNIFORM_RESOLUTION * (1.0 + 101.0 * p_late / p_try)
    return p_late, relative, flips


def floating_point_delta(*, epsilon: float, dim: int, grid: float, noise_scale: float,
                         stream: str = "numpy") -> float:
    """``delta`` of an l2-Laplace release rounded by :func:`round_release`, under the sampler model.

    The ideal mechanism (exact real noise, then rounding) is ``epsilon``-DP by
    post-processing. The computed release differs from it only when the real
    sum lies within the sampler's error of a rounding boundary; that has
    probability at most ``delta_0`` for every dataset, so the release is
    ``(epsilon, (1 + e^epsilon) delta_0)``-DP. The model: the Gamma radius is
    within ``SAMPLER_RADIUS_ULPS`` ulps of an exact draw or, where that fails
    (small radii), within :func:`_radius_absolute_error` of it, each normal
    deviate within ``NORMAL_ABSOLUTE_ERROR``, the arithmetic of ``r z / ||z||``
    adds ``d + 4`` ulps, and rejection decisions agree except with probability
    ``SAMPLER_FAILURE``. numpy's Generator (the default, from OS entropy)
    satisfies it. R's ``rgamma`` (``stream="R"``, replay) does not for the
    draws of its rejection loop, which come from 32-bit uniforms: their error
    is added from :func:`r_gamma_radius_model`. Derivation: docs/privacy_audit.md.

    Parameters
    ----------
    epsilon : float
    dim : int
        Number of released coefficients ``d``.
    grid : float
        The rounding grid.
    noise_scale : float
        ``lambda = Delta / epsilon``.
    stream : {"numpy", "R"}, default="numpy"
        The noise's generator: a numpy Generator, or an R-compatible stream
        (:class:`pydpowl.RRandom`, R's ``rgamma`` and ``rnorm``).

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
    if stream not in STREAMS:
        raise ValueError(f"stream must be one of {list(STREAMS)}, got stream={stream!r}.")
    u = 2.0 ** -53
    T = 50.0 + 2.0 * d  # ||b|| <= T lambda outside probability P(Gamma(d) > T)
    tail = float(special.gammaincc(d, T))
    # an absolute radius error a lambda moves each coordinate by at most a lambda: slabs of that half-width
    # around the boundaries (spaced g) under a marginal density at most 1 / lambda
    absolute = d * 2.0 * _radius_absolute_error(d) * (lam / g + 1.0)
    late, flips = 0.0, 0.0
    if stream == "R":
        _, late, flips = r_gamma_radius_model(d)
    if d == 1:  # the direction is exactly +-1: only the radius' relative error
        kappa_u = (SAMPLER_RADIUS_ULPS + 5) * u
        omega = 3.0 * (kappa_u + late) * T / (1.0 - kappa_u - late)
        per_coord = 2.0 * (kappa_u + late) * math.exp(omega) / (1.0 - kappa_u - late) * (lam / g + 2.0 / math.e)
        return coupling_delta(eps, SAMPLER_FAILURE + flips + tail + absolute + per_coord)
    kappa_u = (SAMPLER_RADIUS_ULPS + d + 4) * u
    s0 = 2.0 ** -20  # ||z|| >= s0 outside probability P(chi2_d < s0^2)
    small_z = float(special.gammainc(d / 2.0, s0 * s0 / 2.0))
    direction = 2.0 * math.sqrt(d) * NORMAL_ABSOLUTE_ERROR  # |u~_k - u_k| <= direction / ||z||
    mean_inv_norm = math.exp(math.lgamma((d - 1) / 2.0) - math.lgamma(d / 2.0)) / math.sqrt(2.0)  # E 1/||z||
    c_max = kappa_u + direction / s0
    omega = 3.0 * c_max * T / (1.0 - c_max)
    sup_psi = math.exp(math.lgamma(d / 2.0) - math.lgamma((d - 1) / 2.0)) / math.sqrt(math.pi) if d >= 3 else 1.0
    per_coord = (2.0 * math.sqrt(2.0) * math.exp(omega) / (1.0 - c_max) * (kappa_u + late + direction * mean_inv_norm)
                 * (d * lam / g + 4.0 * sup_psi))
    return coupling_delta(eps, SAMPLER_FAILURE + flips + small_z + tail + absolute + d * per_coord)
