"""One output-perturbation release (Algorithm 1) on data already in the scaled space.

This is the one place where a DP-wERM release is made: the public settings are
turned into the sensitivity and the release grid, the certified solver finds
the minimiser, the noise is drawn and the exact sum is rounded to the grid.
:class:`pydpowl.DPWeightedERM` (and through it :class:`pydpowl.DPOWL`) and the
R front end's worker call it; it imports numpy and the engine only (no
scikit-learn), so a worker that never builds an estimator starts fast.

The guarantee and its derivation (``Delta = (L (C + 2W) + 2 n tol)/gamma``,
the grid and its ``delta``) are in docs/privacy_audit.md.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from numpy.typing import NDArray

from .losses import MarginLoss, loss_lipschitz
from .mechanisms import noise_rate, output_sensitivity, release_grid, round_release, sample_output_noise
from ..exceptions import PrivacyLeakWarning
from .solver import DEFAULT_TOL, solve_weighted_erm

__all__ = ["OutputRelease", "check_noise_scale", "release_output_perturbation", "warn_reproduce_dppack"]


def warn_reproduce_dppack(estimator: str, *, extra: str = "", stacklevel: int = 2) -> None:
    """The :class:`PrivacyLeakWarning` of a fit with ``reproduce_dppack=True`` (validation and replay only).

    ``stacklevel`` counts from the caller of this function (2: the caller's caller).
    """
    warnings.warn(
        f"{estimator}(reproduce_dppack=True) reproduces DPpack 0.2.2's arithmetic and draws for validation and "
        "replay: the release is full precision (not floating-point safe: its last bits can reveal the data) and "
        "its calibration assumes an exact minimiser, which no optimiser returns (Delta omits the solver "
        "tolerance); it carries no proven privacy guarantee. Do not publish it." + (" " + extra if extra else ""),
        PrivacyLeakWarning, stacklevel=stacklevel + 1,
    )


def check_noise_scale(epsilon: float, gamma: float, weights_upper_bound: float, C: float, *,
                      lipschitz: float = 1.0, n_samples: int = 0, tol: float = 0.0) -> None:
    """Refuse settings whose sensitivity or noise scale is not a finite positive float.

    Extreme but individually valid settings (``epsilon=1e-320``, ``C=1e308``,
    ``W / gamma`` near the float range) would otherwise release infinite or
    NaN coefficients. Checked before the data are touched (``n_samples`` and
    ``tol`` add the solver-tolerance term once n is known).
    """
    top = lipschitz * (C + 2.0 * weights_upper_bound) + 2.0 * n_samples * tol
    delta = top / gamma
    rate = gamma * epsilon / top
    ok = math.isfinite(delta) and delta > 0 and rate > 0 and (rate == math.inf or math.isfinite(1.0 / rate))
    if not ok:
        raise ValueError(
            f"epsilon={epsilon!r}, gamma={gamma!r}, weights_upper_bound={weights_upper_bound!r} and C={C!r} "
            f"(with lipschitz={lipschitz!r}, n={n_samples!r}, tol={tol!r}) give a sensitivity "
            f"Delta = (L (C + 2W) + 2 n tol)/gamma = {delta!r} and noise scale Delta/epsilon = "
            f"{(delta / epsilon if epsilon else math.inf)!r}, which must be finite and > 0; nothing was released."
        )


@dataclass(frozen=True, eq=False)
class OutputRelease:
    """What :func:`release_output_perturbation` made.

    Attributes
    ----------
    coef : ndarray of shape (d,)
        The release (scaled space): public.
    sensitivity : float
        Delta (public settings only).
    grid : float or None
        The release grid (None for ``epsilon = inf`` or ``reproduce_dppack``).
    n_iter : int
        Newton iterations (a data-dependent diagnostic).
    nonprivate_coef, noise : ndarray of shape (d,)
        PRIVATE: the exact minimiser and the noise. Callers drop them unless
        the analyst opted in for validation (``keep_nonprivate``).
    grad_norm : float
        The certified gradient norm (private diagnostic).
    """

    coef: NDArray[np.float64]
    sensitivity: float
    grid: Optional[float]
    n_iter: int
    nonprivate_coef: NDArray[np.float64]
    noise: NDArray[np.float64]
    grad_norm: float


def release_output_perturbation(Z: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64], *,
                                epsilon: float, gamma: float, weights_upper_bound: float, loss: MarginLoss,
                                C: float = 0.0, tol: float = DEFAULT_TOL, reproduce_dppack: bool = False,
                                rng: Any, backend: str = "auto",
                                optimizer_gamma: Optional[float] = None) -> OutputRelease:
    """Solve exactly, add the noise of Algorithm 1 and round to the release grid.

    Parameters
    ----------
    Z, y, w : ndarray
        Rows of norm at most 1, labels in {-1, 1}, weights in [0, W]: already
        checked (or built to satisfy it) by the caller.
    epsilon, gamma, weights_upper_bound, C : float
        Checked public settings (``epsilon`` may be inf).
    loss : MarginLoss
        A loss :func:`pydpowl.engine.losses.get_loss` accepted.
    tol : float, default=DEFAULT_TOL
        The certified gradient norm; it enters Delta as ``2 n tol / gamma``.
    reproduce_dppack : bool, default=False
        DPpack's arithmetic bit for bit: no tolerance term, no grid.
        Validation only (not floating-point safe).
    rng : numpy Generator or RRandom
        The noise (``rgamma`` then ``rnorm`` with an R stream).
    backend : {"auto", "numpy", "numba"}, default="auto"
        The solver's backend.
    optimizer_gamma : float, optional
        The gamma of the objective actually minimised when it differs from the
        ``gamma`` the noise is calibrated for: only with ``reproduce_dppack``
        (DPpack's ``LogisticRegressionDP`` minimises with gamma = 1).

    Raises
    ------
    ValueError
        When the settings leave no finite noise scale or no floating-point-safe
        grid, or the noise overflows: nothing is released.
    ConvergenceError
        When the solver cannot certify its answer: nothing is released.
    """
    n, d = Z.shape
    if optimizer_gamma is not None and optimizer_gamma != gamma and not reproduce_dppack:
        raise ValueError("optimizer_gamma differs from gamma only to reproduce DPpack (reproduce_dppack=True).")
    lip = loss_lipschitz(loss)
    tol_in_delta = 0.0 if reproduce_dppack else tol  # DPpack's Delta has no tolerance term
    check_noise_scale(epsilon, gamma, weights_upper_bound, C, lipschitz=lip, n_samples=n, tol=tol_in_delta)
    law = dict(gamma=gamma, weights_upper_bound=weights_upper_bound, C=C, lipschitz=lip, n_samples=n,
               tol=tol_in_delta)
    delta = output_sensitivity(**law)
    grid = None if reproduce_dppack else release_grid(sensitivity=delta, epsilon=epsilon)
    reach = n * (weights_upper_bound * lip + tol) / gamma  # public bound on |theta_k|: gamma theta = -sum w y l' z
    if grid is not None and not reach < grid * 2.0 ** 49:
        raise ValueError(
            f"the solution may reach n (W L + tol)/gamma = {reach:.3g}, beyond 2^49 times the release grid "
            f"{grid:.3g} (Delta/epsilon = {delta / epsilon:.3g}): no floating-point-safe rounding exists at that "
            "scale; nothing was released (raise epsilon's noise scale or lower n W / gamma)."
        )
    result = solve_weighted_erm(Z, y, w, gamma=gamma if optimizer_gamma is None else optimizer_gamma, loss=loss,
                                tol=tol, backend=backend, objective=False)
    noise = sample_output_noise(d, noise_rate(epsilon=epsilon, **law), rng=rng)
    release = result.x + noise
    if np.all(np.isfinite(release)) and grid is not None:
        release = round_release(result.x, noise, grid=grid)
    if not np.all(np.isfinite(release)):
        raise ValueError(
            f"the noise for epsilon={epsilon!r}, gamma={gamma!r}, weights_upper_bound={weights_upper_bound!r}, "
            f"C={C!r} overflowed (its scale is too large for double precision); nothing was released."
        )
    return OutputRelease(coef=release, sensitivity=delta, grid=grid, n_iter=result.nit,
                         nonprivate_coef=result.x, noise=noise, grad_norm=result.grad_norm)
