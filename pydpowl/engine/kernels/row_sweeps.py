"""Row sweeps of the margin-loss problem (numba): one pass over the data per call.

These are the compiled counterparts of the numpy expressions in
:class:`pydpowl.engine.problem.MarginProblem`; the loss terms come from
:mod:`.margin_losses`, i.e. from the one definition of each loss.

The data ``Z`` are column-major (Fortran order, as
:class:`~pydpowl.engine.preprocessing.FeatureScaler` writes them and
``MarginProblem`` keeps them), and every sweep walks through the rows in
blocks of ``BLOCK``. Within a block each step (the margins, the loss terms,
one column's share of the gradient or of the Hessian) is a short loop over
the block's rows: branch-free, over contiguous memory, with the block's work
arrays in the L1 cache, so the compiler vectorises it. Sums over rows are
kept per lane (lane ``i`` adds rows ``i``, ``i + BLOCK``, ``i + 2 BLOCK``,
...) and the lanes are added at the end: the additions within a block do
not wait for each other, and the order of summation is fixed by the code,
not by the machine's vector width.
"""

from __future__ import annotations

import numpy as np

from .caching import kernel
from .margin_losses import loss_terms_block

__all__ = ["BLOCK", "sweep_margins", "add_weighted_outer_products", "line_derivatives", "margins_at"]

_jit = kernel  # numba.njit(nogil=True), cached where the set-up compiled it (see .caching)

#: rows per block: the block's work arrays (2 KiB each) stay in the L1 cache
BLOCK = 256


