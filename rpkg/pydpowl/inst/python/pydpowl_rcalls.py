"""The functions the R package calls in its Python worker (``pydpowl_worker.py``).

Each takes R's arguments as keywords (R's ``weights.upper.bound`` arrives as
``weights_upper_bound``), checks them with :mod:`pydpowl._validation` under
the names the R user typed and with positions counted from 1, and returns a
dict that goes back to R as a named list (its keys spelled the R way). Every
check of a value lives in Python; R only turns its objects (data frames,
factors, logical columns) into numbers and raises the classed conditions this
module's exceptions and warnings become.

Randomness: R sends ``.Random.seed``; the noise is drawn by
:class:`pydpowl.RRandom` positioned there, with DPpack's calls, and the
advanced state goes back to R. The exact minimiser and the noise never leave
Python and are not kept.

Imports are local to each function so that a call loads only what it needs:
the fits of DPpack's family (``svmdp_fit``, ``logistic_regression_dp_fit``,
``linear_regression_dp_fit``, the tuning functions) numpy, the engine's
preprocessing, solver and mechanisms, :mod:`pydpowl.dppack` with the
estimators' scikit-learn-free cores, and the R-compatible stream; never
scikit-learn, scipy, pandas or statsmodels. numba
only from the worker's second fit with 5,000 rows or more (see
:func:`_backend`): loading numba and its cached kernels costs about 1 s in a
fresh process, more than one fit gains from them, while a session that fits
repeatedly gains that back within a few fits.
"""

from __future__ import annotations

import warnings
from typing import Any, Dict, Optional, Sequence

import numpy as np

from pydpowl import _validation as v
from pydpowl.engine.kernels import AUTO_MIN_ROWS
from pydpowl.exceptions import DataClippedWarning

__all__ = ["svmdp_settings", "svmdp_fit", "svmdp_predict", "svmdp_features", "logistic_regression_dp_settings",
           "logistic_regression_dp_fit", "linear_regression_dp_settings", "linear_regression_dp_fit",
           "tune_classification_model", "tune_linear_regression_model", "fit_owl", "propensity_logistic",
           "make_data", "analyze"]

#: positions in messages count from 1, as in R
R_INDEX = 1
_PER_ROW = "one per row of X"
_PER_SUBJECT = "one per subject"
#: from this many rows the engine's "auto" backend uses the fused (numba) kernels (the engine's rule)
_KERNEL_MIN_ROWS = AUTO_MIN_ROWS
#: fits of at least _KERNEL_MIN_ROWS rows this worker has run (the worker lives for one R session)
_large_fits = 0


def _backend(n_rows: int) -> str:
    """The engine backend for a fit: numpy paths for the worker's first large fit, ``"auto"`` after.

    ``"auto"`` uses the numba kernels when numba is installed; loading them
    (about 0.2 s, once per process) pays off only over several large fits, so a
    one-off fit, such as a script's, never loads them. Smaller fits do not use
    the kernels in any case.
    """
    global _large_fits
    if n_rows < _KERNEL_MIN_ROWS:
        return "numpy"
    _large_fits += 1
    return "numpy" if _large_fits == 1 else "auto"


class WeightsClippedWarning(DataClippedWarning):
    """Weights above ``weights.upper.bound`` were clipped to it, as DPpack does.

    Its R class is ``pydpowl_weights_clipped``.
    """


def _column_names(columns: Any) -> Optional[Sequence[str]]:
    """R's ``colnames()``: None, one name (a length-1 character vector arrives as a str) or several."""
    return [columns] if isinstance(columns, str) else columns


def _r_whole_number(name: str, value: Any, minimum: int) -> int:
    """R's numbers are doubles: a whole double counts as an integer."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return v.check_int(name, value, minimum=minimum)


# ---- DPpack's ERM family: svmDP, LogisticRegressionDP, LinearRegressionDP and the tuning functions ----------
#
# Thin wrappers of pydpowl.dppack (the checks there speak DPpack's R names and count positions from 1; the fits
# are the estimators' scikit-learn-free cores): here only the worker's concerns are added, the numba policy
# (:func:`_backend`), the clipped-weights warning, and R's .Random.seed in and out (``r_state``).

def svmdp_settings(*, regularizer: Any = "l2", eps: Any, gamma: Any, perturbation_method: Any = "objective",
                   kernel: Any = "linear", D: Any = None, kernel_param: Any = None,
                   huber_h: Any = 0.5) -> Dict[str, Any]:
    """``svmDP$new()``'s settings, checked (the object is created in R)."""
    from pydpowl import dppack

    return dppack.svmdp_settings(regularizer=regularizer, eps=eps, gamma=gamma, perturbation_method=perturbation_method,
                                 kernel=kernel, D=D, kernel_param=kernel_param, huber_h=huber_h)


