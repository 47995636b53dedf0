"""One private OWL rule, however it is made: the mechanism, the weights and gamma in one place.

:class:`~pydpowl.estimators.owl.DPOWL` (and a stage of a multi-stage rule)
prepares the data (:func:`~pydpowl.estimators.inputs.prepare_owl`: scaled rows,
treatments, plain OWL weights, the weight sensitivity C) and then calls

* :func:`plan_rule`: the public settings of the fit, with ``"auto"`` resolved
  from the utility study's defaults (:mod:`pydpowl.estimators.owl_defaults`):
  the perturbation (``"output"``, Algorithm 1 as in the paper, or
  ``"objective"``, weighted objective perturbation), residual weights or not,
  the Huber h and gamma;
* :func:`release_rule`: the release (the residual baseline first when used,
  then the rule), through the mechanisms of :mod:`pydpowl.engine.mechanisms`.

Where a choice has no proof it is refused with the reason: objective
perturbation and residual weights need C = 0 (each weight a function of its
own record and of public or released values only); ``reproduce_dppack``
reproduces DPpack's mechanism (output perturbation, plain weights, h = 0.5)
and nothing else; residual weights need the benefit's public range.

Budget: with residual weights the fit's ``epsilon`` is split into the
baseline's ``baseline_share epsilon`` and the rule's remainder; the release is
``epsilon``-DP by sequential composition (docs/privacy_audit.md).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Optional, Tuple

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, check_epsilon, check_positive, is_chunked, resolve_rng
from ..engine.losses import HuberHingeLoss
from ..engine.mechanisms import is_r_stream, release_output_perturbation
from .owl_defaults import OBJECTIVE_HUBER_H, OUTPUT_HUBER_H, default_gamma
from .residual import (BaselineRelease, ResidualWeights, check_benefit_bounds, release_baseline, residual_problem,
                       residual_weight_bound)

__all__ = ["AUTO", "MECHANISM_CHOICES", "RulePlan", "RuleRelease", "FittedRule", "plan_rule", "release_rule",
           "check_residual", "fit_owl_rule", "store_rule_attributes", "store_plan_attributes"]

AUTO = "auto"
#: values of DPOWL's ``mechanism``
MECHANISM_CHOICES = (AUTO, "output", "objective")


def check_residual(value: Any) -> Any:
    """``True``, ``False``, ``"auto"`` or a :class:`ResidualWeights`."""
    if isinstance(value, (bool, np.bool_)) or isinstance(value, ResidualWeights) or value == AUTO:
        return bool(value) if isinstance(value, (bool, np.bool_)) else value
    raise ValueError(f"residual must be True, False, 'auto' or a ResidualWeights, got residual={value!r}.")


@dataclass(frozen=True)
class RulePlan:
    """The resolved public settings of one private OWL rule (all public: functions of settings and n).

    Attributes
    ----------
    mechanism : {"output", "objective"}
    residual : ResidualWeights or None
    huber_h : float
    gamma : float
    epsilon : float
        The fit's budget.
    epsilon_baseline, epsilon_rule : float
        Its split (``epsilon_baseline`` 0 without residual weights).
    benefit_range : float or None
        ``U - L`` of the (shifted) benefit, for residual weights.
    weights_upper_bound : float
        W of the weights the rule is fitted with (``W clip_share`` with residual weights).
    owl_weights_upper_bound : float
        W of the plain OWL weights.
    reasons : tuple of str
        How each ``"auto"`` was resolved.
    """

    mechanism: str
    residual: Optional[ResidualWeights]
    huber_h: float
    gamma: float
    epsilon: float
    epsilon_baseline: float
    epsilon_rule: float
    benefit_range: Optional[float]
    weights_upper_bound: float
    owl_weights_upper_bound: float
    reasons: Tuple[str, ...] = ()

    def describe(self) -> str:
        """One line naming the mechanism, for summaries and reports."""
        what = ("weighted objective perturbation" if self.mechanism == "objective"
                else "output perturbation (Algorithm 1)")
        if self.residual is None:
            return f"{what}, OWL weights B / P(A | x), Huber h = {self.huber_h:g}"
        return (f"{what} with residual weights |B - m| / P(A | x) (baseline m: DP mean on epsilon "
                f"{self.epsilon_baseline:.6g}; residuals cut at +-{self.residual.clip_share:g} of the benefit "
                f"range), Huber h = {self.huber_h:g}")


def plan_rule(*, mechanism: Any, residual: Any, gamma: Any, huber_h: Any, epsilon: float, n_samples: int,
              dim: int, weights_upper_bound: float, C: float, reproduce_dppack: bool,
              benefit_range: Optional[float], chunked: bool = False) -> RulePlan:
    """Resolve ``"auto"`` settings and refuse combinations without a proof (see the module docstring).

    Parameters
    ----------
    mechanism : {"auto", "output", "objective"}
    residual : bool, "auto" or ResidualWeights
    gamma : float or "auto"
    huber_h : float or "auto"
    epsilon : float
    n_samples, dim : int
        n (public) and the number of coefficients d.
    weights_upper_bound : float
        W of the plain OWL weights.
    C : float
        The weight sensitivity of the plain weights.
    reproduce_dppack : bool
    benefit_range : float or None
        The public range ``U - L`` of the benefit (None when unknown).
    chunked : bool
        Dask inputs (residual weights are not available for them).
    """
    mechanism = check_choice("mechanism", mechanism, MECHANISM_CHOICES)
    residual = check_residual(residual)
    eps = check_epsilon(epsilon)
    W = check_positive("weights_upper_bound", weights_upper_bound)
    reasons = []
    if mechanism == AUTO:
        if reproduce_dppack or C > 0:
            mechanism = "output"
            reasons.append("mechanism: output (" + ("reproduce_dppack: DPpack's mechanism" if reproduce_dppack
                                                    else f"the weights move with other records, C = {C:g}") + ")")
        else:
            mechanism = "objective"
            reasons.append("mechanism: objective (C = 0; the utility study's default)")
    elif mechanism == "objective" and (C > 0 or reproduce_dppack):
        raise ValueError("mechanism='objective' needs C = 0 and reproduce_dppack=False: "
                         + (f"the weights move with other records (C = {C:g}); use mechanism='output'." if C > 0
                            else "DPpack has no objective perturbation with weights."))
    why_not = None
    if reproduce_dppack:
        why_not = "reproduce_dppack reproduces DPpack's plain OWL weights"
    elif C > 0:
        why_not = f"the weights move with other records (C = {C:g})"
    elif chunked:
        why_not = "Dask inputs"
    elif benefit_range is None:
        why_not = "the benefit's public range is unknown (give benefit_bounds, or a scalar propensity)"
    if residual == AUTO:
        residual = None if why_not else ResidualWeights()
        reasons.append("residual weights: " + (f"no ({why_not})" if why_not else "yes (the utility study's default)"))
    elif residual is False:
        residual = None
    else:
        if why_not:
            raise ValueError(f"residual weights cannot be used here: {why_not}; use residual=False.")
        residual = ResidualWeights() if residual is True else residual
    if huber_h == AUTO:
        huber_h = OBJECTIVE_HUBER_H if mechanism == "objective" else OUTPUT_HUBER_H
        reasons.append(f"huber_h: {huber_h:g} (the default of {mechanism} perturbation)")
    h = check_positive("huber_h", huber_h)
    if reproduce_dppack and mechanism != "output":
        raise ValueError("reproduce_dppack=True reproduces DPpack's output perturbation; use mechanism='output'.")
    if residual is None:
        e_m, e_r, W_rule = 0.0, eps, W
    else:
        e_m, e_r = residual.split(eps)
        if eps == math.inf:
            e_m = math.inf
        W_rule = residual_weight_bound(W, residual.clip_share)
    if gamma == AUTO:
        gamma = default_gamma(perturbation=mechanism, n_samples=n_samples, epsilon=e_r, dim=dim,
                              weights_upper_bound=W_rule, huber_h=h)
        reasons.append(f"gamma: {gamma:.6g} (public rule of {mechanism} perturbation: n, epsilon, d, W)")
    gamma = check_positive("gamma", gamma)
    return RulePlan(mechanism=mechanism, residual=residual, huber_h=h, gamma=gamma, epsilon=eps,
                    epsilon_baseline=e_m if residual is not None else 0.0, epsilon_rule=e_r,
                    benefit_range=benefit_range, weights_upper_bound=W_rule, owl_weights_upper_bound=W,
                    reasons=tuple(reasons))


@dataclass(frozen=True, eq=False)
class RuleRelease:
    """What :func:`release_rule` made. ``coef`` and ``baseline`` are releases; the rest is public unless noted.

    Attributes
    ----------
    coef : ndarray of shape (d,)
        The released rule in the scaled space (rounded to ``grid``).
    plan : RulePlan
    baseline : BaselineRelease or None
        The released baseline (residual weights).
    sensitivity : float
        Output perturbation's Delta (nan for objective perturbation).
    ridge : float
        The ridge of the objective solved.
    grid : float or None
    noise_scale : float
        Scale of the noise the release was rounded under.
    n_iter : int
        Newton iterations (a data-dependent diagnostic).
    n_clipped_residuals, n_clipped_weights, n_clipped_benefits : int
        Residuals clipped at +-R, weights at the rule's W and benefits to the
        residual weights' range (diagnostics, not releases).
    minimiser, noise : ndarray
        PRIVATE: the certified minimiser and the noise (smoothing noise for objective perturbation).
    """

    coef: NDArray[np.float64]
    plan: RulePlan
    baseline: Optional[BaselineRelease]
    sensitivity: float
    ridge: float
    grid: Optional[float]
    noise_scale: float
    n_iter: int
    n_clipped_residuals: int
    n_clipped_weights: int
    minimiser: NDArray[np.float64]
    noise: NDArray[np.float64]
    n_clipped_benefits: int = 0


def release_rule(Z: NDArray[np.float64], treatment: NDArray[np.float64], weights: NDArray[np.float64], *,
                 plan: RulePlan, C: float, tol: float, reproduce_dppack: bool, rng: Any,
                 benefit: Optional[NDArray[np.float64]] = None,
                 propensity_received: Optional[NDArray[np.float64]] = None,
                 n_clipped_weights: int = 0, active: Optional[NDArray[np.bool_]] = None) -> RuleRelease:
    """Release one rule as ``plan`` says.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Scaled rows (norm <= 1).
    treatment : ndarray of shape (n,)
        Treatments in {-1, 1} (the labels of plain OWL).
    weights : ndarray of shape (n,)
        Plain OWL weights in ``[0, W]`` (used without residual weights).
    plan : RulePlan
    C : float
        Weight sensitivity (0 unless output perturbation with estimated propensities).
    tol : float
        The solver's certified gradient norm.
    reproduce_dppack : bool
    rng : numpy Generator or RRandom
    benefit : ndarray of shape (n,), optional
        Benefits shifted to ``[0, benefit_range]`` (residual weights; clipped here, counted).
    propensity_received : ndarray of shape (n,), optional
        ``P(A_i | x_i)`` (residual weights).
    n_clipped_weights : int
        Plain weights clipped at W by the preparation (reported without residual weights).
    active : ndarray of bool of shape (n,), optional
        Residual weights: rows whose weight is set to 0 where False (a stage of
        a multi-stage rule: the subjects who did not follow the later released
        rules). They still count in the baseline's mean over the ``n`` public rows.
    """
    loss = HuberHingeLoss(plan.huber_h)
    y, w, baseline, n_res, n_b = treatment, weights, None, 0, 0
    if plan.residual is not None:
        if benefit is None or propensity_received is None or plan.benefit_range is None:
            raise ValueError("residual weights need the benefits, the received propensities and the benefit range.")
        bounds = (0.0, float(plan.benefit_range))
        baseline = release_baseline(benefit, benefit_bounds=bounds, epsilon=plan.epsilon_baseline, rng=rng)
        prob = residual_problem(treatment, benefit, propensity_received, baseline=baseline.value,
                                benefit_bounds=bounds,
                                weights_upper_bound=plan.owl_weights_upper_bound,
                                clip_share=plan.residual.clip_share, active=active)
        if prob.weights_upper_bound != plan.weights_upper_bound:  # one rule for the bound: residual_weight_bound
            raise AssertionError("the residual weights' bound differs from the plan's.")
        y, w, n_res, n_clipped_weights = prob.labels, prob.weights, prob.n_clipped_residuals, prob.n_clipped_weights
        n_b = prob.n_clipped_benefits
    if plan.mechanism == "objective":
        from ..engine.mechanisms import release_weighted_objective  # loaded only by the fits that use it

        rel = release_weighted_objective(Z, y, w, epsilon=plan.epsilon_rule, gamma=plan.gamma,
                                         weights_upper_bound=plan.weights_upper_bound, loss=loss, tol=tol, rng=rng)
        return RuleRelease(coef=rel.coef, plan=plan, baseline=baseline, sensitivity=math.nan,
                           ridge=rel.calibration.ridge, grid=rel.grid, noise_scale=rel.smoothing_scale,
                           n_iter=rel.n_iter, n_clipped_residuals=n_res, n_clipped_weights=n_clipped_weights,
                           minimiser=rel.minimiser, noise=rel.noise, n_clipped_benefits=n_b)
    out = release_output_perturbation(Z, y, w, epsilon=plan.epsilon_rule, gamma=plan.gamma,
                                      weights_upper_bound=plan.weights_upper_bound, loss=loss, C=C, tol=tol,
                                      reproduce_dppack=reproduce_dppack, rng=rng)
    return RuleRelease(coef=out.coef, plan=plan, baseline=baseline, sensitivity=out.sensitivity, ridge=plan.gamma,
                       grid=out.grid, noise_scale=out.sensitivity / plan.epsilon_rule, n_iter=out.n_iter,
                       n_clipped_residuals=n_res, n_clipped_weights=n_clipped_weights,
                       minimiser=out.nonprivate_coef, noise=out.noise, n_clipped_benefits=n_b)


@dataclass(frozen=True, eq=False)
class FittedRule:
    """A DPOWL fit's pieces: the prepared problem (private), its plan and release, and the benefit clip count."""

    problem: Any
    plan: RulePlan
    release: RuleRelease
    n_clipped_benefits: int


