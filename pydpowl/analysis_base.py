"""The private analysis's pieces: the budget plan and its exact shares, the settings' checks, the rule's fit, the
result and its ledger. :func:`pydpowl.analysis.run_analysis` (two arms) and :mod:`pydpowl.analysis_arms` (K arms)
build on them; :mod:`pydpowl.analysis` re-exports every name (see its docstring for the analysis itself)."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike

from ._validation import (check_array, check_choice, check_positive, check_probability, check_weight_sensitivity,
                          feature_names_of, resolve_feature_bounds)
from .estimators.dp_propensity import DPLogisticPropensity
from .estimators.owl import DPOWL
from .privacy.accountant import BudgetAccountant, rounded_release_spent
from .privacy.accountant import double_at_most as _double_at_most
from .evaluation.private import PrivateArmValue, PrivateValue

#: the two ways the analysis composes its releases (see :class:`BudgetSplit`)
COMPOSITIONS = ("sequential", "parallel")
COMPOSITION_TEXT = {
    "sequential": "sequential: every release is charged against the total, spent = the sum of the releases",
    "parallel": ("sequential within each part; parallel across the learning and evaluation parts, which are "
                 "disjoint (every subject is in exactly one): spent = max over the parts of the sum of their "
                 "releases, so the releases listed add up to more than the total while the guarantee is the total"),
}


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
        values: Dict[str, Any] = {}  # the shares, and composition's name
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
    shares = budget_shares(total_epsilon, split, propensity_model=propensity_model, tune=tune)
    return {k: _double_at_most(v) for k, v in shares.items()}


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
    arm_probabilities : dict of str to float or None
        With three or more arms: each arm's known randomisation probability
        (``treatment_labels`` then holds the K labels and ``value`` is a
        :class:`~pydpowl.evaluation.private.PrivateArmValue`).
    weights_upper_bound_given, weights_upper_bound_used : float
        The analyst's ``weights_upper_bound`` and the W the rule was fitted
        with: the given one, or ``(U - L) / (smallest public propensity)``
        when that is smaller (no weight can exceed it). Both are public;
        :attr:`weight_bound_note` states them in every output.
    """

    model: DPOWL
    model_content: Dict[str, Any]
    value: Union[PrivateValue, PrivateArmValue]
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
    treatment_labels: Tuple[str, ...]
    feature_names: List[str]
    level: float
    diagnostics: Dict[str, int] = field(default_factory=dict)
    composition: str = "sequential"
    shares: Dict[str, Fraction] = field(default_factory=dict)
    deltas: Dict[str, float] = field(default_factory=dict)
    public_n: bool = False
    evaluation_fraction: float = 0.5
    benefit_scale: "BenefitScale" = field(default_factory=lambda: BenefitScale())
    arm_probabilities: Optional[Dict[str, float]] = None
    weights_upper_bound_given: float = math.nan  # set by every analysis (a default only for the field order)
    weights_upper_bound_used: float = math.nan

    @property
    def weight_bound_note(self) -> str:
        """The settings line on W: given and used, or given, lowered to the public maximum weight, and why."""
        return weight_bound_text(self.weights_upper_bound_given, self.weights_upper_bound_used)

    def _weight_bound(self) -> Dict[str, Any]:
        return {"given": self.weights_upper_bound_given, "used": self.weights_upper_bound_used,
                "note": self.weight_bound_note}

    @property
    def n_arms(self) -> int:
        """K, the number of arms the rule chooses between."""
        return len(self.treatment_labels)

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
        arms = "" if self.n_arms == 2 else f", {self.n_arms} arms"
        names = dict(RELEASE_NAMES, rule=f"{RELEASE_NAMES['rule'][:-1]}{arms}: {self.model.mechanism_description_})")
        releases = []
        for k in ("propensity", "selection", "rule", "value", "variance"):
            if self.epsilons[k] > 0:
                entry = {"name": names[k], "epsilon": exact_number(self._share(k)),
                         "delta": self.deltas.get(k, 0.0), "delta_source": self._delta_source(k), "part": PART_OF[k]}
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
            "weights_upper_bound": self._weight_bound(),  # public: the analyst's W and the W the rule used
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

    def _delta_source(self, release: str) -> str:
        if self.n_arms == 2 or release not in ("value", "variance"):
            return DELTA_SOURCES[release]
        cells = f"the {self.n_arms ** 2} Laplace-noised sums (one per cell: received, recommended)"
        return DELTA_SOURCES[release].replace("the 4 Laplace-noised sums", cells)

    def value_summary(self) -> Dict[str, Any]:
        """``value.json``: the rule's value with its interval, and its gain over the better single arm."""
        value = self.value
        if isinstance(value, PrivateArmValue):  # three or more arms (two: a PrivateValue)
            return self._arm_value_summary(value)
        plus, minus = self.treatment_labels
        out: Dict[str, Any] = dict(value.value.as_dict())
        out["difference_from_better_arm"] = value.difference.as_dict()
        out["versus_arm"] = {plus: value.versus_plus.as_dict(), minus: value.versus_minus.as_dict()}
        scale = self.benefit_scale
        out["benefit"] = scale.definition
        if scale.back_transform is not None:
            v, d = value.value, value.difference
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

    def _arm_value_summary(self, v: PrivateArmValue) -> Dict[str, Any]:
        """``value.json`` with K arms: the rule's value, each arm's, the gains, and what they mean."""
        out: Dict[str, Any] = dict(v.value.as_dict())
        out["difference_from_best_arm"] = v.difference.as_dict()
        out["value_of_arm"] = {a: iv.as_dict() for a, iv in v.arm_values.items()}
        out["versus_arm"] = {a: iv.as_dict() for a, iv in v.versus.items()}
        out["benefit"] = self.benefit_scale.definition
        rows = f"{self.n_evaluation} evaluation rows" if self.public_n else "the evaluation rows (n not released)"
        out["notes"] = [
            f"value: mean benefit (clipped to [{self.benefit_bounds[0]:g}, {self.benefit_bounds[1]:g}]) if every "
            f"patient were treated by the released rule ({self.n_arms} arms); estimated on {rows} that the rule "
            "never saw",
            "value_of_arm: the value of giving everyone that arm (each interval at the stated level)",
            "versus_arm: V(rule) - V(everyone that arm); the intervals hold together at the stated level; "
            "difference_from_best_arm: V(rule) - max over the arms, their minimum",
            "intervals account for sampling error (normal approximation, privately bounded variance) and for the "
            "Laplace privacy noise (its exact law)",
            "valid when the propensities are right (here the design's randomisation probabilities)",
        ]
        return out

    def coefficients(self) -> List[Tuple[str, float]]:
        """The released rule's coefficients as (name, value), intercept first (original feature scale); with K
        arms row by row, ``f1:(intercept)``, ``f1:x1``, ... (the K - 1 rows of Theta)."""
        c = self.model_content
        if self.n_arms > 2:
            st = c["stages"][0]
            return [(f"f{r + 1}:{name}", float(v)) for r in range(len(st["coef"]))
                    for name, v in [("(intercept)", st["intercept"][r])]
                    + list(zip(st["feature_names"], st["coef"][r]))]
        return [("(intercept)", float(c["intercept"]))] + list(zip(c["feature_names"], (float(v) for v in c["coef"])))

    def to_dict(self) -> Dict[str, Any]:
        """Plain JSON-ready dict of everything released (for bridges such as R's).

        The sizes ``n``, ``n_learning`` and ``n_evaluation`` are included for
        programs; a bridge prints them only when ``public_n`` is True.
        """
        propensity: Dict[str, Any]
        if self.arm_probabilities is not None:
            propensity = {"known": self.arm_probabilities}
        elif self.propensity_model is not None:
            pm = self.propensity_model
            propensity = {"model": "logistic", "intercept": pm.intercept_, "coef": [float(v) for v in pm.coef_],
                          "logit_bound": float(pm.logit_bound), "gamma": float(pm.gamma_)}
        else:
            propensity = {"known": self.propensity}
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
            "propensity": propensity,
            "value_release": {"first_moments": self.value.first_moments.tolist(),
                              "second_moments": self.value.second_moments.tolist()},
            "privacy_spent": list(self.privacy_spent),
            "weights_upper_bound": self._weight_bound(),
        }
        return out


