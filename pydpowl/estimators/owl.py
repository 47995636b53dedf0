"""DP-OWL: outcome weighted learning of a treatment rule with DP-wERM.

:func:`~pydpowl.estimators.inputs.prepare_owl` (re-exported here) turns the data into a DP-wERM
problem (an :class:`~pydpowl.estimators.inputs.OWLProblem`): OWL weights ``w_i = B_i / P(A_i | x_i)`` (clipped at the
public bound W, counted; benefits clipped at C_B when a propensity model
fitted on private data supplies C, counted), the features scaled exactly as
DPpack's ``svmDP`` (linear kernel), and the weight sensitivity C.
:class:`DPOWL` releases the rule through
:mod:`pydpowl.estimators.owl_mechanism` (output or weighted objective
perturbation, plain or residual weights; the defaults from the utility study).
"""

from __future__ import annotations

import warnings
from typing import Any, Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base import DPEstimator, check_is_fitted, check_prediction_input, store_feature_names
from .._validation import check_array, check_bool, check_epsilon, columns_by_name, feature_names_of, is_chunked
from ..engine.preprocessing import FeatureScaler
from .inputs import OWLProblem, check_benefit, clip_benefits, owl_weights, prepare_owl
from .summary import FitSummary
from ..engine.mechanisms import warn_reproduce_dppack
from .owl_mechanism import fit_owl_rule, store_rule_attributes
from .werm import DEFAULT_TOL, RoundedReleaseMixin, release_notes

__all__ = ["DPOWL", "OWLProblem", "prepare_owl", "owl_weights", "clip_benefits", "check_benefit",
           "weight_bound_notes"]


