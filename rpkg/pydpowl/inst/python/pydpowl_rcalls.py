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
``fit_svm`` numpy, the engine's preprocessing, solver and mechanisms, and the
R-compatible stream; never scikit-learn, scipy, pandas or statsmodels. numba
only from the worker's second fit with 5,000 rows or more (see
:func:`_backend`): loading numba and its cached kernels costs about 1 s in a
fresh process, more than one fit gains from them, while a session that fits
repeatedly gains that back within a few fits.
"""

from __future__ import annotations

import warnings
from types import SimpleNamespace
from typing import Any, Dict, Optional, Sequence

import numpy as np

from pydpowl import _validation as v
from pydpowl.engine.kernels import AUTO_MIN_ROWS
from pydpowl.exceptions import DataClippedWarning

__all__ = ["svm_settings", "fit_svm", "fit_owl", "propensity_logistic", "make_data", "analyze"]

#: positions in messages count from 1, as in R
R_INDEX = 1
#: R's kind code for Mersenne-Twister + Inversion (+ Rejection); RRandom reproduces it
_R_KIND_MT_INVERSION = 10403
_PER_ROW = "one per row of X"
_PER_SUBJECT = "one per subject"
#: from this many rows the engine's "auto" backend uses the fused (numba) kernels (the engine's rule)
_KERNEL_MIN_ROWS = AUTO_MIN_ROWS
#: fits of at least _KERNEL_MIN_ROWS rows this worker has run (the worker lives for one R session)
_large_fits = 0


def _backend(n_rows: int) -> str:
    """The engine backend for a fit: numpy paths for the worker's first large fit, ``"auto"`` after.

    ``"auto"`` uses the numba kernels when numba is installed; loading them
    (about 1 s, once per process) pays off only over several large fits, so a
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


def _r_stream(random_seed: Any):
    """An RRandom at R's ``.Random.seed`` (kind code set to MT/Inversion), or OS entropy for None."""
    if random_seed is None:
        return np.random.default_rng()
    from pydpowl.rrandom import RRandom

    state = np.asarray(random_seed, dtype=np.int64).reshape(-1).copy()
    state[0] = _R_KIND_MT_INVERSION  # the sample kind digit does not affect rgamma/rnorm; R keeps the user's
    return RRandom.from_r_state(state)


def _state_out(rng: Any) -> Optional[np.ndarray]:
    get_state = getattr(rng, "get_state", None)
    return get_state() if get_state is not None and hasattr(rng, "rgamma") else None


def _column_names(columns: Any) -> Optional[Sequence[str]]:
    """R's ``colnames()``: None, one name (a length-1 character vector arrives as a str) or several."""
    return [columns] if isinstance(columns, str) else columns


