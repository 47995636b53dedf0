"""The one certified solver for weighted, l2-regularised ERM: Newton, full steps first, exact line search as fallback.

Output perturbation is private only for the exact minimiser, so the solver
certifies its answer: it returns only when the gradient norm of ``F = G / n``,

    G(theta) = sum_i w_i l(y_i z_i'theta) + (ridge / 2) ||theta||^2 + b'theta,

is at most ``tol`` (default 1e-10), and raises :class:`ConvergenceError`
otherwise; nothing uncertified is ever released. :func:`solve_weighted_erm`
has ``ridge = gamma`` and ``b = 0`` unless told otherwise (DPpack's
convention: ``F = (1/n) sum_i w_i l + gamma/(2n) ||theta||^2``).

:func:`newton` is the only Newton iteration and the only line search in the
package. It sees the data term through the protocol of
:mod:`pydpowl.engine.problem` (``evaluate(theta) -> (L, gradient, Hessian)``
and ``line(theta, p)``) and adds the ridge and the linear term itself, so it
never holds anything of length ``n``. Each iteration tries the full Newton
step (one evaluation there gives the gradient and Hessian) and accepts it
when it already certifies or on sufficient decrease (Armijo). G is convex, so
``G(theta + p) <= G(theta) + grad G(theta + p)'p``: a slope at the trial point
below the Armijo line proves the decrease, and the objective values (the
loss's value, e.g. the logistic's ``log1p``) are computed only when that proof
fails, for problems that can skip them (``Problem.value``). Otherwise it
searches exactly along the Newton direction by safeguarded Newton on
``t -> G(theta + t p)``. The Huber objective is piecewise quadratic
and strongly convex, so once the zones are identified one step lands on the
minimiser up to rounding; the logistic objective is smooth and Newton
converges quadratically. Problems with at most 50,000 entries are polished by
extra Newton steps past the tolerance, down to rounding level.

With ``radius`` (Kifer, Smith & Thakurta's objective perturbation needs the
minimiser over the ball ``||theta|| <= radius``), each Newton step minimises
the quadratic model over the ball exactly (a trust-region subproblem with a
positive definite matrix, :func:`trust_region_step`), the step is searched on
the segment to that point (feasible: the ball is convex), and the answer is
certified by the Karush-Kuhn-Tucker conditions: ``||grad F + nu theta|| <= tol``
with the best multiplier ``nu >= 0``, ``||theta||^2 <= radius^2`` (exactly), and the
complementarity slack ``nu (radius^2 - ||theta||^2) / (2 mu + nu)`` (exact) at most
``(tol/mu + 2^-23 radius)^2`` (``mu = ridge / n``). Together they place the answer
within :func:`ball_error_radius` ``= 2 tol / mu + 2^-23 radius`` of the exact
constrained minimiser (docs/dppack_family.md); the ``2^-23 radius`` covers a point
that sits on the sphere only to rounding. A quadratic data
term (squared error) is solved in one step.

:func:`solve_weighted_erm` is the front end for arrays in memory and for Dask
arrays chunked along the rows (each problem call then runs blockwise, see
:mod:`pydpowl.engine.dask_problem`; same starting point, same iteration). It picks
the starting point (for the Huber hinge, the minimiser of its quadratic
surrogate, a weighted ridge regression, on an evenly strided subsample of at
most 2,000 rows; from 100,000 rows, the solution on an evenly strided
subsample of 20,000 rows) and the backend of the
:class:`~pydpowl.engine.problem.MarginProblem`.

Backend choice (``backend="auto"``)
-----------------------------------
Measured on this project's shared 2-core machine with
``benchmarks/bench_solver.py --cold`` (DP-OWL fits of the paper's design,
epsilon = 1; fresh processes, medians of 5; load about 2, so timings are
noisy; DPpack timed in the same run):

=========  =====================  =====================  ===========  ===========  ===========
n          import + first fit,    import + first fit,    warm fit,    warm fit,    DPpack fit
           numpy                  numba (cached)         numpy        numba        (warm)
=========  =====================  =====================  ===========  ===========  ===========
1,459      1.3 ms                 190 ms                 0.46 ms      0.28 ms      3.8 ms
20,000     3.5 ms                 196 ms                 1.3 ms       0.82 ms      23 ms
100,000    12 ms                  199 ms                 6.1 ms       2.9 ms       149 ms
200,000    19 ms                  210 ms                 11 ms        5.9 ms       276 ms
1e6        80 ms                  249 ms                 69 ms        46 ms        1094 ms
=========  =====================  =====================  ===========  ===========  ===========

Importing numba and loading the cached kernels costs about 0.19 s once
per process; the kernels then save 0.5 ms per fit at 20,000 rows, 3.2 ms at
100,000 and about 23 ms at 1e6. For a script that fits once, numpy is
faster over the whole grid (the crossover of the first fit lies above 1e6
rows); for repeated fits the kernels pay after 35-60 fits at 100,000 to
200,000 rows but after about 8 at 1e6, and only they stay 20 times faster than
DPpack at large n (numpy: 25 times at 200,000 rows, 16 at 1e6). ``"auto"``
uses the kernels from ``AUTO_MIN_ROWS`` = 100,000 rows (built-in losses,
numba installed), where they halve the warm fit, and numpy below, where
``import numba`` never happens. The logistic loss (``auto_kernels = False``)
stays on numpy at every n: its vectorised ``exp`` and ``log1p`` beat the
kernels' scalar ones (DPLogisticRegression warm, measured 11.6 ms against
14.6 ms at 200,000 rows, 59 against 74 ms at 1e6). (Raising
``AUTO_MIN_ROWS`` to 200,000 would spare a one-fit script with 100,000 to
200,000 rows the 0.19 s of loading them, at half the warm speed there,
still 24 times DPpack's.) The two paths reach the same minimiser up to
rounding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional, Tuple, Union

import numpy as np
from numpy.typing import NDArray

from ..exceptions import ConvergenceError
from .kernels import numba_available, use_kernels
from .losses import MarginLoss
from .problem import MarginProblem, Problem, QuadraticProblem

__all__ = ["DEFAULT_TOL", "SolverResult", "newton", "solve_weighted_erm", "solve_least_squares", "solve_each",
           "objective_value", "objective_gradient", "trust_region_step", "ball_error_radius", "BALL_ROUNDING"]

#: the gradient-norm tolerance every release certifies by default (it enters Delta as 2 n tol / gamma)
DEFAULT_TOL = 1e-10

#: rows above which the solver first solves a strided subsample for a warm start
_WARM_START_MIN_ROWS = 100_000
_WARM_START_ROWS = 20_000
#: rows of the subsample on which the quadratic surrogate gives the starting point below that
_SURROGATE_ROWS = 2_000
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
        ``||grad F(x)||_2`` at ``x``, from the evaluation there.
    objective : float
        ``F(x)`` (NaN when the caller asked not to report it, see :func:`newton`).
    backend : str
        The problem's backend ("numpy" or "numba").
    multiplier : float
        For a ball-constrained solve, the multiplier ``nu >= 0`` of the constraint
        (in units of ``F``; 0 when it is inactive); ``grad_norm`` is then the
        Karush-Kuhn-Tucker residual ``||grad F(x) + nu x||``.
    """

    x: NDArray[np.float64]
    success: bool
    nit: int
    grad_norm: float
    objective: float
    backend: str
    multiplier: float = 0.0


