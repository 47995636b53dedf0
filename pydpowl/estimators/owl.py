"""DP-OWL: outcome weighted learning of a treatment rule with DP-wERM.

:func:`prepare_owl` turns the data into a DP-wERM problem (an
:class:`OWLProblem`): OWL weights ``w_i = B_i / P(A_i | x_i)`` (clipped at the
public bound W, counted; benefits clipped at C_B when a propensity model
fitted on private data supplies C, counted), the features scaled exactly as
DPpack's ``svmDP`` (linear kernel), and the weight sensitivity C.
:class:`DPOWL` fits it with the one release of
:class:`~pydpowl.estimators.werm.DPWeightedERM`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base import DPEstimator, check_is_fitted, check_prediction_input
from .._validation import (
    check_array,
    check_bool,
    check_both_arms,
    check_epsilon,
    check_labels,
    check_nonnegative,
    check_positive,
    check_vector,
    feature_names_of,
    resolve_rng,
)
from ..engine.preprocessing import FeatureScaler, bounds_from_data
from .chunked import is_chunked, prepare_owl_chunked
from .propensity import resolve_propensity
from .summary import FitSummary
from ..engine.mechanisms import warn_reproduce_dppack
from .werm import DEFAULT_TOL, DPWeightedERM, release_notes

__all__ = ["DPOWL", "OWLProblem", "prepare_owl", "owl_weights", "clip_benefits", "check_benefit"]

#: why benefits must be non-negative, and what to do (the message of :func:`check_benefit`)
BENEFIT_WHY = "OWL weights are B / P(A | x)"
BENEFIT_HINT = "Shift benefits by a public lower bound with pydpowl.shift_benefits(benefit, lower_bound=...)."


def check_benefit(benefit: ArrayLike, n: int) -> NDArray[np.float64]:
    """Benefits as a finite, non-negative float vector of length ``n``."""
    B = check_vector("benefit", benefit, length=n)
    check_nonnegative("benefit", B, why=BENEFIT_WHY, hint=BENEFIT_HINT)
    return B


def clip_benefits(benefit: NDArray[np.float64], benefit_bound: Optional[float]):
    """``min(B, C_B)`` and the number clipped, when C relies on the bound C_B (else B unchanged, 0).

    A propensity model fitted on the private data bounds the weight sensitivity
    only for benefits in [0, C_B]; larger ones are clipped by design and counted.
    """
    if benefit_bound is None:
        return benefit, 0
    over = benefit > benefit_bound
    return np.where(over, benefit_bound, benefit), int(np.count_nonzero(over))


def owl_weights(benefit: NDArray[np.float64], propensity_received: NDArray[np.float64],
                weights_upper_bound: float):
    """``min(B / p, W)`` and the number of weights clipped at W."""
    w = np.asarray(benefit / propensity_received)
    over = w > weights_upper_bound
    n_over = int(np.count_nonzero(over))
    if n_over:
        np.putmask(w, over, weights_upper_bound)  # in place: no second array of n weights
    return w, n_over


@dataclass(frozen=True, eq=False)
class OWLProblem:
    """A DP-OWL fit's data as a DP-wERM problem, made by :func:`prepare_owl`.

    Everything in it is either public (``scaler``, ``weight_sensitivity``,
    ``weights_upper_bound``: functions of the public settings and n) or
    private data ready for the one release
    (:func:`pydpowl.engine.mechanisms.output.release_output_perturbation`): rows of norm
    at most 1, labels in {-1, 1}, weights in [0, W].

    Attributes
    ----------
    Z : ndarray of shape (n, d)
        Clipped and scaled rows (intercept column first when fitted), each of
        l2 norm at most 1; a Dask array for Dask inputs.
    labels : ndarray of shape (n,)
        Received treatments in {-1, 1} (the DP-wERM labels).
    weights : ndarray of shape (n,)
        OWL weights ``min(min(B, C_B) / P(A | x), W)`` in [0, W].
    weight_sensitivity : float
        C, the bound on the total change of the other subjects' weights when
        one subject is replaced (:func:`~pydpowl.estimators.propensity.propensity_constants`).
    weights_upper_bound : float
        W, the public bound on the weights.
    scaler : FeatureScaler
        The public map to the scaled space (and back, for coefficients).
    n_clipped_weights, n_clipped_features, n_clipped_logits, n_clipped_benefits : int
        How many weights (at W), feature entries (to their bounds), propensity
        logits (to [-M, M]) and benefits (at C_B) were clipped by design.
        Computed from the private data: diagnostics, not releases.
    """

    Z: Any
    labels: Any
    weights: Any
    weight_sensitivity: float
    weights_upper_bound: float
    scaler: FeatureScaler
    n_clipped_weights: int = 0
    n_clipped_features: int = 0
    n_clipped_logits: int = 0
    n_clipped_benefits: int = 0

    @property
    def n_samples(self) -> int:
        """n, the number of subjects."""
        return int(self.Z.shape[0])


def prepare_owl(X: ArrayLike, treatment: ArrayLike, benefit: ArrayLike, propensity: Any = 0.5, *,
                weights_upper_bound: float, feature_bounds: Any, fit_intercept: bool = True,
                weight_sensitivity: Any = None) -> OWLProblem:
    """Validate the data and turn it into the DP-wERM problem of DP-OWL (the one preparation).

    The settings are those of :class:`DPOWL` (public, fixed before seeing the
    data); :meth:`DPOWL.fit` uses this function, and so may validation tools
    and studies that need the weights or the scaled rows without a fit. Dask
    inputs are prepared chunk by chunk
    (:func:`~pydpowl.estimators.chunked.prepare_owl_chunked`; docs/dask.md).

    Parameters
    ----------
    X : array-like or DataFrame of shape (n, p)
    treatment : array-like of shape (n,)
        Received treatment in {-1, 1}; both arms must occur.
    benefit : array-like of shape (n,)
        Non-negative benefit (larger is better).
    propensity : float, array-like or LogisticPropensity, default=0.5
        As in :meth:`DPOWL.fit`.
    weights_upper_bound, feature_bounds, fit_intercept, weight_sensitivity
        As in :class:`DPOWL`.

    Returns
    -------
    OWLProblem
    """
    w_max = check_positive("weights_upper_bound", weights_upper_bound)
    fit_intercept = check_bool("fit_intercept", fit_intercept)
    if is_chunked(X, treatment, benefit, propensity):  # Dask inputs: prepared per chunk (estimators.chunked)
        return prepare_owl_chunked(X, treatment, benefit, propensity, weights_upper_bound=w_max,
                                   feature_bounds=feature_bounds, fit_intercept=fit_intercept,
                                   weight_sensitivity=weight_sensitivity)
    X = check_array("X", X)
    n, p = X.shape
    bounds = feature_bounds
    if isinstance(bounds, str) and bounds == "data":
        bounds = bounds_from_data(X)  # emits PrivacyLeakWarning: the guarantee is void
    scaler = FeatureScaler.from_bounds(bounds, p, fit_intercept)
    A = check_labels("treatment", treatment, length=n)
    check_both_arms("treatment", A)
    B = check_benefit(benefit, n)
    resolved = resolve_propensity(propensity, X, A, weight_sensitivity=weight_sensitivity, weights_upper_bound=w_max)
    B, n_clipped_b = clip_benefits(B, resolved.benefit_bound)
    w, n_clipped_w = owl_weights(B, resolved.probability, w_max)
    Z, n_clipped_x = scaler.transform_checked(X)
    return OWLProblem(Z=Z, labels=A, weights=w, weight_sensitivity=float(resolved.C), weights_upper_bound=w_max,
                      scaler=scaler, n_clipped_weights=n_clipped_w, n_clipped_features=n_clipped_x,
                      n_clipped_logits=resolved.n_clipped_logits, n_clipped_benefits=n_clipped_b)


class DPOWL(DPEstimator):
    """Differentially private outcome weighted learning (linear rule).

    Learns ``f(x) = intercept + x'coef`` and the rule ``sign(f(x))`` by
    minimising the weighted Huber-hinge objective with OWL weights, then
    perturbs the solution (Algorithm 1). Equivalent to DPpack's
    ``svmDP$new("l2", eps, gamma, perturbation.method = "output", huber.h = h)``
    fitted with ``weights = B / P(A | x)`` and ``weights.upper.bound = W``
    (bit for bit with ``reproduce_dppack=True``, for validation only).

    Parameters
    ----------
    epsilon : float
        Privacy budget in (0, inf]; ``inf`` releases the exact (non-private) rule.
    gamma : float
        Regularisation constant in (0, inf) (DPpack's convention).
    weights_upper_bound : float
        Public bound W on the OWL weights; larger weights are clipped to W (by
        design; counted in ``n_clipped_weights_``).
    feature_bounds : tuple (lower, upper) or "data"
        Public per-feature bounds, each of length p. Features are clipped to them
        (by design; counted in ``n_clipped_features_``). ``"data"`` reads them off
        the training data for exploration only: it emits
        :class:`PrivacyLeakWarning` because the privacy guarantee is then void.
    huber_h : float, default=0.5
        Huber smoothing parameter h.
    fit_intercept : bool, default=True
        Prepend a column of ones (bounds [1, 1]); it is regularised like every
        coefficient, as in DPpack.
    weight_sensitivity : float, "trivial" or None, default=None
        C, the public bound on the total change of the other subjects' weights
        when one subject is replaced. None derives it: 0 for a scalar
        propensity (a known randomisation probability), from the model for a
        :class:`~pydpowl.LogisticPropensity`; an array of propensities has no
        default and needs a statement: 0 when the probabilities are known or
        were estimated on data independent of these, a bound C when they were
        estimated on these data, ``"trivial"`` for ``C = n W``.
    tol : float, default=1e-10
        Certified gradient-norm tolerance of the solver (scaled space); enters
        Delta as ``2 n tol / gamma``.
    reproduce_dppack : bool, default=False
        Reproduce DPpack's arithmetic exactly (full-precision release, noise rate
        without the tolerance term): NOT floating-point safe, for validation
        against DPpack only; emits :class:`PrivacyLeakWarning`, and such a model
        cannot be exported.
    keep_nonprivate : bool, default=False
        Keep the exact solution and the noise (``nonprivate_*``, ``noise_scaled_``).
        PRIVATE: for validation only.
    random_state : None, int, numpy.random.Generator or RRandom, default=None
        Source of the noise; None uses operating-system entropy (real releases).
        Seeds are for reproduction and tests, not for production releases.

    Attributes
    ----------
    coef_ : ndarray of shape (p,)
        Released coefficients in the original feature space (computed from
        ``scaled_coef_``: post-processing).
    intercept_ : float
        Released intercept (0.0 when ``fit_intercept=False``).
    scaled_coef_ : ndarray of shape (d,)
        The release in DPpack's scaled space (intercept first): the exact sum
        of the minimiser and the noise, rounded to ``release_grid_``.
    release_grid_ : float or None
        Power-of-two grid of ``scaled_coef_`` (floating-point safety); None for
        ``epsilon = inf`` or ``reproduce_dppack=True``.
    sensitivity_ : float
        Delta = (C + 2W + 2 n tol) / gamma.
    weight_sensitivity_ : float
        The C used (0 for known propensities).
    scaler_ : FeatureScaler
        The public scaling (built from the bounds only).
    n_clipped_weights_, n_clipped_features_, n_clipped_logits_, n_clipped_benefits_ : int
        How many weights (at W), feature entries (to their bounds), propensity
        logits (to [-M, M]) and benefits (at the propensity model's C_B, only
        when a LogisticPropensity fitted on private data supplies C) were
        clipped by design. They are computed from the private data: diagnostics
        for the analyst, not covered by the privacy guarantee and not part of
        the exported model.

    Notes
    -----
    Guarantee: ``epsilon``-DP for datasets differing in one subject (replacement),
    given public bounds, W, gamma, h and, for estimated propensities, the public
    constants behind C (a model's assumed b_x makes it conditional); the
    floating-point release adds a tiny ``delta`` (see :meth:`summary` and
    docs/privacy_audit.md). Prediction does not clip new features (as DPpack).
    A fitted model is pickled with ``random_state=None``: the seed or generator
    would regenerate the noise and reveal the non-private rule.
    """

    def __init__(self, *, epsilon: float, gamma: float, weights_upper_bound: float, feature_bounds: Any,
                 huber_h: float = 0.5, fit_intercept: bool = True, weight_sensitivity: Any = None,
                 tol: float = DEFAULT_TOL, reproduce_dppack: bool = False, keep_nonprivate: bool = False,
                 random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.gamma = gamma
        self.weights_upper_bound = weights_upper_bound
        self.feature_bounds = feature_bounds
        self.huber_h = huber_h
        self.fit_intercept = fit_intercept
        self.weight_sensitivity = weight_sensitivity
        self.tol = tol
        self.reproduce_dppack = reproduce_dppack
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    def _problem_settings(self) -> dict:
        return dict(weights_upper_bound=self.weights_upper_bound, feature_bounds=self.feature_bounds,
                    fit_intercept=self.fit_intercept, weight_sensitivity=self.weight_sensitivity)

    def prepare(self, X: ArrayLike, treatment: ArrayLike, benefit: ArrayLike, propensity: Any = 0.5):
        """Deprecated: use :func:`pydpowl.prepare_owl`, which returns a typed :class:`OWLProblem`.

        Returns the tuple ``(Z, treatment, weights, C, scaler, counts)`` of
        earlier versions, made from :func:`prepare_owl` with this estimator's
        settings (``counts`` is a dict of the four ``n_clipped_*`` numbers).
        Emits :class:`FutureWarning`.
        """
        warnings.warn(
            "DPOWL.prepare is deprecated and will be removed; use pydpowl.prepare_owl(X, treatment, benefit, "
            "propensity, weights_upper_bound=..., feature_bounds=..., fit_intercept=..., weight_sensitivity=...), "
            "which returns an OWLProblem (fields Z, labels, weights, weight_sensitivity, scaler, n_clipped_*).",
            FutureWarning, stacklevel=2,
        )
        problem = prepare_owl(X, treatment, benefit, propensity, **self._problem_settings())
        counts = {name: getattr(problem, name) for name in
                  ("n_clipped_weights", "n_clipped_features", "n_clipped_logits", "n_clipped_benefits")}
        return problem.Z, problem.labels, problem.weights, problem.weight_sensitivity, problem.scaler, counts

    def fit(self, X: ArrayLike, treatment: ArrayLike, benefit: ArrayLike, propensity: Any = 0.5) -> "DPOWL":
        """Fit the private rule.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n, p)
            Features (column names kept for reporting). Dask arrays or
            DataFrames (any of the inputs) are fitted chunk by chunk on the
            workers: see docs/dask.md.
        treatment : array-like of shape (n,)
            Received treatment in {-1, 1}.
        benefit : array-like of shape (n,)
            Non-negative benefit (larger is better).
        propensity : float, array-like or LogisticPropensity, default=0.5
            A scalar is the randomisation probability of arm +1 (C = 0); an
            array gives P(A_i | x_i) of the received treatment (C must be
            stated with ``weight_sensitivity``); a fitted LogisticPropensity
            gives both the probabilities and C, and its benefit bound C_B then
            clips the benefits.

        Returns
        -------
        self
        """
        names = feature_names_of(X)
        classes = np.array([-1, 1])
        if not is_chunked(X, treatment, benefit, propensity):  # treatment labels of any kind (Dask inputs: -1/+1)
            from .multiarm import encode_arms, fit_multiarm_owl

            n_rows = check_array("X", X).shape[0]  # X's own errors first (an empty X, NaN, ...)
            classes, codes = encode_arms("treatment", treatment, length=n_rows)
            if classes.size > 2:  # the angle-based K-arm rule (estimators.multiarm)
                return fit_multiarm_owl(self, X, classes, codes, benefit, propensity, names)
            treatment = np.where(codes == 1, 1.0, -1.0)  # classes_[0] is arm -1, classes_[1] arm +1
        check_bool("reproduce_dppack", self.reproduce_dppack)
        if self.reproduce_dppack and check_epsilon(self.epsilon) != float("inf"):
            warn_reproduce_dppack("DPOWL", stacklevel=2)
        problem = prepare_owl(X, treatment, benefit, propensity, **self._problem_settings())
        scaler = problem.scaler
        engine = DPWeightedERM(
            epsilon=self.epsilon, gamma=self.gamma, weights_upper_bound=problem.weights_upper_bound,
            loss="huber", huber_h=self.huber_h, C=problem.weight_sensitivity, tol=self.tol,
            reproduce_dppack=self.reproduce_dppack, keep_nonprivate=self.keep_nonprivate,
            random_state=resolve_rng(self.random_state),
        )._fit_checked(problem.Z, problem.labels, problem.weights)  # rows of norm <= 1, w in [0, W] by construction
        self._store_release(engine.coef_, scaler)
        self.classes_ = classes
        self.release_grid_ = engine.release_grid_
        self.sensitivity_ = engine.sensitivity_
        self.weight_sensitivity_ = problem.weight_sensitivity
        self.n_iter_ = engine.n_iter_
        self.n_samples_ = problem.n_samples
        self.n_features_in_ = scaler.n_features
        self.n_clipped_weights_ = problem.n_clipped_weights
        self.n_clipped_features_ = problem.n_clipped_features
        self.n_clipped_logits_ = problem.n_clipped_logits
        self.n_clipped_benefits_ = problem.n_clipped_benefits
        if names is not None:
            self.feature_names_in_ = names
        if self.keep_nonprivate:
            self.nonprivate_scaled_coef_ = engine.nonprivate_coef_
            full = scaler.coef_to_original(engine.nonprivate_coef_)
            self.nonprivate_intercept_ = float(full[0]) if scaler.fit_intercept else 0.0
            self.nonprivate_coef_ = full[1:] if scaler.fit_intercept else full
            self.noise_scaled_ = engine.noise_
        return self

    def _store_release(self, scaled_coef: NDArray[np.float64], scaler: FeatureScaler) -> None:
        self.scaler_ = scaler
        self.scaled_coef_ = np.asarray(scaled_coef, dtype=np.float64)
        full = scaler.coef_to_original(self.scaled_coef_)
        if scaler.fit_intercept:
            self.intercept_, self.coef_ = float(full[0]), full[1:]
        else:
            self.intercept_, self.coef_ = 0.0, full

    def _released(self) -> NDArray[np.float64]:
        return np.ravel(self.scaled_coef_)

    @property
    def dppack_coeff_(self) -> NDArray[np.float64]:
        """Coefficients in DPpack's order (intercept first when fitted), original space."""
        check_is_fitted(self)
        if self._n_arms() > 2:
            raise AttributeError(f"dppack_coeff_: DPpack's svmDP has two arms; this rule has {self._n_arms()} "
                                 "(see coef_, intercept_ and scaled_coef_).")
        return np.concatenate([[self.intercept_], self.coef_]) if self.scaler_.fit_intercept else self.coef_.copy()

    def _n_arms(self) -> int:
        return len(getattr(self, "classes_", (-1, 1)))

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """``intercept_ + X @ coef_`` (features are not clipped, as in DPpack's predict).

        With three or more arms: the arm scores ``<V_a, intercept_ + coef_ x>``, shape (n, K), columns in
        the order of ``classes_`` (the rule recommends the largest).
        """
        X = check_prediction_input(self, X)
        if self._n_arms() > 2:
            from ..engine.multicategory import arm_scores, simplex_vertices

            return arm_scores(X @ self.coef_.T + self.intercept_, simplex_vertices(self._n_arms()))
        return X @ self.coef_ + self.intercept_

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """Recommended treatment: ``classes_[1]`` where the decision function is > 0, else ``classes_[0]``
        (-1/+1 labels give -1 or +1, as before); with three or more arms the arm of the largest score."""
        decision = self.decision_function(X)
        classes = getattr(self, "classes_", np.array([-1, 1]))
        if self._n_arms() > 2:
            from ..engine.multicategory import recommend

            return classes[recommend(decision)]
        if classes.dtype.kind in "iuf" and classes[0] == -1 and classes[1] == 1:
            return np.where(decision > 0, 1, -1)
        return np.where(decision > 0, classes[1], classes[0])

    def summary(self) -> FitSummary:
        """Public settings and the released coefficients."""
        check_is_fitted(self)
        names = getattr(self, "feature_names_in_", None) or [f"x{j + 1}" for j in range(self.n_features_in_)]
        coef_names = (["(intercept)"] if self.scaler_.fit_intercept else []) + list(names)
        if self._n_arms() > 2:  # Theta, row by row: f1 first (the arms are at the simplex vertices)
            full = self.scaler_.coef_to_original(self.scaled_coef_)
            return FitSummary(
                estimator=f"DPOWL ({self._n_arms()} arms: {', '.join(str(c) for c in self.classes_)})",
                epsilon=float(self.epsilon), gamma=float(self.gamma),
                weights_upper_bound=float(self.weights_upper_bound), C=self.weight_sensitivity_,
                sensitivity=self.sensitivity_, loss=f"huber(h={self.huber_h:g}), angle-based",
                n_samples=self.n_samples_,
                coefficient_names=tuple(f"f{k + 1}:{name}" for k in range(full.shape[0]) for name in coef_names),
                coefficients=tuple(float(v) for v in full.ravel()),
                notes=("Delta bounds the Frobenius norm of Theta; rule: argmax_a <V_a, f(x)>",)
                + release_notes(self))
        return FitSummary(
            estimator="DPOWL", epsilon=float(self.epsilon), gamma=float(self.gamma),
            weights_upper_bound=float(self.weights_upper_bound), C=self.weight_sensitivity_,
            sensitivity=self.sensitivity_, loss=f"huber(h={self.huber_h:g})", n_samples=self.n_samples_,
            coefficient_names=tuple(coef_names), coefficients=tuple(float(v) for v in self.dppack_coeff_),
            notes=("features clipped to public bounds and weights clipped at W by design",) + release_notes(self),
        )
