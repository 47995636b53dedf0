"""Private model selection as DPpack's ``tune_classification_model`` and ``tune_linear_regression_model``.

With m candidate models and n rows, the rows are dealt out in turn: candidate
i (0-based) is fitted privately on rows ``i, i + m + 1, i + 2(m + 1), ...``
and the rows ``m, 2m + 1, ...`` validate (DPpack's ``seq(i, n, m + 1)`` and
``seq(m + 1, n, m + 1)``). Each candidate is scored on the validation rows
(number misclassified; sum of squared errors for regression) and one is
chosen by the exponential mechanism on minus the score, with the first
candidate's epsilon (:func:`pydpowl.engine.mechanisms.exponential_mechanism`,
one uniform drawn after every fit, as DPpack).

Privacy: every row lies in exactly one part, so replacing one row changes one
candidate's training data or the validation scores, never both. With each
candidate ``epsilon_i``-DP and the selection ``epsilon_1``-DP, releasing the
chosen model, and even every fitted candidate (DPpack's R6 objects are all
fitted in place), is ``max_i epsilon_i``-DP (parallel composition; the
selection post-processes the candidates). The sensitivity of the score is 1
for a count of misclassified rows. For the sum of squared errors DPpack uses
``(ub_y - lb_y)^2``, which bounds one row's change only if the row's target
and prediction both lie in ``[lb_y, ub_y]``; DPpack scores raw (unclipped)
targets and predictions, so its selection is not covered when either falls
outside. pydpowl clips both to the public target bounds before scoring
(post-processing of the release and a public map of the row), unless
``reproduce_dppack=True``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_array, check_binary_target, check_bool, check_vector, feature_names_of, resolve_rng
from ..engine.mechanisms import exponential_mechanism, exponential_mechanism_delta, is_r_stream
from ..exceptions import PrivacyLeakWarning
from .accountant import compose

__all__ = ["ModelSelection", "tune_classification_model", "tune_linear_regression_model", "split_rows",
           "regression_scores", "select_on_validation", "squared_error_score"]


@dataclass(frozen=True)
class ModelSelection:
    """The outcome of a private model selection.

    Attributes
    ----------
    model : estimator
        The selected candidate, fitted on its part of the rows (DPpack's return value).
    index : int
        Its position in the candidate list (0-based).
    models : tuple of estimators
        Every candidate, fitted on its own part (releasing them all is covered; see the module docstring).
    epsilon : float
        The guarantee of the whole selection: the largest candidate epsilon (the selection uses the first's).
    sensitivity : float
        Sensitivity of the score used by the exponential mechanism.
    n_validation : int
        Rows used to score the candidates (public: a function of n and the number of candidates).
    privacy_spent : (float, float)
        ``(epsilon, delta)`` of the whole selection: parallel composition over the disjoint parts, so the
        largest of the candidates' ``privacy_spent_`` and the exponential mechanism's (on the validation part,
        with ``selection_delta``).
    selection_delta : float
        The ``delta`` of the exponential mechanism's draw: 0 with a numpy
        Generator (its exact sampler); with an R stream (DPpack's inversion of
        one 32-bit uniform, replay) :func:`pydpowl.engine.mechanisms.exponential_mechanism_delta`.

    Every returned model has ``random_state=None``: the stream that drew the noise is not kept (rewinding it
    would regenerate the noise, and ``coef_`` minus the noise is the exact minimiser).
    """

    model: Any
    index: int
    models: Tuple[Any, ...]
    epsilon: float
    sensitivity: float
    n_validation: int
    privacy_spent: Tuple[float, float] = (0.0, 0.0)
    selection_delta: float = 0.0


def split_rows(n: int, m: int) -> Tuple[list, np.ndarray]:
    """Training rows of each of ``m`` candidates and the validation rows (DPpack's ``seq(i, n, m + 1)``)."""
    if m < 1:
        raise ValueError(f"models must hold at least one candidate, got {m}.")
    if n < m + 1:
        raise ValueError(f"X must have at least {m + 1} rows for {m} candidates (one part each plus a validation "
                         f"part), got {n}.")
    return [np.arange(i, n, m + 1) for i in range(m)], np.arange(m, n, m + 1)


def _candidates(models: Sequence[Any]) -> list:
    if isinstance(models, (str, bytes)) or not hasattr(models, "__len__") or len(models) == 0:
        raise TypeError(f"models must be a non-empty sequence of unfitted pydpowl estimators, got {models!r}.")
    return list(models)


def select_on_validation(n: int, m: int, fit: Callable[[int, np.ndarray], Any],
                         score: Callable[[Any, np.ndarray], float], *, epsilon: float, sensitivity: float,
                         rng: Any) -> Tuple[int, List[Any], np.ndarray]:
    """DPpack's tuning loop, for any kind of candidate (scikit-learn free).

    ``fit(i, rows)`` fits candidate ``i`` (0-based) privately on its rows (:func:`split_rows`) and returns it;
    ``score(fitted, validation_rows)`` is its score (smaller is better; PRIVATE, seen only by the mechanism).
    Candidates are fitted in turn, then scored, then one is chosen by the exponential mechanism on minus the
    scores with ``epsilon`` (the first candidate's, as DPpack) and ``sensitivity``; one stream ``rng`` serves
    the fits (through ``fit``) and the selection's uniform, DPpack's order.

    Returns
    -------
    (index, fitted candidates, validation rows)
    """
    parts, val = split_rows(n, m)
    fitted = [fit(i, rows) for i, rows in enumerate(parts)]
    scores = np.array([float(score(f, val)) for f in fitted])
    k = exponential_mechanism(-scores, epsilon=epsilon, sensitivity=sensitivity, rng=rng)
    return k, fitted, val


def squared_error_score(prediction: np.ndarray, y: np.ndarray, target_bounds: Tuple[float, float], *,
                        clip: bool = True) -> float:
    """Sum of squared validation errors (PRIVATE). With ``clip`` the targets and predictions are clipped to
    ``target_bounds`` first, so one row changes it by at most ``(ub - lb)^2``; without it (DPpack) by any
    amount."""
    lo, hi = target_bounds
    if clip:
        y, prediction = np.clip(y, lo, hi), np.clip(prediction, lo, hi)
    return float(np.sum((y - prediction) ** 2))


def _selection(k: int, fitted: list, *, sensitivity: float, n_val: int, rng: Any) -> ModelSelection:
    """The result, with every model's stream removed and the composed ``(epsilon, delta)``."""
    eps0 = float(fitted[0].epsilon)
    delta = exponential_mechanism_delta(epsilon=eps0, n_candidates=len(fitted), replay=is_r_stream(rng))
    for model in fitted:
        model.set_params(random_state=None)  # the live stream could be rewound to regenerate the noise
    # the exponential mechanism (first candidate's epsilon, on the validation part)
    spent = compose([m.privacy_spent_ for m in fitted] + [(eps0, delta)], "parallel")
    return ModelSelection(model=fitted[k], index=k, models=tuple(fitted),
                          epsilon=float(max(float(m.epsilon) for m in fitted)), sensitivity=sensitivity,
                          n_validation=n_val, privacy_spent=spent, selection_delta=delta)


def tune_classification_model(models: Sequence[Any], X: ArrayLike, y: ArrayLike, *,
                              sample_weight: Optional[ArrayLike] = None, random_state: Any = None,
                              classes: Optional[Sequence[Any]] = None) -> ModelSelection:
    """Choose among private classifiers (DPSVM, DPLogisticRegression) as DPpack's ``tune_classification_model``.

    Parameters
    ----------
    models : sequence of DPSVM or DPLogisticRegression
        Candidates with their public settings (bounds, intercept, epsilon, gamma, ...); they are cloned,
        never modified.
    X : array-like of shape (n, p)
    y : array-like of shape (n,)
        Two distinct labels (DPpack: 0 and 1), the same classes for every candidate.
    sample_weight : array-like of shape (n,), optional
        Weights (DPSVM with output perturbation only), split with the rows.
    random_state : None, int, numpy.random.Generator or RRandom
        One stream for everything: each candidate's fit in turn, then the selection's uniform (DPpack's order).
    classes : sequence of two labels, optional
        The classes (default: the two distinct values of ``y``); ``classes[1]`` is the positive class.

    Returns
    -------
    ModelSelection
    """
    from sklearn.base import clone

    from ..estimators.svm import DPSVM

    cands = _candidates(models)
    columns = feature_names_of(X)  # candidates' bounds given by name are matched to them
    Xa = check_array("X", X)
    n = Xa.shape[0]
    labels, y_pm = check_binary_target("y", y, length=n, classes=classes)
    y_pm = np.asarray(y_pm, dtype=np.float64)
    w = None if sample_weight is None else check_vector("sample_weight", sample_weight, length=n)
    split_rows(n, len(cands))
    rng = resolve_rng(random_state)

    def fit(i: int, rows: np.ndarray) -> Any:
        model = clone(cands[i])
        model.set_params(random_state=rng)  # after clone: the stream itself, not a copy
        if isinstance(model, DPSVM):
            return model._fit_checked(Xa[rows], y_pm[rows], None if w is None else w[rows], labels,
                                      columns=columns)
        if w is not None:
            raise ValueError(f"sample_weight is supported for DPSVM candidates only, got {type(model).__name__}.")
        return model._fit_checked(Xa[rows], y_pm[rows], labels, columns=columns)

    def misclassified(model: Any, val: np.ndarray) -> float:
        truth = np.where(y_pm[val] > 0, labels[1], labels[0])
        return float(np.count_nonzero(model.predict(Xa[val]) != truth))

    k, fitted, val = select_on_validation(n, len(cands), fit, misclassified, epsilon=cands[0].epsilon,
                                          sensitivity=1.0, rng=rng)
    return _selection(k, fitted, sensitivity=1.0, n_val=val.size, rng=rng)


def tune_linear_regression_model(models: Sequence[Any], X: ArrayLike, y: ArrayLike, *, random_state: Any = None,
                                 reproduce_dppack: bool = False) -> ModelSelection:
    """Choose among DPLinearRegression candidates as DPpack's ``tune_linear_regression_model``.

    The score is the sum of squared validation errors, with sensitivity ``(ub_y - lb_y)^2``
    from the candidates' common ``target_bounds``.

    Parameters
    ----------
    models : sequence of DPLinearRegression
        Candidates sharing ``target_bounds``; cloned, never modified.
    X : array-like of shape (n, p)
    y : array-like of shape (n,)
    random_state : None, int, numpy.random.Generator or RRandom
        One stream: each candidate's fit in turn, then the selection's uniform.
    reproduce_dppack : bool, default=False
        Score raw targets and predictions as DPpack does (not covered by the sensitivity when they leave
        the target bounds; emits PrivacyLeakWarning). By default both are clipped to the target bounds.

    Returns
    -------
    ModelSelection
    """
    from ..estimators.linear import DPLinearRegression, check_target_bounds

    cands = _candidates(models)
    if not all(isinstance(m, DPLinearRegression) for m in cands):
        raise TypeError("models must all be DPLinearRegression estimators.")
    check_bool("reproduce_dppack", reproduce_dppack)
    bounds = {check_target_bounds(m.target_bounds) for m in cands}
    if len(bounds) != 1:
        raise ValueError(f"every candidate must have the same target_bounds (they set the sensitivity), got "
                         f"{sorted(bounds)}.")
    lo, hi = bounds.pop()
    if reproduce_dppack:
        warnings.warn("tune_linear_regression_model(reproduce_dppack=True) scores unclipped targets and "
                      "predictions as DPpack does: the sensitivity (ub_y - lb_y)^2 does not cover rows outside "
                      "the target bounds.", PrivacyLeakWarning, stacklevel=2)
    from sklearn.base import clone

    frame: Any = X if feature_names_of(X) is not None else None  # a DataFrame's rows keep their column names
    Xa = check_array("X", X)
    n = Xa.shape[0]
    ya = check_vector("y", y, length=n)
    split_rows(n, len(cands))
    rng = resolve_rng(random_state)

    def rows_of(rows: np.ndarray) -> Any:
        return Xa[rows] if frame is None else frame.iloc[rows]

    def fit(i: int, rows: np.ndarray) -> Any:
        model = clone(cands[i])
        model.set_params(random_state=rng)
        return model.fit(rows_of(rows), ya[rows])

    def sse(model: Any, val: np.ndarray) -> float:
        return squared_error_score(model.predict(rows_of(val)), ya[val], (lo, hi), clip=not reproduce_dppack)

    sens = (hi - lo) * (hi - lo)
    k, fitted, val = select_on_validation(n, len(cands), fit, sse, epsilon=cands[0].epsilon, sensitivity=sens,
                                          rng=rng)
    return _selection(k, fitted, sensitivity=sens, n_val=val.size, rng=rng)


def regression_scores(models: Sequence[Any], X: np.ndarray, y: np.ndarray, target_bounds: Tuple[float, float], *,
                      clip: bool = True) -> np.ndarray:
    """Sum of squared validation errors per model (PRIVATE: only the exponential mechanism may see them).

    With ``clip`` the targets and predictions are clipped to ``target_bounds`` first, so one row changes a
    score by at most ``(ub - lb)^2``; without it (DPpack) by any amount.
    """
    return np.array([squared_error_score(m.predict(X), y, target_bounds, clip=clip) for m in models])