def newton(
    problem: Problem,
    theta0: NDArray[np.float64],
    *,
    ridge: float,
    linear: Optional[NDArray[np.float64]] = None,
    tol: float = DEFAULT_TOL,
    max_iter: int = 100,
    polish: bool = False,
    radius: Optional[float] = None,
    objective: bool = True,
    curvature_bound: Optional[float] = None,
) -> SolverResult:
    """Minimise ``G = L + (ridge/2)||theta||^2 + linear'theta`` to ``||grad G|| / n <= tol``.

    Parameters
    ----------
    problem : Problem
        The data term ``L`` (see :mod:`pydpowl.engine.problem`).
    theta0 : ndarray of shape (d,)
        Starting point.
    ridge : float
        Coefficient of ``||theta||^2 / 2``, > 0 (strong convexity).
    linear : ndarray of shape (d,), optional
        The linear term ``b`` (0 by default).
    tol : float, default=1e-10
        Required ``||grad F||_2`` with ``F = G / n``.
    max_iter : int, default=100
        Newton iterations before giving up.
    polish : bool, default=False
        After certifying, take up to 3 more Newton steps while the gradient norm halves.
    radius : float, optional
        Minimise over the ball ``||theta|| <= radius`` instead (see the module
        docstring); ``theta0`` is projected onto it first.
    objective : bool, default=True
        Report ``F`` at the answer. With False it is reported only when an
        evaluation gave it anyway (NaN otherwise), sparing a problem that
        skips values (``Problem.value``) one pass over the rows; for callers
        that keep only ``x``.
    curvature_bound : float, optional
        With ``radius``: a public bound on the Hessian of ``F = G / n``, which
        tightens the certificate's distance bound (:func:`ball_error_radius`).

    Returns
    -------
    SolverResult

    Raises
    ------
    ConvergenceError
        If ``||grad F||`` (the KKT conditions with ``radius``) is still above
        ``tol`` after ``max_iter`` iterations.
    """
    n = problem.n
    # a problem with value(theta) may skip the data term's value in evaluate (see the module docstring)
    lazy = callable(getattr(problem, "value", None))

    def penalty(theta):
        G = 0.5 * ridge * (theta @ theta)
        return G + linear @ theta if linear is not None else G

    def evaluate(theta, with_value=True):
        L, g, H = problem.evaluate(theta, value=False) if lazy and not with_value else problem.evaluate(theta)
        g = g + ridge * theta
        if linear is not None:
            g += linear
        H.flat[::H.shape[0] + 1] += ridge  # the diagonal
        return None if L is None else float(L + penalty(theta)), g, H, math.sqrt(float(g @ g)) / n

    def value_at(theta, G):
        return G if G is not None else float(problem.value(theta) + penalty(theta))

    def reported(theta, G):
        return value_at(theta, G) / n if objective or G is not None else math.nan

    if radius is not None:
        return _newton_in_ball(problem, evaluate, theta0, radius=radius, ridge=ridge, linear=linear, tol=tol,
                               max_iter=max_iter, curvature_bound=curvature_bound)
    theta = np.array(theta0, dtype=np.float64)
    G, g, H, grad_norm = evaluate(theta, with_value=False)
    for it in range(max_iter + 1):
        if grad_norm <= tol:
            if polish:
                theta, G, grad_norm, extra = _polish(evaluate, theta, G, g, H, grad_norm)
                it += extra
            return SolverResult(x=theta, success=True, nit=it, grad_norm=grad_norm, objective=reported(theta, G),
                                backend=problem.backend)
        if it == max_iter:
            break
        p = -_solve_spd(H, g)
        d0 = float(g @ p)
        if not d0 < 0:  # rounding has exhausted the descent; nothing more to gain
            break
        # Full Newton step first; accept it when it certifies or on sufficient decrease (Armijo). G is convex, so
        # G(trial) <= G(theta) + grad G(trial)'p: a slope g_t'p <= ARMIJO d0 proves the decrease without the
        # values, which are then computed only when that proof fails.
        trial = theta + p
        G_t, g_t, H_t, norm_t = evaluate(trial, with_value=False)
        accept = norm_t <= tol or (lazy and float(g_t @ p) <= _ARMIJO * d0)
        if not accept:
            G, G_t = value_at(theta, G), value_at(trial, G_t)
            accept = G_t <= G + _ARMIJO * d0
        if accept:
            theta, G, g, H, grad_norm = trial, G_t, g_t, H_t, norm_t
            continue
        t = _exact_line_search(problem.line(theta, p), theta, p, d0, ridge, linear)
        theta = theta + t * p
        G, g, H, grad_norm = evaluate(theta)
    raise ConvergenceError(
        f"solver stopped after max_iter={max_iter} iterations with gradient norm "
        f"{grad_norm:.3e} > tol={tol:.0e}; nothing was released."
    )