def _r_whole_number(name: str, value: Any, minimum: int) -> int:
    """R's numbers are doubles: a whole double counts as an integer."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return v.check_int(name, value, minimum=minimum)


def _release(X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray, *, feature_bounds, fit_intercept: bool,
             epsilon: float, gamma: float, weights_upper_bound: float, huber_h: float = 0.5, C: float = 0.0,
             tol: float = 1e-10, reproduce_dppack: bool = False, random_state: Any,
             backend: str = "auto") -> SimpleNamespace:
    """DPpack's svmDP (linear kernel, output perturbation): scale with the public bounds, clip the
    weights at W (as DPpack does; counted), then the engine's one release
    (:func:`pydpowl.engine.release.release_output_perturbation`: solve exactly, add the noise,
    round to the release grid), mapped back to the original space.

    Inputs are already checked (X finite, y in {-1, 1}, weights >= 0, bounds
    valid); ``backend`` goes to the scaling and the solver. Returns an object
    with ``coef`` (original space, intercept first, as DPpack's ``coeff``),
    ``scaled_coef``, ``sensitivity``, ``grid``, ``n_iter``,
    ``n_clipped_weights`` and ``n_clipped_features``.
    """
    from pydpowl.engine.losses import HuberHingeLoss
    from pydpowl.engine.preprocessing import FeatureScaler
    from pydpowl.engine.release import check_noise_scale, release_output_perturbation

    check_noise_scale(epsilon, gamma, weights_upper_bound, C)
    lower, upper = feature_bounds
    scaler = FeatureScaler(lower=lower, upper=upper, fit_intercept=fit_intercept)
    Z, n_clipped_features = scaler.transform_checked(X, backend=backend)
    over = sample_weight > weights_upper_bound
    w = np.where(over, weights_upper_bound, sample_weight)
    out = release_output_perturbation(Z, y, w, epsilon=epsilon, gamma=gamma, weights_upper_bound=weights_upper_bound,
                                      loss=HuberHingeLoss(huber_h), C=C, tol=tol, reproduce_dppack=reproduce_dppack,
                                      rng=random_state, backend=backend)
    return SimpleNamespace(
        coef=scaler.coef_to_original(out.coef), scaled_coef=out.coef, sensitivity=out.sensitivity, grid=out.grid,
        n_iter=out.n_iter, n_clipped_weights=int(np.count_nonzero(over)), n_clipped_features=n_clipped_features)


# ---- svmDP ------------------------------------------------------------------------------------

def svm_settings(*, eps: Any, gamma: Any, huber_h: Any) -> Dict[str, float]:
    """``svmDP$new()``'s numeric settings: eps in (0, inf], gamma and huber.h in (0, inf)."""
    return {"eps": v.check_epsilon(eps, "eps"), "gamma": v.check_positive("gamma", gamma),
            "huber.h": v.check_positive("huber.h", huber_h)}


def fit_svm(*, X: Any, y: Any, upper_bounds: Any, lower_bounds: Any, add_bias: Any, weights: Any,
            weights_upper_bound: Any, eps: Any, gamma: Any, huber_h: Any, random_seed: Any,
            columns: Optional[Sequence[str]] = None, reproduce_dppack: Any = False) -> Dict[str, Any]:
    """DPpack's ``svmDP$fit()`` (linear kernel, output perturbation): the released ``coeff``.

    ``y`` in {0, 1} (DPpack's coding). Without ``weights`` the weights are 1 and
    their bound 1, whatever ``weights.upper.bound`` says (as DPpack). Weights
    above the bound are clipped to it with a :class:`WeightsClippedWarning`.
    The release is floating-point safe (rounded to the release grid) unless
    ``reproduce.dppack`` asks for DPpack's arithmetic bit for bit (validation
    only; a :class:`~pydpowl.exceptions.PrivacyLeakWarning` says so).
    """
    s = svm_settings(eps=eps, gamma=gamma, huber_h=huber_h)
    X = v.check_array("X", X, columns=_column_names(columns), index_base=R_INDEX)
    n, p = X.shape
    y01 = v.check_labels("y", y, length=n, allowed=(0, 1), length_of=_PER_ROW, index_base=R_INDEX,
                         hint="DPpack's svmDP codes labels 0 and 1; for labels in {-1, 1} use (y + 1) / 2.")
    lower, upper = v.check_bounds("bounds", (lower_bounds, upper_bounds), p, names=("lower.bounds", "upper.bounds"),
                                  index_base=R_INDEX)
    add_bias = v.check_bool("add.bias", add_bias)
    if weights is None:
        w, W = np.ones(n), 1.0
    else:
        if weights_upper_bound is None:
            raise ValueError("weights.upper.bound must be given when weights are given (the public bound W on "
                             "every weight).")
        W = v.check_positive("weights.upper.bound", weights_upper_bound)
        w = v.check_vector("weights", weights, length=n, length_of=_PER_ROW, index_base=R_INDEX)
        v.check_nonnegative("weights", w, index_base=R_INDEX)
    reproduce = v.check_bool("reproduce.dppack", reproduce_dppack)
    if reproduce and s["eps"] != float("inf"):
        from pydpowl.engine.release import warn_reproduce_dppack

        warn_reproduce_dppack("svmDP", stacklevel=1)
    rng = _r_stream(random_seed)
    release = _release(X, 2.0 * y01 - 1.0, w, feature_bounds=(lower, upper), fit_intercept=add_bias,
                       epsilon=s["eps"], gamma=s["gamma"], weights_upper_bound=W, huber_h=s["huber.h"],
                       reproduce_dppack=reproduce, random_state=rng, backend=_backend(n))
    if release.n_clipped_weights:
        warnings.warn(WeightsClippedWarning(
            f"{release.n_clipped_weights} of {n} weights exceed weights.upper.bound = {W:.7g} and were clipped "
            "to it (as DPpack does)."))
    return {"coeff": release.coef, "release_grid": release.grid, "random_seed": _state_out(rng)}


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
            reproduce_dppack: Any = False) -> Dict[str, Any]:
    """``dpowl()``: DP-OWL with :class:`pydpowl.DPOWL`; ``treatment`` in {-1, 1} (R has coded it).

    ``propensity``: a probability of the arm coded +1, a vector of P(A_i | x_i),
    or a named list from ``propensity_logistic()`` (a logistic model fitted here
    on the same data). ``weight_sensitivity``: None, a number or ``"trivial"``
    (as ``DPOWL``: a propensity vector needs it stated). ``random_seed`` None
    draws the noise from OS entropy.
    """
    eps = v.check_epsilon(epsilon)
    gam = v.check_positive("gamma", gamma)
    W = v.check_positive("weights_upper_bound", weights_upper_bound)
    h = v.check_positive("huber_h", huber_h)
    fit_intercept = v.check_bool("intercept", intercept)
    X = v.check_array("x", x, columns=_column_names(columns), index_base=R_INDEX)
    n, p = X.shape
    A = v.check_labels("treatment", treatment, length=n, length_of=_PER_SUBJECT, index_base=R_INDEX)
    B = v.check_vector("benefit", benefit, length=n, length_of=_PER_SUBJECT, index_base=R_INDEX)
    v.check_nonnegative("benefit", B, why="OWL weights are benefit / propensity", index_base=R_INDEX,
                        hint="Shift by a public lower bound first.")
    lo, up = v.check_bounds("bounds", (lower, upper), p, names=("bounds$lower", "bounds$upper"), index_base=R_INDEX)
    prop = _owl_propensity(propensity, n, lo, up)

    from pydpowl.estimators.owl import DPOWL
    from pydpowl.estimators.propensity import LogisticPropensity

    rng = _r_stream(random_seed)
    if isinstance(prop, LogisticPropensity):
        prop = prop.fit(X, A)
    stated = weight_sensitivity if weight_sensitivity is None or isinstance(weight_sensitivity, str) \
        else v.check_positive("weight_sensitivity", weight_sensitivity, allow_zero=True)
    model = DPOWL(epsilon=eps, gamma=gam, weights_upper_bound=W, feature_bounds=(lo, up), huber_h=h,
                  fit_intercept=fit_intercept, weight_sensitivity=stated,
                  reproduce_dppack=v.check_bool("reproduce_dppack", reproduce_dppack),
                  random_state=rng).fit(X, A, B, prop)
    return {
        "intercept": float(model.intercept_), "coef": np.asarray(model.coef_, dtype=np.float64),
        "sensitivity": float(model.sensitivity_), "C": float(model.weight_sensitivity_),
        "release_grid": model.release_grid_,
        "n_clipped_weights": int(model.n_clipped_weights_), "n_clipped_features": int(model.n_clipped_features_),
        "n_clipped_logits": int(model.n_clipped_logits_), "n_clipped_benefits": int(model.n_clipped_benefits_),
        "random_seed": _state_out(rng),
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
