"""Glue between the R package 'pydpowl' and the Python engine (called through reticulate).

One call per fit: R sends numeric arrays, public settings and R's generator
state (``.Random.seed``); Python validates, solves, adds the noise with an
R-compatible stream positioned at that state, and returns only the release,
public diagnostics and the advanced state. The exact minimiser and the noise
never leave Python and are not kept. The release is the estimators' own,
floating-point safe by default (rounded in the noise space by
:func:`pydpowl.engine.mechanisms.round_release`); ``reproduce_dppack=True`` is
the validation switch that reproduces DPpack's arithmetic bit for bit.
"""

from __future__ import annotations

import warnings
from typing import Any, Dict, List, Optional

import numpy as np

import pydpowl
from pydpowl import DPOWL, DPWeightedERM, FeatureScaler, LogisticPropensity
from pydpowl.rrandom import RRandom

#: R's kind code for Mersenne-Twister + Inversion (+ Rejection); only the last 3 digits matter here
_R_KIND_MT_INVERSION = 10403


def _vector(x: Any) -> np.ndarray:
    """reticulate passes length-1 R vectors as scalars: make everything 1-D float64."""
    return np.atleast_1d(np.asarray(x, dtype=np.float64)).reshape(-1)


def _matrix(x: Any) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(x, dtype=np.float64))


def _stream(r_state: Optional[Any]):
    """An RRandom at R's ``.Random.seed`` (kind code forced to MT/Inversion), or OS entropy for None."""
    if r_state is None:
        return np.random.default_rng()
    state = np.asarray(r_state, dtype=np.int64).reshape(-1).copy()
    state[0] = _R_KIND_MT_INVERSION
    return RRandom.from_r_state(state)


def _state_out(rng: Any) -> Optional[np.ndarray]:
    return rng.get_state() if isinstance(rng, RRandom) else None


def _warning_texts(caught: List[warnings.WarningMessage]) -> List[str]:
    return [f"{w.category.__name__}: {w.message}" for w in caught]


def engine_version() -> str:
    """Version of the Python package ``pydpowl``."""
    return str(pydpowl.__version__)


def fit_svm(X: Any, y01: Any, lower: Any, upper: Any, add_bias: bool, weights: Any,
            weights_upper_bound: float, eps: float, gamma: float, huber_h: float,
            r_state: Optional[Any], reproduce_dppack: bool = False) -> Dict[str, Any]:
    """DPpack ``svmDP`` (linear kernel, output perturbation) with the Python engine.

    ``y01`` in {0, 1}; ``weights`` already clipped to ``[0, weights_upper_bound]``
    by the caller. Returns the released coefficients in DPpack's order and scale
    (floating-point safe unless ``reproduce_dppack``).
    """
    X = _matrix(X)
    scaler = FeatureScaler.from_bounds((_vector(lower), _vector(upper)), X.shape[1], bool(add_bias))
    Z, _ = scaler.transform(X)
    y = 2.0 * _vector(y01) - 1.0
    rng = _stream(r_state)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = DPWeightedERM(epsilon=float(eps), gamma=float(gamma),
                              weights_upper_bound=float(weights_upper_bound), loss="huber",
                              huber_h=float(huber_h), reproduce_dppack=bool(reproduce_dppack),
                              random_state=rng).fit(Z, y, _vector(weights))
    return {
        "coeff": scaler.coef_to_original(model.coef_),
        "sensitivity": float(model.sensitivity_),
        "release_grid": model.release_grid_,
        "n_iter": int(model.n_iter_),
        "r_state": _state_out(rng),
        "warnings": _warning_texts(caught),
    }