#: allowance for a point on the sphere: ``radius^2 - ||theta||^2`` (exact) may be up to this fraction of
#: ``radius^2`` (rounding: a double point sits on the sphere only to a few ulps); see :func:`ball_error_radius`
BALL_ROUNDING = 2.0 ** -46


def _ball_bounds(tol: float, mu: float, nu: float, gap: float, radius: float,
                 curvature_bound: Optional[float]) -> Tuple[float, float]:
    """The two extra terms over ``tol/mu`` of the distance bound on the ball (:func:`_kkt`): ``(A, B)``.

    ``A = sqrt(nu gap / (2 mu + nu))`` (strong convexity); ``B = (L/mu)(gap/radius + tol/(mu + nu))`` (the
    minimiser over the ball of radius ``||theta_nu||`` moves at most ``L/mu`` per unit of radius; inf without
    a public ``L``).
    """
    a = math.sqrt(nu * gap / (2.0 * mu + nu)) if nu > 0 else 0.0
    if curvature_bound is None or nu <= 0:
        return a, math.inf
    return a, (curvature_bound / mu) * (gap / radius + tol / (mu + nu))


def ball_error_radius(tol: float, mu: float, radius: float, curvature_bound: Optional[float] = None) -> float:
    """Public bound on the distance from a certified answer on the ball to the exact constrained minimiser.

    ``2 tol / mu + rho``: the certificate (:func:`_kkt`) proves ``e <= tol/mu + min(A, B)`` for every
    multiplier ``nu`` (:func:`_ball_bounds`) and accepts only when that is at most this radius. ``rho``
    is the largest ``min(A, B)`` over ``nu`` when the point sits on the sphere to rounding (``R^2 -
    ||theta||^2 <= BALL_ROUNDING R^2``): ``A`` grows with ``nu`` to ``sqrt(BALL_ROUNDING) R`` and ``B``
    falls, so it is their crossing (``sqrt(BALL_ROUNDING) R`` without a curvature bound ``L``).
    """
    gap = BALL_ROUNDING * radius * radius
    ceiling = math.sqrt(BALL_ROUNDING) * radius
    if curvature_bound is None:
        return 2.0 * tol / mu + ceiling
    lo, hi = math.log(mu) - 60.0, math.log(mu) + 60.0  # the crossing in log nu, by bisection
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        a, b = _ball_bounds(tol, mu, math.exp(mid), gap, radius, curvature_bound)
        if a < b:
            lo = mid
        else:
            hi = mid
    a, b = _ball_bounds(tol, mu, math.exp(hi), gap, radius, curvature_bound)
    return 2.0 * tol / mu + min(ceiling, max(a, b) * (1.0 + 1e-9))