def logistic_regression_dp_settings(*, regularizer: Any = "l2", eps: Any, gamma: Any,
                                    perturbation_method: Any = "objective") -> Dict[str, Any]:
    """``LogisticRegressionDP$new()``'s settings, checked."""
    from pydpowl import dppack

    return dppack.logistic_regression_dp_settings(regularizer=regularizer, eps=eps, gamma=gamma,
                                                  perturbation_method=perturbation_method)


def linear_regression_dp_settings(*, regularizer: Any = "l2", eps: Any, delta: Any, gamma: Any) -> Dict[str, Any]:
    """``LinearRegressionDP$new()``'s settings, checked."""
    from pydpowl import dppack

    return dppack.linear_regression_dp_settings(regularizer=regularizer, eps=eps, delta=delta, gamma=gamma)


def _warn_clipped_weights(n_clipped: int, n: int, W: Any) -> None:
    if n_clipped:
        warnings.warn(WeightsClippedWarning(
            f"{n_clipped} of {n} weights exceed weights.upper.bound = {float(W):.7g} and were clipped to it "
            "(as DPpack does)."))


def _rows(X: Any) -> int:
    shape = getattr(X, "shape", ())
    return int(shape[0]) if len(shape) else 1


def svmdp_fit(*, X: Any, y: Any, upper_bounds: Any, lower_bounds: Any, add_bias: Any = False, weights: Any = None,
              weights_upper_bound: Any = None, regularizer: Any = "l2", eps: Any, gamma: Any,
              perturbation_method: Any = "objective", kernel: Any = "linear", D: Any = None, kernel_param: Any = None,
              huber_h: Any = 0.5, r_state: Any = None, columns: Optional[Sequence[str]] = None,
              reproduce_dppack: Any = False) -> Dict[str, Any]:
    """``svmDP$fit()`` (:func:`pydpowl.dppack.svmdp_fit`); weights above the bound give a
    :class:`WeightsClippedWarning`.

    Output perturbation is the engine's one release
    (:func:`pydpowl.engine.mechanisms.output.release_output_perturbation`), the same as
    ``dpowl()``'s bit for bit (tests/test_rpkg_rcalls.py).
    """
    from pydpowl import dppack

    n = _rows(X)
    out = dppack.svmdp_fit(X, y, upper_bounds, lower_bounds, add_bias, weights, weights_upper_bound, eps=eps,
                           gamma=gamma, regularizer=regularizer, perturbation_method=perturbation_method, kernel=kernel,
                           D=D, kernel_param=kernel_param, huber_h=huber_h, r_state=r_state,
                           reproduce_dppack=reproduce_dppack, columns=_column_names(columns), backend=_backend(n))
    _warn_clipped_weights(out["n_clipped_weights"], n, weights_upper_bound)
    return out


def svmdp_predict(*, X: Any, coeff: Any, add_bias: Any = False, raw_value: Any = False, kernel: Any = "Gaussian",
                  prefilter: Any = None) -> Dict[str, Any]:
    """``svmDP$predict()`` for the Gaussian kernel (the random features are computed in one place, here)."""
    from pydpowl import dppack

    return {"values": dppack.svmdp_predict(X, coeff, add_bias, raw_value, kernel=kernel, prefilter=prefilter)}


def svmdp_features(*, X: Any, prefilter: Any) -> Dict[str, Any]:
    """``svmDP$XtoV()``: the random features of X."""
    from pydpowl import dppack

    if prefilter is None:
        raise ValueError("this svmDP model has no random features (prefilter); fit it with kernel = 'Gaussian' first.")
    return {"V": dppack.svmdp_features(X, prefilter)}


