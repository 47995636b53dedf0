"""Margin losses for weighted ERM: l(m) with m = y * x'theta, each defined once.

Every loss used by DP-wERM must be convex and differentiable with a bounded
first derivative ``|l'(m)| <= L`` (the Lipschitz constant enters the sensitivity
``Delta = (L (C + 2W) + 2 n tol) / gamma``) and have a second derivative (the
curvature) for the Newton solver.

Built in: the Huber-smoothed hinge (DPpack's ``generate.loss.huber``) and the
logistic loss, both with ``L = 1`` proved analytically. Anything else can be
plugged in with :class:`CustomLoss`, whose Lipschitz constant (and curvature
bound) the user declares; a grid check refuses declarations it can contradict.

One definition per loss
-----------------------
Each built-in loss is written once, as one elementwise function of the margin
returning its value, first derivative and curvature together, such as
:func:`huber_hinge_terms` (the three share their intermediate results, so one
pass over the rows gives all three). It uses only arithmetic, comparisons and
numpy ufuncs (``np.minimum``, ``np.exp``, ...), never ``np.where`` or boolean
indexing, so the same source runs on numpy arrays (the numpy path of
:mod:`pydpowl.engine.problem`) and, compiled by ``numba.njit``, on single
floats inside the row sweeps of :mod:`pydpowl.engine.kernels`. The separate
functions (:func:`huber_hinge_value`, ...) and the methods ``value``,
``deriv``, ``deriv2`` are derived from it. The logistic loss is written as two
functions, its value and its slopes (:func:`logistic_value`,
:func:`logistic_slopes`, composed by :func:`logistic_terms`), because most
of the solver's evaluations need the slopes only (``MarginLoss.slopes``) and
the value's ``log1p`` is the costliest step. A loss class only binds its
parameter to that function and declares its constants: ``lipschitz``
(sup |l'|, used by the privacy calibration) and ``curvature_bound``
(sup l''). ``kernel_spec()`` names the compiled form (None for losses the
kernels do not know, which then use the numpy path).

Beyond margin losses
--------------------
A margin loss is the special case of a loss of the linear predictor
``eta = z'theta`` and the label, ``l(y * eta)``. A loss that is not a function
of the margin (e.g. squared error ``(y - eta)^2 / 2`` for linear regression)
fits the same solver: the solver only sees the protocol of
:mod:`pydpowl.engine.problem` (sums of value, gradient and Hessian over rows).
:class:`SquaredErrorLoss` (DPpack's ``loss.squared.error``, for
``LinearRegressionDP``) is such a loss; being quadratic, it is summed once into
sufficient statistics and solved through
:class:`pydpowl.engine.problem.QuadraticProblem`. Its derivative is unbounded:
Kifer, Smith & Thakurta's mechanism bounds it on a bounded domain instead
(``zeta``, see :func:`pydpowl.engine.mechanisms.kst_calibration`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable, Optional, Tuple, Union

import numpy as np
from numpy.typing import NDArray

from .._validation import check_positive

__all__ = [
    "MarginLoss", "HuberHingeLoss", "LogisticLoss", "HuberQuadraticSurrogate", "CustomLoss", "get_loss",
    "sigmoid", "class_probabilities",
    "check_loss", "huber_hinge_terms", "logistic_terms", "huber_surrogate_terms", "huber_hinge_value",
    "huber_hinge_deriv", "huber_hinge_curvature", "logistic_value", "logistic_slopes", "logistic_deriv",
    "logistic_curvature",
    "huber_surrogate_value", "huber_surrogate_deriv", "huber_surrogate_curvature", "HUBER_HINGE", "LOGISTIC",
    "HUBER_SURROGATE", "loss_lipschitz", "SquaredErrorLoss", "squared_error_value", "squared_error_deriv",
    "squared_error_curvature",
]

#: codes of the built-in losses in the compiled kernels (see ``MarginLoss.kernel_spec``)
HUBER_HINGE, LOGISTIC, HUBER_SURROGATE = 0, 1, 2


# ----------------------------------------------------------------------------- elementwise definitions
# Each takes a margin m (a float64 array, or a float inside a compiled kernel) and the
# loss parameter, and returns (l(m), l'(m), l''(m)); booleans times floats select zones
# without branches or np.where (branch-free code is also what lets the compiler vectorise
# the kernels' loops).


def huber_hinge_terms(m, h):
    """Huber hinge: ``l = 1 - m`` for ``r > 1``, ``h r^2`` for ``0 <= r <= 1``, 0 below, ``r = (1 + h - m)/(2h)``;
    ``l' = -clip(r, 0, 1)`` (in [-1, 0]); ``l'' = 1/(2h)`` on the quadratic zone ``0 <= r <= 1``, else 0."""
    r = (1.0 + h - m) / (2.0 * h)
    zero = 0.0 * r  # 0 shaped like r: numpy's minimum/maximum of two arrays is vectorised, of array and scalar not
    q = np.minimum(np.maximum(r, zero), zero + 1.0)  # clip(r, 0, 1): = r exactly on the quadratic zone
    # h q (2r - q): h r^2 on the quadratic zone, 0 below it (q = 0), h (2r - 1) = 1 - m above it (q = 1)
    return h * (q * (r + r - q)), -q, (q == r) * (1.0 / (2.0 * h))


