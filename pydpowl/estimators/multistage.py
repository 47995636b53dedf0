"""Multi-stage DP-OWL: backward outcome weighted learning (BOWL) of a dynamic treatment regime.

:class:`DPMultiStageOWL` learns one linear rule per decision point, last stage
first (Zhao, Zeng, Laber & Kosorok 2015, BOWL; DTRlearn2's ``owl()`` with the
hinge loss, linear kernel, no augmentation). At stage ``k`` of ``T`` each
subject's weight is

    |Y_k - m_k(H_k)| * 1{A_l = d_l(H_l) for every l > k} / prod_{l >= k} P(A_l | H_l),

with ``Y_k = R_k + ... + R_T`` the rewards from stage ``k`` on, ``d_l`` the
rules *already released* for the later stages, and ``m_k`` a baseline: the
public lower bound of ``Y_k`` (classic BOWL, non-negative weights), a public
constant, or a linear model of ``Y_k`` on ``H_k`` released privately first
(a negative residual flips the label). Each stage is one DP-wERM release
(two arms, or K arms by the angle-based rule of
:mod:`pydpowl.estimators.multiarm`), made as :class:`pydpowl.DPOWL` makes
its rule (:mod:`pydpowl.estimators.owl_mechanism`): by default, for a stage
of two or K arms with known propensities (C = 0), weighted objective perturbation with
residual weights (``|clip(Y_k - m_k, -R_k, R_k)|``, ``m_k`` the private mean of
``Y_k`` over the n subjects, released first on a share of the stage's
budget); otherwise, and with ``mechanism="output"``, output perturbation.

Privacy (docs/privacy_audit.md, "Multi-stage rules"): every weight is a
function of the subject's own record and of released, public quantities (the
later rules, the baseline's release), so replacing one subject changes one
row of each stage's problem (C = 0 with known propensities) and every weight
lies in ``[0, W_k]`` with ``W_k`` computed from the public reward bounds and
propensity floors (``W_k R_k / S_k`` with residual weights). Objective
perturbation's proof needs exactly this (one row changes, weights of the
others fixed, bounded by a public W). The stages and baselines are released one after the
other on the same subjects: by sequential composition the whole regime is
``sum_k (epsilon_k + epsilon_baseline_k)``-DP, which the fit records release
by release on a :class:`~pydpowl.privacy.accountant.BudgetAccountant`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, List, Optional, Sequence, Tuple, Union, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base import DPEstimator, check_is_fitted
from .._validation import check_array, check_bool, check_choice, check_epsilon, check_int, check_positive, \
    check_vector, resolve_rng, said
from ..engine.mechanisms import is_r_stream
from ..engine.preprocessing import FeatureScaler
from ..engine.solver import DEFAULT_TOL
from ..privacy.accountant import BudgetAccountant, double_at_most
from .multiarm import ArmRule, encode_arms, prepare_arm_problem, resolve_arm_propensity
from .owl_mechanism import AUTO, MECHANISM_CHOICES, check_residual, plan_rule, release_rule, rule_release_parts

__all__ = ["DPMultiStageOWL", "StageRelease", "ipw_value", "gamma_for_cost", "stage_shares"]

#: baselines that are not numbers
BASELINES = ("lower", "linear", "ols")


@dataclass(frozen=True, eq=False)
class StageRelease:
    """What one stage released and what it cost (public).

    Attributes
    ----------
    stage : int
        1-based, as in DTRlearn2.
    rule : ArmRule
        The released rule.
    epsilon : float
        The rule's budget.
    epsilon_baseline : float
        The baseline's budget (0 without a private baseline).
    sensitivity : float
        Delta of the rule (Frobenius norm for three or more arms); nan for objective perturbation.
    weights_upper_bound : float
        W of the weights the rule was fitted with: from the reward bounds and
        propensity floors (``W_k``), times ``clip_share`` with residual weights.
    release_grid : float or None
        The grid of the rule's release (None at epsilon = inf).
    baseline_coef : ndarray or None
        The released linear baseline (intercept first, original space), when private.
    mechanism : {"output", "objective"}
        How the rule was released.
    residual : bool
        Residual weights (the private mean baseline, residuals clipped at ``+-R_k``).
    gamma, huber_h : float
        The stage's resolved settings (public).
    baseline : float or None
        The released mean baseline ``m_k`` on the scale of ``Y_k`` (residual weights).
    noise_scale : float
        Scale of the noise the rule was rounded under (``Delta / epsilon``, or objective perturbation's
        smoothing noise).
    delta : float
        The rule release's floating-point delta.
    """

    stage: int
    rule: ArmRule
    epsilon: float
    epsilon_baseline: float
    sensitivity: float
    weights_upper_bound: float
    release_grid: Optional[float]
    baseline_coef: Optional[NDArray[np.float64]] = None
    mechanism: str = "output"
    residual: bool = False
    gamma: float = math.nan
    huber_h: float = math.nan
    baseline: Optional[float] = None
    noise_scale: float = math.nan
    delta: float = 0.0


def stage_shares(total: Fraction, stage_split: Any, T: int, *, name: str = "stage_split") -> List[Fraction]:
    """Each stage's exact share of ``total``: ``total * s_k / sum(s)`` for the public ratios ``stage_split``
    (``None``: equal shares). The shares add up to ``total`` exactly (Fraction arithmetic).

    Raises
    ------
    TypeError, ValueError
        Naming ``name``, the stage and the value, for anything but ``T`` positive finite numbers.
    """
    if stage_split is None:
        return [total / T] * T
    if isinstance(stage_split, (str, bytes)) or not isinstance(stage_split, (list, tuple, np.ndarray)):
        raise TypeError(f"{said(name)} must be a sequence of positive numbers, one share per stage (e.g. [1, 2]: a "
                        f"third to stage 1, two thirds to stage 2), got {type(stage_split).__name__} {stage_split!r}.")
    if len(stage_split) != T:
        raise ValueError(f"{said(name)} must have one share per stage (T={T}), got {len(stage_split)}.")
    ratios = []
    for k, s in enumerate(stage_split):
        if not _is_number(s) or not (0 < s < math.inf):  # NaN fails too
            got = repr(float(s)).removesuffix(".0") if _is_number(s) else repr(s)  # 0, not 0.0 (R's words too)
            raise ValueError(f"{said(f'{name}[{k}]')} must be in (0, inf), got {got} (stage {k + 1}'s share).")
        ratios.append(Fraction(s))
    whole = sum(ratios, Fraction(0))
    return [total * r / whole for r in ratios]


def _per_stage(name: str, value: Any, T: int, one: Any) -> List[Any]:
    """``value`` repeated for the T stages when ``one(value)`` says it is one stage's setting, else a
    sequence of exactly T settings."""
    if one(value):
        return [value] * T
    if not isinstance(value, (list, tuple, np.ndarray)):
        raise TypeError(f"{said(name)} must be one setting for every stage or a list with one per stage, got "
                        f"{type(value).__name__}.")
    if len(value) != T:
        raise ValueError(f"{said(name)} must be one setting for every stage or one per stage (T={T}), got "
                         f"{len(value)}.")
    return list(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _is_auto(value: Any) -> bool:
    return isinstance(value, str) and value == AUTO


def _is_pair_of_numbers(value: Any) -> bool:
    return isinstance(value, (list, tuple, np.ndarray)) and len(value) == 2 and all(_is_number(v) for v in value)


def _is_bounds_pair(value: Any) -> bool:
    """One stage's feature bounds: a pair (lower, upper) of vectors (not a list of such pairs)."""
    try:
        return len(value) == 2 and all(np.ndim(v) == 1 and all(_is_number(x) for x in v) for v in value)
    except TypeError:
        return False


