"""Many small Huber-hinge problems at once: a batched, certified Newton solver.

Simulation and tuning studies solve the same kind of problem hundreds of times
(one per repetition): ``R`` independent problems

    G_r(theta) = sum_i w_ri l_h(y_ri z_ri'theta) + gamma_r/2 ||theta||^2,

each with the same number of rows ``n`` and columns ``d``. Python overhead then
dominates a one-problem-at-a-time solver, so this module runs Newton's method on
all of them together with numpy (stacked Hessians, batched solves, a batched
safeguarded-Newton exact line search), the same method as
:func:`pydpowl.solve_weighted_erm`.

Certification is the same too: a problem counts as solved only when the
gradient norm of ``F_r = G_r / n`` is at most ``tol``. Problems that do not reach
it within ``max_iter`` iterations are handed to :func:`pydpowl.solve_weighted_erm`
one by one (warm-started), which certifies them or raises
:class:`~pydpowl.exceptions.ConvergenceError`.
"""

from __future__ import annotations

import warnings
from typing import Optional, Tuple, Union

import numpy as np
from numpy.typing import NDArray

from .losses import HuberHingeLoss
from .solver import solve_weighted_erm

__all__ = ["solve_huber_batch", "warm_up"]


def _deriv(m: NDArray[np.float64], h: float) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
    """First derivative of the Huber hinge and the quadratic-zone indicator."""
    r = (1.0 + h - m) / (2.0 * h)
    quad = (r >= 0.0) & (r <= 1.0)
    return -np.clip(r, 0.0, 1.0), quad


def _margins(Z, theta):
    return np.matmul(Z, theta[:, :, None])[:, :, 0]


def _grad_hess(Z, y, w, theta, gamma, h, pairs):
    """Margins, gradient and Hessian of every ``G_r`` (``pairs`` holds z_i z_i' entries, upper triangle)."""
    m = y * _margins(Z, theta)
    d1, quad = _deriv(m, h)
    g = np.matmul((w * y * d1)[:, None, :], Z)[:, 0, :] + gamma[:, None] * theta
    c = np.where(quad, w / (2.0 * h), 0.0)
    flat = np.matmul(c[:, None, :], pairs)[:, 0, :]
    d = Z.shape[2]
    iu = np.triu_indices(d)
    H = np.zeros((Z.shape[0], d, d))
    H[:, iu[0], iu[1]] = flat
    H[:, iu[1], iu[0]] = flat
    H += gamma[:, None, None] * np.eye(d)[None]
    return m, g, H


def _line_search(w, theta, p, m, s, gamma, h, d0) -> NDArray[np.float64]:
    """Exact minimiser of ``t -> G_r(theta_r + t p_r)`` for every r (safeguarded Newton).

    ``m`` are the margins at ``theta`` and ``s`` how they move along ``p``.
    """
    tp = np.einsum("rd,rd->r", theta, p)
    pp = np.einsum("rd,rd->r", p, p)
    R = theta.shape[0]
    t = np.ones(R)
    lo, hi = np.zeros(R), np.full(R, np.inf)
    todo = np.arange(R)
    tol = 1e-13 * np.abs(d0)
    for _ in range(100):
        if todo.size == 0:
            break
        tt = t[todo]
        mt = m[todo] + tt[:, None] * s[todo]
        d1z, quad = _deriv(mt, h)
        ws = w[todo] * s[todo]
        d1 = np.einsum("rn,rn->r", ws, d1z) + gamma[todo] * (tp[todo] + tt * pp[todo])
        d2 = np.where(quad, ws * s[todo], 0.0).sum(axis=1) / (2.0 * h) + gamma[todo] * pp[todo]
        done = np.abs(d1) <= tol[todo]
        neg = d1 < 0
        lo[todo] = np.where(~done & neg, tt, lo[todo])
        hi[todo] = np.where(~done & ~neg, tt, hi[todo])
        l_, h_ = lo[todo], hi[todo]
        narrow = np.isfinite(h_) & (h_ - l_ <= 1e-15 * np.maximum(1.0, h_))
        t_new = np.where(d2 > 0, tt - d1 / np.where(d2 > 0, d2, 1.0), np.inf)
        bad = ~((l_ < t_new) & (t_new < h_))
        fallback = np.where(np.isinf(h_), 2.0 * tt, 0.5 * (l_ + h_))
        t_new = np.where(bad, fallback, t_new)
        t_new = np.where(narrow, 0.5 * (l_ + h_), t_new)
        t[todo] = np.where(done, tt, t_new)
        todo = todo[~(done | narrow)]
    return t


