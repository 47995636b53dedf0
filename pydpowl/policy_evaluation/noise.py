"""The Gaussian noise sampler used by DP-LSW and DP-LSL.

A pure function of ``(dim, scale, *, rng)``: the estimators call it once per
fit and add the draw to the non-private solution without keeping it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .._validation import check_int

__all__ = ["sample_gaussian"]


def sample_gaussian(dim: int, scale: float, *, rng: np.random.Generator) -> NDArray[np.float64]:
    """Draw ``eta ~ N(0, scale^2 I_dim)``.

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
