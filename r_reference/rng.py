"""R's own random streams, for bitwise comparison with :mod:`pydpowl.rrandom`.

One call of :func:`r_streams` is one R call: R seeds (``set.seed`` with the
default kinds) or loads a ``.Random.seed``, evaluates a batch of R expressions
in order on that one stream, and returns every result together with the final
``.Random.seed``. Doubles come back as float64 unchanged (compare them with
``float.hex`` or :func:`numpy.array_equal`); :func:`r_literal` writes a Python
float as an exact R literal for use inside the expressions. The R code is
``r_streams`` in ``r_reference/rng.R``, called with named arguments.
"""

from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._session import call_r_file

__all__ = ["r_streams", "r_literal", "r_random_seed"]


def r_literal(x: float) -> str:
    """An R literal for the double ``x``, exact to the bit (C99 hex notation)."""
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Inf" if x > 0 else "-Inf"
    return f"({x.hex()})"


def r_streams(
    exprs: Sequence[str],
    *,
    seed: Optional[float] = None,
    state: Optional[ArrayLike] = None,
) -> Tuple[List[NDArray[np.float64]], NDArray[np.int32]]:
    """Evaluate R expressions on one stream after ``set.seed(seed)`` or a loaded state.

    Parameters
    ----------
    exprs : sequence of str
        R expressions returning numeric vectors, e.g. ``"rnorm(10)"``; they run
        in this order in one environment (an expression may assign a variable
        used by a later one; its value is still returned).
    seed : int or float, optional
        Passed to R's ``set.seed`` with the default kinds (Mersenne-Twister,
        Inversion, Rejection). Exactly one of ``seed`` and ``state`` is needed.
    state : array-like of int, length 626, optional
        A ``.Random.seed`` assigned in R's global environment instead of seeding.

    Returns
    -------
    results : list of numpy.ndarray of float64
        One vector per expression (integers are returned as exact doubles).
    random_seed : numpy.ndarray of int32, shape (626,)
        R's ``.Random.seed`` after the last expression.

    Raises
    ------
    r_reference.RError
        If R fails (e.g. ``set.seed(2^31)``), with R's message.
    r_reference.RUnavailableError
        If R or rpy2 cannot be loaded.
    """
    if (seed is None) == (state is None):
        raise ValueError("give exactly one of seed and state.")
    res = call_r_file(
        "rng.R", "r_streams", exprs=np.array(list(exprs), dtype=str),
        seed=None if seed is None else float(seed),
        state=None if state is None else np.asarray(state, dtype=np.int32),
    )
    values = np.array(res["values"], dtype=np.float64, copy=True).ravel()
    lengths = np.array(res["lengths"], dtype=np.int64).ravel()
    random_seed = np.array(res["random_seed"], dtype=np.int32, copy=True).ravel()
    if lengths.shape[0] != len(exprs) or lengths.sum() != values.shape[0]:
        raise RuntimeError(f"R returned {values.shape[0]} values in {lengths.shape[0]} results for {len(exprs)} "
                           "expressions.")
    if random_seed.shape[0] != 626:
        raise RuntimeError(f"expected R's .Random.seed of length 626, got {random_seed.shape[0]}.")
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    results = [values[bounds[i]:bounds[i + 1]].copy() for i in range(lengths.shape[0])]
    return results, random_seed


def r_random_seed(seed: float) -> NDArray[np.int32]:
    """R's ``.Random.seed`` right after ``set.seed(seed)``."""
    return r_streams([], seed=seed)[1]
