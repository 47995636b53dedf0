"""The built-in margin losses, compiled from their one definition in :mod:`pydpowl.engine.losses`.

The elementwise functions there are written so that numba compiles them
unchanged for single floats; nothing is restated here.
"""

from __future__ import annotations

import numba

from .. import losses

__all__ = ["loss_terms"]

_jit = numba.njit(cache=True, nogil=True)

_huber_value = _jit(losses.huber_hinge_value)
_huber_deriv = _jit(losses.huber_hinge_deriv)
_huber_curvature = _jit(losses.huber_hinge_curvature)
_logistic_value = _jit(losses.logistic_value)
_logistic_deriv = _jit(losses.logistic_deriv)
_logistic_curvature = _jit(losses.logistic_curvature)
_surrogate_value = _jit(losses.huber_surrogate_value)
_surrogate_deriv = _jit(losses.huber_surrogate_deriv)
_surrogate_curvature = _jit(losses.huber_surrogate_curvature)

_HUBER_HINGE, _LOGISTIC = losses.HUBER_HINGE, losses.LOGISTIC


@_jit
def loss_terms(kind, param, m):  # pragma: no cover - compiled
    """``(l(m), l'(m), l''(m))`` of the built-in loss with code ``kind`` and parameter ``param``."""
    if kind == _HUBER_HINGE:
        return _huber_value(m, param), _huber_deriv(m, param), _huber_curvature(m, param)
    if kind == _LOGISTIC:
        return _logistic_value(m), _logistic_deriv(m), _logistic_curvature(m)
    return _surrogate_value(m, param), _surrogate_deriv(m, param), _surrogate_curvature(m, param)