def fit_owl_rule(X: Any, treatment: Any, benefit: Any, propensity: Any, *, estimator: Any) -> FittedRule:
    """:meth:`pydpowl.DPOWL.fit`'s work for the settings of ``estimator`` (a DPOWL): prepare, plan, release."""
    from .benefits import shift_benefits
    from .inputs import prepare_owl

    est = estimator
    eps = check_epsilon(est.epsilon)
    W = check_positive("weights_upper_bound", est.weights_upper_bound)
    check_choice("mechanism", est.mechanism, MECHANISM_CHOICES)
    check_residual(est.residual)
    for name in ("gamma", "huber_h"):
        if getattr(est, name) != AUTO:
            check_positive(name, getattr(est, name))
    tol = check_positive("tol", est.tol)
    chunked = is_chunked(X, treatment, benefit, propensity)
    B, n_clipped, benefit_range = benefit, 0, None
    if est.benefit_bounds is not None:
        lo, hi = check_benefit_bounds(est.benefit_bounds)
        if chunked:
            raise ValueError("benefit_bounds is not available for Dask inputs: shift the benefits by the public "
                             "lower bound first (pydpowl.shift_benefits) and leave benefit_bounds=None.")
        B, n_clipped = shift_benefits(benefit, lo, hi)
        benefit_range = hi - lo
    elif isinstance(propensity, numbers.Real) and not isinstance(propensity, bool) and 0 < float(propensity) < 1:
        benefit_range = W * min(float(propensity), 1.0 - float(propensity))  # the range W implies
    problem = prepare_owl(X, treatment, B, propensity, **dict(est._problem_settings(), weights_upper_bound=W))
    plan = plan_rule(mechanism=est.mechanism, residual=est.residual, gamma=est.gamma, huber_h=est.huber_h,
                     epsilon=eps, n_samples=problem.n_samples, dim=problem.scaler.n_coefficients,
                     weights_upper_bound=W, C=problem.weight_sensitivity, reproduce_dppack=est.reproduce_dppack,
                     benefit_range=benefit_range, chunked=chunked)
    rel = release_rule(problem.Z, problem.labels, problem.weights, plan=plan, C=problem.weight_sensitivity, tol=tol,
                       reproduce_dppack=est.reproduce_dppack, rng=resolve_rng(est.random_state),
                       benefit=problem.benefit, propensity_received=problem.propensity_received,
                       n_clipped_weights=problem.n_clipped_weights)
    return FittedRule(problem=problem, plan=plan, release=rel,
                      n_clipped_benefits=n_clipped + problem.n_clipped_benefits + rel.n_clipped_benefits)


