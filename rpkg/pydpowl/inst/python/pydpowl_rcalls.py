"""The functions the R package calls in its Python worker (``pydpowl_worker.py``).

Each takes R's arguments as keywords (R's ``weights.upper.bound`` arrives as
``weights_upper_bound``), has them checked under the names the R user typed
and with positions counted from 1, and returns a
dict that goes back to R as a named list (its keys spelled the R way). Every
check of a value lives in Python; R only turns its objects (data frames,
factors, logical columns) into numbers and raises the classed conditions this
module's exceptions and warnings become.

One input path: the DPOWL functions restate no rule of the engine. ``dpowl()``'s
:func:`fit_owl`, ``owl()``'s :func:`owl_fit` and ``dpowl_analysis()``'s
:func:`analyze` and :func:`analyze_regime` run the engine (DPOWL,
DPMultiStageOWL, ``run_analysis``, ``run_regime_analysis``) inside
:func:`pydpowl._validation.caller_words`, whose map names the engine's
arguments, per stage too (``H[1]`` -> ``H[[2]]``, ``feature_bounds[0].lower`` ->
``bounds[[1]]$lower``), as R does; they only turn R's forms into the
engine's (levels' positions, per-level probabilities) and check the rules that
are R's own (``owl()``'s ``n`` and DTRlearn2's cost ``c``, the mechanisms
``owl()`` offers).

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
preprocessing, solver and mechanisms, :mod:`pydpowl.interop.dppack` with the
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
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from pydpowl import _validation as v
from pydpowl.engine.kernels import AUTO_MIN_ROWS
from pydpowl.exceptions import DataClippedWarning

__all__ = ["svmdp_settings", "svmdp_fit", "svmdp_predict", "svmdp_features", "logistic_regression_dp_settings",
           "logistic_regression_dp_fit", "linear_regression_dp_settings", "linear_regression_dp_fit",
           "tune_classification_model", "tune_linear_regression_model", "fit_owl", "propensity_logistic",
           "make_data", "analyze", "analyze_regime", "owl_fit", "owl_evaluate"]

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
# Thin wrappers of pydpowl.interop.dppack (the checks there speak DPpack's R names and count positions from 1; the fits
# are the estimators' scikit-learn-free cores): here only the worker's concerns are added, the numba policy
# (:func:`_backend`) and, for replay only, R's .Random.seed in and out (``r_state``).

@_for_r
def svmdp_settings(*, regularizer: Any = "l2", eps: Any, gamma: Any, perturbation_method: Any = "objective",
                   kernel: Any = "linear", D: Any = None, kernel_param: Any = None,
                   huber_h: Any = 0.5) -> Dict[str, Any]:
    """``svmDP$new()``'s settings, checked (the object is created in R)."""
    from pydpowl.interop import dppack

    return dppack.svmdp_settings(regularizer=regularizer, eps=eps, gamma=gamma, perturbation_method=perturbation_method,
                                 kernel=kernel, D=D, kernel_param=kernel_param, huber_h=huber_h)


@_for_r
def logistic_regression_dp_settings(*, regularizer: Any = "l2", eps: Any, gamma: Any,
                                    perturbation_method: Any = "objective") -> Dict[str, Any]:
    """``LogisticRegressionDP$new()``'s settings, checked."""
    from pydpowl.interop import dppack

    return dppack.logistic_regression_dp_settings(regularizer=regularizer, eps=eps, gamma=gamma,
                                                  perturbation_method=perturbation_method)


@_for_r
def linear_regression_dp_settings(*, regularizer: Any = "l2", eps: Any, delta: Any, gamma: Any) -> Dict[str, Any]:
    """``LinearRegressionDP$new()``'s settings, checked."""
    from pydpowl.interop import dppack

    return dppack.linear_regression_dp_settings(regularizer=regularizer, eps=eps, delta=delta, gamma=gamma)


def _rows(X: Any) -> int:
    shape: Tuple[int, ...] = getattr(X, "shape", ())
    return int(shape[0]) if len(shape) else 1


@_for_r
def svmdp_fit(*, X: Any, y: Any, upper_bounds: Any, lower_bounds: Any, add_bias: Any = False, weights: Any = None,
              weights_upper_bound: Any = None, regularizer: Any = "l2", eps: Any, gamma: Any,
              perturbation_method: Any = "objective", kernel: Any = "linear", D: Any = None, kernel_param: Any = None,
              huber_h: Any = 0.5, r_state: Any = None, columns: Optional[Sequence[str]] = None,
              reproduce_dppack: Any = False) -> Dict[str, Any]:
    """``svmDP$fit()`` (:func:`pydpowl.interop.dppack.svmdp_fit`).

    Weights above ``weights.upper.bound`` are clipped to it silently, as
    DPpack clips them: how many were clipped is computed from the private data
    and is not released (docs/r_frontend.md). Output perturbation is the
    engine's one release
    (:func:`pydpowl.engine.mechanisms.output.release_output_perturbation`), the same as
    ``dpowl()``'s bit for bit (tests/rpkg/test_rcalls.py).
    """
    from pydpowl.interop import dppack

    return dppack.svmdp_fit(X, y, upper_bounds, lower_bounds, add_bias, weights, weights_upper_bound, eps=eps,
                            gamma=gamma, regularizer=regularizer, perturbation_method=perturbation_method,
                            kernel=kernel, D=D, kernel_param=kernel_param, huber_h=huber_h, r_state=r_state,
                            reproduce_dppack=reproduce_dppack, columns=_column_names(columns),
                            backend=_backend(_rows(X)))


