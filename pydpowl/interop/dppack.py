"""DPpack's ERM classes and tuning functions as functions of plain arrays (entry points for the R drop-ins).

Each function takes what DPpack's R method takes (numeric matrices and vectors,
scalars, DPpack's arguments as keywords in snake case, bounds vectors in
DPpack's layout) and, for replay only, R's generator state ``r_state``
(``.Random.seed``, 626 integers), checks every value under DPpack's R argument
name (``eps``, ``perturbation.method``, ``upper.bounds``, ...; positions
counted from 1, as in R) and returns a dict of plain values: the release in
DPpack's layout (``coeff``), the public fields DPpack keeps (``prefilter``,
``kernel_param``, ...) and the advanced ``r_state`` to write back to
``.Random.seed``. Warnings (:class:`~pydpowl.exceptions.PrivacyLeakWarning`
with ``reproduce.dppack`` or an ``r_state``) are raised as Python warnings; the
R package's worker relays them as classed R warnings. Nothing computed from
the data other than the release leaves these functions: no exact minimiser, no
noise, no count of clipped values.

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

The fits are those of the estimators (:class:`~pydpowl.DPSVM`, ...): both
call the scikit-learn-free cores of :mod:`pydpowl.estimators._family_core`,
and this module imports numpy and the engine only (the R worker never loads
scikit-learn, scipy, pandas or statsmodels for it).

Labels are DPpack's 0/1. Randomness: ``r_state=None`` (the default, and the
R front end's unless replay is asked for) draws every random number from
operating-system entropy and returns ``r_state=None``. With ``r_state`` (the R
front end's ``rng = "R"``) every random draw DPpack makes (the random
features, the objective-perturbation linear term, the output noise, the
tuning's uniform) is drawn from R's stream at that state exactly as DPpack
draws it, the returned ``r_state`` is where DPpack leaves ``.Random.seed``,
and :class:`~pydpowl.exceptions.ReplayStreamWarning` says that such noise is
not private (R's state follows from a 32-bit seed). The release itself is
pydpowl's proven one (docs/dppack_family.md): objective perturbation adds a
small solver-smoothing noise drawn from a generator derived from the stream's
state without advancing it (:func:`pydpowl.engine.mechanisms.derived_generator`);
with ``reproduce_dppack=True`` the values are DPpack's arithmetic too
(validation only; PrivacyLeakWarning).
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import _validation as v
from ..engine.preprocessing import RandomFourierFeatures
from ..estimators._family_core import (ClassifierFit, LinearFit, classifier_decision, fit_classifier,
                                       fit_linear_regression, linear_decision)

__all__ = ["svmdp_fit", "svmdp_predict", "logistic_regression_dp_fit", "logistic_regression_dp_predict",
           "linear_regression_dp_fit", "linear_regression_dp_predict", "tune_classification_model",
           "tune_linear_regression_model", "svmdp_features", "svmdp_settings", "logistic_regression_dp_settings",
           "linear_regression_dp_settings", "R_INDEX"]

#: R's kind code of Mersenne-Twister + Inversion + Rejection
_R_KIND = 10403
#: positions in messages count from 1, as in R
R_INDEX = 1
_PER_ROW = "one per row of X"
#: DPpack's argument names for the weights rule of :func:`pydpowl.estimators._family_core.weights_for_fit`
_R_NAMES = {"weights": "weights", "weights_upper_bound": "weights.upper.bound", "perturbation": "perturbation.method",
            "reproduce_dppack": "reproduce.dppack"}
_PERTURBATIONS = ("objective", "output")
_KERNELS = ("linear", "Gaussian")


# ---- arguments -----------------------------------------------------------------------------------------

def _vector(x: Any) -> np.ndarray:
    return np.atleast_1d(np.asarray(x, dtype=np.float64)).reshape(-1)


def _matrix(x: Any, columns: Optional[Sequence[str]] = None) -> np.ndarray:
    X = x if isinstance(x, np.ndarray) else np.asarray(x, dtype=np.float64)
    if X.ndim == 1:
        X = X.reshape(-1, 1)
    # R's matrices arrive column-major, the layout the fits read: kept, not copied to row-major
    return v.check_array("X", X, columns=[columns] if isinstance(columns, str) else columns, index_base=R_INDEX,
                         order="K")


def _whole(name: str, value: Any, minimum: int) -> int:
    """R's numbers are doubles: a whole double counts as an integer."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    return v.check_int(name, value, minimum=minimum)


