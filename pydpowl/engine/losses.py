"""Margin losses for weighted ERM: l(m) with m = y * x'theta.

Every loss used by DP-wERM must be convex and differentiable with a bounded
first derivative ``|l'(m)| <= L`` (the Lipschitz constant enters the sensitivity
``Delta = (L (C + 2W) + 2 n tol) / gamma``) and have a second derivative for the
Newton solver.

Built in: the Huber-smoothed hinge (DPpack's ``generate.loss.huber``) and the
logistic loss, both with ``L = 1`` proved analytically. Anything else can be
plugged in with :class:`CustomLoss`, whose Lipschitz constant (and curvature
bound) the user declares; a grid check refuses declarations it can contradict.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable, Optional, Union

import numpy as np
from numpy.typing import NDArray

from .._validation import check_positive

__all__ = ["MarginLoss", "HuberHingeLoss", "LogisticLoss", "CustomLoss", "get_loss", "check_loss",
           "loss_lipschitz"]


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
    """A user-supplied margin loss from three vectorised callables and declared constants.

    By constructing a CustomLoss you declare that ``l`` is convex, with
    ``|l'(m)| <= lipschitz`` and ``0 <= l''(m) <= curvature_bound`` for every
    real margin. The privacy guarantee rests on that declaration: the
    sensitivity is ``Delta = (lipschitz (C + 2W) + 2 n tol) / gamma``
    (docs/privacy_audit.md). :func:`check_loss` evaluates the loss on a grid of
    margins and refuses a declaration the grid contradicts, but a grid cannot
    prove it: a spike of ``l'`` between grid points passes unseen.

    Parameters
    ----------
    value, deriv, deriv2 : callable
        Functions of a float64 array of margins returning arrays of the same shape.
    name : str, default="custom"
        Name used in reports.
    lipschitz : float
        Declared bound ``L`` on ``|l'|``, in (0, inf); required (there is no
        guarantee without it). ``L > 1`` is allowed and scales Delta.
    curvature_bound : float, optional
        Declared bound on ``l''``, in (0, inf). Not part of the sensitivity (only
        convexity and ``L`` are); checked on the grid and used to judge the
        finite-difference consistency of ``deriv``.
    """

    def __init__(
        self,
        value: Callable[[np.ndarray], np.ndarray],
        deriv: Callable[[np.ndarray], np.ndarray],
        deriv2: Callable[[np.ndarray], np.ndarray],
        name: str = "custom",
        *,
        lipschitz: float,
        curvature_bound: Optional[float] = None,
    ) -> None:
        for arg, fn in (("value", value), ("deriv", deriv), ("deriv2", deriv2)):
            if not callable(fn):
                raise TypeError(f"CustomLoss: {arg} must be callable, got {type(fn).__name__}.")
        self._value, self._deriv, self._deriv2 = value, deriv, deriv2
        self.name = str(name)
        self.lipschitz = lipschitz
        self.curvature_bound = curvature_bound

    def value(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(self._value(m), dtype=np.float64)

    def deriv(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(self._deriv(m), dtype=np.float64)

    def deriv2(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(self._deriv2(m), dtype=np.float64)

    def __repr__(self) -> str:
        return f"CustomLoss(name={self.name!r}, lipschitz={self.lipschitz!r}, curvature_bound={self.curvature_bound!r})"


_CHECK_GRID = np.concatenate(
    [np.linspace(-50.0, 50.0, 20001), np.array([-1e6, -1e3, 1e3, 1e6])]
)


def loss_lipschitz(loss: MarginLoss) -> float:
    """The Lipschitz constant ``L`` the sensitivity uses: 1 for the built-in losses, else the declared one.

    Raises
    ------
    TypeError
        For a loss without a declared ``lipschitz`` (use :class:`CustomLoss`).
    """
    if isinstance(loss, (HuberHingeLoss, LogisticLoss)):
        return 1.0
    declared = getattr(loss, "lipschitz", None)
    if declared is None:
        raise TypeError(f"loss {getattr(loss, 'name', type(loss).__name__)!r} declares no Lipschitz constant; the "
                        "privacy guarantee needs one: use CustomLoss(value, deriv, deriv2, lipschitz=L).")
    return check_positive("lipschitz", declared)


def check_loss(loss: MarginLoss) -> MarginLoss:
    """Sanity-check a loss against its declared constants on a grid of margins.

    Checks on 20,005 margins in ``[-1e6, 1e6]``: finite values,
    ``|l'(m)| <= lipschitz`` (the declared ``L``; 1 for built-in losses),
    ``0 <= l''(m)`` (convexity) and ``<= curvature_bound`` when declared, and
    that ``l'`` agrees with a finite difference of ``l``. This refuses
    declarations the grid contradicts; it does not prove them (the guarantee
    rests on the declaration, see :class:`CustomLoss`).

    Raises
    ------
    ValueError
        Naming the property, the worst margin and the declared bound.
    TypeError
        For a loss that declares no Lipschitz constant.
    """
    lip = loss_lipschitz(loss)
    curv = getattr(loss, "curvature_bound", None)
    if curv is not None:
        curv = check_positive("curvature_bound", curv)
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
    if abs(d1[worst]) > lip * (1.0 + 1e-12):
        raise ValueError(
            f"loss {loss.name!r}: |l'(m)| = {abs(d1[worst])!r} at margin {m[worst]!r} exceeds the declared "
            f"lipschitz={lip!r} (the sensitivity Delta = (L (C + 2W) + 2 n tol)/gamma assumes |l'| <= L)."
        )
    if np.min(d2) < -1e-12:
        at = m[int(np.argmin(d2))]
        raise ValueError(f"loss {loss.name!r}: l'' must be >= 0 (convexity), got {np.min(d2)!r} at margin {at!r}.")
    if curv is not None and np.max(d2) > curv * (1.0 + 1e-12):
        at = m[int(np.argmax(d2))]
        raise ValueError(f"loss {loss.name!r}: l''(m) = {np.max(d2)!r} at margin {at!r} exceeds the declared "
                         f"curvature_bound={curv!r}.")
    # derivative consistency on the central part of the grid
    central = (m >= -40) & (m <= 40)
    mc = m[central]
    step = 1e-6
    with np.errstate(all="ignore"):
        fd = (loss.value(mc + step) - loss.value(mc - step)) / (2 * step)
    gap = np.abs(fd - loss.deriv(mc))
    slack = 1e-4 * (1.0 + np.max(np.abs(fd))) if curv is None else curv * step + 1e-7 * (1.0 + np.max(np.abs(fd)))
    if np.max(gap) > slack:
        at = mc[int(np.argmax(gap))]
        raise ValueError(
            f"loss {loss.name!r}: first derivative disagrees with a finite difference of the "
            f"value at margin {at!r} (gap {np.max(gap):.2e})."
        )
    return loss


def get_loss(loss: Union[str, MarginLoss], huber_h: float = 0.5) -> MarginLoss:
    """Resolve ``loss`` ("huber", "logistic" or a :class:`MarginLoss`); other losses go through :func:`check_loss`."""
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