@_for_r
def svmdp_predict(*, X: Any, coeff: Any, add_bias: Any = False, raw_value: Any = False, kernel: Any = "Gaussian",
                  prefilter: Any = None) -> Dict[str, Any]:
    """``svmDP$predict()`` for the Gaussian kernel (the random features are computed in one place, here)."""
    from pydpowl.interop import dppack

    return {"values": dppack.svmdp_predict(X, coeff, add_bias, raw_value, kernel=kernel, prefilter=prefilter)}


@_for_r
def svmdp_features(*, X: Any, prefilter: Any) -> Dict[str, Any]:
    """``svmDP$XtoV()``: the random features of X."""
    from pydpowl.interop import dppack

    if prefilter is None:
        raise ValueError("this svmDP model has no random features (prefilter); fit it with kernel = 'Gaussian' first.")
    return {"V": dppack.svmdp_features(X, prefilter)}


@_for_r
def logistic_regression_dp_fit(*, X: Any, y: Any, upper_bounds: Any, lower_bounds: Any, add_bias: Any = False,
                               regularizer: Any = "l2", eps: Any, gamma: Any, perturbation_method: Any = "objective",
                               r_state: Any = None, columns: Optional[Sequence[str]] = None,
                               reproduce_dppack: Any = False) -> Dict[str, Any]:
    """``LogisticRegressionDP$fit()`` (:func:`pydpowl.interop.dppack.logistic_regression_dp_fit`)."""
    from pydpowl.interop import dppack

    return dppack.logistic_regression_dp_fit(X, y, upper_bounds, lower_bounds, add_bias, eps=eps, gamma=gamma,
                                             regularizer=regularizer, perturbation_method=perturbation_method,
                                             r_state=r_state, reproduce_dppack=reproduce_dppack,
                                             columns=_column_names(columns), backend=_backend(_rows(X)))


@_for_r
def linear_regression_dp_fit(*, X: Any, y: Any, upper_bounds: Any, lower_bounds: Any, add_bias: Any = False,
                             regularizer: Any = "l2", eps: Any, delta: Any, gamma: Any, r_state: Any = None,
                             columns: Optional[Sequence[str]] = None, reproduce_dppack: Any = False) -> Dict[str, Any]:
    """``LinearRegressionDP$fit()`` (:func:`pydpowl.interop.dppack.linear_regression_dp_fit`)."""
    from pydpowl.interop import dppack

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
    """``tune_classification_model()`` (:func:`pydpowl.interop.dppack.tune_classification_model`)."""
    from pydpowl.interop import dppack

    return dppack.tune_classification_model(_models(DPmodels), X, y, upper_bounds, lower_bounds, add_bias, weights,
                                            weights_upper_bound, r_state=r_state, columns=_column_names(columns),
                                            backend=_backend(_rows(X)))


