"""Exact solver for weighted, l2-regularised ERM: Newton with exact line search.

Output perturbation is private only for the exact minimiser, so the solver
certifies its answer: it returns only when the gradient norm of

    F(theta) = (1/n) sum_i w_i l(y_i z_i'theta) + (gamma/(2n)) ||theta||^2

is at most ``tol`` (default 1e-10), and raises :class:`ConvergenceError`
otherwise; nothing uncertified is ever released.

The Huber objective is piecewise quadratic and strongly convex: Newton steps
(Hessian over the quadratic zone plus ``gamma I``) with an exact line search
along each direction identify the zones in a handful of iterations, after
which one step lands on the minimiser up to rounding. The logistic objective
is smooth and Newton converges quadratically. For the built-in losses a fused
single-pass kernel (numba, when installed) computes the margins, gradient and
Hessian in one sweep over the data; the numpy path gives the same answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np
from numpy.typing import NDArray

from ._erm_problem import NumpyProblem
from .exceptions import ConvergenceError
from .losses import MarginLoss

__all__ = ["SolverResult", "solve_weighted_erm", "objective_value", "objective_gradient"]

#: rows above which the fused kernel is used when ``backend="auto"``
_FUSED_MIN_ROWS = 5000
#: rows above which the solver first solves a strided subsample for a warm start
_WARM_START_MIN_ROWS = 100_000
_WARM_START_ROWS = 20_000


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
    if theta0 is None and n >= _WARM_START_MIN_ROWS:
        theta0 = _warm_start(Z, y, w, gamma=gamma, loss=loss, backend=backend)
    theta = np.zeros(d) if theta0 is None else np.array(theta0, dtype=np.float64)
    grad_norm = np.inf
    for it in range(max_iter + 1):
        m = problem.margins(theta)
        g, H = problem.grad_hess(theta, m)
        grad_norm = float(np.linalg.norm(g)) / n
        if grad_norm <= tol:
            return SolverResult(
                x=theta, success=True, nit=it, grad_norm=grad_norm,
                objective=problem.objective(theta, m) / n, backend=problem.backend,
            )
        if it == max_iter:
            break
        p = -_solve_spd(H, g)
        d0 = float(g @ p)
        if not d0 < 0:  # rounding has exhausted the descent; nothing more to gain
            break
        s = problem.direction_margins(p)
        t = _exact_line_search(problem, theta, p, m, s, d0)
        theta = theta + t * p
    raise ConvergenceError(
        f"solver stopped after max_iter={max_iter} iterations with gradient norm "
        f"{grad_norm:.3e} > tol={tol:.0e}; nothing was released."
    )


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
    try:
        c = np.linalg.cholesky(H)
        return np.linalg.solve(c.T, np.linalg.solve(c, g))
    except np.linalg.LinAlgError:  # gamma > 0 makes H SPD; fall back on rounding trouble
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