def weight_bound_text(given: float, used: float) -> str:
    """``weights_upper_bound: 30 given; 20 used = ...`` when the analysis lowered the analyst's W, else
    ``weights_upper_bound: 10 given and used`` (both numbers are public settings)."""
    if used < given:
        return (f"weights_upper_bound: {given:.6g} given; {used:.6g} used = (U - L) / smallest public propensity "
                "(the weights cannot exceed it)")
    return f"weights_upper_bound: {given:.6g} given and used"


def public_weight_bound(given: float, benefit_range: float, smallest_propensity: float) -> float:
    """The W an analysis fits with: the analyst's, or ``(U - L) / (smallest public propensity)`` when smaller.

    Every OWL weight ``(B - L) / p`` is at most that public maximum, so a larger W only adds noise; the
    result keeps both (:attr:`AnalysisResult.weight_bound_note` says which was used).
    """
    return min(given, benefit_range / smallest_propensity)


def check_settings(split: Optional[BudgetSplit], total_epsilon: float, weights_upper_bound: float,
                   benefit_bounds: Any, level: float, huber_h: Any
                   ) -> Tuple[BudgetSplit, float, float, Tuple[float, float], float]:
    """The settings every analysis checks first: ``(split, E, W, (L, U), level)`` (and ``huber_h``)."""
    split = BudgetSplit() if split is None else split
    if not isinstance(split, BudgetSplit):
        raise TypeError(f"split must be a BudgetSplit, got {type(split).__name__}.")
    E = check_positive("total_epsilon", total_epsilon)
    W = check_positive("weights_upper_bound", weights_upper_bound)
    bounds = _check_benefit_bounds(benefit_bounds)
    level = check_probability("level", level, low_open=True, high_open=True)
    if huber_h != "auto":
        check_positive("huber_h", huber_h)
    return split, E, W, bounds, level


