"""Objective perturbation for weighted ERM (weights in [0, W], no weight sensitivity): calibration and release.

Each record's loss is ``w_i l(y_i z_i'theta)`` with ``0 <= w_i <= W``,
``||z_i|| <= 1``, ``|l'| <= L`` and ``0 <= l'' <= c`` (``c = 1/(2h)`` for the
Huber hinge): W L-Lipschitz with curvature at most ``W c``. The mechanism
minimises

    G(theta) = sum_i w_i l(y_i z_i'theta) + (lambda / 2) ||theta||^2 + b'theta

(``F = G / n`` in the solver's units) with ``lambda = max(gamma, W c / (e^{s epsilon} - 1))``
(``s`` = :data:`JACOBIAN_SHARE` by default) and ``b`` of density proportional to
``exp(-epsilon_b ||b|| / (2 W L))``, ``epsilon_b = epsilon - log(1 + W c / lambda)``:
its norm is Gamma(d, rate ``epsilon_b / (2 W L)``) and its direction uniform.

Why it is ``epsilon``-DP for one record replaced (docs/privacy_audit.md has the
full argument): ``theta`` is the minimiser exactly when
``b = b_D(theta) = -grad L_D(theta) - lambda theta``, a Lipschitz bijection, so
the minimiser has density ``nu(b_D(theta)) |det J_D(theta)|`` with
``J_D = lambda I + sum_i w_i l''_i z_i z_i'`` (area formula; ``l''`` exists
almost everywhere). For neighbours D, D' (record j replaced):
``||b_D(theta) - b_D'(theta)|| <= 2 W L``, which costs ``epsilon_b``; and
``J_D = M + a a'``, ``J_D' = M + a' a''`` with ``M >= lambda I`` common and
``||a||^2, ||a'||^2 <= W c``, so ``det J_D / det J_D' <= det(M + a a') / det M
= 1 + a' M^{-1} a <= 1 + W c / lambda``. The total is ``epsilon``.
(Chaudhuri, Monteleoni and Sarwate bound the same ratio by
``(1 + c/lambda)^2`` in their units, which is what DPpack's CMS uses: twice
the log.)

The certified solver returns a point within ``r = n tol / lambda`` of the exact
minimiser; as in the family's objective perturbation
(:mod:`pydpowl.estimators._perturbation`), a share ``kappa`` of the budget
releases it with an extra noise of rate ``kappa epsilon / (2 r)`` (adaptive
composition given the exact minimiser), drawn from a generator derived from
the stream without advancing it, and the exact sum is rounded to the release
grid (floating-point safe).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from numpy.typing import NDArray

from .._validation import check_epsilon, check_positive, check_probability
from .losses import MarginLoss, loss_lipschitz
from .mechanisms import release_grid, round_release, sample_output_noise, sample_smoothing_noise, smoothing_share
from .solver import DEFAULT_TOL, solve_weighted_erm

__all__ = ["JACOBIAN_SHARE", "ObjectiveCalibration", "objective_calibration", "objective_ridge_floor",
           "ObjectiveRelease", "release_objective_perturbation", "loss_curvature"]

#: share of the budget the Jacobian term may take at most: lambda >= W c / (e^{share epsilon} - 1)
JACOBIAN_SHARE = 0.5


@dataclass(frozen=True)
class ObjectiveCalibration:
    """Public constants of weighted objective perturbation (see the module docstring).

    Attributes
    ----------
    epsilon : float
        Budget of the exact minimiser.
    ridge : float
        ``lambda``, the whole ridge of ``G`` (DPpack's gamma units): ``max(gamma, W c / (e^{s epsilon} - 1))``.
    extra_ridge : float
        ``lambda - gamma`` (0 when gamma already suffices).
    epsilon_jacobian : float
        ``log(1 + W c / lambda)``: what the change of the Hessian costs.
    epsilon_linear : float
        ``epsilon - epsilon_jacobian``: the budget of the linear term.
    gradient_sensitivity : float
        ``2 W L``: the largest change of ``b_D(theta)`` when one record is replaced.
    rate : float
        ``epsilon_linear / (2 W L)``: Gamma rate of ``||b||`` (``inf`` for ``epsilon = inf``).
    """

    epsilon: float
    ridge: float
    extra_ridge: float
    epsilon_jacobian: float
    epsilon_linear: float
    gradient_sensitivity: float
    rate: float


def objective_ridge_floor(*, epsilon: float, weights_upper_bound: float, curvature: float,
                          jacobian_share: float = JACOBIAN_SHARE) -> float:
    """``W c / (e^{share epsilon} - 1)``: the smallest ridge that keeps the Jacobian term within ``share epsilon``.

    0 for ``epsilon = inf``.
    """
    eps = check_epsilon(epsilon)
    W = check_positive("weights_upper_bound", weights_upper_bound)
    c = check_positive("curvature", curvature)
    share = check_probability("jacobian_share", jacobian_share, low_open=True, high_open=True)
    if eps == math.inf:
        return 0.0
    return W * c / math.expm1(share * eps)


def objective_calibration(*, epsilon: float, gamma: float, weights_upper_bound: float, curvature: float,
                          lipschitz: float = 1.0, jacobian_share: float = JACOBIAN_SHARE) -> ObjectiveCalibration:
    """The ridge and the linear term's law of weighted objective perturbation.

    Parameters
    ----------
    epsilon : float
        Budget of the exact minimiser in (0, inf]; ``inf``: no noise, ridge ``gamma``.
    gamma : float
        The analyst's ridge (DPpack's convention, ``F = ... + gamma/(2n) ||theta||^2``).
    weights_upper_bound : float
        Public W (every weight in [0, W]).
    curvature : float
        ``c`` with ``0 <= l'' <= c`` (1/(2h) for the Huber hinge, 1/4 for the logistic loss).
    lipschitz : float, default=1.0
        ``L`` with ``|l'| <= L``.
    jacobian_share : float, default=0.5
        ``s`` in (0, 1): the ridge is raised to ``W c / (e^{s epsilon} - 1)`` when
        gamma is smaller, so the Jacobian term costs at most ``s epsilon``.
    """
    eps = check_epsilon(epsilon)
    gamma = check_positive("gamma", gamma)
    W = check_positive("weights_upper_bound", weights_upper_bound)
    c = check_positive("curvature", curvature)
    lip = check_positive("lipschitz", lipschitz)
    floor = objective_ridge_floor(epsilon=eps, weights_upper_bound=W, curvature=c, jacobian_share=jacobian_share)
    sens = 2.0 * W * lip
    if eps == math.inf:
        return ObjectiveCalibration(epsilon=eps, ridge=gamma, extra_ridge=0.0, epsilon_jacobian=0.0,
                                    epsilon_linear=math.inf, gradient_sensitivity=sens, rate=math.inf)
    ridge = max(gamma, floor)
    eps_jac = math.log1p(W * c / ridge)
    eps_lin = eps - eps_jac
    if not eps_lin > 0:  # cannot happen: ridge >= floor gives eps_jac <= share * eps < eps
        raise AssertionError(f"objective perturbation: no budget left for the linear term ({eps_lin!r}).")
    return ObjectiveCalibration(epsilon=eps, ridge=ridge, extra_ridge=ridge - gamma, epsilon_jacobian=eps_jac,
                                epsilon_linear=eps_lin, gradient_sensitivity=sens, rate=eps_lin / sens)


def loss_curvature(loss: MarginLoss) -> float:
    """The loss's declared bound on ``l''`` (objective perturbation needs one)."""
    c = getattr(loss, "curvature_bound", None)
    if c is None or not (math.isfinite(float(c)) and float(c) > 0):
        raise ValueError(f"objective perturbation needs a bound on the loss's curvature l''; the loss "
                         f"{getattr(loss, 'name', loss)!r} declares curvature_bound={c!r} (declare a positive one, "
                         "or use output perturbation).")
    return float(c)