def _exact_square_norm(theta: NDArray[np.float64]) -> Fraction:
    """``||theta||^2`` as an exact rational."""
    return sum((Fraction(float(v)) ** 2 for v in theta), Fraction(0))


def _into_ball(theta: NDArray[np.float64], radius: float) -> NDArray[np.float64]:
    """``theta`` scaled onto the ball if outside, so that its exact squared norm is at most radius^2."""
    theta = np.array(theta, dtype=np.float64)
    limit = Fraction(radius) ** 2
    norm = float(np.linalg.norm(theta))
    if norm > radius:
        theta *= radius / norm
    while _exact_square_norm(theta) > limit:  # an ulp or two above after the scaling
        theta *= 1.0 - 2.0 ** -52
    if radius - math.sqrt(math.fsum(theta * theta)) <= 16 * np.finfo(float).eps * radius:
        # on the sphere up to rounding: as close to it as rounding allows (radius^2 - ||theta||^2 of a few ulps)
        for _ in range(8):
            up = theta * (1.0 + 2.0 ** -52)
            if _exact_square_norm(up) > limit:
                break
            theta = up
    return theta


def _kkt(theta, g, n: int, radius: float, tol: float, mu: float, curvature_bound: Optional[float] = None):
    """``(nu, residual, slack, certified)``: the KKT conditions on the ball in units of F.

    Either the gradient itself is below ``tol`` (``nu = 0``: then ``e <= tol/mu``), or the best
    multiplier ``nu = max(0, -theta'g / (n ||theta||^2))`` brings ``||g/n + nu theta||`` below ``tol``.
    For a feasible ``theta`` (exactly ``||theta||^2 <= R^2``, :func:`_into_ball`) strong convexity
    and the minimiser's optimality give ``(mu + nu/2) e^2 <= tol e + nu (R^2 - ||theta||^2) / 2``
    (with ``theta . theta* = (||theta||^2 + ||theta*||^2 - e^2)/2`` and ``||theta*|| <= R``), so
    ``e <= tol/mu + sqrt(slack)``, ``slack = nu (R^2 - ||theta||^2) / (2 mu + nu)`` computed exactly.
    With a public bound ``L`` on the Hessian, also ``e <= tol/(mu + nu) + (L/mu)(R - ||theta_nu||)`` for the
    unconstrained minimiser ``theta_nu`` of ``F + nu ||theta||^2 / 2`` (within ``tol/(mu + nu)`` of theta;
    it minimises F over the ball of its own radius, and that minimiser moves at most ``(L + nu)/(mu + nu) <=
    L/mu`` per unit of radius). Certified when the smaller bound is at most :func:`ball_error_radius`, the
    radius the smoothing noise is calibrated for.
    """
    free = float(np.linalg.norm(g)) / n
    if free <= tol:
        return 0.0, free, 0.0, True
    tt = float(theta @ theta)
    nu = max(0.0, -float(theta @ g) / (n * tt)) if tt > 0 else 0.0
    residual = float(np.linalg.norm(g / n + nu * theta))
    gap = Fraction(radius) ** 2 - _exact_square_norm(theta)
    if gap < 0 or not residual <= tol:
        return nu, residual, math.inf, False
    # the gap rounded up (gap / (R + ||theta||) <= gap / R for the second bound); the first in exact arithmetic
    gap_up = float(gap) * (1.0 + 2.0 ** -50)
    slack = Fraction(nu) * gap / (2 * Fraction(mu) + Fraction(nu)) if nu > 0 else Fraction(0)
    allowed = ball_error_radius(tol, mu, radius, curvature_bound) - tol / mu
    first = Fraction(slack) <= Fraction(allowed) ** 2
    second = _ball_bounds(tol, mu, nu, gap_up, radius, curvature_bound)[1] <= allowed * (1.0 - 2.0 ** -40)
    return nu, residual, float(slack), bool(first or second)


