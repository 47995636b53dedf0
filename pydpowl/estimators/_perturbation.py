"""One private fit of DPpack's ERM family, assembled from the engine: objective or output perturbation.

:func:`release_cms` is Chaudhuri, Monteleoni & Sarwate's ERM (DPpack's
``EmpiricalRiskMinimizationDP.CMS`` and ``WeightedERMDP.CMS``, behind
``svmDP`` and ``LogisticRegressionDP``) and :func:`release_kst` is Kifer,
Smith & Thakurta's objective perturbation (``EmpiricalRiskMinimizationDP.KST``,
behind ``LinearRegressionDP``). Both take data already in DPpack's scaled
space and draw, from one generator, exactly what DPpack draws, in DPpack's
order: the linear term of the objective (objective perturbation) before the
solve, the output noise after it.

Two modes (``reproduce_dppack``):

* ``False`` (default): every release has a proof for the answer the certified
  solver actually returns, which lies within ``r`` of the exact minimiser
  (``r = tol / mu`` unconstrained, ``2 tol / mu`` on KST's ball, with ``mu`` the
  public modulus of strong convexity of the solved objective: ``gamma / n +
  Delta`` for CMS, ``(gamma + Delta) / n`` for KST). Output
  perturbation adds ``2 n tol`` to the numerator of the sensitivity (``Delta =
  (2W + 2 n tol) / gamma``); objective perturbation spends a share ``kappa``
  of the budget (:func:`pydpowl.engine.mechanisms.smoothing_share`) on an
  extra output noise of rate ``kappa epsilon / (2 r)`` drawn after the solve
  from a generator derived from the stream's state without advancing it
  (:func:`pydpowl.engine.mechanisms.sample_smoothing_noise`): an R stream makes
  exactly DPpack's draws and ends where DPpack's does.
* ``True``: DPpack 0.2.2's arithmetic and draws exactly (validation and
  replay). Its proofs assume the exact minimiser, which no optimiser returns,
  so :class:`~pydpowl.exceptions.PrivacyLeakWarning` is emitted. For
  ``LogisticRegressionDP`` DPpack's optimiser uses ``gamma = 1`` whatever
  ``gamma`` is (a stray ``gamma <- 1`` in its namespace); the caller passes
  ``optimizer_gamma=1.0`` to reproduce it.

See docs/dppack_family.md for the constants and the proofs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np
from numpy.typing import NDArray

from ..engine.losses import MarginLoss
from ..engine.mechanisms import (
    cms_calibration,
    kst_calibration,
    sample_kst_noise,
    release_grid,
    round_release,
    sample_output_noise,
    sample_smoothing_noise,
    smoothing_share,
)
from ..engine.release import release_output_perturbation
from ..engine.problem import QuadraticProblem
from ..engine.solver import solve_least_squares, solve_weighted_erm

__all__ = ["PERTURBATIONS", "Release", "release_cms", "release_kst", "check_perturbation"]

#: DPpack's perturbation methods
PERTURBATIONS = ("objective", "output")


@dataclass(frozen=True)
class Release:
    """One private fit in the scaled space. Only ``coef`` is a release; the rest is private or public as noted.

    Attributes
    ----------
    coef : ndarray of shape (d,)
        The released coefficients (scaled space).
    minimiser : ndarray of shape (d,)
        PRIVATE. The certified minimiser of the objective that was solved (perturbed
        for objective perturbation); ``coef = minimiser + noise``.
    noise : ndarray of shape (d,)
        PRIVATE. Output noise (output perturbation), smoothing noise (objective
        perturbation, ``reproduce_dppack=False``) or zeros.
    linear_term : ndarray of shape (d,) or None
        PRIVATE. The linear term ``b`` of objective perturbation.
    epsilon : float
        Total budget (public).
    epsilon_objective : float
        Budget of the perturbation proper (``epsilon`` minus the smoothing share).
    epsilon_smoothing : float
        Budget of the smoothing noise (0 when none).
    Delta : float
        Extra curvature of objective perturbation in DPpack's units (0 for output perturbation).
    epsilon_prime : float
        CMS only: budget of the linear term (nan otherwise).
    rate : float
        Gamma rate of the norm of the linear term (objective) or of the output noise (output);
        nan for KST with delta > 0.
    sensitivity : float
        Output perturbation: the l2 sensitivity used; objective: nan.
    error_radius : float
        Public bound on the distance from the returned point to the exact minimiser (nan when not used).
    n_iter : int
        Newton iterations.
    grid : float or None
        The release grid ``coef`` was rounded to (None: full precision, with
        ``reproduce_dppack`` or without noise).
    """

    coef: NDArray[np.float64]
    minimiser: NDArray[np.float64]
    noise: NDArray[np.float64]
    linear_term: Optional[NDArray[np.float64]]
    epsilon: float
    epsilon_objective: float
    epsilon_smoothing: float
    Delta: float
    epsilon_prime: float
    rate: float
    sensitivity: float
    error_radius: float
    n_iter: int
    grid: Optional[float] = None


def check_perturbation(value: Any) -> str:
    """``"objective"`` or ``"output"``."""
    if not isinstance(value, str) or value not in PERTURBATIONS:
        raise ValueError(f"perturbation must be one of {{'objective', 'output'}}, got perturbation={value!r}.")
    return value


def _finite(coef: NDArray[np.float64], what: str) -> NDArray[np.float64]:
    if not np.all(np.isfinite(coef)):
        raise ValueError(f"the {what} overflowed (its scale is too large for double precision); "
                         "nothing was released.")
    return coef


def release_cms(Z: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64], *, loss: MarginLoss,
                gamma: float, epsilon: float, perturbation: str, curvature: float, weights_upper_bound: float,
                tol: float, reproduce_dppack: bool, rng: Any, optimizer_gamma: Optional[float] = None,
                backend: str = "auto") -> Release:
    """Objective or output perturbation of weighted ERM with a margin loss (DPpack's CMS).

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Rows of norm at most 1 (DPpack's scaled space).
    y : ndarray of shape (n,)
        Labels in {-1, 1}.
    w : ndarray of shape (n,)
        Weights in [0, weights_upper_bound] (ones for objective perturbation).
    loss : MarginLoss
        With ``|l'| <= 1``; ``curvature`` bounds ``l''`` (DPpack's ``c``).
    gamma, epsilon : float
    perturbation : {"objective", "output"}
    curvature : float
        DPpack's ``c``: 1/(2h) for the Huber hinge, 1/4 for the logistic loss.
    weights_upper_bound : float
        Public ``W`` (1 for unweighted fits, as DPpack).
    tol : float
        Certified gradient norm of the solver.
    reproduce_dppack : bool
        See the module docstring.
    rng : numpy.random.Generator or RRandom
    optimizer_gamma : float, optional
        The gamma of the objective actually minimised (default ``gamma``); only
        ``reproduce_dppack`` may set it (DPpack's ``LogisticRegressionDP`` uses 1).
    backend : {"auto", "numpy", "numba"}, default="auto"
        The solver's backend (:func:`pydpowl.engine.solver.solve_weighted_erm`).
    """
    n, d = Z.shape
    opt_gamma = gamma if optimizer_gamma is None else float(optimizer_gamma)
    if opt_gamma != gamma and not reproduce_dppack:
        raise ValueError("optimizer_gamma differs from gamma only to reproduce DPpack (reproduce_dppack=True).")
    if perturbation == "objective":
        if np.any(w != 1.0):
            raise ValueError("objective perturbation is for unweighted fits (DPpack refuses weights with it).")
        if epsilon == math.inf:  # DPpack: no draws, no extra curvature
            result = solve_weighted_erm(Z, y, w, gamma=opt_gamma, loss=loss, tol=tol, backend=backend, objective=False)
            zeros = np.zeros(d)
            return Release(coef=result.x.copy(), minimiser=result.x, noise=zeros, linear_term=zeros,
                           epsilon=epsilon, epsilon_objective=epsilon, epsilon_smoothing=0.0, Delta=0.0,
                           epsilon_prime=math.inf, rate=math.inf, sensitivity=math.nan, error_radius=math.nan,
                           n_iter=result.nit)
        if reproduce_dppack:
            kappa = 0.0
        else:  # the share depends on n tol only (r mu = tol whatever the modulus mu)
            kappa = smoothing_share(n=n, tol=tol, error_radius=tol * n / gamma, strong_convexity=gamma / n,
                                    gradient_sensitivity=2.0)
        eps_obj = epsilon * (1.0 - kappa)
        cal = cms_calibration(epsilon=eps_obj, gamma=gamma, c=curvature, n=n)
        # public modulus of strong convexity of the solved objective: gamma/n from the regulariser plus the
        # extra curvature Delta (public: a function of eps, c, gamma and n)
        radius = math.nan if reproduce_dppack else tol / (gamma / n + cal.Delta)
        b = sample_output_noise(d, cal.rate, rng=rng)
        result = solve_weighted_erm(Z, y, w, gamma=opt_gamma, loss=loss, tol=tol, extra_ridge=n * cal.Delta,
                                    linear=b, backend=backend, objective=False)
        if reproduce_dppack:
            noise, grid = np.zeros(d), None
            coef = _finite(result.x + noise, "objective perturbation")
        else:
            noise = sample_smoothing_noise(d, epsilon=epsilon * kappa, error_radius=radius, rng=rng)
            grid = _smoothing_grid(epsilon * kappa, radius)
            coef = _finite(round_release(result.x, noise, grid=grid), "objective perturbation")
        return Release(coef=coef, minimiser=result.x, noise=noise, linear_term=b, epsilon=epsilon,
                       epsilon_objective=eps_obj, epsilon_smoothing=epsilon - eps_obj, Delta=cal.Delta,
                       epsilon_prime=cal.epsilon_prime, rate=cal.rate, sensitivity=math.nan, error_radius=radius,
                       n_iter=result.nit, grid=grid)
    if perturbation != "output":
        raise ValueError(f"perturbation must be one of {{'objective', 'output'}}, got perturbation={perturbation!r}.")
    # output perturbation: the engine's one release (Delta = (2W + 2 n tol)/gamma, rounded to the release grid;
    # DPpack's arithmetic with reproduce_dppack; noise drawn even at eps = Inf, as DPpack)
    out = release_output_perturbation(Z, y, w, epsilon=epsilon, gamma=gamma, weights_upper_bound=weights_upper_bound,
                                      loss=loss, tol=tol, reproduce_dppack=reproduce_dppack, rng=rng,
                                      backend=backend, optimizer_gamma=opt_gamma)
    radius = math.nan if reproduce_dppack else n * tol / gamma
    return Release(coef=out.coef, minimiser=out.nonprivate_coef, noise=out.noise, linear_term=None, epsilon=epsilon,
                   epsilon_objective=epsilon, epsilon_smoothing=0.0, Delta=0.0, epsilon_prime=math.nan,
                   rate=epsilon / out.sensitivity, sensitivity=out.sensitivity, error_radius=radius,
                   n_iter=out.n_iter, grid=out.grid)


def _smoothing_grid(epsilon_smoothing: float, error_radius: float) -> Optional[float]:
    """The release grid under the smoothing noise (l2-Laplace of scale ``2 r / epsilon_s``, as output noise
    of sensitivity ``2 r``): the same floating-point-safe rounding as every release."""
    return release_grid(sensitivity=2.0 * error_radius, epsilon=epsilon_smoothing)


def release_kst(Z: Union[NDArray[np.float64], QuadraticProblem], y: Optional[NDArray[np.float64]] = None, *,
                gamma: float, epsilon: float, delta: float, tol: float, reproduce_dppack: bool, rng: Any) -> Release:
    """Kifer, Smith & Thakurta's objective perturbation for linear regression (DPpack's KST).

    Minimises ``(1/n) sum (y_i - x_i'theta)^2/2 + (gamma + Delta)/(2n) ||theta||^2 + b'theta/n``
    over ``||theta||^2 <= p`` (``p`` columns of ``Z``, intercept included).

    Parameters
    ----------
    Z : ndarray of shape (n, p), or QuadraticProblem
        Rows with ``|x_ij| <= 1`` (DPpack's scaling by ``max(|lower|, |upper|)``),
        or their sufficient statistics with the targets (then ``y`` is not given).
    y : ndarray of shape (n,)
        Targets with ``|y_i| <= p`` (DPpack's scaling).
    gamma, epsilon : float
    delta : float
        0 for pure epsilon-DP (l2-Laplace ``b``), in (0, 1) for (epsilon, delta)-DP (Gaussian ``b``).
    tol : float
        Certified KKT residual of the solver.
    reproduce_dppack : bool
        See the module docstring. Without it the answer also gets the smoothing
        noise and is projected back onto the ball (post-processing).
    rng : numpy.random.Generator or RRandom
    """
    rows = Z if isinstance(Z, QuadraticProblem) else QuadraticProblem.from_rows(Z, y)
    n, p = rows.n, rows.d
    radius_ball = math.sqrt(p)
    if reproduce_dppack or epsilon == math.inf:
        kappa = 0.0
    else:
        cal0 = kst_calibration(epsilon=epsilon, delta=delta, p=p)
        kappa = smoothing_share(n=n, tol=tol, error_radius=2.0 * tol * n / gamma, strong_convexity=gamma / n,
                                gradient_sensitivity=2.0 * cal0.zeta)
    eps_obj = epsilon * (1.0 - kappa)
    cal = kst_calibration(epsilon=eps_obj, delta=delta, p=p)
    # public modulus of strong convexity of the solved objective: (gamma + Delta)/n, Delta = 2 lambda/eps public;
    # the KKT certificate on the ball places the answer within 2 tol/mu of the minimiser (pydpowl.engine.solver)
    err = math.nan if kappa == 0 else 2.0 * tol / ((gamma + cal.Delta) / n)
    b = sample_kst_noise(cal, rng=rng)
    result = solve_least_squares(rows, gamma=gamma, extra_ridge=cal.Delta, linear=b, radius=radius_ball, tol=tol)
    grid = None
    if kappa > 0:
        noise = sample_smoothing_noise(p, epsilon=epsilon * kappa, error_radius=err, rng=rng)
        grid = _smoothing_grid(epsilon * kappa, err)
        coef = round_release(result.x, noise, grid=grid) if np.all(np.isfinite(result.x + noise)) else result.x + noise
        norm = float(np.linalg.norm(coef))
        if norm > radius_ball:  # back onto the domain: post-processing, keeps |x'theta| <= p for tuning
            coef = coef * (radius_ball / norm)
    else:
        noise = np.zeros(p)
        coef = result.x.copy()
    coef = _finite(coef, "objective perturbation")
    rate = cal.rate if delta == 0 else math.nan
    return Release(coef=coef, minimiser=result.x, noise=noise, linear_term=b, epsilon=epsilon,
                   epsilon_objective=eps_obj, epsilon_smoothing=epsilon - eps_obj, Delta=cal.Delta,
                   epsilon_prime=math.nan, rate=rate, sensitivity=math.nan, error_radius=err, n_iter=result.nit,
                   grid=grid)
