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
   noise (:func:`pydpowl.privacy.value_estimate.private_value`, budgets
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

import math
import numbers
from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike

from ._validation import (check_array, check_both_arms, check_choice, check_positive, check_probability,
                          check_treatment, check_vector, check_weight_sensitivity, feature_names_of,
                          resolve_feature_bounds, resolve_rng)
from .estimators.dp_propensity import DEFAULT_LOGIT_BOUND, DPLogisticPropensity
from .estimators.owl import DPOWL, prepare_owl
from .privacy.accountant import BudgetAccountant, rounded_release_spent
from .privacy.selection import select_gamma_privately, selection_delta, transfer_gamma
from .privacy.value_estimate import PrivateValue, private_value
from .value import arm_propensity

#: the two ways the analysis composes its releases (see :class:`BudgetSplit`)
COMPOSITIONS = ("sequential", "parallel")
COMPOSITION_TEXT = {
    "sequential": "sequential: every release is charged against the total, spent = the sum of the releases",
    "parallel": ("sequential within each part; parallel across the learning and evaluation parts, which are "
                 "disjoint (every subject is in exactly one): spent = max over the parts of the sum of their "
                 "releases, so the releases listed add up to more than the total while the guarantee is the total"),
}

__all__ = ["BudgetSplit", "AnalysisResult", "BenefitScale", "run_analysis", "analyze_arrays", "fit_rule",
           "allocate_budget", "budget_shares", "exact_number", "DEFAULT_GAMMAS", "PROPENSITY_MODELS"]

#: candidate gammas of the private selection (each fitted on 1/(K+1) of the learning rows)
DEFAULT_GAMMAS: Tuple[float, ...] = (20.0, 60.0, 200.0, 600.0, 2000.0)
#: propensity models the analysis can release
PROPENSITY_MODELS = ("logistic",)

#: which part of the rows each release uses
PART_OF = {"propensity": "learning", "selection": "learning", "rule": "learning", "value": "evaluation",
           "variance": "evaluation"}
#: where each release's delta comes from (the ideal mechanisms are pure epsilon-DP)
DELTA_SOURCES = {
    "propensity": "floating-point-safe rounding of the release (engine.mechanisms.floating_point_delta)",
    "selection": "floating-point-safe rounding of each candidate fit (the largest; disjoint parts)",
    "rule": "floating-point-safe rounding of the release (engine.mechanisms.floating_point_delta)",
    "value": "rounding of the 4 Laplace-noised sums to their grid (floating_point_delta, d = 1 each, summed)",
    "variance": "rounding of the 4 Laplace-noised sums to their grid (floating_point_delta, d = 1 each, summed)",
}

RELEASE_NAMES = {
    "propensity": "propensity model (DP logistic regression, output perturbation)",
    "selection": "choice of gamma (exponential mechanism on the value score)",
    "rule": "treatment rule (DP-OWL, C = 0)",
    "value": "value of the rule: noisy cell sums (Laplace)",
    "variance": "value of the rule: noisy second moments for the interval (Laplace)",
}


#: known transforms of a clinical quantity: the benefit's definition and how values read back
BACK_TRANSFORMS = {
    "los-hours": ("benefit = log(24*365) - log(length of stay in hours); larger is better (a shorter stay)",
                  "a value V reads as a geometric-mean length of stay of 24*365*exp(-V) hours, a gain G as the "
                  "geometric-mean length of stay multiplied by exp(-G)"),
}


@dataclass(frozen=True)
class BenefitScale:
    """What the benefit is: stated next to every value in the analysis' outputs (public).

    Attributes
    ----------
    definition : str
        The benefit's definition, e.g. ``"benefit = column 'score' (larger is
        better)"``.
    back_transform : {"los-hours"} or None
        A known transform of a clinical quantity. ``"los-hours"`` is the
        CYP-GUIDES coding ``log(24*365) - log(LOS in hours)``: a value ``V``
        (a mean benefit) is a geometric-mean length of stay of ``24*365
        exp(-V)`` hours, and a gain ``G`` multiplies that length of stay by
        ``exp(-G)``.
    """

    definition: str = "benefit (larger is better)"
    back_transform: Optional[str] = None

    def __post_init__(self) -> None:
        if not isinstance(self.definition, str) or not self.definition.strip():
            raise ValueError(f"definition must be a non-empty string, got {self.definition!r}.")
        if self.back_transform is not None and self.back_transform not in BACK_TRANSFORMS:
            raise ValueError(f"back_transform must be None or one of {sorted(BACK_TRANSFORMS)}, got "
                             f"back_transform={self.back_transform!r}.")

    @classmethod
    def known(cls, name: str) -> "BenefitScale":
        """The scale of a known transform (``"los-hours"``), with its definition."""
        if name not in BACK_TRANSFORMS:
            raise ValueError(f"name must be one of {sorted(BACK_TRANSFORMS)}, got {name!r}.")
        return cls(definition=BACK_TRANSFORMS[name][0], back_transform=name)

    @property
    def reading(self) -> str:
        """How values read on the clinical scale (empty without a back-transform)."""
        return "" if self.back_transform is None else BACK_TRANSFORMS[self.back_transform][1]

    def value_text(self, estimate: float, low: float, high: float) -> str:
        """The clinical reading of a value and its interval (empty without a back-transform)."""
        if self.back_transform != "los-hours":
            return ""
        from .datasets.cyp_guides import LOG_YEAR_HOURS

        hours = [math.exp(LOG_YEAR_HOURS - v) for v in (estimate, high, low)]  # decreasing in the value
        return f"geometric-mean length of stay {hours[0]:.3g} hours [{hours[1]:.3g}, {hours[2]:.3g}]"

    def gain_text(self, estimate: float, low: float, high: float) -> str:
        """The clinical reading of a gain in value and its interval (empty without a back-transform)."""
        if self.back_transform != "los-hours":
            return ""
        ratio = [math.exp(-v) for v in (estimate, high, low)]
        return f"length of stay x {ratio[0]:.3g} [{ratio[1]:.3g}, {ratio[2]:.3g}] (below 1: shorter)"


@dataclass(frozen=True)
class BudgetSplit:
    """How the total budget E and the rows are shared out (documented defaults).

    Attributes
    ----------
    evaluation : float, default=0.4
        Share of E for the evaluation part (the value and its interval) under
        ``composition="sequential"``; the learning part gets the rest. Unused
        under ``"parallel"``, where each part gets the whole E.
    propensity : float, default=0.2
        Share of the learning part's budget for the propensity model (only with a model).
    selection : float, default=0.2
        Share of the learning part's budget for the choice of gamma (only when gamma is tuned).
    variance : float, default=0.3
        Share of the evaluation part's budget for the second moments; the value's
        first moments get the rest.
    evaluation_fraction : float, default=0.5
        Share of the rows in the evaluation part.
    composition : {"sequential", "parallel"}, default="sequential"
        ``"sequential"``: every release is charged against E and the releases
        of the ledger add up to E. ``"parallel"``: the two parts hold disjoint
        rows, so each may spend the whole E (parallel composition; the ledger's
        releases then add up to 2E while the guarantee is E, as its
        ``composition`` field explains). The default is the one whose ledger
        reads without a composition theorem.

    The rule gets the learning part's remainder, ``1 - propensity - selection``
    of it (at least 0.6): it is the main release and its utility grows with its
    budget; the exponential mechanism over a handful of candidates and a
    low-dimensional logistic model need less. On the evaluation part, 0.7 / 0.3
    is a compromise between the value shares that gave the narrowest intervals
    in the design study of docs/analysis.md.
    """

    evaluation: float = 0.4
    propensity: float = 0.2
    selection: float = 0.2
    variance: float = 0.3
    evaluation_fraction: float = 0.5
    composition: str = "sequential"

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.name != "composition":
                check_probability(f.name, getattr(self, f.name), low_open=True, high_open=True)
        check_choice("composition", self.composition, COMPOSITIONS)
        if self.propensity + self.selection >= 1.0:
            raise ValueError(f"propensity + selection must be < 1 (the rule needs a budget), got "
                             f"propensity={self.propensity!r} + selection={self.selection!r}.")

    @classmethod
    def parse(cls, text: str) -> "BudgetSplit":
        """``"evaluation=0.4,propensity=0.1,selection=0.2,variance=0.3,evaluation_fraction=0.5,composition=sequential"``
        (any subset)."""
        names = {f.name for f in fields(cls)}
        values: Dict[str, float] = {}
        for item in (t.strip() for t in str(text).split(",") if t.strip()):
            key, sep, val = item.partition("=")
            key = key.strip()
            if not sep or key not in names:
                raise ValueError(f"budget split: {item!r} is not NAME=SHARE with NAME one of {sorted(names)}.")
            if key == "composition":
                values[key] = val.strip()
                continue
            try:
                values[key] = float(val)
            except ValueError:
                raise ValueError(f"budget split: {item!r} does not hold a number.") from None
        return cls(**values)


def _decimal(value: float) -> Fraction:
    """The decimal number a float was written as (its shortest repr), exactly: 0.1 is 1/10."""
    return Fraction(repr(float(value)))


def _double_at_most(q: Fraction) -> float:
    """The largest double not above ``q`` (a mechanism calibrated with it spends at most ``q``)."""
    f = float(q)
    return f if Fraction(f) <= q else math.nextafter(f, -math.inf)


def exact_number(q: Fraction) -> float:
    """``q`` as a JSON number: the double whose shortest repr is ``q``'s exact decimal when there is one
    (a round trip, checked), else the smallest double above ``q`` (never an understatement)."""
    f = float(q)
    if Fraction(repr(f)) == q:
        return f
    return f if Fraction(f) >= q else math.nextafter(f, math.inf)


def budget_shares(total_epsilon: float, split: BudgetSplit, *, propensity_model: bool, tune: bool
                  ) -> Dict[str, Fraction]:
    """Each release's exact share of E, computed from the decimal numbers the analyst gave.

    ``total_epsilon`` and the shares of ``split`` are taken as the decimals
    they were written as (``2`` and ``0.4``, not their binary approximations),
    and the products and differences are exact: the learning part of E = 2 is
    exactly 1.2 and the releases add up to exactly E. See :func:`allocate_budget`.
    """
    E = _decimal(check_positive("total_epsilon", total_epsilon))
    if split.composition == "parallel":
        e_learn = e_eval = E
    else:
        e_eval = _decimal(split.evaluation) * E
        e_learn = E - e_eval
    zero = Fraction(0)
    eps = {"propensity": _decimal(split.propensity) * e_learn if propensity_model else zero,
           "selection": _decimal(split.selection) * e_learn if tune else zero,
           "variance": _decimal(split.variance) * e_eval}
    eps["rule"] = e_learn - eps["propensity"] - eps["selection"]
    eps["value"] = e_eval - eps["variance"]
    return eps


def allocate_budget(total_epsilon: float, split: BudgetSplit, *, propensity_model: bool, tune: bool
                    ) -> Dict[str, float]:
    """Epsilon of each release: ``propensity``, ``selection``, ``rule`` (learning part), ``value``, ``variance``.

    Releases that do not happen get 0. Under ``split.composition ==
    "sequential"`` the learning part has ``(1 - split.evaluation) E`` and the
    evaluation part ``split.evaluation E``, so all releases add up to E; under
    ``"parallel"`` each part has E. Each value is the largest double not above
    the release's exact share (:func:`budget_shares`), so the mechanisms spend
    at most what the ledger states.

    Raises
    ------
    ValueError
        When ``split`` sets a share that no release of this plan uses (a
        ``propensity`` share other than the default without a propensity
        model, a ``selection`` share without tuning): it would be ignored.
    """
    unused = [(name, why) for name, why, used in (
        ("propensity", "the propensity is known (no propensity model is released); give propensity_model="
                       "'logistic' (CLI: --propensity-model logistic) to release one", propensity_model),
        ("selection", "gamma is fixed (it is not chosen privately); give gammas instead of gamma to tune it",
         tune)) if not used and getattr(split, name) != getattr(BudgetSplit, name)]
    if unused:
        name, why = unused[0]
        raise ValueError(f"the budget split's {name}={getattr(split, name)!r} (--budget-split {name}=...) would "
                         f"be ignored: {why}.")
    return {k: _double_at_most(v) for k, v in budget_shares(total_epsilon, split, propensity_model=propensity_model,
                                                             tune=tune).items()}


def fit_rule(X: ArrayLike, treatment: ArrayLike, benefit: ArrayLike, propensity_received: ArrayLike, *,
             epsilon: float, gamma: Any, weights_upper_bound: float, feature_bounds: Any,
             weight_sensitivity: float, huber_h: Any = "auto", mechanism: str = "auto", residual: Any = "auto",
             benefit_range: Optional[float] = None, random_state: Any = None) -> DPOWL:
    """The one place this package's analysis code fits a DP-OWL rule.

    Parameters
    ----------
    X, treatment, benefit : array-like
        Features, treatments in {-1, 1} and non-negative (shifted) benefits.
    propensity_received : array-like of shape (n,)
        ``P(A_i | x_i)`` of the received treatment.
    epsilon, gamma, weights_upper_bound, feature_bounds, huber_h, mechanism, residual, random_state
        As in :class:`pydpowl.DPOWL`.
    benefit_range : float, optional
        ``U - L``: the shifted benefits lie in ``[0, U - L]`` (public); residual weights need it.
    weight_sensitivity : float
        C, stated by the caller. 0 when the propensities are known or come from
        a model released before (each weight then depends on its own record
        only: the composition argument); Proposition 8's C for a model fitted
        non-privately on the same rows.
    """
    C = check_weight_sensitivity(weight_sensitivity, "weight_sensitivity")
    model = DPOWL(epsilon=epsilon, gamma=gamma, weights_upper_bound=weights_upper_bound,
                  feature_bounds=feature_bounds, huber_h=huber_h, mechanism=mechanism, residual=residual,
                  benefit_bounds=None if benefit_range is None else (0.0, benefit_range), weight_sensitivity=C,
                  random_state=random_state)
    return model.fit(X, treatment, benefit, propensity_received)  # the stated C travels with the propensities


@dataclass
class AnalysisResult:
    """Everything the analysis released, and how it was paid for.

    Attributes
    ----------
    model : DPOWL
        The released rule (fitted on the learning part).
    model_content : dict
        The rule as written to ``model.json`` (:func:`pydpowl.model_io.model_to_dict`,
        rounded to the release grid); the value was estimated for exactly this rule.
    value : PrivateValue
        The value release and the intervals derived from it.
    gamma : float
        The gamma of the released rule.
    gamma_selection : dict or None
        ``selected``, ``n_part``, ``candidates``, ``transfer`` when gamma was tuned.
    propensity_model : DPLogisticPropensity or None
    propensity : float or None
        The known ``P(A = +1)`` when no model was used.
    epsilons : dict
        Budget of each release (see :func:`allocate_budget`).
    total_epsilon : float
    n, n_learning, n_evaluation : int
        Public sizes.
    benefit_bounds : (float, float)
    treatment_labels : (str, str)
    feature_names : list of str
    level : float
    diagnostics : dict
        Clip counts and solver iterations computed from the private data:
        NON-PRIVATE, for the analyst only (``pydpowl analyze --diagnostics``
        prints them, labelled); never written to an output file.
    composition : {"sequential", "parallel"}
    shares : dict of Fraction
        Each release's exact share of E (:func:`budget_shares`); ``epsilons``
        holds the doubles the mechanisms used (at most the shares).
    deltas : dict of float
        Each release's delta (``DELTA_SOURCES`` says where it comes from).
    public_n : bool
        The analyst declared the number of subjects public: sizes are then
        written in the ledger, the report and the notes; otherwise "n not
        released".
    evaluation_fraction : float
        Share of the rows in the evaluation part (public).
    benefit_scale : BenefitScale
        What the benefit is (stated next to every value in the outputs).
    """

    model: DPOWL
    model_content: Dict[str, Any]
    value: PrivateValue
    gamma: float
    gamma_selection: Optional[Dict[str, Any]]
    propensity_model: Optional[DPLogisticPropensity]
    propensity: Optional[float]
    epsilons: Dict[str, float]
    total_epsilon: float
    n: int
    n_learning: int
    n_evaluation: int
    benefit_bounds: Tuple[float, float]
    treatment_labels: Tuple[str, str]
    feature_names: List[str]
    level: float
    diagnostics: Dict[str, int] = field(default_factory=dict)
    composition: str = "sequential"
    shares: Dict[str, Fraction] = field(default_factory=dict)
    deltas: Dict[str, float] = field(default_factory=dict)
    public_n: bool = False
    evaluation_fraction: float = 0.5
    benefit_scale: "BenefitScale" = field(default_factory=lambda: BenefitScale())

    def _share(self, key: str) -> Fraction:
        return self.shares[key] if key in self.shares else _decimal(self.epsilons[key])

    def _part(self, part: str) -> Tuple[Fraction, float]:
        keys = [k for k, v in PART_OF.items() if v == part]
        return sum((self._share(k) for k in keys), Fraction(0)), math.fsum(self.deltas.get(k, 0.0) for k in keys)

    @property
    def epsilon_learning(self) -> float:
        """The learning part's releases, summed exactly (see :func:`exact_number`)."""
        return exact_number(self._part("learning")[0])

    @property
    def epsilon_evaluation(self) -> float:
        return exact_number(self._part("evaluation")[0])

    @property
    def epsilon_spent(self) -> float:
        """The composed total: the sum of every release (sequential), or the ``max`` over the two
        disjoint parts of their sums (parallel); exact, from the decimal budgets given."""
        (e_l, _), (e_e, _) = self._part("learning"), self._part("evaluation")
        return exact_number(max(e_l, e_e) if self.composition == "parallel" else e_l + e_e)

    @property
    def delta_spent(self) -> float:
        """The composed delta (the sum, or the larger part's under parallel composition)."""
        if self.composition == "parallel":
            return max(self._part("learning")[1], self._part("evaluation")[1])
        return math.fsum(self.deltas.get(k, 0.0) for k in PART_OF)  # one exactly rounded sum of every release

    @property
    def privacy_spent(self) -> Tuple[float, float]:
        """``(epsilon, delta)`` of the whole analysis."""
        return self.epsilon_spent, self.delta_spent

    def ledger(self) -> Dict[str, Any]:
        """The ledger (``ledger.json``): every release with its (epsilon, delta) and part, and the composed total.

        Epsilons are the exact shares of the decimal budget given (``1.2``, not
        ``1.2000000000000002``); each mechanism used the largest double not
        above its share. Sizes are written only when n was declared public.
        """
        from .estimators.summary import guarantee_text

        rows = {"learning": self.n_learning, "evaluation": self.n_evaluation}
        names = dict(RELEASE_NAMES, rule=f"{RELEASE_NAMES['rule'][:-1]}: {self.model.mechanism_description_})")
        releases = []
        for k in ("propensity", "selection", "rule", "value", "variance"):
            if self.epsilons[k] > 0:
                entry = {"name": names[k], "epsilon": exact_number(self._share(k)),
                         "delta": self.deltas.get(k, 0.0), "delta_source": DELTA_SOURCES[k], "part": PART_OF[k]}
                if self.public_n:
                    entry["rows"] = rows[PART_OF[k]]
                releases.append(entry)
        parts = []
        for name in ("learning", "evaluation"):
            eps, delta = self._part(name)
            parts.append({"name": name, **({"rows": rows[name]} if self.public_n else {}),
                          "epsilon": exact_number(eps), "delta": delta})
        return {
            "total_epsilon": exact_number(_decimal(self.total_epsilon)),
            "spent": self.epsilon_spent,
            "spent_delta": self.delta_spent,
            "guarantee": guarantee_text(*self.privacy_spent),
            "composition": (COMPOSITION_TEXT["parallel"] if self.composition == "parallel"
                            else COMPOSITION_TEXT["sequential"]),
            "parts": parts,
            "releases": releases,
            "notes": [
                "epsilon: each release's exact share of the total, computed from the decimal budgets given; its "
                "mechanism used the largest double not above it",
                "delta: each ideal mechanism is pure epsilon-DP; the delta is that of the floating-point-safe "
                "rounding of its noisy output under the sampler model of docs/privacy_audit.md (delta_source); "
                "deltas add up like epsilons (sum; the larger part's under parallel composition)",
                "rows: " + ("the number of subjects was declared public" if self.public_n else
                            "n not released (it was not declared public)"),
            ],
        }

    def value_summary(self) -> Dict[str, Any]:
        """``value.json``: the rule's value with its interval, and its gain over the better single arm."""
        plus, minus = self.treatment_labels
        out: Dict[str, Any] = dict(self.value.value.as_dict())
        out["difference_from_better_arm"] = self.value.difference.as_dict()
        out["versus_arm"] = {plus: self.value.versus_plus.as_dict(), minus: self.value.versus_minus.as_dict()}
        scale = self.benefit_scale
        out["benefit"] = scale.definition
        if scale.back_transform is not None:
            v, d = self.value.value, self.value.difference
            out["clinical"] = {"reading": scale.reading,
                               "value": scale.value_text(v.estimate, v.ci_low, v.ci_high),
                               "difference_from_better_arm": scale.gain_text(d.estimate, d.ci_low, d.ci_high)}
        rows = f"{self.n_evaluation} evaluation rows" if self.public_n else "the evaluation rows (n not released)"
        out["notes"] = [
            f"value: mean benefit (clipped to [{self.benefit_bounds[0]:g}, {self.benefit_bounds[1]:g}]) if every "
            f"patient were treated by the released rule; estimated on {rows} that the rule never saw",
            "intervals account for sampling error (normal approximation, privately bounded variance) and for the "
            "Laplace privacy noise (exact law)",
            "difference_from_better_arm: V(rule) - max(V(everyone +1), V(everyone -1)); versus_arm gives V(rule) - "
            "V(everyone that arm); the two versus_arm intervals hold together at the stated level",
            "valid when the propensities are right (known in a randomised trial; a released model's error is not "
            "covered)",
        ]
        return out

    def coefficients(self) -> List[Tuple[str, float]]:
        """The released rule's coefficients as (name, value), intercept first (original feature scale)."""
        c = self.model_content
        return [("(intercept)", float(c["intercept"]))] + list(zip(c["feature_names"], (float(v) for v in c["coef"])))

    def to_dict(self) -> Dict[str, Any]:
        """Plain JSON-ready dict of everything released (for bridges such as R's).

        The sizes ``n``, ``n_learning`` and ``n_evaluation`` are included for
        programs; a bridge prints them only when ``public_n`` is True.
        """
        out = {
            "model": self.model_content,
            "coefficients": {name: v for name, v in self.coefficients()},
            "gamma": self.gamma,
            "gamma_selection": self.gamma_selection,
            "mechanism": self.model.mechanism_description_,
            "value": self.value_summary(),
            "ledger": self.ledger(),
            "n": self.n, "n_learning": self.n_learning, "n_evaluation": self.n_evaluation,
            "public_n": self.public_n,  # print the sizes only when True (n declared public)
            "treatment_labels": list(self.treatment_labels),
            "propensity": ({"model": "logistic", "intercept": self.propensity_model.intercept_,
                            "coef": [float(v) for v in self.propensity_model.coef_],
                            "logit_bound": float(self.propensity_model.logit_bound),
                            "gamma": float(self.propensity_model.gamma_)}
                           if self.propensity_model is not None else {"known": self.propensity}),
            "value_release": {"first_moments": self.value.first_moments.tolist(),
                              "second_moments": self.value.second_moments.tolist()},
            "privacy_spent": list(self.privacy_spent),
        }
        return out


def _check_benefit_bounds(bounds: Any) -> Tuple[float, float]:
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise TypeError("benefit_bounds must be a pair (lower, upper).") from None
    out = []
    for name, v in (("benefit_bounds[0] (lower)", lo), ("benefit_bounds[1] (upper)", hi)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or not math.isfinite(float(v)):
            raise ValueError(f"{name} must be a finite number, got {v!r}.")
        out.append(float(v))
    if not out[0] < out[1]:
        raise ValueError(f"benefit_bounds must satisfy lower < upper, got benefit_bounds=({out[0]!r}, {out[1]!r}).")
    return out[0], out[1]


def run_analysis(X: ArrayLike, treatment: ArrayLike, benefit: ArrayLike, *, feature_bounds: Any,
                 benefit_bounds: Tuple[float, float], weights_upper_bound: float, total_epsilon: float,
                 propensity: Optional[float] = None, propensity_model: Optional[str] = None,
                 logit_bound: float = DEFAULT_LOGIT_BOUND, propensity_gamma: Optional[float] = None,
                 gamma: Optional[float] = None, gammas: Optional[Sequence[float]] = None, huber_h: Any = "auto",
                 mechanism: str = "auto", residual: Any = "auto",
                 level: float = 0.95, split: Optional[BudgetSplit] = None, feature_names: Optional[Sequence[str]] = None,
                 treatment_labels: Tuple[str, str] = ("+1", "-1"), accountant: Optional[BudgetAccountant] = None,
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
    split = BudgetSplit() if split is None else split
    if not isinstance(split, BudgetSplit):
        raise TypeError(f"split must be a BudgetSplit, got {type(split).__name__}.")
    E = check_positive("total_epsilon", total_epsilon)
    W = check_positive("weights_upper_bound", weights_upper_bound)
    lo, hi = _check_benefit_bounds(benefit_bounds)
    level = check_probability("level", level, low_open=True, high_open=True)
    if huber_h != "auto":
        check_positive("huber_h", huber_h)
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
    grid = [check_positive("gammas", g) for g in gammas] if tune else []
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
    else:
        gamma = "auto"
    eps = allocate_budget(E, split, propensity_model=propensity_model is not None, tune=tune)  # at most each share
    shares = budget_shares(E, split, propensity_model=propensity_model is not None, tune=tune)
    benefit_scale = BenefitScale() if benefit_scale is None else benefit_scale
    if not isinstance(benefit_scale, BenefitScale):
        raise TypeError(f"benefit_scale must be a BenefitScale, got {type(benefit_scale).__name__}.")
    if accountant is not None:  # before the data are touched
        accountant.check(E, label="pydpowl analysis")
    learning = [eps[k] for k in ("propensity", "selection", "rule") if eps[k] > 0]
    evaluation = [eps["value"], eps["variance"]]
    if split.composition == "parallel":  # disjoint parts: an accountant of E for each
        learn_acc = BudgetAccountant(E, dataset="learning part")
        eval_acc = BudgetAccountant(E, dataset="evaluation part")
        learn_acc.check_split(learning, label="learning part")
        eval_acc.check_split(evaluation, label="evaluation part")
    else:  # every release against the one total E
        learn_acc = eval_acc = BudgetAccountant(E, dataset="whole dataset")
        learn_acc.check_split(learning + evaluation, label="analysis")

    given_names = list(feature_names) if feature_names is not None else feature_names_of(X)
    X = check_array("X", X)
    n, p = X.shape
    names = given_names or [f"x{j + 1}" for j in range(p)]
    if len(names) != p:
        raise ValueError(f"feature_names must have {p} entries (one per column of X), got {len(names)}.")
    # bounds given by name are matched to the column names (public), then used in column order throughout
    feature_bounds = resolve_feature_bounds("feature_bounds", feature_bounds, p, given_names)
    A = check_treatment("treatment", treatment, length=n)
    B = check_vector("benefit", benefit, length=n)
    rng = resolve_rng(random_state)

    if evaluation_rows is None:
        n_eval = int(math.floor(split.evaluation_fraction * n))
        perm = rng.permutation(n)  # data-independent
        ev = np.sort(perm[:n_eval])
    else:
        ev = np.unique(np.asarray(evaluation_rows))
        if ev.dtype.kind not in "iu" or ev.size != len(evaluation_rows) or (ev.size and (ev[0] < 0 or ev[-1] >= n)):
            raise ValueError(f"evaluation_rows must be distinct row indices in [0, {n - 1}].")
        n_eval = int(ev.size)
    n_learn = n - n_eval
    if n_eval < 2 or n_learn < 4:
        raise ValueError(f"n={n} rows with evaluation_fraction={split.evaluation_fraction:g} leave {n_learn} "
                         f"learning and {n_eval} evaluation rows; need at least 4 and 2.")
    learn = np.setdiff1d(np.arange(n), ev)
    check_both_arms("treatment (learning part)", A[learn])
    shifted = np.clip(B, lo, hi) - lo  # in [0, U - L]
    diagnostics = {"n_clipped_benefits": int(np.count_nonzero((B < lo) | (B > hi)))}

    # 2. propensities: C = 0 for the rule by composition (known, or a released model applied as a public function)
    prop_model = None
    if propensity_model is not None:
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
    W = min(W, (hi - lo) / min(floors))

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
        gamma = transfer_gamma(chosen, transfer="bound", n_part=n_part, epsilon_select=eps["selection"],
                               n_fit=n_learn, epsilon_fit=eps["rule"])
        sizes = ((f"n={n_part}", f"n={n_learn}") if public_n else
                 ("n = a part of the learning rows", "n = the learning rows; n not released"))
        selection = {"selected": chosen, "n_part": n_part, "candidates": list(grid), "transfer": "bound",
                     "note": f"selected for ({sizes[0]}, epsilon={eps['selection']:g}); used {gamma:.6g} for "
                             f"({sizes[1]}, epsilon={eps['rule']:g}) by gamma ~ sqrt(n / epsilon)",
                     "delta": selection_delta(grid, epsilon=eps["selection"], weights_upper_bound=W,
                                              n_part=n_part, dim=X.shape[1] + 1)}

    # 4. the rule
    with learn_acc.release(eps["rule"], label=RELEASE_NAMES["rule"]):
        model = fit_rule(X[learn], A[learn], shifted[learn], p_received[learn], epsilon=eps["rule"], gamma=gamma,
                         weights_upper_bound=W, feature_bounds=feature_bounds, weight_sensitivity=0.0,
                         huber_h=huber_h, mechanism=mechanism, residual=residual, benefit_range=hi - lo,
                         random_state=rng)
    public_rule, gamma = gamma == "auto", model.gamma_
    model.set_params(random_state=None)  # the live generator could be rewound to regenerate the noise
    diagnostics.update(n_clipped_weights=model.n_clipped_weights_, n_clipped_features=model.n_clipped_features_,
                       n_iter=model.n_iter_)
    from .model_io import model_to_dict

    content = model_to_dict(model, feature_names=names, epsilon_total=E, tuning=_tuning_text(selection, gamma, eps,
                                                                                   public_rule=public_rule),
                            treatment_labels=treatment_labels)
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
        model=model, model_content=content, value=value, gamma=float(gamma), gamma_selection=selection,
        propensity_model=prop_model, propensity=propensity, epsilons=eps, total_epsilon=E, n=n,
        n_learning=n_learn, n_evaluation=n_eval, benefit_bounds=(lo, hi),
        treatment_labels=(str(treatment_labels[0]), str(treatment_labels[1])), feature_names=names, level=level,
        diagnostics=diagnostics, composition=split.composition, shares=shares, deltas=deltas,
        public_n=bool(public_n), evaluation_fraction=float(split.evaluation_fraction), benefit_scale=benefit_scale,
    )
    if accountant is not None:  # after success: the composed total, once
        accountant.spend(result.epsilon_spent, label=f"pydpowl analysis: {len(result.ledger()['releases'])} releases "
                                                     f"({split.composition} composition)", delta=result.delta_spent)
    return result


def _laplace_sums_delta(epsilon: float, scales: Sequence[float]) -> float:
    """delta of a release of sums with independent Laplace noise of ``scales``, each rounded to its grid: the
    floating-point bound with d = 1 for each (a Laplace draw is an l2-Laplace draw in one dimension), summed."""
    from .privacy.value_estimate import release_grid

    return min(1.0, math.fsum(rounded_release_spent(epsilon, dim=1, grid=release_grid(float(b)),
                                                    noise_scale=float(b))[1] for b in scales))


def _tuning_text(selection: Optional[Dict[str, Any]], gamma: float, eps: Dict[str, float], *,
                 public_rule: bool = False) -> str:
    if public_rule:
        return (f"gamma = {gamma:.6g} from DPOWL's public rule (a function of n, epsilon, d and W; no budget; "
                "it can reveal n, which neighbouring datasets share: give gamma to keep n unstated)")
    if selection is None:
        return f"gamma = {gamma:g} fixed in advance (no budget)"
    return (f"gamma chosen privately by the rule's value on the learning part (epsilon = {eps['selection']:g}, "
            f"candidates {'/'.join(f'{g:g}' for g in selection['candidates'])}; {selection['note']})")


def analyze_arrays(X: ArrayLike, treatment: ArrayLike, benefit: ArrayLike, *, lower: Sequence[float],
                   upper: Sequence[float], benefit_lower: float, benefit_upper: float, weights_upper_bound: float,
                   total_epsilon: float, propensity: Optional[float] = None, propensity_model: Optional[str] = None,
                   feature_names: Optional[Sequence[str]] = None, treatment_labels: Sequence[str] = ("+1", "-1"),
                   gamma: Optional[float] = None, gammas: Optional[Sequence[float]] = None,
                   logit_bound: float = DEFAULT_LOGIT_BOUND, level: float = 0.95, split: Optional[str] = None,
                   seed: Optional[int] = None, out_dir: Optional[str] = None, public_n: bool = False,
                   benefit_definition: Optional[str] = None) -> Dict[str, Any]:
    """Bridge-friendly entry point (plain arrays and scalars in, a plain dict out), e.g. for R's ``dpowl_analysis()``.

    Parameters are those of :func:`run_analysis` with the bounds as flat
    sequences (``lower``, ``upper`` per feature; ``benefit_lower``,
    ``benefit_upper``), ``split`` as the text of :meth:`BudgetSplit.parse`, and
    ``seed`` an optional int (reproduction only), ``benefit_definition`` the
    text of :class:`BenefitScale`. With ``out_dir`` the output files of
    ``pydpowl analyze`` are written there too.

    Returns
    -------
    dict
        ``model`` (the ``model.json`` content), ``coefficients`` (name -> value),
        ``gamma``, ``gamma_selection``, ``value`` (the ``value.json`` content),
        ``ledger`` (the ``ledger.json`` content), sizes, ``treatment_labels``,
        ``propensity``, ``value_release`` and, with ``out_dir``, ``files``. Only
        lists, dicts, strings, numbers and None.
    """
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
        raise TypeError(f"seed must be an integer or None, got {type(seed).__name__}.")
    if isinstance(treatment_labels, str) or len(treatment_labels) != 2:
        raise ValueError("treatment_labels must be two names (arm +1, arm -1).")
    result = run_analysis(
        X, treatment, benefit, feature_bounds=(list(lower), list(upper)),
        benefit_bounds=(benefit_lower, benefit_upper), weights_upper_bound=weights_upper_bound,
        total_epsilon=total_epsilon, propensity=propensity, propensity_model=propensity_model,
        logit_bound=logit_bound, gamma=gamma, gammas=None if gammas is None else list(gammas), level=level,
        split=None if split is None else BudgetSplit.parse(split), feature_names=feature_names,
        treatment_labels=(str(treatment_labels[0]), str(treatment_labels[1])), public_n=public_n,
        benefit_scale=None if benefit_definition is None else BenefitScale(definition=str(benefit_definition)),
        random_state=None if seed is None else int(seed),
    )
    out = result.to_dict()
    if out_dir is not None:
        from .analysis_output import write_analysis

        out["files"] = [str(p) for p in write_analysis(result, out_dir)]
    return out

