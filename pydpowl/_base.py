"""The one estimator base of pydpowl: scikit-learn's ``BaseEstimator`` plus privacy rules.

scikit-learn provides the parameter protocol (``get_params``/``set_params``,
``clone``, the parameter ``repr``). :class:`DPEstimator` adds what a
private estimator needs on top:

* the source of randomness is resolved once per fit
  (:func:`pydpowl._validation.resolve_rng`);
* a fitted estimator is pickled without it: an int seed regenerates the
  noise, and a Generator, whose state has only advanced past the noise draws,
  can be rewound to them (PCG64 ``advance`` accepts negative steps); either
  way ``coef_ - noise`` would be the exact non-private solution. The pickle
  stores ``random_state=None``; the unpickled estimator predicts identically
  and a refit uses fresh entropy.
"""

from __future__ import annotations

from typing import Any, Dict

import numpy as np
from sklearn.base import BaseEstimator

from .exceptions import NotFittedError

__all__ = ["DPEstimator", "check_is_fitted", "check_prediction_input", "is_fitted"]


def is_fitted(estimator: Any) -> bool:
    """scikit-learn's convention: fitted once it has a public attribute ending in ``_``."""
    return any(k.endswith("_") and not k.startswith("_") for k in vars(estimator))


class DPEstimator(BaseEstimator):
    """Base of every pydpowl estimator (scikit-learn's ``BaseEstimator``).

    Subclasses store their keyword-only ``__init__`` arguments unchanged and
    check them in ``fit``. A parameter named ``random_state`` is dropped from
    the pickle once the estimator is fitted (see the module docstring).
    """

    def __getstate__(self) -> Dict[str, Any]:
        state = super().__getstate__()
        if "random_state" in state and is_fitted(self):
            state["random_state"] = None
        return state


def check_is_fitted(estimator: Any, attribute: str = "coef_") -> None:
    """Raise :class:`NotFittedError` unless ``estimator`` has ``attribute``."""
    if not hasattr(estimator, attribute):
        raise NotFittedError(
            f"this {type(estimator).__name__} instance is not fitted yet; call 'fit' first."
        )


def check_prediction_input(estimator: Any, X: Any) -> np.ndarray:
    """Check ``estimator`` is fitted and ``X`` is a finite array with ``n_features_in_`` columns."""
    from ._validation import check_array

    check_is_fitted(estimator)
    X = check_array("X", X)
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(f"X must have {estimator.n_features_in_} columns, got {X.shape[1]}.")
    return X
