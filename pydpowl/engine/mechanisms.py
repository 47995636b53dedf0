"""The noise mechanisms of the package, as small pure functions, and floating-point-safe releases.

* Output perturbation (Algorithm 1, DP-wERM; DPpack's ``perturbation.method =
  "output"``): the release is ``theta_hat + b`` where ``b`` has density
  proportional to ``exp(-epsilon ||b|| / Delta)``: its norm is Gamma(shape=d,
  rate=epsilon/Delta) and its direction is uniform on the sphere
  (:func:`sample_output_noise`; the norm is drawn first and the direction
  second, in DPpack's order).
* Objective perturbation of Chaudhuri, Monteleoni & Sarwate (2011, Algorithm 2;
  DPpack's ``EmpiricalRiskMinimizationDP.CMS``): :func:`cms_calibration` gives
  the budget ``epsilon'`` of the linear term and the extra curvature ``Delta``;
  the linear term ``b`` has the same law as output noise with rate
  ``epsilon'/2``.
* Objective perturbation of Kifer, Smith & Thakurta (2012; DPpack's
  ``EmpiricalRiskMinimizationDP.KST``, linear regression):
  :func:`kst_calibration` and :func:`sample_kst_noise` (an l2-Laplace term for
  ``delta = 0``, an isotropic Gaussian drawn as ``MASS::mvrnorm`` does for
  ``delta > 0``).
* Solver smoothing (:func:`smoothing_share`, :func:`smoothing_rate`): the
  objective-perturbation proofs hold for the exact minimiser; the certified
  solver returns a point within ``r`` of it, which an extra output noise of
  rate ``epsilon_s / (2 r)`` covers (docs/dppack_family.md). It is drawn
  (:func:`sample_smoothing_noise`) from a generator derived from the stream's
  state without advancing it (:func:`derived_generator`), so an R stream ends
  where DPpack's does.
* The exponential mechanism (:func:`exponential_mechanism`), by inversion with
  one uniform draw as DPpack's ``ExponentialMechanism``.

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

With an R-compatible stream (:class:`pydpowl.RRandom`) every function draws
exactly what DPpack draws, in DPpack's order and arithmetic. Functions here are
pure: they take the generator as ``rng=`` and keep nothing.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_epsilon, check_int, check_positive, check_weight_sensitivity

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
    "CMSCalibration",
    "cms_calibration",
    "KSTCalibration",
    "kst_calibration",
    "sample_kst_noise",
    "sample_isotropic_gaussian",
    "smoothing_share",
    "smoothing_rate",
    "SMOOTHING_DOMAIN",
    "derived_generator",
    "sample_smoothing_noise",
    "exponential_mechanism",
]

#: releases are rounded to 2^(floor(log2(Delta / epsilon)) - RELEASE_GRID_BITS): about 1/1000 to 1/2000 of the noise scale
RELEASE_GRID_BITS = 10


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
    return (lip * (check_weight_sensitivity(C) + 2.0 * w_max) + 2.0 * n * _check_tol(tol)) / gamma


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
# ----------------------------------------------------------------------------- objective perturbation (CMS)


@dataclass(frozen=True)
class CMSCalibration:
    """Public constants of objective perturbation (Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 2).

    In DPpack's scaling the perturbed objective is

        J(theta) = (1/n) sum_i l(y_i z_i'theta) + gamma/(2n) ||theta||^2 + b'theta/n + (Delta/2) ||theta||^2,

    (Chaudhuri's Lambda is ``gamma / n``) and ``||b||`` is Gamma(d, rate), uniform direction.

    Attributes
    ----------
    epsilon : float
        Budget the calibration was computed for.
    epsilon_prime : float
        Budget left for the linear term after the curvature term.
    Delta : float
        Extra curvature (0 unless ``epsilon - log(1 + 2c/gamma + c^2/gamma^2) <= 0``).
    rate : float
        ``epsilon_prime / 2``: rate of the Gamma law of ``||b||`` (``inf`` for ``epsilon = inf``).
    """

    epsilon: float
    epsilon_prime: float
    Delta: float
    rate: float


def cms_calibration(*, epsilon: float, gamma: float, c: float, n: int) -> CMSCalibration:
    """Objective-perturbation constants in DPpack's arithmetic (``EmpiricalRiskMinimizationDP.CMS$fit``).

    ``epsilon' = epsilon - log(1 + 2c/gamma + c^2/gamma^2)``; if ``epsilon' > 0``
    then ``Delta = 0``, else ``Delta = c / (n (exp(epsilon/4) - 1)) - gamma/n``
    and ``epsilon' = epsilon/2``. The linear term's norm has rate ``epsilon'/2``.

    Parameters
    ----------
    epsilon : float
        Budget in (0, inf]; ``inf`` gives ``Delta = 0`` and no noise.
    gamma : float
        Regularisation constant in (0, inf) (DPpack's convention).
    c : float
        Bound on the loss curvature ``l''`` (1/(2h) for the Huber hinge, 1/4 for the logistic loss).
    n : int
        Number of rows (public).
    """
    eps = check_epsilon(epsilon)
    gamma = check_positive("gamma", gamma)
    c = check_positive("c", c)
    n = check_int("n", n, minimum=1)
    if eps == math.inf:
        return CMSCalibration(epsilon=eps, epsilon_prime=math.inf, Delta=0.0, rate=math.inf)
    # R: eps - log(1 + 2*c/gamma + c^2/gamma^2), with x^2 computed as x*x
    eps_prime = eps - math.log(1.0 + 2.0 * c / gamma + (c * c) / (gamma * gamma))
    if eps_prime > 0:
        delta_curv = 0.0
    else:
        delta_curv = c / (n * (math.exp(eps / 4.0) - 1.0)) - gamma / n
        eps_prime = eps / 2.0
    return CMSCalibration(epsilon=eps, epsilon_prime=eps_prime, Delta=delta_curv, rate=eps_prime / 2.0)


# ----------------------------------------------------------------------------- objective perturbation (KST)


@dataclass(frozen=True)
class KSTCalibration:
    """Public constants of Kifer, Smith & Thakurta's objective perturbation for linear regression.

    DPpack (``LinearRegressionDP``) scales rows to ``|x_j| <= 1`` (so ``||x|| <=
    sqrt(p)``), targets to ``|y| <= p`` and constrains ``||theta||^2 <= p``: then the
    per-record gradient is bounded by ``zeta = 2 p^(3/2)`` and the Hessian ``x x'``
    has rank one and eigenvalue at most ``lambda = p``. The perturbed objective is

        J(theta) = (1/n) sum_i (y_i - x_i'theta)^2 / 2 + (gamma + Delta)/(2n) ||theta||^2 + b'theta/n

    with ``Delta = 2 lambda / epsilon``.

    Attributes
    ----------
    epsilon, delta : float
    p : int
        Number of coefficients (intercept included).
    zeta, lam : float
        Gradient and Hessian bounds on the domain.
    Delta : float
        Extra ridge (0 for ``epsilon = inf``).
    rate : float
        ``delta = 0``: ``epsilon / (2 zeta)``, rate of the Gamma law of ``||b||``.
    variance : float
        ``delta > 0``: ``zeta^2 (8 log(2/delta) + 4 epsilon) / epsilon^2``, per-coordinate variance of ``b``.
    """

    epsilon: float
    delta: float
    p: int
    zeta: float
    lam: float
    Delta: float
    rate: float
    variance: float


def kst_calibration(*, epsilon: float, delta: float, p: int) -> KSTCalibration:
    """KST constants in DPpack's arithmetic (``LinearRegressionDP``, ``EmpiricalRiskMinimizationDP.KST$fit``).

    Parameters
    ----------
    epsilon : float
        Budget in (0, inf].
    delta : float
        In [0, 1); 0 gives pure epsilon-DP (l2-Laplace ``b``), > 0 gives
        (epsilon, delta)-DP (Gaussian ``b``). DPpack fails for ``epsilon = inf``
        with ``delta > 0`` (its covariance is NaN): refused here.
    p : int
        Number of coefficients, intercept included.
    """
    eps = check_epsilon(epsilon)
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.integer, np.floating)) \
            or not (0.0 <= float(delta) < 1.0):
        raise ValueError(f"delta must be in [0, 1), got delta={delta!r}.")
    delta = float(delta)
    p = check_int("p", p, minimum=1)
    if eps == math.inf and delta > 0:
        raise ValueError("epsilon=inf with delta > 0 has no noise law (DPpack's covariance is NaN and its fit "
                         "fails); use delta=0 for a non-private fit.")
    zeta = 2.0 * math.pow(p, 1.5)  # R: 2*p^(3/2)
    lam = float(p)
    Delta = 0.0 if eps == math.inf else 2.0 * lam / eps
    rate = eps / (2.0 * zeta)
    variance = math.nan
    if delta > 0:
        variance = (zeta * zeta * (8.0 * math.log(2.0 / delta) + 4.0 * eps)) / (eps * eps)
    return KSTCalibration(epsilon=eps, delta=delta, p=p, zeta=zeta, lam=lam, Delta=Delta, rate=rate,
                          variance=variance)


def sample_isotropic_gaussian(dim: int, variance: float, *, rng: Any) -> NDArray[np.float64]:
    """Draw ``b ~ N(0, variance * I_dim)``.

    With an R-compatible stream this is ``MASS::mvrnorm(1, rep(0, dim), variance *
    diag(dim))`` draw for draw: ``rnorm(dim)`` rotated by the eigenvectors R's
    ``eigen(Sigma, symmetric = TRUE)`` returns (LAPACK's ``dsyevr``, reversed to
    decreasing eigenvalues; for a multiple of the identity a signed permutation,
    so the rotation is exact: :func:`_r_identity_rotation`). With a numpy
    Generator: ``sqrt(variance) * standard_normal(dim)``, the same law.
    """
    dim = check_int("dim", dim, minimum=1)
    variance = check_positive("variance", variance)
    if is_r_stream(rng):
        z = np.asarray(rng.rnorm(dim), dtype=np.float64)
        return math.sqrt(variance) * _r_identity_rotation(z)
    return math.sqrt(variance) * rng.standard_normal(dim)


def _r_identity_rotation(z: NDArray[np.float64]) -> NDArray[np.float64]:
    """``V z`` for the eigenvectors ``V`` R's ``eigen(c * diag(d), symmetric = TRUE)`` returns, any ``c > 0``.

    LAPACK's ``dsyevr`` on a multiple of the identity gives the identity (d != 2)
    or ``[[1, 0], [0, -1]]`` up to column order (d = 2); R reverses the columns
    (decreasing eigenvalues). So ``V`` is the reversed identity, except
    ``[[0, -1], [1, 0]]`` for d = 2, and ``V z`` is ``z`` reversed (with the one
    sign for d = 2). Entries are 0 and +-1, so ``MASS::mvrnorm``'s product
    ``V diag(sqrt(c)) z`` is exactly ``sqrt(c)`` times this. Checked against R's
    ``eigen`` and scipy's ``eigh(driver="evr")`` for d = 1..79 and several c
    (tests/test_mechanisms.py, tests/test_r_reference_dppack_family.py); no scipy
    is needed at run time.
    """
    if z.shape[0] == 2:
        return np.array([-z[1], z[0]])
    return z[::-1].copy()


def sample_kst_noise(calibration: KSTCalibration, *, rng: Any) -> NDArray[np.float64]:
    """The linear term ``b`` of KST objective perturbation, with DPpack's draws.

    ``delta = 0``: ``rgamma(1, p, rate = epsilon/(2 zeta))`` then ``rnorm(p)``
    (drawn even for ``epsilon = inf``, as DPpack does, and then discarded: zeros).
    ``delta > 0``: :func:`sample_isotropic_gaussian`.
    """
    cal = calibration
    if cal.delta == 0:
        b = sample_output_noise(cal.p, cal.rate, rng=rng)
        if cal.epsilon == math.inf:
            return np.zeros(cal.p)
        return b
    return sample_isotropic_gaussian(cal.p, cal.variance, rng=rng)


# ----------------------------------------------------------------------------- solver smoothing


def smoothing_share(*, n: int, tol: float, error_radius: float, strong_convexity: float,
                    gradient_sensitivity: float) -> float:
    """Share ``kappa`` of the budget given to the solver-smoothing noise.

    The objective-perturbation noise moves the minimiser by about
    ``gradient_sensitivity / (epsilon n mu)`` and the smoothing noise by about
    ``2 r / (kappa epsilon)`` (``r`` the certified error radius): the sum is
    smallest near ``kappa = sqrt(r n mu / gradient_sensitivity)``, capped at 1/2.
    Public: it depends on ``n``, the solver tolerance and public constants only.
    """
    n = check_int("n", n, minimum=1)
    check_positive("tol", tol)
    r = check_positive("error_radius", error_radius)
    mu = check_positive("strong_convexity", strong_convexity)
    s = check_positive("gradient_sensitivity", gradient_sensitivity)
    return min(0.5, math.sqrt(r * n * mu / s))


def smoothing_rate(*, epsilon: float, error_radius: float) -> float:
    """Rate ``epsilon / (2 r)`` of the l2-Laplace noise covering a solver error of at most ``r``.

    For neighbours the two certified answers lie within ``r`` of their exact
    minimisers, so given the exact minimiser the answer has sensitivity ``2 r``.
    """
    eps = check_positive("epsilon", epsilon)
    r = check_positive("error_radius", error_radius)
    return eps / (2.0 * r)


#: domain tag of the generator the solver-smoothing noise is drawn from (:func:`sample_smoothing_noise`)
SMOOTHING_DOMAIN = "pydpowl/solver-smoothing/v1"


def derived_generator(rng: Any, *, domain: str) -> np.random.Generator:
    """A numpy Generator for draws that must not advance ``rng``: ``rng`` itself if it is one.

    For an R-compatible stream (anything with ``get_state()``, e.g.
    :class:`pydpowl.RRandom`) the generator is PCG64 seeded with the SHA-256
    digest of ``domain`` and the stream's current state (R's 626 integers,
    little-endian int32): a deterministic function of the state that leaves it
    untouched. The same ``set.seed`` gives the same draws (reproducible), and
    the stream's later draws are exactly those it would have made without them
    (``.Random.seed`` ends where DPpack's does). The derived draws are as secret
    as the state itself: whoever holds the state can recompute them, as they can
    recompute every draw of the stream.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    get_state = getattr(rng, "get_state", None)
    if not callable(get_state):
        raise TypeError(f"rng must be a numpy Generator or an R-compatible stream with get_state(), got "
                        f"{type(rng).__name__}.")
    state = np.ascontiguousarray(np.asarray(get_state(), dtype=np.int64).astype("<i4"))
    digest = hashlib.sha256(domain.encode("utf-8") + b"\0" + state.tobytes()).digest()
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(int.from_bytes(digest, "little"))))


def sample_smoothing_noise(dim: int, *, epsilon: float, error_radius: float, rng: Any) -> NDArray[np.float64]:
    """The solver-smoothing noise of objective perturbation: rate :func:`smoothing_rate`, drawn from
    :func:`derived_generator` (domain :data:`SMOOTHING_DOMAIN`), so an R stream is not advanced.

    The one place this noise is drawn (CMS and KST alike,
    :mod:`pydpowl.estimators._perturbation`).
    """
    rate = smoothing_rate(epsilon=epsilon, error_radius=error_radius)
    return sample_output_noise(dim, rate, rng=derived_generator(rng, domain=SMOOTHING_DOMAIN))


# ----------------------------------------------------------------------------- exponential mechanism


def _r_sum(p: NDArray[np.float64]) -> float:
    # R's sum: left to right in long double
    acc = np.longdouble(0.0)
    for v in p:
        acc += np.longdouble(v)
    return float(acc)


def _r_cumsum(p: NDArray[np.float64]) -> NDArray[np.float64]:
    # R's cumsum accumulates doubles in long double and stores each partial sum as a double
    acc = np.longdouble(0.0)
    out = np.empty_like(p)
    for i, v in enumerate(p):
        acc += np.longdouble(v)
        out[i] = float(acc)
    return out


def exponential_mechanism(scores: Sequence[float], *, epsilon: float, sensitivity: float, rng: Any) -> int:
    """Index k drawn with probability proportional to ``exp(epsilon * s_k / (2 * sensitivity))``.

    Implemented by inversion with one uniform draw (the first k whose cumulative
    probability reaches u), in the arithmetic of DPpack's
    ``ExponentialMechanism(utility, eps, sensitivity)``: scores minus their
    maximum, ``exp(eps * u / (2 * sens))``, normalised by their sum, cumulated
    (sums in long double, as R's ``sum`` and ``cumsum``), then
    ``which.max(runif(1) <= cumsum(p))``. Works with a numpy Generator and with
    an R-compatible :class:`pydpowl.RRandom` (then it is DPpack's draw).

    Parameters
    ----------
    scores : sequence of float
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
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1 or s.size == 0 or not np.all(np.isfinite(s)):
        raise ValueError("scores must be a non-empty 1-D array of finite numbers.")
    p = np.exp(eps * (s - s.max()) / (2.0 * sens))
    total = _r_sum(p)
    cumulative = _r_cumsum(p / total)
    u = float(rng.uniform())
    hits = np.flatnonzero(u <= cumulative)
    return int(hits[0]) if hits.size else 0  # R's which.max of all FALSE is the first index