def check_reward_bounds(bounds: Any, stage: int) -> Tuple[float, float]:
    """Stage ``stage``'s (from 1) public reward bounds ``(lower, upper)``, finite with lower < upper, named
    ``reward_bounds[stage - 1]`` (in the caller's words: :func:`pydpowl._validation.caller_words`)."""
    name = said(f"reward_bounds[{stage - 1}]")
    if not _is_pair_of_numbers(bounds):
        raise TypeError(f"{name} must be a pair (lower, upper) of public bounds on stage {stage}'s reward, "
                        f"got {bounds!r}.")
    lo, hi = float(bounds[0]), float(bounds[1])
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"{name} must be finite with lower < upper (public bounds on stage {stage}'s reward), "
                         f"got {name}=({lo!r}, {hi!r}).")
    return lo, hi


def _stages_of(name: str, value: Any, T: Optional[int]) -> List[Any]:
    if isinstance(value, np.ndarray) or not isinstance(value, (list, tuple)):
        raise TypeError(f"{said(name)} must be a list with one entry per stage (DTRlearn2's list of stages), got "
                        f"{type(value).__name__}.")
    if T is not None and len(value) != T:
        raise ValueError(f"{said(name)} must have one entry per stage (T={T}), got {len(value)}.")
    if len(value) < 1:
        raise ValueError(f"{said(name)} must hold at least one stage.")
    return list(value)


