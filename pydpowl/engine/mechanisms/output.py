"""Output perturbation (Algorithm 1, DP-wERM; DPpack's ``perturbation.method = "output"``).

The release is ``theta_hat + b`` where ``b`` has density proportional to
``exp(-epsilon ||b|| / Delta)``: its norm is Gamma(shape=d, rate=epsilon/Delta)
and its direction is uniform on the sphere (:func:`sample_output_noise`; the
norm is drawn first and the direction second, in DPpack's order), then the
exact sum is rounded to the release grid (:mod:`.rounding`).

``Delta = (L (C + 2W) + 2 n tol) / gamma`` (:func:`output_sensitivity`, the one
place it is written): ``L`` bounds the loss's derivative, ``C`` the total
change of the other records' weights, ``W`` every weight, and
``2 n tol / gamma`` covers the solver, whose answer is only certified to lie
within ``n tol / gamma`` of the exact minimiser.

:func:`output_mechanism` turns the public settings into an
:class:`OutputMechanism` (every check, the grid and the reach guard, before the
data are touched); its :meth:`~OutputMechanism.release` is the one place an
output-perturbation release is made: :func:`release_output_perturbation` (the
estimators and the R front end), :func:`perturb` (the studies' batches) and
private gamma selection (:mod:`pydpowl.privacy.selection`) all go through it.
The guarantee and its derivation are in docs/privacy_audit.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._validation import check_epsilon, check_int, check_positive, check_weight_sensitivity
from ..losses import MarginLoss, loss_lipschitz
from ..solver import DEFAULT_TOL, solve_weighted_erm
from ._common import check_tol, is_r_stream, r_sum_of_squares
from .rounding import floating_point_delta, release_grid, round_release

__all__ = [
    "output_sensitivity",
    "noise_rate",
    "check_noise_scale",
    "sample_output_noise",
    "sample_output_noise_batch",
    "OutputMechanism",
    "output_mechanism",
    "OutputRelease",
    "release_output_perturbation",
    "perturb",
]


def _numerator(*, weights_upper_bound: float, C: float, lipschitz: float, n_samples: int, tol: float) -> float:
    """``L (C + 2W) + 2 n tol``: ``gamma`` times the sensitivity (the one place it is written)."""
    return float(lipschitz) * (float(C) + 2.0 * float(weights_upper_bound)) + 2.0 * int(n_samples) * float(tol)


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
    c = check_weight_sensitivity(C)
    return _numerator(weights_upper_bound=w_max, C=c, lipschitz=lip, n_samples=n, tol=check_tol(tol)) / gamma


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
    return float(gamma) * eps / _numerator(weights_upper_bound=weights_upper_bound, C=C, lipschitz=lipschitz,
                                           n_samples=n_samples, tol=tol)


def check_noise_scale(epsilon: float, gamma: float, weights_upper_bound: float, C: float, *,
                      lipschitz: float = 1.0, n_samples: int = 0, tol: float = 0.0) -> None:
    """Refuse settings whose sensitivity or noise scale is not a finite positive float.

    Extreme but individually valid settings (``epsilon=1e-320``, ``C=1e308``,
    ``W / gamma`` near the float range) would otherwise release infinite or
    NaN coefficients. Checked before the data are touched (``n_samples`` and
    ``tol`` add the solver-tolerance term once n is known).
    """
    top = _numerator(weights_upper_bound=weights_upper_bound, C=C, lipschitz=lipschitz, n_samples=n_samples, tol=tol)
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
        direction = z / math.sqrt(r_sum_of_squares(z))
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


@dataclass(frozen=True)
class OutputMechanism:
    """Algorithm 1's noise for one setting, checked before the data are touched (:func:`output_mechanism`).

    Attributes
    ----------
    epsilon, gamma, weights_upper_bound, C, lipschitz : float
        The public settings.
    n_samples : int
        Rows of the fit.
    tol : float
        The solver tolerance in Delta (0 with ``reproduce_dppack``).
    sensitivity : float
        ``Delta`` (:func:`output_sensitivity`).
    rate : float
        ``epsilon / Delta`` (:func:`noise_rate`).
    grid : float or None
        The release grid (None for ``epsilon = inf`` or ``reproduce_dppack``).
    """

    epsilon: float
    gamma: float
    weights_upper_bound: float
    C: float
    lipschitz: float
    n_samples: int
    tol: float
    sensitivity: float
    rate: float
    grid: Optional[float]

    def floating_point_delta(self, dim: int, *, rng: Any) -> Optional[float]:
        """The ``delta`` of the rounded release (:func:`~.rounding.floating_point_delta`) for noise drawn from
        ``rng`` (R's samplers for an R-compatible stream); None without a grid (no floating-point guarantee)."""
        if self.grid is None:
            return None
        return floating_point_delta(epsilon=self.epsilon, dim=dim, grid=self.grid,
                                    noise_scale=self.sensitivity / self.epsilon,
                                    stream="R" if is_r_stream(rng) else "numpy")

    def _finite(self, release: NDArray[np.float64]) -> NDArray[np.float64]:
        if not np.all(np.isfinite(release)):
            raise ValueError(
                f"the noise for epsilon={self.epsilon!r}, gamma={self.gamma!r}, "
                f"weights_upper_bound={self.weights_upper_bound!r}, C={self.C!r} overflowed (its scale is too "
                "large for double precision); nothing was released."
            )
        return release

    def release(self, theta: ArrayLike, *, rng: Any) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(release, noise)``: one noise draw added to ``theta`` and the exact sum rounded to the grid.

        ``noise`` is PRIVATE (``release - noise`` is the minimiser): callers drop it.
        """
        t = np.asarray(theta, dtype=np.float64)
        noise = sample_output_noise(t.shape[0], self.rate, rng=rng)
        release = t + noise
        if np.all(np.isfinite(release)) and self.grid is not None:
            release = round_release(t, noise, grid=self.grid)
        return self._finite(release), noise

    def release_batch(self, solutions: ArrayLike, *, rng: np.random.Generator) -> NDArray[np.float64]:
        """One release per row of ``solutions`` (shape (R, d)), noise drawn as a batch (numpy Generator)."""
        theta = np.atleast_2d(np.asarray(solutions, dtype=np.float64))
        noise = sample_output_noise_batch(theta.shape[1], self.rate, theta.shape[0], rng=rng)
        release = theta + noise
        if np.all(np.isfinite(release)) and self.grid is not None:
            release = round_release(theta, noise, grid=self.grid)
        return self._finite(release)


def output_mechanism(*, epsilon: float, gamma: float, weights_upper_bound: float, C: float = 0.0,
                     lipschitz: float = 1.0, n_samples: int, tol: float,
                     reproduce_dppack: bool = False) -> OutputMechanism:
    """The checked output-perturbation mechanism for public settings (nothing here reads the data).

    Parameters
    ----------
    epsilon : float
        Budget in (0, inf].
    gamma, weights_upper_bound, C, lipschitz, n_samples, tol
        As in :func:`output_sensitivity`.
    reproduce_dppack : bool, default=False
        DPpack's arithmetic bit for bit: no tolerance term in Delta, no grid
        (validation only: not floating-point safe).

    Raises
    ------
    ValueError
        When a setting is out of range (named), the sensitivity or noise scale
        is not a finite positive float, no floating-point-safe grid exists, or
        the solution may reach beyond ``2^49`` grid steps (``n (W L + tol) /
        gamma``): nothing is released.
    """
    eps = check_epsilon(epsilon)
    tol_in_delta = 0.0 if reproduce_dppack else check_tol(tol)
    law: Dict[str, Any] = dict(gamma=gamma, weights_upper_bound=weights_upper_bound, C=C, lipschitz=lipschitz,
                               n_samples=n_samples, tol=tol_in_delta)
    delta = output_sensitivity(**law)  # validates every setting, naming it
    check_noise_scale(eps, float(gamma), float(weights_upper_bound), float(C), lipschitz=float(lipschitz),
                      n_samples=int(n_samples), tol=tol_in_delta)
    grid = None if reproduce_dppack else release_grid(sensitivity=delta, epsilon=eps)
    reach = int(n_samples) * (float(weights_upper_bound) * float(lipschitz) + float(tol)) / float(gamma)
    if grid is not None and not reach < grid * 2.0 ** 49:  # public bound on |theta_k|: gamma theta = -sum w y l' z
        raise ValueError(
            f"the solution may reach n (W L + tol)/gamma = {reach:.3g}, beyond 2^49 times the release grid "
            f"{grid:.3g} (Delta/epsilon = {delta / eps:.3g}): no floating-point-safe rounding exists at that "
            "scale; nothing was released (raise epsilon's noise scale or lower n W / gamma)."
        )
    return OutputMechanism(epsilon=eps, gamma=float(gamma), weights_upper_bound=float(weights_upper_bound),
                           C=float(C), lipschitz=float(lipschitz), n_samples=int(n_samples), tol=tol_in_delta,
                           sensitivity=delta, rate=noise_rate(epsilon=eps, **law), grid=grid)


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
    n = Z.shape[0]
    if optimizer_gamma is not None and optimizer_gamma != gamma and not reproduce_dppack:
        raise ValueError("optimizer_gamma differs from gamma only to reproduce DPpack (reproduce_dppack=True).")
    mechanism = output_mechanism(epsilon=epsilon, gamma=gamma, weights_upper_bound=weights_upper_bound, C=C,
                                 lipschitz=loss_lipschitz(loss), n_samples=n, tol=tol,
                                 reproduce_dppack=reproduce_dppack)
    result = solve_weighted_erm(Z, y, w, gamma=gamma if optimizer_gamma is None else optimizer_gamma, loss=loss,
                                tol=tol, backend=backend, objective=False)
    release, noise = mechanism.release(result.x, rng=rng)
    return OutputRelease(coef=release, sensitivity=mechanism.sensitivity, grid=mechanism.grid, n_iter=result.nit,
                         nonprivate_coef=result.x, noise=noise, grad_norm=result.grad_norm)


def perturb(solutions: NDArray[np.float64], *, epsilon: float, gamma: float, weights_upper_bound: float,
            C: float = 0.0, lipschitz: float = 1.0, n_samples: int, tol: float, rng: Any) -> NDArray[np.float64]:
    """One release per row of ``solutions`` (shape (R, d)): noise as DP-OWL's, then its safe rounding.

    ``n_samples`` is the number of rows each solution was fitted on and ``tol``
    the gradient norm its solver certified (both enter Delta). The same checks
    as every output release (:func:`output_mechanism`).
    """
    mechanism = output_mechanism(epsilon=epsilon, gamma=gamma, weights_upper_bound=weights_upper_bound, C=C,
                                 lipschitz=lipschitz, n_samples=n_samples, tol=tol)
    return mechanism.release_batch(solutions, rng=rng)
