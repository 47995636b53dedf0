"""The data term of weighted ERM and the protocol through which the solver sees it.

The solver (:func:`pydpowl.engine.solver.newton`) minimises

    G(theta) = L(theta) + (ridge / 2) ||theta||^2 + b'theta,
    L(theta) = sum_i w_i l(y_i z_i'theta),

and adds the regulariser and the linear term itself: they are ``d``-sized and
the same for every problem. It reaches the data term only through the
:class:`Problem` protocol:

``n``, ``d``
    Rows (the certificate is on ``F = G / n``) and columns.
``evaluate(theta) -> (L, gradient, Hessian)``
    ``L(theta)`` as a float, its gradient (d,) and its Hessian (d, d), all
    owned by the caller.
``line(theta, p) -> phi``
    ``phi(t) = (dL/dt, d2L/dt2)`` of ``t -> L(theta + t p)``; the solver calls it
    for the exact line search along a Newton direction ``p`` from a point
    ``theta`` it evaluated before.
``backend``
    A name for reports ("numpy", "numba", ...).
``release()`` (optional)
    Called once the solve is over, to hand work arrays back.

Each call is a sum over rows, so a problem may compute it in any way that
sums: :class:`MarginProblem` in one pass in numpy or with the numba kernels of
:mod:`pydpowl.engine.kernels`; a problem on a chunked (Dask) array can compute
the per-chunk partial sums of ``(L, gradient, Hessian)`` or of
``(dL/dt, d2L/dt2)`` blockwise and reduce them, so that nothing of length ``n``
reaches the solver, which never holds a per-row array.

:class:`MarginProblem` keeps per row, between calls, the margins of the last
two points it evaluated (the line search starts from the older one) and each
row's curvature ``w_i l''(m_i)``: the Hessian of the next point is then the
previous one plus a rank-k update over the rows whose curvature changed (for
the Huber hinge, after the first steps, a handful). Losses whose curvature
changes everywhere (logistic) get the Hessian rebuilt on every evaluation.
"""

from __future__ import annotations

import threading
from typing import Callable, Dict, List, Optional, Protocol, Tuple

import numpy as np
from numpy.typing import NDArray

from .losses import MarginLoss

__all__ = ["Problem", "MarginProblem", "PredictorProblem", "LineDerivatives"]

#: ``t -> (dL/dt, d2L/dt2)`` along a search direction
LineDerivatives = Callable[[float], Tuple[float, float]]


class Problem(Protocol):
    """What the solver needs from a data term ``L(theta) = sum_i w_i l_i(theta)`` (see the module docstring)."""

    n: int
    d: int
    backend: str

    def evaluate(self, theta: NDArray[np.float64]) -> Tuple[float, NDArray[np.float64], NDArray[np.float64]]:
        """``(L(theta), grad L(theta), Hessian of L at theta)``."""

    def line(self, theta: NDArray[np.float64], p: NDArray[np.float64]) -> LineDerivatives:
        """Derivatives of ``t -> L(theta + t p)``."""


