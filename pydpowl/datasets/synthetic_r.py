"""The synthetic design drawn from an R-compatible stream, in the authors' order.

The authors' R function ``generate.data(N, p)`` (``simulation_study.R`` and
``simulation_study_clean.R`` in github.com/sgiddens/DP-OWL) consumes R's stream
in this order:

1. features, one row at a time: ``X[i, ] <- runif(p)`` for ``i = 1..N``;
2. treatments: ``sample(c(-1, 1), size = N, replace = TRUE, prob = c(0.5, 0.5))``;
3. benefits, one row at a time: ``B[i] <- rnorm(1, mean = mus[i], sd = 0.5)``,
   which R evaluates as ``mus[i] + 0.5 * norm_rand()``;
4. no further draws (the shift ``B + abs(min(B)) + 0.001`` is deterministic).

Row-by-row ``runif(p)`` is the same stream as one ``runif(N * p)`` filled row
by row, and ``N`` calls ``rnorm(1, mus[i], 0.5)`` are ``mus + 0.5 * z`` with
``z = rnorm(N)``, because every value draws from the one shared stream in
turn. The caller (:func:`pydpowl.datasets.make_synthetic_owl`) forms
``mus = 0.01 + 0.02 * x4 + 3 * A * f(x)`` and the benefits with R's operation
order, so an :class:`pydpowl.RRandom` seeded like R gives the same doubles.
"""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np
from numpy.typing import NDArray

__all__ = ["draw_in_r_order", "TREATMENT_ARMS", "TREATMENT_PROBABILITIES"]

#: R's ``c(-1, 1)`` and the authors' default ``propensities = c(0.5, 0.5)``
TREATMENT_ARMS = np.array([-1.0, 1.0])
TREATMENT_PROBABILITIES = np.array([0.5, 0.5])


def draw_in_r_order(
    rng: Any, n: int, p: int
) -> Tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Features, treatments and standard normals exactly as ``generate.data(n, p)`` draws them.

    Parameters
    ----------
    rng : pydpowl.RRandom
        An R-compatible stream (``runif``, ``sample`` and ``rnorm`` as in R).
    n : int
        Number of rows ``N``.
    p : int
        Number of features (4 informative plus any null features).

    Returns
    -------
    X : ndarray of shape (n, p)
        ``X[i, ] <- runif(p)`` for each row in turn.
    A : ndarray of shape (n,)
        ``sample(c(-1, 1), n, replace = TRUE, prob = c(0.5, 0.5))``.
    z : ndarray of shape (n,)
        The standard normals behind ``rnorm(1, mean = mus[i], sd = 0.5)``:
        R returns ``mus[i] + 0.5 * z[i]``.
    """
    X = np.asarray(rng.runif(n * p), dtype=np.float64).reshape(n, p)  # row-major = row by row
    A = np.asarray(
        rng.sample(TREATMENT_ARMS, n, replace=True, prob=TREATMENT_PROBABILITIES), dtype=np.float64
    )
    z = np.asarray(rng.rnorm(n), dtype=np.float64)
    return X, A, z
