"""Fused single-pass kernels (numba) for the built-in losses.

One sweep over the rows computes the margins, the objective, the gradient and
the Hessian of ``G(theta) = sum_i w_i l(y_i z_i'theta) + gamma/2 ||theta||^2``;
this keeps a Newton iteration close to the memory-bandwidth bound at large n.

The sweep is generated for each number of columns ``d`` (up to
``MAX_UNROLLED_D``) with the gradient and the lower triangle of the Hessian in
scalar accumulators: numba then keeps them in registers, which is about three
times faster than accumulating into an array. Wider problems use a generic
loop. For the Huber loss (d <= ``MAX_UNROLLED_D``) the sweep skips the Hessian:
it records which rows changed quadratic zone, and the Hessian follows by a
rank-k update over those rows (after the first sweeps, a handful), which
brings a sweep close to one pass of memory traffic. Without numba,
:func:`fused_problem` returns None and the solver uses the
numpy implementation, which gives the same answer up to rounding.
"""

from __future__ import annotations

import math
import threading
from typing import Callable, Dict, Optional, Tuple

import numpy as np
from numpy.typing import NDArray

from .losses import HuberHingeLoss, LogisticLoss, MarginLoss

try:  # optional accelerator
    import numba

    NUMBA_AVAILABLE = True
except Exception:  # pragma: no cover - exercised on machines without numba
    numba = None
    NUMBA_AVAILABLE = False

__all__ = ["NUMBA_AVAILABLE", "MAX_UNROLLED_D", "fused_problem", "fused_scale_features"]

_HUBER, _LOGISTIC = 0, 1
MAX_UNROLLED_D = 16

# Loss terms at margin ``mi`` for the generated sweep: they set ``val``, ``d1`` and
# ``d2`` (value, first and second derivative). The Huber form is branch-free:
# with r = (1 + h - m)/(2h), the quadratic zone |1 - m| <= h is 0 <= r <= 1.
_LOSS_SNIPPETS = {
    _HUBER: (
        "r = (1.0 + h - mi) / (2.0 * h)",
        "quad = 1.0 if (r >= 0.0 and r <= 1.0) else 0.0",
        "val = quad * (h * r * r) + (max(1.0 - mi, 0.0) if r > 1.0 else 0.0)",
        "d1 = -min(max(r, 0.0), 1.0)",
        "d2 = quad / (2.0 * h)",
    ),
    _LOGISTIC: (
        "e = math.exp(-abs(mi))",
        "val = math.log1p(e) + (-mi if mi < 0.0 else 0.0)",
        "sn = e / (1.0 + e) if mi >= 0.0 else 1.0 / (1.0 + e)",
        "d1 = -sn",
        "d2 = sn * (1.0 - sn)",
    ),
}


def _row_lines(kind: int, d: int, ind: str) -> list:
    """Loop-body lines shared by the unrolled sweeps: load row i, its margin (stored in
    ``m_out``), the loss terms, the objective and the gradient accumulators."""
    lines = [f"{ind}z{j} = Z[i, {j}]" for j in range(d)]
    lines.append(f"{ind}yi = y[i]")
    lines.append(f"{ind}mi = yi * (" + " + ".join(f"z{j} * t{j}" for j in range(d)) + ")")
    lines.append(f"{ind}m_out[i] = mi")
    lines += [ind + stmt for stmt in _LOSS_SNIPPETS[kind]]
    lines += [f"{ind}wi = w[i]", f"{ind}obj += wi * val", f"{ind}c1 = wi * d1 * yi"]
    lines += [f"{ind}g{j} += c1 * z{j}" for j in range(d)]
    return lines


def _gradient_return_lines(d: int, extra: str) -> list:
    """Closing lines: assemble ``g = grad G``, add the ridge term to the objective and return
    ``(G, g, <extra>)`` (``extra`` empty for just ``(G, g)``)."""
    lines = [f"    g = np.empty({d})", "    sq = 0.0"]
    for j in range(d):
        lines.append(f"    g[{j}] = g{j} + gamma * t{j}")
        lines.append(f"    sq += t{j} * t{j}")
    lines.append("    return obj + 0.5 * gamma * sq, g" + (f", {extra}" if extra else ""))
    return lines


