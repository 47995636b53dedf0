"""P(A_i | x_i) of the arm each subject received, from the propensity of arm +1, and its range rule.

The propensity models (:mod:`pydpowl.estimators.propensity`), DP-OWL's input
checks (:mod:`pydpowl.estimators.inputs`), the data loaders and the empirical
value (:mod:`pydpowl.evaluation.empirical`) form the received arm's
probability here, and nowhere else.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_vector, position_base, said

__all__ = ["received_propensity", "received_propensity_outside", "received_propensity_error", "arm_propensity"]


def received_propensity(propensity: Any, treatment: NDArray[np.float64]) -> NDArray[np.float64]:
    """P(A_i | x_i) of the treatment each subject received.

    The one place where the received arm's probability is formed from P(A = +1):
    ``p`` where ``A_i = +1`` and ``1 - p`` where ``A_i = -1``.

    Parameters
    ----------
    propensity : float or array-like of shape (n,)
        A scalar is P(A = +1) for everyone (a randomised trial) and must lie in
        (0, 1); an array already holds P(A_i | x_i) of the received treatment,
        in (0, 1].
    treatment : ndarray of shape (n,)
        Received treatments in {-1, 1}.
    """
    if isinstance(propensity, numbers.Real) and not isinstance(propensity, (bool, np.bool_)):
        pi = float(propensity)
        if not 0.0 < pi < 1.0:
            name = said("propensity")
            raise ValueError(f"{name} (the probability of treatment +1) must be in (0, 1), got {name}={pi!r}.")
        return np.where(treatment > 0, pi, 1.0 - pi)
    p = check_vector("propensity", propensity, length=treatment.shape[0])
    bad = received_propensity_outside(p)
    if bad.any():
        raise received_propensity_error(int(bad.sum()), p.size, int(np.flatnonzero(bad)[0]) + position_base())
    return p


def received_propensity_outside(p: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Where an array of P(A_i | x_i) of the received treatment is not in (0, 1] (the one range rule)."""
    return (p <= 0) | (p > 1)


def received_propensity_error(n_outside: int, size: int, first: int) -> ValueError:
    """The error for propensities outside (0, 1], from counts (in-memory and chunked checks alike)."""
    return ValueError(
        f"{said('propensity')} must be in (0, 1] (P(A_i | x_i) of the received treatment); "
        f"{n_outside} of {size} entries are outside (first at position {first})."
    )


def arm_propensity(p_plus: ArrayLike, treatment: NDArray[np.float64]) -> NDArray[np.float64]:
    """P(A_i | x_i) of the received arm from per-subject P(A_i = +1 | x_i) (``p`` or ``1 - p``)."""
    p_plus = np.asarray(p_plus, dtype=np.float64)
    return np.where(treatment > 0, p_plus, 1.0 - p_plus)
