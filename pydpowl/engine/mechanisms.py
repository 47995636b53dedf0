"""Output-perturbation noise of Algorithm 1 (DP-wERM).

The released vector is ``theta_hat + b`` where ``b`` has density proportional to
``exp(-epsilon ||b|| / Delta)``: its norm is Gamma(shape=d, rate=epsilon/Delta)
and its direction is uniform on the sphere. The norm is drawn first and the
direction second, in DPpack's order.

Functions here are pure: they take the generator as ``rng=`` and keep nothing.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_epsilon, check_int, check_positive

__all__ = [
    "output_sensitivity",
    "noise_rate",
    "sample_output_noise",
    "sample_output_noise_batch",
    "is_r_stream",
]


def output_sensitivity(*, gamma: float, weights_upper_bound: float, C: float = 0.0) -> float:
    """l2 sensitivity of the minimiser, ``Delta = (C + 2W) / gamma`` (Theorem 7).

    Parameters
    ----------
    gamma : float
        Regularisation constant in DPpack's convention (objective strongly convex
        with modulus ``gamma / n``).
    weights_upper_bound : float
        Public bound ``W`` on every weight.
    C : float, default=0.0
        Public bound on how much the weights of the *other* records can change in
        total when one record is replaced (0 when weights are observed or come
        from an external model); see :mod:`pydpowl.estimators.propensity`.
    """
    gamma = check_positive("gamma", gamma)
    w_max = check_positive("weights_upper_bound", weights_upper_bound)
    if isinstance(C, bool) or not isinstance(C, (int, float, np.floating, np.integer)) or not (0 <= float(C) < np.inf):
        raise ValueError(f"C must be in [0, inf), got C={C!r}.")
    return (float(C) + 2.0 * w_max) / gamma


def noise_rate(*, epsilon: float, gamma: float, weights_upper_bound: float, C: float = 0.0) -> float:
    """Rate ``epsilon / Delta`` of the Gamma law of the noise norm.

    Computed as ``gamma * epsilon / (C + 2W)``, the same floating-point
    operations as DPpack's ``gamma*eps/(2*weights.upper.bound)`` when ``C = 0``,
    so an R-compatible stream reproduces DPpack's noise bit for bit.
    ``epsilon = inf`` gives ``inf`` (no noise).
    """
    eps = check_epsilon(epsilon)
    output_sensitivity(gamma=gamma, weights_upper_bound=weights_upper_bound, C=C)  # validates
    return float(gamma) * eps / (float(C) + 2.0 * float(weights_upper_bound))


def is_r_stream(rng: Any) -> bool:
    """True for an R-compatible stream (:class:`pydpowl.RRandom`-like: ``rgamma`` and ``rnorm``)."""
    return callable(getattr(rng, "rgamma", None)) and callable(getattr(rng, "rnorm", None))


def _r_sum_of_squares(z: NDArray[np.float64]) -> float:
    # R's sum() accumulates doubles in long double, left to right
    acc = np.longdouble(0.0)
    for v in z:
        acc += np.longdouble(v * v)
    return float(acc)


def sample_output_noise(dim: int, rate: float, *, rng: Any) -> NDArray[np.float64]:
    """Draw ``b`` in R^dim with ``||b|| ~ Gamma(dim, rate)`` and a uniform direction.

    Parameters
    ----------
    dim : int
        Number of coefficients ``d`` (intercept included).
    rate : float
        ``epsilon / Delta`` in ``(0, inf]``; ``inf`` returns zeros.
    rng : numpy.random.Generator or pydpowl.RRandom
        Source of randomness. With an R-compatible stream the draws are
        ``rgamma(1, dim, rate)`` then ``rnorm(dim)``, as DPpack does after
        ``set.seed``; with a numpy Generator ``gamma`` then ``standard_normal``.

    Returns
    -------
    ndarray of shape (dim,)
    """
    dim = check_int("dim", dim, minimum=1)
    rate = check_positive("rate", rate, allow_inf=True)
    if is_r_stream(rng):
        radius = float(rng.rgamma(1, dim, rate=rate)[0])  # 0 when rate = inf, as in R
        z = np.asarray(rng.rnorm(dim), dtype=np.float64)
        direction = z / math.sqrt(_r_sum_of_squares(z))
        return radius * direction
    if rate == np.inf:
        return np.zeros(dim)
    radius = rng.gamma(shape=dim, scale=1.0 / rate)
    z = rng.standard_normal(dim)
    return radius * (z / np.linalg.norm(z))


def sample_output_noise_batch(
    dim: int, rate: float, size: int, *, rng: np.random.Generator
) -> NDArray[np.float64]:
    """``size`` independent draws of :func:`sample_output_noise` as rows (numpy Generator only).

    Used by simulation studies that release many noisy copies of one solution
    to study the mechanism; each row alone is an ``epsilon``-DP release, and
    releasing several of them on the same data composes.
    """
    dim = check_int("dim", dim, minimum=1)
    size = check_int("size", size, minimum=0)
    rate = check_positive("rate", rate, allow_inf=True)
    if rate == np.inf:
        return np.zeros((size, dim))
    radius = rng.gamma(shape=dim, scale=1.0 / rate, size=size)
    z = rng.standard_normal((size, dim))
    return z * (radius / np.linalg.norm(z, axis=1))[:, None]
