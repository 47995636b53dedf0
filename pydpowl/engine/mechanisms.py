"""The noise mechanisms of the package, as small pure functions.

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
  rate ``epsilon_s / (2 r)`` covers (docs/dppack_family.md).
* The exponential mechanism (:func:`exponential_mechanism`), by inversion with
  one uniform draw as DPpack's ``ExponentialMechanism``.

With an R-compatible stream (:class:`pydpowl.RRandom`) every function draws
exactly what DPpack draws, in DPpack's order and arithmetic. Functions here are
pure: they take the generator as ``rng=`` and keep nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from .._validation import check_epsilon, check_int, check_positive

__all__ = [
    "output_sensitivity",
    "noise_rate",
    "sample_output_noise",
    "sample_output_noise_batch",
    "is_r_stream",
    "CMSCalibration",
    "cms_calibration",
    "KSTCalibration",
    "kst_calibration",
    "sample_kst_noise",
    "sample_isotropic_gaussian",
    "smoothing_share",
    "smoothing_rate",
    "exponential_mechanism",
]


def output_sensitivity(*, gamma: float, weights_upper_bound: float, C: float = 0.0) -> float:
    """l2 sensitivity of the minimiser, ``Delta = (C + 2W) / gamma`` (Theorem 7).

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
    """
    gamma = check_positive("gamma", gamma)
    w_max = check_positive("weights_upper_bound", weights_upper_bound)
    if isinstance(C, bool) or not isinstance(C, (int, float, np.floating, np.integer)) or not (0 <= float(C) < np.inf):
        raise ValueError(f"C must be in [0, inf), got C={C!r}.")
    return (float(C) + 2.0 * w_max) / gamma


def noise_rate(*, epsilon: float, gamma: float, weights_upper_bound: float, C: float = 0.0) -> float:
    """Rate ``epsilon / Delta`` of the Gamma law of the noise norm.

    Computed as ``gamma * epsilon / (C + 2W)``, the same floating-point
    operations as DPpack's ``gamma*eps/(2*weights.upper.bound)`` when ``C = 0``,
    so an R-compatible stream reproduces DPpack's noise bit for bit.
    ``epsilon = inf`` gives ``inf`` (no noise).
    """
    eps = check_epsilon(epsilon)
    output_sensitivity(gamma=gamma, weights_upper_bound=weights_upper_bound, C=C)  # validates
    return float(gamma) * eps / (float(C) + 2.0 * float(weights_upper_bound))


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
    so the rotation is exact). With a numpy Generator: ``sqrt(variance) *
    standard_normal(dim)``, the same law.
    """
    dim = check_int("dim", dim, minimum=1)
    variance = check_positive("variance", variance)
    if is_r_stream(rng):
        from scipy.linalg import eigh

        values, vectors = eigh(variance * np.eye(dim), lower=True, driver="evr")
        values, vectors = values[::-1], vectors[:, ::-1]  # R orders eigenvalues decreasingly
        tol = 1e-6
        if not np.all(values >= -tol * abs(values[0])):  # MASS's positive-definiteness check
            raise ValueError("the covariance is not positive definite.")
        z = np.asarray(rng.rnorm(dim), dtype=np.float64)
        return (vectors * np.sqrt(np.maximum(values, 0.0))) @ z
    return math.sqrt(variance) * rng.standard_normal(dim)


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
