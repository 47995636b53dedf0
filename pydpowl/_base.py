"""A minimal scikit-learn-style estimator base (no scikit-learn dependency).

``__init__`` stores keyword arguments unchanged; :meth:`get_params` reads them
back by the constructor's signature, so ``clone``-like code works.
"""

from __future__ import annotations

import inspect
from typing import Any, Dict

import numpy as np

from .exceptions import NotFittedError

__all__ = ["EstimatorBase", "check_is_fitted", "check_prediction_input", "resolve_rng"]


class EstimatorBase:
    """Parameter handling shared by the pydpowl estimators."""

    @classmethod
    def _param_names(cls) -> list:
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values() if p.name != "self" and p.kind == p.KEYWORD_ONLY]

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """Constructor parameters as stored (``deep`` is accepted for compatibility)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> "EstimatorBase":
        """Set constructor parameters; unknown names raise ``ValueError``."""
        valid = set(self._param_names())
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}; valid: {sorted(valid)}.")
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = {
            p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()
            if p.name != "self"
        }
        shown = []
        for name, value in self.get_params().items():
            default = defaults.get(name, inspect.Parameter.empty)
            try:
                same = default is not inspect.Parameter.empty and bool(np.all(value == default))
            except Exception:
                same = False
            if not same:
                shown.append(f"{name}={_short_repr(value)}")
        return f"{type(self).__name__}({', '.join(shown)})"


def _short_repr(value: Any) -> str:
    if isinstance(value, np.random.Generator):
        return "Generator(...)"
    if isinstance(value, (list, tuple)) and len(repr(value)) > 60:
        return f"<{type(value).__name__} of length {len(value)}>"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


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


def resolve_rng(random_state: Any) -> Any:
    """Turn ``random_state`` into a generator, once, at the start of ``fit``.

    None draws fresh entropy from the operating system (use this for real
    releases); an int or a ``numpy.random.Generator`` makes runs reproducible
    (for research and tests, not for production releases). An R-compatible
    stream (:class:`pydpowl.RRandom`) is used as is.
    """
    if random_state is None or isinstance(random_state, (int, np.integer, np.random.Generator, np.random.SeedSequence)):
        if isinstance(random_state, (bool, np.bool_)):
            raise TypeError("random_state must be None, an int, a numpy Generator or an RRandom, got bool.")
        return np.random.default_rng(random_state)
    if callable(getattr(random_state, "rgamma", None)) and callable(getattr(random_state, "rnorm", None)):
        return random_state
    raise TypeError(
        "random_state must be None, an int, a numpy.random.Generator or a pydpowl.RRandom, "
        f"got {type(random_state).__name__}."
    )