def trust_region_step(H: NDArray[np.float64], q: NDArray[np.float64], radius: float) -> NDArray[np.float64]:
    """Minimise ``z'Hz/2 + q'z`` over ``||z|| <= radius`` for a symmetric positive definite ``H``.

    Eigen-decomposition of ``H``; if the unconstrained minimiser lies outside the
    ball, Newton's method on the secular equation ``1/||z(lam)|| = 1/radius``
    (``z(lam) = -(H + lam I)^{-1} q``, concave and increasing in ``lam``, so the
    iterates rise monotonically to the root from ``lam = 0``; More & Sorensen 1983).
    The result is placed on the sphere. Positive definiteness rules out the
    "hard case".
    """
    values, vectors = np.linalg.eigh(H)
    qh = vectors.T @ q
    z = -qh / values
    if float(np.linalg.norm(z)) <= radius:
        return vectors @ z
    lam = 0.0
    for _ in range(200):
        shifted = values + lam
        n2 = float(np.sum(qh * qh / (shifted * shifted)))
        norm = math.sqrt(n2)
        phi = 1.0 / norm - 1.0 / radius
        if abs(phi) <= 1e-15 / radius:
            break
        dn2 = -2.0 * float(np.sum(qh * qh / (shifted * shifted * shifted)))
        dphi = -0.5 * dn2 / (n2 * norm)
        step = phi / dphi
        if not step < 0 or lam - step <= lam:  # no progress left (rounding)
            break
        lam -= step
    z = -(qh / (values + lam))
    return vectors @ (z * (radius / float(np.linalg.norm(z))))


def _newton_in_ball(problem, evaluate, theta0, *, radius: float, ridge: float, linear, tol: float,
                    max_iter: int, curvature_bound: Optional[float] = None) -> SolverResult:
    """Newton over the ball: exact model minimisation in the ball, search on the segment, KKT certificate."""
    radius = float(radius)
    if not (0.0 < radius < np.inf):
        raise ValueError(f"radius must be in (0, inf), got radius={radius!r}.")
    n = problem.n
    mu = ridge / n
    theta = _into_ball(theta0, radius)
    G, g, H, _ = evaluate(theta)
    nu, residual, slack, certified = _kkt(theta, g, n, radius, tol, mu, curvature_bound)
    for it in range(max_iter + 1):
        if certified:
            return SolverResult(x=theta, success=True, nit=it, grad_norm=residual, objective=G / n,
                                backend=problem.backend, multiplier=nu)
        if it == max_iter:
            break
        target = _into_ball(trust_region_step(H, g - H @ theta, radius), radius)
        p = target - theta
        d0 = float(g @ p)
        if not d0 < 0:  # rounding has exhausted the descent
            break
        G_t, g_t, H_t, _ = evaluate(target)
        if G_t <= G + _ARMIJO * d0:
            theta, G, g, H = target, G_t, g_t, H_t
        else:  # G is convex along the segment: its minimiser over [0, 1] is min(t*, 1)
            t = min(1.0, _exact_line_search(problem.line(theta, p), theta, p, d0, ridge, linear))
            theta = _into_ball(theta + t * p, radius)
            G, g, H, _ = evaluate(theta)
        nu, residual, slack, certified = _kkt(theta, g, n, radius, tol, mu, curvature_bound)
    bound = (ball_error_radius(tol, mu, radius, curvature_bound) - tol / mu) ** 2
    raise ConvergenceError(
        f"solver stopped after max_iter={max_iter} iterations on the ball ||theta|| <= {radius:.6g} with KKT "
        f"residual {residual:.3e} (tol={tol:.0e}) and complementarity slack {slack:.3e} "
        f"(must be <= {bound:.3e}); nothing was released."
    )


def _exact_line_search(line, theta, p, d0: float, ridge: float, linear) -> float:
    """Minimise ``t -> G(theta + t p)`` (convex, ``G'(0) = d0 < 0``) by safeguarded Newton."""
    tp, pp = float(theta @ p), float(p @ p)
    bp = 0.0 if linear is None else float(linear @ p)
    lo, hi = 0.0, np.inf
    t = 1.0
    tol = 1e-13 * abs(d0)
    for _ in range(100):
        l1, l2 = line(t)
        d1 = l1 + ridge * (tp + t * pp) + bp
        d2 = l2 + ridge * pp
        if abs(d1) <= tol:
            return t
        if d1 < 0:
            lo = t
        else:
            hi = t
        if hi < np.inf and hi - lo <= 1e-15 * max(1.0, hi):
            return 0.5 * (lo + hi)
        t_new = t - d1 / d2 if d2 > 0 else np.inf
        if not (lo < t_new < hi):
            t_new = 2.0 * t if hi == np.inf else 0.5 * (lo + hi)
        t = t_new
    return t