@_for_r
def tune_linear_regression_model(*, DPmodels: Any, X: Any, y: Any, upper_bounds: Any, lower_bounds: Any,
                                 add_bias: Any = False, r_state: Any = None,
                                 columns: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """``tune_linear_regression_model()`` (:func:`pydpowl.interop.dppack.tune_linear_regression_model`)."""
    from pydpowl.interop import dppack

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


def _names(values: Any) -> list:
    """R's character vector (one string arrives as a str) as a list of str."""
    return [values] if isinstance(values, str) else [str(x) for x in values]


def _r_label(label: str) -> str:
    return '"' + label + '"'


def _arm_propensity(propensity: Any, classes: np.ndarray, codes: np.ndarray, *, name: str, levels: Sequence[str],
                    weight_sensitivity: Any, weights_upper_bound: float = 1.0) -> Any:
    """A K-arm propensity from R in the engine's form, checked under R's names (positions from 1).

    R sends a number (two arms: the probability of the second level; K arms:
    1/K), ``list(per_arm = )`` (one probability per level, in the levels'
    order: R matched the names), a vector of ``P(A_i | x_i)`` or an ``n x K``
    matrix (columns in the levels' order). Returns the engine's form (a
    number, a mapping ``{class: probability}``, a vector or a matrix), checked
    by :func:`pydpowl.estimators.multiarm.resolve_arm_propensity`.
    """
    from pydpowl.estimators.multiarm import resolve_arm_propensity
    from pydpowl.estimators.propensity import LogisticPropensity

    K = len(classes)
    if isinstance(propensity, LogisticPropensity) or (isinstance(propensity, dict) and "per_arm" not in propensity):
        raise TypeError(f"{name}: propensity_logistic() models two arms; with {K} arms give the design's "
                        f"probabilities: 1/{K}, a named vector with one probability per level, or an n x {K} matrix.")
    if isinstance(propensity, dict):
        values = np.atleast_1d(np.asarray(propensity["per_arm"], dtype=np.float64))
        for label, value in zip(levels, values):
            if not (0.0 < value <= 1.0):
                raise ValueError(f"{name}[{_r_label(label)}] must be a probability in (0, 1], got {r_number(value)}.")
        form = {c.item(): float(p) for c, p in zip(classes, values)}
    elif isinstance(propensity, float) and K > 2 and abs(propensity * K - 1.0) > 1e-6:
        raise ValueError(f"{name} = {r_number(propensity)}: one number means balanced randomisation, 1/{K} for the "
                         f"{K} arms; for unequal allocation give a named vector with one probability per level, "
                         f"summing to 1 (names {', '.join(_r_label(lv) for lv in levels)}), or an n x {K} matrix of "
                         "P(A = a | x_i).")
    else:
        form = propensity
    resolved = resolve_arm_propensity(form, classes, codes, weight_sensitivity=weight_sensitivity,
                                      weights_upper_bound=weights_upper_bound, name=name, index_base=R_INDEX)
    return form, resolved


#: DPOWL's argument names as dpowl() calls them (:func:`pydpowl._validation.caller_words`)
_DPOWL_NAMES = {"X": "x", "fit_intercept": "intercept", "feature_bounds": "bounds",
                "feature_bounds.lower": "bounds$lower", "feature_bounds.upper": "bounds$upper"}


@_for_r
def fit_owl(*, x: Any, treatment: Any, benefit: Any, propensity: Any, lower: Any, upper: Any, intercept: Any,
            epsilon: Any, gamma: Any, weights_upper_bound: Any, huber_h: Any, random_seed: Any = None,
            columns: Optional[Sequence[str]] = None, weight_sensitivity: Any = None,
            reproduce_dppack: Any = False, mechanism: Any = "auto", residual: Any = "auto",
            benefit_bounds: Any = None, levels: Any = None) -> Dict[str, Any]:
    """``dpowl()``: DP-OWL with :class:`pydpowl.DPOWL`.

    ``treatment``: R has coded it, -1/+1 for two arms, the levels' positions
    1..K for three or more (``levels``, the labels, name them in messages).
    ``gamma`` and ``huber_h`` None (R's NULL) mean DPOWL's ``"auto"``;
    ``mechanism``, ``residual`` and ``benefit_bounds`` are DPOWL's (R's
    ``c(lower, upper)`` for the benefit bounds). The result names the
    mechanism used and the resolved gamma and h.

    ``propensity``: a number (two arms: the probability of the arm coded +1;
    K arms: 1/K), ``list(per_arm = )`` (one probability per level), a vector
    of P(A_i | x_i), an ``n x K`` matrix, or a named list from
    ``propensity_logistic()`` (two arms: a logistic model fitted here on the
    same data). ``weight_sensitivity``: None, a number or ``"trivial"`` (as
    ``DPOWL``: arrays need it stated). ``random_seed`` None draws the noise
    from OS entropy.
    """
    from pydpowl.estimators.multiarm import encode_arms
    from pydpowl.interop.dppack import r_state_out, r_stream
    from pydpowl.estimators.owl import DPOWL
    from pydpowl.estimators.propensity import LogisticPropensity

    with v.caller_words(_DPOWL_NAMES, index_base=R_INDEX):  # DPOWL's checks, in R's names
        classes, codes = encode_arms("treatment", treatment)
        A = np.where(codes == 1, 1.0, -1.0) if len(classes) == 2 else np.asarray(treatment, dtype=np.float64)
        names = _names(levels) if levels is not None else [r_number(float(c)) for c in classes]
        if len(classes) > 2 or np.ndim(propensity) == 2 or (isinstance(propensity, dict) and "per_arm" in propensity):
            form, resolved = _arm_propensity(propensity, classes, codes, name="propensity", levels=names,
                                             weight_sensitivity=weight_sensitivity)
            # two arms: DP-OWL's own forms (the probability of the arm coded +1, or the received arm's per subject)
            prop = form if len(classes) > 2 else (resolved.probability if np.ndim(form) == 2
                                                  else form[classes[1].item()])
        elif isinstance(propensity, dict):  # propensity_logistic() from R: fitted here on the same data
            keys = ("benefit_bound", "logit_bound", "ridge", "hessian_lower_bound", "hessian_bound_kind",
                    "assume_hessian_bound")
            spec = propensity_logistic(**{k: propensity[k] for k in keys if k in propensity})
            prop = LogisticPropensity(feature_bounds=(lower, upper), fitted_on=str(propensity["fitted_on"]),
                                      **spec).fit(x, A)
        else:
            prop = propensity
        rng, kind = r_stream(random_seed)
        model = DPOWL(epsilon=epsilon, gamma="auto" if gamma is None else gamma,
                      weights_upper_bound=weights_upper_bound, feature_bounds=(lower, upper),
                      huber_h="auto" if huber_h is None else huber_h,
                      mechanism="auto" if mechanism is None else mechanism,
                      residual="auto" if residual is None else residual,
                      benefit_bounds=benefit_bounds,
                      fit_intercept=intercept, weight_sensitivity=weight_sensitivity,
                      reproduce_dppack=reproduce_dppack, random_state=rng).fit(x, A, benefit, prop)
    n = int(np.shape(x)[0])
    from pydpowl.estimators.owl import weight_bound_notes
    from pydpowl.interop.noise import owl_noise_scale

    noise = owl_noise_scale(model, n)
    if noise["dominated"]:
        warnings.warn(NoiseDominatedWarning(noise_dominated_message(noise, model, n, _column_names(columns), prop)))
    out = {
        "intercept": model.intercept_ if len(classes) > 2 else float(model.intercept_),
        "coef": np.asarray(model.coef_, dtype=np.float64),
        "sensitivity": float(model.sensitivity_), "C": float(model.weight_sensitivity_),
        "release_grid": model.release_grid_, "gamma": float(model.gamma_), "huber_h": float(model.huber_h_),
        "mechanism": str(model.mechanism_), "residual": bool(model.residual_),
        "mechanism_description": str(model.mechanism_description_), "noise": noise,
        # public: the bound the rule's noise is calibrated to (W_r = W x clip share with residual weights), stated
        "rule_weights_upper_bound": float(model.rule_weights_upper_bound_),
        "weight_bound_notes": list(weight_bound_notes(model)),
        # non-private diagnostics: kept by dpowl() for summary(fit, diagnostics = TRUE) only
        "n_clipped_weights": int(model.n_clipped_weights_), "n_clipped_features": int(model.n_clipped_features_),
        "n_clipped_logits": int(model.n_clipped_logits_), "n_clipped_benefits": int(model.n_clipped_benefits_),
        "random_seed": r_state_out(rng, kind),
    }
    if len(classes) > 2:  # the arms' simplex vertices (one row per arm): predict() scores <V_a, f(x)> in R
        from pydpowl.engine.multicategory import simplex_vertices

        out["vertices"] = simplex_vertices(len(classes))
    return out


class NoiseDominatedWarning(UserWarning):
    """The release's noise is expected to exceed any minimiser's norm (public quantities only).

    Its R class is ``pydpowl_noise_dominated``.
    """


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
                f"{_r3(noise['minimiser_norm_bound'])}, so the rule is essentially random "
                f"({model.mechanism_description_}"
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


# ---- owl: several stages (DTRlearn2's owl(), privately) ----------------------------------------------------

def _one(value: Any) -> Any:
    """R's length-1 vector (it may arrive as an array of one) as a number; anything else as it is."""
    return float(np.ravel(value)[0]) if isinstance(value, np.ndarray) and value.size == 1 else value


def _owl_names(T: int, *, one_history: bool, floors_per_stage: bool, rewards_per_stage: bool) -> Dict[str, str]:
    """DPMultiStageOWL's argument names (per stage: ``H[0]``, ``A[0] (stage 1's treatments)``, ...) as owl() calls
    them (``H[[1]]``, ``AA[[1]] (stage 1's treatments)``, ...), for :func:`pydpowl._validation.caller_words`."""
    names = {"A": "AA", "R": "RR", "propensity": "pi", "feature_bounds": "bounds"}
    for k in range(T):
        s = k + R_INDEX
        bounds = f"bounds[[{s}]]"
        names.update({
            f"H[{k}]": "H" if one_history else f"H[[{s}]]",
            f"A[{k}] (stage {k + 1}'s treatments)": f"AA[[{s}]] (stage {k + 1}'s treatments)",
            f"R[{k}]": f"RR[[{s}]]", f"propensity[{k}] (stage {k + 1})": f"pi[[{s}]]",
            f"feature_bounds[{k}]": bounds, f"feature_bounds[{k}].lower": f"{bounds}$lower",
            f"feature_bounds[{k}].upper": f"{bounds}$upper",
            f"epsilon[{k}]": f"epsilon[{s}]", f"gamma[{k}]": f"gamma[{s}]",
            f"propensity_floor[{k}]": f"propensity_floor[{s}]" if floors_per_stage else "propensity_floor",
            f"reward_bounds[{k}]": f"reward_bounds[[{s}]]" if rewards_per_stage else "reward_bounds",
        })
    return names


@_for_r
def owl_fit(*, H: Any, AA: Any, RR: Any, n: Any, pi: Any, epsilon: Any, bounds: Any, reward_bounds: Any,
            gamma: Any = None, c: Any = None, propensity_floor: Any = None, baseline: Any = "lower",
            baseline_share: Any = 0.25, huber_h: Any = None, weight_sensitivity: Any = None, levels: Any = None,
            columns: Any = None, random_seed: Any = None, mechanism: Any = "auto") -> Dict[str, Any]:
    """``owl()``: :class:`pydpowl.DPMultiStageOWL` with DTRlearn2's argument names.

    R sends lists with one entry per stage (K stages, stage 1 first): ``H``
    (the histories; or one matrix for every stage), ``AA`` (treatments coded
    by R: -1/+1 for two arms, the levels' positions 1..K_k for more; ``levels``
    the labels), ``RR`` (rewards), ``pi`` (each stage's propensity: a number,
    ``list(per_arm = )``, a vector of P(A_ik | H_ik) or an ``n x K_k``
    matrix), ``bounds`` (``list(lower, upper)`` per stage, matched to the
    columns by R) and ``reward_bounds`` (one pair, or a list of one per
    stage). ``epsilon`` is the total or one per stage; ``gamma`` one or one per
    stage, or ``c`` (DTRlearn2's cost, one number) mapped to
    ``gamma_k = n / (c d_k s_k^2)`` (:func:`pydpowl.estimators.multistage.gamma_for_cost`
    with n, public, for DTRlearn2's count of followers, and ``s_k`` the
    stage's largest feature bound). The engine checks every value, inside
    :func:`pydpowl._validation.caller_words` with owl()'s names per stage
    (:func:`_owl_names`) and positions from 1; only owl()'s own rules (``n``,
    ``gamma`` or ``c``, the two mechanisms it offers) are checked here.

    ``mechanism``: ``"auto"`` (the engine's default: weighted objective
    perturbation for two-arm stages with known propensities, with residual
    weights when ``baseline = "lower"``) or ``"output"`` (output perturbation
    with the classic BOWL weights at every stage); ``huber_h`` None is the
    engine's ``"auto"`` (1 for objective, 0.5 for output perturbation).

    Returns each stage's release (public) and, apart, the non-private
    diagnostics (followers, clipped counts) that ``summary(fit, diagnostics =
    TRUE)`` alone shows.
    """
    from pydpowl._validation import check_array
    from pydpowl.engine.preprocessing import FeatureScaler
    from pydpowl.estimators.multiarm import encode_arms
    from pydpowl.estimators.multistage import DPMultiStageOWL, gamma_for_cost
    from pydpowl.interop.dppack import r_state_out, r_stream
    from pydpowl.interop.noise import stage_noise

    n = _r_whole_number("n", n, minimum=1)
    T = len(AA)
    one_history = not isinstance(H, list)
    stage_levels = levels if isinstance(levels, list) else [levels] * T
    rows = np.shape(H if one_history else H[0])
    if len(rows) == 2 and rows[0] != n:  # owl()'s n (DTRlearn2's): the engine counts the histories' rows
        first = "H" if one_history else "H[[1]]"
        raise ValueError(f"{first} (stage 1's history) has {rows[0]} rows but n = {n}: every stage's history needs "
                         "one row per subject, in the same order.")
    if (gamma is None) == (c is None):
        raise ValueError("give either gamma (pydpowl's regularisation, one or one per stage) or c (DTRlearn2's cost, "
                         f"one number), not {'both' if gamma is not None else 'neither'}.")
    if c is not None and np.size(c) != 1:
        raise ValueError(f"c must be one number (DTRlearn2's cost; no cross-validation over the private data), "
                         f"got a vector of length {np.size(c)}.")
    mech = v.check_choice("mechanism", mechanism, ("auto", "output"))  # owl() offers these two
    floor = _one(propensity_floor)
    stage_bounds = [(b["lower"], b["upper"]) for b in bounds]
    names = _owl_names(T, one_history=one_history, floors_per_stage=isinstance(floor, np.ndarray),
                       rewards_per_stage=isinstance(reward_bounds, list))
    rng, kind = r_stream(random_seed)
    with v.caller_words(names, index_base=R_INDEX):  # DPMultiStageOWL's checks, in owl()'s names
        props = []
        for k in range(T):  # R's forms of pi (levels by name, 1/K) in the engine's
            aname = f"AA[[{k + R_INDEX}]] (stage {k + 1}'s treatments)"
            cls, cod = encode_arms(aname, AA[k])
            lv = _names(stage_levels[k]) if stage_levels[k] is not None else [r_number(float(a)) for a in cls]
            props.append(_arm_propensity(pi[k], cls, cod, name=f"pi[[{k + R_INDEX}]]", levels=lv,
                                         weight_sensitivity=weight_sensitivity)[0])
        if c is None:
            gammas = _one(gamma)
        else:  # DTRlearn2's cost: gamma_k = n / (c d_k s_k^2), s_k the stage's largest feature bound
            cost = v.check_positive("c", float(np.ravel(c)[0]))
            gammas = []
            for k in range(T):
                p = check_array("H" if one_history else f"H[{k}]", H if one_history else H[k]).shape[1]
                scale = FeatureScaler.from_bounds(stage_bounds[k], p, False, name=f"feature_bounds[{k}]").column_scale
                gammas.append(gamma_for_cost(cost, n, p + 1, float(np.max(scale))))
        model = DPMultiStageOWL(epsilon=_one(epsilon), gamma=gammas, feature_bounds=stage_bounds, mechanism=mech,
                                residual="auto" if mech == "auto" else False, reward_bounds=reward_bounds,
                                propensity_floor=floor, baseline=baseline, baseline_share=_one(baseline_share),
                                huber_h="auto" if huber_h is None else _one(huber_h),
                                weight_sensitivity=weight_sensitivity, random_state=rng)
        model.fit(H, [np.asarray(a, dtype=np.float64) for a in AA], RR, props)
    stages = []
    from pydpowl.engine.multicategory import simplex_vertices

    for k, s in enumerate(model.stages_):
        rule = s.rule
        noise = stage_noise(s, n=n, tol=float(model.tol))
        if noise["dominated"]:
            how = (f"Delta = {_r3(s.sensitivity)}" if s.mechanism == "output" else
                   "objective perturbation" + (", residual weights" if s.residual else ""))
            warnings.warn(NoiseDominatedWarning(
                f"stage {k + 1}: the release is noise-dominated: its noise has expected norm "
                f"{_r3(noise['expected_norm'])} (scaled space), at least the largest norm any minimiser can have, "
                f"sqrt(2 n W l(0)/gamma) = {_r3(noise['minimiser_norm_bound'])}, so the stage's rule is essentially "
                f"random. From public quantities only: {how}, W = {_r3(s.weights_upper_bound)}, "
                f"gamma = {_r3(s.gamma)}, epsilon = {r_number(s.epsilon)}, n = {n}. Raise epsilon or gamma, "
                "tighten reward_bounds or bounds, or use more subjects."))
        stages.append({
            "classes": np.asarray(rule.classes, dtype=np.float64), "intercept": rule.intercept, "coef": rule.coef,
            "vertices": simplex_vertices(rule.n_arms), "epsilon": s.epsilon, "epsilon_baseline": s.epsilon_baseline,
            "gamma": s.gamma, "sensitivity": s.sensitivity, "weights_upper_bound": s.weights_upper_bound,
            "release_grid": s.release_grid, "baseline_coef": s.baseline_coef, "noise": noise,
            "mechanism": s.mechanism, "residual": bool(s.residual), "huber_h": s.huber_h, "baseline": s.baseline,
        })
    ledger = model.ledger_
    return {
        "stages": stages, "floating_point_delta": model.floating_point_delta(),
        "ledger": {"release": [str(r.label) for r in ledger.releases],
                   "epsilon": np.array([float(r.epsilon) for r in ledger.releases])},
        # non-private diagnostics: kept by owl() for summary(fit, diagnostics = TRUE) only
        "n_followed": np.array(model.n_followed_, dtype=np.float64),
        "n_clipped_rewards": np.array(model.n_clipped_rewards_, dtype=np.float64),
        "n_clipped_features": np.array(model.n_clipped_features_, dtype=np.float64),
        "n_clipped_weights": np.array(model.n_clipped_weights_, dtype=np.float64),
        "random_seed": r_state_out(rng, kind),
    }


@_for_r
def owl_evaluate(*, recommended: Any, AA: Any, RR: Any, pi: Any, levels: Any = None) -> Dict[str, Any]:
    """``predict(<owl fit>, H, AA, RR, K, pi)``: DTRlearn2's ``valuefun`` and ``benefit`` of the regime on the data
    given (NOT private: computed from those data as they are; a regime's value on private data is a release of
    its own).

    ``valuefun`` is the normalised inverse-probability-weighted mean of the
    summed rewards over the subjects whose treatments followed the regime at
    every stage (:func:`pydpowl.estimators.multistage.ipw_value`), ``benefit``
    that minus the same mean over those who did not (DTRlearn2's definitions).
    ``recommended`` and ``AA`` are R's codes (as in :func:`owl_fit`).
    """
    from pydpowl.estimators.multiarm import encode_arms
    from pydpowl.estimators.multistage import ipw_value

    T = len(AA)
    n = np.size(AA[0])
    stage_levels = levels if isinstance(levels, list) else [levels] * T
    received, rewards = [], []
    for k in range(T):
        stage = k + R_INDEX
        aname = f"AA[[{stage}]] (stage {stage}'s treatments)"
        cls, cod = encode_arms(aname, AA[k], length=n, index_base=R_INDEX)
        rewards.append(v.check_vector(f"RR[[{stage}]]", RR[k], length=n, length_of=_PER_SUBJECT,
                                      index_base=R_INDEX))
        names = _names(stage_levels[k]) if stage_levels[k] is not None else [r_number(float(a)) for a in cls]
        _, res = _arm_propensity(pi[k], cls, cod, name=f"pi[[{stage}]]", levels=names, weight_sensitivity=0)
        received.append(res.probability)
    follow = [np.asarray(recommended[k], dtype=np.float64) for k in range(T)]
    A = [np.asarray(a, dtype=np.float64) for a in AA]
    value, _ = ipw_value(follow, A, rewards, received)
    followed = np.logical_and.reduce([f == a for f, a in zip(follow, A)])
    w = (~followed) / np.prod(received, axis=0)  # the subjects who did not follow the regime at some stage
    rest = float(w @ np.sum(rewards, axis=0) / w.sum()) if w.sum() > 0 else math.nan
    return {"valuefun": value, "benefit": value - rest}


# ---- dpowl_analysis --------------------------------------------------------------------------------

@_for_r
def analyze(*, x: Any, treatment: Any, benefit: Any, lower: Any, upper: Any, benefit_bounds: Any,
            weights_upper_bound: Any, total_epsilon: Any, propensity: Any = None, propensity_model: Any = None,
            gamma: Any = None, gammas: Any = None, level: Any = 0.95, budget_split: Any = None, seed: Any = None,
            treatment_labels: Any = None, columns: Optional[Sequence[str]] = None,
            out_dir: Any = None, public_n: Any = False) -> Dict[str, Any]:
    """``dpowl_analysis()``: :func:`pydpowl.interop.analysis.analyze_arrays` with R's argument names.

    ``treatment`` in {-1, 1} (R has coded it), or with three or more
    ``treatment_labels`` (the levels) their positions 1..K, and ``propensity``
    then 1/K or ``list(per_arm = )`` (:func:`_arm_propensity`); ``benefit_bounds`` the public
    ``c(lower, upper)`` of the benefit; ``seed`` None (the default: OS entropy)
    or, with ``rng = "R"``, one integer drawn from R's stream, so that
    ``set.seed`` reproduces the analysis (then
    :class:`~pydpowl.exceptions.ReplayStreamWarning`: not private).
    Returns the analysis' plain result (model, coefficients, value, ledger, ...).
    """
    from pydpowl.interop.analysis import analyze_arrays
    from pydpowl.interop.dppack import warn_replay_stream

    from pydpowl.analysis_base import _check_benefit_bounds

    labels = ("+1", "-1") if treatment_labels is None else tuple(str(t) for t in np.atleast_1d(treatment_labels))
    A = treatment
    if len(labels) > 2:  # K arms: R sends the levels' positions 1..K and the levels
        positions = np.asarray(treatment, dtype=np.float64).astype(np.intp)  # coded by R
        A = np.asarray(labels, dtype=object)[positions - R_INDEX].astype(str)  # the engine sorts them
        if isinstance(propensity, dict) and "per_arm" in propensity:  # R matched the names: the levels' order
            values = np.atleast_1d(np.asarray(propensity["per_arm"], dtype=np.float64))
            propensity = {str(lv): float(q) for lv, q in zip(labels, values)}
        elif isinstance(propensity, dict):
            raise TypeError("propensity: propensity_logistic() models two arms; with three or more arms give the "
                            "design's probabilities: 1/K or a named vector with one probability per level.")
    if seed is not None:
        warn_replay_stream()
    with v.caller_words(_DPOWL_NAMES, index_base=R_INDEX):  # run_analysis' checks, in dpowl_analysis()'s names
        lo, up = _check_benefit_bounds(tuple(np.atleast_1d(benefit_bounds)))  # R's c(lower, upper) as the pair
        return analyze_arrays(
            x, A, benefit, lower=lower, upper=upper, benefit_lower=lo, benefit_upper=up,
            weights_upper_bound=_one(weights_upper_bound), total_epsilon=_one(total_epsilon),
            propensity=_one(propensity), propensity_model=propensity_model, feature_names=_column_names(columns),
            treatment_labels=labels, gamma=_one(gamma), gammas=None if gammas is None else list(np.atleast_1d(gammas)),
            level=_one(level), split=budget_split, seed=None if seed is None else int(seed), out_dir=out_dir,
            public_n=public_n)


@_for_r
def analyze_regime(*, H: Any, treatment: Any, levels: Any, benefit: Any, bounds: Any, benefit_bounds: Any,
                   total_epsilon: Any, propensity: Any, gamma: Any = None, level: Any = 0.95, budget_split: Any = None,
                   stage_split: Any = None, seed: Any = None, columns: Any = None, out_dir: Any = None,
                   public_n: Any = False) -> Dict[str, Any]:
    """``dpowl_analysis()`` with several stages (DTRlearn2's lists): ``pydpowl.run_regime_analysis``.

    R sends one entry per stage (stage 1 first): ``H`` the histories, ``treatment`` the levels' positions 1..K_k
    and ``levels`` their labels, ``benefit`` the rewards, ``bounds`` ``list(lower, upper)`` matched to the columns
    by R, ``benefit_bounds`` one ``c(lower, upper)`` per stage (the rewards' public bounds), ``propensity`` each
    stage's design (a number: two arms, the probability of the second level; K arms, 1/K; or ``list(per_arm = )``
    in the levels' order); ``stage_split`` the ratios of the rule's budget across the stages (or None: equal).
    Returns the analysis' plain result (:meth:`RegimeAnalysisResult.to_dict`) and, with ``out_dir``, the files.
    """
    from pydpowl.analysis_base import BudgetSplit
    from pydpowl.analysis_regime import run_regime_analysis
    from pydpowl.interop.dppack import warn_replay_stream

    T = len(treatment)
    cols = columns if isinstance(columns, list) else [columns] * T
    names = {}
    for k in range(T):  # run_regime_analysis' (and DPMultiStageOWL's) names per stage, as dpowl_analysis() calls them
        s = k + R_INDEX
        names.update({f"H[{k}]": f"x[[{s}]]", f"A[{k}]": f"treatment[[{s}]]", f"R[{k}]": f"benefit[[{s}]]",
                      f"feature_bounds[{k}]": f"bounds[[{s}]]", f"feature_bounds[{k}].lower": f"bounds[[{s}]]$lower",
                      f"feature_bounds[{k}].upper": f"bounds[[{s}]]$upper",
                      f"reward_bounds[{k}]": f"benefit_bounds[[{s}]]",
                      f"gamma[{k}]": f"gamma[{s}]", f"stage_split[{k}]": f"stage_split[{s}]"})
    A = []
    props: List[Union[Dict[str, float], float]] = []  # per stage: {level: probability}, or 1/K
    for k in range(T):  # R's codes and forms (levels' positions, the design's probabilities) in the engine's
        stage = k + R_INDEX
        labels = _names(levels[k])
        pos = np.asarray(treatment[k], dtype=np.float64).astype(np.intp)  # 1..K_k, coded by R
        A.append(np.asarray(labels, dtype=object)[pos - R_INDEX].astype(str))
        p = propensity[k]
        if isinstance(p, dict) and "per_arm" in p:  # R matched the names: the levels' order
            q = np.atleast_1d(np.asarray(p["per_arm"], dtype=np.float64))
            props.append({lab: float(x) for lab, x in zip(labels, q)})
        elif not isinstance(p, dict) and np.size(p) == 1:
            x = float(np.ravel(p)[0])
            if len(labels) == 2:  # the probability of the second level (the arm coded +1, as in dpowl())
                x = v.check_probability(f"propensity[[{stage}]]", x, high_open=True)
                props.append({labels[0]: 1.0 - x, labels[1]: x})
            else:
                props.append(x)  # 1/K, checked by the engine
        else:
            raise TypeError(f"propensity[[{stage}]] must be the design's probabilities: a number (two arms: of the "
                            "second level; K arms: 1/K) or a named vector with one probability per level.")
    if seed is not None:
        warn_replay_stream()
    with v.caller_words(names, index_base=R_INDEX):  # the engine's checks, in dpowl_analysis()'s names
        result = run_regime_analysis(
            list(H), A, list(benefit), feature_bounds=[(b["lower"], b["upper"]) for b in bounds],
            reward_bounds=list(benefit_bounds), propensity=props, total_epsilon=_one(total_epsilon),
            gamma="auto" if gamma is None else _one(gamma), level=_one(level),
            split=None if budget_split is None else BudgetSplit.parse(budget_split),
            feature_names=[_column_names(c) or [f"x{j + 1}" for j in range(np.shape(h)[-1] if np.ndim(h) == 2 else 0)]
                           for c, h in zip(cols, H)],
            public_n=public_n, random_state=None if seed is None else int(seed),
            stage_split=None if stage_split is None else list(np.atleast_1d(np.asarray(stage_split, dtype=np.float64))))
    out = result.to_dict()
    if out_dir is not None:
        from pydpowl.analysis_output import write_regime_analysis

        out["files"] = [str(p) for p in write_regime_analysis(result, out_dir)]
    return out


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
