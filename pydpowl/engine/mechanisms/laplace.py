"""The Laplace mechanism: each value plus ``Laplace(Delta_k / epsilon)`` noise, rounded to its release grid.

Used by the private value of a rule (:mod:`pydpowl.privacy.value_estimate`,
whose cell sums have their own sensitivities). A value ``S_k`` with
sensitivity ``Delta_k`` released as ``S_k + Laplace(Delta_k / epsilon)`` is
``epsilon``-DP (Dwork et al. 2006); several values whose sensitivities add up
across the coordinates a record can touch compose as that module states.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["sample_laplace"]


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
