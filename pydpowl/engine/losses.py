"""Margin losses for weighted ERM: l(m) with m = y * x'theta.

Every loss used by DP-wERM must be convex, differentiable with a bounded first
derivative |l'(m)| <= 1 (the Lipschitz constant enters the sensitivity
Delta = (C + 2W) / gamma) and have a second derivative for the Newton solver.

Built in: the Huber-smoothed hinge (DPpack's ``generate.loss.huber``) and the
logistic loss. Anything else can be plugged in with :class:`CustomLoss`, which
checks the derivative bound numerically before use.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable, Union

import numpy as np
from numpy.typing import NDArray

from .._validation import check_positive

__all__ = ["MarginLoss", "HuberHingeLoss", "LogisticLoss", "CustomLoss", "get_loss", "check_loss"]


class MarginLoss(ABC):
    """A convex loss of the margin ``m = y * x'theta``, vectorised over ``m``."""

    #: short name used in reports and serialised models
    name: str = "margin"
    #: True when the second derivative is piecewise constant (finite Newton)
    piecewise_quadratic: bool = False

    @abstractmethod
    def value(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        """Loss at each margin."""

    @abstractmethod
    def deriv(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        """First derivative at each margin (must lie in [-1, 1])."""

    @abstractmethod
    def deriv2(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        """Second derivative at each margin (non-negative)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class HuberHingeLoss(MarginLoss):
    """Huber-smoothed hinge loss with smoothing parameter ``h``.

    ``l(m) = 0`` for ``m > 1 + h``; ``(1 + h - m)^2 / (4h)`` for ``|1 - m| <= h``;
    ``1 - m`` for ``m < 1 - h``. It is the loss of DPpack's ``svmDP`` (argument
    ``huber.h``), with ``|l'| <= 1`` and ``l'' = 1/(2h)`` on the quadratic zone.

    Parameters
    ----------
    h : float, default=0.5
        Half-width of the quadratic zone, in ``(0, inf)``.
    """

    name = "huber"
    piecewise_quadratic = True

    def __init__(self, h: float = 0.5) -> None:
        self.h = check_positive("huber_h", h)

    def value(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        m = np.asarray(m, dtype=np.float64)
        h = self.h
        out = np.where(m < 1.0 - h, 1.0 - m, 0.0)
        quad = np.abs(1.0 - m) <= h
        out[quad] = (1.0 + h - m[quad]) ** 2 / (4.0 * h)
        return out

    def deriv(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        m = np.asarray(m, dtype=np.float64)
        h = self.h
        out = np.where(m < 1.0 - h, -1.0, 0.0)
        quad = np.abs(1.0 - m) <= h
        out[quad] = -(1.0 + h - m[quad]) / (2.0 * h)
        return out

    def deriv2(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        m = np.asarray(m, dtype=np.float64)
        return np.where(np.abs(1.0 - m) <= self.h, 1.0 / (2.0 * self.h), 0.0)

    def __repr__(self) -> str:
        return f"HuberHingeLoss(h={self.h!r})"


class LogisticLoss(MarginLoss):
    """Logistic loss ``l(m) = log(1 + exp(-m))`` (``|l'| < 1``, ``l'' <= 1/4``)."""

    name = "logistic"

    def value(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.logaddexp(0.0, -np.asarray(m, dtype=np.float64))

    def deriv(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        # -1 / (1 + e^m), computed stably as -sigmoid(-m)
        return -_sigmoid(-np.asarray(m, dtype=np.float64))

    def deriv2(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        s = _sigmoid(np.asarray(m, dtype=np.float64))
        return s * (1.0 - s)


def _sigmoid(x: NDArray[np.float64]) -> NDArray[np.float64]:
    out = np.empty_like(x)
    pos = x >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
    ex = np.exp(x[~pos])
    out[~pos] = ex / (1.0 + ex)
    return out


class CustomLoss(MarginLoss):
    """A user-supplied margin loss from three vectorised callables.

    The derivative bound ``|l'| <= 1`` and ``l'' >= 0`` are checked on a grid
    of margins by :func:`check_loss` when the loss is used; a loss that fails
    the check is refused, because the privacy calibration relies on it.

    Parameters
    ----------
    value, deriv, deriv2 : callable
        Functions of a float64 array of margins returning arrays of the same shape.
    name : str, default="custom"
        Name used in reports.
    """

    def __init__(
        self,
        value: Callable[[np.ndarray], np.ndarray],
        deriv: Callable[[np.ndarray], np.ndarray],
        deriv2: Callable[[np.ndarray], np.ndarray],
        name: str = "custom",
    ) -> None:
        for arg, fn in (("value", value), ("deriv", deriv), ("deriv2", deriv2)):
            if not callable(fn):
                raise TypeError(f"CustomLoss: {arg} must be callable, got {type(fn).__name__}.")
        self._value, self._deriv, self._deriv2 = value, deriv, deriv2
        self.name = str(name)

    def value(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(self._value(m), dtype=np.float64)

    def deriv(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(self._deriv(m), dtype=np.float64)

    def deriv2(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(self._deriv2(m), dtype=np.float64)

    def __repr__(self) -> str:
        return f"CustomLoss(name={self.name!r})"


_CHECK_GRID = np.concatenate(
    [np.linspace(-50.0, 50.0, 20001), np.array([-1e6, -1e3, 1e3, 1e6])]
)


def check_loss(loss: MarginLoss) -> MarginLoss:
    """Verify the properties the privacy calibration needs, on a grid of margins.

    Checks on 20,005 margins in ``[-1e6, 1e6]``: finite values, ``|l'(m)| <= 1``,
    ``l''(m) >= 0`` and that ``l'`` agrees with a finite difference of ``l``.

    Raises
    ------
    ValueError
        Naming the property, the worst margin and the bound.
    """
    m = _CHECK_GRID
    with np.errstate(all="ignore"):
        v, d1, d2 = loss.value(m), loss.deriv(m), loss.deriv2(m)
    for label, arr in (("value", v), ("first derivative", d1), ("second derivative", d2)):
        if arr.shape != m.shape:
            raise ValueError(f"loss {loss.name!r}: {label} returned shape {arr.shape} for input {m.shape}.")
        if not np.all(np.isfinite(arr)):
            bad = m[~np.isfinite(arr)][0]
            raise ValueError(f"loss {loss.name!r}: {label} is not finite at margin {bad!r}.")
    worst = int(np.argmax(np.abs(d1)))
    if abs(d1[worst]) > 1.0 + 1e-12:
        raise ValueError(
            f"loss {loss.name!r}: |l'(m)| must be <= 1 (the sensitivity Delta = (C + 2W)/gamma "
            f"assumes it), got |l'({m[worst]!r})| = {abs(d1[worst])!r}."
        )
    if np.min(d2) < -1e-12:
        at = m[int(np.argmin(d2))]
        raise ValueError(f"loss {loss.name!r}: l'' must be >= 0 (convexity), got {np.min(d2)!r} at margin {at!r}.")
    # derivative consistency on the central part of the grid
    central = (m >= -40) & (m <= 40)
    mc = m[central]
    step = 1e-6
    with np.errstate(all="ignore"):
        fd = (loss.value(mc + step) - loss.value(mc - step)) / (2 * step)
    gap = np.abs(fd - loss.deriv(mc))
    if np.max(gap) > 1e-4 * (1.0 + np.max(np.abs(fd))):
        at = mc[int(np.argmax(gap))]
        raise ValueError(
            f"loss {loss.name!r}: first derivative disagrees with a finite difference of the "
            f"value at margin {at!r} (gap {np.max(gap):.2e})."
        )
    return loss


def get_loss(loss: Union[str, MarginLoss], huber_h: float = 0.5) -> MarginLoss:
    """Resolve ``loss`` ("huber", "logistic" or a :class:`MarginLoss`)."""
    if isinstance(loss, str):
        if loss == "huber":
            return HuberHingeLoss(huber_h)
        if loss == "logistic":
            return LogisticLoss()
        raise ValueError(f"loss must be one of {{'huber', 'logistic'}} or a MarginLoss, got loss={loss!r}.")
    if isinstance(loss, MarginLoss):
        if isinstance(loss, (HuberHingeLoss, LogisticLoss)):
            return loss
        return check_loss(loss)
    raise TypeError(f"loss must be a string or a MarginLoss, got {type(loss).__name__}.")
