"""The functions the R package calls in its Python worker (``pydpowl_worker.py``).

Each takes R's arguments as keywords (R's ``weights.upper.bound`` arrives as
``weights_upper_bound``), checks them with :mod:`pydpowl._validation` under
the names the R user typed and with positions counted from 1, and returns a
dict that goes back to R as a named list (its keys spelled the R way). Every
check of a value lives in Python; R only turns its objects (data frames,
factors, logical columns) into numbers and raises the classed conditions this
module's exceptions and warnings become.

Randomness: by default R sends no generator state and every release draws
from operating-system entropy (``numpy.random.default_rng()``). Only when the
R user asks for replay (``rng = "R"``) does R send ``.Random.seed``; the
noise is then drawn by :class:`pydpowl.RRandom` positioned there, with
DPpack's calls, the advanced state goes back to R, and
:class:`~pydpowl.exceptions.ReplayStreamWarning` says that such a release is
not private. The exact minimiser and the noise never leave Python and are not
kept; nor does any count computed from the data (clipped weights, features,
...), except the non-private diagnostics that ``dpowl()`` keeps for an
explicit ``summary(fit, diagnostics = TRUE)``.

Messages in R's words: every function's errors and warnings pass through
:func:`r_words` (and no :class:`~pydpowl.exceptions.DataClippedWarning`
passes at all), which writes Python's spellings the way R prints them
(``weights.upper.bound = NULL``, ``eps = 0``, ``Inf``, ``TRUE``,
``character``, ``c("linear", "Gaussian")``), so that an R user reads R.

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

import functools
import math
import re
import warnings
from typing import Any, Callable, Dict, Optional, Sequence

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


# ---- R's words ---------------------------------------------------------------------------------------------

#: Python type names as R calls the objects that arrive as them (R's numbers arrive as float, whole or not)
_R_TYPES = {"str": "character", "float": "numeric", "int": "numeric", "bool": "logical", "NoneType": "NULL",
            "dict": "a named list", "list": "a list", "tuple": "a list"}
#: a Python literal as repr() writes it: a quoted string, a tuple or list of scalars, or a scalar
_LITERAL = (r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\((?:[^()]*)\)|\[(?:[^\[\]]*)\]"
            r"|-?inf|nan|None|True|False|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
#: ``name=value`` as Python's messages write an argument and its value (R's names may hold . and $)
_ASSIGNMENT = re.compile(r"(?<![\w.$\]])([A-Za-z_.][\w.$]*(?:\[\[\d+\]\])?)=(?!=)(" + _LITERAL + r")(?![\w.]*\w)")
#: a Python list of strings (a list of numbers would read as an interval, [0, 1], and is left alone)
_LIST = re.compile(r"(?<![\w\[])\['[^']*'(?:, '[^']*')*\]")
_WORDS = [(re.compile(r"(?<![\w.])-inf\b"), "-Inf"), (re.compile(r"(?<![\w.])inf\b"), "Inf"),
          (re.compile(r"(?<![\w.])nan\b"), "NaN"), (re.compile(r"\bNone\b"), "NULL"),
          (re.compile(r"\bTrue\b"), "TRUE"), (re.compile(r"\bFalse\b"), "FALSE")]
_GOT_TYPE = re.compile(r"\bgot (" + "|".join(_R_TYPES) + r")\b")
_ARRAY = [(re.compile(r"\ban array of length (\d+)"), r"a vector of length \1"),
          (re.compile(r"\ban array of shape \((\d+), (\d+)\)"), r"a \1 x \2 matrix")]


def r_number(x: float) -> str:
    """``x`` as R prints it (``format(x, digits = 15)``): ``0``, ``1.5``, ``1e-07``, ``1e+05``, ``Inf``, ``NaN``.

    The shortest of at most 15 significant digits that gives the same double at
    that precision, fixed notation unless scientific is shorter (R's rule with
    ``scipen = 0``).
    """
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Inf" if x > 0 else "-Inf"
    if x == 0:
        return "0"
    target = float(f"{x:.15g}")
    digits = next(d for d in range(1, 16) if float(f"{x:.{d}g}") == target)
    sci = f"{x:.{digits - 1}e}"
    exponent = int(sci.split("e")[1])
    fixed = f"{x:.{max(0, digits - 1 - exponent)}f}"
    return fixed if len(fixed) <= len(sci) else sci


def _r_literal(text: str) -> str:
    """A Python literal (see :data:`_LITERAL`) in R's spelling."""
    if text[0] in "'\"":
        return '"' + text[1:-1] + '"'
    if text[0] in "([":
        inner = [part.strip() for part in text[1:-1].split(",") if part.strip()]
        return "c(" + ", ".join(_r_literal(part) for part in inner) + ")"
    words = {"None": "NULL", "True": "TRUE", "False": "FALSE"}
    if text in words:
        return words[text]
    return r_number(float(text))


