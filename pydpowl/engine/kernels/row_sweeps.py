"""Row sweeps of the margin-loss problem (numba): one pass over the data per call.

These are the compiled counterparts of the numpy expressions in
:class:`pydpowl.engine.problem.MarginProblem`; the loss terms come from
:func:`.margin_losses.loss_terms`, i.e. from the one definition of each loss.
"""

from __future__ import annotations

import numba
import numpy as np

from .margin_losses import loss_terms

__all__ = ["sweep_margins", "add_weighted_outer_products", "line_derivatives"]

_jit = numba.njit(cache=True, nogil=True)


@_jit
def sweep_margins(kind, param, Z, y, w, theta, margins, curvature, changed, delta, hessian,
                  rebuild):  # pragma: no cover - compiled
    """Margins, loss sum and gradient in one pass, with the curvature of each row.

    Writes ``margins[i] = y_i z_i'theta``. With ``rebuild``, writes
    ``curvature[i] = w_i l''(m_i)`` and adds ``curvature[i] z_i z_i'`` to
    ``hessian`` (which the caller zeroed). Otherwise ``curvature`` holds the
    values at the previous point: every row where it changes is listed in
    ``changed`` with the change in ``delta`` (the Hessian then follows by
    :func:`add_weighted_outer_products`), and ``curvature`` is updated.

    Returns
    -------
    (sum_i w_i l(m_i), sum_i w_i l'(m_i) y_i z_i, k) with k the number of changed rows.
    """
    n, d = Z.shape
    grad = np.zeros(d)
    total = 0.0
    k = 0
    for i in range(n):
        eta = 0.0
        for j in range(d):
            eta += Z[i, j] * theta[j]
        m = y[i] * eta
        margins[i] = m
        value, d1, d2 = loss_terms(kind, param, m)
        wi = w[i]
        total += wi * value
        c1 = wi * y[i] * d1
        for j in range(d):
            grad[j] += c1 * Z[i, j]
        c2 = wi * d2
        if rebuild:
            curvature[i] = c2
            if c2 != 0.0:
                _add_outer_product(hessian, Z, i, c2)
        elif c2 != curvature[i]:
            changed[k] = i
            delta[k] = c2 - curvature[i]
            curvature[i] = c2
            k += 1
    if rebuild:
        _mirror_lower(hessian)
    return total, grad, k


@_jit
def add_weighted_outer_products(H, Z, rows, coef, k):  # pragma: no cover - compiled
    """``H += sum_{a < k} coef[a] z_r z_r'`` with ``r = rows[a]`` (H symmetric, updated in place)."""
    for a in range(k):
        _add_outer_product(H, Z, rows[a], coef[a])
    _mirror_lower(H)


@_jit
def _add_outer_product(H, Z, i, c):  # pragma: no cover - compiled
    """Lower triangle of ``H += c z_i z_i'``."""
    for j in range(Z.shape[1]):
        cz = c * Z[i, j]
        for q in range(j + 1):
            H[j, q] += cz * Z[i, q]


@_jit
def _mirror_lower(H):  # pragma: no cover - compiled
    """Copy the lower triangle of ``H`` to the upper one."""
    for j in range(H.shape[0]):
        for q in range(j):
            H[q, j] = H[j, q]


@_jit
def line_derivatives(kind, param, m, s, w, t):  # pragma: no cover - compiled
    """First and second derivative in t of ``sum_i w_i l(m_i + t s_i)``."""
    d1 = 0.0
    d2 = 0.0
    for i in range(m.shape[0]):
        _, l1, l2 = loss_terms(kind, param, m[i] + t * s[i])
        ws = w[i] * s[i]
        d1 += ws * l1
        d2 += ws * s[i] * l2
    return d1, d2