def _regularizer(regularizer: Any) -> None:
    if regularizer != "l2":
        raise ValueError(f"regularizer must be 'l2' (pydpowl's one regularizer; for a custom regularizer function "
                         f"use DPpack), got regularizer={regularizer!r}.")


def _labels01(y: Any, n: int) -> np.ndarray:
    y01 = v.check_labels("y", y, length=n, allowed=(0, 1), length_of=_PER_ROW, index_base=R_INDEX,
                         hint="DPpack codes labels 0 and 1; for labels in {-1, 1} use (y + 1) / 2.")
    return 2.0 * y01 - 1.0


def _feature_bounds(upper_bounds: Any, lower_bounds: Any, p: int) -> Tuple[np.ndarray, np.ndarray]:
    return v.check_bounds("bounds", (lower_bounds, upper_bounds), p, names=("lower.bounds", "upper.bounds"),
                          index_base=R_INDEX)


def warn_replay_stream() -> None:
    """The :class:`~pydpowl.exceptions.ReplayStreamWarning` of a release drawn from R's stream (``rng = "R"``)."""
    import warnings

    from ..exceptions import ReplayStreamWarning

    warnings.warn(ReplayStreamWarning(
        "rng = \"R\": this release draws its noise from R's Mersenne-Twister stream at .Random.seed, to replay "
        "DPpack's draws. That stream's whole state follows from one 32-bit seed (set.seed(), or R's time-and-pid "
        "seed), so whoever enumerates the 2^32 seeds can regenerate the noise and remove it: the release is NOT "
        "differentially private. Use it for validation and replay only; leave rng and options(pydpowl.rng) unset "
        "for noise from operating-system entropy."), stacklevel=3)


def r_stream(r_state: Optional[Any]) -> Tuple[Any, Optional[int]]:
    """The stream at R's ``.Random.seed`` and the caller's kind code; OS entropy and None for ``r_state=None``.

    ``r_state=None`` (the R front end's default) gives a numpy Generator seeded
    with 128 bits of operating-system entropy. An R state replays R's stream
    (``rng = "R"``, for validation against DPpack) and emits
    :class:`~pydpowl.exceptions.ReplayStreamWarning`: such noise is not
    private. The draws made here do not depend on the ``sample.kind`` digit,
    which :func:`r_state_out` puts back.
    """
    if r_state is None:
        return np.random.default_rng(), None
    warn_replay_stream()
    state = np.asarray(r_state, dtype=np.int64).reshape(-1).copy()
    if state.shape[0] != 626:
        raise ValueError(f"r_state must be R's .Random.seed (626 integers), got {state.shape[0]} values.")
    kind = int(state[0])
    state[0] = _R_KIND  # the sample.kind digit does not affect the draws made here
    from ..rrandom import RRandom

    return RRandom.from_r_state(state), kind


def r_state_out(rng: Any, kind: Optional[int]) -> Optional[np.ndarray]:
    """R's ``.Random.seed`` after the draws (with the caller's kind code), or None without an R stream."""
    if kind is None:
        return None
    out = np.asarray(rng.get_state()).copy()
    out[0] = kind  # the caller's sample.kind digit, unchanged
    return out


def _with_bias(X: np.ndarray, add_bias: bool) -> np.ndarray:
    return np.column_stack([np.ones(X.shape[0]), X]) if add_bias else X


def _check_columns(X: np.ndarray, coeff: np.ndarray) -> None:
    if X.shape[1] != coeff.shape[0]:
        raise ValueError(f"X must give {coeff.shape[0]} columns to match coeff, got {X.shape[1]}.")


# ---- settings --------------------------------------------------------------------------------------------