def _sweep_source(kind: int, d: int) -> str:
    """Source of the unrolled sweep for ``d`` columns (generated, then compiled)."""
    ind = " " * 8
    lines = ["def sweep(h, Z, y, w, theta, gamma, m_out):", "    n = Z.shape[0]", "    obj = 0.0"]
    lines += [f"    t{j} = theta[{j}]" for j in range(d)]
    lines += [f"    g{j} = 0.0" for j in range(d)]
    lines += [f"    H{j}_{k} = 0.0" for j in range(d) for k in range(j + 1)]
    lines.append("    for i in range(n):")
    lines += _row_lines(kind, d, ind)
    lines.append(f"{ind}c2 = wi * d2")
    for j in range(d):
        lines.append(f"{ind}cz = c2 * z{j}")
        lines += [f"{ind}H{j}_{k} += cz * z{k}" for k in range(j + 1)]
    lines.append(f"    H = np.empty(({d}, {d}))")
    for j in range(d):
        for k in range(j + 1):
            lines.append(f"    H[{j}, {k}] = H{j}_{k}")
            lines.append(f"    H[{k}, {j}] = H{j}_{k}")
        lines.append(f"    H[{j}, {j}] += gamma")
    lines += _gradient_return_lines(d, "H")
    return "\n".join(lines)


def _lean_huber_source(d: int) -> str:
    """Source of the Huber sweep WITHOUT the Hessian: margins, objective, gradient, and the
    rows whose quadratic-zone membership changed since the last sweep (``zone`` is updated in
    place and their indices are written to ``changed``; the count is returned). The Hessian
    then follows by a rank-k update over those rows only (the "update" kernel)."""
    ind = " " * 8
    lines = ["def lean(h, Z, y, w, theta, gamma, m_out, zone, changed):", "    n = Z.shape[0]",
             "    obj = 0.0", "    k = 0"]
    lines += [f"    t{j} = theta[{j}]" for j in range(d)]
    lines += [f"    g{j} = 0.0" for j in range(d)]
    lines.append("    for i in range(n):")
    lines += _row_lines(_HUBER, d, ind)
    lines += [f"{ind}qi = 1 if quad > 0.0 else 0", f"{ind}if qi != zone[i]:",
              f"{ind}    zone[i] = qi", f"{ind}    changed[k] = i", f"{ind}    k += 1"]
    lines += _gradient_return_lines(d, "k")
    return "\n".join(lines)


def _first_huber_source(d: int) -> str:
    """Source of the first Huber sweep: margins, objective, gradient, the Hessian over the
    rows in the quadratic zone (accumulated only for those rows) and the zone of every row."""
    ind = " " * 8
    pairs = [(j, k) for j in range(d) for k in range(j + 1)]
    lines = ["def first(h, Z, y, w, theta, gamma, m_out, zone, Hd):", "    n = Z.shape[0]", "    obj = 0.0",
             "    inv2h = 1.0 / (2.0 * h)"]
    lines += [f"    t{j} = theta[{j}]" for j in range(d)]
    lines += [f"    g{j} = 0.0" for j in range(d)]
    lines += [f"    H{j}_{k} = 0.0" for j, k in pairs]
    lines.append("    for i in range(n):")
    lines += _row_lines(_HUBER, d, ind)
    lines += [f"{ind}if quad > 0.0:", f"{ind}    zone[i] = 1", f"{ind}    c = wi * inv2h"]
    for j in range(d):
        lines.append(f"{ind}    cz = c * z{j}")
        lines += [f"{ind}    H{j}_{k} += cz * z{k}" for k in range(j + 1)]
    lines += [f"{ind}else:", f"{ind}    zone[i] = 0"]
    lines += [f"    Hd[{j}, {k}] = H{j}_{k}" for j, k in pairs]
    lines += [f"    Hd[{k}, {j}] = H{j}_{k}" for j, k in pairs if j != k]
    lines += _gradient_return_lines(d, "")
    return "\n".join(lines)