class MarginProblem:
    """``L(theta) = sum_i w_i l(y_i z_i'theta)`` for a margin loss, in numpy or with the numba kernels.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Rows in the scaled space.
    y : ndarray of shape (n,)
        Labels in {-1, 1}.
    w : ndarray of shape (n,)
        Non-negative weights.
    loss : MarginLoss
        The margin loss.
    backend : {"numpy", "numba"}, default="numpy"
        "numba" needs numba and a built-in loss (``loss.kernel_spec()`` not None).
    """

    def __init__(self, Z: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64],
                 loss: MarginLoss, backend: str = "numpy") -> None:
        self.Z = np.ascontiguousarray(Z, dtype=np.float64)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.w = np.ascontiguousarray(w, dtype=np.float64)
        self.loss = loss
        self.n, self.d = self.Z.shape
        self.backend = backend
        if backend == "numba":
            spec = loss.kernel_spec()
            if spec is None:
                raise ValueError(f"backend='numba' needs a built-in loss ('huber' or 'logistic'), got loss {loss.name!r}.")
            from .kernels import row_sweeps

            self._kernels, (self._kind, self._param) = row_sweeps, spec
        elif backend != "numpy":
            raise ValueError(f"MarginProblem backend must be 'numpy' or 'numba', got backend={backend!r}.")
        self._ws = _take_workspace(self.n, backend == "numba")
        self._recent: List[Tuple[NDArray[np.float64], NDArray[np.float64]]] = []  # (theta, margins), newest last
        self._hessian = np.zeros((self.d, self.d))
        self._fresh = True  # the next evaluation rebuilds the Hessian from every row
        self._turn = 0

    # ------------------------------------------------------------------ protocol
    def evaluate(self, theta: NDArray[np.float64]) -> Tuple[float, NDArray[np.float64], NDArray[np.float64]]:
        """``(L, grad L, Hessian of L)`` at ``theta``, with the Hessian updated over rows whose curvature changed."""
        theta = np.array(theta, dtype=np.float64)
        m = self._ws["margins"][self._turn]  # the buffer of the older recent point
        self._turn ^= 1
        rebuild = self._fresh or not self.loss.piecewise_quadratic
        if rebuild:
            self._hessian[:] = 0.0
            self._fresh = False
        total, grad, rows, coef = self._sweep(theta, m, self._ws["curvature"], rebuild)
        self._add_outer_products(rows, coef)
        self._recent = self._recent[-1:] + [(theta, m)]
        return total, grad, self._hessian.copy()

    def line(self, theta: NDArray[np.float64], p: NDArray[np.float64]) -> LineDerivatives:
        """Derivatives of ``t -> L(theta + t p)`` (the margins at ``theta`` are reused when known; the
        returned function keeps its own copy, so it stays valid across later evaluations)."""
        m = self._margins_at(theta).copy()
        s = self.y * (self.Z @ p)
        w = self.w
        if self.backend == "numba":
            kind, param, kernel = self._kind, self._param, self._kernels.line_derivatives

            def derivatives(t: float) -> Tuple[float, float]:
                return kernel(kind, param, m, s, w, float(t))
        else:
            loss = self.loss

            def derivatives(t: float) -> Tuple[float, float]:
                mt = m + t * s
                return float(w @ (loss.deriv(mt) * s)), float(w @ (loss.deriv2(mt) * s * s))
        return derivatives

    def release(self) -> None:
        """Hand the per-row work arrays to the next problem of the same size (this one is unusable after)."""
        ws, self._ws, self._recent = self._ws, None, []
        if ws is not None:
            _give_back_workspace(ws)

    # ------------------------------------------------------------------ the two backends
    def _sweep(self, theta, m, curvature, rebuild):
        """Margins into ``m``; loss sum, gradient, and the rows whose curvature changed with the change
        (with ``rebuild``: every row with curvature, or, for the kernel, none: it adds them itself)."""
        if self.backend == "numba":
            changed, delta = self._ws["changed"], self._ws["delta"]
            total, grad, k = self._kernels.sweep_margins(self._kind, self._param, self.Z, self.y, self.w, theta, m,
                                                         curvature, changed, delta, self._hessian, rebuild)
            return float(total), grad, changed[:k], delta[:k]
        if rebuild:
            curvature[:] = 0.0  # every row with curvature is then "changed"
        np.multiply(self.y, self.Z @ theta, out=m)
        total = float(self.w @ self.loss.value(m))
        grad = self.Z.T @ (self.w * self.y * self.loss.deriv(m))
        c = self.w * self.loss.deriv2(m)
        rows = np.flatnonzero(c != curvature)
        coef = c[rows] - curvature[rows]
        curvature[rows] = c[rows]
        return total, grad, rows, coef

    def _add_outer_products(self, rows, coef) -> None:
        if rows.size == 0:
            return
        if self.backend == "numba":
            self._kernels.add_weighted_outer_products(self._hessian, self.Z, rows, coef, rows.size)
        elif rows.size == self.n:  # every row changed (a rebuild; logistic): no gather copy of Z
            self._hessian += (self.Z * coef[:, None]).T @ self.Z
        else:
            Zr = self.Z[rows]
            self._hessian += (Zr * coef[:, None]).T @ Zr

    def _margins_at(self, theta) -> NDArray[np.float64]:
        for point, m in reversed(self._recent):
            if np.array_equal(point, theta):
                return m
        return self.y * (self.Z @ np.asarray(theta, dtype=np.float64))