def _polish(evaluate, theta, G, g, H, grad_norm, max_steps: int = 3):
    """Extra Newton steps on a certified problem while the gradient norm keeps halving
    (microseconds on a small problem; it takes the answer from the tolerance to rounding level)."""
    steps = 0
    while steps < max_steps and grad_norm > 0.0:
        trial = theta - _solve_spd(H, g)
        G_t, g_t, H_t, norm_t = evaluate(trial)
        if not norm_t < 0.5 * grad_norm:
            break
        theta, G, g, H, grad_norm = trial, G_t, g_t, H_t, norm_t
        steps += 1
    return theta, G, grad_norm, steps


def _solve_spd(H: NDArray[np.float64], g: NDArray[np.float64]) -> NDArray[np.float64]:
    try:  # ridge > 0 makes H symmetric positive definite: one LU solve is enough
        return np.linalg.solve(H, g)
    except np.linalg.LinAlgError:  # rounding trouble only
        return np.linalg.lstsq(H, g, rcond=None)[0]


def _check_terms(extra_ridge: float, linear, d: int):
    extra_ridge = float(extra_ridge)
    if not (0.0 <= extra_ridge < np.inf):
        raise ValueError(f"extra_ridge must be in [0, inf), got extra_ridge={extra_ridge!r}.")
    if linear is not None:
        linear = np.array(linear, dtype=np.float64)
        if linear.shape != (d,) or not np.all(np.isfinite(linear)):
            raise ValueError(f"linear must be a finite vector of length d={d}, got shape {linear.shape}"
                             f"{'' if np.all(np.isfinite(linear)) else ' with non-finite entries'}.")
    return extra_ridge, linear


def _resolve_backend(n: int, loss: MarginLoss, backend: str) -> str:
    if not use_kernels(n, backend, loss):
        return "numpy"
    if loss.kernel_spec() is not None and numba_available():
        return "numba"
    if backend == "numba":
        raise ValueError(
            "backend='numba' needs numba (Debian: python3-numba) and a built-in loss "
            f"('huber' or 'logistic'); got loss {loss.name!r}"
            + ("" if numba_available() else " and numba is not installed") + "."
        )
    return "numpy"


def solve_weighted_erm(
    Z: NDArray[np.float64],
    y: NDArray[np.float64],
    w: NDArray[np.float64],
    *,
    gamma: float,
    loss: MarginLoss,
    tol: float = DEFAULT_TOL,
    max_iter: int = 100,
    backend: str = "auto",
    theta0: Optional[NDArray[np.float64]] = None,
    extra_ridge: float = 0.0,
    linear: Optional[NDArray[np.float64]] = None,
    objective: bool = True,
) -> SolverResult:
    """Minimise DPpack's weighted ERM objective to a certified precision.

    The objective is ``F = G / n`` with

        G(theta) = sum_i w_i l(y_i z_i'theta) + ((gamma + extra_ridge) / 2) ||theta||^2 + linear'theta.

    Parameters
    ----------
    Z : ndarray or dask.array.Array of shape (n, d)
        Rows in the scaled space (the caller has checked ``||z_i|| <= 1``).
        A Dask array (chunked along the rows, chunk sizes known) is solved
        blockwise, with ``y`` and ``w`` Dask arrays too.
    y : ndarray or dask.array.Array of shape (n,)
        Labels in {-1, 1}.
    w : ndarray or dask.array.Array of shape (n,)
        Weights in [0, W].
    gamma : float
        Regularisation constant; ``F`` is ``gamma/n``-strongly convex.
    loss : MarginLoss
        Margin loss with ``|l'| <= 1``.
    tol : float, default=1e-10
        Required ``||grad F||_2`` at the returned point.
    max_iter : int, default=100
        Newton iterations before giving up.
    backend : {"auto", "numpy", "numba"}, default="auto"
        "auto" uses the numba kernels for built-in losses from
        ``pydpowl.engine.kernels.AUTO_MIN_ROWS`` rows (see the module docstring).
    theta0 : ndarray of shape (d,), optional
        Starting point (by default as described in the module docstring).
    extra_ridge : float, default=0.0
        Added to ``gamma`` in the ridge term, in ``[0, inf)``. Objective
        perturbation (Chaudhuri, Monteleoni and Sarwate; DPpack's
        ``WeightedERMDP.CMS``) minimises ``(1/n) sum l + gamma/(2n) ||theta||^2
        + b'theta/n + (Delta/2) ||theta||^2``: pass ``extra_ridge = n * Delta``
        and ``linear = b``.
    linear : ndarray of shape (d,), optional
        The linear term of ``G`` (see ``extra_ridge``); zero by default.
    objective : bool, default=True
        Report ``F`` at the answer (see :func:`newton`; False for callers
        that keep only ``x``).

    Returns
    -------
    SolverResult

    Raises
    ------
    ConvergenceError
        If the gradient norm is still above ``tol`` after ``max_iter`` iterations.
    """
    rows = _rows(Z, y, w)
    n, d = rows.n, rows.d
    extra_ridge, linear = _check_terms(extra_ridge, linear, d)
    ridge = gamma + extra_ridge
    resolved = _resolve_backend(n, loss, backend)
    if theta0 is None:
        theta0 = _starting_point(rows, loss=loss, gamma=gamma, extra_ridge=extra_ridge, linear=linear,
                                 backend=resolved)
    problem = rows.problem(loss, resolved)
    try:
        return newton(problem, theta0, ridge=ridge, linear=linear, tol=tol, max_iter=max_iter,
                      polish=n * d <= _POLISH_MAX_ENTRIES, objective=objective)
    finally:
        problem.release()  # its work arrays go to the next solve; the result holds none of them


