"""Gaussian noise: isotropic ``N(0, sigma^2 I)`` draws, as DPpack (``MASS::mvrnorm``) draws them.

Used by KST objective perturbation with ``delta > 0``
(:mod:`.objective`) and by DP-LSW/DP-LSL (:mod:`pydpowl.policy_evaluation`).
With an R-compatible stream the draw is ``MASS::mvrnorm``'s, draw for draw.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._validation import check_int, check_positive
from ._common import is_r_stream

__all__ = ["sample_gaussian", "sample_isotropic_gaussian"]


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
    (tests/test_mechanisms.py, tests/test_r_reference_dppack_family.py); no scipy
    is needed at run time.
    """
    if z.shape[0] == 2:
        return np.array([-z[1], z[0]])
    return z[::-1].copy()