def logistic_regression_dp_fit(*, X: Any, y: Any, upper_bounds: Any, lower_bounds: Any, add_bias: Any = False,
                               regularizer: Any = "l2", eps: Any, gamma: Any, perturbation_method: Any = "objective",
                               r_state: Any = None, columns: Optional[Sequence[str]] = None,
                               reproduce_dppack: Any = False) -> Dict[str, Any]:
    """``LogisticRegressionDP$fit()`` (:func:`pydpowl.dppack.logistic_regression_dp_fit`)."""
    from pydpowl import dppack

    return dppack.logistic_regression_dp_fit(X, y, upper_bounds, lower_bounds, add_bias, eps=eps, gamma=gamma,
                                             regularizer=regularizer, perturbation_method=perturbation_method,
                                             r_state=r_state, reproduce_dppack=reproduce_dppack,
                                             columns=_column_names(columns), backend=_backend(_rows(X)))


def linear_regression_dp_fit(*, X: Any, y: Any, upper_bounds: Any, lower_bounds: Any, add_bias: Any = False,
                             regularizer: Any = "l2", eps: Any, delta: Any, gamma: Any, r_state: Any = None,
                             columns: Optional[Sequence[str]] = None, reproduce_dppack: Any = False) -> Dict[str, Any]:
    """``LinearRegressionDP$fit()`` (:func:`pydpowl.dppack.linear_regression_dp_fit`)."""
    from pydpowl import dppack

    return dppack.linear_regression_dp_fit(X, y, upper_bounds, lower_bounds, add_bias, eps=eps, delta=delta,
                                           gamma=gamma, regularizer=regularizer, r_state=r_state,
                                           reproduce_dppack=reproduce_dppack, columns=_column_names(columns))


def _models(models: Any) -> list:
    # an R list of one model arrives as a one-element list; a named list (one model's settings) as a dict
    return [models] if isinstance(models, dict) else list(models) if models is not None else []