class PredictorProblem:
    """``L(theta) = sum_i w_i l(z_i'theta, y_i)`` for a loss of the linear prediction (numpy).

    For a loss with ``constant_curvature`` (the squared error) the Hessian
    ``sum_i w_i l'' z_i z_i'`` is computed once, at construction.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Targets.
    w : ndarray of shape (n,)
        Non-negative weights.
    loss : object
        With elementwise ``value``, ``deriv`` and ``deriv2`` of ``(eta, y)``, e.g.
        :class:`~pydpowl.engine.losses.SquaredErrorLoss`.
    """

    backend = "numpy"

    def __init__(self, Z: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64], loss) -> None:
        self.Z = np.ascontiguousarray(Z, dtype=np.float64)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.w = np.ascontiguousarray(w, dtype=np.float64)
        self.loss = loss
        self.n, self.d = self.Z.shape
        self._hessian = self._hessian_at(None) if getattr(loss, "constant_curvature", False) else None

    def _hessian_at(self, eta) -> NDArray[np.float64]:
        c = self.w * (self.loss.deriv2(np.zeros(self.n) if eta is None else eta, self.y))
        if np.all(c == 1.0):  # squared error, unit weights: Z'Z without the row scaling
            return self.Z.T @ self.Z
        return (self.Z * c[:, None]).T @ self.Z

    def evaluate(self, theta: NDArray[np.float64]) -> Tuple[float, NDArray[np.float64], NDArray[np.float64]]:
        """``(L, grad L, Hessian of L)`` at ``theta``."""
        eta = self.Z @ np.asarray(theta, dtype=np.float64)
        total = float(self.w @ self.loss.value(eta, self.y))
        grad = self.Z.T @ (self.w * self.loss.deriv(eta, self.y))
        H = self._hessian.copy() if self._hessian is not None else self._hessian_at(eta)
        return total, grad, H

    def line(self, theta: NDArray[np.float64], p: NDArray[np.float64]) -> LineDerivatives:
        """Derivatives of ``t -> L(theta + t p)``."""
        eta = self.Z @ np.asarray(theta, dtype=np.float64)
        s = self.Z @ np.asarray(p, dtype=np.float64)
        w, y, loss = self.w, self.y, self.loss

        def derivatives(t: float) -> Tuple[float, float]:
            e = eta + t * s
            return float(w @ (loss.deriv(e, y) * s)), float(w @ (loss.deriv2(e, y) * s * s))
        return derivatives

    def release(self) -> None:
        """Nothing to hand back (no shared work arrays)."""


# One spare set of per-row work arrays, reused by the next problem with the same n and backend.
# Fresh large arrays cost a page fault per 4 KiB page on first touch, a sizeable share of a
# solve at large n on this kind of (virtualised) machine.
_SPARE: Dict[str, dict] = {}
_SPARE_LOCK = threading.Lock()


def _take_workspace(n: int, compiled: bool) -> dict:
    with _SPARE_LOCK:
        ws: Optional[dict] = _SPARE.pop("ws", None)
    if ws is not None and ws["n"] == n and ws["compiled"] == compiled:
        return ws
    ws = {"n": n, "compiled": compiled, "margins": (np.empty(n), np.empty(n)), "curvature": np.zeros(n)}
    if compiled:
        ws["changed"], ws["delta"] = np.empty(n, dtype=np.int64), np.empty(n)
    return ws


def _give_back_workspace(ws: dict) -> None:
    with _SPARE_LOCK:
        _SPARE["ws"] = ws