class DPMultiStageOWL(DPEstimator):
    """Differentially private backward outcome weighted learning of a T-stage treatment regime.

    The private counterpart of DTRlearn2's ``owl(H, AA, RR, n, K, pi,
    loss = "hinge", kernel = "linear", augment = FALSE)``: one linear rule per
    stage, learned last stage first by weighted (Huber-hinge) classification,
    each released as :class:`pydpowl.DPOWL` releases its rule (by default
    weighted objective perturbation with residual weights; three or more arms
    by the angle-based rule of :mod:`pydpowl.estimators.multiarm`).

    Parameters
    ----------
    epsilon : float or sequence of float
        The privacy budget in (0, inf]: the total (split across the stages
        by ``stage_split``, equally by default) or one budget per stage
        (stage 1 first). ``inf`` releases the exact, non-private regime
        (validation only).
    gamma : float, "auto" or sequence of them, default="auto"
        Regularisation constant of each stage's rule (DPpack's convention), in
        (0, inf); ``"auto"`` is :class:`pydpowl.DPOWL`'s public rule for the
        stage's mechanism (a function of n, the stage's epsilon, d and W).
    mechanism : {"auto", "output", "objective"}, default="auto"
        How each stage's rule is released. ``"auto"``: weighted objective
        perturbation for a stage (two or K arms) whose weights do not move with
        other records (C = 0: known propensities), output perturbation
        (Algorithm 1) otherwise; ``"output"``: output perturbation at every
        stage (the paper's mechanism; for comparison); ``"objective"``:
        refused for a stage with C > 0 (no proof).
    residual : {"auto", True, False} or ResidualWeights, default="auto"
        Residual weights per stage (:class:`pydpowl.DPOWL`'s): the mean of
        ``Y_k`` over the n subjects released first (Laplace, on
        ``baseline_share`` of the stage's budget, 0.1 by default), the residual
        clipped to ``+-R_k = clip_share S_k`` (``S_k`` the public range of
        ``Y_k``; 1/16 by default), so that the weights are bounded by
        ``W_k clip_share``. ``"auto"``: on for stages with C = 0 and
        ``baseline="lower"``. Needs ``baseline="lower"`` (it replaces the baseline).
    stage_split : sequence of float, optional
        Public ratios dividing a total ``epsilon`` across the stages (stage 1
        first): stage ``k`` gets ``epsilon * s_k / sum(s)``, computed exactly
        (fractions) and rounded down to a double, so that the stages never
        spend more than the total. ``None``: equal shares. Refused with a
        per-stage ``epsilon``.
    feature_bounds : (lower, upper) or sequence of them
        Public bounds of each stage's history features (one pair used at every
        stage, or one per stage); features are clipped to them (counted).
    reward_bounds : (lower, upper) or sequence of them
        Public bounds of each stage's reward ``R_k`` (one pair for every
        stage, or one per stage); rewards are clipped to them (counted).
        With the propensity floors they give each stage's weight bound
        ``W_k = (sum_{l >= k} (upper_l - lower_l)) / prod_{l >= k} floor_l``.
    propensity_floor : float or sequence of float, optional
        A public lower bound on ``P(A_k | H_k)`` per stage; needed for stages
        whose propensities are given as arrays (known design probabilities
        give their own floor). A smaller probability gives a weight above
        ``W_k``, clipped at it (counted).
    baseline : {"lower", "linear", "ols"}, float or sequence of float, default="lower"
        ``m_k``, what is subtracted from ``Y_k``: ``"lower"`` its public lower
        bound (BOWL's non-negative outcomes; no cost); a number (per stage, or
        one for all) a public constant (residuals of either sign, no cost);
        ``"linear"`` a linear model of ``Y_k`` on ``H_k`` fitted privately
        (Kifer-Smith-Thakurta, epsilon-DP, on the subjects who followed the
        later rules, as DTRlearn2's residuals with ``res.lasso = FALSE``) with
        ``baseline_share`` of the stage's budget, its prediction clipped to
        the bounds of ``Y_k``; ``"ols"`` the exact least-squares residual on
        the followers (DTRlearn2's ``res.lasso = FALSE``), NOT private: only
        with ``epsilon = inf``, for validation (KST's domain constraint can
        bind in ``"linear"``, so that even at ``epsilon = inf`` it is a
        different residual).
    baseline_share : float, default=0.25
        The share of each stage's budget spent on a ``"linear"`` baseline, in
        (0, 1) (residual weights' mean baseline takes ``residual``'s share).
    baseline_gamma : float, default=1.0
        Regularisation constant of the ``"linear"`` baseline (DPpack's ``LinearRegressionDP`` convention).
    huber_h : float or "auto", default="auto"
        Huber smoothing of the hinge (DTRlearn2 uses the exact hinge); ``"auto"``: 1 for objective
        perturbation, 0.5 for output perturbation (:class:`pydpowl.DPOWL`'s defaults).
    fit_intercept : bool, default=True
    weight_sensitivity : float, "trivial" or None, default=None
        Stated C for stages whose propensities are arrays (as :class:`pydpowl.DPOWL`): 0 when they are
        known; required for arrays.
    tol : float, default=1e-10
    accountant : BudgetAccountant, optional
        A ledger for the dataset: the whole regime's budget is checked on it before the data are
        touched, and each release is recorded on it when it is made. Each fit also keeps its own
        ledger in ``ledger_``.
    keep_nonprivate : bool, default=False
        Keep each stage's exact minimiser (PRIVATE; validation only) in ``nonprivate_scaled_coef_``.
    random_state : None, int, numpy.random.Generator, default=None
        Source of the noise (None: operating-system entropy, as real releases must).

    Attributes
    ----------
    n_stages_ : int
    stages_ : list of StageRelease
        Stage 1 first.
    classes_ : list of ndarray
        The arm labels of each stage.
    epsilon_stages_ : list of float
        Each stage's budget (rule and baseline).
    ledger_ : BudgetAccountant
        Every release of this fit with its ``(epsilon, delta)``, in the order made (stage T first).
    sampler_model_ : {"numpy", "R"}
        The sampler model of the rounding deltas (R's samplers when an R stream is replayed).
    privacy_spent_ : (float, float)
        The whole regime's ``(epsilon, delta)``: the ledger's sums (sequential composition; each
        delta is that release's floating-point rounding's).
    n_followed_ : list of int
        Subjects whose later treatments followed the released later rules, per stage. Computed
        from the private data: a NON-PRIVATE diagnostic, not a release, not printed by default.
    n_clipped_rewards_, n_clipped_features_, n_clipped_weights_ : list of int
        NON-PRIVATE diagnostics (counts of what was clipped by design), per stage.

    Notes
    -----
    Guarantee: ``sum(epsilon_stages_)``-DP (plus the floating-point ``delta``
    of each release) for datasets differing in one subject (replacement,
    ``n`` public), given the public bounds, the propensities' design (known
    probabilities, or a stated C) and gamma. See docs/privacy_audit.md.
    """

    def __init__(self, *, epsilon: Any, feature_bounds: Any, reward_bounds: Any, gamma: Any = AUTO,
                 mechanism: str = AUTO, residual: Any = AUTO, stage_split: Any = None,
                 propensity_floor: Any = None, baseline: Any = "lower", baseline_share: float = 0.25,
                 baseline_gamma: float = 1.0, huber_h: Any = AUTO, fit_intercept: bool = True,
                 weight_sensitivity: Any = None, tol: float = DEFAULT_TOL, accountant: Any = None,
                 keep_nonprivate: bool = False, random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.gamma = gamma
        self.mechanism = mechanism
        self.residual = residual
        self.stage_split = stage_split
        self.feature_bounds = feature_bounds
        self.reward_bounds = reward_bounds
        self.propensity_floor = propensity_floor
        self.baseline = baseline
        self.baseline_share = baseline_share
        self.baseline_gamma = baseline_gamma
        self.huber_h = huber_h
        self.fit_intercept = fit_intercept
        self.weight_sensitivity = weight_sensitivity
        self.tol = tol
        self.accountant = accountant
        self.keep_nonprivate = keep_nonprivate
        self.random_state = random_state

    # ------------------------------------------------------------------ settings
    def _budgets(self, T: int) -> List[float]:
        eps = self.epsilon
        if isinstance(eps, (list, tuple, np.ndarray)):
            if len(eps) != T:
                raise ValueError(f"{said('epsilon')} must be one number (the total) or one per stage (T={T}), got "
                                 f"{len(eps)} numbers.")
            if self.stage_split is not None:
                raise ValueError("stage_split divides a total epsilon; epsilon is already one per stage: give "
                                 "one of the two.")
            return [check_epsilon(e, f"epsilon[{k}]") for k, e in enumerate(eps)]
        total = check_epsilon(eps)
        if total == math.inf:
            stage_shares(Fraction(1), self.stage_split, T)  # checked all the same
            return [math.inf] * T
        return [double_at_most(q) for q in stage_shares(Fraction(total), self.stage_split, T)]

    def _baselines(self, T: int) -> List[Any]:
        out: List[Union[str, float]] = []
        for k, b in enumerate(_per_stage("baseline", self.baseline, T, lambda v: isinstance(v, str) or _is_number(v))):
            if isinstance(b, str):
                if b not in BASELINES:
                    raise ValueError(f"baseline must be 'lower', 'linear', 'ols' or a number, got baseline={b!r}.")
                out.append(b)
            elif isinstance(b, numbers.Real) and not isinstance(b, bool) and math.isfinite(float(b)):
                out.append(float(b))
            else:
                raise TypeError(f"baseline[{k}] must be 'lower', 'linear' or a finite number, got {b!r}.")
        return out

    def _validated(self, T: int):
        budgets = self._budgets(T)
        gammas = [g if _is_auto(g) else check_positive("gamma" if _is_number(self.gamma) else f"gamma[{k}]", g)
                  for k, g in enumerate(_per_stage("gamma", self.gamma, T, lambda v: _is_number(v) or _is_auto(v)))]
        check_choice("mechanism", self.mechanism, MECHANISM_CHOICES)
        check_residual(self.residual)
        rewards = [check_reward_bounds(b, k + 1)
                   for k, b in enumerate(_per_stage("reward_bounds", self.reward_bounds, T, _is_pair_of_numbers))]
        floors: List[Optional[float]] = []
        for k, f in enumerate(_per_stage("propensity_floor", self.propensity_floor, T,
                                         lambda v: v is None or _is_number(v))):
            if f is None:
                floors.append(None)
            else:
                value = check_positive(f"propensity_floor[{k}]", f)
                if value > 1.0:
                    raise ValueError(f"{said(f'propensity_floor[{k}]')} must be in (0, 1], got {value!r}.")
                floors.append(value)
        baselines = self._baselines(T)
        for k, b in enumerate(baselines):
            if b == "ols" and budgets[k] != math.inf:
                raise ValueError(f"baseline='ols' (stage {k + 1}) is the non-private least-squares residual, for "
                                 f"validation at epsilon = inf only; stage {k + 1} has epsilon={budgets[k]!r}. Use "
                                 "baseline='linear' (fitted privately) for a release.")
        share = float(self.baseline_share)
        if "linear" in baselines and not (0.0 < share < 1.0):
            raise ValueError(f"baseline_share must be in (0, 1), got baseline_share={self.baseline_share!r}.")
        check_positive("baseline_gamma", self.baseline_gamma)
        if not _is_auto(self.huber_h):
            check_positive("huber_h", self.huber_h)
        check_positive("tol", self.tol)
        check_bool("fit_intercept", self.fit_intercept)
        check_bool("keep_nonprivate", self.keep_nonprivate)
        if self.accountant is not None and not isinstance(self.accountant, BudgetAccountant):
            raise TypeError(f"accountant must be a BudgetAccountant or None, got {type(self.accountant).__name__}.")
        return budgets, gammas, rewards, floors, baselines, share

    # ------------------------------------------------------------------ fit
    def fit(self, H: Any, A: Sequence[ArrayLike], R: Sequence[ArrayLike], propensity: Sequence[Any]
            ) -> "DPMultiStageOWL":
        """Learn the regime, last stage first, one release per stage.

        Parameters
        ----------
        H : array-like of shape (n, p) or list of T of them
            Each stage's history (DTRlearn2's ``H``): one matrix used at every
            stage, or one per stage (stage 1 first).
        A : list of T array-likes of shape (n,)
            The treatments received at each stage (any labels; at least two arms per stage).
        R : list of T array-likes of shape (n,)
            The rewards observed after each stage (DTRlearn2's ``RR``; larger is better).
        propensity : list of T
            Each stage's ``P(A_k | H_k)``: a number (two arms: the probability
            of the second arm; K arms: 1/K), a mapping ``{arm: probability}``,
            a vector of the received arms' probabilities, or an ``(n, K)``
            matrix (see :func:`pydpowl.estimators.multiarm.resolve_arm_propensity`).

        Returns
        -------
        self
        """
        A = _stages_of("A", A, None)
        T = len(A)
        R = _stages_of("R", R, T)
        props = _stages_of("propensity", propensity, T)
        budgets, gammas, rewards, floors, baselines, share = self._validated(T)
        total = math.fsum(budgets)
        if self.accountant is not None:
            self.accountant.check(total, label=f"DPMultiStageOWL, {T} stages")  # before the data are touched
        Hs = [H] * T if not isinstance(H, (list, tuple)) else _stages_of("H", H, T)
        bounds = _per_stage("feature_bounds", self.feature_bounds, T, _is_bounds_pair)
        # --- data, checked stage by stage (no release yet) ---
        stage_bounds = not _is_bounds_pair(self.feature_bounds)  # one pair per stage: named feature_bounds[k]
        first = check_array("H[0]" if isinstance(H, (list, tuple)) else "H", Hs[0])
        n = first.shape[0]
        raw, hist, scalers, codes, classes, rew, probs, n_clip_x, n_clip_r = [], [], [], [], [], [], [], [], []
        for k in range(T):
            label = f"stage {k + 1}"
            Xk = first if k == 0 else check_array(f"H[{k}]", Hs[k])
            if Xk.shape[0] != n:
                raise ValueError(f"{said(f'H[{k}]')} ({label}'s history) has {Xk.shape[0]} rows but {said('H[0]')} "
                                 f"has {n}: every stage's history must have one row per subject, in the same order.")
            scaler = FeatureScaler.from_bounds(bounds[k], Xk.shape[1], self.fit_intercept,
                                               name=f"feature_bounds[{k}]" if stage_bounds else "feature_bounds")
            Zk, nx = scaler.transform_checked(Xk)
            cls, cod = encode_arms(f"A[{k}] ({label}'s treatments)", A[k], length=n)
            Rk = check_vector(f"R[{k}]", R[k], length=n, length_of="one per subject")
            lo, hi = rewards[k]
            clipped = np.minimum(np.maximum(Rk, lo), hi)
            n_clip_r.append(int(np.count_nonzero(clipped != Rk)))
            pname = f"propensity[{k}] ({label})"
            prop = resolve_arm_propensity(props[k], cls, cod, weight_sensitivity=self.weight_sensitivity, name=pname)
            floor = prop.floor if prop.floor is not None else floors[k]
            if floor is None:
                raise ValueError(f"{said(f'propensity_floor[{k}]')} is needed: {said(pname)} gives one probability "
                                 f"per subject (an array), and W_{k + 1} "
                                 "is computed from a public lower bound on P(A | H) (state the design's smallest "
                                 "allocation probability).")
            if floors[k] is not None and prop.floor is not None:
                floor = min(floor, floors[k])
            raw.append(Xk)
            hist.append(Zk)
            scalers.append(scaler)
            codes.append(cod)
            classes.append(cls)
            rew.append(clipped)
            probs.append((prop, floor))
            n_clip_x.append(nx)
        # --- public weight bounds ---
        ranges = [hi - lo for lo, hi in rewards]
        W = []
        for k in range(T):
            span_lo, span_hi = math.fsum(r[0] for r in rewards[k:]), math.fsum(r[1] for r in rewards[k:])
            b = baselines[k]
            if isinstance(b, float):
                reach = max(span_hi - b, b - span_lo, 0.0)
                if reach == 0.0:
                    raise ValueError(f"baseline[{k}]={b!r} leaves no room: Y_{k + 1} is bounded by "
                                     f"[{span_lo}, {span_hi}].")
            else:
                reach = math.fsum(ranges[k:])
            W.append(reach / math.prod(probs[j][1] for j in range(k, T)))
        # --- backward releases ---
        rng = resolve_rng(self.random_state)
        stream = "R" if is_r_stream(self.random_state) else "numpy"  # the sampler model of the rounding deltas
        ledger = BudgetAccountant(total)
        followed = np.ones(n, dtype=bool)
        prob_product = np.ones(n)
        cumulative = np.zeros(n)
        stages: List[Optional[StageRelease]] = [None] * T
        n_followed, n_clip_w = [0] * T, [0] * T
        nonprivate: List[Optional[NDArray[np.float64]]] = [None] * T
        for k in reversed(range(T)):
            stage = k + 1
            prop, _ = probs[k]
            prob_product = prob_product * prop.probability
            cumulative = cumulative + rew[k]
            span_lo = math.fsum(r[0] for r in rewards[k:])
            span_hi = math.fsum(r[1] for r in rewards[k:])
            eps_k, eps_b, baseline_coef = budgets[k], 0.0, None
            b = baselines[k]
            if b == "lower":
                outcome = cumulative - span_lo
            elif isinstance(b, float):
                outcome = cumulative - b
            elif b == "ols":  # validation only (epsilon = inf, checked): W is read off the data
                design = np.column_stack([np.ones(n), raw[k]])[followed]
                baseline_coef = np.linalg.lstsq(design, cumulative[followed], rcond=None)[0]
                outcome = cumulative - np.column_stack([np.ones(n), raw[k]]) @ baseline_coef
                W[k] = max(W[k], float(np.max(np.abs(outcome[followed]) / prob_product[followed])))
            else:
                eps_b = eps_k * share if math.isfinite(eps_k) else math.inf
                eps_k = eps_k - eps_b if math.isfinite(eps_k) else math.inf
                fitted, baseline_coef, delta_b = self._private_baseline(raw[k], cumulative, followed, bounds[k],
                                                                        (span_lo, span_hi), eps_b, rng, stage)
                ledger.spend(eps_b, label=f"stage {stage} baseline (linear, KST)", delta=delta_b)
                if self.accountant is not None:
                    self.accountant.spend(eps_b, label=f"DPMultiStageOWL stage {stage} baseline", delta=delta_b)
                outcome = cumulative - fitted
            outcome = np.where(followed, outcome, 0.0)
            K = len(classes[k])
            problem = prepare_arm_problem(hist[k], codes[k], K, outcome, prob_product,
                                          weights_upper_bound=W[k], weight_sensitivity=prop.C)
            plan = self._stage_plan(stage, K, b, gamma=gammas[k], epsilon=eps_k, n=n,
                                    dim=problem.rows.shape[1], W=W[k], C=prop.C,
                                    benefit_range=span_hi - span_lo)
            rel = release_rule(problem.rows, problem.labels, problem.weights, plan=plan, C=prop.C, tol=self.tol,
                               reproduce_dppack=False, rng=rng, benefit=cumulative - span_lo,
                               propensity_received=prob_product, n_clipped_weights=problem.n_clipped_weights,
                               active=followed)
            (e_rule, delta_k), spent_b = rule_release_parts(rel, reproduce_dppack=False, stream=stream)
            base_value = None
            if spent_b is not None and rel.baseline is not None:  # residual weights: the mean baseline was
                # released first (spent_b is its (epsilon, delta), given exactly when rel.baseline is)
                eps_b = spent_b[0]
                base_value = span_lo + rel.baseline.value
                ledger.spend(eps_b, label=f"stage {stage} baseline (mean, Laplace)", delta=spent_b[1])
                if self.accountant is not None:
                    self.accountant.spend(eps_b, label=f"DPMultiStageOWL stage {stage} baseline", delta=spent_b[1])
            what = f"{plan.mechanism} perturbation"
            ledger.spend(e_rule, label=f"stage {stage} rule ({K} arms, {what})", delta=delta_k)
            if self.accountant is not None:
                self.accountant.spend(e_rule, label=f"DPMultiStageOWL stage {stage} rule", delta=delta_k)
            rule = ArmRule(classes=classes[k], scaled_coef=rel.coef.reshape(K - 1, -1), scaler=scalers[k])
            stages[k] = StageRelease(stage=stage, rule=rule, epsilon=e_rule, epsilon_baseline=eps_b,
                                     sensitivity=rel.sensitivity, weights_upper_bound=plan.weights_upper_bound,
                                     release_grid=rel.grid, baseline_coef=baseline_coef, mechanism=plan.mechanism,
                                     residual=plan.residual is not None, gamma=plan.gamma, huber_h=plan.huber_h,
                                     baseline=base_value, noise_scale=rel.noise_scale, delta=delta_k)
            n_followed[k], n_clip_w[k] = int(followed.sum()), rel.n_clipped_weights
            if self.keep_nonprivate:
                nonprivate[k] = rel.minimiser.reshape(K - 1, -1).copy()
            # who follows the released rule of this stage (post-processing of the release)
            recommended = np.argmax(rule.scores(raw[k]), axis=1)
            followed &= recommended == codes[k]
        stages_done = cast(List[StageRelease], stages)  # the backward loop released every stage
        self.n_stages_ = T
        self.stages_ = stages_done
        self.classes_ = [s.rule.classes for s in stages_done]
        self.epsilon_stages_ = [s.epsilon + s.epsilon_baseline for s in stages_done]
        self.ledger_ = ledger
        self.sampler_model_ = stream
        self.privacy_spent_ = ledger.privacy_spent  # sequential composition of every stage's releases
        self.n_samples_ = n
        self.n_features_in_ = [s.rule.scaler.n_features for s in stages_done]
        self.n_followed_ = n_followed
        self.n_clipped_rewards_ = n_clip_r
        self.n_clipped_features_ = n_clip_x
        self.n_clipped_weights_ = n_clip_w
        if self.keep_nonprivate:
            self.nonprivate_scaled_coef_ = nonprivate
        return self

    def _stage_plan(self, stage: int, K: int, baseline: Any, *, gamma: Any, epsilon: float, n: int, dim: int,
                    W: float, C: float, benefit_range: float):
        """The stage's :class:`~pydpowl.estimators.owl_mechanism.RulePlan`: DPOWL's plan (two arms or K arms
        alike), with what has no proof here refused (residual weights with another baseline)."""
        mechanism, residual = self.mechanism, check_residual(self.residual)
        if baseline != "lower":
            if residual is not False and residual != AUTO:
                raise ValueError(f"residual weights (a private mean baseline) replace baseline={baseline!r}: use "
                                 "baseline='lower' with them, or residual=False.")
            residual = False
        return plan_rule(mechanism=mechanism, residual=residual, gamma=gamma, huber_h=self.huber_h, epsilon=epsilon,
                         n_samples=n, dim=dim, weights_upper_bound=W, C=C, reproduce_dppack=False,
                         benefit_range=benefit_range if baseline == "lower" else None)

    def _private_baseline(self, X: NDArray[np.float64], y: NDArray[np.float64], followed: NDArray[np.bool_],
                          bounds: Any, target_bounds: Tuple[float, float], epsilon: float, rng: Any, stage: int):
        """The linear baseline of ``Y_k`` on ``H_k`` over the followers (weights 1/0), released by KST, its
        predictions clipped to the bounds of ``Y_k`` (post-processing), and the release's delta."""
        from ._family import release_spent as kst_spent
        from ._family_core import fit_linear_regression

        fit = fit_linear_regression(X, y, epsilon=epsilon, delta=0.0, gamma=float(self.baseline_gamma),
                                    feature_bounds=bounds, target_bounds=target_bounds,
                                    fit_intercept=True, tol=float(self.tol), rng=rng,
                                    target_bounds_name=f"reward_bounds (stage {stage} on)",
                                    sample_weight=followed.astype(np.float64))
        coef = fit.coeff
        pred = coef[0] + X @ coef[1:]
        delta = kst_spent(fit.release, reproduce_dppack=False)[1]
        return np.minimum(np.maximum(pred, target_bounds[0]), target_bounds[1]), coef, delta

    # ------------------------------------------------------------------ prediction
    def _stage_index(self, stage: Any) -> int:
        check_is_fitted(self, "stages_")
        k = check_int("stage", stage, minimum=1)
        if k > self.n_stages_:
            raise ValueError(f"stage must be in 1..{self.n_stages_}, got stage={k}.")
        return k - 1

    def _history(self, H: Any, k: int) -> NDArray[np.float64]:
        Hk = H[k] if isinstance(H, (list, tuple)) else H
        X = check_array(f"H[{k}]" if isinstance(H, (list, tuple)) else "H", Hk)
        p = self.stages_[k].rule.scaler.n_features
        if X.shape[1] != p:
            raise ValueError(f"stage {k + 1}'s history must have {p} columns, got {X.shape[1]}.")
        return X

    def decision_function(self, H: Any, stage: int) -> NDArray[np.float64]:
        """The arm scores ``<V_a, f_k(h)>`` of stage ``stage`` (1-based): shape (n, K_k); the rule picks the largest."""
        k = self._stage_index(stage)
        return self.stages_[k].rule.scores(self._history(H, k))

    def predict(self, H: Any, stage: Optional[int] = None) -> Any:
        """Recommended treatments: for one ``stage`` (1-based), or a list for every stage.

        ``H`` is one history matrix (used at every stage) or a list of them, one per stage (as in fit;
        for a single stage, the list's entry for that stage is used).
        """
        check_is_fitted(self, "stages_")
        if stage is not None:
            k = self._stage_index(stage)
            return self.stages_[k].rule.predict(self._history(H, k))
        if isinstance(H, (list, tuple)) and len(H) != self.n_stages_:
            raise ValueError(f"H must have one entry per stage (T={self.n_stages_}), got {len(H)}.")
        return [s.rule.predict(self._history(H, k)) for k, s in enumerate(self.stages_)]

    def floating_point_delta(self) -> float:
        """The ``delta`` of the floating-point-safe releases of the rules (summed over stages; the linear
        baselines' own grid adds theirs, see :class:`pydpowl.DPLinearRegression`)."""
        check_is_fitted(self, "stages_")
        return math.fsum(s.delta for s in self.stages_)


def ipw_value(regime_treatments: Sequence[NDArray[Any]], A: Sequence[ArrayLike], R: Sequence[ArrayLike],
              propensity: Sequence[ArrayLike]) -> Tuple[float, float]:
    """The normalised inverse-probability-weighted value of a regime on data, and its standard error.

    ``V = sum_i Y_i c_i / pi_i / sum_i c_i / pi_i`` with ``Y_i`` the sum of the rewards,
    ``c_i = 1{A_ik = d_k(H_ik) for every k}`` and ``pi_i = prod_k P(A_ik | H_ik)`` (DTRlearn2's
    ``valuefun``); the standard error is the delta method's (sandwich) for this ratio.
    NOT PRIVATE: computed from the data as they are (cross-checks and studies; the private value of
    a regime is a separate release).

    Parameters
    ----------
    regime_treatments : list of T arrays
        The regime's recommendation for each subject at each stage.
    A, R : list of T arrays
        Received treatments and rewards.
    propensity : list of T arrays
        ``P(A_ik | H_ik)`` of the received treatments.
    """
    T = len(A)
    c = np.ones(len(np.asarray(A[0])), dtype=bool)
    pi = np.ones(c.shape[0])
    Y = np.zeros(c.shape[0])
    for k in range(T):
        c &= np.asarray(regime_treatments[k]) == np.asarray(A[k])
        pi = pi * np.asarray(propensity[k], dtype=np.float64)
        Y = Y + np.asarray(R[k], dtype=np.float64)
    w = c / pi
    total = w.sum()
    if total <= 0:
        return math.nan, math.nan
    value = float((w * Y).sum() / total)
    n = c.shape[0]
    influence = w * (Y - value) / (total / n)
    return value, float(np.sqrt(np.sum(influence ** 2)) / n)


def gamma_for_cost(c: float, n_subjects: int, n_coefficients: int, feature_scale: float) -> float:
    """pydpowl's ``gamma`` for DTRlearn2's (and an SVM's) cost ``c`` on ``n_subjects`` subjects.

    DTRlearn2's ``owl()`` fits a stage on its ``n_k`` followers by minimising
    ``(1/2) ||beta||^2 + (c / n_k) sum_i w_i hinge_i`` (``WeightSVM::wsvm`` with
    ``cost = c / n_k``; the intercept is not penalised); times ``n_k / c`` that
    is ``sum_i w_i hinge_i + (n_k / (2c)) ||beta||^2``. pydpowl minimises
    ``sum_i w_i l_i + (gamma / 2) ||theta||^2`` (times n) over the scaled rows
    ``z = [1, x_j / s_j] / sqrt(d)``, where ``theta_j = beta_j s_j sqrt(d)``:
    with a common feature scale ``s_j = s`` its penalty on the features is
    ``(gamma d s^2 / 2) ||beta||^2``, so the two objectives agree for

        gamma = n_k / (c d s^2),

    up to pydpowl's penalty on the intercept (``s^2`` times weaker than on a
    feature) and the Huber smoothing of the hinge. With unequal scales a
    feature of scale ``s_j < s`` is penalised ``(s_j / s)^2`` times less.

    Parameters
    ----------
    c : float
        The cost, in (0, inf).
    n_subjects : int
        ``n_k`` (DTRlearn2's followers, for the cross-checks) or ``n`` (public: the R front end's
        ``owl(c = )``, where the count of followers would be computed from the private data).
    n_coefficients : int
        ``d``, the stage's features plus the intercept.
    feature_scale : float
        ``s``, the common ``max(|lower_j|, |upper_j|)`` of the stage's features.
    """
    return float(n_subjects) / (check_positive("c", c) * int(n_coefficients) * float(feature_scale) ** 2)
