"""The whole private analysis of a multi-stage regime (several decision points) under one total budget.

:func:`run_regime_analysis` splits the subjects at random (data-independent)
into a learning and an evaluation part, releases the regime on the learning
part (:class:`pydpowl.estimators.multistage.DPMultiStageOWL`, backward OWL,
one release per stage, the rule's share of E split across the stages equally or in
the public ratios ``stage_split``)
and, on the evaluation part, the value of the regime and of every fixed
treatment sequence (everyone on ``(a_1, ..., a_T)``) with intervals that
include the privacy noise.

The value release is the K-arm one (:func:`pydpowl.evaluation.private.private_arm_value`)
with the treatment *sequences* as the arms: subject ``i`` received the
sequence ``g_i = (A_i1, ..., A_iT)``, the regime recommends ``q_i = (d_1(H_i1),
..., d_T(H_iT))`` on the subject's observed histories, and the subject follows
the regime exactly when ``q_i = g_i``. The outcome is ``Y_i = sum_k clip(R_ik,
lo_k, hi_k)`` in the public ``[sum lo_k, sum hi_k]``, the propensity of the
received sequence ``prod_k P(A_ik)`` (the design's probabilities, public) with
public floor ``prod_k pi_k(g_k)`` per sequence. Then ``V(d) = c + sum_g
S_(g,g) / n`` is the usual IPW value of a regime, ``V(g) = c + sum_q S_(g,q) /
n`` the value of the fixed sequence ``g``, and the cell argument of the K-arm
release (a replaced subject moves within one cell or from one cell to
another; the regime is a released, public function of the history) gives the
same ``(epsilon_value + epsilon_variance)``-DP (docs/privacy_audit.md).

By sequential composition the analysis is ``E``-DP: the ``T`` stage releases
(the regime's own ledger, stage ``T`` first) and the two value releases
add up to E (``composition="parallel"`` gives each of the disjoint parts the
whole E, as :class:`pydpowl.analysis.BudgetSplit` says).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ._validation import check_array, check_bool, check_positive, check_probability, check_vector, resolve_rng, said
from .analysis_base import (COMPOSITION_TEXT, BudgetSplit, _decimal, _double_at_most, _laplace_sums_delta,
                            budget_shares, exact_number, split_rows)
from .analysis_arms import design_probabilities
from .estimators.multiarm import encode_arms
from .privacy.accountant import BudgetAccountant
from .evaluation.private import PrivateArmValue, private_arm_value

__all__ = ["RegimeAnalysisResult", "run_regime_analysis"]

#: what separates the stages' labels in a sequence's name
SEPARATOR = " | "


@dataclass
class RegimeAnalysisResult:
    """Everything the regime analysis released, and how it was paid for (public).

    Attributes
    ----------
    regime : DPMultiStageOWL
        The released regime (fitted on the learning part).
    model_content : dict
        The regime as written to ``model.json`` (format version 3, kind "multistage").
    value : PrivateArmValue
        The value release; its "arms" are the treatment sequences (``"a1 | a2"``).
    stage_epsilons : list of Fraction
        Each stage's exact share of E.
    shares : dict of Fraction
        ``rule`` (all stages), ``value``, ``variance``.
    deltas : dict
        ``stages`` (list, stage 1 first), ``value``, ``variance``.
    total_epsilon : float
    n, n_learning, n_evaluation : int
    level : float
    composition : str
    public_n : bool
    diagnostics : dict
        NON-PRIVATE counts (followers per stage, clipped values): never written.
    stage_split : list of Fraction or None
        The public ratios that divided the rule's share across the stages (None: equal).
    reward_bounds : list of (float, float)
        Each stage's public reward bounds.
    arm_probabilities : list of dict
        Each stage's design probabilities, ``{arm text: probability}`` (public).
    """

    regime: Any
    model_content: Dict[str, Any]
    value: PrivateArmValue
    stage_epsilons: List[Fraction]
    shares: Dict[str, Fraction]
    deltas: Dict[str, Any]
    total_epsilon: float
    n: int
    n_learning: int
    n_evaluation: int
    level: float
    composition: str = "sequential"
    public_n: bool = False
    diagnostics: Dict[str, Any] = field(default_factory=dict)
    stage_split: Optional[List[Fraction]] = None
    reward_bounds: List[Tuple[float, float]] = field(default_factory=list)
    arm_probabilities: List[Dict[str, float]] = field(default_factory=list)

    @property
    def n_stages(self) -> int:
        return len(self.stage_epsilons)

    def _parts(self) -> Dict[str, Tuple[Fraction, float]]:
        return {"learning": (self.shares["rule"], math.fsum(self.deltas["stages"])),
                "evaluation": (self.shares["value"] + self.shares["variance"],
                               self.deltas["value"] + self.deltas["variance"])}

    @property
    def privacy_spent(self) -> Tuple[float, float]:
        """``(epsilon, delta)`` of the whole analysis."""
        parts = self._parts()
        eps = (max(p[0] for p in parts.values()) if self.composition == "parallel"
               else sum((p[0] for p in parts.values()), Fraction(0)))
        delta = (max(p[1] for p in parts.values()) if self.composition == "parallel" else  # one exactly rounded sum
                 math.fsum([*self.deltas["stages"], self.deltas["value"], self.deltas["variance"]]))
        return exact_number(eps), delta

    def ledger(self) -> Dict[str, Any]:
        """The ledger: one release per stage (stage 1 first), the value's two releases, the parts, the total."""
        from .estimators.summary import guarantee_text

        rows = {"learning": self.n_learning, "evaluation": self.n_evaluation}
        releases = []
        for k, (eps, delta) in enumerate(zip(self.stage_epsilons, self.deltas["stages"])):
            st = self.regime.stages_[k]
            K = len(self.regime.classes_[k])
            weights = "residual weights (private mean baseline first)" if st.residual else "backward OWL weights"
            releases.append({"name": f"stage {k + 1} rule (DP-OWL, {weights}, {K} arms, C = 0; {st.mechanism} "
                                     "perturbation)", "stage": k + 1, "epsilon": exact_number(eps), "delta": delta,
                             "part": "learning"})
        releases.append({"name": "value of the regime and of every treatment sequence: noisy cell sums (Laplace)",
                         "epsilon": exact_number(self.shares["value"]), "delta": self.deltas["value"],
                         "part": "evaluation"})
        releases.append({"name": "value of the regime: noisy second moments for the interval (Laplace)",
                         "epsilon": exact_number(self.shares["variance"]), "delta": self.deltas["variance"],
                         "part": "evaluation"})
        if self.public_n:
            for r in releases:
                r["rows"] = rows[r["part"]]
        spent_eps, spent_delta = self.privacy_spent
        split = self.stage_split if self.stage_split is not None else [Fraction(1)] * self.n_stages
        return {"total_epsilon": exact_number(_decimal(self.total_epsilon)), "spent": spent_eps,
                "spent_delta": spent_delta, "guarantee": guarantee_text(spent_eps, spent_delta),
                "composition": COMPOSITION_TEXT[self.composition],
                "parts": [{"name": k, **({"rows": rows[k]} if self.public_n else {}), "epsilon": exact_number(v[0]),
                           "delta": v[1]} for k, v in self._parts().items()],
                "releases": releases,
                "stage_split": [exact_number(q) for q in split],
                "notes": ["the stages are released last first (backward OWL); each stage's epsilon is its exact "
                          "share of the rule's budget, divided across the stages in the ratios stage_split "
                          + ("(public, chosen by the analyst)" if self.stage_split is not None else
                             "(equal: the default)"),
                          "rows: " + ("the number of subjects was declared public" if self.public_n else
                                      "n not released (it was not declared public)")]}

    def to_dict(self) -> Dict[str, Any]:
        """Plain JSON-ready dict of everything released (for bridges such as R's): ``model`` (model.json's
        content), ``value`` (value.json's), ``ledger``, ``stages`` (each stage's mechanism, residual weights,
        epsilon), ``privacy_spent``; the sizes only when n was declared public."""
        out: Dict[str, Any] = {
            "model": self.model_content, "value": self.value_summary(), "ledger": self.ledger(),
            "stages": [{"stage": k + 1, "mechanism": st.mechanism, "residual": bool(st.residual),
                        "epsilon": exact_number(self.stage_epsilons[k])}
                       for k, st in enumerate(self.regime.stages_)],
            "public_n": self.public_n, "privacy_spent": list(self.privacy_spent),
        }
        if self.public_n:
            out.update(n=self.n, n_learning=self.n_learning, n_evaluation=self.n_evaluation)
        return out

    def value_summary(self) -> Dict[str, Any]:
        """``value.json``: the regime's value, each fixed sequence's, the gains, what they mean."""
        v = self.value
        out: Dict[str, Any] = dict(v.value.as_dict())
        out["difference_from_best_sequence"] = v.difference.as_dict()
        out["value_of_sequence"] = {a: iv.as_dict() for a, iv in v.arm_values.items()}
        out["versus_sequence"] = {a: iv.as_dict() for a, iv in v.versus.items()}
        out["notes"] = [f"value: mean total reward (each stage's clipped to its public bounds) if everyone followed "
                        f"the released {self.n_stages}-stage regime; sequences are written stage 1{SEPARATOR}stage 2",
                        "value_of_sequence: everyone on that fixed treatment sequence; versus_sequence: the regime "
                        "minus it (the intervals hold together at the stated level)",
                        "intervals account for sampling error and the Laplace privacy noise; valid when the "
                        "propensities are the design's"]
        return out