def _propensity(spec: Any, lower: np.ndarray, upper: np.ndarray) -> Any:
    if isinstance(spec, dict):  # propensity_logistic() from R
        return LogisticPropensity(
            feature_bounds=(lower, upper), benefit_bound=float(spec["benefit_bound"]),
            logit_bound=float(spec["logit_bound"]), ridge=float(spec["ridge"]),
            hessian_lower_bound=None if spec.get("hessian_lower_bound") is None
            else float(spec["hessian_lower_bound"]),
            hessian_bound_kind=str(spec.get("hessian_bound_kind", "hessian")),
            assume_hessian_bound=bool(spec.get("assume_hessian_bound", False)),
            fitted_on=str(spec["fitted_on"]),
        )
    arr = _vector(spec)
    return float(arr[0]) if arr.shape[0] == 1 else arr


def fit_owl(X: Any, treatment: Any, benefit: Any, propensity: Any, lower: Any, upper: Any,
            fit_intercept: bool, eps: float, gamma: float, weights_upper_bound: float,
            huber_h: float, r_state: Optional[Any], weight_sensitivity: Any = None,
            reproduce_dppack: bool = False) -> Dict[str, Any]:
    """DP-OWL with :class:`pydpowl.DPOWL`; ``treatment`` in {-1, 1}.

    ``propensity``: a probability of arm +1, a vector of P(A_i | x_i), or a dict
    describing a :class:`LogisticPropensity` fitted here on the same data.
    ``weight_sensitivity``: None, a number or ``"trivial"`` (as ``DPOWL``).
    """
    X = _matrix(X)
    lower, upper = _vector(lower), _vector(upper)
    A = _vector(treatment)
    prop = _propensity(propensity, lower, upper)
    rng = _stream(r_state)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if isinstance(prop, LogisticPropensity):
            prop = prop.fit(X, A)
        stated = weight_sensitivity if weight_sensitivity is None or isinstance(weight_sensitivity, str) \
            else float(weight_sensitivity)
        model = DPOWL(epsilon=float(eps), gamma=float(gamma), weights_upper_bound=float(weights_upper_bound),
                      feature_bounds=(lower, upper), huber_h=float(huber_h), fit_intercept=bool(fit_intercept),
                      weight_sensitivity=stated, reproduce_dppack=bool(reproduce_dppack),
                      random_state=rng).fit(X, A, _vector(benefit), prop)
    return {
        "intercept": float(model.intercept_),
        "coef": np.asarray(model.coef_, dtype=np.float64),
        "sensitivity": float(model.sensitivity_),
        "C": float(model.weight_sensitivity_),
        "release_grid": model.release_grid_,
        "n_iter": int(model.n_iter_),
        "n_clipped_weights": int(model.n_clipped_weights_),
        "n_clipped_features": int(model.n_clipped_features_),
        "n_clipped_logits": int(model.n_clipped_logits_),
        "n_clipped_benefits": int(model.n_clipped_benefits_),
        "r_state": _state_out(rng),
        "warnings": _warning_texts(caught),
    }


def make_data(name: str, n: int, seed: int) -> Dict[str, Any]:
    """A simulated cohort from :mod:`pydpowl.datasets` as plain arrays (for R examples and tests)."""
    from pydpowl import datasets

    if name == "synthetic":
        data = datasets.make_synthetic_owl(int(n), random_state=int(seed))
    elif name == "cyp_guides_style":
        data = datasets.make_cyp_guides_style(int(n), random_state=int(seed))
    else:
        raise ValueError(f"name must be 'synthetic' or 'cyp_guides_style', got name={name!r}.")
    return {
        "X": data.X.to_numpy(dtype=np.float64), "names": [str(c) for c in data.X.columns],
        "treatment": np.asarray(data.treatment, dtype=np.float64),
        "benefit": np.asarray(data.benefit, dtype=np.float64),
        "propensity": np.asarray(data.propensity, dtype=np.float64),
        "lower": np.asarray(data.feature_bounds[0], dtype=np.float64),
        "upper": np.asarray(data.feature_bounds[1], dtype=np.float64),
        "weights_upper_bound": float(data.weights_upper_bound),
        "optimal": None if data.optimal is None else np.asarray(data.optimal, dtype=np.float64),
        "description": data.description,
    }


__all__ = ["engine_version", "fit_svm", "fit_owl", "make_data"]
