"""The built-in margin losses, compiled from their one definition in :mod:`pydpowl.engine.losses`.

The elementwise ``*_terms`` functions there (value, first derivative and
curvature together; the logistic loss's value and slopes apart) are written so
that numba compiles them unchanged for single floats; nothing is restated here.
"""

from __future__ import annotations

from .. import losses
from .caching import kernel

__all__ = ["loss_terms", "loss_terms_block"]

_jit = kernel  # numba.njit(nogil=True), cached where the set-up compiled it (see .caching)

_huber_hinge = _jit(losses.huber_hinge_terms)
_logistic_value = _jit(losses.logistic_value)
_logistic_slopes = _jit(losses.logistic_slopes)
_huber_surrogate = _jit(losses.huber_surrogate_terms)


@_jit
def _logistic(m):  # pragma: no cover - compiled
    """:func:`pydpowl.engine.losses.logistic_terms` of its two compiled parts."""
    d1, d2 = _logistic_slopes(m)
    return _logistic_value(m), d1, d2


_HUBER_HINGE, _LOGISTIC = losses.HUBER_HINGE, losses.LOGISTIC


@_jit
def loss_terms(kind, param, m):  # pragma: no cover - compiled
    """``(l(m), l'(m), l''(m))`` of the built-in loss with code ``kind`` and parameter ``param``."""
    if kind == _HUBER_HINGE:
        return _huber_hinge(m, param)
    if kind == _LOGISTIC:
        return _logistic(m)
    return _huber_surrogate(m, param)


@_jit
def loss_terms_block(kind, param, m, value, deriv, curvature, k):  # pragma: no cover - compiled
    """``value[i], deriv[i], curvature[i] = l(m[i]), l'(m[i]), l''(m[i])`` for ``i < k``.

    The loss is picked once for the block, so each loop below is branch-free
    and the compiler vectorises it.
    """
    if kind == _HUBER_HINGE:
        for i in range(k):
            v, d1, d2 = _huber_hinge(m[i], param)
            value[i] = v
            deriv[i] = d1
            curvature[i] = d2
    elif kind == _LOGISTIC:
        for i in range(k):
            v, d1, d2 = _logistic(m[i])
            value[i] = v
            deriv[i] = d1
            curvature[i] = d2
    else:
        for i in range(k):
            v, d1, d2 = _huber_surrogate(m[i], param)
            value[i] = v
            deriv[i] = d1
            curvature[i] = d2