def _hess_update_source(d: int) -> str:
    """Unrolled rank-k Huber Hessian update over the rows listed in ``changed``: add
    ``w_i/(2h) z_i z_i'`` for rows now in the quadratic zone, subtract it for rows that left."""
    ind = " " * 8
    pairs = [(j, k) for j in range(d) for k in range(j + 1)]
    lines = ["def update(Hd, Z, w, zone, changed, k, inv2h):"]
    lines += [f"    H{j}_{k} = Hd[{j}, {k}]" for j, k in pairs]
    lines += ["    for a in range(k):", f"{ind}i = changed[a]",
              f"{ind}c = w[i] * inv2h if zone[i] == 1 else -w[i] * inv2h"]
    lines += [f"{ind}z{j} = Z[i, {j}]" for j in range(d)]
    for j in range(d):
        lines.append(f"{ind}cz = c * z{j}")
        lines += [f"{ind}H{j}_{k} += cz * z{k}" for k in range(j + 1)]
    lines += [f"    Hd[{j}, {k}] = H{j}_{k}" for j, k in pairs]
    lines += [f"    Hd[{k}, {j}] = H{j}_{k}" for j, k in pairs if j != k]
    return "\n".join(lines)


def _all_quadratic_source(d: int) -> str:
    """Unrolled pass for the all-rows-quadratic Huber surrogate: lower triangle of
    sum_i w_i/(2h) z_i z_i' and sum_i w_i (1+h)/(2h) y_i z_i."""
    ind = " " * 8
    pairs = [(j, k) for j in range(d) for k in range(j + 1)]
    lines = ["def allq(Hd, b, Z, y, w, h):", "    inv2h = 1.0 / (2.0 * h)"]
    lines += [f"    H{j}_{k} = 0.0" for j, k in pairs] + [f"    b{j} = 0.0" for j in range(d)]
    lines += ["    for i in range(Z.shape[0]):", f"{ind}c = w[i] * inv2h", f"{ind}cb = c * (1.0 + h) * y[i]"]
    lines += [f"{ind}z{j} = Z[i, {j}]" for j in range(d)]
    for j in range(d):
        lines.append(f"{ind}b{j} += cb * z{j}")
        lines.append(f"{ind}cz = c * z{j}")
        lines += [f"{ind}H{j}_{k} += cz * z{k}" for k in range(j + 1)]
    lines += [f"    Hd[{j}, {k}] = H{j}_{k}" for j, k in pairs] + [f"    b[{j}] = b{j}" for j in range(d)]
    return "\n".join(lines)


def _generic_sweep_source(kind: int) -> str:
    """Source of the array-accumulator sweep for any ``d``."""
    ind = " " * 8
    body = [
        "def sweep(h, Z, y, w, theta, gamma, m_out):",
        "    n, d = Z.shape",
        "    obj = 0.0",
        "    g = np.zeros(d)",
        "    H = np.zeros((d, d))",
        "    for i in range(n):",
        f"{ind}acc = 0.0",
        f"{ind}for j in range(d):",
        f"{ind}    acc += Z[i, j] * theta[j]",
        f"{ind}mi = y[i] * acc",
        f"{ind}m_out[i] = mi",
    ]
    body += [ind + stmt for stmt in _LOSS_SNIPPETS[kind]]
    body += [
        f"{ind}wi = w[i]",
        f"{ind}obj += wi * val",
        f"{ind}c1 = wi * d1 * y[i]",
        f"{ind}c2 = wi * d2",
        f"{ind}for j in range(d):",
        f"{ind}    g[j] += c1 * Z[i, j]",
        f"{ind}    if c2 != 0.0:",
        f"{ind}        cz = c2 * Z[i, j]",
        f"{ind}        for k in range(j + 1):",
        f"{ind}            H[j, k] += cz * Z[i, k]",
        "    sq = 0.0",
        "    for j in range(d):",
        "        g[j] += gamma * theta[j]",
        "        sq += theta[j] * theta[j]",
        "        for k in range(j):",
        "            H[k, j] = H[j, k]",
        "        H[j, j] += gamma",
        "    return obj + 0.5 * gamma * sq, g, H",
    ]
    return "\n".join(body)


