"""DPpack's ERM classes and tuning functions as functions of plain arrays (entry points for the R drop-ins).

Each function takes what DPpack's R method takes (numeric matrices and vectors,
scalars, DPpack's argument names in snake case, bounds vectors in DPpack's
layout) plus R's generator state ``r_state`` (``.Random.seed``, 626 integers),
and returns a dict of plain values: the release in DPpack's layout (``coeff``),
the public fields DPpack keeps (``prefilter``, ``kernel_param``, ...), the
advanced ``r_state`` to write back to ``.Random.seed``, and the warnings
raised (as text, for R to relay). Nothing private (exact minimisers, noise)
leaves these functions.

============================================  ==========================================
DPpack                                        here
============================================  ==========================================
``svmDP$new(...)$fit(...)``                   :func:`svmdp_fit`
``svmDP$predict(X, add.bias, raw.value)``     :func:`svmdp_predict`
``LogisticRegressionDP$...$fit(...)``         :func:`logistic_regression_dp_fit`
``LogisticRegressionDP$predict(...)``         :func:`logistic_regression_dp_predict`
``LinearRegressionDP$...$fit(...)``           :func:`linear_regression_dp_fit`
``LinearRegressionDP$predict(X, add.bias)``   :func:`linear_regression_dp_predict`
``tune_classification_model(...)``            :func:`tune_classification_model`
``tune_linear_regression_model(...)``         :func:`tune_linear_regression_model`
============================================  ==========================================

Labels are DPpack's 0/1. With ``r_state`` the random features and the noise are
drawn from R's stream at that state exactly as DPpack draws them; with
``reproduce_dppack=True`` the values are DPpack's too (and a
PrivacyLeakWarning is returned in ``warnings``), otherwise the release is
pydpowl's proven one (docs/dppack_family.md): objective perturbation then draws
``rgamma(1, d, .)`` and ``rnorm(d)`` more after the solve, so ``.Random.seed``
ends there. ``r_state=None`` draws from operating-system entropy and returns
``r_state=None``.
"""

from __future__ import annotations

import warnings
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from ._validation import check_array, check_binary_target
from .engine.preprocessing import RandomFourierFeatures
from .rrandom import RRandom

__all__ = ["svmdp_fit", "svmdp_predict", "logistic_regression_dp_fit", "logistic_regression_dp_predict",
           "linear_regression_dp_fit", "linear_regression_dp_predict", "tune_classification_model",
           "tune_linear_regression_model"]

#: R's kind code of Mersenne-Twister + Inversion + Rejection
_R_KIND = 10403
_CLASSES01 = np.array([0.0, 1.0])


def _vector(x: Any) -> np.ndarray:
    return np.atleast_1d(np.asarray(x, dtype=np.float64)).reshape(-1)


def _matrix(x: Any) -> np.ndarray:
    X = np.asarray(x, dtype=np.float64)
    return check_array("X", X.reshape(-1, 1) if X.ndim == 1 else X)


def _stream(r_state: Optional[Any]):
    if r_state is None:
        return np.random.default_rng(), None
    state = np.asarray(r_state, dtype=np.int64).reshape(-1).copy()
    kind = int(state[0])
    state[0] = _R_KIND
    return RRandom.from_r_state(state), kind


def _state_out(rng: Any, kind: Optional[int]) -> Optional[np.ndarray]:
    if kind is None:
        return None
    out = rng.get_state().copy()
    out[0] = kind  # the caller's sample.kind digit, unchanged
    return out


def _texts(caught: List[warnings.WarningMessage]) -> List[str]:
    return [f"{w.category.__name__}: {w.message}" for w in caught]


def _with_bias(X: np.ndarray, add_bias: bool) -> np.ndarray:
    return np.column_stack([np.ones(X.shape[0]), X]) if add_bias else X


def _kernel(kernel: str) -> str:
    k = str(kernel)
    if k not in ("linear", "Gaussian", "gaussian"):
        raise ValueError(f"kernel must be one of {{'linear', 'Gaussian'}}, got kernel={kernel!r}.")
    return "gaussian" if k.lower() == "gaussian" else "linear"


def _labels01(y: Any, n: int) -> np.ndarray:
    _, y_pm = check_binary_target("y", _vector(y), length=n, classes=_CLASSES01)
    return y_pm


def _svm(eps, gamma, perturbation_method, kernel, D, kernel_param, huber_h, lower, upper, add_bias,
         weights_upper_bound, reproduce_dppack, rng):
    from .estimators.svm import DPSVM

    k = _kernel(kernel)
    return DPSVM(epsilon=float(eps), gamma=float(gamma), perturbation=str(perturbation_method), kernel=k,
                 n_components=None if D is None else int(D),
                 kernel_param=None if kernel_param is None else float(kernel_param), huber_h=float(huber_h),
                 feature_bounds=(lower, upper) if k == "linear" else None, fit_intercept=bool(add_bias),
                 weights_upper_bound=None if weights_upper_bound is None else float(weights_upper_bound),
                 reproduce_dppack=bool(reproduce_dppack), random_state=rng)