def solve_huber_batch(
    Z: NDArray[np.float64],
    y: NDArray[np.float64],
    w: NDArray[np.float64],
    *,
    gamma: Union[float, NDArray[np.float64]],
    huber_h: float = 0.5,
    tol: float = 1e-10,
    max_iter: int = 30,
    theta0: Optional[NDArray[np.float64]] = None,
    backend: str = "auto",
) -> NDArray[np.float64]:
    """Certified minimisers of ``R`` weighted Huber-hinge problems.

    Parameters
    ----------
    Z : ndarray of shape (R, n, d)
        Rows in the scaled space (``||z|| <= 1``).
    y : ndarray of shape (R, n)
        Labels in {-1, 1}.
    w : ndarray of shape (R, n)
        Weights in [0, W].
    gamma : float or ndarray of shape (R,)
        Regularisation constant of each problem (DPpack's convention).
    huber_h : float, default=0.5
    tol : float, default=1e-10
        Required gradient norm of ``F_r = G_r / n`` at each returned solution.
    max_iter : int, default=30
        Newton iterations before the stragglers go to the one-problem solver.
    theta0 : ndarray of shape (R, d), optional
        Starting points (warm starts); zeros by default.
    backend : {"auto", "numba", "numpy"}, default="auto"
        "auto" uses the compiled kernel when numba is installed (compiled once,
        then cached on disk), else the numpy batch.

    Returns
    -------
    ndarray of shape (R, d)
        The minimisers (private when the data are: never release them without noise).
    """
    if backend not in ("auto", "numba", "numpy"):
        raise ValueError(f"backend must be one of {{'auto', 'numba', 'numpy'}}, got backend={backend!r}.")
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    w = np.ascontiguousarray(w, dtype=np.float64)
    R, n, d = Z.shape
    gamma = np.ascontiguousarray(np.broadcast_to(np.asarray(gamma, dtype=np.float64), (R,)))
    theta = np.zeros((R, d)) if theta0 is None else np.array(theta0, dtype=np.float64, copy=True, order="C")
    kernel = _kernel() if backend in ("auto", "numba") else None
    if backend == "numba" and kernel is None:
        raise ValueError("backend='numba' needs numba (Debian: python3-numba).")
    if kernel is not None:
        kernel(Z, y, w, gamma, float(huber_h), float(tol), int(max_iter), theta, np.zeros(R, dtype=np.bool_))
    else:
        _newton_numpy(Z, y, w, gamma, float(huber_h), float(tol), int(max_iter), theta)
    # certify every problem from fresh margins; stragglers go to the one-problem solver
    d1, _ = _deriv(y * _margins(Z, theta), huber_h)
    gnorm = np.linalg.norm(np.matmul((w * y * d1)[:, None, :], Z)[:, 0, :] + gamma[:, None] * theta, axis=1) / n
    loss = HuberHingeLoss(huber_h)
    for r in np.flatnonzero(~(gnorm <= tol)):
        theta[r] = solve_weighted_erm(Z[r], y[r], w[r], gamma=float(gamma[r]), loss=loss, tol=tol,
                                      theta0=theta[r]).x
    return theta


def warm_up() -> bool:
    """Compile the numba kernel now (about 5 s once; later runs load it from numba's on-disk cache).

    Returns True when the compiled kernel is available. Set-up scripts call it
    so the first study does not pay the compilation.
    """
    kernel = _kernel()
    if kernel is None:
        return False
    Z = np.full((1, 4, 2), 0.5)
    kernel(Z, np.array([[1.0, -1.0, 1.0, -1.0]]), np.ones((1, 4)), np.ones(1), 0.5, 1e-10, 30, np.zeros((1, 2)),
           np.zeros(1, dtype=np.bool_))
    return True


def _kernel():
    try:
        with warnings.catch_warnings():  # numba's import emits DeprecationWarnings on some versions
            warnings.simplefilter("ignore", DeprecationWarning)
            from ._batched_kernels import solve_many
    except ImportError:  # numba is optional
        return None
    return solve_many


def _newton_numpy(Z, y, w, gamma, huber_h, tol, max_iter, theta) -> None:
    """Batched Newton in numpy, updating ``theta`` in place."""
    R, n, d = Z.shape
    iu = np.triu_indices(d)
    pairs = Z[:, :, iu[0]] * Z[:, :, iu[1]]  # (R, n, d(d+1)/2): z_i z_i' once for all iterations
    for _ in range(max_iter + 1):
        # all problems are evaluated every iteration (no copies of Z); solved ones just stay put
        m, g, H = _grad_hess(Z, y, w, theta, gamma, huber_h, pairs)
        live = ~(np.linalg.norm(g, axis=1) / n <= tol)
        if not live.any():
            break
        p = np.zeros_like(theta)
        p[live] = -np.linalg.solve(H[live], g[live][:, :, None])[:, :, 0]
        d0 = np.einsum("rd,rd->r", g, p)
        live &= d0 < 0  # rounding has exhausted the descent: left to the certified solver below
        if not live.any():
            break
        idx = np.flatnonzero(live)
        s_all = y * _margins(Z, p)
        t = _line_search(w[idx], theta[idx], p[idx], m[idx], s_all[idx], gamma[idx], huber_h, d0[idx])
        theta[idx] += t[:, None] * p[idx]
