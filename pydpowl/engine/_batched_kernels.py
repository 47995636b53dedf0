"""Compiled kernel of :mod:`pydpowl.engine.batched` (numba; imported only when numba is installed).

``solve_many`` runs, for each problem in parallel, the Newton iteration of
:func:`pydpowl.solve_weighted_erm` on the weighted Huber-hinge objective: a
Hessian over the quadratic zone plus ``gamma I``, then an exact line search by
safeguarded Newton on the (convex, piecewise quadratic) restriction to the
search direction. A problem is reported solved only when the gradient norm of
``F = G / n`` is at most ``tol``; the caller certifies or re-solves the others.
"""

import numba
import numpy as np

__all__ = ["solve_many"]


@numba.njit(cache=True, nogil=True)
def _line(w, m, s, tp, pp, gamma, h, d0):  # pragma: no cover - compiled code
    n = m.shape[0]
    t, lo, hi = 1.0, 0.0, np.inf
    tol = 1e-13 * abs(d0)
    for _ in range(100):
        d1 = gamma * (tp + t * pp)
        d2 = gamma * pp
        for i in range(n):
            mt = m[i] + t * s[i]
            r = (1.0 + h - mt) / (2.0 * h)
            if r > 1.0:
                d1 -= w[i] * s[i]
            elif r >= 0.0:
                d1 -= w[i] * s[i] * r
                d2 += w[i] * s[i] * s[i] / (2.0 * h)
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

@numba.njit(cache=True, nogil=True)
def _cholesky_solve(H, g, L, p):  # pragma: no cover - compiled code
    """``p = -H^{-1} g`` by Cholesky (H symmetric positive definite); False if it is not."""
    d = H.shape[0]
    for j in range(d):
        acc = H[j, j]
        for k in range(j):
            acc -= L[j, k] * L[j, k]
        if not acc > 0.0:
            return False
        L[j, j] = np.sqrt(acc)
        for i in range(j + 1, d):
            acc = H[i, j]
            for k in range(j):
                acc -= L[i, k] * L[j, k]
            L[i, j] = acc / L[j, j]
    for i in range(d):  # forward: L u = -g
        acc = -g[i]
        for k in range(i):
            acc -= L[i, k] * p[k]
        p[i] = acc / L[i, i]
    for i in range(d - 1, -1, -1):  # backward: L' p = u
        acc = p[i]
        for k in range(i + 1, d):
            acc -= L[k, i] * p[k]
        p[i] = acc / L[i, i]
    return True


@numba.njit(cache=True, nogil=True)
def _one(Z, y, w, gamma, h, tol, max_iter, theta):  # pragma: no cover - compiled code
    n, d = Z.shape
    m = np.empty(n)
    s = np.empty(n)
    g = np.empty(d)
    H = np.empty((d, d))
    p = np.empty(d)
    for _ in range(max_iter + 1):
        for a in range(d):
            g[a] = gamma * theta[a]
            for b in range(d):
                H[a, b] = gamma if a == b else 0.0
        for i in range(n):
            mi = 0.0
            for a in range(d):
                mi += Z[i, a] * theta[a]
            mi *= y[i]
            m[i] = mi
            r = (1.0 + h - mi) / (2.0 * h)
            if r > 1.0:
                c1 = -w[i] * y[i]
            elif r >= 0.0:
                c1 = -w[i] * y[i] * r
                c2 = w[i] / (2.0 * h)
                for a in range(d):
                    za = c2 * Z[i, a]
                    for b in range(a, d):
                        H[a, b] += za * Z[i, b]
            else:
                c1 = 0.0
            if c1 != 0.0:
                for a in range(d):
                    g[a] += c1 * Z[i, a]
        gn = 0.0
        for a in range(d):
            gn += g[a] * g[a]
        if np.sqrt(gn) / n <= tol:
            return True
        for a in range(d):
            for b in range(a):
                H[a, b] = H[b, a]
        p = -np.linalg.solve(H, g)
        d0 = 0.0
        tp = 0.0
        pp = 0.0
        for a in range(d):
            d0 += g[a] * p[a]
            tp += theta[a] * p[a]
            pp += p[a] * p[a]
        if not d0 < 0.0:
            return False
        for i in range(n):
            si = 0.0
            for a in range(d):
                si += Z[i, a] * p[a]
            s[i] = y[i] * si
        t = _line(w, m, s, tp, pp, gamma, h, d0)
        for a in range(d):
            theta[a] += t * p[a]
    return False

@numba.njit(cache=True, nogil=True)
def solve_many(Z, y, w, gamma, h, tol, max_iter, theta, ok):  # pragma: no cover - compiled code
    for r in range(Z.shape[0]):
        ok[r] = _one(Z[r], y[r], w[r], gamma[r], h, tol, max_iter, theta[r])

