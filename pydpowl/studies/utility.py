"""Utility study: which private DP-OWL mechanism gives the best rule, per design, n and epsilon.

Mechanisms (:data:`MECHANISMS`; each releases a linear rule with total budget
epsilon and known propensities, C = 0):

* ``"output"``: the paper's Algorithm 1, OWL weights ``(B - L) / p`` bounded by W;
* ``"objective"``: weighted objective perturbation
  (:func:`pydpowl.engine.mechanisms.release_weighted_objective`) with the same weights;
* ``"residual-output"`` and ``"residual-objective"``: residual weights
  (:mod:`pydpowl.estimators.residual`: a DP mean of the clipped benefit on 10 %
  of epsilon, residuals clipped to a quarter of the benefit range, W / 4),
  then output or objective perturbation on the remaining 90 % (the
  prototype's settings of issue 24);
* ``"objective-h1"``: weighted objective perturbation with the Huber hinge's h = 1;
* ``"default"``: what :class:`pydpowl.DPOWL` does by default with known
  propensities: residual weights clipped to 1/16 of the benefit range (W / 16),
  objective perturbation with h = 1 (:mod:`pydpowl.estimators.owl_defaults`).

For every cell (design, n, epsilon) and mechanism the study draws ``reps``
datasets and releases one rule per dataset for every gamma of the mechanism's
grid and for its public gamma rule (:func:`pydpowl.estimators.owl_defaults.default_gamma`,
a function of n, epsilon, d and W only). Each rule is scored on the design's
truth (:class:`~pydpowl.datasets.DesignTruth`, benefits unclipped): the
**regret** ``V* - V(rule)`` and the **agreement** with the non-private OWL rule
fitted on the same data (the share of the covariate law where both recommend
the same arm; the non-private rule uses its own best gamma of the grid). The
*oracle* gamma of a mechanism is the grid value with the smallest mean
regret in the cell (chosen with the truth: a benchmark, not a usable rule).

Designs (:data:`DESIGNS`): the paper's synthetic design (benefits clipped to the
public [-7.5, 7.5] and shifted: W = 30 as the paper's), the CYP-GUIDES-style
design (preset "guided", B in [0, log 8760], W = log(8760) / (1/3)) and Zhao et
al.'s (2012) scenario 1 with p = 10 (B in [-7, 9], W = 32).

The releases are those of the estimators (the same engine functions, the same
calibration, solver tolerance and floating-point-safe rounding); for output
perturbation the certified minimiser is computed once per dataset and gamma
and each epsilon adds fresh noise (the law of a separate fit).
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._validation import check_choice, check_int, check_positive
from ..datasets import (CYP_FEATURE_BOUNDS, CYP_WEIGHTS_UPPER_BOUND, DesignTruth, ZHAO_BENEFIT_BOUNDS,
                        ZHAO_WEIGHTS_UPPER_BOUND, cyp_guides_style_truth, make_cyp_guides_style,
                        make_synthetic_owl, make_zhao_owl, synthetic_truth, zhao_truth)
from ..engine.losses import HuberHingeLoss
from ..engine.mechanisms import objective_ridge_floor, perturb, release_weighted_objective
from ..engine.preprocessing import FeatureScaler
from ..engine.solver import DEFAULT_TOL, solve_weighted_erm
from ..estimators.owl_defaults import OBJECTIVE_HUBER_H, default_gamma
from ..estimators.residual import ResidualWeights, release_baseline, residual_problem

__all__ = ["UtilityDesign", "Mechanism", "DESIGNS", "MECHANISMS", "UTILITY_NS", "UTILITY_EPSILONS",
           "REDUCED_NS", "REDUCED_EPSILONS", "UtilityResult", "run_utility", "output_gamma_grid",
           "objective_gamma_grid"]

#: the study's grid (``pydpowl utility --full``)
UTILITY_NS: Tuple[int, ...] = (500, 1459, 5000, 20000)
UTILITY_EPSILONS: Tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 5.0)
#: the default, reduced grid of ``pydpowl utility``
REDUCED_NS: Tuple[int, ...] = (500, 1459)
REDUCED_EPSILONS: Tuple[float, ...] = (0.5, 1.0)
#: the loss of every mechanism (DPpack's and the paper's Huber hinge)
HUBER_H = 0.5


@dataclass(frozen=True)
class UtilityDesign:
    """A simulation design with its public settings.

    Attributes
    ----------
    name, title : str
    n_features : int
    feature_bounds : (ndarray, ndarray)
    benefit_bounds : (float, float)
    weights_upper_bound : float
        W of the plain OWL weights ``(clip(B, L, U) - L) / p``.
    """

    name: str
    title: str
    n_features: int
    feature_bounds: Tuple[NDArray[np.float64], NDArray[np.float64]]
    benefit_bounds: Tuple[float, float]
    weights_upper_bound: float
    _draw: Callable[[int, Any], Any] = field(repr=False)
    _propensity: Callable[[int], float] = field(repr=False)
    _truth: Callable[[], DesignTruth] = field(repr=False)

    def draw(self, n: int, rng: Any) -> Tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64],
                                              NDArray[np.float64]]:
        """``(X, A, B, P(A_i | x_i))`` of one dataset of n (raw benefits; known propensities)."""
        data = self._draw(n, rng)
        p_plus = self._propensity(n)
        A = np.asarray(data.treatment, dtype=np.float64)
        return (data.X.to_numpy(dtype=np.float64), A, np.asarray(data.benefit, dtype=np.float64),
                np.where(A > 0, p_plus, 1.0 - p_plus))

    @property
    def truth(self) -> DesignTruth:
        return self._truth()


@lru_cache(maxsize=None)
def _synthetic_truth() -> DesignTruth:
    return synthetic_truth(n_points=2 ** 15)


@lru_cache(maxsize=None)
def _cyp_truth() -> DesignTruth:
    return cyp_guides_style_truth("guided")


@lru_cache(maxsize=None)
def _zhao_truth() -> DesignTruth:
    return zhao_truth(n_points=2 ** 15)


DESIGNS: Dict[str, UtilityDesign] = {
    "synthetic": UtilityDesign(
        "synthetic", "paper's synthetic design (p = 4, P(+1) = 1/2, B clipped to [-7.5, 7.5], W = 30)", 4,
        (np.zeros(4), np.ones(4)), (-7.5, 7.5), 30.0,
        lambda n, rng: make_synthetic_owl(n, shift=None, random_state=rng), lambda n: 0.5, _synthetic_truth),
    "cyp": UtilityDesign(
        "cyp", "CYP-GUIDES-style design (preset 'guided', 982:477, B in [0, log 8760], W = 27.2)", 4,
        (CYP_FEATURE_BOUNDS[0].copy(), CYP_FEATURE_BOUNDS[1].copy()), (0.0, math.log(24 * 365)),
        CYP_WEIGHTS_UPPER_BOUND, lambda n, rng: make_cyp_guides_style(n, random_state=rng),
        lambda n: round(n * 982 / 1459) / n, _cyp_truth),
    "zhao": UtilityDesign(
        "zhao", "Zhao et al. (2012) scenario 1, p = 10 (P(+1) = 1/2, B clipped to [-7, 9], W = 32)", 10,
        (-np.ones(10), np.ones(10)), ZHAO_BENEFIT_BOUNDS, ZHAO_WEIGHTS_UPPER_BOUND,
        lambda n, rng: make_zhao_owl(n, random_state=rng), lambda n: 0.5, _zhao_truth),
}


@dataclass(frozen=True)
class Mechanism:
    """A private DP-OWL mechanism of the study.

    Attributes
    ----------
    name, title : str
    perturbation : {"output", "objective"}
    residual : ResidualWeights or None
    """

    name: str
    title: str
    perturbation: str
    residual: Optional[ResidualWeights] = None
    huber_h: float = HUBER_H
    jacobian_share: float = 0.5


#: the prototype's residual setting (issue 24): residuals clipped to a quarter of the benefit range
PROTOTYPE_RESIDUAL = ResidualWeights(baseline_share=0.1, clip_share=0.25)

MECHANISMS: Dict[str, Mechanism] = {
    "output": Mechanism("output", "paper's output perturbation (Algorithm 1), h = 0.5", "output"),
    "objective": Mechanism("objective", "objective perturbation, weighted, h = 0.5", "objective"),
    "residual-output": Mechanism("residual-output", "residual weights (R = range/4) + output, h = 0.5", "output",
                                 PROTOTYPE_RESIDUAL),
    "residual-objective": Mechanism("residual-objective", "residual weights (R = range/4) + objective, h = 0.5",
                                    "objective", PROTOTYPE_RESIDUAL),
    "objective-h1": Mechanism("objective-h1", "objective perturbation, weighted, h = 1", "objective",
                              huber_h=OBJECTIVE_HUBER_H),
    "default": Mechanism("default", "DPOWL's default: residual weights (R = range/16) + objective, h = 1",
                         "objective", ResidualWeights(), huber_h=OBJECTIVE_HUBER_H),
}


def output_gamma_grid() -> Tuple[float, ...]:
    """The oracle grid of output perturbation: 10^(0, 0.5, ..., 5)."""
    return tuple(float(10.0 ** (k / 2.0)) for k in range(11))


def objective_gamma_grid(epsilon: float, weights_upper_bound: float, *, huber_h: float = HUBER_H,
                         jacobian_share: float = 0.5) -> Tuple[float, ...]:
    """The oracle grid of objective perturbation: the ridge floor times 2^(0, 1, ..., 9)
    (a gamma below the floor gives the floor's ridge)."""
    floor = objective_ridge_floor(epsilon=epsilon, weights_upper_bound=weights_upper_bound,
                                  curvature=1.0 / (2.0 * huber_h), jacobian_share=jacobian_share)
    return tuple(floor * 2.0 ** k for k in range(10))


# ----------------------------------------------------------------------------- one cell


@dataclass
class _Scores:
    """Per (mechanism, epsilon, gamma): regret and agreement arrays over repetitions."""

    regret: Dict[Tuple[str, float, str], NDArray[np.float64]] = field(default_factory=dict)
    agreement: Dict[Tuple[str, float, str], NDArray[np.float64]] = field(default_factory=dict)
    gamma: Dict[Tuple[str, float, str], float] = field(default_factory=dict)


def _release(mech: Mechanism, Z, y, w, W, *, epsilon: float, gamma: float, rng, theta_np=None, n: int,
             backend: str = "auto"):
    """One release (scaled space) of ``mech``'s perturbation on prepared labels and weights."""
    loss = HuberHingeLoss(mech.huber_h)
    if mech.perturbation == "objective":
        return release_weighted_objective(Z, y, w, epsilon=epsilon, gamma=gamma, weights_upper_bound=W,
                                          loss=loss, tol=DEFAULT_TOL, rng=rng, backend=backend,
                                          jacobian_share=mech.jacobian_share).coef
    if theta_np is None:
        theta_np = solve_weighted_erm(Z, y, w, gamma=gamma, loss=loss, tol=DEFAULT_TOL, objective=False,
                                      backend=backend).x
    return perturb(theta_np[None, :], epsilon=epsilon, gamma=gamma, weights_upper_bound=W, n_samples=n,
                   tol=DEFAULT_TOL, rng=rng)[0]


def _gammas(mech: Mechanism, epsilon: float, W: float, n: int, d: int) -> Dict[str, float]:
    """``{"grid k": gamma, ..., "public": gamma}`` of a mechanism in one cell."""
    grid = output_gamma_grid() if mech.perturbation == "output" else \
        objective_gamma_grid(epsilon, W, huber_h=mech.huber_h, jacobian_share=mech.jacobian_share)
    out = {f"grid {k}": g for k, g in enumerate(grid)}
    out["public"] = default_gamma(perturbation=mech.perturbation, n_samples=n, epsilon=epsilon, dim=d,
                                  weights_upper_bound=W, huber_h=mech.huber_h)
    return out


def run_cell(design_name: str, n: int, epsilons: Sequence[float], mechanisms: Sequence[str], reps: int,
             seed: int, backend: str = "auto") -> Dict[str, Any]:
    """Every release of one (design, n) for every epsilon and mechanism, scored (see the module docstring).

    Returns a dict of plain arrays: ``regret`` / ``agreement`` / ``gamma`` keyed by
    ``(mechanism, epsilon, gamma label)``, the non-private reference's per-gamma
    regrets and the seconds taken. Deterministic given ``seed``.
    """
    design = DESIGNS[design_name]
    truth = design.truth
    p = design.n_features
    scaler = FeatureScaler.from_bounds(design.feature_bounds, p, True)
    d = scaler.n_coefficients
    lo, hi = design.benefit_bounds
    W = design.weights_upper_bound
    loss = HuberHingeLoss(HUBER_H)
    scale = scaler.column_scale * scaler.dimension_scale
    Xt = truth.X
    v_star = truth.optimal_value
    out_grid = output_gamma_grid()
    t0 = time.perf_counter()

    coefs: Dict[Tuple[str, float, str], List[NDArray[np.float64]]] = {}
    gam: Dict[Tuple[str, float, str], float] = {}
    np_coefs: Dict[float, List[NDArray[np.float64]]] = {g: [] for g in out_grid}
    seq = np.random.SeedSequence([seed, n])
    for rep, child in enumerate(seq.spawn(reps)):
        rng = np.random.Generator(np.random.PCG64(child))
        X, A, B, p_recv = design.draw(n, rng)
        Z, _ = scaler.transform(X)
        Bc = np.clip(B, lo, hi)
        w_plain = np.minimum((Bc - lo) / p_recv, W)
        theta_np: Dict[float, NDArray[np.float64]] = {}
        for g in out_grid:
            theta_np[g] = solve_weighted_erm(Z, A, w_plain, gamma=g, loss=loss, tol=DEFAULT_TOL, objective=False,
                                             backend=backend).x
            np_coefs[g].append(theta_np[g])
        for eps in epsilons:
            residual_data: Dict[Tuple[float, float], Tuple[Any, Any, float]] = {}
            for name in mechanisms:
                mech = MECHANISMS[name]
                if mech.residual is None:
                    y, w, W_m, eps_rule = A, w_plain, W, eps
                else:
                    shares_key = (mech.residual.baseline_share, mech.residual.clip_share)
                    eps_m, eps_rule = mech.residual.split(eps)
                    # one baseline per dataset and epsilon, shared by both perturbations
                    if shares_key not in residual_data:
                        base = release_baseline(B, benefit_bounds=(lo, hi), epsilon=eps_m, rng=rng)
                        prob = residual_problem(A, B, p_recv, baseline=base.value, benefit_bounds=(lo, hi),
                                                weights_upper_bound=W, clip_share=mech.residual.clip_share)
                        residual_data[shares_key] = (prob.labels, prob.weights, prob.weights_upper_bound)
                    y, w, W_m = residual_data[shares_key]
                for label, g in _gammas(mech, eps_rule, W_m, n, d).items():
                    shared = theta_np.get(g) if (mech.residual is None and mech.perturbation == "output"
                                                 and mech.huber_h == HUBER_H) else None
                    c = _release(mech, Z, y, w, W_m, epsilon=eps_rule, gamma=g, rng=rng, theta_np=shared, n=n,
                                 backend=backend)
                    coefs.setdefault((name, eps, label), []).append(c / scale)
                    gam[(name, eps, label)] = g

    def regrets_and_signs(C: NDArray[np.float64]):
        dec = Xt @ C[:, 1:].T + C[:, 0][None, :] > 0  # (m, reps)
        values = truth.weight @ np.where(dec, truth.mean_plus[:, None], truth.mean_minus[:, None])
        return v_star - values, dec

    np_regret = {}
    np_signs = {}
    for g in out_grid:
        r, s = regrets_and_signs(np.array(np_coefs[g]) / scale)
        np_regret[g], np_signs[g] = r, s
    g_ref = min(out_grid, key=lambda g: float(np_regret[g].mean()))
    ref = np_signs[g_ref]
    regret, agreement = {}, {}
    for key, rows in coefs.items():
        r, s = regrets_and_signs(np.array(rows))
        regret[key] = r
        agreement[key] = truth.weight @ (s == ref)
    return {"design": design_name, "n": n, "regret": regret, "agreement": agreement, "gamma": gam,
            "nonprivate_regret": np_regret, "nonprivate_gamma": g_ref, "d": d, "W": W,
            "best_arm_regret": v_star - max(truth.arm_value(1), truth.arm_value(-1)),
            "seconds": time.perf_counter() - t0}


# ----------------------------------------------------------------------------- the study

RESULT_COLUMNS = ["design", "n", "epsilon", "mechanism", "gamma_rule", "gamma", "regret_mean", "regret_se",
                  "agreement_mean", "agreement_se", "reps"]


@dataclass
class UtilityResult:
    """The study's table and settings.

    Attributes
    ----------
    table : DataFrame
        One row per (design, n, epsilon, mechanism, gamma_rule) with ``gamma_rule``
        ``"public"`` (the mechanism's rule), ``"oracle"`` (best grid gamma, chosen
        with the truth) or ``"grid"``; ``mechanism`` ``"nonprivate"`` (epsilon inf,
        best grid gamma) and ``"best-arm"`` give the references. Regret and
        agreement: mean and standard error over repetitions.
    reps : int
    seconds : float
    notes : tuple of str
    """

    table: pd.DataFrame
    reps: int
    seconds: float
    notes: Tuple[str, ...] = ()

    def summary(self, gamma_rule: str = "public") -> pd.DataFrame:
        """Mean regret per (design, n, epsilon) by mechanism (columns), for one gamma rule."""
        t = self.table
        refs = t.mechanism.isin(["nonprivate", "best-arm"])
        priv = t[(t.gamma_rule == gamma_rule) & ~refs].pivot_table(index=["design", "n", "epsilon"],
                                                                   columns="mechanism", values="regret_mean")
        ref = t[refs].pivot_table(index=["design", "n"],
                                  columns="mechanism", values="regret_mean")
        return priv.join(ref, on=["design", "n"])


def _rows(cell: Dict[str, Any], reps: int) -> List[Dict[str, Any]]:
    rows = []
    design, n = cell["design"], cell["n"]

    def stats(a):
        a = np.asarray(a, dtype=float)
        return float(a.mean()), float(a.std(ddof=1) / math.sqrt(a.size)) if a.size > 1 else math.nan

    keys = cell["regret"].keys()
    for (mech, eps) in sorted({(k[0], k[1]) for k in keys}):
        labels = [k[2] for k in keys if k[0] == mech and k[1] == eps]
        grid = [lab for lab in labels if lab.startswith("grid")]
        best = min(grid, key=lambda lab: float(np.mean(cell["regret"][(mech, eps, lab)])))
        for rule, lab in [("public", "public"), ("oracle", best)] + [("grid", lab) for lab in grid]:
            r_m, r_se = stats(cell["regret"][(mech, eps, lab)])
            a_m, a_se = stats(cell["agreement"][(mech, eps, lab)])
            rows.append(dict(design=design, n=n, epsilon=eps, mechanism=mech, gamma_rule=rule,
                             gamma=cell["gamma"][(mech, eps, lab)], regret_mean=r_m, regret_se=r_se,
                             agreement_mean=a_m, agreement_se=a_se, reps=reps))
    g = cell["nonprivate_gamma"]
    r_m, r_se = stats(cell["nonprivate_regret"][g])
    rows.append(dict(design=design, n=n, epsilon=math.inf, mechanism="nonprivate", gamma_rule="oracle", gamma=g,
                     regret_mean=r_m, regret_se=r_se, agreement_mean=1.0, agreement_se=0.0, reps=reps))
    rows.append(dict(design=design, n=n, epsilon=math.nan, mechanism="best-arm", gamma_rule="", gamma=math.nan,
                     regret_mean=cell["best_arm_regret"], regret_se=0.0, agreement_mean=math.nan,
                     agreement_se=math.nan, reps=reps))
    return rows


def run_utility(*, designs: Sequence[str] = tuple(DESIGNS), ns: Sequence[int] = REDUCED_NS,
                epsilons: Sequence[float] = REDUCED_EPSILONS, mechanisms: Sequence[str] = tuple(MECHANISMS),
                reps: int = 100, seed: int = 2024, jobs: int = 1, backend: str = "auto",
                progress: bool = False) -> UtilityResult:
    """Run the utility study (see the module docstring).

    Parameters
    ----------
    designs, ns, epsilons, mechanisms : sequences
        The grid (names from :data:`DESIGNS` and :data:`MECHANISMS`).
    reps : int, default=100
        Repetitions (datasets) per (design, n); every epsilon and mechanism is
        applied to the same datasets.
    seed : int
        Seed of everything (each (design, n) has its own stream: the same
        cells give the same numbers whatever else is run, and in any process).
    jobs : int, default=1
        Worker processes (one (design, n) cell each).
    backend : {"auto", "numpy", "numba"}, default="auto"
        The solver's backend (the numba kernels are several times faster from
        a few thousand rows in a long run; the releases are the same).
    progress : bool
        Progress bar on stderr.
    """
    from .._progress import Progress

    for name in designs:
        check_choice("designs", name, tuple(DESIGNS))
    for name in mechanisms:
        check_choice("mechanisms", name, tuple(MECHANISMS))
    ns = [check_int("ns", v, minimum=10) for v in ns]
    epsilons = [check_positive("epsilons", e) for e in epsilons]
    reps = check_int("reps", reps, minimum=2)
    jobs = check_int("jobs", jobs, minimum=1)
    start = time.perf_counter()
    check_choice("backend", backend, ("auto", "numpy", "numba"))
    tasks = [(name, n, epsilons, list(mechanisms), reps, seed + k, backend) for k, name in enumerate(designs)
             for n in ns]
    tasks.sort(key=lambda t: -t[1])  # the largest cells first
    rows: List[Dict[str, Any]] = []
    with Progress(len(tasks), "utility", enabled=progress) as bar:
        if jobs == 1:
            for task in tasks:
                rows.extend(_rows(run_cell(*task), reps))
                bar.update()
        else:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                for cell in pool.map(_run_task, tasks):
                    rows.extend(_rows(cell, reps))
                    bar.update()
    table = pd.DataFrame(rows, columns=RESULT_COLUMNS).sort_values(
        ["design", "n", "epsilon", "mechanism", "gamma_rule"], kind="stable").reset_index(drop=True)
    notes = (
        "regret = V* - V(rule) on the design's truth (benefits unclipped); agreement = share of the covariate law "
        "where the rule recommends what the non-private OWL rule (best grid gamma) fitted on the same data does",
        "public gamma: pydpowl.estimators.owl_defaults.default_gamma (n, epsilon, d, W only); oracle: the grid "
        "gamma with the smallest mean regret in the cell (chosen with the truth)",
        "residual mechanisms: baseline = DP mean of the clipped benefit on 10% of epsilon, residuals clipped to a "
        "share of the benefit range (1/4 for residual-output and residual-objective, 1/16 for default), weights "
        "bounded by W times that share; the rule on the other 90%",
    )
    return UtilityResult(table=table, reps=reps, seconds=time.perf_counter() - start, notes=notes)


def _run_task(task):
    return run_cell(*task)
