"""The whole private analysis for three or more arms (:func:`pydpowl.analysis.run_analysis` calls it).

The steps and the composition are those of :mod:`pydpowl.analysis` with K
arms: the rows are split at random (data-independent) into a learning and an
evaluation part; on the learning part the angle-based K-arm DP-OWL rule is
released (:class:`pydpowl.DPOWL` with its defaults, as the two-arm analysis:
weighted objective perturbation with residual weights, C = 0: the design's
randomisation probabilities are public; ``mechanism="output"``,
``residual=False`` give the paper's mechanism); on the evaluation part
the rule's value, the value of giving everyone each single arm, and the
rule's gain over each arm and over the best one are released with intervals
that include the privacy noise
(:func:`pydpowl.evaluation.private.private_arm_value`). The ledger lists
the three releases (rule, value, variance); under sequential composition they
add up to the total E.

What K arms do not have yet (refused by name): a released propensity model
(the logistic model is a model of two arms: give the design's probabilities),
and the private selection of gamma among candidates (its score is the two-arm
value; fix gamma or use DPOWL's public rule).
"""

from __future__ import annotations

import numbers
from typing import Any, Dict, Mapping, Optional, Sequence, Union

import numpy as np
from numpy.typing import ArrayLike

from ._validation import check_positive, check_vector, resolve_rng
from .analysis_base import (RELEASE_NAMES, AnalysisResult, BenefitScale, BudgetSplit, _laplace_sums_delta,
                            _tuning_text, allocate_budget, budget_shares, check_settings, features_of, fit_rule,
                            open_accountants, public_weight_bound, split_rows)
from .engine.multicategory import arm_scores, recommend
from .estimators.multiarm import arm_labels_text, encode_arms, resolve_arm_propensity
from .privacy.accountant import BudgetAccountant
from .evaluation.private import private_arm_value

__all__ = ["run_arm_analysis", "design_probabilities"]


def design_probabilities(propensity: Any, classes: Union[Sequence[Any], np.ndarray]) -> np.ndarray:
    """Each arm's randomisation probability (public; in the order of ``classes``): ``1/K`` or a mapping
    ``{arm: probability}`` naming every arm, summing to 1.

    Raises
    ------
    ValueError
        For anything else (the analysis' intervals need each arm's public propensity floor), with the
        messages of :func:`pydpowl.estimators.multiarm.resolve_arm_propensity`.
    """
    K = len(classes)
    if propensity is None or not (isinstance(propensity, Mapping) or (
            isinstance(propensity, numbers.Real) and not isinstance(propensity, bool))):
        raise ValueError(f"propensity must give the design's probabilities of the {K} arms "
                         f"({arm_labels_text(classes)}): 1/K = {1.0 / K:.6g} (balanced) or a mapping "
                         f"{{arm: probability}} summing to 1; got {propensity!r}.")
    codes = np.arange(K, dtype=np.intp)
    return resolve_arm_propensity(propensity, np.asarray(classes), codes).probability  # checks sum, range, arms