def _svm_result(model) -> Dict[str, Any]:
    feats = model.random_features_
    return {
        "coeff": np.asarray(model.dppack_coeff_, dtype=np.float64),
        "kernel_param": None if feats is None else float(feats.kernel_param),
        "prefilter": None if feats is None else feats.prefilter,
        "D": None if feats is None else int(feats.n_components),
        "n_clipped_features": int(model.n_clipped_features_),
        "n_clipped_weights": int(model.n_clipped_weights_),
        "epsilon_objective": float(model.epsilon_objective_),
        "epsilon_smoothing": float(model.epsilon_smoothing_),
    }


def svmdp_fit(X: Any, y: Any, upper_bounds: Any, lower_bounds: Any, add_bias: bool = False, weights: Any = None,
              weights_upper_bound: Optional[float] = None, *, eps: float, gamma: float,
              perturbation_method: str = "objective", kernel: str = "linear", D: Optional[int] = None,
              kernel_param: Optional[float] = None, huber_h: float = 0.5, r_state: Optional[Any] = None,
              reproduce_dppack: bool = False) -> Dict[str, Any]:
    """``svmDP$new("l2", eps, gamma, perturbation.method, kernel, D, kernel.param, huber.h = huber_h)$fit(X, y,
    upper.bounds, lower.bounds, add.bias, weights, weights.upper.bound)``.

    ``upper_bounds``/``lower_bounds`` have one entry per column of X; DPpack ignores
    them for the Gaussian kernel, and so does this function. ``weights`` (output
    perturbation only) are clipped at ``weights_upper_bound`` as DPpack does
    (``n_clipped_weights`` in the result).

    Returns
    -------
    dict
        ``coeff`` (DPpack's ``coeff``), ``kernel_param``, ``prefilter`` (D x (d+1)) and ``D`` (None
        for the linear kernel), ``n_clipped_features``, ``n_clipped_weights``, ``epsilon_objective``,
        ``epsilon_smoothing``, ``r_state``, ``warnings``.
    """
    X = _matrix(X)
    y_pm = _labels01(y, X.shape[0])
    rng, kind = _stream(r_state)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = _svm(eps, gamma, perturbation_method, kernel, D, kernel_param, huber_h, _vector(lower_bounds),
                     _vector(upper_bounds), add_bias, weights_upper_bound, reproduce_dppack, rng)
        model._fit_checked(X, y_pm, None if weights is None else _vector(weights), _CLASSES01)
    out = _svm_result(model)
    out.update(r_state=_state_out(rng, kind), warnings=_texts(caught))
    return out


def svmdp_predict(X: Any, coeff: Any, add_bias: bool = False, raw_value: bool = False, *, kernel: str = "linear",
                  prefilter: Any = None) -> np.ndarray:
    """``svmDP$predict(X, add.bias, raw.value)`` from the fitted ``coeff`` (and ``prefilter`` for the Gaussian kernel).

    Returns the decision values (``raw_value``) or labels 0/1 (``sign``, with 0 for
    a decision of exactly 0, as DPpack). New features are not clipped.
    """
    Xb = _with_bias(_matrix(X), bool(add_bias))
    coeff = _vector(coeff)
    if _kernel(kernel) == "gaussian":
        if prefilter is None:
            raise ValueError("prefilter (the fitted random features) is required for kernel='Gaussian'.")
        Xb = RandomFourierFeatures.from_prefilter(np.atleast_2d(np.asarray(prefilter, dtype=np.float64)),
                                                  1.0).transform(Xb)
    if Xb.shape[1] != coeff.shape[0]:
        raise ValueError(f"X must give {coeff.shape[0]} columns to match coeff, got {Xb.shape[1]}.")
    values = Xb @ coeff
    return values if raw_value else (values > 0).astype(np.float64)


