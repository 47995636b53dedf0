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

import warnings
from typing import Any, Dict, Optional, Sequence, Union

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator

from .exceptions import NotFittedError

__all__ = ["DPEstimator", "NotFittedError", "check_is_fitted", "check_prediction_input", "is_fitted",
           "feature_names_in", "n_features_message", "store_feature_names"]


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


def feature_names_in(X: Any) -> Optional[NDArray[np.object_]]:
    """scikit-learn's ``feature_names_in_`` of ``X``: the column names when all are strings, else None.

    Raises
    ------
    TypeError
        When some column names are strings and others are not (as scikit-learn).
    """
    columns = getattr(X, "columns", None)
    if columns is None:
        return None
    names = np.asarray(list(columns), dtype=object)
    is_str = [isinstance(c, str) for c in names]
    if names.size and all(is_str):
        return names
    if any(is_str):
        kinds = sorted({type(c).__name__ for c in names})
        raise TypeError(f"X has column names of types {kinds}: feature names are only supported when all are "
                        "strings; convert them all to strings (X.columns = X.columns.astype(str)), or all to a "
                        "non-string type.")
    return None


def store_feature_names(estimator: Any, names: Optional[Union[Sequence[str], NDArray[np.object_]]]) -> None:
    """Set ``feature_names_in_`` at the end of a fit, or remove one left by an earlier fit."""
    if names is not None:
        estimator.feature_names_in_ = names
    elif hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_


def _check_feature_names(estimator: Any, X: Any) -> None:
    """scikit-learn's rule at prediction: warn when only one of fit and ``X`` had names, refuse other names."""
    fitted = getattr(estimator, "feature_names_in_", None)
    given = feature_names_in(X)
    cls = type(estimator).__name__
    if fitted is None and given is None:
        return
    if given is None:
        warnings.warn(f"X does not have valid feature names, but {cls} was fitted with feature names", UserWarning,
                      stacklevel=4)
    elif fitted is None:
        warnings.warn(f"X has feature names, but {cls} was fitted without feature names", UserWarning, stacklevel=4)
    elif len(given) != len(fitted) or np.any(given != fitted):
        raise ValueError(_feature_names_mismatch_message(fitted, given))


def _feature_names_mismatch_message(fitted: NDArray[np.object_], given: NDArray[np.object_],
                                    max_shown: int = 5) -> str:
    """The refusal of column names other than the fit's, one name a line (the lines scikit-learn's checks match).

    Names are the columns' labels, not data values.
    """
    unseen = [str(v) for v in given if v not in set(fitted)]
    missing = [str(v) for v in fitted if v not in set(given)]
    parts = []
    for title, names in (("Feature names unseen at fit time", unseen),
                         ("Feature names seen at fit time, yet now missing", missing)):
        if names:
            more = ["..."] if len(names) > max_shown else []
            parts.append(f"{title}:\n" + "".join(f"- {v}\n" for v in names[:max_shown] + more))
    return ("The feature names should match those that were passed during fit.\n"
            + ("".join(parts) or "Feature names must be in the same order as they were in fit.\n"))


def n_features_message(owner: str, expected: int, got: int) -> str:
    """The refusal of an X with another number of columns than the fit's (in scikit-learn's words too)."""
    return (f"X must have {expected} columns, got {got} (X has {got} features, but {owner} is expecting {expected} "
            "features as input).")


def check_prediction_input(estimator: Any, X: Any, *, feature_names: bool = False) -> np.ndarray:
    """Check ``estimator`` is fitted and ``X`` is a finite array with ``n_features_in_`` columns.

    ``feature_names=True`` applies scikit-learn's rule on column names
    (estimators that store ``feature_names_in_`` by that rule).
    """
    from ._validation import check_array

    check_is_fitted(estimator)
    if feature_names:
        _check_feature_names(estimator, X)
    X = check_array("X", X)
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(n_features_message(type(estimator).__name__, estimator.n_features_in_, X.shape[1]))
    return X
