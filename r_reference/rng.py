"""R's own random streams, for bitwise comparison with :mod:`pydpowl.rrandom`.

One call of :func:`r_streams` is one R call: R seeds (``set.seed`` with the
default kinds) or loads a ``.Random.seed``, evaluates a batch of R expressions
in order on that one stream, and returns every result together with the final
``.Random.seed``. Doubles come back as float64 unchanged (compare them with
``float.hex`` or :func:`numpy.array_equal`); :func:`r_literal` writes a Python
float as an exact R literal for use inside the expressions.
"""

from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._session import call_r

__all__ = ["r_streams", "r_literal", "r_random_seed"]

_R_RUN = """function(seed, state, exprs) {
  if (length(state) == 0) {
    set.seed(seed, kind = "Mersenne-Twister", normal.kind = "Inversion",
             sample.kind = "Rejection")
  } else {
    RNGkind("Mersenne-Twister", "Inversion", "Rejection")
    assign(".Random.seed", as.integer(state), envir = globalenv())
  }
  env <- new.env(parent = globalenv())
  out <- lapply(exprs, function(e) as.numeric(eval(parse(text = e), envir = env)))
  c(length(out), lengths(out), unlist(out),
    as.numeric(get(".Random.seed", envir = globalenv())))
}"""


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
    exprs_arr = np.array(list(exprs), dtype=str)
    # rpy2 has no conversion for None: an empty state vector means "use the seed"
    st = np.empty(0) if state is None else np.asarray(state, dtype=np.float64)
    sd = math.nan if seed is None else float(seed)
    flat = np.array(call_r(_R_RUN, sd, st, exprs_arr), dtype=np.float64, copy=True)
    k = int(flat[0])
    lengths = flat[1 : 1 + k].astype(np.int64)
    pos = 1 + k
    results = []
    for m in lengths.tolist():
        results.append(flat[pos : pos + m].copy())
        pos += m
    random_seed = flat[pos:].astype(np.int64)
    if random_seed.shape[0] != 626:
        raise RuntimeError(f"expected R's .Random.seed of length 626, got {random_seed.shape[0]}.")
    return results, random_seed.astype(np.int32)


def r_random_seed(seed: float) -> NDArray[np.int32]:
    """R's ``.Random.seed`` right after ``set.seed(seed)``."""
    return r_streams([], seed=seed)[1]