def huber_surrogate_terms(m, h):
    """The Huber hinge's quadratic piece continued everywhere: ``(1 + h - m)^2 / (4h)``, its derivative
    ``-(1 + h - m) / (2h)`` and the constant curvature ``1/(2h)`` (shaped like ``m``)."""
    a = 1.0 + h - m
    return a * a / (4.0 * h), -a / (2.0 * h), 0.0 * m + 1.0 / (2.0 * h)


def sigmoid(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """The logistic function ``1 / (1 + e^-x)``, computed without overflow for any ``x``."""
    return np.exp(-np.logaddexp(0.0, -x))


def class_probabilities(eta: NDArray[np.float64], *, log: bool = False) -> NDArray[np.float64]:
    """``[1 - s, s]`` with ``s = sigmoid(eta)`` (columns: the class coded -1, then +1), or their logarithms,
    computed stably: the probabilities of a logistic model with linear predictor ``eta``."""
    if log:
        return np.column_stack([-np.logaddexp(0.0, eta), -np.logaddexp(0.0, -eta)])
    s = sigmoid(eta)
    return np.column_stack([1.0 - s, s])


def logistic_value(m):
    """``log(1 + exp(-m)) = log1p(exp(-|m|)) + max(-m, 0)``; only ``exp(-|m|)`` is formed, so nothing
    overflows (``max(-m, 0) = (|m| - m) / 2`` exactly)."""
    a = np.abs(m)
    return np.log1p(np.exp(-a)) + 0.5 * (a - m)


def logistic_slopes(m):
    """``l'(m) = -1 / (1 + exp(m))`` (in (-1, 0)) and ``l''(m) = s (1 - s)`` with ``s = 1 / (1 + exp(-m))``
    (in (0, 1/4]), from ``exp(-|m|)`` only: ``sigmoid(|m|)`` and ``sigmoid(-|m|)``, of which ``l'`` picks
    ``-sigmoid(|m|)`` for ``m <= 0`` and ``-sigmoid(-|m|)`` above, and ``l''`` is the product."""
    e = np.exp(-np.abs(m))
    big = 1.0 / (1.0 + e)  # sigmoid(|m|)
    small = e * big  # sigmoid(-|m|)
    return -(small + (m <= 0.0) * (big - small)), small * big


def logistic_terms(m):
    """``(l(m), l'(m), l''(m))`` of the logistic loss: :func:`logistic_value` and :func:`logistic_slopes`,
    its two definitions (the solver's trial points need the slopes only)."""
    d1, d2 = logistic_slopes(m)
    return logistic_value(m), d1, d2


def huber_hinge_value(m, h):
    """``l(m)`` of :func:`huber_hinge_terms`."""
    return huber_hinge_terms(m, h)[0]


def huber_hinge_deriv(m, h):
    """``l'(m)`` of :func:`huber_hinge_terms`."""
    return huber_hinge_terms(m, h)[1]


def huber_hinge_curvature(m, h):
    """``l''(m)`` of :func:`huber_hinge_terms`."""
    return huber_hinge_terms(m, h)[2]


def huber_surrogate_value(m, h):
    """``l(m)`` of :func:`huber_surrogate_terms`."""
    return huber_surrogate_terms(m, h)[0]


def huber_surrogate_deriv(m, h):
    """``l'(m)`` of :func:`huber_surrogate_terms`."""
    return huber_surrogate_terms(m, h)[1]


def huber_surrogate_curvature(m, h):
    """``l''(m)`` of :func:`huber_surrogate_terms`."""
    return huber_surrogate_terms(m, h)[2]


def logistic_deriv(m):
    """``l'(m)`` of :func:`logistic_slopes`."""
    return logistic_slopes(m)[0]


def logistic_curvature(m):
    """``l''(m)`` of :func:`logistic_slopes`."""
    return logistic_slopes(m)[1]


# ----------------------------------------------------------------------------- loss classes


class MarginLoss(ABC):
    """A convex loss of the margin ``m = y * x'theta``, vectorised over ``m``."""

    #: short name used in reports and serialised models
    name: str = "margin"
    #: True when the second derivative is piecewise constant (finite Newton)
    piecewise_quadratic: bool = False
    #: whether ``backend="auto"`` uses the compiled kernels for this loss from ``AUTO_MIN_ROWS`` rows
    #: (see :func:`pydpowl.engine.kernels.use_kernels`)
    auto_kernels: bool = True
    #: declared sup |l'(m)| (the privacy calibration scales Delta with it; None: not declared)
    lipschitz: Optional[float] = None
    #: declared sup l''(m) (None: unbounded or unknown)
    curvature_bound: Optional[float] = None

    @abstractmethod
    def value(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        """Loss at each margin."""

    @abstractmethod
    def deriv(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        """First derivative at each margin (must lie in [-1, 1])."""

    @abstractmethod
    def deriv2(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        """Second derivative (curvature) at each margin (non-negative)."""

    def terms(self, m: NDArray[np.float64]) -> Tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """``(value, deriv, deriv2)`` at each margin, in one call (the problem's row sweep uses this).

        The arrays returned belong to the caller only when the loss made them: callers must not write into them.
        """
        return self.value(m), self.deriv(m), self.deriv2(m)

    def slopes(self, m: NDArray[np.float64]) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(deriv, deriv2)`` at each margin: what the solver needs at a trial point, where the value is
        not needed (:meth:`terms` without the value, cheaper where the loss says how)."""
        return self.terms(m)[1:]

    def kernel_spec(self) -> Optional[Tuple[int, float]]:
        """``(code, parameter)`` of the compiled form in :mod:`pydpowl.engine.kernels`, or None."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class _BuiltinLoss(MarginLoss):
    """A loss given by an elementwise ``terms`` function of this module and one parameter (or none)."""

    #: the elementwise function of ``(m, parameter)`` or ``(m,)`` giving (value, first derivative, curvature)
    _elementwise: Callable
    #: code of the compiled form in pydpowl.engine.kernels
    _code: int
    #: the loss parameter, None for a loss without one
    _parameter: Optional[float] = None

    def terms(self, m: NDArray[np.float64]) -> Tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        m = np.asarray(m, dtype=np.float64)
        return self._elementwise(m) if self._parameter is None else self._elementwise(m, self._parameter)

    def value(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.terms(m)[0]

    def deriv(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.terms(m)[1]

    def deriv2(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.terms(m)[2]

    def kernel_spec(self) -> Tuple[int, float]:
        return self._code, 0.0 if self._parameter is None else self._parameter


class HuberHingeLoss(_BuiltinLoss):
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
    lipschitz = 1.0
    _elementwise = staticmethod(huber_hinge_terms)
    _code = HUBER_HINGE

    def __init__(self, h: float = 0.5) -> None:
        self.h = self._parameter = check_positive("huber_h", h)
        self.curvature_bound = 1.0 / (2.0 * self.h)

    def quadratic_surrogate(self) -> "HuberQuadraticSurrogate":
        """The loss with every margin in the quadratic zone (the solver's starting point minimises it)."""
        return HuberQuadraticSurrogate(self.h)

    def __repr__(self) -> str:
        return f"HuberHingeLoss(h={self.h!r})"


class HuberQuadraticSurrogate(_BuiltinLoss):
    """``(1 + h - m)^2 / (4h)``: the Huber hinge's quadratic piece on the whole line.

    Not a loss for private fits (its derivative is unbounded, and
    :func:`get_loss` refuses it): the solver minimises it in one Newton step (a
    weighted ridge regression) to start the Huber-hinge problem near its solution.
    """

    name = "huber-surrogate"
    piecewise_quadratic = True
    lipschitz = np.inf
    _elementwise = staticmethod(huber_surrogate_terms)
    _code = HUBER_SURROGATE

    def __init__(self, h: float = 0.5) -> None:
        self.h = self._parameter = check_positive("huber_h", h)
        self.curvature_bound = 1.0 / (2.0 * self.h)

    def __repr__(self) -> str:
        return f"HuberQuadraticSurrogate(h={self.h!r})"


class LogisticLoss(_BuiltinLoss):
    """Logistic loss ``l(m) = log(1 + exp(-m))`` (``|l'| < 1``, ``l'' <= 1/4``).

    Its value and its slopes are defined apart (:func:`logistic_value`, :func:`logistic_slopes`): the
    value's ``log1p`` is the costliest step and most solver evaluations do without it.
    """

    name = "logistic"
    lipschitz = 1.0
    curvature_bound = 0.25
    #: numpy's vectorised exp and log1p beat the kernels' scalar ones (warm DPLogisticRegression fits,
    #: measured: 11.6 ms against 14.6 ms at 200,000 rows, 59 against 74 ms at 1e6), so "auto" stays on numpy
    auto_kernels = False
    _elementwise = staticmethod(logistic_terms)
    _code = LOGISTIC

    def value(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        return logistic_value(np.asarray(m, dtype=np.float64))

    def slopes(self, m: NDArray[np.float64]) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
        return logistic_slopes(np.asarray(m, dtype=np.float64))

    def deriv(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.slopes(m)[0]

    def deriv2(self, m: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.slopes(m)[1]


def squared_error_value(eta, y):
    """``(eta - y)^2 / 2`` (DPpack's ``loss.squared.error``)."""
    r = eta - y
    return 0.5 * (r * r)


def squared_error_deriv(eta, y):
    """``eta - y``, the derivative in the prediction ``eta``."""
    return eta - y


def squared_error_curvature(eta, y):
    """The constant 1 (shaped like ``eta``)."""
    return 0.0 * eta + 1.0


class SquaredErrorLoss:
    """Squared error ``l(eta, y) = (eta - y)^2 / 2`` of the linear prediction ``eta = z'theta``.

    Not a margin loss: it is solved through
    :class:`pydpowl.engine.problem.QuadraticProblem`, which sums it once into
    sufficient statistics. Its curvature is the constant 1, so the Hessian of
    the data term is ``Z'WZ`` at every point and the solver's Newton step is
    exact.
    """

    name = "squared-error"
    #: the curvature does not depend on eta: the data term's Hessian is computed once
    constant_curvature = True
    curvature_bound = 1.0

    def value(self, eta: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
        return squared_error_value(np.asarray(eta, dtype=np.float64), y)

    def deriv(self, eta: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
        return squared_error_deriv(np.asarray(eta, dtype=np.float64), y)

    def deriv2(self, eta: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
        return squared_error_curvature(np.asarray(eta, dtype=np.float64), y)

    def __repr__(self) -> str:
        return "SquaredErrorLoss()"


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