def tune_classification_model(*, DPmodels: Any, X: Any, y: Any, upper_bounds: Any, lower_bounds: Any,
                              add_bias: Any = False, weights: Any = None, weights_upper_bound: Any = None,
                              r_state: Any = None, columns: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """``tune_classification_model()`` (:func:`pydpowl.dppack.tune_classification_model`)."""
    from pydpowl import dppack

    n = _rows(X)
    out = dppack.tune_classification_model(_models(DPmodels), X, y, upper_bounds, lower_bounds, add_bias, weights,
                                           weights_upper_bound, r_state=r_state, columns=_column_names(columns),
                                           backend=_backend(n))
    _warn_clipped_weights(sum(m.get("n_clipped_weights", 0) for m in out["models"]), n, weights_upper_bound)
    return out


def tune_linear_regression_model(*, DPmodels: Any, X: Any, y: Any, upper_bounds: Any, lower_bounds: Any,
                                 add_bias: Any = False, r_state: Any = None,
                                 columns: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """``tune_linear_regression_model()`` (:func:`pydpowl.dppack.tune_linear_regression_model`)."""
    from pydpowl import dppack

    return dppack.tune_linear_regression_model(_models(DPmodels), X, y, upper_bounds, lower_bounds, add_bias,
                                               r_state=r_state, columns=_column_names(columns))


# ---- dpowl ---------------------------------------------------------------------------------------

def propensity_logistic(*, benefit_bound: Any, logit_bound: Any, ridge: Any, hessian_lower_bound: Any,
                        hessian_bound_kind: Any = "hessian", assume_hessian_bound: Any = False) -> Dict[str, Any]:
    """The public constants of ``propensity_logistic()``, checked (the model is fitted with the rule)."""
    return {
        "benefit_bound": v.check_positive("benefit_bound", benefit_bound),
        "logit_bound": v.check_positive("logit_bound", logit_bound),
        "ridge": v.check_positive("ridge", ridge, allow_zero=True),
        "hessian_lower_bound": None if hessian_lower_bound is None
        else v.check_positive("hessian_lower_bound", hessian_lower_bound),
        "hessian_bound_kind": v.check_choice("hessian_bound_kind", hessian_bound_kind, ("hessian", "second_moment")),
        "assume_hessian_bound": v.check_bool("assume_hessian_bound", assume_hessian_bound),
    }


def _owl_propensity(propensity: Any, n: int, lower: np.ndarray, upper: np.ndarray) -> Any:
    if isinstance(propensity, dict):  # propensity_logistic() from R
        from pydpowl.estimators.propensity import LogisticPropensity

        keys = ("benefit_bound", "logit_bound", "ridge", "hessian_lower_bound", "hessian_bound_kind",
                "assume_hessian_bound")
        spec = propensity_logistic(**{k: propensity[k] for k in keys if k in propensity})
        return LogisticPropensity(feature_bounds=(lower, upper), fitted_on=str(propensity["fitted_on"]), **spec)
    if isinstance(propensity, float):
        return v.check_probability("propensity", propensity, high_open=True)
    p = v.check_vector("propensity", propensity, length=n, length_of=_PER_SUBJECT, index_base=R_INDEX)
    v.check_in_interval("propensity", p, 0.0, 1.0, why="P(A_i | x_i) of the treatment received",
                        index_base=R_INDEX)
    return p


def fit_owl(*, x: Any, treatment: Any, benefit: Any, propensity: Any, lower: Any, upper: Any, intercept: Any,
            epsilon: Any, gamma: Any, weights_upper_bound: Any, huber_h: Any, random_seed: Any,
            columns: Optional[Sequence[str]] = None, weight_sensitivity: Any = None,
            reproduce_dppack: Any = False, mechanism: Any = "auto", residual: Any = "auto",
            benefit_bounds: Any = None) -> Dict[str, Any]:
    """``dpowl()``: DP-OWL with :class:`pydpowl.DPOWL`; ``treatment`` in {-1, 1} (R has coded it).

    ``gamma`` and ``huber_h`` None (R's NULL) mean DPOWL's ``"auto"``;
    ``mechanism``, ``residual`` and ``benefit_bounds`` are DPOWL's (R's
    ``c(lower, upper)`` for the benefit bounds). The result names the
    mechanism used and the resolved gamma and h.

    ``propensity``: a probability of the arm coded +1, a vector of P(A_i | x_i),
    or a named list from ``propensity_logistic()`` (a logistic model fitted here
    on the same data). ``weight_sensitivity``: None, a number or ``"trivial"``
    (as ``DPOWL``: a propensity vector needs it stated). ``random_seed`` None
    draws the noise from OS entropy.
    """
    eps = v.check_epsilon(epsilon)
    gam = "auto" if gamma is None else v.check_positive("gamma", gamma)
    W = v.check_positive("weights_upper_bound", weights_upper_bound)
    h = "auto" if huber_h is None else v.check_positive("huber_h", huber_h)
    res = "auto" if residual is None or (isinstance(residual, str) and residual == "auto") else \
        v.check_bool("residual", residual)
    bb = None
    if benefit_bounds is not None:
        bb = tuple(v.check_vector("benefit_bounds", benefit_bounds, length=2))
    fit_intercept = v.check_bool("intercept", intercept)
    X = v.check_array("x", x, columns=_column_names(columns), index_base=R_INDEX)
    n, p = X.shape
    A = v.check_labels("treatment", treatment, length=n, length_of=_PER_SUBJECT, index_base=R_INDEX)
    B = v.check_vector("benefit", benefit, length=n, length_of=_PER_SUBJECT, index_base=R_INDEX)
    if bb is None:  # with benefit_bounds the benefits are clipped and shifted by DPOWL
        v.check_nonnegative("benefit", B, why="OWL weights are benefit / propensity", index_base=R_INDEX,
                            hint="Shift by a public lower bound first, or give benefit_bounds.")
    lo, up = v.check_bounds("bounds", (lower, upper), p, names=("bounds$lower", "bounds$upper"), index_base=R_INDEX)
    prop = _owl_propensity(propensity, n, lo, up)

    from pydpowl.dppack import r_state_out, r_stream
    from pydpowl.estimators.owl import DPOWL
    from pydpowl.estimators.propensity import LogisticPropensity

    rng, kind = r_stream(random_seed)
    if isinstance(prop, LogisticPropensity):
        prop = prop.fit(X, A)
    model = DPOWL(epsilon=eps, gamma=gam, weights_upper_bound=W, feature_bounds=(lo, up), huber_h=h,
                  mechanism="auto" if mechanism is None else mechanism, residual=res, benefit_bounds=bb,
                  fit_intercept=fit_intercept, weight_sensitivity=weight_sensitivity,
                  reproduce_dppack=v.check_bool("reproduce_dppack", reproduce_dppack),
                  random_state=rng).fit(X, A, B, prop)
    return {
        "intercept": float(model.intercept_), "coef": np.asarray(model.coef_, dtype=np.float64),
        "sensitivity": float(model.sensitivity_), "C": float(model.weight_sensitivity_),
        "release_grid": model.release_grid_, "gamma": float(model.gamma_), "huber_h": float(model.huber_h_),
        "mechanism": str(model.mechanism_), "residual": bool(model.residual_),
        "mechanism_description": str(model.mechanism_description_),
        "n_clipped_weights": int(model.n_clipped_weights_), "n_clipped_features": int(model.n_clipped_features_),
        "n_clipped_logits": int(model.n_clipped_logits_), "n_clipped_benefits": int(model.n_clipped_benefits_),
        "random_seed": r_state_out(rng, kind),
    }


# ---- dpowl_analysis --------------------------------------------------------------------------------

def analyze(*, x: Any, treatment: Any, benefit: Any, lower: Any, upper: Any, benefit_bounds: Any,
            weights_upper_bound: Any, total_epsilon: Any, propensity: Any = None, propensity_model: Any = None,
            gamma: Any = None, gammas: Any = None, level: Any = 0.95, budget_split: Any = None, seed: Any = None,
            treatment_labels: Any = None, columns: Optional[Sequence[str]] = None,
            out_dir: Any = None) -> Dict[str, Any]:
    """``dpowl_analysis()``: :func:`pydpowl.analysis.analyze_arrays` with R's argument names.

    ``treatment`` in {-1, 1} (R has coded it); ``benefit_bounds`` the public
    ``c(lower, upper)`` of the benefit; ``seed`` one integer drawn from R's
    stream (so ``set.seed`` reproduces the analysis) or None (OS entropy).
    Returns the analysis' plain result (model, coefficients, value, ledger, ...).
    """
    from pydpowl.analysis import analyze_arrays

    X = v.check_array("x", x, columns=_column_names(columns), index_base=R_INDEX)
    n, p = X.shape
    A = v.check_labels("treatment", treatment, length=n, length_of=_PER_SUBJECT, index_base=R_INDEX)
    B = v.check_vector("benefit", benefit, length=n, length_of=_PER_SUBJECT, index_base=R_INDEX)
    lo, up = v.check_bounds("bounds", (lower, upper), p, names=("bounds$lower", "bounds$upper"), index_base=R_INDEX)
    bb = v.check_vector("benefit_bounds", benefit_bounds, length=2)
    if not bb[0] < bb[1]:
        raise ValueError(f"benefit_bounds must be c(lower, upper) with lower < upper, got c({bb[0]!r}, {bb[1]!r}).")
    labels = ("+1", "-1") if treatment_labels is None else tuple(str(t) for t in np.atleast_1d(treatment_labels))
    grid = None if gammas is None else [float(g) for g in np.atleast_1d(gammas)]
    return analyze_arrays(
        X, A, B, lower=lo, upper=up, benefit_lower=float(bb[0]), benefit_upper=float(bb[1]),
        weights_upper_bound=v.check_positive("weights_upper_bound", weights_upper_bound),
        total_epsilon=v.check_positive("total_epsilon", total_epsilon),
        propensity=None if propensity is None else v.check_probability("propensity", propensity, high_open=True),
        propensity_model=propensity_model, feature_names=_column_names(columns) or [f"x{j + 1}" for j in range(p)],
        treatment_labels=labels, gamma=None if gamma is None else v.check_positive("gamma", gamma), gammas=grid,
        level=v.check_probability("level", level, high_open=True), split=budget_split,
        seed=None if seed is None else int(seed), out_dir=out_dir)


# ---- data for examples and tests ---------------------------------------------------------------------

def make_data(*, name: Any, n: Any, seed: Any) -> Dict[str, Any]:
    """A simulated cohort from :mod:`pydpowl.datasets` as plain arrays (for R examples and tests)."""
    n = _r_whole_number("n", n, minimum=2)
    seed = _r_whole_number("seed", seed, minimum=0)
    from pydpowl import datasets

    if name == "synthetic":
        data = datasets.make_synthetic_owl(n, random_state=seed)
    elif name == "cyp_guides_style":
        data = datasets.make_cyp_guides_style(n, random_state=seed)
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
