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
``value(theta) -> L`` (optional)
    ``L(theta)`` alone. A problem that has it also takes
    ``evaluate(theta, value=False)``, which may skip the value and return
    None in its place: the solver asks for values only where a full Newton
    step's decrease is not proved by the slope at the trial point (convexity)
    and for the objective it reports, and :class:`MarginProblem` then spares
    the loss's value (the logistic's ``log1p``, its costliest step) on most
    evaluations.
``backend``
    A name for reports ("numpy", "numba", ...).
``release()`` (optional)
    Called once the solve is over, to hand work arrays back.

Each call is a sum over rows, so a problem may compute it in any way that
sums: :class:`MarginProblem` in one pass in numpy or with the numba kernels of
:mod:`pydpowl.engine.kernels`; :class:`QuadraticProblem` (the squared error)
from sufficient statistics summed once; a problem on a chunked (Dask) array can compute
the per-chunk partial sums of ``(L, gradient, Hessian)`` or of
``(dL/dt, d2L/dt2)`` blockwise and reduce them, so that nothing of length ``n``
reaches the solver, which never holds a per-row array.

:class:`MarginProblem` keeps the data column-major (each feature contiguous,
the layout in which both backends run their per-column loops fast) and, per
row, between calls, each row's curvature ``w_i l''(m_i)`` and, in numpy, the
margins of the last two points it evaluated (the line search starts from the
older one; the kernels recompute them instead, a pass saved on each call):
the Hessian of the next point is then the previous one plus a rank-k update
over the rows whose curvature changed (for the Huber hinge, after the first
steps, a handful), or, when many rows changed, one pass over all rows. Losses
whose curvature changes everywhere (logistic) get the Hessian rebuilt on every
evaluation, as one product of the curvatures with the rows' pair products
``z_ij z_ik`` (computed once per problem). Its per-row arrays are work arrays handed from one problem to the
next, so that a solve touches no fresh memory after the first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, List, Optional, Protocol, Tuple

import numpy as np
from numpy.typing import NDArray

from .losses import MarginLoss

__all__ = ["Problem", "MarginProblem", "QuadraticProblem", "LineDerivatives"]

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

    # optional: value(theta) -> float, with evaluate(theta, value=False) allowed to return None for L


