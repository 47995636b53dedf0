"""An end-to-end private treatment-rule analysis under one total budget.

"Which patients should get the new treatment, how much better is that, and how
sure are we": :func:`run_analysis` answers with one total ``epsilon`` E.

Steps
-----
0. Every public setting is checked and the budget is allocated and checked
   before the data are touched.
1. **Split.** A data-independent random permutation puts ``floor(q n)`` rows
   in the *evaluation* part and the rest in the *learning* part (q = 0.5 by
   default). n is public (replacement neighbours), so both sizes are public.
2. **Propensities** (learning part). Known (a randomised trial: ``P(A = +1)``
   given), or a propensity model released privately
   (:class:`~pydpowl.estimators.dp_propensity.DPLogisticPropensity`, budget
   ``epsilon_propensity``) and then applied, as a public function, to every
   row. Either way each subject's OWL weight depends on that subject's record
   only, so the rule's weight sensitivity is C = 0 (composition, not
   Proposition 8).
3. **gamma** (learning part). By default DPOWL's public rule (a function of
   n, epsilon, d and W; no budget), or fixed in advance by the analyst (no
   budget), or, when candidates ``gammas`` are given, chosen privately by the
   rule's value (:func:`pydpowl.privacy.selection.select_gamma_privately`,
   budget ``epsilon_selection``; its candidates are output-perturbation fits,
   so the rule then uses the paper's mechanism) and transferred to the final
   fit's size and budget.
4. **The rule** (learning part). DP-OWL on the learning rows with the
   remaining learning budget ``epsilon_rule`` (:func:`fit_rule`), by DPOWL's
   default mechanism (objective perturbation with residual weights: the
   propensities are known or released, so C = 0; docs/utility.md) unless the
   analyst chooses another; the report names it.
5. **Its value** (evaluation part). The released rule's value and its gain over
   the better single arm, with confidence intervals for sampling and privacy
   noise (:func:`pydpowl.evaluation.private.private_value`, budgets
   ``epsilon_value`` and ``epsilon_variance``).

Composition
-----------
The learning part spends ``epsilon_propensity + epsilon_selection +
epsilon_rule`` and the evaluation part ``epsilon_value + epsilon_variance``.
By default (``BudgetSplit.composition = "sequential"``) every release is charged
against the one total E: the learning part gets ``(1 - evaluation) E``, the
evaluation part ``evaluation E`` (0.4 E by default), and the ledger's releases
add up to E. Because every subject is in exactly one part and the evaluation
step uses the learning part's outputs only as public inputs, the analysis is
also ``max(learning, evaluation)``-DP (parallel composition, adaptive);
``composition="parallel"`` uses that to give each part the whole E (the
ledger then says so: its releases add up to 2E while the guarantee is E).
Releases are checked against, and spent from,
:class:`~pydpowl.privacy.accountant.BudgetAccountant` objects before and after
the data are touched; an analyst's accountant for the whole dataset is charged
the composed total once.

Why sample splitting rather than cross-fitting: the interval must be about the
*released* rule, learned once; cross-fitting would evaluate K other rules (each
trained on other folds) and would make every subject take part in K - 1 rule
fits and one evaluation, which composes sequentially. Splitting evaluates the
released rule on rows it never saw and costs no extra budget.

This module sits above the estimators (``pydpowl.estimators``) and the privacy
mechanisms (``pydpowl.privacy``), which do not import it; it is application
code, like :mod:`pydpowl.model_io`, not privacy bookkeeping.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike

from ._validation import (check_bool, check_both_arms, check_positive, check_probability, check_treatment, check_vector,
                          resolve_rng)
from .estimators.dp_propensity import DEFAULT_LOGIT_BOUND, DPLogisticPropensity
from .estimators.inputs import prepare_owl
from .privacy.accountant import BudgetAccountant
from .privacy.selection import select_gamma_privately, selection_delta, transfer_gamma
from .evaluation.private import private_value
from .estimators.propensity_received import arm_propensity
from .analysis_base import (  # noqa: F401  (re-exported: the analysis's pieces)
    AnalysisResult, BACK_TRANSFORMS, BenefitScale, BudgetSplit, COMPOSITIONS, COMPOSITION_TEXT, DEFAULT_GAMMAS,
    DELTA_SOURCES, PART_OF, PROPENSITY_MODELS, RELEASE_NAMES, _check_benefit_bounds, _decimal, _double_at_most,
    _laplace_sums_delta, _n_labels, _tuning_text, allocate_budget, budget_shares, check_settings, exact_number,
    features_of, fit_rule, open_accountants, public_weight_bound, split_rows,
)
from .analysis_arms import run_arm_analysis

__all__ = ["BudgetSplit", "AnalysisResult", "BenefitScale", "run_analysis", "fit_rule",
           "allocate_budget", "budget_shares", "exact_number", "DEFAULT_GAMMAS", "PROPENSITY_MODELS"]


def run_analysis(X: ArrayLike, treatment: ArrayLike, benefit: ArrayLike, *, feature_bounds: Any,
                 benefit_bounds: Tuple[float, float], weights_upper_bound: float, total_epsilon: float,
                 propensity: Optional[float] = None, propensity_model: Optional[str] = None,
                 logit_bound: float = DEFAULT_LOGIT_BOUND, propensity_gamma: Optional[float] = None,
                 gamma: Optional[float] = None, gammas: Optional[Sequence[float]] = None, huber_h: Any = "auto",
                 mechanism: str = "auto", residual: Any = "auto",
                 level: float = 0.95, split: Optional[BudgetSplit] = None,
                 feature_names: Optional[Sequence[str]] = None,
                 treatment_labels: Tuple[str, ...] = ("+1", "-1"), accountant: Optional[BudgetAccountant] = None,
                 evaluation_rows: Optional[Sequence[int]] = None, public_n: bool = False,
                 benefit_scale: Optional[BenefitScale] = None, random_state: Any = None) -> AnalysisResult:
    """Run the whole private analysis (see the module docstring).

    Parameters
    ----------
    X : array-like or DataFrame of shape (n, p)
        Features.
    treatment : array-like of shape (n,)
        Received treatments in {-1, 1}.
    benefit : array-like of shape (n,)
        Benefits on their own scale (larger is better); clipped to ``benefit_bounds``.
    feature_bounds : dict or (lower, upper)
        Public per-feature bounds: by column name (``{column: (lower, upper)}``,
        matched to X's columns or ``feature_names``) or in column order.
    benefit_bounds : (float, float)
        Public bounds (L, U) of the benefit; the rule uses ``clip(B, L, U) - L``.
    weights_upper_bound : float
        Public W on ``(B - L) / P(A | x)``; larger weights are clipped (by design).
        The analysis uses ``min(W, (U - L) / f)`` with f the smaller public
        propensity floor (no weight can exceed it), which lowers the rule's and
        the selection's sensitivity when W is loose.
    total_epsilon : float
        E, the total budget, in (0, inf).
    propensity : float, optional
        ``P(A = +1)`` of a randomised trial (exactly one of ``propensity`` and
        ``propensity_model``).
    propensity_model : {"logistic"}, optional
        Release a DP logistic propensity model on the learning part.
    logit_bound : float, default=log(9)
        M of the propensity model (propensities in ``[1/(1+e^M), e^M/(1+e^M)]``).
    propensity_gamma : float, optional
        gamma of the propensity model (default ``sqrt(n_learning / epsilon_propensity)``).
    gamma : float, optional
        A gamma fixed in advance (no budget). None: DPOWL's public gamma rule
        (no budget), unless ``gammas`` are given.
    gammas : sequence of float, optional
        Candidates of a private selection of gamma (:data:`DEFAULT_GAMMAS` is
        the previous default); their fits are output perturbations, so the rule
        then uses the paper's mechanism (``mechanism`` "auto" or "output").
    huber_h : float or "auto", default="auto"
    mechanism : {"auto", "output", "objective"}, default="auto"
    residual : bool or "auto", default="auto"
        As in :class:`pydpowl.DPOWL` (the defaults: objective perturbation with
        residual weights, the utility study's choice for known propensities).
    level : float, default=0.95
    split : BudgetSplit, optional
        Shares of the budget and rows (the defaults of :class:`BudgetSplit`).
    feature_names : sequence of str, optional
        Defaults to the DataFrame's columns, else x1..xp.
    treatment_labels : (str, str), default=("+1", "-1")
        Names of the arms coded +1 and -1 (reported).
    accountant : BudgetAccountant, optional
        The dataset's accountant: the composed total is checked before the data
        are touched and spent once after success.
    evaluation_rows : sequence of int, optional
        The rows of the evaluation part, when the split is fixed in advance
        (it must not depend on the data, e.g. a site or a draw made beforehand;
        the privacy audit uses it to test the mechanism for a given split). By
        default a random ``floor(evaluation_fraction * n)`` rows.
    public_n : bool, default=False
        The analyst declares the number of subjects public: the ledger, the
        notes and the report then state the sizes; otherwise "n not released".
        (The guarantee is for neighbours of the same size, and the releases
        depend on n; printing it is the analyst's decision.)
    benefit_scale : BenefitScale, optional
        What the benefit is (stated next to every value); a generic statement
        by default.
    random_state : None, int or numpy.random.Generator
        Source of the split and of every noise draw; None (fresh operating-system
        entropy) for real releases, seeds for reproduction only.

    Returns
    -------
    AnalysisResult
    """
    if _n_labels(treatment) > 2:  # three or more arms (labels are public, as a classifier's classes_)
        return run_arm_analysis(
            X, treatment, benefit, feature_bounds=feature_bounds, benefit_bounds=benefit_bounds,
            weights_upper_bound=weights_upper_bound, total_epsilon=total_epsilon, propensity=propensity,
            propensity_model=propensity_model, gamma=gamma, gammas=gammas, huber_h=huber_h, mechanism=mechanism,
            residual=residual, level=level, split=split, feature_names=feature_names, accountant=accountant,
            evaluation_rows=evaluation_rows, public_n=public_n, benefit_scale=benefit_scale,
            random_state=random_state)
    split, E, W, (lo, hi), level = check_settings(split, total_epsilon, weights_upper_bound, benefit_bounds, level,
                                                  huber_h)
    if (propensity is None) == (propensity_model is None):
        raise ValueError("give exactly one of propensity (P(A = +1) of a randomised trial) and propensity_model "
                         f"('logistic'); got propensity={propensity!r}, propensity_model={propensity_model!r}.")
    if propensity is not None:
        propensity = check_probability("propensity", propensity, low_open=True, high_open=True)
    elif propensity_model not in PROPENSITY_MODELS:
        raise ValueError(f"propensity_model must be one of {list(PROPENSITY_MODELS)}, got "
                         f"propensity_model={propensity_model!r}.")
    else:
        check_positive("logit_bound", logit_bound)
        if propensity_gamma is not None:
            check_positive("propensity_gamma", propensity_gamma)
    tune = gamma is None and gammas is not None
    grid = [check_positive("gammas", g) for g in gammas] if gamma is None and gammas is not None else []  # tune
    if tune and (not grid or len(set(grid)) != len(grid)):
        raise ValueError("gammas must hold at least one candidate and must not repeat one.")
    if tune:
        if mechanism not in ("auto", "output") or residual not in ("auto", False):
            raise ValueError("a private selection of gamma (gammas=...) scores output-perturbation fits: use it with "
                             f"mechanism='output' and residual=False, got mechanism={mechanism!r}, "
                             f"residual={residual!r}.")
        mechanism, residual = "output", False
    elif gamma is not None:
        gamma = check_positive("gamma", gamma)
    gamma_fit: Union[str, float] = "auto" if gamma is None else gamma  # with tune: the selected one, below
    eps = allocate_budget(E, split, propensity_model=propensity_model is not None, tune=tune)  # at most each share
    shares = budget_shares(E, split, propensity_model=propensity_model is not None, tune=tune)
    benefit_scale = BenefitScale() if benefit_scale is None else benefit_scale
    if not isinstance(benefit_scale, BenefitScale):
        raise TypeError(f"benefit_scale must be a BenefitScale, got {type(benefit_scale).__name__}.")
    if accountant is not None:  # before the data are touched
        accountant.check(E, label="pydpowl analysis")
    learning = [eps[k] for k in ("propensity", "selection", "rule") if eps[k] > 0]
    evaluation = [eps["value"], eps["variance"]]
    learn_acc, eval_acc = open_accountants(E, split, learning, evaluation)
    public_n = check_bool("public_n", public_n)
    X, names, feature_bounds = features_of(X, feature_names, feature_bounds)
    n, p = X.shape
    A = check_treatment("treatment", treatment, length=n)
    B = check_vector("benefit", benefit, length=n)
    rng = resolve_rng(random_state)

    learn, ev = split_rows(n, split, evaluation_rows, rng)
    n_learn, n_eval = learn.size, ev.size
    check_both_arms("treatment (learning part)", A[learn])
    shifted = np.clip(B, lo, hi) - lo  # in [0, U - L]
    diagnostics = {"n_clipped_benefits": int(np.count_nonzero((B < lo) | (B > hi)))}

    # 2. propensities: C = 0 for the rule by composition (known, or a released model applied as a public function)
    prop_model = None
    if propensity is None:  # propensity_model given (exactly one of the two, checked)
        with learn_acc.release(eps["propensity"], label=RELEASE_NAMES["propensity"]):
            prop_model = DPLogisticPropensity(epsilon=eps["propensity"], feature_bounds=feature_bounds,
                                              gamma=propensity_gamma, logit_bound=logit_bound,
                                              random_state=rng).fit(X[learn], A[learn])
        prop_model.set_params(random_state=None)  # the live generator could be rewound to regenerate the noise
        p_received, n_clip_logits = prop_model.probability_of(X, A)
        floors = (prop_model.propensity_floor, prop_model.propensity_floor)
        diagnostics["n_clipped_logits"] = n_clip_logits
    else:
        p_received = arm_propensity(propensity, A)
        floors = (propensity, 1.0 - propensity)
    # every weight (B - L) / p is at most (U - L) / (smallest propensity floor), a public bound: W can only shrink
    W_given, W = W, public_weight_bound(W, hi - lo, min(floors))

    # 3. gamma
    selection = None
    if tune:
        with learn_acc.release(eps["selection"], label=RELEASE_NAMES["selection"]):
            # each weight depends on its own record only (C = 0)
            problem = prepare_owl(X[learn], A[learn], shifted[learn], p_received[learn], weights_upper_bound=W,
                                  feature_bounds=feature_bounds, weight_sensitivity=0.0)
            chosen, n_part = select_gamma_privately(problem.Z, problem.labels, problem.weights,
                                                    rng.permutation(n_learn), grid,
                                                    epsilon=eps["selection"], weights_upper_bound=W,
                                                    huber_h=0.5 if huber_h == "auto" else huber_h, rng=rng)
        gamma_selected = transfer_gamma(chosen, transfer="bound", n_part=n_part, epsilon_select=eps["selection"],
                                        n_fit=n_learn, epsilon_fit=eps["rule"])
        gamma_fit = gamma_selected
        sizes = ((f"n={n_part}", f"n={n_learn}") if public_n else
                 ("n = a part of the learning rows", "n = the learning rows; n not released"))
        selection = {"selected": chosen, "n_part": n_part, "candidates": list(grid), "transfer": "bound",
                     "note": f"selected for ({sizes[0]}, epsilon={eps['selection']:g}); used {gamma_selected:.6g} "
                             f"for ({sizes[1]}, epsilon={eps['rule']:g}) by gamma ~ sqrt(n / epsilon)",
                     "delta": selection_delta(grid, epsilon=eps["selection"], weights_upper_bound=W,
                                              n_part=n_part, dim=X.shape[1] + 1)}

    # 4. the rule
    with learn_acc.release(eps["rule"], label=RELEASE_NAMES["rule"]):
        model = fit_rule(X[learn], A[learn], shifted[learn], p_received[learn], epsilon=eps["rule"],
                         gamma=gamma_fit, weights_upper_bound=W, feature_bounds=feature_bounds, weight_sensitivity=0.0,
                         huber_h=huber_h, mechanism=mechanism, residual=residual, benefit_range=hi - lo,
                         random_state=rng)
    public_rule, gamma_released = gamma_fit == "auto", model.gamma_
    model.set_params(random_state=None)  # the live generator could be rewound to regenerate the noise
    diagnostics.update(n_clipped_weights=model.n_clipped_weights_, n_clipped_features=model.n_clipped_features_,
                       n_iter=model.n_iter_)
    from .model_io import model_to_dict

    tuning = _tuning_text(selection, gamma_released, eps, public_rule=public_rule)
    content = model_to_dict(model, feature_names=names, epsilon_total=E, tuning=tuning,
                            treatment_labels=(treatment_labels[0], treatment_labels[1]))
    rule_ev = np.where(X[ev] @ np.asarray(content["coef"]) + content["intercept"] > 0, 1.0, -1.0)

    # 5. the value, on rows the rule never saw (both releases at once: spent together after success)
    value = private_value(rule_ev, A[ev], B[ev], p_received[ev], benefit_bounds=(lo, hi), propensity_floor=floors,
                          epsilon_mean=eps["value"], epsilon_variance=eps["variance"], level=level, rng=rng)
    eval_acc.spend(eps["value"], label=RELEASE_NAMES["value"])
    eval_acc.spend(eps["variance"], label=RELEASE_NAMES["variance"])
    deltas = {"propensity": prop_model.privacy_spent_[1] if prop_model is not None else 0.0,
              "selection": selection["delta"] if selection is not None else 0.0,
              "rule": model.privacy_spent_[1],
              "value": _laplace_sums_delta(eps["value"], value.first_scales),
              "variance": _laplace_sums_delta(eps["variance"], value.second_scales)}
    result = AnalysisResult(
        model=model, model_content=content, value=value, gamma=float(gamma_released), gamma_selection=selection,
        propensity_model=prop_model, propensity=propensity, epsilons=eps, total_epsilon=E, n=n,
        n_learning=n_learn, n_evaluation=n_eval, benefit_bounds=(lo, hi),
        treatment_labels=(str(treatment_labels[0]), str(treatment_labels[1])), feature_names=names, level=level,
        diagnostics=diagnostics, composition=split.composition, shares=shares, deltas=deltas,
        public_n=bool(public_n), evaluation_fraction=float(split.evaluation_fraction), benefit_scale=benefit_scale,
        weights_upper_bound_given=W_given, weights_upper_bound_used=W,
    )
    if accountant is not None:  # after success: the composed total, once
        accountant.spend(result.epsilon_spent, label=f"pydpowl analysis: {len(result.ledger()['releases'])} releases "
                                                     f"({split.composition} composition)", delta=result.delta_spent)
    return result
