"""The weighted, l2-regularised ERM objective and its derivatives (numpy).

In the scaled space (rows ``z_i`` with ``||z_i|| <= 1``) the objective is

    F(theta) = (1/n) * sum_i w_i * l(y_i * z_i'theta) + (gamma / (2n)) * ||theta||^2,

DPpack's convention. The solver works with ``G = n * F`` (same minimiser, no
tiny numbers) and reports the gradient norm of ``F`` itself.

:class:`NumpyProblem` handles any :class:`~pydpowl.engine.losses.MarginLoss`;
:mod:`pydpowl.engine._kernels` provides fused single-pass versions for the built-in
losses with the same interface and, up to rounding, the same results.
"""

from __future__ import annotations

from typing import Tuple

import numpy as np
from numpy.typing import NDArray

from .losses import MarginLoss

__all__ = ["NumpyProblem"]


class NumpyProblem:
    """Derivatives of ``G(theta) = sum_i w_i l(y_i z_i'theta) + gamma/2 ||theta||^2``.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Rows in the scaled space.
    y : ndarray of shape (n,)
        Labels in {-1, 1}.
    w : ndarray of shape (n,)
        Non-negative weights.
    gamma : float
        Regularisation constant (DPpack's ``gamma``).
    loss : MarginLoss
        The margin loss.
    """

    backend = "numpy"

    def __init__(
        self,
        Z: NDArray[np.float64],
        y: NDArray[np.float64],
        w: NDArray[np.float64],
        gamma: float,
        loss: MarginLoss,
    ) -> None:
        self.Z, self.y, self.w, self.gamma, self.loss = Z, y, w, float(gamma), loss
        self.n, self.d = Z.shape

    def margins(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """``y_i * z_i'theta`` for every row."""
        return self.y * (self.Z @ theta)

    def objective(self, theta: NDArray[np.float64], m: NDArray[np.float64]) -> float:
        """``G(theta)`` given the margins ``m`` at ``theta``."""
        return float(self.w @ self.loss.value(m) + 0.5 * self.gamma * (theta @ theta))

    def gradient(self, theta: NDArray[np.float64], m: NDArray[np.float64]) -> NDArray[np.float64]:
        """``grad G(theta)`` given the margins at ``theta``."""
        return self.Z.T @ (self.w * self.y * self.loss.deriv(m)) + self.gamma * theta

    def grad_hess(
        self, theta: NDArray[np.float64], m: NDArray[np.float64]
    ) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Gradient and Hessian of ``G`` (Hessian only over rows with ``l'' > 0``)."""
        g = self.gradient(theta, m)
        curv = self.w * self.loss.deriv2(m)
        active = curv > 0
        Za = self.Z[active]
        H = (Za * curv[active, None]).T @ Za
        H[np.diag_indices_from(H)] += self.gamma
        return g, H

    def direction_margins(self, p: NDArray[np.float64]) -> NDArray[np.float64]:
        """``y_i * z_i'p``: how each margin moves along the direction ``p``."""
        return self.y * (self.Z @ p)

    def line_derivatives(
        self, m: NDArray[np.float64], s: NDArray[np.float64], t: float,
        theta: NDArray[np.float64], p: NDArray[np.float64],
    ) -> Tuple[float, float]:
        """First and second derivative of ``t -> G(theta + t p)``."""
        mt = m + t * s
        reg1 = self.gamma * (theta @ p + t * (p @ p))
        d1 = float(self.w @ (self.loss.deriv(mt) * s)) + reg1
        d2 = float(self.w @ (self.loss.deriv2(mt) * s * s)) + self.gamma * float(p @ p)
        return d1, d2