def svmdp_settings(*, regularizer: Any = "l2", eps: Any, gamma: Any, perturbation_method: Any = "objective",
                   kernel: Any = "linear", D: Any = None, kernel_param: Any = None,
                   huber_h: Any = 0.5) -> Dict[str, Any]:
    """``svmDP$new()``'s settings, checked under DPpack's names.

    ``D`` is required for ``kernel = "Gaussian"`` (a whole number >= 1) and, like ``kernel.param``,
    ignored for the linear kernel (as DPpack).
    """
    _regularizer(regularizer)
    kernel = v.check_choice("kernel", kernel, _KERNELS)
    out: Dict[str, Any] = {
        "eps": v.check_epsilon(eps, "eps"), "gamma": v.check_positive("gamma", gamma),
        "perturbation.method": v.check_choice("perturbation.method", perturbation_method, _PERTURBATIONS),
        "kernel": kernel, "D": None, "kernel.param": None, "huber.h": v.check_positive("huber.h", huber_h)}
    if kernel == "Gaussian":
        if D is None:
            raise ValueError("D (the number of random Fourier features) must be given for kernel = 'Gaussian' "
                             "(as DPpack: \"D must be specified for nonlinear kernel\").")
        out["D"] = _whole("D", D, 1)
        out["kernel.param"] = None if kernel_param is None else v.check_positive("kernel.param", kernel_param)
    return out


def logistic_regression_dp_settings(*, regularizer: Any = "l2", eps: Any, gamma: Any,
                                    perturbation_method: Any = "objective") -> Dict[str, Any]:
    """``LogisticRegressionDP$new()``'s settings, checked under DPpack's names."""
    _regularizer(regularizer)
    return {"eps": v.check_epsilon(eps, "eps"), "gamma": v.check_positive("gamma", gamma),
            "perturbation.method": v.check_choice("perturbation.method", perturbation_method, _PERTURBATIONS)}


def linear_regression_dp_settings(*, regularizer: Any = "l2", eps: Any, delta: Any, gamma: Any) -> Dict[str, Any]:
    """``LinearRegressionDP$new()``'s settings, checked under DPpack's names (delta in [0, 1))."""
    from ..engine.mechanisms import kst_calibration

    _regularizer(regularizer)
    eps = v.check_epsilon(eps, "eps")
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.integer, np.floating)) \
            or not 0.0 <= float(delta) < 1.0:
        raise ValueError(f"delta must be a number in [0, 1), got delta={delta!r}.")
    kst_calibration(epsilon=eps, delta=float(delta), p=1)  # refuses eps = Inf with delta > 0 (DPpack fails there)
    return {"eps": eps, "delta": float(delta), "gamma": v.check_positive("gamma", gamma)}


# ---- svmDP -----------------------------------------------------------------------------------------------

def _svm_fit(X: np.ndarray, y_pm: np.ndarray, weights: Any, s: Dict[str, Any], bounds: Any, add_bias: bool,
             weights_upper_bound: Optional[float], reproduce_dppack: bool, backend: str, rng: Any) -> ClassifierFit:
    return fit_classifier(X, y_pm, weights, model="svm", epsilon=s["eps"], gamma=s["gamma"],
                          perturbation=s["perturbation.method"], feature_bounds=bounds, fit_intercept=add_bias,
                          kernel="gaussian" if s["kernel"] == "Gaussian" else "linear", n_components=s["D"],
                          kernel_param=s["kernel.param"], huber_h=s["huber.h"],
                          weights_upper_bound=weights_upper_bound, reproduce_dppack=reproduce_dppack,
                          backend=backend, rng=rng, names=_R_NAMES, index_base=R_INDEX, warn_as="svmDP")


def _svm_result(fit: ClassifierFit) -> Dict[str, Any]:
    feats = fit.features
    return {
        "coeff": np.asarray(fit.coeff, dtype=np.float64),
        "kernel_param": None if feats is None else float(feats.kernel_param),
        "prefilter": None if feats is None else feats.prefilter,
        "D": None if feats is None else int(feats.n_components),
        "epsilon_objective": float(fit.release.epsilon_objective),
        "epsilon_smoothing": float(fit.release.epsilon_smoothing),
        "release_grid": fit.release.grid,
    }


def _svm_bounds(s: Dict[str, Any], upper_bounds: Any, lower_bounds: Any, p: int) -> Any:
    # DPpack ignores the bounds with the Gaussian kernel (its features are bounded by construction)
    return None if s["kernel"] == "Gaussian" else _feature_bounds(upper_bounds, lower_bounds, p)