class MarginProblem:
    """``L(theta) = sum_i w_i l(y_i z_i'theta)`` for a margin loss, in numpy or with the numba kernels.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Rows in the scaled space; kept column-major (Fortran order), which is
        copied once unless ``Z`` already is (as the feature scaling writes it).
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
        # column-major, float64 and writeable: the layout the kernels were compiled for (no compilation here)
        self.Z = np.require(Z, dtype=np.float64, requirements=["F", "W"])
        self.y = np.require(y, dtype=np.float64, requirements=["C", "W"])
        self.w = np.require(w, dtype=np.float64, requirements=["C", "W"])
        self.loss = loss
        self.n, self.d = self.Z.shape
        self.backend = backend
        if backend == "numba":
            spec = loss.kernel_spec()
            if spec is None:
                raise ValueError(f"backend='numba' needs a built-in loss ('huber' or 'logistic'), "
                                 f"got loss {loss.name!r}.")
            from .kernels import row_sweeps

            self._kernels, (self._kind, self._param) = row_sweeps, (int(spec[0]), float(spec[1]))
        elif backend != "numpy":
            raise ValueError(f"MarginProblem backend must be 'numpy' or 'numba', got backend={backend!r}.")
        self._ws = _take_workspace(self.n, self.d, backend == "numba")
        # every weight 1 (unweighted fits): the products with w are skipped, which changes no value
        self._unit_weights = bool(np.all(self.w == 1.0))
        # evaluate(value=False) skips the value only for a loss with slopes of its own (cheaper than its terms);
        # for the others the value comes with the slopes anyway and is returned
        self._skips_values = type(loss).slopes is not MarginLoss.slopes
        if backend == "numpy":
            np.multiply(self.w, self.y, out=self._ws["wy"])
        # (theta, margins or None), newest last
        self._recent: List[Tuple[NDArray[np.float64], Optional[NDArray[np.float64]]]] = []
        self._hessian = np.zeros((self.d, self.d))
        self._fresh = True  # the next evaluation rebuilds the Hessian from every row
        self._pairs: Optional[NDArray[np.float64]] = None  # z_ij z_ik (j <= k) per row, see _pair_products
        self._turn = 0

    # ------------------------------------------------------------------ protocol
    def evaluate(self, theta: NDArray[np.float64],
                 value: bool = True) -> Tuple[Optional[float], NDArray[np.float64], NDArray[np.float64]]:
        """``(L, grad L, Hessian of L)`` at ``theta``, with the Hessian updated over rows whose curvature changed.

        With ``value=False`` the numpy path skips the loss's value (``L`` is then None; :meth:`value` gives
        it later from the kept margins); the kernels compute it anyway.
        """
        theta = np.array(theta, dtype=np.float64)
        rebuild = self._fresh or not self.loss.piecewise_quadratic
        self._fresh = False
        if self.backend == "numba":
            total, grad = self._sweep_numba(theta, rebuild)
            m = None  # the kernel does not keep the margins
        else:
            m = self._ws["margins"][self._turn]  # the buffer of the older recent point
            self._turn ^= 1
            total, grad = self._sweep_numpy(theta, m, rebuild, value)
        self._recent = self._recent[-1:] + [(theta, m)]
        return total, grad, self._hessian.copy()

    def value(self, theta: NDArray[np.float64]) -> float:
        """``L(theta)`` alone, summed as :meth:`evaluate` sums it (from the margins of a recent point when kept)."""
        m, w, total = self._margins_at(np.asarray(theta, dtype=np.float64), copy=False), self.w, 0.0
        for block in _blocks(self.n):
            v = self.loss.value(m[block])
            total += float(np.add.reduce(v)) if self._unit_weights else float(np.einsum("i,i->", w[block], v))
        return total

    def line(self, theta: NDArray[np.float64], p: NDArray[np.float64]) -> LineDerivatives:
        """Derivatives of ``t -> L(theta + t p)`` (the margins at ``theta`` are reused when known; the
        returned function keeps its own copy, so it stays valid across later evaluations)."""
        m = self._margins_at(theta)
        s = self._margins(p)
        w = self.w
        if self.backend == "numba":
            kind, param, kernel = self._kind, self._param, self._kernels.line_derivatives

            def derivatives(t: float) -> Tuple[float, float]:
                return kernel(kind, param, m, s, w, float(t))
        else:
            loss, weighted_s = self.loss, w * s

            def derivatives(t: float) -> Tuple[float, float]:
                l1, l2 = loss.slopes(m + t * s)
                return float(weighted_s @ l1), float(weighted_s @ (l2 * s))
        return derivatives

    def release(self) -> None:
        """Hand the per-row work arrays to the next problem of the same size (this one is unusable after)."""
        ws, self._ws, self._recent, self._pairs = self._ws, {}, [], None  # an empty workspace: unusable
        if ws:
            _give_back_workspace(ws)

    # ------------------------------------------------------------------ the two backends
    def _sweep_numba(self, theta, rebuild):
        """One kernel pass; with ``rebuild`` it sets the Hessian itself, otherwise it lists the rows whose
        curvature changed and the rank-k update follows."""
        ws = self._ws
        changed, delta = ws["changed"], ws["delta"]
        total, grad, k = self._kernels.sweep_margins(self._kind, self._param, self.Z, self.y, self.w, theta,
                                                     ws["curvature"], changed, delta, self._hessian, rebuild)
        if k:
            self._kernels.add_weighted_outer_products(self._hessian, self.Z, changed, delta, k)
        return float(total), grad

    def _sweep_numpy(self, theta, m, rebuild, value=True):
        """Margins into ``m``, the loss terms of the rows block by block (one ``loss.terms`` call per block, or
        ``loss.slopes`` without ``value``: the total is then None), and the Hessian rebuilt or updated over
        the rows whose curvature ``w_i l''(m_i)`` changed (per-row results go to work arrays)."""
        ZT = self.Z.T  # (d, n), C-contiguous: each feature's column is a contiguous row
        ws, w = self._ws, self.w
        coef, c, curvature = ws["coef"], ws["c"], ws["curvature"]
        if theta.any():
            np.einsum("ji,j->i", ZT, theta, out=m)
            m *= self.y
            value = value or not self._skips_values
            total, wy, unit = (0.0 if value else None), ws["wy"], self._unit_weights
            for block in _blocks(self.n):  # the loss terms' temporaries stay small (see _NUMPY_BLOCK)
                if value:
                    v, d1, d2 = self.loss.terms(m[block])
                    total += float(np.add.reduce(v)) if unit else float(np.einsum("i,i->", w[block], v))
                else:
                    d1, d2 = self.loss.slopes(m[block])
                np.multiply(d1, wy[block], out=coef[block])  # w_i y_i l'(m_i)
                if unit:
                    c[block] = d2
                else:
                    np.multiply(d2, w[block], out=c[block])  # w_i l''(m_i)
            grad = np.einsum("ji,i->j", ZT, coef)
        else:  # every margin is 0 (a starting point): the loss terms are one number each
            m[:] = 0.0
            value, d1, d2 = (float(t[0]) for t in self.loss.terms(np.zeros(1)))
            total = value * float(np.add.reduce(w))
            grad = d1 * np.einsum("ji,i->j", ZT, ws["wy"])
            np.multiply(w, d2, out=c)
        if rebuild and not self.loss.piecewise_quadratic:  # every row's curvature changed: from scratch
            pairs = self._pair_products()
            if pairs is None:
                self._hessian[:] = 0.0
                _add_weighted_gram(self._hessian, ZT, c, None, ws)
            else:  # its upper triangle is linear in the curvatures: one product with the fixed pair products
                upper = np.einsum("ki,i->k", pairs, c)
                rows, cols = self._upper
                self._hessian[rows, cols] = upper
                self._hessian[cols, rows] = upper
        else:
            if rebuild:  # piecewise quadratic, first evaluation: over the rows of non-zero curvature
                self._hessian[:] = 0.0
                curvature[:] = 0.0
            rows = np.not_equal(c, curvature, out=ws["changed"]).nonzero()[0]
            if rows.size:  # the change in curvature (0 elsewhere) over every row if many changed, else over those
                np.subtract(c, curvature, out=coef)
                _add_weighted_gram(self._hessian, ZT, coef, None if rows.size > _GATHER_MAX_SHARE * self.n else rows,
                                   ws)
        ws["curvature"], ws["c"] = c, curvature  # the new curvature is kept; the old buffer is reused
        return total, grad

    def _pair_products(self) -> Optional[NDArray[np.float64]]:
        """``P[(j, k), i] = z_ij z_ik`` for ``j <= k`` (numpy, losses whose curvature changes on every row, such
        as the logistic, which rebuild the Hessian at each evaluation), computed once per problem into a work
        array; then ``H[j, k] = sum_i P[(j, k), i] c_i`` is one product, about half the time of the weighted
        Gram (measured at 20,000 and 200,000 rows, d = 3). None where it does not pay or would take more
        than ``_PAIRS_MAX_ENTRIES`` entries."""
        if self._pairs is not None:
            return self._pairs
        d, n = self.d, self.n
        n_pairs = d * (d + 1) // 2
        if n_pairs * n > _PAIRS_MAX_ENTRIES:
            return None
        pairs = self._ws.get("pairs")
        if pairs is None:
            pairs = self._ws["pairs"] = np.empty((n_pairs, n))
        ZT = self.Z.T
        self._upper = np.triu_indices(d)
        for r, (j, k) in enumerate(zip(*self._upper)):
            np.multiply(ZT[j], ZT[k], out=pairs[r])
        self._pairs = pairs
        return pairs

    def _margins(self, theta) -> NDArray[np.float64]:
        theta = np.asarray(theta, dtype=np.float64)
        if self.backend == "numba":
            out = np.empty(self.n)
            self._kernels.margins_at(self.Z, self.y, theta, out)
            return out
        return self.y * np.einsum("ji,j->i", self.Z.T, theta)

    def _margins_at(self, theta, copy: bool = True) -> NDArray[np.float64]:
        """The margins at ``theta``: those of a recent point when kept (a copy, or the work array itself for
        a caller that only reads it at once), else computed."""
        for point, m in reversed(self._recent):
            if m is not None and np.array_equal(point, theta):
                return m.copy() if copy else m
        return self._margins(theta)


class QuadraticProblem:
    """The squared-error data term ``L(theta) = sum_i w_i (z_i'theta - y_i)^2 / 2`` from its sufficient statistics.

    The loss is :class:`~pydpowl.engine.losses.SquaredErrorLoss`; expanded,
    ``L(theta) = theta'A theta / 2 - theta'b + c / 2`` with ``A = Z'WZ``,
    ``b = Z'Wy`` and ``c = y'Wy``. One pass over the rows gives ``(A, b, c)``
    (:meth:`from_rows`, or the caller computes them as it prepares the rows);
    after that every call of the protocol costs ``O(d^2)``, whatever ``n``.

    Parameters
    ----------
    gram : ndarray of shape (d, d)
        ``A = Z'WZ`` (symmetric positive semi-definite).
    moment : ndarray of shape (d,)
        ``b = Z'Wy``.
    offset : float
        ``c = y'Wy``.
    n : int
        Rows (the certificate is on ``F = G / n``).
    """

    backend = "numpy"

    def __init__(self, gram: NDArray[np.float64], moment: NDArray[np.float64], offset: float, n: int) -> None:
        self.gram = np.array(gram, dtype=np.float64)
        self.moment = np.array(moment, dtype=np.float64)
        self.offset = float(offset)
        self.n = int(n)
        self.d = self.moment.shape[0]
        if self.gram.shape != (self.d, self.d):
            raise ValueError(f"gram must have shape ({self.d}, {self.d}) to match moment, got {self.gram.shape}.")

    @classmethod
    def from_rows(cls, Z: NDArray[np.float64], y: NDArray[np.float64],
                  w: Optional[NDArray[np.float64]] = None) -> "QuadraticProblem":
        """The statistics of rows ``Z`` (n, d), targets ``y`` (n,) and weights ``w`` (n,; ones by default)."""
        Z = np.asarray(Z, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        wy = y if w is None else np.asarray(w, dtype=np.float64) * y
        WZ = Z if w is None else Z * np.asarray(w, dtype=np.float64)[:, None]
        return cls(WZ.T @ Z, Z.T @ wy, float(y @ wy), Z.shape[0])

    def evaluate(self, theta: NDArray[np.float64]) -> Tuple[float, NDArray[np.float64], NDArray[np.float64]]:
        """``(L, grad L, Hessian of L)`` at ``theta``."""
        theta = np.asarray(theta, dtype=np.float64)
        A_theta = self.gram @ theta
        total = 0.5 * float(theta @ A_theta) - float(theta @ self.moment) + 0.5 * self.offset
        return total, A_theta - self.moment, self.gram.copy()

    def line(self, theta: NDArray[np.float64], p: NDArray[np.float64]) -> LineDerivatives:
        """Derivatives of ``t -> L(theta + t p)`` (a quadratic in ``t``)."""
        p = np.asarray(p, dtype=np.float64)
        A_p = self.gram @ p
        slope0 = float(A_p @ np.asarray(theta, dtype=np.float64)) - float(p @ self.moment)
        curvature = float(p @ A_p)

        def derivatives(t: float) -> Tuple[float, float]:
            return slope0 + t * curvature, curvature
        return derivatives

    def release(self) -> None:
        """Nothing to hand back (no per-row arrays)."""


#: at most this many pair products (``d (d + 1) / 2`` per row, 8 bytes each: 32 MB) are kept per problem
_PAIRS_MAX_ENTRIES = 4_000_000
#: above this share of the rows, a Hessian change is summed over all rows (zero coefficients included)
#: rather than over the gathered rows that changed
_GATHER_MAX_SHARE = 0.5
#: at most this many rows per call of the loss terms in the numpy path (the blocks are equal). Its
#: temporaries then stay small (96 KiB at most) and are reused from the heap; n-sized ones, and even
#: blocks of 120-160 KiB in some call histories, grow and trim the heap on every call, and the page
#: faults cost more than the arithmetic (measured: 400-2,400 per fit from 20,000 to 100,000 rows; with
#: these blocks 0-60). The Gram products use work arrays.
_NUMPY_BLOCK = 12288


def _blocks(n: int):
    """Equal slices of at most ``_NUMPY_BLOCK`` rows covering ``range(n)``."""
    size = -(-n // -(-n // _NUMPY_BLOCK)) if n else 1  # ceil(n / number of blocks)
    return [slice(start, start + size) for start in range(0, n, size)]


def _add_weighted_gram(H: NDArray[np.float64], ZT: NDArray[np.float64], coef: NDArray[np.float64],
                       rows: Optional[NDArray[np.intp]], ws: dict) -> None:
    """``H += sum_i coef_i z_i z_i'`` over the columns ``z_i`` of ``ZT`` (d, n), all of them or those listed
    in ``rows`` (gathered), ``_NUMPY_BLOCK`` at a time into the work arrays ``ws["columns"]`` and
    ``ws["weighted"]``, by einsum (faster than the reference BLAS on these thin shapes)."""
    columns, weighted, gathered = ws["columns"], ws["weighted"], ws["gathered"]
    for block in _blocks(ZT.shape[1] if rows is None else rows.size):
        if rows is None:
            Zk, ck = ZT[:, block], coef[block]
        else:
            k = rows[block].size
            # rows are valid indices; mode "clip" spares numpy's bounds-checking copy of ``out``
            Zk = np.take(ZT, rows[block], axis=1, out=columns[:, :k], mode="clip")
            ck = np.take(coef, rows[block], out=gathered[:k], mode="clip")
        H += np.einsum("ji,ki->jk", np.multiply(Zk, ck, out=weighted[:, :Zk.shape[1]]), Zk)


# Spare sets of per-row work arrays, reused by the next problem with the same n, d and backend (a solve
# from 100,000 rows uses two sizes: its subsample's and its own). Fresh large arrays cost a page fault
# per 4 KiB page on first touch, a sizeable share of a solve at large n on this kind of (virtualised)
# machine.
_SPARE: "OrderedDict[Tuple[int, int, bool], dict]" = OrderedDict()
_SPARE_LOCK = threading.Lock()
#: shapes kept (the least recently used is dropped)
_SPARE_SIZES = 2


def _take_workspace(n: int, d: int, compiled: bool) -> dict:
    with _SPARE_LOCK:
        ws: Optional[dict] = _SPARE.pop((n, d, compiled), None)
    if ws is not None:
        return ws
    ws = {"key": (n, d, compiled), "curvature": np.zeros(n)}
    if compiled:
        ws["changed"], ws["delta"] = np.empty(n, dtype=np.int64), np.empty(n)
    else:
        ws["margins"] = (np.empty(n), np.empty(n))
        ws["wy"], ws["coef"], ws["c"] = np.empty(n), np.empty(n), np.empty(n)
        ws["changed"] = np.empty(n, dtype=bool)
        block = min(n, _NUMPY_BLOCK)
        ws["columns"], ws["weighted"], ws["gathered"] = np.empty((d, block)), np.empty((d, block)), np.empty(block)
    return ws


def _give_back_workspace(ws: dict) -> None:
    with _SPARE_LOCK:
        _SPARE[ws["key"]] = ws
        while len(_SPARE) > _SPARE_SIZES:
            _SPARE.popitem(last=False)
