"""Least-squares value-function fits and their closed forms.

Three objectives over ``theta`` in ``R^d``, with features ``Phi`` (N x d), the
first-visit averages ``F_X`` and counts ``n_s`` (see :mod:`.episodes`):

* fixed weights (LSW):  ``J^w(theta) = sum_s w_s (F_{X,s} - phi_s' theta)^2``;
* plain (LS):           ``J(theta) = sum_s rho_s (n_s/m) (F_{X,s} - phi_s' theta)^2``;
* ridge (LSL):          ``J^lambda(theta) = J(theta) + lambda/(2m) ||theta||^2``.

The closed-form minimisers are certified: the gradient of the objective at the
returned point must vanish to a relative tolerance, otherwise
:class:`~pydpowl.exceptions.ConvergenceError` is raised (output perturbation
is private only for the exact minimiser).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..exceptions import ConvergenceError

__all__ = [
    "weighted_objective",
    "plain_objective",
    "ridge_objective",
    "check_full_rank",
    "lsw_solution",
    "ls_solution",
    "lsl_solution",
]

_RESIDUAL_TOL = 1e-9


def weighted_objective(
    theta: NDArray[np.float64],
    features: NDArray[np.float64],
    weights: NDArray[np.float64],
    averages: NDArray[np.float64],
) -> float:
    """``J^w(theta) = sum_s w_s (F_{X,s} - phi_s' theta)^2``."""
    resid = averages - features @ theta
    return float(np.sum(weights * resid**2))


def plain_objective(
    theta: NDArray[np.float64],
    features: NDArray[np.float64],
    rho: NDArray[np.float64],
    counts: NDArray[np.int64],
    averages: NDArray[np.float64],
    n_episodes: int,
) -> float:
    """``J(theta) = sum_s rho_s (n_s / m) (F_{X,s} - phi_s' theta)^2``."""
    resid = averages - features @ theta
    return float(np.sum(rho * counts / n_episodes * resid**2))


def ridge_objective(
    theta: NDArray[np.float64],
    features: NDArray[np.float64],
    rho: NDArray[np.float64],
    counts: NDArray[np.int64],
    averages: NDArray[np.float64],
    n_episodes: int,
    regularization: float,
) -> float:
    """``J^lambda(theta) = J(theta) + lambda / (2 m) ||theta||^2``."""
    return plain_objective(theta, features, rho, counts, averages, n_episodes) + float(
        regularization / (2.0 * n_episodes) * theta @ theta
    )


def check_full_rank(
    features: NDArray[np.float64], weights: NDArray[np.float64], *, name: str = "weights"
) -> float:
    """Check that ``Phi' W Phi`` is invertible and return ``sigma_min(W^{1/2} Phi)``.

    Raises
    ------
    ValueError
        If ``W^{1/2} Phi`` has numerical rank below ``d``. Features and weights
        are public, so the message may quote them.
    """
    design = np.sqrt(weights)[:, None] * features
    sv = np.linalg.svd(design, compute_uv=False)
    d = features.shape[1]
    tol = sv.max(initial=0.0) * max(design.shape) * np.finfo(np.float64).eps
    rank = int(np.sum(sv > tol))
    if sv.shape[0] < d or rank < d:
        raise ValueError(
            f"features weighted by {name} must have full column rank d={d} "
            f"(Phi' W Phi must be invertible); its numerical rank is {rank}. Give every "
            f"feature column positive {name} on some state and remove collinear columns."
        )
    return float(sv[-1])


def _certify(matrix: NDArray[np.float64], rhs: NDArray[np.float64], theta: NDArray[np.float64],
             what: str) -> None:
    grad = matrix @ theta - rhs
    scale = np.linalg.norm(matrix, 2) * np.linalg.norm(theta) + np.linalg.norm(rhs)
    resid = float(np.linalg.norm(grad))
    if not np.isfinite(resid) or resid > _RESIDUAL_TOL * max(scale, np.finfo(float).tiny):
        raise ConvergenceError(
            f"{what}: the normal-equation residual {resid:.1e} exceeds "
            f"{_RESIDUAL_TOL:.0e} x scale {scale:.1e}; nothing was released."
        )


def lsw_solution(
    features: NDArray[np.float64],
    weights: NDArray[np.float64],
    averages: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Minimiser of :func:`weighted_objective`: ``(Phi'W Phi)^{-1} Phi'W F_X``.

    Raises
    ------
    ValueError
        If ``Phi' W Phi`` is singular (see :func:`check_full_rank`).
    ConvergenceError
        If the solution does not satisfy the normal equations.
    """
    check_full_rank(features, weights)
    root_w = np.sqrt(weights)
    design = root_w[:, None] * features
    theta, *_ = np.linalg.lstsq(design, root_w * averages, rcond=None)
    _certify(design.T @ design, design.T @ (root_w * averages), theta, "LSW solution")
    return theta


def ls_solution(
    features: NDArray[np.float64],
    rho: NDArray[np.float64],
    counts: NDArray[np.int64],
    averages: NDArray[np.float64],
    n_episodes: int,
) -> NDArray[np.float64]:
    """Minimiser of :func:`plain_objective` (pseudo-inverse when singular).

    ``theta_X = (Phi' Gamma_X Phi)^+ Phi' Gamma_X F_X`` with
    ``Gamma_X = diag(rho_s n_s / m)``; of all minimisers it returns the one of
    least norm. Non-private reference only.
    """
    gamma_x = rho * counts / n_episodes
    root = np.sqrt(gamma_x)
    theta, *_ = np.linalg.lstsq(root[:, None] * features, root * averages, rcond=None)
    return theta


def lsl_solution(
    features: NDArray[np.float64],
    rho: NDArray[np.float64],
    counts: NDArray[np.int64],
    averages: NDArray[np.float64],
    n_episodes: int,
    regularization: float,
) -> NDArray[np.float64]:
    """Minimiser of :func:`ridge_objective`.

    ``theta^lambda_X = (Phi' D_X Phi + (lambda/2) I)^{-1} Phi' D_X F_X`` with
    ``D_X = diag(rho_s n_s)``, which equals
    ``(Phi' Gamma_X Phi + lambda/(2m) I)^{-1} Phi' Gamma_X F_X``.

    Raises
    ------
    ConvergenceError
        If the solution does not satisfy the normal equations.
    """
    if not regularization > 0:
        raise ValueError(
            f"regularization must be in (0, inf), got regularization={regularization!r}."
        )
    d_x = rho * counts
    matrix = features.T @ (d_x[:, None] * features) + 0.5 * regularization * np.eye(
        features.shape[1]
    )
    rhs = features.T @ (d_x * averages)
    theta = np.linalg.solve(matrix, rhs)
    _certify(matrix, rhs, theta, "LSL solution")
    return theta