def logistic_regression_dp_fit(X: Any, y: Any, upper_bounds: Any, lower_bounds: Any, add_bias: bool = False, *,
                               eps: float, gamma: float, perturbation_method: str = "objective",
                               r_state: Optional[Any] = None, reproduce_dppack: bool = False) -> Dict[str, Any]:
    """``LogisticRegressionDP$new("l2", eps, gamma, perturbation.method)$fit(X, y, upper.bounds, lower.bounds,
    add.bias)``.

    Returns
    -------
    dict
        ``coeff``, ``n_clipped_features``, ``epsilon_objective``, ``epsilon_smoothing``, ``r_state``,
        ``warnings``.
    """
    from .estimators.logistic import DPLogisticRegression

    X = _matrix(X)
    y_pm = _labels01(y, X.shape[0])
    rng, kind = _stream(r_state)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = DPLogisticRegression(epsilon=float(eps), gamma=float(gamma),
                                     perturbation=str(perturbation_method),
                                     feature_bounds=(_vector(lower_bounds), _vector(upper_bounds)),
                                     fit_intercept=bool(add_bias), reproduce_dppack=bool(reproduce_dppack),
                                     random_state=rng)
        model._fit_checked(X, y_pm, _CLASSES01)
    return {"coeff": np.asarray(model.dppack_coeff_, dtype=np.float64),
            "n_clipped_features": int(model.n_clipped_features_),
            "epsilon_objective": float(model.epsilon_objective_),
            "epsilon_smoothing": float(model.epsilon_smoothing_),
            "r_state": _state_out(rng, kind), "warnings": _texts(caught)}


def logistic_regression_dp_predict(X: Any, coeff: Any, add_bias: bool = False,
                                   raw_value: bool = False) -> np.ndarray:
    """``LogisticRegressionDP$predict(X, add.bias, raw.value)``: probabilities, or 0/1 (``round``, 0.5 -> 0)."""
    Xb = _with_bias(_matrix(X), bool(add_bias))
    coeff = _vector(coeff)
    if Xb.shape[1] != coeff.shape[0]:
        raise ValueError(f"X must give {coeff.shape[0]} columns to match coeff, got {Xb.shape[1]}.")
    eta = Xb @ coeff
    p = 1.0 / (1.0 + np.exp(-eta))  # e1071::sigmoid
    return p if raw_value else (p > 0.5).astype(np.float64)  # R's round() sends 0.5 to 0


def _split_bounds(upper_bounds: Any, lower_bounds: Any, p: int):
    upper, lower = _vector(upper_bounds), _vector(lower_bounds)
    for name, v in (("upper_bounds", upper), ("lower_bounds", lower)):
        if v.shape[0] != p + 1:
            raise ValueError(f"{name} must have length ncol(X) + 1 = {p + 1} (the last entry bounds y), "
                             f"got {v.shape[0]}.")
    return (lower[:p], upper[:p]), (float(lower[p]), float(upper[p]))


def _linear(eps, delta, gamma, feature_bounds, target_bounds, add_bias, reproduce_dppack, rng):
    from .estimators.linear import DPLinearRegression

    return DPLinearRegression(epsilon=float(eps), delta=float(delta), gamma=float(gamma),
                              feature_bounds=feature_bounds, target_bounds=target_bounds,
                              fit_intercept=bool(add_bias), reproduce_dppack=bool(reproduce_dppack),
                              random_state=rng)


def linear_regression_dp_fit(X: Any, y: Any, upper_bounds: Any, lower_bounds: Any, add_bias: bool = False, *,
                             eps: float, delta: float, gamma: float, r_state: Optional[Any] = None,
                             reproduce_dppack: bool = False) -> Dict[str, Any]:
    """``LinearRegressionDP$new("l2", eps, delta, gamma)$fit(X, y, upper.bounds, lower.bounds, add.bias)``.

    The bounds vectors have length ``ncol(X) + 1``; the last entries bound y.

    Returns
    -------
    dict
        ``coeff``, ``n_clipped_features``, ``n_clipped_targets``, ``epsilon_objective``,
        ``epsilon_smoothing``, ``r_state``, ``warnings``.
    """
    X = _matrix(X)
    fb, tb = _split_bounds(upper_bounds, lower_bounds, X.shape[1])
    rng, kind = _stream(r_state)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = _linear(eps, delta, gamma, fb, tb, add_bias, reproduce_dppack, rng).fit(X, _vector(y))
    return {"coeff": np.asarray(model.dppack_coeff_, dtype=np.float64),
            "n_clipped_features": int(model.n_clipped_features_), "n_clipped_targets": int(model.n_clipped_targets_),
            "epsilon_objective": float(model.epsilon_objective_),
            "epsilon_smoothing": float(model.epsilon_smoothing_),
            "r_state": _state_out(rng, kind), "warnings": _texts(caught)}


def linear_regression_dp_predict(X: Any, coeff: Any, add_bias: bool = False) -> np.ndarray:
    """``LinearRegressionDP$predict(X, add.bias)``: ``X coeff`` (intercept column first with ``add_bias``)."""
    Xb = _with_bias(_matrix(X), bool(add_bias))
    coeff = _vector(coeff)
    if Xb.shape[1] != coeff.shape[0]:
        raise ValueError(f"X must give {coeff.shape[0]} columns to match coeff, got {Xb.shape[1]}.")
    return Xb @ coeff