def store_plan_attributes(est: Any, plan: RulePlan, *, ridge: float, noise_scale: float,
                          baseline: Optional[float] = None, n_clipped_residuals: int = 0) -> None:
    """Set the fitted attributes every DPOWL release has from its plan (public, but the counts)."""
    est.mechanism_ = plan.mechanism
    est.residual_ = plan.residual is not None
    est.gamma_ = plan.gamma
    est.huber_h_ = plan.huber_h
    est.ridge_ = ridge
    est.rule_weights_upper_bound_ = plan.weights_upper_bound
    est.baseline_ = baseline
    est.epsilon_baseline_ = plan.epsilon_baseline
    est.epsilon_rule_ = plan.epsilon_rule
    est.release_scale_ = noise_scale
    est.mechanism_description_ = plan.describe()
    est.n_clipped_residuals_ = n_clipped_residuals


def rule_release_parts(rel: RuleRelease, *, reproduce_dppack: bool, stream: str
                       ) -> Tuple[Tuple[float, float], Optional[Tuple[float, float]]]:
    """``(epsilon, delta)`` of the rule's release and of the residual baseline's (None without one), each
    with its floating-point rounding's ``delta`` under the sampler model ``stream``."""
    from ..privacy.accountant import rounded_release_spent

    rule = rounded_release_spent(rel.plan.epsilon_rule, dim=len(rel.coef), grid=rel.grid,
                                 noise_scale=rel.noise_scale, full_precision=reproduce_dppack, stream=stream)
    if rel.baseline is None:
        return rule, None
    b = rel.baseline
    return rule, rounded_release_spent(b.epsilon, dim=1, grid=b.grid, noise_scale=b.scale, stream=stream)