def _line_source(kind: int) -> str:
    ind = " " * 8
    body = ["def line(h, m, s, w, t):", "    a1 = 0.0", "    a2 = 0.0", "    for i in range(m.shape[0]):",
            f"{ind}mi = m[i] + t * s[i]"]
    body += [ind + stmt for stmt in _LOSS_SNIPPETS[kind]]
    body += [f"{ind}ws = w[i] * s[i]", f"{ind}a1 += ws * d1", f"{ind}a2 += ws * s[i] * d2", "    return a1, a2"]
    return "\n".join(body)


if NUMBA_AVAILABLE:

    @numba.njit(cache=True, nogil=True)
    def _huber_zone(h: float, mu: float) -> int:
        if mu > 1.0 + h:
            return 0  # flat: l = 0
        if abs(1.0 - mu) <= h:
            return 1  # quadratic
        return 2  # linear

    @numba.njit(cache=True, nogil=True)
    def _huber_line_setup(h, m, s, w, a, b):
        """Split rows for t in [a, b]: constant-zone rows are summed into
        d1 = A0 + A1 t, d2 = A1; rows that change zone are returned by index."""
        n = m.shape[0]
        A0 = 0.0
        A1 = 0.0
        idx = np.empty(n, dtype=np.int64)
        k = 0
        inv2h = 1.0 / (2.0 * h)
        for i in range(n):
            za = _huber_zone(h, m[i] + a * s[i])
            zb = _huber_zone(h, m[i] + b * s[i])
            if za != zb:
                idx[k] = i
                k += 1
            elif za == 2:
                A0 -= w[i] * s[i]
            elif za == 1:
                ws = w[i] * s[i]
                A0 -= ws * (1.0 + h - m[i]) * inv2h
                A1 += ws * s[i] * inv2h
        return A0, A1, idx[:k].copy()

    @numba.njit(cache=True, nogil=True)
    def _scale_rows(X, lower, upper, col_scale, dim_scale, off, Z):
        """Clip, intercept and scale in one pass, with the same floating-point operations
        as ``(clip(X) / col_scale) / dim_scale``; returns the number of clipped entries."""
        n, p = X.shape
        count = 0
        for i in range(n):
            if off == 1:
                Z[i, 0] = (1.0 / col_scale[0]) / dim_scale
            for j in range(p):
                x = X[i, j]
                v = min(max(x, lower[j]), upper[j])
                if v != x:
                    count += 1
                Z[i, off + j] = (v / col_scale[off + j]) / dim_scale
        return count

    @numba.njit(cache=True, nogil=True)
    def _huber_line_subset(h, m, s, w, idx, t):
        d1 = 0.0
        d2 = 0.0
        inv2h = 1.0 / (2.0 * h)
        for j in range(idx.shape[0]):
            i = idx[j]
            mu = m[i] + t * s[i]
            z = _huber_zone(h, mu)
            if z == 2:
                d1 -= w[i] * s[i]
            elif z == 1:
                ws = w[i] * s[i]
                d1 -= ws * (1.0 + h - mu) * inv2h
                d2 += ws * s[i] * inv2h
        return d1, d2


_COMPILED: Dict[Tuple[str, int, int], Callable] = {}
_LOCK = threading.Lock()

# One spare set of per-row work arrays, reused by the next problem with the same n.
# Fresh large arrays cost a page fault per 4 KiB page on first touch, which on this
# kind of (virtualised) machine is a sizeable share of a solve at large n.
_SPARE: Dict[str, object] = {}
_SPARE_LOCK = threading.Lock()