def _weights_bound(weights: Any, weights_upper_bound: Any) -> Optional[float]:
    if weights is None or weights_upper_bound is None:
        return None  # without weights DPpack uses W = 1 whatever is given
    return v.check_positive("weights.upper.bound", weights_upper_bound)


def svmdp_fit(X: Any, y: Any, upper_bounds: Any, lower_bounds: Any, add_bias: Any = False, weights: Any = None,
              weights_upper_bound: Any = None, *, eps: Any, gamma: Any, regularizer: Any = "l2",
              perturbation_method: Any = "objective", kernel: Any = "linear", D: Any = None,
              kernel_param: Any = None, huber_h: Any = 0.5, r_state: Optional[Any] = None,
              reproduce_dppack: Any = False, columns: Optional[Sequence[str]] = None,
              backend: str = "auto") -> Dict[str, Any]:
    """``svmDP$new(regularizer, eps, gamma, perturbation.method, kernel, D, kernel.param, huber.h = huber_h)$fit(X,
    y, upper.bounds, lower.bounds, add.bias, weights, weights.upper.bound)``.

    ``upper_bounds``/``lower_bounds`` have one entry per column of X; DPpack ignores
    them for the Gaussian kernel, and so does this function. ``weights`` (output
    perturbation only, as DPpack) are clipped at ``weights_upper_bound`` as DPpack
    does, silently (how many were clipped is not returned: it is computed from the private data). ``columns``
    names X's columns in messages.

    Returns
    -------
    dict
        ``coeff`` (DPpack's ``coeff``), ``kernel_param``, ``prefilter`` (D x (d+1)) and ``D`` (None
        for the linear kernel), ``epsilon_objective``,
        ``epsilon_smoothing``, ``release_grid``, ``r_state``.
    """
    s = svmdp_settings(regularizer=regularizer, eps=eps, gamma=gamma, perturbation_method=perturbation_method,
                       kernel=kernel, D=D, kernel_param=kernel_param, huber_h=huber_h)
    X = _matrix(X, columns)
    n, p = X.shape
    y_pm = _labels01(y, n)
    bounds = _svm_bounds(s, upper_bounds, lower_bounds, p)
    add_bias = v.check_bool("add.bias", add_bias)
    W = _weights_bound(weights, weights_upper_bound)
    reproduce = v.check_bool("reproduce.dppack", reproduce_dppack)
    rng, kind = r_stream(r_state)
    fit = _svm_fit(X, y_pm, weights, s, bounds, add_bias, W, reproduce, backend, rng)
    out = _svm_result(fit)
    out["r_state"] = r_state_out(rng, kind)
    return out


def svmdp_predict(X: Any, coeff: Any, add_bias: Any = False, raw_value: Any = False, *, kernel: str = "linear",
                  prefilter: Any = None) -> np.ndarray:
    """``svmDP$predict(X, add.bias, raw.value)`` from the fitted ``coeff`` (and ``prefilter`` for the Gaussian kernel).

    Returns the decision values (``raw_value``) or labels 0/1 (``sign``, with 0 for
    a decision of exactly 0, as DPpack). New features are not clipped.
    """
    X = _matrix(X)
    coeff = _vector(coeff)
    features = None
    if v.check_choice("kernel", kernel, _KERNELS) == "Gaussian":
        if prefilter is None:
            raise ValueError("prefilter (the fitted random features) is required for kernel = 'Gaussian'.")
        features = RandomFourierFeatures.from_prefilter(np.atleast_2d(np.asarray(prefilter, dtype=np.float64)), 1.0)
        width = X.shape[1] + int(bool(add_bias))
        if width != features.n_inputs:
            raise ValueError(f"X must have {features.n_inputs - int(bool(add_bias))} columns to match the fitted "
                             f"random features, got {X.shape[1]}.")
    else:
        _check_columns(_with_bias(X[:1], bool(add_bias)), coeff)
    values = classifier_decision(X, coeff, fit_intercept=bool(add_bias), features=features)
    return values if v.check_bool("raw.value", raw_value) else (values > 0).astype(np.float64)


