"""Gaussian noise: isotropic ``N(0, sigma^2 I)`` draws (as DPpack's ``MASS::mvrnorm``), and the Gaussian release.

Used by KST objective perturbation with ``delta > 0`` (:mod:`.objective`) and
by DP-LSW/DP-LSL (:mod:`pydpowl.mdp_policy_evaluation`), which release ``theta +
sigma z`` through :func:`release_gaussian`: the exact sum rounded to a public
grid (:mod:`.rounding`), with the ``delta`` that costs under numpy's sampler
(:func:`gaussian_rounding_delta`). With an R-compatible stream the draw is
``MASS::mvrnorm``'s, draw for draw.
"""

from __future__ import annotations

import math
from typing import Any, Tuple

import numpy as np
from numpy.typing import NDArray

from ..._validation import check_int, check_positive
from ._common import is_r_stream
from .rounding import NORMAL_ABSOLUTE_ERROR, SAMPLER_FAILURE, coupling_delta, round_release

__all__ = ["sample_gaussian", "sample_isotropic_gaussian", "release_gaussian", "gaussian_rounding_delta"]


def sample_gaussian(dim: int, scale: float, *, rng: np.random.Generator) -> NDArray[np.float64]:
    """Draw ``eta ~ N(0, scale^2 I_dim)`` from a numpy Generator (the one Gaussian draw of the package).

    Parameters
    ----------
    dim : int
        Dimension, at least 1.
    scale : float
        Standard deviation per coordinate, in ``[0, inf)``; 0 returns zeros
        without consuming random numbers.
    rng : numpy.random.Generator
        Source of randomness (never the global numpy state).

    Returns
    -------
    ndarray of shape (dim,)
    """
    dim = check_int("dim", dim, minimum=1)
    scale = float(scale)
    if not 0.0 <= scale < np.inf:
        raise ValueError(f"scale must be in [0, inf), got scale={scale!r}.")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}.")
    if scale == 0.0:
        return np.zeros(dim)
    return scale * rng.standard_normal(dim)


def sample_isotropic_gaussian(dim: int, variance: float, *, rng: Any) -> NDArray[np.float64]:
    """Draw ``b ~ N(0, variance * I_dim)``.

    With an R-compatible stream this is ``MASS::mvrnorm(1, rep(0, dim), variance *
    diag(dim))`` draw for draw: ``rnorm(dim)`` rotated by the eigenvectors R's
    ``eigen(Sigma, symmetric = TRUE)`` returns (LAPACK's ``dsyevr``, reversed to
    decreasing eigenvalues; for a multiple of the identity a signed permutation,
    so the rotation is exact: :func:`_r_identity_rotation`). With a numpy
    Generator: ``sqrt(variance) * standard_normal(dim)``, the same law.
    """
    dim = check_int("dim", dim, minimum=1)
    variance = check_positive("variance", variance)
    if is_r_stream(rng):
        z = np.asarray(rng.rnorm(dim), dtype=np.float64)
        return math.sqrt(variance) * _r_identity_rotation(z)
    return sample_gaussian(dim, math.sqrt(variance), rng=rng)


def _r_identity_rotation(z: NDArray[np.float64]) -> NDArray[np.float64]:
    """``V z`` for the eigenvectors ``V`` R's ``eigen(c * diag(d), symmetric = TRUE)`` returns, any ``c > 0``.

    LAPACK's ``dsyevr`` on a multiple of the identity gives the identity (d != 2)
    or ``[[1, 0], [0, -1]]`` up to column order (d = 2); R reverses the columns
    (decreasing eigenvalues). So ``V`` is the reversed identity, except
    ``[[0, -1], [1, 0]]`` for d = 2, and ``V z`` is ``z`` reversed (with the one
    sign for d = 2). Entries are 0 and +-1, so ``MASS::mvrnorm``'s product
    ``V diag(sqrt(c)) z`` is exactly ``sqrt(c)`` times this. Checked against R's
    ``eigen`` and scipy's ``eigh(driver="evr")`` for d = 1..79 and several c
    (tests/engine/mechanisms/test_mechanisms.py, tests/r_reference/test_dppack_family.py); no scipy
    is needed at run time.
    """
    if z.shape[0] == 2:
        return np.array([-z[1], z[0]])
    return z[::-1].copy()


def release_gaussian(theta: NDArray[np.float64], scale: float, *, grid: float,
                     rng: np.random.Generator) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(release, noise)``: ``theta + N(0, scale^2 I)``, the exact sum rounded to ``grid``.

    ``grid`` must be public (a function of public settings only; the scale of
    a smooth-sensitivity release is not). ``noise`` is PRIVATE.
    """
    t = np.asarray(theta, dtype=np.float64)
    noise = sample_gaussian(t.shape[0], scale, rng=rng)
    release = t + noise
    if not np.all(np.isfinite(release)):
        raise ValueError("the Gaussian release is not finite; nothing was released.")
    return round_release(t, noise, grid=grid), noise


def gaussian_rounding_delta(*, epsilon: float, dim: int, grid: float, max_scale: float, scale_ulps: float) -> float:
    """The ``delta`` :func:`release_gaussian` adds to an ``(epsilon, delta)``-DP Gaussian mechanism.

    Coupled with exact reals (each of numpy's ziggurat deviates within
    ``eta = NORMAL_ABSOLUTE_ERROR`` of an exact one, decisions agreeing but with
    probability ``SAMPLER_FAILURE``; the computed scale within ``scale_ulps``
    ulps of the exact one; one rounding in the product), a coordinate ``theta +
    sigma z`` is off by at most ``w(z) = sigma (eta + (scale_ulps + 1) u |z|)``.
    It differs from the ideal release only if the exact sum lies within
    ``w`` of a rounding midpoint (spaced ``g``); summing the normal density over
    the midpoints (a lattice sum of ``h(z) = 2 (eta + k u |z|) phi(z)``, two
    unimodal pieces) gives at most ``(2 sigma / g)(eta + k u sqrt(2/pi)) + 8 (eta +
    k u) phi(0)`` per coordinate, with ``sigma <= max_scale`` (public). The
    release is ``(epsilon, delta + (1 + e^epsilon) delta_0)``-DP
    (:func:`~.rounding.coupling_delta`); this returns the added term.
    """
    eps = check_positive("epsilon", epsilon)
    d = check_int("dim", dim, minimum=1)
    g = check_positive("grid", grid)
    top = check_positive("max_scale", max_scale)
    k = (float(scale_ulps) + 1.0) * 2.0 ** -53
    eta = NORMAL_ABSOLUTE_ERROR
    phi0 = 1.0 / math.sqrt(2.0 * math.pi)
    per_coord = (2.0 * top / g) * (eta + k * math.sqrt(2.0 / math.pi)) + 8.0 * (eta + k) * phi0 + SAMPLER_FAILURE
    return coupling_delta(eps, d * per_coord)