@dataclass(frozen=True, eq=False)
class ObjectiveRelease:
    """What :func:`release_objective_perturbation` made. Only ``coef`` is a release.

    Attributes
    ----------
    coef : ndarray of shape (d,)
        The release (scaled space), rounded to ``grid``.
    calibration : ObjectiveCalibration
        Public constants of the perturbation proper (at ``epsilon_objective``).
    epsilon, epsilon_objective, epsilon_smoothing : float
        The budget, its share for the exact minimiser, and the solver-smoothing share.
    error_radius : float
        ``n tol / lambda``: public bound on the distance from the answer to the exact minimiser (nan at inf).
    grid : float or None
        Release grid (None for ``epsilon = inf``).
    n_iter : int
    minimiser, linear_term, noise : ndarray of shape (d,)
        PRIVATE: the certified minimiser of the perturbed objective, ``b`` and the smoothing noise.
    grad_norm : float
        PRIVATE diagnostic: the certified gradient norm.
    """

    coef: NDArray[np.float64]
    calibration: ObjectiveCalibration
    epsilon: float
    epsilon_objective: float
    epsilon_smoothing: float
    error_radius: float
    grid: Optional[float]
    n_iter: int
    minimiser: NDArray[np.float64]
    linear_term: NDArray[np.float64]
    noise: NDArray[np.float64]
    grad_norm: float

    @property
    def noise_scale(self) -> float:
        """Scale ``2 r / epsilon_smoothing`` of the smoothing noise the release is rounded under (nan at inf)."""
        if self.epsilon_smoothing == 0:
            return math.nan
        return 2.0 * self.error_radius / self.epsilon_smoothing