def run_arm_analysis(X: ArrayLike, treatment: ArrayLike, benefit: ArrayLike, *, feature_bounds: Any,
                     benefit_bounds: Any, weights_upper_bound: float, total_epsilon: float, propensity: Any = None,
                     propensity_model: Optional[str] = None, gamma: Optional[float] = None,
                     gammas: Optional[Sequence[float]] = None, huber_h: Any = "auto", mechanism: str = "auto",
                     residual: Any = "auto", level: float = 0.95, split: Optional[BudgetSplit] = None,
                     feature_names: Optional[Sequence[str]] = None, accountant: Optional[BudgetAccountant] = None,
                     evaluation_rows: Optional[Sequence[int]] = None, public_n: bool = False,
                     benefit_scale: Optional[BenefitScale] = None, random_state: Any = None) -> AnalysisResult:
    """:func:`pydpowl.analysis.run_analysis` for ``K >= 3`` arms (the parameters are its own).

    ``treatment`` holds the arm labels (any kind; ``treatment_labels`` of the
    result are their texts, sorted as :class:`pydpowl.DPOWL`'s ``classes_``);
    ``propensity`` is ``1/K`` or a mapping ``{arm: probability}``.
    """
    split, E, W, (lo, hi), level = check_settings(split, total_epsilon, weights_upper_bound, benefit_bounds, level,
                                                  huber_h)
    classes, codes = encode_arms("treatment", treatment)
    K = len(classes)
    if propensity_model is not None:
        raise ValueError(f"a released propensity model (propensity_model={propensity_model!r}) is a logistic model "
                         f"of two arms; treatment has {K} arms ({arm_labels_text(classes)}): give the design's "
                         "probabilities (propensity=1/K or {arm: probability}).")
    if gamma is None and gammas is not None:
        raise ValueError(f"the private selection of gamma (gammas=...) scores two-arm rules; treatment has {K} arms: "
                         "fix gamma in advance (gamma=...) or leave both out for DPOWL's public rule.")
    gamma_rule: Union[str, float] = "auto" if gamma is None else check_positive("gamma", gamma)  # DPOWL's gamma
    probs = design_probabilities(propensity, classes)
    eps = allocate_budget(E, split, propensity_model=False, tune=False)
    shares = budget_shares(E, split, propensity_model=False, tune=False)
    benefit_scale = BenefitScale() if benefit_scale is None else benefit_scale
    if not isinstance(benefit_scale, BenefitScale):
        raise TypeError(f"benefit_scale must be a BenefitScale, got {type(benefit_scale).__name__}.")
    if accountant is not None:  # before the data are touched
        accountant.check(E, label="pydpowl analysis")
    learn_acc, eval_acc = open_accountants(E, split, [eps["rule"]], [eps["value"], eps["variance"]])
    X, names, feature_bounds = features_of(X, feature_names, feature_bounds)
    n, p = X.shape
    if codes.shape[0] != n:
        raise ValueError(f"treatment must have length {n} (one per row of X), got length {codes.shape[0]}.")
    B = check_vector("benefit", benefit, length=n)
    rng = resolve_rng(random_state)
    learn, ev = split_rows(n, split, evaluation_rows, rng)
    absent = [c for k, c in enumerate(classes) if not np.any(codes[learn] == k)]
    if absent:
        raise ValueError(f"treatment (learning part) must contain every arm; {len(absent)} of the {K} arms do not "
                         "occur there (a rule cannot be learnt for an arm nobody received).")
    shifted = np.clip(B, lo, hi) - lo
    diagnostics: Dict[str, int] = {"n_clipped_benefits": int(np.count_nonzero((B < lo) | (B > hi)))}
    p_received = probs[codes]
    # every weight is at most (U - L) / (smallest design probability), a public bound: W can only shrink
    W_given, W = W, public_weight_bound(W, hi - lo, float(probs.min()))

    labels = np.asarray(classes)[codes]
    with learn_acc.release(eps["rule"], label=f"{RELEASE_NAMES['rule']}, {K} arms"):
        model = fit_rule(X[learn], labels[learn], shifted[learn], p_received[learn], epsilon=eps["rule"],
                         gamma=gamma_rule, weights_upper_bound=W, feature_bounds=feature_bounds,
                         weight_sensitivity=0.0,
                         huber_h=huber_h, mechanism=mechanism, residual=residual, benefit_range=hi - lo,
                         random_state=rng)
    public_rule = gamma_rule == "auto"
    model.set_params(random_state=None)  # the live generator could be rewound to regenerate the noise
    diagnostics.update(n_clipped_weights=model.n_clipped_weights_, n_clipped_features=model.n_clipped_features_,
                       n_iter=model.n_iter_)
    from .model_io import model_to_dict

    content = model_to_dict(model, feature_names=names, epsilon_total=E,
                            tuning=_tuning_text(None, model.gamma_, eps, public_rule=public_rule))
    stage = content["stages"][0]
    scores = arm_scores(X[ev] @ np.asarray(stage["coef"]).T + np.asarray(stage["intercept"]),
                        np.asarray(stage["vertices"]))
    texts = tuple(str(c) for c in classes)
    value = private_arm_value(recommend(scores), codes[ev], B[ev], p_received[ev], n_arms=K,
                              benefit_bounds=(lo, hi), propensity_floor=probs, epsilon_mean=eps["value"],
                              epsilon_variance=eps["variance"], arms=texts, level=level, rng=rng)
    eval_acc.spend(eps["value"], label=RELEASE_NAMES["value"])
    eval_acc.spend(eps["variance"], label=RELEASE_NAMES["variance"])
    first, second = value.cell_scales
    deltas = {"propensity": 0.0, "selection": 0.0, "rule": model.privacy_spent_[1],
              "value": _laplace_sums_delta(eps["value"], first.ravel()),
              "variance": _laplace_sums_delta(eps["variance"], second.ravel())}
    result = AnalysisResult(
        model=model, model_content=content, value=value, gamma=float(model.gamma_), gamma_selection=None,
        propensity_model=None, propensity=None, epsilons=eps, total_epsilon=E, n=n, n_learning=int(learn.size),
        n_evaluation=int(ev.size), benefit_bounds=(lo, hi), treatment_labels=texts, feature_names=names,
        level=level, diagnostics=diagnostics, composition=split.composition, shares=shares, deltas=deltas,
        public_n=bool(public_n), evaluation_fraction=float(split.evaluation_fraction), benefit_scale=benefit_scale,
        arm_probabilities={t: float(q) for t, q in zip(texts, probs)},
        weights_upper_bound_given=W_given, weights_upper_bound_used=W,
    )
    if accountant is not None:
        accountant.spend(result.epsilon_spent, label=f"pydpowl analysis: {len(result.ledger()['releases'])} releases "
                                                     f"({split.composition} composition)", delta=result.delta_spent)
    return result