def _spec(spec: Dict[str, Any], key: str, default: Any = None) -> Any:
    value = spec.get(key, default)
    return default if value is None else value


def tune_classification_model(models: Sequence[Dict[str, Any]], X: Any, y: Any, upper_bounds: Any,
                              lower_bounds: Any, add_bias: bool = False, weights: Any = None,
                              weights_upper_bound: Optional[float] = None, *, r_state: Optional[Any] = None,
                              reproduce_dppack: bool = False) -> Dict[str, Any]:
    """``tune_classification_model(DPmodels, X, y, upper.bounds, lower.bounds, add.bias, weights,
    weights.upper.bound)``.

    ``models`` describes each unfitted DPpack model as a dict: ``{"class": "svmDP", "eps", "gamma",
    "perturbation_method", "kernel", "D", "kernel_param", "huber_h"}`` or ``{"class":
    "LogisticRegressionDP", "eps", "gamma", "perturbation_method"}`` (missing keys take DPpack's
    defaults).

    Returns
    -------
    dict
        ``index`` (1-based, as R), ``models`` (one fit dict per candidate, as :func:`svmdp_fit` /
        :func:`logistic_regression_dp_fit` return without ``r_state``; DPpack fits every candidate
        object in place), ``r_state``, ``warnings``.
    """
    from .estimators.logistic import DPLogisticRegression
    from .privacy.tuning import tune_classification_model as tune

    X = _matrix(X)
    lower, upper = _vector(lower_bounds), _vector(upper_bounds)
    rng, kind = _stream(r_state)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cands = []
        for spec in models:
            cls = str(spec.get("class", ""))
            pm = _spec(spec, "perturbation_method", "objective")
            if cls == "svmDP":
                cands.append(_svm(spec["eps"], spec["gamma"], pm, _spec(spec, "kernel", "linear"), spec.get("D"),
                                  spec.get("kernel_param"), _spec(spec, "huber_h", 0.5), lower, upper, add_bias,
                                  weights_upper_bound, reproduce_dppack, None))
            elif cls == "LogisticRegressionDP":
                cands.append(DPLogisticRegression(epsilon=float(spec["eps"]), gamma=float(spec["gamma"]),
                                                  perturbation=pm, feature_bounds=(lower, upper),
                                                  fit_intercept=bool(add_bias),
                                                  reproduce_dppack=bool(reproduce_dppack)))
            else:
                raise ValueError(f"each model must have class 'svmDP' or 'LogisticRegressionDP', got {cls!r}.")
        res = tune(cands, X, _vector(y), sample_weight=None if weights is None else _vector(weights),
                   random_state=rng, classes=_CLASSES01)
    fits = []
    for m in res.models:
        if hasattr(m, "random_features_"):
            fits.append(_svm_result(m))
        else:
            fits.append({"coeff": np.asarray(m.dppack_coeff_, dtype=np.float64),
                         "n_clipped_features": int(m.n_clipped_features_)})
    return {"index": res.index + 1, "models": fits, "r_state": _state_out(rng, kind), "warnings": _texts(caught)}


def tune_linear_regression_model(models: Sequence[Dict[str, Any]], X: Any, y: Any, upper_bounds: Any,
                                 lower_bounds: Any, add_bias: bool = False, *, r_state: Optional[Any] = None,
                                 reproduce_dppack: bool = False) -> Dict[str, Any]:
    """``tune_linear_regression_model(DPmodels, X, y, upper.bounds, lower.bounds, add.bias)``.

    ``models``: dicts ``{"eps", "delta", "gamma"}`` of unfitted ``LinearRegressionDP`` objects.

    Returns
    -------
    dict
        ``index`` (1-based), ``models`` (``{"coeff", "n_clipped_features", "n_clipped_targets"}`` per
        candidate), ``r_state``, ``warnings``.
    """
    from .privacy.tuning import tune_linear_regression_model as tune

    X = _matrix(X)
    fb, tb = _split_bounds(upper_bounds, lower_bounds, X.shape[1])
    rng, kind = _stream(r_state)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cands = [_linear(spec["eps"], _spec(spec, "delta", 0.0), spec["gamma"], fb, tb, add_bias, reproduce_dppack,
                         None) for spec in models]
        res = tune(cands, X, _vector(y), random_state=rng, reproduce_dppack=bool(reproduce_dppack))
    fits = [{"coeff": np.asarray(m.dppack_coeff_, dtype=np.float64), "n_clipped_features": int(m.n_clipped_features_),
             "n_clipped_targets": int(m.n_clipped_targets_)} for m in res.models]
    return {"index": res.index + 1, "models": fits, "r_state": _state_out(rng, kind), "warnings": _texts(caught)}

