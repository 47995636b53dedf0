"""Exact solver for weighted, l2-regularised ERM: Newton, full steps first, exact line search as fallback.

Output perturbation is private only for the exact minimiser, so the solver
certifies its answer: it returns only when the gradient norm of

    F(theta) = (1/n) sum_i w_i l(y_i z_i'theta) + (gamma/(2n)) ||theta||^2

is at most ``tol`` (default 1e-10), and raises :class:`ConvergenceError`
otherwise; nothing uncertified is ever released.

Each iteration first tries the full Newton step (Hessian over the loss's
curved zone plus ``gamma I``): one sweep over the data at the trial point gives
the objective, the gradient and the Hessian there, and the step is accepted
on sufficient decrease (Armijo) or when it already certifies. Only when it is
rejected does the solver fall back on an exact line search along the Newton
direction. The Huber objective is piecewise quadratic and strongly convex, so
once the zones are identified one step lands on the minimiser up to rounding;
the logistic objective is smooth and Newton converges quadratically.

Starting points: for the Huber loss, the minimiser of the surrogate with every
row in the quadratic zone (a weighted ridge regression, one pass); from 100,000
rows, the solution on an evenly strided subsample of 20,000 rows. Small
problems (at most 50,000 entries) are polished by extra Newton steps past the
tolerance, down to rounding level. For the built-in losses a fused kernel
(numba, when installed) does each sweep in one pass; for the Huber loss it
computes only margins, objective and gradient and keeps the Hessian up to date
by rank-k updates over the rows whose zone changed. The numpy path gives the
same answer up to rounding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
from numpy.typing import NDArray

from .problem import NumpyProblem
from ..exceptions import ConvergenceError
from .losses import HuberHingeLoss, MarginLoss

__all__ = ["SolverResult", "solve_weighted_erm", "objective_value", "objective_gradient"]

#: rows above which the fused kernel is used when ``backend="auto"``
_FUSED_MIN_ROWS = 5000
#: rows above which the solver first solves a strided subsample for a warm start
_WARM_START_MIN_ROWS = 100_000
_WARM_START_ROWS = 20_000
#: sufficient-decrease constant for accepting a full Newton step
_ARMIJO = 1e-4
#: problems with at most this many entries in Z are polished past the tolerance
_POLISH_MAX_ENTRIES = 50_000


@dataclass(frozen=True)
class SolverResult:
    """Outcome of :func:`solve_weighted_erm` (in the spirit of scipy's OptimizeResult).

    Attributes
    ----------
    x : ndarray of shape (d,)
        The certified minimiser (private: never release it without noise).
    success : bool
        Always True for a returned result (failures raise).
    nit : int
        Newton iterations taken.
    grad_norm : float
        ``||grad F(x)||_2`` recomputed from fresh margins at ``x``.
    objective : float
        ``F(x)``.
    backend : str
        "numpy" or "numba".
    """

    x: NDArray[np.float64]
    success: bool
    nit: int
    grad_norm: float
    objective: float
    backend: str


def _make_problem(Z, y, w, gamma, loss, backend):
    if backend not in ("auto", "numpy", "numba"):
        raise ValueError(f"backend must be one of {{'auto', 'numpy', 'numba'}}, got backend={backend!r}.")
    if backend == "numpy" or (backend == "auto" and Z.shape[0] < _FUSED_MIN_ROWS):
        return NumpyProblem(Z, y, w, gamma, loss)
    from . import _kernels

    problem = _kernels.fused_problem(Z, y, w, gamma, loss)
    if problem is None:
        if backend == "numba":
            raise ValueError(
                "backend='numba' needs numba (Debian: python3-numba) and a built-in loss "
                f"('huber' or 'logistic'); got loss {loss.name!r}"
                + ("" if _kernels.NUMBA_AVAILABLE else " and numba is not installed")
                + "."
            )
        return NumpyProblem(Z, y, w, gamma, loss)
    return problem


def _exact_line_search(problem, theta, p, m, s, d0: float) -> float:
    """Minimise ``t -> G(theta + t p)`` (convex, ``G'(0) = d0 < 0``) by safeguarded Newton.

    Once a bracket ``[lo, hi]`` is known, problems offering ``restricted_line``
    (the fused Huber kernel) switch to an evaluator that revisits only the rows
    whose Huber zone changes inside the bracket.
    """
    lo, hi = 0.0, np.inf
    t = 1.0
    tol = 1e-13 * abs(d0)

    def evaluate(t_: float):
        return problem.line_derivatives(m, s, t_, theta, p)

    restricted = False
    for _ in range(100):
        d1, d2 = evaluate(t)
        if abs(d1) <= tol:
            return t
        if d1 < 0:
            lo = t
        else:
            hi = t
        if hi < np.inf and hi - lo <= 1e-15 * max(1.0, hi):
            return 0.5 * (lo + hi)
        if hi < np.inf and not restricted:
            restricted = True
            make = getattr(problem, "restricted_line", None)
            fast = make(m, s, lo, hi, theta, p) if make is not None else None
            if fast is not None:
                evaluate = fast  # noqa: F811 - exact on the bracket
        t_new = t - d1 / d2 if d2 > 0 else np.inf
        if not (lo < t_new < hi):
            t_new = 2.0 * t if hi == np.inf else 0.5 * (lo + hi)
        t = t_new
    return t


def solve_weighted_erm(
    Z: NDArray[np.float64],
    y: NDArray[np.float64],
    w: NDArray[np.float64],
    *,
    gamma: float,
    loss: MarginLoss,
    tol: float = 1e-10,
    max_iter: int = 100,
    backend: str = "auto",
    theta0: Optional[NDArray[np.float64]] = None,
) -> SolverResult:
    """Minimise DPpack's weighted ERM objective to a certified precision.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Rows in the scaled space (the caller has checked ``||z_i|| <= 1``).
    y : ndarray of shape (n,)
        Labels in {-1, 1}.
    w : ndarray of shape (n,)
        Weights in [0, W].
    gamma : float
        Regularisation constant; the objective is ``gamma/n``-strongly convex.
    loss : MarginLoss
        Margin loss with ``|l'| <= 1``.
    tol : float, default=1e-10
        Required ``||grad F||_2`` at the returned point.
    max_iter : int, default=100
        Newton iterations before giving up.
    backend : {"auto", "numpy", "numba"}, default="auto"
        "auto" uses the fused numba kernel for built-in losses from 5,000 rows.
    theta0 : ndarray of shape (d,), optional
        Starting point (zeros by default).

    Returns
    -------
    SolverResult

    Raises
    ------
    ConvergenceError
        If the gradient norm is still above ``tol`` after ``max_iter`` iterations.
    """
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    n, d = Z.shape
    problem = _make_problem(Z, np.asarray(y, np.float64), np.asarray(w, np.float64), gamma, loss, backend)
    try:
        if theta0 is None and n >= _WARM_START_MIN_ROWS:
            theta0 = _warm_start(Z, y, w, gamma=gamma, loss=loss, backend=backend)
        elif theta0 is None and isinstance(loss, HuberHingeLoss):
            start = getattr(problem, "quadratic_start", None)
            theta0 = start() if start is not None else None
            if theta0 is None:
                theta0 = _huber_quadratic_start(Z, np.asarray(y, np.float64), np.asarray(w, np.float64), gamma, loss.h)
        theta = np.zeros(d) if theta0 is None else np.array(theta0, dtype=np.float64)
        m = problem.margins(theta)
        G = problem.objective(theta, m)
        g, H = problem.grad_hess(theta, m)
        grad_norm = float(np.linalg.norm(g)) / n
        for it in range(max_iter + 1):
            if grad_norm <= tol:
                if n * d <= _POLISH_MAX_ENTRIES:
                    theta, G, grad_norm, extra = _polish(problem, theta, g, H, G, grad_norm, n)
                    it += extra
                return SolverResult(
                    x=theta, success=True, nit=it, grad_norm=grad_norm, objective=G / n, backend=problem.backend,
                )
            if it == max_iter:
                break
            p = -_solve_spd(H, g)
            d0 = float(g @ p)
            if not d0 < 0:  # rounding has exhausted the descent; nothing more to gain
                break
            # Full Newton step first: one sweep gives G, the gradient and the Hessian there.
            # Accept it on sufficient decrease (Armijo) or when it already certifies.
            trial = theta + p
            m_trial = problem.margins(trial)
            G_trial = problem.objective(trial, m_trial)
            g_trial, H_trial = problem.grad_hess(trial, m_trial)
            norm_trial = float(np.linalg.norm(g_trial)) / n
            if G_trial <= G + _ARMIJO * d0 or norm_trial <= tol:
                theta, m, G, g, H, grad_norm = trial, m_trial, G_trial, g_trial, H_trial, norm_trial
                continue
            # Otherwise an exact line search along p from theta (margins m are still valid).
            s = problem.direction_margins(p)
            t = _exact_line_search(problem, theta, p, m, s, d0)
            theta = theta + t * p
            m = problem.margins(theta)
            G = problem.objective(theta, m)
            g, H = problem.grad_hess(theta, m)
            grad_norm = float(np.linalg.norm(g)) / n
        raise ConvergenceError(
            f"solver stopped after max_iter={max_iter} iterations with gradient norm "
            f"{grad_norm:.3e} > tol={tol:.0e}; nothing was released."
        )
    finally:
        release = getattr(problem, "release", None)
        if release is not None:
            release()  # its work arrays go to the next solve; the result holds none of them


def _polish(problem, theta, g, H, G, grad_norm, n, max_steps: int = 3):
    """Extra Newton steps on a certified small problem while the gradient norm keeps falling
    (microseconds at this size; it takes the answer from the tolerance to rounding level)."""
    steps = 0
    while steps < max_steps and grad_norm > 0.0:
        trial = theta - _solve_spd(H, g)
        m = problem.margins(trial)
        g_t, H_t = problem.grad_hess(trial, m)
        norm_t = float(np.linalg.norm(g_t)) / n
        if not norm_t < 0.5 * grad_norm:
            break
        theta, g, H, G, grad_norm = trial, g_t, H_t, problem.objective(trial, m), norm_t
        steps += 1
    return theta, G, grad_norm, steps


def _huber_quadratic_start(Z, y, w, gamma: float, h: float) -> NDArray[np.float64]:
    """Minimiser of the surrogate with every row in the Huber quadratic zone (a weighted
    ridge regression of the margins on 1 + h): one linear solve, and usually a few rows
    away from the right zones, so Newton needs far fewer (and full) steps than from 0."""
    c = w / (2.0 * h)
    A = (Z * c[:, None]).T @ Z
    A[np.diag_indices_from(A)] += gamma
    return _solve_spd(A, Z.T @ (c * (1.0 + h) * y))


def _warm_start(Z, y, w, *, gamma, loss, backend) -> NDArray[np.float64]:
    """Minimiser on an evenly strided subsample, with gamma scaled to the same gamma/n.

    Only a starting point: the full problem is still solved and certified.
    """
    n = Z.shape[0]
    step = max(n // _WARM_START_ROWS, 1)
    Zs, ys, ws = Z[::step], np.asarray(y)[::step], np.asarray(w)[::step]
    gamma_sub = gamma * Zs.shape[0] / n
    try:
        return solve_weighted_erm(Zs, ys, ws, gamma=gamma_sub, loss=loss, tol=1e-8, backend=backend).x
    except ConvergenceError:
        return np.zeros(Z.shape[1])


def _solve_spd(H: NDArray[np.float64], g: NDArray[np.float64]) -> NDArray[np.float64]:
    try:  # gamma > 0 makes H symmetric positive definite: one LU solve is enough
        return np.linalg.solve(H, g)
    except np.linalg.LinAlgError:  # rounding trouble only
        return np.linalg.lstsq(H, g, rcond=None)[0]


def objective_value(
    theta: NDArray[np.float64], Z: NDArray[np.float64], y: NDArray[np.float64],
    w: NDArray[np.float64], *, gamma: float, loss: MarginLoss,
) -> float:
    """``F(theta)`` in DPpack's convention (mean weighted loss plus ``gamma/(2n)||theta||^2``)."""
    problem = NumpyProblem(np.asarray(Z, np.float64), np.asarray(y, np.float64), np.asarray(w, np.float64), gamma, loss)
    theta = np.asarray(theta, np.float64)
    return problem.objective(theta, problem.margins(theta)) / Z.shape[0]


def objective_gradient(
    theta: NDArray[np.float64], Z: NDArray[np.float64], y: NDArray[np.float64],
    w: NDArray[np.float64], *, gamma: float, loss: MarginLoss,
) -> NDArray[np.float64]:
    """``grad F(theta)``."""
    problem = NumpyProblem(np.asarray(Z, np.float64), np.asarray(y, np.float64), np.asarray(w, np.float64), gamma, loss)
    theta = np.asarray(theta, np.float64)
    return problem.gradient(theta, problem.margins(theta)) / Z.shape[0]