def svmdp_features(X: Any, prefilter: Any) -> np.ndarray:
    """``svmDP$XtoV(X)``: the random features ``V`` (n x D) of rows X (intercept column included by the caller)."""
    features = RandomFourierFeatures.from_prefilter(np.atleast_2d(np.asarray(prefilter, dtype=np.float64)), 1.0)
    return features.transform(_matrix(X))


# ---- LogisticRegressionDP ----------------------------------------------------------------------------------

def _logistic_fit(X: np.ndarray, y_pm: np.ndarray, s: Dict[str, Any], bounds: Any, add_bias: bool,
                  reproduce_dppack: bool, backend: str, rng: Any) -> ClassifierFit:
    return fit_classifier(X, y_pm, None, model="logistic", epsilon=s["eps"], gamma=s["gamma"],
                          perturbation=s["perturbation.method"], feature_bounds=bounds, fit_intercept=add_bias,
                          reproduce_dppack=reproduce_dppack, backend=backend, rng=rng, names=_R_NAMES,
                          index_base=R_INDEX, warn_as="LogisticRegressionDP")


def _logistic_result(fit: ClassifierFit) -> Dict[str, Any]:
    return {"coeff": np.asarray(fit.coeff, dtype=np.float64), "epsilon_objective": float(fit.release.epsilon_objective),
            "epsilon_smoothing": float(fit.release.epsilon_smoothing), "release_grid": fit.release.grid}


def logistic_regression_dp_fit(X: Any, y: Any, upper_bounds: Any, lower_bounds: Any, add_bias: Any = False, *,
                               eps: Any, gamma: Any, regularizer: Any = "l2", perturbation_method: Any = "objective",
                               r_state: Optional[Any] = None, reproduce_dppack: Any = False,
                               columns: Optional[Sequence[str]] = None, backend: str = "auto") -> Dict[str, Any]:
    """``LogisticRegressionDP$new(regularizer, eps, gamma, perturbation.method)$fit(X, y, upper.bounds,
    lower.bounds, add.bias)``.

    Returns
    -------
    dict
        ``coeff``, ``epsilon_objective``, ``epsilon_smoothing``, ``release_grid``,
        ``r_state``.
    """
    s = logistic_regression_dp_settings(regularizer=regularizer, eps=eps, gamma=gamma,
                                        perturbation_method=perturbation_method)
    X = _matrix(X, columns)
    n, p = X.shape
    y_pm = _labels01(y, n)
    bounds = _feature_bounds(upper_bounds, lower_bounds, p)
    add_bias = v.check_bool("add.bias", add_bias)
    reproduce = v.check_bool("reproduce.dppack", reproduce_dppack)
    rng, kind = r_stream(r_state)
    out = _logistic_result(_logistic_fit(X, y_pm, s, bounds, add_bias, reproduce, backend, rng))
    out["r_state"] = r_state_out(rng, kind)
    return out


def _sigmoid_labels(eta: np.ndarray) -> np.ndarray:
    p = 1.0 / (1.0 + np.exp(-eta))  # e1071::sigmoid
    return (p > 0.5).astype(np.float64)  # R's round() sends 0.5 to 0


def logistic_regression_dp_predict(X: Any, coeff: Any, add_bias: Any = False, raw_value: Any = False) -> np.ndarray:
    """``LogisticRegressionDP$predict(X, add.bias, raw.value)``: probabilities, or 0/1 (``round``, 0.5 -> 0)."""
    X = _matrix(X)
    coeff = _vector(coeff)
    _check_columns(_with_bias(X[:1], bool(add_bias)), coeff)
    eta = classifier_decision(X, coeff, fit_intercept=bool(add_bias))
    return 1.0 / (1.0 + np.exp(-eta)) if v.check_bool("raw.value", raw_value) else _sigmoid_labels(eta)


# ---- LinearRegressionDP ----------------------------------------------------------------------------------

