"""The Laplace mechanism: each value plus ``Laplace(b_k)`` noise, the exact sum rounded to its release grid.

Used by the private value of a rule (:mod:`pydpowl.evaluation.private`,
whose cell sums have their own sensitivities). A value ``S_k`` with
sensitivity ``Delta_k`` released as ``S_k + Laplace(Delta_k / epsilon)`` is
``epsilon``-DP (Dwork et al. 2006); several values whose sensitivities add up
across the coordinates a record can touch compose as that module states.

:func:`release_laplace` rounds the exact real sum ``S_k + L_k`` to the grid
:func:`~.rounding.grid_for_scale` ``(b_k)`` (:func:`~.rounding.round_release`),
as every release of the package; :func:`laplace_delta` is the ``delta`` that
costs under numpy's sampler (docs/privacy_audit.md, "The Laplace releases").
"""

from __future__ import annotations

import math
from typing import Any, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._validation import check_positive
from .rounding import coupling_delta, grid_for_scale, round_release

__all__ = ["sample_laplace", "release_laplace", "laplace_delta"]

#: numpy's ``Generator.laplace`` inverts one uniform ``U = k 2^-53``: its noise never exceeds this many scales
_LAPLACE_REACH = 53.0 * math.log(2.0)


def sample_laplace(scales: ArrayLike, *, rng: Any) -> NDArray[np.float64]:
    """One ``Laplace(0, b_k)`` draw per scale ``b_k`` (the one place Laplace noise is drawn).

    Parameters
    ----------
    scales : array-like of shape (k,)
        Positive finite scales ``Delta_k / epsilon``.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (k,)
    """
    b = np.asarray(scales, dtype=np.float64)
    if b.ndim != 1 or not np.all(np.isfinite(b)) or not np.all(b > 0):
        raise ValueError("scales must be a 1-D array of finite numbers > 0.")
    return np.asarray(rng.laplace(0.0, b), dtype=np.float64)


def release_laplace(values: ArrayLike, scales: ArrayLike, *, rng: Any
                    ) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(released, grids)``: ``values + Laplace(scales)``, the exact sums rounded to ``grid_for_scale(b_k)``.

    Parameters
    ----------
    values : array-like of shape (k,)
        The exact statistics (private).
    scales : array-like of shape (k,)
        Their noise scales ``Delta_k / epsilon`` (public).
    rng : numpy.random.Generator

    Returns
    -------
    released : ndarray of shape (k,)
    grids : ndarray of shape (k,)
        The public power-of-two grids.
    """
    v = np.asarray(values, dtype=np.float64)
    b = np.asarray(scales, dtype=np.float64)
    noise = sample_laplace(b, rng=rng)
    if v.shape != b.shape:
        raise ValueError(f"values and scales must have the same shape, got {v.shape} and {b.shape}.")
    grids = np.array([grid_for_scale(float(bk)) for bk in b])
    released = np.array([round_release(v[k:k + 1], noise[k:k + 1], grid=float(grids[k]))[0]
                         for k in range(v.shape[0])])
    return released, grids


def laplace_delta(*, epsilon: float, scales: Sequence[float], grids: Sequence[float]) -> float:
    """The ``delta`` of :func:`release_laplace` under numpy's sampler, for a release that is ``epsilon``-DP ideally.

    numpy's ``Generator.laplace(0, b)`` returns ``b log(2U)`` (``U < 1/2``) or
    ``-b log(2 - 2U)`` for ``U = k 2^-53`` (checked in the tests). Couple ``U``
    with an exact uniform ``U*`` (``|U - U*| <= 2^-53``): at a noise of size
    ``v`` the computed value is within ``b kappa(v)`` of the exact
    ``F^-1(U*)``, ``kappa(v) = 3 2^-52 e^(v/b) + 2^-46`` (the uniform's
    resolution through the slope ``b / min(U, 1 - U)``, the arguments' rounding,
    ``log`` and the product). A coordinate's release differs from the ideal one
    only if the exact sum lies within that of a rounding midpoint (spaced
    ``g``): probability at most ``int f(x) 2 b kappa(|x|) / g dx + 2 max(2 b
    kappa f) <= (2 b / g)(3 T 2^-52 + 2^-46) + 2^-44`` for ``|x| <= T b``, ``T = 53
    ln 2`` (numpy's reach), plus ``P(|x| > T b) = 2^-53`` and the rejected
    ``U = 0`` (``2^-53``). Summed over the coordinates (``delta_0``): the
    release is ``(epsilon, (1 + e^epsilon) delta_0)``-DP.

    Parameters
    ----------
    epsilon : float
        The release's budget (the whole vector's).
    scales, grids : sequence of float
        The Laplace scales and the grids of the coordinates.
    """
    eps = check_positive("epsilon", epsilon)
    b = np.asarray(scales, dtype=np.float64)
    g = np.asarray(grids, dtype=np.float64)
    if b.shape != g.shape or b.ndim != 1 or not np.all(b > 0) or not np.all(g > 0):
        raise ValueError("scales and grids must be 1-D arrays of the same length, every entry > 0.")
    T = _LAPLACE_REACH
    per_coord = (2.0 * b / g) * (3.0 * T * 2.0 ** -52 + 2.0 ** -46) + 2.0 ** -44 + 2.0 * 2.0 ** -53
    return coupling_delta(eps, float(np.sum(per_coord)))