def r_words(message: str) -> str:
    """A message of the engine in R's words: ``eps=0.0`` -> ``eps = 0``, ``None`` -> ``NULL``, ``inf`` -> ``Inf``,
    ``True`` -> ``TRUE``, ``got str`` -> ``got character``, ``['a', 'b']`` -> ``c("a", "b")``.

    Only Python's spellings of values change; names, counts and the rest of the text are kept.
    """
    out = _ASSIGNMENT.sub(lambda m: f"{m.group(1)} = {_r_literal(m.group(2))}", message)
    out = _LIST.sub(lambda m: _r_literal(m.group(0)), out)
    out = _GOT_TYPE.sub(lambda m: "got " + _R_TYPES[m.group(1)], out)
    for pattern, repl in _ARRAY + _WORDS:
        out = pattern.sub(repl, out)
    return out


def _for_r(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` as R calls it: its errors and warnings in R's words (:func:`r_words`; the classes stay), and no
    :class:`~pydpowl.exceptions.DataClippedWarning` relayed (a count of clipped values is computed from the
    private data: one record can switch it on, so it never reaches R, whatever raises it)."""
    @functools.wraps(fn)
    def call(**kwargs: Any) -> Any:
        error: Optional[BaseException] = None
        result = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = fn(**kwargs)
            except Exception as exc:  # re-raised below, in R's words
                error = exc
        for w in caught:  # relayed in the caller's filters (the worker's), worded for R
            if issubclass(w.category, DataClippedWarning):
                continue
            warnings.warn_explicit(w.category(r_words(str(w.message))), w.category, w.filename, w.lineno)
        if error is not None:
            if len(error.args) == 1 and isinstance(error.args[0], str):
                error.args = (r_words(error.args[0]),)
            raise error
        return result

    return call


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
# (:func:`_backend`) and, for replay only, R's .Random.seed in and out (``r_state``).

@_for_r
def svmdp_settings(*, regularizer: Any = "l2", eps: Any, gamma: Any, perturbation_method: Any = "objective",
                   kernel: Any = "linear", D: Any = None, kernel_param: Any = None,
                   huber_h: Any = 0.5) -> Dict[str, Any]:
    """``svmDP$new()``'s settings, checked (the object is created in R)."""
    from pydpowl import dppack

    return dppack.svmdp_settings(regularizer=regularizer, eps=eps, gamma=gamma, perturbation_method=perturbation_method,
                                 kernel=kernel, D=D, kernel_param=kernel_param, huber_h=huber_h)


@_for_r
def logistic_regression_dp_settings(*, regularizer: Any = "l2", eps: Any, gamma: Any,
                                    perturbation_method: Any = "objective") -> Dict[str, Any]:
    """``LogisticRegressionDP$new()``'s settings, checked."""
    from pydpowl import dppack

    return dppack.logistic_regression_dp_settings(regularizer=regularizer, eps=eps, gamma=gamma,
                                                  perturbation_method=perturbation_method)


@_for_r
def linear_regression_dp_settings(*, regularizer: Any = "l2", eps: Any, delta: Any, gamma: Any) -> Dict[str, Any]:
    """``LinearRegressionDP$new()``'s settings, checked."""
    from pydpowl import dppack

    return dppack.linear_regression_dp_settings(regularizer=regularizer, eps=eps, delta=delta, gamma=gamma)


def _rows(X: Any) -> int:
    shape = getattr(X, "shape", ())
    return int(shape[0]) if len(shape) else 1


@_for_r
def svmdp_fit(*, X: Any, y: Any, upper_bounds: Any, lower_bounds: Any, add_bias: Any = False, weights: Any = None,
              weights_upper_bound: Any = None, regularizer: Any = "l2", eps: Any, gamma: Any,
              perturbation_method: Any = "objective", kernel: Any = "linear", D: Any = None, kernel_param: Any = None,
              huber_h: Any = 0.5, r_state: Any = None, columns: Optional[Sequence[str]] = None,
              reproduce_dppack: Any = False) -> Dict[str, Any]:
    """``svmDP$fit()`` (:func:`pydpowl.dppack.svmdp_fit`).

    Weights above ``weights.upper.bound`` are clipped to it silently, as
    DPpack clips them: how many were clipped is computed from the private data
    and is not released (docs/r_frontend.md). Output perturbation is the
    engine's one release
    (:func:`pydpowl.engine.mechanisms.output.release_output_perturbation`), the same as
    ``dpowl()``'s bit for bit (tests/test_rpkg_rcalls.py).
    """
    from pydpowl import dppack

    return dppack.svmdp_fit(X, y, upper_bounds, lower_bounds, add_bias, weights, weights_upper_bound, eps=eps,
                            gamma=gamma, regularizer=regularizer, perturbation_method=perturbation_method,
                            kernel=kernel, D=D, kernel_param=kernel_param, huber_h=huber_h, r_state=r_state,
                            reproduce_dppack=reproduce_dppack, columns=_column_names(columns),
                            backend=_backend(_rows(X)))


@_for_r
def svmdp_predict(*, X: Any, coeff: Any, add_bias: Any = False, raw_value: Any = False, kernel: Any = "Gaussian",
                  prefilter: Any = None) -> Dict[str, Any]:
    """``svmDP$predict()`` for the Gaussian kernel (the random features are computed in one place, here)."""
    from pydpowl import dppack

    return {"values": dppack.svmdp_predict(X, coeff, add_bias, raw_value, kernel=kernel, prefilter=prefilter)}


@_for_r
def svmdp_features(*, X: Any, prefilter: Any) -> Dict[str, Any]:
    """``svmDP$XtoV()``: the random features of X."""
    from pydpowl import dppack

    if prefilter is None:
        raise ValueError("this svmDP model has no random features (prefilter); fit it with kernel = 'Gaussian' first.")
    return {"V": dppack.svmdp_features(X, prefilter)}


@_for_r
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


@_for_r
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


@_for_r
def tune_classification_model(*, DPmodels: Any, X: Any, y: Any, upper_bounds: Any, lower_bounds: Any,
                              add_bias: Any = False, weights: Any = None, weights_upper_bound: Any = None,
                              r_state: Any = None, columns: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """``tune_classification_model()`` (:func:`pydpowl.dppack.tune_classification_model`)."""
    from pydpowl import dppack

    return dppack.tune_classification_model(_models(DPmodels), X, y, upper_bounds, lower_bounds, add_bias, weights,
                                            weights_upper_bound, r_state=r_state, columns=_column_names(columns),
                                            backend=_backend(_rows(X)))


@_for_r
def tune_linear_regression_model(*, DPmodels: Any, X: Any, y: Any, upper_bounds: Any, lower_bounds: Any,
                                 add_bias: Any = False, r_state: Any = None,
                                 columns: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """``tune_linear_regression_model()`` (:func:`pydpowl.dppack.tune_linear_regression_model`)."""
    from pydpowl import dppack

    return dppack.tune_linear_regression_model(_models(DPmodels), X, y, upper_bounds, lower_bounds, add_bias,
                                               r_state=r_state, columns=_column_names(columns))


# ---- dpowl ---------------------------------------------------------------------------------------

@_for_r
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


@_for_r
def fit_owl(*, x: Any, treatment: Any, benefit: Any, propensity: Any, lower: Any, upper: Any, intercept: Any,
            epsilon: Any, gamma: Any, weights_upper_bound: Any, huber_h: Any, random_seed: Any = None,
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
    noise = owl_noise_scale(model, n)
    if noise["dominated"]:
        warnings.warn(NoiseDominatedWarning(noise_dominated_message(noise, model, n, _column_names(columns), prop)))
    return {
        "intercept": float(model.intercept_), "coef": np.asarray(model.coef_, dtype=np.float64),
        "sensitivity": float(model.sensitivity_), "C": float(model.weight_sensitivity_),
        "release_grid": model.release_grid_, "gamma": float(model.gamma_), "huber_h": float(model.huber_h_),
        "mechanism": str(model.mechanism_), "residual": bool(model.residual_),
        "mechanism_description": str(model.mechanism_description_), "noise": noise,
        # non-private diagnostics: kept by dpowl() for summary(fit, diagnostics = TRUE) only
        "n_clipped_weights": int(model.n_clipped_weights_), "n_clipped_features": int(model.n_clipped_features_),
        "n_clipped_logits": int(model.n_clipped_logits_), "n_clipped_benefits": int(model.n_clipped_benefits_),
        "random_seed": r_state_out(rng, kind),
    }


class NoiseDominatedWarning(UserWarning):
    """The release's noise is expected to exceed any minimiser's norm (public quantities only).

    Its R class is ``pydpowl_noise_dominated``.
    """


def owl_noise_scale(model: Any, n: int) -> Dict[str, Any]:
    """The noise of a fitted DPOWL's release, from public quantities only (n, d, epsilon, gamma, W, huber_h, Delta).

    Objective perturbation: the linear term ``b`` (``||b||`` ~ Gamma(d, rate))
    moves the minimiser by at most ``||b|| / lambda`` (the objective is
    ``lambda``-strongly convex in DPpack's units, lambda its ridge), so the same
    formulas with ``1 / (rate lambda)`` for ``Delta / epsilon`` give upper bounds
    (the data's curvature only shrinks the move), and the minimiser's bound uses
    the ridge ``lambda`` and the rule's W.

    The noise ``b`` has ``||b|| ~ Gamma(d, rate = epsilon/Delta)`` in DPpack's scaled
    space and a uniform direction, so ``E||b|| = d Delta/epsilon`` and each
    coordinate has ``E b_j^2 = E||b||^2 / d = (d + 1) (Delta/epsilon)^2``; mapped
    to the user's scale as the coefficients are (divided by ``sqrt(d)`` and the
    column's ``max(|lower_j|, |upper_j|)``, 1 for the intercept), that is
    ``sd``, one standard deviation per released coefficient. Any minimiser
    of ``F(theta) = (1/n) sum w_i l(m_i) + gamma/(2n) ||theta||^2`` with
    ``0 <= w_i <= W`` has ``gamma/(2n) ||theta||^2 <= F(0) <= W l(0)``, so
    ``||theta|| <= sqrt(2 n W l(0)/gamma)``: a release whose expected noise norm
    reaches that bound is noise-dominated whatever the data.
    """
    from pydpowl.engine.losses import huber_hinge_value

    scaler = model.scaler_
    d = scaler.n_coefficients
    eps = float(model.epsilon)
    W, ridge = float(model.rule_weights_upper_bound_), float(model.ridge_)
    if eps == math.inf:
        scale = 0.0
    elif model.mechanism_ == "objective":
        from pydpowl.engine.mechanisms import weighted_objective_split

        _, cal = weighted_objective_split(n=n, epsilon=float(model.epsilon_rule_), gamma=float(model.gamma_),
                                          weights_upper_bound=W, curvature=1.0 / (2.0 * float(model.huber_h_)),
                                          lipschitz=1.0, tol=float(model.tol))
        scale = 1.0 / (cal.rate * cal.ridge)
    else:
        scale = float(model.sensitivity_) / float(model.epsilon_rule_)
    l0 = float(huber_hinge_value(np.zeros(1), float(model.huber_h_))[0])
    bound = math.sqrt(2.0 * n * W * l0 / ridge)
    return {"expected_norm": d * scale, "minimiser_norm_bound": bound, "dominated": d * scale >= bound,
            "sd": scaler.coef_to_original(np.full(d, math.sqrt(d + 1.0) * scale))}


def _r3(x: float) -> str:
    """``x`` to 3 significant digits, as R prints it."""
    return r_number(float(f"{x:.3g}"))


def noise_dominated_message(noise: Dict[str, Any], model: Any, n: int, columns: Optional[Sequence[str]],
                            propensity: Any = None) -> str:
    """Why the release is noise-dominated and what to change, from public quantities only."""
    C, W, gamma = float(model.weight_sensitivity_), float(model.weights_upper_bound), float(model.gamma_)
    if model.mechanism_ == "objective":
        return (f"the release is noise-dominated: its noise moves the rule by up to {_r3(noise['expected_norm'])} in "
                f"expectation (DPpack's scaled space), at least the largest norm any minimiser can have, "
                f"{_r3(noise['minimiser_norm_bound'])}, so the rule is essentially random ({model.mechanism_description_}"
                f"; epsilon = {r_number(float(model.epsilon))}, gamma = {_r3(gamma)}, n = {n}). Raise epsilon or use "
                "more rows.")
    msg = (f"the release is noise-dominated: its noise has expected norm d Delta/epsilon = "
           f"{_r3(noise['expected_norm'])} (DPpack's scaled space), at least the largest norm any minimiser can have, "
           f"sqrt(2 n W l(0)/gamma) = {_r3(noise['minimiser_norm_bound'])}, so the rule is essentially random. "
           f"From public quantities only: Delta = (C + 2W + 2 n tol)/gamma = {_r3(float(model.sensitivity_))} with "
           f"C = {_r3(C)}, W = {r_number(W)}, gamma = {r_number(gamma)}, epsilon = {r_number(float(model.epsilon))}, "
           f"n = {n}.")
    if C <= 2.0 * W:
        return msg + " Raise epsilon or gamma (or use more rows)."
    if getattr(propensity, "feature_norm_bound_", None) is None:
        return msg + (" C, the weights' sensitivity to one subject (weight_sensitivity), dominates Delta: use "
                      "propensities known by design (weight_sensitivity = 0), or raise epsilon or gamma.")
    msg += (f" C, the share of the propensity model fitted on these data, grows as C_B C_x^2 e^M / b_x (here "
            f"benefit_bound C_B = {r_number(float(propensity.benefit_bound))}, feature norm bound C_x = "
            f"{_r3(float(propensity.feature_norm_bound_))}, logit_bound M = {r_number(float(propensity.logit_bound))}, "
            f"Hessian bound b_x = {_r3(float(propensity.hessian_lower_bound_))}):")
    scaler = model.scaler_
    size = np.maximum(np.abs(scaler.lower), np.abs(scaler.upper))
    j = int(np.argmax(size))
    if size[j] > 2.0:
        name = columns[j] if columns is not None and j < len(columns) else f"column {j + R_INDEX}"
        msg += (f" put the features on a scale of about 1 first (the largest: {name} in "
                f"[{r_number(float(scaler.lower[j]))}, {r_number(float(scaler.upper[j]))}]; e.g. age / 100, with its "
                "bounds divided by 100 too: the rule's fit does not change, only C falls);")
    return msg + (" raise ridge, lower logit_bound or benefit_bound, or use propensities known by design. See "
                  "?dpowl, section 'Scaling features'.")


# ---- dpowl_analysis --------------------------------------------------------------------------------

@_for_r
def analyze(*, x: Any, treatment: Any, benefit: Any, lower: Any, upper: Any, benefit_bounds: Any,
            weights_upper_bound: Any, total_epsilon: Any, propensity: Any = None, propensity_model: Any = None,
            gamma: Any = None, gammas: Any = None, level: Any = 0.95, budget_split: Any = None, seed: Any = None,
            treatment_labels: Any = None, columns: Optional[Sequence[str]] = None,
            out_dir: Any = None) -> Dict[str, Any]:
    """``dpowl_analysis()``: :func:`pydpowl.analysis.analyze_arrays` with R's argument names.

    ``treatment`` in {-1, 1} (R has coded it); ``benefit_bounds`` the public
    ``c(lower, upper)`` of the benefit; ``seed`` None (the default: OS entropy)
    or, with ``rng = "R"``, one integer drawn from R's stream, so that
    ``set.seed`` reproduces the analysis (then
    :class:`~pydpowl.exceptions.ReplayStreamWarning`: not private).
    Returns the analysis' plain result (model, coefficients, value, ledger, ...).
    """
    from pydpowl.analysis import analyze_arrays
    from pydpowl.dppack import warn_replay_stream

    X = v.check_array("x", x, columns=_column_names(columns), index_base=R_INDEX)
    n, p = X.shape
    A = v.check_labels("treatment", treatment, length=n, length_of=_PER_SUBJECT, index_base=R_INDEX)
    B = v.check_vector("benefit", benefit, length=n, length_of=_PER_SUBJECT, index_base=R_INDEX)
    lo, up = v.check_bounds("bounds", (lower, upper), p, names=("bounds$lower", "bounds$upper"), index_base=R_INDEX)
    bb = v.check_vector("benefit_bounds", benefit_bounds, length=2)
    if not bb[0] < bb[1]:
        raise ValueError(f"benefit_bounds must be c(lower, upper) with lower < upper, got "
                         f"c({r_number(float(bb[0]))}, {r_number(float(bb[1]))}).")
    labels = ("+1", "-1") if treatment_labels is None else tuple(str(t) for t in np.atleast_1d(treatment_labels))
    grid = None if gammas is None else [float(g) for g in np.atleast_1d(gammas)]
    if seed is not None:
        warn_replay_stream()
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

@_for_r
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