class _InMemoryRows:
    """The data of :func:`solve_weighted_erm` as numpy arrays (the chunked counterpart is
    :class:`pydpowl.engine.dask_problem.ChunkedRows`): its size, an evenly strided subsample,
    and the problem of a loss."""

    def __init__(self, Z, y, w) -> None:
        self.Z = np.require(Z, dtype=np.float64, requirements=["F", "W"])  # column-major, as the problem works
        self.y = np.require(y, dtype=np.float64, requirements=["C", "W"])
        self.w = np.require(w, dtype=np.float64, requirements=["C", "W"])
        self.n, self.d = self.Z.shape

    def strided(self, step: int):
        return self.Z[::step], self.y[::step], self.w[::step]

    def problem(self, loss: MarginLoss, backend: str) -> MarginProblem:
        return MarginProblem(self.Z, self.y, self.w, loss, backend=backend)


def _rows(Z, y, w):
    """In-memory rows, or chunked ones for Dask arrays (``__dask_graph__``: the Dask collection
    protocol, checked without importing Dask): then each problem call is one blockwise pass."""
    if hasattr(Z, "__dask_graph__"):
        from .dask_problem import ChunkedRows

        return ChunkedRows(Z, y, w)
    return _InMemoryRows(Z, y, w)


def _starting_point(rows, *, loss, gamma, extra_ridge, linear, backend) -> NDArray[np.float64]:
    """From 100,000 rows: the solution on an evenly strided subsample of 20,000 rows, with the
    regulariser and linear term scaled by the subsample's share (the same ``F``). Otherwise, for a
    loss with a quadratic surrogate (the Huber hinge): the surrogate's minimiser, one Newton step
    from 0 (usually a few rows away from the right zones, so Newton needs few, full steps), on an
    evenly strided subsample of at most 2,000 rows, scaled likewise (the surrogate, which treats
    every row as in the quadratic zone, is a rough model: more rows do not make a better start).
    Only a starting point: the full problem is still solved and certified."""
    n, d = rows.n, rows.d
    if n >= _WARM_START_MIN_ROWS:
        Zs, ys, ws = rows.strided(max(n // _WARM_START_ROWS, 1))
        share = Zs.shape[0] / n
        try:
            return solve_weighted_erm(Zs, ys, ws, gamma=gamma * share, loss=loss, tol=1e-8,
                                      backend=backend, extra_ridge=extra_ridge * share,
                                      linear=None if linear is None else linear * share, objective=False).x
        except ConvergenceError:
            return np.zeros(d)
    surrogate = getattr(loss, "quadratic_surrogate", None)
    if surrogate is None:
        return np.zeros(d)
    step = -(-n // _SURROGATE_ROWS)  # ceil(n / _SURROGATE_ROWS)
    Zs, ys, ws = rows.strided(step)
    share = Zs.shape[0] / n
    problem = MarginProblem(Zs, ys, ws, surrogate(), backend=backend)
    try:
        _, g, H = problem.evaluate(np.zeros(d))
    finally:
        problem.release()
    if linear is not None:
        g = g + linear * share
    H.flat[::d + 1] += (gamma + extra_ridge) * share  # the diagonal
    return -_solve_spd(H, g)


def solve_least_squares(
    Z: Union[NDArray[np.float64], QuadraticProblem],
    y: Optional[NDArray[np.float64]] = None,
    w: Optional[NDArray[np.float64]] = None,
    *,
    gamma: float,
    extra_ridge: float = 0.0,
    linear: Optional[NDArray[np.float64]] = None,
    radius: Optional[float] = None,
    tol: float = DEFAULT_TOL,
    max_iter: int = 50,
    curvature_bound: Optional[float] = None,
) -> SolverResult:
    """Minimise the (perturbed) squared-error objective, optionally over a ball, to a certified precision.

    ``F = G / n`` with

        G(theta) = sum_i w_i (y_i - z_i'theta)^2 / 2 + ((gamma + extra_ridge) / 2) ||theta||^2 + linear'theta,

    over ``||theta|| <= radius`` when ``radius`` is given (Kifer, Smith &
    Thakurta; DPpack's ``LinearRegressionDP`` minimises this with ``extra_ridge =
    Delta``, ``linear = b`` and ``radius = sqrt(p)``). The data term is
    quadratic: the first Newton step is exact and the second evaluation certifies.

    Parameters
    ----------
    Z : ndarray of shape (n, d), or QuadraticProblem
        The rows, or their sufficient statistics (then ``y`` and ``w`` are not
        given): the solve itself costs ``O(d^3)`` per step either way.
    y : ndarray of shape (n,)
    w : ndarray of shape (n,), optional
        Non-negative weights (ones by default).
    gamma : float
        Regularisation constant, > 0.
    extra_ridge : float, default=0.0
    linear : ndarray of shape (d,), optional
    radius : float, optional
        Radius of the ball (unconstrained when None).
    tol : float, default=1e-10
        Required gradient norm of ``F`` (KKT residual with ``radius``; see :func:`newton`).
    max_iter : int, default=50
    curvature_bound : float, optional
        With ``radius``: a public bound on the Hessian of ``F`` (see :func:`newton`).

    Returns
    -------
    SolverResult

    Raises
    ------
    ConvergenceError
        If the certificate is not reached.
    """
    if isinstance(Z, QuadraticProblem):
        if y is not None or w is not None:
            raise ValueError("y and w are part of the QuadraticProblem's statistics; pass them only with rows Z.")
        problem = Z
    else:
        if y is None:
            raise ValueError("y is required with rows Z.")
        problem = QuadraticProblem.from_rows(Z, y, w)
    extra_ridge, linear = _check_terms(extra_ridge, linear, problem.d)
    return newton(problem, np.zeros(problem.d), ridge=gamma + extra_ridge, linear=linear, tol=tol,
                  max_iter=max_iter, radius=radius, curvature_bound=curvature_bound)


def solve_each(
    Z: NDArray[np.float64],
    y: NDArray[np.float64],
    w: NDArray[np.float64],
    *,
    gamma: Union[float, NDArray[np.float64]],
    loss: MarginLoss,
    tol: float = DEFAULT_TOL,
    theta0: Optional[NDArray[np.float64]] = None,
    backend: str = "auto",
) -> NDArray[np.float64]:
    """Certified minimisers of ``R`` independent problems of one shape (studies: one per repetition).

    A loop of :func:`solve_weighted_erm`; measured faster than, or close to,
    the batched solvers it replaced at the studies' sizes (see
    ``benchmarks/bench_solver.py --batch``).

    Parameters
    ----------
    Z : ndarray of shape (R, n, d)
    y, w : ndarray of shape (R, n)
    gamma : float or ndarray of shape (R,)
    loss : MarginLoss
    tol : float, default=1e-10
    theta0 : ndarray of shape (R, d), optional
        Starting points (warm starts).
    backend : {"auto", "numpy", "numba"}, default="auto"

    Returns
    -------
    ndarray of shape (R, d)
        The minimisers (private when the data are: never release them without noise).
    """
    R, _, d = np.shape(Z)
    gammas = np.broadcast_to(np.asarray(gamma, dtype=np.float64), (R,))
    out = np.empty((R, d))
    for r in range(R):
        out[r] = solve_weighted_erm(Z[r], y[r], w[r], gamma=float(gammas[r]), loss=loss, tol=tol, backend=backend,
                                    theta0=None if theta0 is None else theta0[r], objective=False).x
    return out


def _data_term(theta, Z, y, w, loss):
    problem = MarginProblem(Z, y, w, loss)
    try:
        return problem.evaluate(theta)
    finally:
        problem.release()


def objective_value(
    theta: NDArray[np.float64], Z: NDArray[np.float64], y: NDArray[np.float64],
    w: NDArray[np.float64], *, gamma: float, loss: MarginLoss,
) -> float:
    """``F(theta)`` in DPpack's convention (mean weighted loss plus ``gamma/(2n)||theta||^2``)."""
    theta = np.asarray(theta, np.float64)
    L, _, _ = _data_term(theta, Z, y, w, loss)
    return (L + 0.5 * gamma * float(theta @ theta)) / np.shape(Z)[0]


def objective_gradient(
    theta: NDArray[np.float64], Z: NDArray[np.float64], y: NDArray[np.float64],
    w: NDArray[np.float64], *, gamma: float, loss: MarginLoss,
) -> NDArray[np.float64]:
    """``grad F(theta)``."""
    theta = np.asarray(theta, np.float64)
    _, g, _ = _data_term(theta, Z, y, w, loss)
    return (g + gamma * theta) / np.shape(Z)[0]