def _take_workspace(n: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    with _SPARE_LOCK:
        ws = _SPARE.pop("ws", None)
    if ws is not None and ws[0].shape[0] == n:
        return ws
    return np.empty(n), np.empty(n), np.empty(n, dtype=np.int8), np.empty(n, dtype=np.int64)


def _give_back_workspace(ws) -> None:
    with _SPARE_LOCK:
        _SPARE["ws"] = ws


def _compile(source: str, name: str) -> Callable:
    namespace = {"np": np, "math": math}
    exec(compile(source, f"<pydpowl generated {name}>", "exec"), namespace)  # noqa: S102 - our own template
    return numba.njit(nogil=True)(namespace[name])


def _kernel(which: str, kind: int, d: int) -> Callable:
    key = (which, kind, d if which in ("sweep", "lean", "first", "update", "allq") else 0)
    with _LOCK:
        fn = _COMPILED.get(key)
        if fn is None:
            if which == "line":
                fn = _compile(_line_source(kind), "line")
            elif which == "lean":
                fn = _compile(_lean_huber_source(d), "lean")
            elif which == "first":
                fn = _compile(_first_huber_source(d), "first")
            elif which == "update":
                fn = _compile(_hess_update_source(d), "update")
            elif which == "allq":
                fn = _compile(_all_quadratic_source(d), "allq")
            elif d <= MAX_UNROLLED_D:
                fn = _compile(_sweep_source(kind, d), "sweep")
            else:
                fn = _compile(_generic_sweep_source(kind), "sweep")
            _COMPILED[key] = fn
    return fn


class FusedProblem:
    """Same interface as :class:`pydpowl.engine.problem.NumpyProblem`, one pass per evaluation."""

    backend = "numba"

    def __init__(self, Z, y, w, gamma: float, kind: int, h: float) -> None:
        self.Z = np.ascontiguousarray(Z, dtype=np.float64)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.w = np.ascontiguousarray(w, dtype=np.float64)
        self.gamma, self.kind, self.h = float(gamma), kind, float(h)
        self.n, self.d = self.Z.shape
        self._line = _kernel("line", kind, self.d)
        # Two margin buffers, used in turn: the margins of the previous point stay valid
        # while a trial point is evaluated (the solver may fall back to a line search).
        self._ws = _take_workspace(self.n)
        self._bufs = (self._ws[0], self._ws[1])
        self._turn = 0
        self._cache: Optional[tuple] = None
        self._lean = kind == _HUBER and self.d <= MAX_UNROLLED_D
        if self._lean:
            # Huber: gradient sweeps only; the Hessian is kept up to date by rank-k
            # updates over the rows whose quadratic-zone membership changed.
            self._sweep = _kernel("lean", kind, self.d)
            self._first = _kernel("first", kind, self.d)
            self._update = _kernel("update", kind, self.d)
            self._zone_ready = False  # the first sweep builds the Hessian and the zones
            self._allq = _kernel("allq", kind, self.d)
            self._zone = self._ws[2]  # fully written by the first sweep
            self._changed = self._ws[3]
            self._Hd = np.zeros((self.d, self.d))
        else:
            self._sweep = _kernel("sweep", kind, self.d)

    def margins(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        m = self._bufs[self._turn]
        self._turn ^= 1
        if self._lean and not self._zone_ready:
            obj, g = self._first(self.h, self.Z, self.y, self.w, theta, self.gamma, m, self._zone, self._Hd)
            self._zone_ready = True
        elif self._lean:
            obj, g, k = self._sweep(self.h, self.Z, self.y, self.w, theta, self.gamma, m, self._zone, self._changed)
            if k:
                self._update(self._Hd, self.Z, self.w, self._zone, self._changed, k, 1.0 / (2.0 * self.h))
        if self._lean:  # the kernels keep both triangles of Hd
            H = self._Hd.copy()
            H.flat[:: self.d + 1] += self.gamma
        else:
            obj, g, H = self._sweep(self.h, self.Z, self.y, self.w, theta, self.gamma, m)
        self._cache = (theta.copy(), g, H, obj)
        return m

    def release(self) -> None:
        """Hand the per-row work arrays to the next problem (the object is unusable after)."""
        ws, self._ws = getattr(self, "_ws", None), None
        self._bufs = self._zone = self._changed = None
        self._cache = None
        if ws is not None:
            _give_back_workspace(ws)

    def quadratic_start(self) -> Optional[NDArray[np.float64]]:
        """Huber only: the minimiser with every row in the quadratic zone (a weighted ridge
        regression, one pass), as a starting point."""
        if not self._lean:
            return None
        Hd = np.zeros((self.d, self.d))
        b = np.zeros(self.d)
        self._allq(Hd, b, self.Z, self.y, self.w, self.h)
        A = np.tril(Hd) + np.tril(Hd, -1).T
        A[np.diag_indices_from(A)] += self.gamma
        return np.linalg.solve(A, b)

    def _cached(self, theta):
        c = self._cache
        if c is None or not np.array_equal(c[0], theta):
            self.margins(theta)
            c = self._cache
        return c

    def objective(self, theta, m) -> float:
        return float(self._cached(theta)[3])

    def gradient(self, theta, m):
        return self._cached(theta)[1].copy()

    def grad_hess(self, theta, m):
        c = self._cached(theta)
        return c[1].copy(), c[2].copy()

    def direction_margins(self, p):
        return self.y * (self.Z @ p)

    def line_derivatives(self, m, s, t, theta, p) -> Tuple[float, float]:
        d1, d2 = self._line(self.h, m, s, self.w, float(t))
        return d1 + self.gamma * float(theta @ p + t * (p @ p)), d2 + self.gamma * float(p @ p)

    def restricted_line(self, m, s, lo: float, hi: float, theta, p) -> Optional[Callable[[float], Tuple[float, float]]]:
        """Exact ``t -> (G'(t), G''(t))`` valid on ``[lo, hi]`` that only revisits rows
        changing Huber zone there (None for the logistic loss)."""
        if self.kind != _HUBER:
            return None
        A0, A1, idx = _huber_line_setup(self.h, m, s, self.w, float(lo), float(hi))
        tp, pp = float(theta @ p), float(p @ p)
        h, w, gamma = self.h, self.w, self.gamma

        def evaluate(t: float) -> Tuple[float, float]:
            d1, d2 = _huber_line_subset(h, m, s, w, idx, float(t))
            return A0 + A1 * t + d1 + gamma * (tp + t * pp), A1 + d2 + gamma * pp

        return evaluate


def fused_scale_features(X: NDArray[np.float64], lower: NDArray[np.float64], upper: NDArray[np.float64],
                         column_scale: NDArray[np.float64], dimension_scale: float,
                         fit_intercept: bool) -> Optional[Tuple[NDArray[np.float64], int]]:
    """One-pass version of DPpack's feature preprocessing, or None without numba.

    Returns ``(Z, n_clipped)`` with ``Z`` bit-identical to
    ``(column_stack([1, clip(X, lower, upper)]) / column_scale) / dimension_scale``
    (the intercept column only when ``fit_intercept``) and the number of entries
    the clip changed. ``X`` must be finite (checked by the caller).
    """
    if not NUMBA_AVAILABLE:
        return None
    X = np.ascontiguousarray(X, dtype=np.float64)
    off = 1 if fit_intercept else 0
    Z = np.empty((X.shape[0], X.shape[1] + off))
    f64 = np.ascontiguousarray
    count = _scale_rows(X, f64(lower, dtype=np.float64), f64(upper, dtype=np.float64),
                        f64(column_scale, dtype=np.float64), float(dimension_scale), off, Z)
    return Z, int(count)


def fused_problem(Z, y, w, gamma: float, loss: MarginLoss) -> Optional[FusedProblem]:
    """A fused problem for a built-in loss, or None (no numba, or a custom loss)."""
    if not NUMBA_AVAILABLE:
        return None
    if type(loss) is HuberHingeLoss:
        return FusedProblem(Z, y, w, gamma, _HUBER, loss.h)
    if type(loss) is LogisticLoss:
        return FusedProblem(Z, y, w, gamma, _LOGISTIC, 0.0)
    return None