def _split_bounds(upper_bounds: Any, lower_bounds: Any, p: int):
    upper = v.check_vector("upper.bounds", upper_bounds, index_base=R_INDEX)
    lower = v.check_vector("lower.bounds", lower_bounds, index_base=R_INDEX)
    for name, b in (("upper.bounds", upper), ("lower.bounds", lower)):
        if b.shape[0] != p + 1:
            raise ValueError(f"{name} must have length ncol(X) + 1 = {p + 1} (the last entry bounds y), "
                             f"got length {b.shape[0]}.")
    feature = _feature_bounds(upper[:p], lower[:p], p)
    lo_y, hi_y = float(lower[p]), float(upper[p])
    if not lo_y < hi_y:
        raise ValueError(f"the bounds on y (the last entries of lower.bounds and upper.bounds) must satisfy lower < "
                         f"upper, got lower = {lo_y!r} and upper = {hi_y!r}.")
    return feature, (lo_y, hi_y)


def _linear_fit(X: np.ndarray, y: np.ndarray, s: Dict[str, Any], fb: Any, tb: Tuple[float, float], add_bias: bool,
                reproduce_dppack: bool, rng: Any) -> LinearFit:
    return fit_linear_regression(X, y, epsilon=s["eps"], delta=s["delta"], gamma=s["gamma"], feature_bounds=fb,
                                 target_bounds=tb, fit_intercept=add_bias, reproduce_dppack=reproduce_dppack, rng=rng,
                                 warn_as="LinearRegressionDP", target_bounds_name="the bounds on y",
                                 reproduce_name=_R_NAMES["reproduce_dppack"])


def _linear_result(fit: LinearFit) -> Dict[str, Any]:
    p = fit.coeff.shape[0]
    return {"coeff": np.asarray(fit.coeff, dtype=np.float64), "zeta": 2.0 * p ** 1.5, "lambda": int(p),
            "epsilon_objective": float(fit.release.epsilon_objective),
            "epsilon_smoothing": float(fit.release.epsilon_smoothing), "release_grid": fit.release.grid}