def rule_privacy_spent(rel: RuleRelease, *, reproduce_dppack: bool, stream: str) -> Tuple[float, float]:
    """``(epsilon, delta)`` of a rule release: the residual baseline's and the rule's releases in sequence
    (:func:`rule_release_parts`)."""
    from ..privacy.accountant import compose

    rule, baseline = rule_release_parts(rel, reproduce_dppack=reproduce_dppack, stream=stream)
    return compose([rule] if baseline is None else [rule, baseline], "sequential")


def store_rule_attributes(est: Any, fitted: FittedRule) -> None:
    """Set DPOWL's fitted attributes (besides the coefficients) from a :class:`FittedRule`."""
    problem, plan, rel = fitted.problem, fitted.plan, fitted.release
    est.release_grid_ = rel.grid
    est.sampler_model_ = "R" if is_r_stream(est.random_state) else "numpy"
    est.privacy_spent_ = rule_privacy_spent(rel, reproduce_dppack=bool(est.reproduce_dppack),
                                            stream=est.sampler_model_)
    est.sensitivity_ = rel.sensitivity
    est.weight_sensitivity_ = problem.weight_sensitivity
    store_plan_attributes(est, plan, ridge=rel.ridge, noise_scale=rel.noise_scale,
                          baseline=None if rel.baseline is None else rel.baseline.value,
                          n_clipped_residuals=rel.n_clipped_residuals)
    est.n_iter_ = rel.n_iter
    est.n_samples_ = problem.n_samples
    est.n_features_in_ = problem.scaler.n_features
    est.n_clipped_weights_ = rel.n_clipped_weights
    est.n_clipped_features_ = problem.n_clipped_features
    est.n_clipped_logits_ = problem.n_clipped_logits
    est.n_clipped_benefits_ = fitted.n_clipped_benefits
    if est.keep_nonprivate:
        scaler = problem.scaler
        est.nonprivate_scaled_coef_ = rel.minimiser
        full = scaler.coef_to_original(rel.minimiser)
        est.nonprivate_intercept_ = float(full[0]) if scaler.fit_intercept else 0.0
        est.nonprivate_coef_ = full[1:] if scaler.fit_intercept else full
        est.noise_scaled_ = rel.noise