def _sequences(classes: Sequence[np.ndarray]) -> List[str]:
    grids = np.meshgrid(*[np.arange(len(c)) for c in classes], indexing="ij")
    return [SEPARATOR.join(str(classes[k][idx[k]]) for k in range(len(classes)))
            for idx in zip(*(g.ravel() for g in grids))]


def run_regime_analysis(H: Sequence[Any], A: Sequence[Any], R: Sequence[Any], *, feature_bounds: Sequence[Any],
                        reward_bounds: Sequence[Tuple[float, float]], propensity: Sequence[Any],
                        total_epsilon: float, gamma: Any, level: float = 0.95, split: Optional[BudgetSplit] = None,
                        feature_names: Optional[Sequence[Sequence[str]]] = None,
                        evaluation_rows: Optional[Sequence[int]] = None, public_n: bool = False,
                        stage_split: Optional[Sequence[Any]] = None, mechanism: str = "auto",
                        residual: Any = "auto", huber_h: Any = "auto", random_state: Any = None
                        ) -> RegimeAnalysisResult:
    """The whole private analysis of a T-stage regime (see the module docstring).

    Parameters
    ----------
    H : list of T array-likes of shape (n, p_k)
        Each stage's history (stage 1 first).
    A, R : list of T array-likes of shape (n,)
        Treatments received (any labels) and rewards after each stage.
    feature_bounds, reward_bounds : list of T
        Public bounds per stage (as :class:`~pydpowl.estimators.multistage.DPMultiStageOWL`).
    propensity : list of T
        Each stage's design probabilities: a number (two arms: P(second label); K arms: 1/K) or a
        mapping ``{arm: probability}`` (public: the analysis' intervals need each arm's floor).
    total_epsilon : float
    gamma : float or list of T floats
        Fixed in advance (no budget).
    level, split, evaluation_rows, public_n, random_state
        As in :func:`pydpowl.analysis.run_analysis` (``split.propensity`` and ``split.selection`` unused).
    feature_names : list of T lists of str, optional
        Names of each stage's history columns (written to ``model.json``).
    stage_split : sequence of T positive numbers, optional
        Public ratios dividing the rule's share of E across the stages (``[1, 2]``: a third to stage 1, two
        thirds to stage 2), exact (fractions); None: equal shares. Recorded on the ledger.
    mechanism, residual, huber_h
        How each stage's rule is released (:class:`~pydpowl.estimators.multistage.DPMultiStageOWL`'s; by
        default weighted objective perturbation with residual weights for two-arm stages).

    Raises
    ------
    ValueError
        For lists of different lengths (stages), bad budgets or bounds, a stage with an arm nobody
        received in the learning part.
    """
    from .estimators.multistage import DPMultiStageOWL, check_reward_bounds, stage_shares as split_stage_budget

    T = len(A)
    for name, given in (("H", H), ("R", R), ("feature_bounds", feature_bounds), ("reward_bounds", reward_bounds),
                        ("propensity", propensity)):
        if not isinstance(given, (list, tuple)) or len(given) != T:
            raise ValueError(f"{name} must be a list with one entry per stage (T={T} stages, as A), got "
                             f"{len(given) if isinstance(given, (list, tuple)) else type(given).__name__}.")
    if T < 2:
        raise ValueError("a regime analysis needs at least two stages (one stage: run_analysis).")
    split = BudgetSplit() if split is None else split
    E = check_positive("total_epsilon", total_epsilon)
    level = check_probability("level", level, low_open=True, high_open=True)
    public_n = check_bool("public_n", public_n)
    shares = budget_shares(E, split, propensity_model=False, tune=False)
    stage_shares = split_stage_budget(shares["rule"], stage_split, T)
    stage_eps = [_double_at_most(s) for s in stage_shares]
    lows, highs = (list(b) for b in zip(*(check_reward_bounds(b, k + 1) for k, b in enumerate(reward_bounds))))
    Hs = [check_array(f"H[{k}]", h, columns=None if feature_names is None else feature_names[k])
          for k, h in enumerate(H)]
    n = Hs[0].shape[0]
    bad = [k for k, h in enumerate(Hs) if h.shape[0] != n]
    if bad:
        raise ValueError(f"{said(f'H[{bad[0]}]')} (stage {bad[0] + 1}'s history) has {Hs[bad[0]].shape[0]} rows but "
                         f"{said('H[0]')} has {n}.")
    encoded = [encode_arms(f"A[{k}]", a, length=n) for k, a in enumerate(A)]
    probs = [design_probabilities(propensity[k], encoded[k][0]) for k in range(T)]
    raw_R = [check_vector(f"R[{k}]", r, length=n) for k, r in enumerate(R)]
    n_clipped_rewards = [int(np.count_nonzero((r < lows[k]) | (r > highs[k]))) for k, r in enumerate(raw_R)]
    Rs = [np.clip(r, lows[k], highs[k]) for k, r in enumerate(raw_R)]
    rng = resolve_rng(random_state)
    learn, ev = split_rows(n, split, evaluation_rows, rng)
    for k, (classes, codes) in enumerate(encoded):
        if len(np.unique(codes[learn])) < len(classes):
            raise ValueError(f"{said(f'A[{k}]')} (learning part) must contain every arm of stage {k + 1} (a rule "
                             "cannot be learnt for an arm nobody received).")
    learn_acc = BudgetAccountant(E, dataset="learning part" if split.composition == "parallel" else "whole dataset")
    regime = DPMultiStageOWL(
        epsilon=stage_eps, gamma=gamma, feature_bounds=list(feature_bounds), reward_bounds=list(reward_bounds),
        propensity_floor=[float(p.min()) for p in probs], mechanism=mechanism, residual=residual, huber_h=huber_h,
        accountant=learn_acc, random_state=rng,
    ).fit([h[learn] for h in Hs], [np.asarray(encoded[k][0])[encoded[k][1][learn]] for k in range(T)],
          [r[learn] for r in Rs], [{c.item() if hasattr(c, "item") else c: float(q)
                                    for c, q in zip(encoded[k][0], probs[k])} for k in range(T)])
    regime.set_params(random_state=None, accountant=None)
    from .model_io import model_to_dict

    content = model_to_dict(regime, feature_names=feature_names, epsilon_total=E,
                            tuning="gamma fixed in advance (no budget)")
    # on the evaluation rows: the received sequence, the regime's recommended sequence, its propensity
    stage_classes = [c for c, _ in encoded]
    shape = tuple(len(c) for c in stage_classes)
    received = np.ravel_multi_index(tuple(encoded[k][1][ev] for k in range(T)), shape)
    rec_codes = []
    for k in range(T):
        rec = regime.predict([h[ev] for h in Hs], stage=k + 1)
        lookup = {(c.item() if hasattr(c, "item") else c): j for j, c in enumerate(stage_classes[k])}
        rec_codes.append(np.array([lookup[r.item() if hasattr(r, "item") else r] for r in rec], dtype=np.intp))
    recommended = np.ravel_multi_index(tuple(rec_codes), shape)
    p_seq = np.prod([probs[k][encoded[k][1][ev]] for k in range(T)], axis=0)
    floors = np.prod(np.meshgrid(*probs, indexing="ij"), axis=0).ravel()
    Y = np.sum([r[ev] for r in Rs], axis=0)
    eps_value, eps_variance = _double_at_most(shares["value"]), _double_at_most(shares["variance"])
    value = private_arm_value(recommended, received, Y, p_seq, n_arms=int(np.prod(shape)),
                              benefit_bounds=(math.fsum(lows), math.fsum(highs)), propensity_floor=floors,
                              epsilon_mean=eps_value, epsilon_variance=eps_variance, arms=_sequences(stage_classes),
                              level=level, rng=rng)
    first, second = value.cell_scales
    stage_deltas = [0.0] * T
    for rel in regime.ledger_.releases:  # stage T first
        k = int(rel.label.split()[1]) - 1
        stage_deltas[k] += rel.delta
    deltas = {"stages": stage_deltas, "value": _laplace_sums_delta(eps_value, first.ravel()),
              "variance": _laplace_sums_delta(eps_variance, second.ravel())}
    diagnostics = {"n_followed": list(regime.n_followed_), "n_clipped_rewards": n_clipped_rewards,
                   "n_clipped_weights": list(regime.n_clipped_weights_),
                   "n_clipped_features": list(regime.n_clipped_features_)}
    return RegimeAnalysisResult(regime=regime, model_content=content, value=value, stage_epsilons=stage_shares,
                                shares=shares, deltas=deltas, total_epsilon=E, n=n, n_learning=int(learn.size),
                                n_evaluation=int(ev.size), level=level, composition=split.composition,
                                public_n=bool(public_n), diagnostics=diagnostics,
                                stage_split=None if stage_split is None else [Fraction(q) for q in stage_split],
                                reward_bounds=list(zip(lows, highs)),
                                arm_probabilities=[{str(c): float(q) for c, q in zip(classes[k], probs[k])}
                                                   for k in range(T)])
