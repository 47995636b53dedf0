"""Many noisy releases of one certified solution, for simulation studies (the releases themselves are made by
:mod:`pydpowl.engine.mechanisms`; this module only draws them many times).

Only the noise depends on epsilon, so a study of the mechanism solves the
problem once and draws fresh noise for each run and each epsilon. Each row is
distributed exactly as the release of a separate DP-OWL fit with that epsilon
(the same Delta, solver-tolerance term included, and the same floating-point-
safe rounding); publishing several of them for the same data would compose
(their epsilons add).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .._validation import check_array
from ..engine.mechanisms import perturb
from ..engine.preprocessing import FeatureScaler
from ..engine.solver import DEFAULT_TOL

__all__ = ["noisy_releases", "decision_values"]


def noisy_releases(scaled_solution: NDArray[np.float64], *, epsilon: float, gamma: float,
                   weights_upper_bound: float, C: float = 0.0, n_samples: int, tol: float = DEFAULT_TOL,
                   n_releases: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """``n_releases`` releases of one solution (scaled space), each as a separate DP-OWL fit's.

    Parameters
    ----------
    scaled_solution : ndarray of shape (d,)
        The certified minimiser in the scaled space (private).
    epsilon, gamma, weights_upper_bound, C : float
        As in :class:`pydpowl.DPOWL`.
    n_samples : int
        Rows the solution was fitted on.
    tol : float, default=DEFAULT_TOL
        The solver's certified gradient norm.
    n_releases : int
    rng : numpy.random.Generator
    """
    theta = np.asarray(scaled_solution, dtype=np.float64)
    return perturb(np.repeat(theta[None, :], n_releases, axis=0), epsilon=epsilon, gamma=gamma,
                   weights_upper_bound=weights_upper_bound, C=C, n_samples=n_samples, tol=tol, rng=rng)


def decision_values(X, scaled_coefs: NDArray[np.float64], scaler: FeatureScaler) -> NDArray[np.float64]:
    """Decision values ``f_k(x_i)`` of each release (columns) on each row of ``X`` (unclipped).

    Returns
    -------
    ndarray of shape (n, K)
    """
    X = check_array("X", X)
    coefs = np.atleast_2d(scaled_coefs)
    original = coefs / (scaler.column_scale * scaler.dimension_scale)
    if scaler.fit_intercept:
        return X @ original[:, 1:].T + original[:, 0][None, :]
    return X @ original.T