def open_accountants(E: float, split: BudgetSplit, learning: Sequence[float], evaluation: Sequence[float]
                     ) -> Tuple[BudgetAccountant, BudgetAccountant]:
    """The accountants of the learning and evaluation parts, the planned releases checked before the data are
    touched: one of E for each disjoint part (parallel composition), or one E for every release (sequential)."""
    if split.composition == "parallel":  # disjoint parts: an accountant of E for each
        learn_acc = BudgetAccountant(E, dataset="learning part")
        eval_acc = BudgetAccountant(E, dataset="evaluation part")
        learn_acc.check_split(list(learning), label="learning part")
        eval_acc.check_split(list(evaluation), label="evaluation part")
        return learn_acc, eval_acc
    acc = BudgetAccountant(E, dataset="whole dataset")  # every release against the one total E
    acc.check_split([*learning, *evaluation], label="analysis")
    return acc, acc


def features_of(X: ArrayLike, feature_names: Optional[Sequence[str]], feature_bounds: Any
                ) -> Tuple[np.ndarray, List[str], Any]:
    """``(X, names, bounds)``: the checked features, their names (given, the DataFrame's, or x1..xp) and the
    public bounds in column order (bounds given by name are matched to the names, which are public)."""
    given_names = list(feature_names) if feature_names is not None else feature_names_of(X)
    X = check_array("X", X, columns=given_names)  # non-finite entries reported by column name
    p = X.shape[1]
    names = given_names or [f"x{j + 1}" for j in range(p)]
    if len(names) != p:
        raise ValueError(f"feature_names must have {p} entries (one per column of X), got {len(names)}.")
    return X, names, resolve_feature_bounds("feature_bounds", feature_bounds, p, given_names)


def _n_labels(treatment: Any) -> int:
    """How many distinct labels ``treatment`` holds (0 when it cannot be read as labels: the two-arm checks then
    name the problem)."""
    try:
        arr = np.asarray(treatment).ravel()
        if arr.dtype.kind in "fc":
            arr = arr[np.isfinite(arr)]
        elif arr.dtype == object:
            arr = np.array([v for v in arr if v is not None and not (isinstance(v, float) and math.isnan(v))],
                           dtype=object)
        return int(np.unique(arr.astype(str)).size)
    except (TypeError, ValueError):
        return 0


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


def split_rows(n: int, split: BudgetSplit, evaluation_rows: Optional[Sequence[int]], rng: np.random.Generator
               ) -> Tuple[np.ndarray, np.ndarray]:
    """The learning and evaluation rows (sorted): a data-independent random ``floor(evaluation_fraction n)``
    rows for evaluation, or the ``evaluation_rows`` fixed in advance (checked)."""
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
    return np.setdiff1d(np.arange(n), ev), ev


def _laplace_sums_delta(epsilon: float, scales: Union[Sequence[float], np.ndarray]) -> float:
    """delta of a release of sums with independent Laplace noise of ``scales``, each rounded to its grid: the
    floating-point bound with d = 1 for each (a Laplace draw is an l2-Laplace draw in one dimension), summed."""
    from .evaluation.private import release_grid

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