class DPOWL(RoundedReleaseMixin, DPEstimator):
    """Differentially private outcome weighted learning (linear rule).

    Learns ``f(x) = intercept + x'coef`` and the rule ``sign(f(x))`` by
    minimising a weighted Huber-hinge objective with OWL weights, privately.
    Two mechanisms (``mechanism``) and two kinds of weights (``residual``):

    * ``"output"``: Algorithm 1 of the paper, equivalent to DPpack's
      ``svmDP$new("l2", eps, gamma, perturbation.method = "output", huber.h = h)``
      fitted with ``weights = B / P(A | x)`` and ``weights.upper.bound = W``
      (bit for bit with ``reproduce_dppack=True``, for validation only);
    * ``"objective"``: weighted objective perturbation
      (:func:`pydpowl.engine.mechanisms.release_weighted_objective`), for
      weights that depend on their own record only (C = 0);
    * residual weights (:mod:`pydpowl.estimators.residual`): labels
      ``A sign(B - m)`` and weights ``|B - m| / P(A | x)`` with a baseline ``m``
      released on 10 % of epsilon; the same optimal rule, smaller weights.

    The defaults (``"auto"``) come from the utility study (docs/utility.md,
    :mod:`pydpowl.estimators.owl_defaults`): with known propensities (C = 0)
    objective perturbation with residual weights and Huber h = 1; with a
    propensity model fitted on the same data (C > 0), or with
    ``reproduce_dppack``, the paper's output perturbation with OWL weights and
    h = 0.5; gamma from a public rule in n, epsilon, d and W. ``mechanism_``,
    ``residual_``, ``gamma_`` and ``summary()`` say what was used.

    Parameters
    ----------
    epsilon : float
        Privacy budget in (0, inf]; ``inf`` releases the exact (non-private) rule.
    gamma : float or "auto", default="auto"
        Regularisation constant in (0, inf) (DPpack's convention), or the
        public rule :func:`~pydpowl.estimators.owl_defaults.default_gamma`.
    weights_upper_bound : float
        Public bound W on the OWL weights; larger weights are clipped to W (by
        design; counted in ``n_clipped_weights_``).
    feature_bounds : dict, tuple (lower, upper) or "data"
        Public per-feature bounds. By column name (matched to the columns of a
        DataFrame X in any order): a dict ``{column: (lower, upper)}``, a pair
        of pandas Series indexed by column, or a DataFrame with columns
        ``lower`` and ``upper`` indexed by column. By position: a pair
        ``(lower, upper)`` of length-p array-likes, applied to X's columns in
        order (with a DataFrame its column names are recorded and prediction
        matches them by name). Features are clipped to them (by design;
        counted in ``n_clipped_features_``). ``"data"`` reads them off the
        training data for exploration only: it emits
        :class:`PrivacyLeakWarning` because the privacy guarantee is then void.
    huber_h : float or "auto", default="auto"
        Huber smoothing parameter h; "auto": 0.5 for output perturbation (the
        paper's), 1 for objective perturbation (the study's).
    mechanism : {"auto", "output", "objective"}, default="auto"
        See above; "objective" needs C = 0 and ``reproduce_dppack=False``.
    residual : bool, "auto" or ResidualWeights, default="auto"
        Residual weights (True: the default :class:`~pydpowl.estimators.residual.ResidualWeights`);
        they need C = 0, the benefit's public range (``benefit_bounds``, or a
        scalar propensity p, whose range is taken as ``[0, W min(p, 1 - p)]``)
        and in-memory data. "auto" uses them when these hold.
    benefit_bounds : (float, float), optional
        Public bounds ``(L, U)`` of the benefit: benefits are clipped to them
        (counted) and shifted by ``-L`` (so they may be negative); W then
        bounds ``(B - L) / P(A | x)``.
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
    diagnose_bounds : None, True or float in (0, 1), default=None
        Opt-in, NON-PRIVATE diagnostic: warn
        (:class:`~pydpowl.exceptions.BoundsDiagnosticWarning`, naming the
        columns, no counts) when more than this share of a column's training
        values lie outside its bounds (``True``: 0.5), the usual sign of bounds
        given in another column order. Whether the warning appears depends on
        the private data, so it is not covered by the guarantee: use it while
        setting an analysis up. None reads nothing.
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
    release_delta_, sampler_model_ : float or None, {"numpy", "R"}
        As in :class:`DPWeightedERM` (the rounding's ``delta`` under the noise
        stream's sampler model).
    sensitivity_ : float
        Delta = (C + 2W + 2 n tol) / gamma of output perturbation (nan for objective perturbation).
    mechanism_ : {"output", "objective"}
    residual_ : bool
    gamma_, huber_h_ : float
        The resolved settings (public).
    ridge_ : float
        The ridge of the objective solved (gamma, or objective perturbation's raised ridge).
    rule_weights_upper_bound_ : float
        W of the weights the rule was fitted with (W times the clip share with residual weights).
    baseline_ : float or None
        The released baseline of residual weights (a release, on ``epsilon_baseline_``).
    epsilon_baseline_, epsilon_rule_ : float
        The budget's split between the baseline and the rule.
    release_scale_ : float
        Scale of the noise the release was rounded under.
    mechanism_description_ : str
        One line naming the mechanism (also in :meth:`summary`).
    weight_sensitivity_ : float
        The C used (0 for known propensities).
    scaler_ : FeatureScaler
        The public scaling (built from the bounds only).
    privacy_spent_ : (float, float)
        The ``(epsilon, delta)`` this fit spent: the baseline's and the rule's
        releases in sequence (``delta``: the floating-point rounding's, see
        :class:`DPWeightedERM`).
    n_clipped_weights_, n_clipped_features_, n_clipped_logits_, n_clipped_benefits_, n_clipped_residuals_ : int
        How many weights (at the rule's W), feature entries (to their bounds),
        propensity logits (to [-M, M]), benefits (to ``benefit_bounds``, to the
        range of residual weights, or at the propensity model's C_B when a
        LogisticPropensity fitted on private data supplies C) and residuals (at
        +-R) were clipped by design. NON-PRIVATE diagnostics: computed from the
        private data, not covered by the privacy guarantee, not part of the
        exported model, never printed by default (``pydpowl fit --diagnostics``
        prints them, labelled as such).
    n_iter_ : int
        Newton iterations: a NON-PRIVATE diagnostic, as the counts.

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

    def __init__(self, *, epsilon: float, gamma: Any = "auto", weights_upper_bound: float, feature_bounds: Any,
                 huber_h: Any = "auto", mechanism: str = "auto", residual: Any = "auto", benefit_bounds: Any = None,
                 fit_intercept: bool = True, weight_sensitivity: Any = None,
                 tol: float = DEFAULT_TOL, reproduce_dppack: bool = False, keep_nonprivate: bool = False,
                 random_state: Any = None, diagnose_bounds: Any = None) -> None:
        self.epsilon = epsilon
        self.gamma = gamma
        self.weights_upper_bound = weights_upper_bound
        self.feature_bounds = feature_bounds
        self.huber_h = huber_h
        self.mechanism = mechanism
        self.residual = residual
        self.benefit_bounds = benefit_bounds
        self.fit_intercept = fit_intercept
        self.weight_sensitivity = weight_sensitivity
        self.tol = tol
        self.reproduce_dppack = reproduce_dppack
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state
        self.diagnose_bounds = diagnose_bounds

    def _problem_settings(self) -> dict:
        return dict(weights_upper_bound=self.weights_upper_bound, feature_bounds=self.feature_bounds,
                    fit_intercept=self.fit_intercept, weight_sensitivity=self.weight_sensitivity,
                    diagnose_bounds=self.diagnose_bounds)

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
            Received treatment: labels of any kind (``classes_``, sorted; with two arms
            ``classes_[1]`` is arm +1, so -1/+1 and 0/1 code as the CLI does, and
            :meth:`predict` answers in these labels); three or more arms fit the multi-arm
            rule. Dask inputs take -1/+1 or 0/1 (0 is -1; ``classes_`` is [-1, 1]).
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
        check_bool("keep_nonprivate", self.keep_nonprivate)
        if self.reproduce_dppack and check_epsilon(self.epsilon) != float("inf"):
            warn_reproduce_dppack("DPOWL", stacklevel=2)
        fitted = fit_owl_rule(X, treatment, benefit, propensity, estimator=self)
        self._store_release(fitted.release.coef, fitted.problem.scaler)
        store_rule_attributes(self, fitted)
        self.classes_ = classes
        store_feature_names(self, names)
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

        Fitted on a DataFrame, X's columns are matched by name: a DataFrame in
        another column order is reordered, one lacking a fitted column is
        refused, and an array is taken in the fitted order (with a warning).
        """
        check_is_fitted(self)
        X = columns_by_name(X, getattr(self, "feature_names_in_", None), owner="DPOWL")
        X = check_prediction_input(self, X)
        if self._n_arms() > 2:
            from ..engine.multicategory import arm_scores, simplex_vertices

            return arm_scores(X @ self.coef_.T + self.intercept_, simplex_vertices(self._n_arms()))
        return X @ self.coef_ + self.intercept_

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """Recommended treatment: ``classes_[1]`` where the decision function is > 0, else ``classes_[0]``
        (-1/+1 labels give -1 or +1, as before); with three or more arms the arm of the largest score. X as in
        :meth:`decision_function` (columns matched by name)."""
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
                epsilon=float(self.epsilon), gamma=float(self.gamma_),
                weights_upper_bound=float(self.weights_upper_bound), C=self.weight_sensitivity_,
                sensitivity=self.sensitivity_, loss=f"huber(h={self.huber_h_:g}), angle-based",
                n_samples=self.n_samples_,
                coefficient_names=tuple(f"f{k + 1}:{name}" for k in range(full.shape[0]) for name in coef_names),
                coefficients=tuple(float(v) for v in full.ravel()),
                notes=(("Delta bounds the Frobenius norm of Theta; " if self.mechanism_ == "output" else "")
                       + "rule: argmax_a <V_a, f(x)>",) + weight_bound_notes(self) + release_notes(self),
                privacy_spent=self.privacy_spent_,
                mechanism=self._mechanism_text())
        return FitSummary(
            estimator="DPOWL", epsilon=float(self.epsilon), gamma=float(self.gamma_),
            weights_upper_bound=float(self.weights_upper_bound), C=self.weight_sensitivity_,
            sensitivity=self.sensitivity_, loss=f"huber(h={self.huber_h_:g})", n_samples=self.n_samples_,
            coefficient_names=tuple(coef_names), coefficients=tuple(float(v) for v in self.dppack_coeff_),
            notes=("features clipped to public bounds and weights clipped at W by design",)
            + weight_bound_notes(self) + release_notes(self),
            privacy_spent=self.privacy_spent_,
            mechanism=self._mechanism_text(),
        )

    def _mechanism_text(self) -> str:
        return ("output perturbation" if self.mechanism_ == "output" and not self.residual_
                else self.mechanism_description_)


def weight_bound_notes(model: DPOWL) -> Tuple[str, ...]:
    """With residual weights the rule's noise is calibrated to W_r = W x clip share, not to the W given: the
    summary's (and R's) note saying so, or nothing when the rule used W itself."""
    W = float(model.weights_upper_bound)
    W_r = float(getattr(model, "rule_weights_upper_bound_", W))  # a model read from model.json has no plan
    if W_r == W:
        return ()
    return (f"the rule's residual weights are bounded by W_r = W x {W_r / W:g} = {W_r:g} "
            f"(rule_weights_upper_bound_; weights_upper_bound W = {W:g} bounds the OWL weights)",)
