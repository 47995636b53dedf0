"""Output-perturbation noise of Algorithm 1 (DP-wERM), its sensitivity, and floating-point-safe releases.

The released vector is ``theta_hat + b`` where ``b`` has density proportional to
``exp(-epsilon ||b|| / Delta)``: its norm is Gamma(shape=d, rate=epsilon/Delta)
and its direction is uniform on the sphere. The norm is drawn first and the
direction second, in DPpack's order.

``Delta = (L (C + 2W) + 2 n tol) / gamma`` (:func:`output_sensitivity`): ``L``
bounds the loss's derivative, ``C`` the total change of the other records'
weights, ``W`` every weight, and ``2 n tol / gamma`` covers the solver, whose
answer is only certified to lie within ``n tol / gamma`` of the exact minimiser.

The release is then made floating-point safe (:func:`round_release`): the exact
real sum ``theta_hat + b`` is rounded to a power-of-two grid below the noise
scale (:func:`release_grid`), without the data-dependent rounding of the
floating-point sum, whose last bits otherwise reveal the minimiser (Mironov,
CCS 2012). :func:`floating_point_delta` gives the resulting ``delta``; the
analysis is in docs/privacy_audit.md.

Functions here are pure: they take the generator as ``rng=`` and keep nothing.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_epsilon, check_int, check_positive

__all__ = [
    "perturb",
    "output_sensitivity",
    "noise_rate",
    "sample_output_noise",
    "sample_output_noise_batch",
    "is_r_stream",
    "RELEASE_GRID_BITS",
    "release_grid",
    "round_release",
    "floating_point_delta",
]

#: releases are rounded to 2^(floor(log2(Delta / epsilon)) - RELEASE_GRID_BITS): about 1/1000 to 1/2000 of the noise scale
RELEASE_GRID_BITS = 10


def _check_C(C: Any) -> float:
    if isinstance(C, bool) or not isinstance(C, (int, float, np.floating, np.integer)) or not (0 <= float(C) < np.inf):
        raise ValueError(f"C must be in [0, inf), got C={C!r}.")
    return float(C)


def _check_tol(tol: Any) -> float:
    if isinstance(tol, (bool, np.bool_)) or not isinstance(tol, (int, float, np.floating, np.integer)) \
            or not (0 <= float(tol) < np.inf):
        raise ValueError(f"tol must be in [0, inf), got tol={tol!r}.")
    return float(tol)


def output_sensitivity(*, gamma: float, weights_upper_bound: float, C: float = 0.0, lipschitz: float = 1.0,
                       n_samples: int, tol: float) -> float:
    """l2 sensitivity of the released solution, ``Delta = (L (C + 2W) + 2 n tol) / gamma``.

    Theorem 7 gives ``L (C + 2W) / gamma`` for the exact minimiser; the solver's
    answer is certified only to ``||grad F|| <= tol``, which by ``gamma/n``-strong
    convexity puts it within ``n tol / gamma`` of the minimiser, once for each of
    the two neighbouring datasets (docs/privacy_audit.md).

    Parameters
    ----------
    gamma : float
        Regularisation constant in DPpack's convention (objective strongly convex
        with modulus ``gamma / n``).
    weights_upper_bound : float
        Public bound ``W`` on every weight.
    C : float, default=0.0
        Public bound on how much the weights of the *other* records can change in
        total when one record is replaced (0 when weights are observed or come
        from an external model); see :mod:`pydpowl.estimators.propensity`.
    lipschitz : float, default=1.0
        ``L``, a bound on ``|l'|`` (1 for the built-in losses; declared for a
        :class:`~pydpowl.engine.losses.CustomLoss`).
    n_samples : int
        Number of rows ``n`` (public under the replacement relation).
    tol : float
        Gradient-norm tolerance the solver certified; 0 only for an exact minimiser.
    """
    gamma = check_positive("gamma", gamma)
    w_max = check_positive("weights_upper_bound", weights_upper_bound)
    lip = check_positive("lipschitz", lipschitz)
    n = check_int("n_samples", n_samples, minimum=0)
    return (lip * (_check_C(C) + 2.0 * w_max) + 2.0 * n * _check_tol(tol)) / gamma


def noise_rate(*, epsilon: float, gamma: float, weights_upper_bound: float, C: float = 0.0, lipschitz: float = 1.0,
               n_samples: int, tol: float) -> float:
    """Rate ``epsilon / Delta`` of the Gamma law of the noise norm.

    Computed as ``gamma * epsilon / (L (C + 2W) + 2 n tol)``. With ``C = 0``,
    ``L = 1`` and ``tol = 0`` these are the floating-point operations of
    DPpack's ``gamma*eps/(2*weights.upper.bound)`` (multiplying by 1 and adding
    0 are exact), which replaying DPpack bit for bit needs (validation only:
    DPpack's Delta omits the solver tolerance). ``epsilon = inf`` gives ``inf``.
    """
    eps = check_epsilon(epsilon)
    output_sensitivity(gamma=gamma, weights_upper_bound=weights_upper_bound, C=C, lipschitz=lipschitz,
                       n_samples=n_samples, tol=tol)  # validates
    denominator = float(lipschitz) * (float(C) + 2.0 * float(weights_upper_bound)) + 2.0 * int(n_samples) * float(tol)
    return float(gamma) * eps / denominator


# ---------------------------------------------------------------- floating-point-safe releases

def release_grid(*, sensitivity: float, epsilon: float) -> Optional[float]:
    """The power of two ``2^(floor(log2(Delta / epsilon)) - RELEASE_GRID_BITS)`` (None for ``epsilon = inf``).

    A function of public settings only; the grid step lies in
    ``(lambda / 2^11, lambda / 2^10]`` for the noise scale ``lambda = Delta / epsilon``.
    """
    eps = check_epsilon(epsilon)
    if eps == math.inf:
        return None
    lam = check_positive("sensitivity", sensitivity) / eps
    if not (math.isfinite(lam) and lam > 0):
        raise ValueError(f"the noise scale Delta / epsilon = {lam!r} must be finite and > 0.")
    exponent = math.frexp(lam)[1] - 1 - RELEASE_GRID_BITS  # lam = m 2^e with m in [0.5, 1): floor(log2 lam) = e - 1
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


def is_r_stream(rng: Any) -> bool:
    """True for an R-compatible stream (:class:`pydpowl.RRandom`-like: ``rgamma`` and ``rnorm``)."""
    return callable(getattr(rng, "rgamma", None)) and callable(getattr(rng, "rnorm", None))


def _r_sum_of_squares(z: NDArray[np.float64]) -> float:
    # R's sum() accumulates doubles in long double, left to right
    acc = np.longdouble(0.0)
    for v in z:
        acc += np.longdouble(v * v)
    return float(acc)


def sample_output_noise(dim: int, rate: float, *, rng: Any) -> NDArray[np.float64]:
    """Draw ``b`` in R^dim with ``||b|| ~ Gamma(dim, rate)`` and a uniform direction.

    Parameters
    ----------
    dim : int
        Number of coefficients ``d`` (intercept included).
    rate : float
        ``epsilon / Delta`` in ``(0, inf]``; ``inf`` returns zeros.
    rng : numpy.random.Generator or pydpowl.RRandom
        Source of randomness. With an R-compatible stream the draws are
        ``rgamma(1, dim, rate)`` then ``rnorm(dim)``, as DPpack does after
        ``set.seed``; with a numpy Generator ``gamma`` then ``standard_normal``.

    Returns
    -------
    ndarray of shape (dim,)
    """
    dim = check_int("dim", dim, minimum=1)
    rate = check_positive("rate", rate, allow_inf=True)
    if is_r_stream(rng):
        radius = float(rng.rgamma(1, dim, rate=rate)[0])  # 0 when rate = inf, as in R
        z = np.asarray(rng.rnorm(dim), dtype=np.float64)
        direction = z / math.sqrt(_r_sum_of_squares(z))
        return radius * direction
    if rate == np.inf:
        return np.zeros(dim)
    radius = rng.gamma(shape=dim, scale=1.0 / rate)
    z = rng.standard_normal(dim)
    return radius * (z / np.linalg.norm(z))


def sample_output_noise_batch(
    dim: int, rate: float, size: int, *, rng: np.random.Generator
) -> NDArray[np.float64]:
    """``size`` independent draws of :func:`sample_output_noise` as rows (numpy Generator only).

    Used by simulation studies that release many noisy copies of one solution
    to study the mechanism; each row alone is an ``epsilon``-DP release, and
    releasing several of them on the same data composes.
    """
    dim = check_int("dim", dim, minimum=1)
    size = check_int("size", size, minimum=0)
    rate = check_positive("rate", rate, allow_inf=True)
    if rate == np.inf:
        return np.zeros((size, dim))
    radius = rng.gamma(shape=dim, scale=1.0 / rate, size=size)
    z = rng.standard_normal((size, dim))
    return z * (radius / np.linalg.norm(z, axis=1))[:, None]


def perturb(solutions: NDArray[np.float64], *, epsilon: float, gamma: float, weights_upper_bound: float,
            C: float = 0.0, n_samples: int, tol: float, rng: Any) -> NDArray[np.float64]:
    """One release per row of ``solutions`` (shape (R, d)): noise as DP-OWL's, then its safe rounding.

    ``n_samples`` is the number of rows each solution was fitted on and ``tol``
    the gradient norm its solver certified (both enter Delta).
    """
    theta = np.atleast_2d(np.asarray(solutions, dtype=np.float64))
    law = dict(gamma=gamma, weights_upper_bound=weights_upper_bound, C=C, n_samples=n_samples, tol=tol)
    rate = noise_rate(epsilon=epsilon, **law)
    noise = sample_output_noise_batch(theta.shape[1], rate, theta.shape[0], rng=rng)
    grid = release_grid(sensitivity=output_sensitivity(**law), epsilon=epsilon)
    return theta + noise if grid is None else round_release(theta, noise, grid=grid)