def linear_regression_dp_fit(X: Any, y: Any, upper_bounds: Any, lower_bounds: Any, add_bias: Any = False, *,
                             eps: Any, delta: Any, gamma: Any, regularizer: Any = "l2", r_state: Optional[Any] = None,
                             reproduce_dppack: Any = False, columns: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """``LinearRegressionDP$new(regularizer, eps, delta, gamma)$fit(X, y, upper.bounds, lower.bounds, add.bias)``.

    The bounds vectors have length ``ncol(X) + 1``; the last entries bound y.

    Returns
    -------
    dict
        ``coeff``, ``zeta``, ``lambda`` (DPpack's fields),
        ``epsilon_objective``, ``epsilon_smoothing``, ``release_grid``, ``r_state``.
    """
    s = linear_regression_dp_settings(regularizer=regularizer, eps=eps, delta=delta, gamma=gamma)
    X = _matrix(X, columns)
    n, p = X.shape
    fb, tb = _split_bounds(upper_bounds, lower_bounds, p)
    y = v.check_vector("y", y, length=n, length_of=_PER_ROW, index_base=R_INDEX)
    add_bias = v.check_bool("add.bias", add_bias)
    reproduce = v.check_bool("reproduce.dppack", reproduce_dppack)
    rng, kind = r_stream(r_state)
    out = _linear_result(_linear_fit(X, y, s, fb, tb, add_bias, reproduce, rng))
    out["r_state"] = r_state_out(rng, kind)
    return out


def linear_regression_dp_predict(X: Any, coeff: Any, add_bias: Any = False) -> np.ndarray:
    """``LinearRegressionDP$predict(X, add.bias)``: ``X coeff`` (intercept column first with ``add_bias``)."""
    X = _matrix(X)
    coeff = _vector(coeff)
    _check_columns(_with_bias(X[:1], bool(add_bias)), coeff)
    return linear_decision(X, coeff, fit_intercept=bool(add_bias))


# ---- tuning ----------------------------------------------------------------------------------------------

def _spec(spec: Dict[str, Any]) -> Dict[str, Any]:
    """A candidate's settings with DPpack's dotted names in snake case (R sends ``perturbation.method``)."""
    if not isinstance(spec, dict):
        raise TypeError(f"each model must be a named list of its settings, got {type(spec).__name__}.")
    return {str(k).replace(".", "_"): value for k, value in spec.items()}


def _classifier_candidates(models: Sequence[Dict[str, Any]]) -> List[Tuple[str, Dict[str, Any], bool]]:
    if isinstance(models, dict) or not isinstance(models, (list, tuple)) or len(models) == 0:
        raise TypeError("DPmodels must be a non-empty list of svmDP or LogisticRegressionDP objects.")
    out = []
    for i, raw in enumerate(models, start=R_INDEX):
        spec = _spec(raw)
        cls = str(spec.pop("class", ""))
        reproduce = v.check_bool("reproduce.dppack", spec.pop("reproduce_dppack", False))
        if cls == "svmDP":
            out.append(("svm", svmdp_settings(**spec), reproduce))
        elif cls == "LogisticRegressionDP":
            out.append(("logistic", logistic_regression_dp_settings(**spec), reproduce))
        else:
            raise ValueError(f"DPmodels[[{i}]] must be an svmDP or LogisticRegressionDP object, got class {cls!r}.")
    return out


def tune_classification_model(models: Sequence[Dict[str, Any]], X: Any, y: Any, upper_bounds: Any,
                              lower_bounds: Any, add_bias: Any = False, weights: Any = None,
                              weights_upper_bound: Any = None, *, r_state: Optional[Any] = None,
                              columns: Optional[Sequence[str]] = None, backend: str = "auto") -> Dict[str, Any]:
    """``tune_classification_model(DPmodels, X, y, upper.bounds, lower.bounds, add.bias, weights,
    weights.upper.bound)``.

    ``models`` describes each unfitted DPpack model as a dict of its constructor's arguments plus
    ``class`` (``"svmDP"`` or ``"LogisticRegressionDP"``) and ``reproduce.dppack``. Candidate i is
    fitted on rows ``i, i + m + 1, ...`` (weights split with them), scored on the rows ``m + 1,
    2(m + 1), ...`` by the number misclassified, and one is chosen by the exponential mechanism with
    the first candidate's eps (:func:`pydpowl.privacy.tuning.select_on_validation`; DPpack's draws and
    order on an R stream).

    Returns
    -------
    dict
        ``index`` (1-based, as R), ``models`` (one fit dict per candidate, as :func:`svmdp_fit` /
        :func:`logistic_regression_dp_fit` return without ``r_state``; DPpack fits every candidate
        object in place), ``r_state``.
    """
    from ..privacy.tuning import select_on_validation

    cands = _classifier_candidates(models)
    X = _matrix(X, columns)
    n, p = X.shape
    y_pm = _labels01(y, n)
    add_bias = v.check_bool("add.bias", add_bias)
    if weights is not None:
        if any(kind != "svm" for kind, _, _ in cands):
            raise ValueError("weights are supported for svmDP candidates only (DPpack's LogisticRegressionDP takes "
                             "none).")
        weights = v.check_vector("weights", weights, length=n, length_of=_PER_ROW, index_base=R_INDEX)
    W = _weights_bound(weights, weights_upper_bound)
    bounds = [None if kind == "svm" and s["kernel"] == "Gaussian" else _feature_bounds(upper_bounds, lower_bounds, p)
              for kind, s, _ in cands]
    first_eps = cands[0][1]["eps"]
    if first_eps == math.inf:
        raise ValueError("the first candidate's eps is also the selection's budget and must be finite (DPpack's "
                         "exponential mechanism fails for eps = Inf), got eps = Inf.")
    rng, kind_digit = r_stream(r_state)

    def fit(i: int, rows: np.ndarray) -> Tuple[str, ClassifierFit]:
        kind, s, reproduce = cands[i]
        if kind == "svm":
            return kind, _svm_fit(X[rows], y_pm[rows], None if weights is None else weights[rows], s, bounds[i],
                                  add_bias, W, reproduce, backend, rng)
        return kind, _logistic_fit(X[rows], y_pm[rows], s, bounds[i], add_bias, reproduce, backend, rng)

    def misclassified(fitted: Tuple[str, ClassifierFit], val: np.ndarray) -> float:
        kind, f = fitted
        eta = classifier_decision(X[val], f.coeff, fit_intercept=add_bias, features=f.features)
        pred = _sigmoid_labels(eta) if kind == "logistic" else (eta > 0).astype(np.float64)  # DPpack's predict
        return float(np.count_nonzero(pred != (y_pm[val] > 0)))

    k, fitted, _ = select_on_validation(n, len(cands), fit, misclassified, epsilon=first_eps, sensitivity=1.0,
                                        rng=rng)
    results = [_svm_result(f) if kind == "svm" else _logistic_result(f) for kind, f in fitted]
    return {"index": k + R_INDEX, "models": results, "r_state": r_state_out(rng, kind_digit)}


def tune_linear_regression_model(models: Sequence[Dict[str, Any]], X: Any, y: Any, upper_bounds: Any,
                                 lower_bounds: Any, add_bias: Any = False, *, r_state: Optional[Any] = None,
                                 columns: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """``tune_linear_regression_model(DPmodels, X, y, upper.bounds, lower.bounds, add.bias)``.

    ``models``: dicts of ``LinearRegressionDP$new()``'s arguments (``eps``, ``delta``, ``gamma``,
    ``regularizer``, ``reproduce.dppack``). The score is the sum of squared validation errors with
    sensitivity ``(ub_y - lb_y)^2``; targets and predictions are clipped to the y bounds first
    (pydpowl's fix of DPpack's sensitivity, docs/dppack_family.md) unless every candidate has
    ``reproduce.dppack`` (DPpack's unclipped scores; PrivacyLeakWarning).

    Returns
    -------
    dict
        ``index`` (1-based), ``models`` (as :func:`linear_regression_dp_fit` returns, without
        ``r_state``), ``r_state``.
    """
    import warnings

    from ..exceptions import PrivacyLeakWarning
    from ..privacy.tuning import select_on_validation, squared_error_score

    if isinstance(models, dict) or not isinstance(models, (list, tuple)) or len(models) == 0:
        raise TypeError("DPmodels must be a non-empty list of LinearRegressionDP objects.")
    cands = []
    for i, raw in enumerate(models, start=R_INDEX):
        spec = _spec(raw)
        cls = str(spec.pop("class", "LinearRegressionDP"))
        if cls != "LinearRegressionDP":
            raise ValueError(f"DPmodels[[{i}]] must be a LinearRegressionDP object, got class {cls!r}.")
        reproduce = v.check_bool("reproduce.dppack", spec.pop("reproduce_dppack", False))
        spec.setdefault("delta", 0.0)
        cands.append((linear_regression_dp_settings(**spec), reproduce))
    X = _matrix(X, columns)
    n, p = X.shape
    fb, tb = _split_bounds(upper_bounds, lower_bounds, p)
    y = v.check_vector("y", y, length=n, length_of=_PER_ROW, index_base=R_INDEX)
    add_bias = v.check_bool("add.bias", add_bias)
    first_eps = cands[0][0]["eps"]
    if first_eps == math.inf:
        raise ValueError("the first candidate's eps is also the selection's budget and must be finite (DPpack's "
                         "exponential mechanism fails for eps = Inf), got eps = Inf.")
    dppack_scores = all(reproduce for _, reproduce in cands)
    if dppack_scores:
        warnings.warn("tune_linear_regression_model with reproduce.dppack = TRUE scores unclipped targets and "
                      "predictions as DPpack does: the sensitivity (ub_y - lb_y)^2 does not cover rows outside the "
                      "bounds on y.", PrivacyLeakWarning, stacklevel=2)
    rng, kind_digit = r_stream(r_state)

    def fit(i: int, rows: np.ndarray) -> LinearFit:
        s, reproduce = cands[i]
        return _linear_fit(X[rows], y[rows], s, fb, tb, add_bias, reproduce, rng)

    def sse(f: LinearFit, val: np.ndarray) -> float:
        pred = linear_decision(X[val], f.coeff, fit_intercept=add_bias)
        return squared_error_score(pred, y[val], tb, clip=not dppack_scores)

    sens = (tb[1] - tb[0]) * (tb[1] - tb[0])
    k, fitted, _ = select_on_validation(n, len(cands), fit, sse, epsilon=first_eps, sensitivity=sens, rng=rng)
    return {"index": k + R_INDEX, "models": [_linear_result(f) for f in fitted],
            "r_state": r_state_out(rng, kind_digit)}