def release_objective_perturbation(Z: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64], *,
                                   epsilon: float, gamma: float, weights_upper_bound: float, loss: MarginLoss,
                                   tol: float = DEFAULT_TOL, rng: Any, backend: str = "auto",
                                   jacobian_share: float = JACOBIAN_SHARE) -> ObjectiveRelease:
    """Weighted objective perturbation with the solver-smoothing composition, rounded to the release grid.

    Parameters
    ----------
    Z, y, w : ndarray
        Rows of norm at most 1, labels in {-1, 1}, weights in [0, W], already
        checked (or built to satisfy it) by the caller. The weights must not
        depend on other records (weight sensitivity 0): known propensities, or
        anything released before.
    epsilon, gamma, weights_upper_bound : float
        Checked public settings (``epsilon`` may be inf: the exact minimiser at ridge gamma).
    loss : MarginLoss
        With a Lipschitz constant and a curvature bound.
    tol : float
        The solver's certified gradient norm (``F = G / n``).
    rng : numpy Generator or RRandom
        The linear term is drawn from it (``rgamma`` then ``rnorm`` with an R
        stream); the smoothing noise from a generator derived from it.
    backend : {"auto", "numpy", "numba"}
    jacobian_share : float, default=0.5
        See :func:`objective_calibration`.

    Raises
    ------
    ValueError
        When no floating-point-safe release exists (the noise overflows): nothing is released.
    ConvergenceError
        When the solver cannot certify its answer.
    """
    n, d = Z.shape
    eps = check_epsilon(epsilon)
    W = check_positive("weights_upper_bound", weights_upper_bound)
    lip = loss_lipschitz(loss)
    c = loss_curvature(loss)
    tol = check_positive("tol", tol)
    if eps == math.inf:
        cal = objective_calibration(epsilon=eps, gamma=gamma, weights_upper_bound=W, curvature=c, lipschitz=lip)
        result = solve_weighted_erm(Z, y, w, gamma=gamma, loss=loss, tol=tol, backend=backend, objective=False)
        zeros = np.zeros(d)
        return ObjectiveRelease(coef=result.x.copy(), calibration=cal, epsilon=eps, epsilon_objective=eps,
                                epsilon_smoothing=0.0, error_radius=math.nan, grid=None, n_iter=result.nit,
                                minimiser=result.x, linear_term=zeros, noise=zeros, grad_norm=result.grad_norm)
    # the smoothing share depends on n tol and the gradient sensitivity only (r mu = tol for any modulus mu)
    kappa = smoothing_share(n=n, tol=tol, error_radius=n * tol / gamma, strong_convexity=gamma / n,
                            gradient_sensitivity=2.0 * W * lip)
    eps_obj = eps * (1.0 - kappa)
    cal = objective_calibration(epsilon=eps_obj, gamma=gamma, weights_upper_bound=W, curvature=c, lipschitz=lip,
                                jacobian_share=jacobian_share)
    radius = n * tol / cal.ridge  # F = G / n is (ridge / n)-strongly convex
    b = sample_output_noise(d, cal.rate, rng=rng)
    if not np.all(np.isfinite(b)):
        raise ValueError(f"the linear term for epsilon={eps!r}, W={W!r} overflowed; nothing was released.")
    result = solve_weighted_erm(Z, y, w, gamma=gamma, loss=loss, tol=tol, extra_ridge=cal.extra_ridge, linear=b,
                                backend=backend, objective=False)
    eps_s = eps * kappa
    noise = sample_smoothing_noise(d, epsilon=eps_s, error_radius=radius, rng=rng)
    grid = release_grid(sensitivity=2.0 * radius, epsilon=eps_s)
    if not np.all(np.isfinite(result.x + noise)):
        raise ValueError("the objective-perturbation release overflowed; nothing was released.")
    coef = round_release(result.x, noise, grid=grid)
    return ObjectiveRelease(coef=coef, calibration=cal, epsilon=eps, epsilon_objective=eps_obj,
                            epsilon_smoothing=eps_s, error_radius=radius, grid=grid, n_iter=result.nit,
                            minimiser=result.x, linear_term=b, noise=noise, grad_norm=result.grad_norm)
