"""Multi-arm DP-OWL: treatment labels, arm propensities, the K-arm DP-wERM problem and its release.

A rule for ``K >= 2`` arms is the angle-based linear rule of
:mod:`pydpowl.engine.multicategory`: ``Theta`` is ``(K-1) x d`` (intercept
first in each row, DPpack's scaled space) and the rule recommends
``argmax_a <V_a, Theta z>``. Its weighted objective is the binary weighted
ERM objective over expanded rows ``V_a kron z`` (norm <= 1), so it is
minimised by the one solver and released by two-arm DP-OWL's mechanisms
(:mod:`pydpowl.estimators.owl_mechanism`) in ``(K-1) d`` coordinates: by
default weighted objective perturbation with residual weights (C = 0), else
output perturbation with Theorem 7's sensitivity in Frobenius norm
(docs/privacy_audit.md, "Multi-arm rules" and "K arms: weighted objective
perturbation").

* :func:`encode_arms`: treatment labels of any kind -> sorted ``classes`` and
  integer codes (the arms' order is the sorted labels');
* :func:`resolve_arm_propensity`: ``P(A_i | x_i)`` of the received arm, the
  weight sensitivity ``C`` and the public propensity floor, from a scalar
  ``1/K``, a mapping ``{arm: probability}``, a vector of received-arm
  probabilities or an ``(n, K)`` matrix;
* :func:`prepare_arm_problem`: the problem (also used stage by stage by
  :class:`~pydpowl.estimators.multistage.DPMultiStageOWL`, with signed
  weights for residual outcomes); :func:`release_arm_rule`: its output
  perturbation (validation's cross-checks and the tests);
* :class:`ArmRule`: a released rule (public), which scores and recommends.

:class:`pydpowl.DPOWL` uses these for ``K >= 3`` labels; with two arms the
problem is DP-OWL's own (:func:`~pydpowl.engine.multicategory.expand_rows`
keeps the rows and codes the arms -1/+1), so the release is the same.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import _check_finite, check_choice, check_positive, position_base, said
from ..engine.losses import HuberHingeLoss
from ..engine.multicategory import arm_scores, expand_rows, recommend, simplex_vertices
from ..engine.preprocessing import FeatureScaler
from ..engine.mechanisms import OutputRelease, is_r_stream, release_output_perturbation
from .propensity import LogisticPropensity, _stated_C, propensity_constants

__all__ = ["encode_arms", "ArmPropensity", "resolve_arm_propensity", "ArmProblem", "prepare_arm_problem",
           "release_arm_rule", "ArmRule", "PROBABILITY_SUM_TOL"]

#: how far a row of arm probabilities (or a mapping's values) may sum from 1
PROBABILITY_SUM_TOL = 1e-6


def encode_arms(name: str, values: ArrayLike, *, length: Optional[int] = None,
                index_base: Optional[int] = None) -> Tuple[NDArray[Any], NDArray[np.intp]]:
    """Treatment labels of any kind as ``(classes, codes)``.

    ``classes`` are the distinct labels, sorted (numbers numerically, strings
    alphabetically: scikit-learn's ``classes_``); ``codes[i]`` is the position
    of ``values[i]`` in ``classes``. The labels are treated as public (a
    study's arm names), as a classifier's ``classes_`` are.

    Raises
    ------
    TypeError
        For labels that mix numbers and strings, or are neither.
    ValueError
        For a wrong length, missing or non-finite labels, or fewer than two
        distinct arms (nothing to choose between).
    """
    index_base = position_base(index_base)  # None: the caller's (caller_words), else 0
    name = said(name)
    arr = np.asarray(values)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one label per subject), got shape {arr.shape}.")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have length {length} (one label per subject), got length {arr.shape[0]}.")
    if arr.dtype == object:
        kinds = {type(v) for v in arr}
        numeric = all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) for v in arr)
        if numeric:
            arr = arr.astype(np.float64)
        elif all(isinstance(v, str) for v in arr):
            arr = arr.astype(str)
        else:
            missing = [i for i, v in enumerate(arr) if v is None or (isinstance(v, float) and math.isnan(v))]
            if missing:
                raise ValueError(f"{name} has {len(missing)} missing labels (first at position "
                                 f"{missing[0] + index_base}); every subject needs the arm received.")
            raise TypeError(f"{name} must hold numbers or strings, not a mix of "
                            f"{sorted(k.__name__ for k in kinds)}.")
    if arr.dtype.kind == "b":
        raise TypeError(f"{name} must hold numbers or strings (arm labels), got booleans.")
    if arr.dtype.kind in "fc":
        if arr.dtype.kind == "c":
            raise TypeError(f"{name} must hold real numbers or strings, got complex numbers.")
        _check_finite(name, arr, index_base=index_base)  # the one message for NaN and infinite entries
    elif arr.dtype.kind not in "iuUS":
        raise TypeError(f"{name} must hold numbers or strings, got dtype {arr.dtype}.")
    classes, codes = np.unique(arr, return_inverse=True)
    if classes.size < 2:
        raise ValueError(f"{name} must contain at least two arms (a rule chooses between treatments); all "
                         f"{arr.shape[0]} entries are {_label_text(classes[0])} (one class only)." if arr.shape[0] else
                         f"{name} is empty: at least two arms are needed.")
    return classes, codes.astype(np.intp)


@dataclass(frozen=True, eq=False)
class ArmPropensity:
    """``P(A_i | x_i)`` of the received arm, what the weights' sensitivity is, and a public floor.

    Attributes
    ----------
    probability : ndarray of shape (n,)
        Private for estimated propensities; a design constant per arm otherwise.
    C : float
        The weight sensitivity (0 for known randomisation probabilities).
    floor : float or None
        The smallest probability the design allows (public: known probabilities only).
    """

    probability: NDArray[np.float64]
    C: float
    floor: Optional[float]


def resolve_arm_propensity(propensity: Any, classes: NDArray[Any], codes: NDArray[np.intp], *,
                           weight_sensitivity: Any = None, weights_upper_bound: float = 1.0,
                           name: str = "propensity", index_base: Optional[int] = None) -> ArmPropensity:
    """``P(A_i | x_i)`` of the arm each subject received, for ``K = len(classes)`` arms.

    ``propensity`` may be

    * a number: with two arms the randomisation probability of the second arm
      ``classes[1]`` (as :class:`pydpowl.DPOWL`); with ``K >= 3`` arms it must
      be ``1/K`` (balanced randomisation);
    * a mapping ``{arm label: probability}`` naming every arm, each in (0, 1],
      summing to 1 (a design with unequal allocation);
    * a vector of length n: ``P(A_i | x_i)`` of the received arm, in (0, 1];
    * an ``(n, K)`` array: ``P(A = a | x_i)`` for every arm (columns in the
      order of ``classes``), rows summing to 1.

    Scalars and mappings are public design constants (C = 0 unless
    ``weight_sensitivity`` states more); arrays need ``weight_sensitivity``
    stated, as for :class:`pydpowl.DPOWL`. Positions in messages count from
    ``index_base`` (1 for R).

    Raises
    ------
    ValueError
        For probabilities outside (0, 1], a scalar other than 1/K with three
        or more arms, probabilities that do not sum to 1 across arms, a
        mapping that misses or adds arms, a wrong shape, or an array without
        a stated weight sensitivity.
    TypeError
        For a LogisticPropensity with three or more arms, or another kind of value.
    """
    index_base = position_base(index_base)  # None: the caller's (caller_words), else 0
    name = said(name)
    K, n = len(classes), codes.shape[0]
    stated = _stated_C(weight_sensitivity, n, weights_upper_bound)  # the binary rule's statement of C
    if isinstance(propensity, LogisticPropensity):
        raise TypeError(f"{name}: a LogisticPropensity models two arms; with {K} arms give the design's "
                        "probabilities (1/K, a mapping {arm: probability}) or an (n, K) array of P(A = a | x).")
    if isinstance(propensity, (bool, np.bool_, str)):
        raise TypeError(f"{name} must be a number, a mapping {{arm: probability}} or an array of probabilities, "
                        f"got {type(propensity).__name__}.")
    if isinstance(propensity, numbers.Real):
        pi = float(propensity)
        if not (0.0 < pi < 1.0):
            raise ValueError(f"{name} must be in (0, 1), got {name}={pi!r}.")
        if K == 2:
            probs = np.array([1.0 - pi, pi])
        elif abs(pi * K - 1.0) > PROBABILITY_SUM_TOL:
            raise ValueError(f"{name}={pi!r}: a single number means balanced randomisation, P(A = a) = 1/K = "
                             f"{1.0 / K:.6g} for K={K} arms; for unequal allocation give a mapping "
                             f"{{arm: probability}} summing to 1, or an (n, K) array.")
        else:
            probs = np.full(K, 1.0 / K)
        return ArmPropensity(probs[codes], 0.0 if stated is None else stated, float(probs.min()))
    if isinstance(propensity, Mapping):
        keys = list(propensity.keys())
        lookup: Dict[Any, float] = {}
        for key in keys:
            value = propensity[key]
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) \
                    or not (0.0 < float(value) <= 1.0):
                raise ValueError(f"{name}[{key!r}] must be a probability in (0, 1], got {value!r}.")
            lookup[key] = float(value)
        wanted = [c.item() if hasattr(c, "item") else c for c in classes]
        missing = [c for c in wanted if c not in lookup]
        extra = [k for k in keys if k not in set(wanted)]
        if missing or extra:
            raise ValueError(f"{name} must give a probability for exactly the arms {wanted}; missing {missing}, "
                             f"not among the arms {extra}.")
        probs = np.array([lookup[c] for c in wanted])
        total = math.fsum(probs)
        if abs(total - 1.0) > PROBABILITY_SUM_TOL:
            raise ValueError(f"{name}: the probabilities of the {K} arms must sum to 1 (they are the randomisation "
                             f"probabilities), got {total!r}.")
        return ArmPropensity(probs[codes], 0.0 if stated is None else stated, float(probs.min()))
    arr = np.asarray(propensity)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name} must hold numbers, got dtype {arr.dtype}.")
    arr = arr.astype(np.float64)
    if arr.ndim == 1 or (arr.ndim == 2 and arr.shape[1] == 1 and K != 1):
        arr = arr.ravel()
        if arr.shape[0] != n:
            raise ValueError(f"{name} must have length {n} (one per subject), got length {arr.shape[0]}.")
        bad = ~((arr > 0.0) & (arr <= 1.0))
        if bad.any():
            raise ValueError(f"{name} must lie in (0, 1] (P(A_i | x_i) of the received arm); {int(bad.sum())} of "
                             f"{n} entries do not (first at position {int(np.flatnonzero(bad)[0]) + index_base}).")
        return ArmPropensity(arr, _array_C(arr, n, weight_sensitivity, weights_upper_bound, name), None)
    if arr.ndim != 2 or arr.shape != (n, K):
        raise ValueError(f"{name} as a matrix must have shape (n, K) = ({n}, {K}) (one column per arm, in the "
                         f"order of classes_), got shape {arr.shape}.")
    bad = ~((arr >= 0.0) & (arr <= 1.0))
    if bad.any():
        rows = np.flatnonzero(bad.any(axis=1))
        raise ValueError(f"{name} must lie in [0, 1]; {rows.size} of {n} rows do not (first at row "
                         f"{int(rows[0]) + index_base}).")
    sums = arr.sum(axis=1)
    off = np.abs(sums - 1.0) > PROBABILITY_SUM_TOL
    if off.any():
        raise ValueError(f"{name}: each row must sum to 1 across the {K} arms (P(A = a | x_i) for every arm); "
                         f"{int(off.sum())} of {n} rows do not (first at row "
                         f"{int(np.flatnonzero(off)[0]) + index_base}).")
    received = arr[np.arange(n), codes]
    zero = received <= 0.0
    if zero.any():
        raise ValueError(f"{name}: the probability of the received arm must be > 0; {int(zero.sum())} of {n} "
                         f"subjects received an arm of probability 0 (first at row "
                         f"{int(np.flatnonzero(zero)[0]) + index_base}).")
    return ArmPropensity(received, _array_C(received, n, weight_sensitivity, weights_upper_bound, name), None)


def _array_C(probabilities: NDArray[np.float64], n: int, weight_sensitivity: Any, weights_upper_bound: float,
             name: str = "propensity") -> float:
    """The C stated for propensities given as an array (the rule of :func:`~.propensity.propensity_constants`:
    no default)."""
    return propensity_constants(probabilities, n, weight_sensitivity=weight_sensitivity,
                                weights_upper_bound=weights_upper_bound, name=name)[0]


@dataclass(frozen=True, eq=False)
class ArmProblem:
    """A K-arm OWL fit's data as a DP-wERM problem (made by :func:`prepare_arm_problem`).

    ``rows``, ``labels`` and ``weights`` are private and ready for the one
    release; the rest is public (settings and n) or a diagnostic count.

    Attributes
    ----------
    rows : ndarray of shape (n, (K - 1) d)
        Expanded rows ``V_{a_i} kron z_i`` (``z_i`` for two arms), each of norm at most 1.
    labels : ndarray of shape (n,)
        ``+-1``: the sign of each subject's outcome (times the arm's vertex for two arms).
    weights : ndarray of shape (n,)
        ``min(|B_i| / P(A_i | x_i), W)``.
    n_arms, n_coefficients : int
        K and d (intercept included).
    weight_sensitivity, weights_upper_bound : float
        C and W.
    n_clipped_weights, n_negative : int
        Weights clipped at W; outcomes below 0 (residuals: their labels are flipped). Diagnostics.
    """

    rows: NDArray[np.float64]
    labels: NDArray[np.float64]
    weights: NDArray[np.float64]
    n_arms: int
    n_coefficients: int
    weight_sensitivity: float
    weights_upper_bound: float
    n_clipped_weights: int = 0
    n_negative: int = 0

    @property
    def n_samples(self) -> int:
        return int(self.rows.shape[0])


def prepare_arm_problem(Z: NDArray[np.float64], codes: NDArray[np.intp], n_arms: int,
                        outcome: NDArray[np.float64], probability: NDArray[np.float64], *,
                        weights_upper_bound: float, weight_sensitivity: float = 0.0) -> ArmProblem:
    """The K-arm DP-wERM problem of rows ``Z`` (scaled, norm <= 1), arms, outcomes and propensities.

    The weight of subject ``i`` is ``min(|B_i| / p_i, W)`` (clipped by design,
    counted) and its label the sign of ``B_i``: a positive outcome pulls the
    rule towards the received arm, a negative one (a residual below its
    baseline) pushes it away, ``|B| l(-<V_a, f>)``; with non-negative outcomes
    this is OWL's ``B / p``. Either way each weight is a function of the
    subject's own record (and of public quantities), so it adds nothing to C.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
    codes : ndarray of int of shape (n,)
        The received arms (indices into ``classes``).
    n_arms : int
    outcome : ndarray of shape (n,)
        ``B_i`` (any sign).
    probability : ndarray of shape (n,)
        ``P(A_i | x_i)`` of the received arm, in (0, 1].
    weights_upper_bound : float
    weight_sensitivity : float, default=0.0
    """
    w_max = check_positive("weights_upper_bound", weights_upper_bound)
    vertices = simplex_vertices(n_arms)
    signs = np.where(outcome < 0.0, -1.0, 1.0)
    w = np.abs(outcome) / probability
    over = w > w_max
    n_over = int(np.count_nonzero(over))
    if n_over:
        np.putmask(w, over, w_max)
    rows, labels = expand_rows(Z, codes, signs, vertices)
    return ArmProblem(rows=rows, labels=labels, weights=w, n_arms=int(n_arms), n_coefficients=int(Z.shape[1]),
                      weight_sensitivity=float(weight_sensitivity), weights_upper_bound=w_max,
                      n_clipped_weights=n_over, n_negative=int(np.count_nonzero(signs < 0)))


def release_arm_rule(problem: ArmProblem, *, epsilon: float, gamma: float, huber_h: float = 0.5,
                     tol: float, rng: Any, reproduce_dppack: bool = False) -> OutputRelease:
    """The one output-perturbation release of a K-arm problem (``coef`` has ``(K - 1) d`` entries, ``vec(Theta)``).

    Delta is Theorem 7's, ``(L (C + 2W) + 2 n tol) / gamma``, now a bound on the
    Frobenius norm of ``Theta(D) - Theta(D')`` (docs/privacy_audit.md), and the
    noise is the l2-Laplace law in dimension ``(K - 1) d``, rounded to the grid by
    the one rounding function.
    """
    return release_output_perturbation(problem.rows, problem.labels, problem.weights, epsilon=epsilon, gamma=gamma,
                                       weights_upper_bound=problem.weights_upper_bound,
                                       loss=HuberHingeLoss(huber_h), C=problem.weight_sensitivity, tol=tol,
                                       reproduce_dppack=reproduce_dppack, rng=rng)


@dataclass(frozen=True, eq=False)
class ArmRule:
    """A released linear rule for K arms (public: computed from the release only).

    Attributes
    ----------
    classes : ndarray of shape (K,)
        The arm labels, sorted.
    scaled_coef : ndarray of shape (K - 1, d)
        ``Theta`` in the scaled space (intercept first): the release.
    scaler : FeatureScaler
        The public feature map.
    """

    classes: NDArray[Any]
    scaled_coef: NDArray[np.float64]
    scaler: FeatureScaler

    @property
    def n_arms(self) -> int:
        return int(len(self.classes))

    @property
    def vertices(self) -> NDArray[np.float64]:
        """The arms' simplex vertices, one row per arm."""
        return simplex_vertices(self.n_arms)

    @property
    def original_coef(self) -> NDArray[np.float64]:
        """``Theta`` in the original feature space, ``(K - 1) x d`` (intercept first when fitted)."""
        return self.scaler.coef_to_original(self.scaled_coef)

    @property
    def intercept(self) -> NDArray[np.float64]:
        """The ``K - 1`` intercepts (zeros without an intercept)."""
        full = self.original_coef
        return full[:, 0].copy() if self.scaler.fit_intercept else np.zeros(full.shape[0])

    @property
    def coef(self) -> NDArray[np.float64]:
        """The ``(K - 1, p)`` feature coefficients of the decision function."""
        full = self.original_coef
        return full[:, 1:].copy() if self.scaler.fit_intercept else full

    def decision_values(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """``f(x) = intercept + coef x`` in ``R^(K-1)`` for each row (features are not clipped, as DPpack)."""
        return X @ self.coef.T + self.intercept

    def scores(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """``<V_a, f(x)>`` per arm: shape (n, K); the rule recommends the largest."""
        return arm_scores(self.decision_values(X), self.vertices)

    def predict(self, X: NDArray[np.float64]) -> NDArray[Any]:
        """The recommended arm labels."""
        return self.classes[recommend(self.scores(X))]

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready public content: arm labels, Theta (original space), bounds and the vertices' convention."""
        return {"classes": [c.item() if hasattr(c, "item") else c for c in self.classes],
                "intercept": self.intercept.tolist(), "coef": self.coef.tolist(),
                "feature_bounds": [self.scaler.lower.tolist(), self.scaler.upper.tolist()],
                "vertices": "angle-based simplex (pydpowl.engine.multicategory.simplex_vertices)"}


def _label_text(label: Any) -> str:
    """A label for messages: numbers as written (``1``, ``2.5``), strings quoted (``'a'``)."""
    value = label.item() if hasattr(label, "item") else label
    return f"{value:g}" if isinstance(value, numbers.Real) else repr(str(value))


def arm_labels_text(classes: Union[Sequence[Any], NDArray[Any]]) -> str:
    """``'a', 'b', 'c'`` (or ``0, 1, 2``) for messages."""
    return ", ".join(_label_text(c) for c in classes)


def fit_multiarm_owl(estimator: Any, X: ArrayLike, classes: NDArray[Any], codes: NDArray[np.intp], benefit: ArrayLike,
                     propensity: Any, names: Optional[list]) -> Any:
    """:meth:`pydpowl.DPOWL.fit` for three or more arms: set the fitted attributes of ``estimator`` and return it.

    The settings are the estimator's (checked here before the data are used).
    The problem is :func:`prepare_arm_problem`'s expanded rows; the plan and
    the release are two-arm DP-OWL's (:func:`~.owl_mechanism.plan_rule`,
    :func:`~.owl_mechanism.release_rule`): by default (C = 0, the benefit's
    public range known from ``benefit_bounds`` or from W and the design's
    smallest probability) weighted objective perturbation with residual
    weights in ``(K - 1) d`` coordinates, otherwise output perturbation
    (docs/privacy_audit.md, "K arms: weighted objective perturbation").
    ``scaled_coef_`` is ``Theta`` (``(K-1) x d``, scaled space, the release),
    ``coef_`` and ``intercept_`` its original-space form (post-processing).
    """
    from .._base import store_feature_names
    from .._validation import (check_array, check_bool, check_diagnose_bounds, check_epsilon, diagnose_bounds,
                               resolve_rng)
    from ..engine.preprocessing import bounds_from_data
    from .benefits import shift_benefits
    from .inputs import check_benefit
    from .owl_mechanism import (AUTO, MECHANISM_CHOICES, check_residual, plan_rule, release_rule, rule_privacy_spent,
                                store_plan_attributes)
    from .residual import check_benefit_bounds

    eps = check_epsilon(estimator.epsilon)
    for name in ("gamma", "huber_h"):
        if getattr(estimator, name) != AUTO:
            check_positive(name, getattr(estimator, name))
    check_choice("mechanism", estimator.mechanism, MECHANISM_CHOICES)
    check_residual(estimator.residual)
    w_max = check_positive("weights_upper_bound", estimator.weights_upper_bound)
    tol = check_positive("tol", estimator.tol)
    fit_intercept = check_bool("fit_intercept", estimator.fit_intercept)
    if check_bool("reproduce_dppack", estimator.reproduce_dppack):
        raise ValueError(f"reproduce_dppack=True reproduces DPpack's svmDP, which has two arms; treatment has "
                         f"{len(classes)} ({arm_labels_text(classes)}).")
    lo_hi = None if estimator.benefit_bounds is None else check_benefit_bounds(estimator.benefit_bounds)
    X = check_array("X", X)
    n, p = X.shape
    if codes.shape[0] != n:
        raise ValueError(f"treatment must have length {n} (one per row of X), got length {codes.shape[0]}.")
    bounds = estimator.feature_bounds
    if isinstance(bounds, str) and bounds == "data":
        bounds = bounds_from_data(X)  # emits PrivacyLeakWarning: the guarantee is void
    scaler = FeatureScaler.from_bounds(bounds, p, fit_intercept, columns=names)  # bounds by name: X's columns
    diagnose_bounds(X, scaler.lower, scaler.upper, check_diagnose_bounds(estimator.diagnose_bounds), columns=names,
                    owner="DPOWL")
    n_clipped_b = 0
    if lo_hi is not None:  # shifted by the public lower bound (so benefits may be negative), clipped, counted
        shifted, n_clipped_b = shift_benefits(benefit, lo_hi[0], lo_hi[1])
        B = check_benefit(shifted, n)
    else:
        B = check_benefit(benefit, n)
    prop = resolve_arm_propensity(propensity, classes, codes, weight_sensitivity=estimator.weight_sensitivity,
                                  weights_upper_bound=w_max)
    # the benefit's public range: given, or the one W implies for known design probabilities (B / p <= W for
    # every arm: B <= W min_a p_a), as two-arm DPOWL's W min(p, 1 - p)
    benefit_range = (lo_hi[1] - lo_hi[0]) if lo_hi is not None else (
        w_max * prop.floor if prop.floor is not None else None)
    Z, n_clipped_x = scaler.transform_checked(X)
    K = len(classes)
    problem = prepare_arm_problem(Z, codes, K, B, prop.probability, weights_upper_bound=w_max,
                                  weight_sensitivity=prop.C)
    plan = plan_rule(mechanism=estimator.mechanism, residual=estimator.residual, gamma=estimator.gamma,
                     huber_h=estimator.huber_h, epsilon=eps, n_samples=n, dim=problem.rows.shape[1],
                     weights_upper_bound=w_max, C=prop.C, reproduce_dppack=False, benefit_range=benefit_range)
    rel = release_rule(problem.rows, problem.labels, problem.weights, plan=plan, C=prop.C, tol=tol,
                       reproduce_dppack=False, rng=resolve_rng(estimator.random_state), benefit=B,
                       propensity_received=prop.probability, n_clipped_weights=problem.n_clipped_weights)
    rule = ArmRule(classes=classes, scaled_coef=rel.coef.reshape(K - 1, -1), scaler=scaler)
    estimator.classes_ = classes
    estimator.scaler_ = scaler
    estimator.scaled_coef_ = rule.scaled_coef
    estimator.coef_, estimator.intercept_ = rule.coef, rule.intercept
    estimator.release_grid_ = rel.grid
    estimator.sensitivity_ = rel.sensitivity
    estimator.sampler_model_ = "R" if is_r_stream(estimator.random_state) else "numpy"
    estimator.privacy_spent_ = rule_privacy_spent(rel, reproduce_dppack=False, stream=estimator.sampler_model_)
    estimator.weight_sensitivity_ = prop.C
    store_plan_attributes(estimator, plan, ridge=rel.ridge, noise_scale=rel.noise_scale,
                          baseline=None if rel.baseline is None else rel.baseline.value,
                          n_clipped_residuals=rel.n_clipped_residuals)
    estimator.n_iter_ = rel.n_iter
    estimator.n_samples_ = n
    estimator.n_features_in_ = p
    estimator.n_clipped_weights_ = rel.n_clipped_weights
    estimator.n_clipped_features_ = n_clipped_x
    estimator.n_clipped_logits_ = 0
    estimator.n_clipped_benefits_ = n_clipped_b + rel.n_clipped_benefits
    store_feature_names(estimator, names)  # prediction matches a DataFrame's columns by name
    if estimator.keep_nonprivate:
        estimator.nonprivate_scaled_coef_ = rel.minimiser.reshape(K - 1, -1)
        full = scaler.coef_to_original(estimator.nonprivate_scaled_coef_)
        estimator.nonprivate_intercept_ = full[:, 0] if fit_intercept else np.zeros(K - 1)
        estimator.nonprivate_coef_ = full[:, 1:] if fit_intercept else full
        estimator.noise_scaled_ = rel.noise.reshape(K - 1, -1)
    return estimator