@_jit
def sweep_margins(kind, param, Z, y, w, theta, curvature, changed, delta, hessian,
                  rebuild):  # pragma: no cover - compiled
    """Loss sum and gradient in one pass over the margins ``m_i = y_i z_i'theta``, with the curvature of each row.

    The margins are not stored (at large n, writing them would be a sixth of
    the memory traffic; :func:`margins_at` recomputes them for the rare line
    search). With ``rebuild``, writes
    ``curvature[i] = w_i l''(m_i)`` and sets ``hessian`` to
    ``sum_i curvature[i] z_i z_i'``. Otherwise ``curvature`` holds the values
    at the previous point: every row where it changes is listed in
    ``changed`` with the change in ``delta`` (the Hessian then follows by
    :func:`add_weighted_outer_products`), and ``curvature`` is updated.

    Returns
    -------
    (sum_i w_i l(m_i), sum_i w_i l'(m_i) y_i z_i, k) with k the number of changed rows.
    """
    n, d = Z.shape
    m = np.empty(BLOCK)
    value = np.empty(BLOCK)
    d1 = np.empty(BLOCK)
    d2 = np.empty(BLOCK)
    weighted_column = np.empty(BLOCK)
    loss_lanes = np.zeros(BLOCK)
    grad_lanes = np.zeros((d, BLOCK))
    hess_lanes = np.zeros((d * (d + 1) // 2 if rebuild else 0, BLOCK))  # lower triangle, row by row
    k = 0
    for start in range(0, n, BLOCK):
        stop = min(start + BLOCK, n)
        b = stop - start
        yb = y[start:stop]
        wb = w[start:stop]
        _matvec_block(Z, start, stop, theta, m)
        _multiply_into(m, yb, b)
        loss_terms_block(kind, param, m, value, d1, d2, b)
        _add_product(loss_lanes, wb, value, b)
        _multiply_into(d1, wb, b)  # w_i l'(m_i) y_i (exact in either order: y_i = +-1)
        _multiply_into(d1, yb, b)
        _multiply_into(d2, wb, b)  # w_i l''(m_i)
        for j in range(d):
            _add_product(grad_lanes[j], d1, Z[start:stop, j], b)
        if rebuild:
            curvature[start:stop] = d2[:b]
            p = 0
            for j in range(d):
                _product(weighted_column, d2, Z[start:stop, j], b)
                for q in range(j + 1):
                    _add_product(hess_lanes[p], weighted_column, Z[start:stop, q], b)
                    p += 1
        elif _count_unequal(d2, curvature[start:stop], b) > 0:
            k = _list_changes(d2, curvature, start, b, changed, delta, k)
    grad = np.empty(d)
    for j in range(d):
        grad[j] = _sum(grad_lanes[j])
    if rebuild:
        p = 0
        for j in range(d):
            for q in range(j + 1):
                hessian[j, q] = _sum(hess_lanes[p])
                hessian[q, j] = hessian[j, q]
                p += 1
    return _sum(loss_lanes), grad, k


@_jit
def margins_at(Z, y, theta, out):  # pragma: no cover - compiled
    """``out[i] = y_i z_i'theta``."""
    n = Z.shape[0]
    for start in range(0, n, BLOCK):
        stop = min(start + BLOCK, n)
        block = out[start:stop]
        _matvec_block(Z, start, stop, theta, block)
        _multiply_into(block, y[start:stop], stop - start)


@_jit
def line_derivatives(kind, param, m, s, w, t):  # pragma: no cover - compiled
    """First and second derivative in t of ``sum_i w_i l(m_i + t s_i)``."""
    n = m.shape[0]
    mt = np.empty(BLOCK)
    value = np.empty(BLOCK)
    l1 = np.empty(BLOCK)
    l2 = np.empty(BLOCK)
    lanes1 = np.zeros(BLOCK)
    lanes2 = np.zeros(BLOCK)
    for start in range(0, n, BLOCK):
        stop = min(start + BLOCK, n)
        b = stop - start
        sb = s[start:stop]
        _shifted(mt, m[start:stop], sb, t, b)
        loss_terms_block(kind, param, mt, value, l1, l2, b)
        _multiply_into(l1, w[start:stop], b)  # w_i l'
        _add_product(lanes1, l1, sb, b)
        _multiply_into(l2, w[start:stop], b)  # w_i s_i l''
        _multiply_into(l2, sb, b)
        _add_product(lanes2, l2, sb, b)
    return _sum(lanes1), _sum(lanes2)


@_jit
def add_weighted_outer_products(H, Z, rows, coef, k):  # pragma: no cover - compiled
    """``H += sum_{a < k} coef[a] z_r z_r'`` with ``r = rows[a]`` (H symmetric, updated in place)."""
    d = Z.shape[1]
    for a in range(k):
        i, c = rows[a], coef[a]
        for j in range(d):
            cz = c * Z[i, j]
            for q in range(j + 1):
                H[j, q] += cz * Z[i, q]
    for j in range(d):
        for q in range(j):
            H[q, j] = H[j, q]


# ----------------------------------------------------------------------------- loops over one block
# Each runs over the first b entries of 1-D arrays it receives as arguments, from 0 up: the form the
# compiler vectorises (the same loop written inline over a view made in the caller's loop is not).


@_jit
def _matvec_block(Z, start, stop, theta, out):  # pragma: no cover - compiled
    """``out[:b] = Z[start:stop] @ theta``, column by column."""
    b = stop - start
    for i in range(b):
        out[i] = 0.0
    for j in range(Z.shape[1]):
        _add_scaled(out, Z[start:stop, j], theta[j], b)


@_jit
def _add_scaled(out, x, t, b):  # pragma: no cover - compiled
    """``out[:b] += x[:b] * t``."""
    for i in range(b):
        out[i] += x[i] * t


@_jit
def _multiply_into(a, x, b):  # pragma: no cover - compiled
    """``a[:b] *= x[:b]``."""
    for i in range(b):
        a[i] *= x[i]


@_jit
def _product(out, x, z, b):  # pragma: no cover - compiled
    """``out[:b] = x[:b] * z[:b]``."""
    for i in range(b):
        out[i] = x[i] * z[i]


@_jit
def _add_product(lanes, x, z, b):  # pragma: no cover - compiled
    """``lanes[:b] += x[:b] * z[:b]``."""
    for i in range(b):
        lanes[i] += x[i] * z[i]


@_jit
def _shifted(out, m, s, t, b):  # pragma: no cover - compiled
    """``out[:b] = m[:b] + t s[:b]``."""
    for i in range(b):
        out[i] = m[i] + t * s[i]


@_jit
def _count_unequal(a, x, b):  # pragma: no cover - compiled
    """Number of ``i < b`` with ``a[i] != x[i]``."""
    count = 0
    for i in range(b):
        count += a[i] != x[i]
    return count


@_jit
def _list_changes(c, curvature, start, b, changed, delta, k):  # pragma: no cover - compiled
    """Append the rows ``start + i`` whose curvature changes to ``c[i]``; returns the new count."""
    for i in range(b):
        old = curvature[start + i]
        if c[i] != old:
            changed[k] = start + i
            delta[k] = c[i] - old
            curvature[start + i] = c[i]
            k += 1
    return k


@_jit
def _sum(lanes):  # pragma: no cover - compiled
    """The lanes added in order."""
    total = 0.0
    for i in range(lanes.shape[0]):
        total += lanes[i]
    return total
