"""Cases and checks for DPpack's ERM family: svmDP (objective/output, linear/Gaussian), LogisticRegressionDP,
LinearRegressionDP (delta = 0 and delta > 0).

For each case, against DPpack through rpy2 (:mod:`r_reference.dppack_family`):

1. **Same data** as DPpack's optimiser (for the Gaussian kernel: the random features of the same R seed).
2. **Non-private match** (epsilon = inf): pydpowl's certified minimiser is at least as good as DPpack's
   (``F_py <= F_R + 1e-12``) and ``||theta_R - theta_py|| <= sqrt(2 gap / mu) + 1e-9`` (strong convexity;
   for LinearRegressionDP over the ball, after projecting DPpack's answer onto it, plus the projection
   distance).
3. **Seeded replay** (``reproduce_dppack=True``, pydpowl given ``RRandom(s)``, DPpack after ``set.seed(s)``):
   the same ``.Random.seed`` after every fit; the same random features; the coefficient gap explained by
   DPpack's optimiser on the *perturbed* objective (the same strong-convexity bound, with the linear term
   ``b`` and ``Delta`` the replay drew); predictions agreeing on at least 99% of the rows.
4. **Released law** (K fits per engine, pydpowl with numpy Generators): for output perturbation the noise
   (release minus the fit's own exact minimiser) against Gamma(d, rate) and the uniform-direction law;
   for objective perturbation the linear term recovered from each release (``b = -grad`` of the
   unperturbed objective there, exact at a minimiser) against its law (Gamma norm and uniform direction,
   or N(0, sigma^2) per coordinate for KST with delta > 0); two-sample KS between the engines on every
   released coordinate (scaled space).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
from scipy import stats

from pydpowl import DPLinearRegression, DPLogisticRegression, DPSVM, PrivacyLeakWarning, RRandom
from pydpowl.engine.losses import HuberHingeLoss, LogisticLoss
from pydpowl.engine.mechanisms import cms_calibration, kst_calibration
from pydpowl.engine.solver import objective_value

from .checks import DATA_TOL, DIST_TOL, F_TOL, CheckRow, KSTest, direction_coordinate_law

__all__ = ["FamilyCase", "FamilySummary", "build_family_cases", "run_family_case", "family_table",
           "PREDICTION_AGREEMENT"]

#: smallest share of rows on which the replayed predictions must agree
PREDICTION_AGREEMENT = 0.99
#: pydpowl's certified tolerance in the harness (the estimators' default)
SOLVER_TOL = 1e-10


@dataclass(frozen=True)
class FamilyCase:
    """One configuration of DPpack's ERM family.

    Attributes
    ----------
    name, title : str
    model : {"svm", "logistic", "linear"}
    X : ndarray of shape (n, p)
    y : ndarray of shape (n,)
        0/1 labels (classifiers) or the target (regression).
    epsilon, gamma : float
    perturbation : {"objective", "output"}
    kernel : {"linear", "gaussian"}
    D : int or None
    add_bias : bool
    weights : ndarray or None
        svm, output perturbation only.
    weights_upper_bound : float or None
    delta : float
        linear only.
    lower, upper : tuple of float
        Feature bounds.
    target_bounds : tuple of float or None
    k : int or None
        Private fits per engine for the law tests (None: the run's K).
    """

    name: str
    title: str
    model: str
    X: np.ndarray
    y: np.ndarray
    epsilon: float
    gamma: float
    perturbation: str = "objective"
    kernel: str = "linear"
    D: Optional[int] = None
    add_bias: bool = True
    weights: Optional[np.ndarray] = None
    weights_upper_bound: Optional[float] = None
    delta: float = 0.0
    lower: Tuple[float, ...] = ()
    upper: Tuple[float, ...] = ()
    target_bounds: Optional[Tuple[float, float]] = None
    k: Optional[int] = None
    notes: Tuple[str, ...] = field(default_factory=tuple)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def gaussian(self) -> bool:
        return self.kernel == "gaussian"

    @property
    def dppack_class(self) -> str:
        return {"svm": "svmDP", "logistic": "LogisticRegressionDP", "linear": "LinearRegressionDP"}[self.model]

    def estimator(self, epsilon: float, random_state: Any, *, delta: Optional[float] = None) -> Any:
        """pydpowl's estimator with DPpack's semantics (``reproduce_dppack=True``, internals kept)."""
        common = dict(epsilon=epsilon, gamma=self.gamma, fit_intercept=self.add_bias, reproduce_dppack=True,
                      keep_nonprivate=True, random_state=random_state)
        if self.model == "svm":
            return DPSVM(perturbation=self.perturbation, kernel=self.kernel, n_components=self.D,
                         feature_bounds=None if self.gaussian else (self.lower, self.upper),
                         weights_upper_bound=self.weights_upper_bound, **common)
        if self.model == "logistic":
            return DPLogisticRegression(perturbation=self.perturbation, feature_bounds=(self.lower, self.upper),
                                        **common)
        return DPLinearRegression(delta=self.delta if delta is None else delta, feature_bounds=(self.lower, self.upper),
                                  target_bounds=self.target_bounds, **common)

    def fit_py(self, epsilon: float, random_state: Any, *, delta: Optional[float] = None) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            est = self.estimator(epsilon, random_state, delta=delta)
            return est.fit(self.X, self.y, self.weights) if self.model == "svm" else est.fit(self.X, self.y)

    def fit_dppack(self, epsilon: float, seeds, *, return_data: bool = False, predict: bool = False,
                   delta: Optional[float] = None):
        from r_reference.dppack_family import fit_dppack_model

        upper, lower = list(self.upper), list(self.lower)
        if self.model == "linear":
            upper, lower = upper + [self.target_bounds[1]], lower + [self.target_bounds[0]]
        return fit_dppack_model(
            self.dppack_class, self.X, self.y, upper=upper, lower=lower, add_bias=self.add_bias, eps=epsilon,
            gamma=self.gamma, delta=self.delta if delta is None else delta, perturbation=self.perturbation,
            kernel="Gaussian" if self.gaussian else "linear", D=self.D, weights=self.weights,
            weights_upper_bound=self.weights_upper_bound, seeds=list(seeds), return_data=return_data,
            predict_X=self.X if predict else None)

    # -- the objective in the scaled space ------------------------------------------------------------
    def loss(self):
        return LogisticLoss() if self.model == "logistic" else HuberHingeLoss(0.5)

    def Delta(self) -> float:
        """Extra curvature of objective perturbation (public), DPpack's units."""
        if self.epsilon == math.inf or self.perturbation == "output" and self.model != "linear":
            return 0.0
        if self.model == "linear":
            return kst_calibration(epsilon=self.epsilon, delta=self.delta, p=self.d).Delta
        c = 0.25 if self.model == "logistic" else 1.0
        return cms_calibration(epsilon=self.epsilon, gamma=self.gamma, c=c, n=self.n).Delta

    @property
    def d(self) -> int:
        if self.gaussian:
            return int(self.D)
        return self.X.shape[1] + int(self.add_bias)


@dataclass(frozen=True)
class FamilySummary:
    """The agreement figures of one family case (for the report table)."""

    case: str
    gap_nonprivate: float
    distance_nonprivate: float
    bound_nonprivate: float
    replay_worst_ratio: float
    replay_max_coef_gap: float
    prediction_agreement: float
    same_random_seed: str
    ks_min_p: float = math.nan
    seconds_py: float = math.nan
    seconds_r: float = math.nan


def _class_data(n: int, rng: np.random.Generator) -> Tuple[np.ndarray, np.ndarray]:
    X = rng.uniform(-1.2, 1.2, (n, 2))
    y = (X[:, 0] + 0.6 * X[:, 1] ** 2 - 0.3 + 0.4 * rng.standard_normal(n) > 0).astype(float)
    return X, y


def _regression_data(n: int, rng: np.random.Generator) -> Tuple[np.ndarray, np.ndarray]:
    X = np.column_stack([rng.uniform(-1.05, 1.0, n), rng.uniform(0.0, 3.1, n)])
    y = 1.0 + 0.25 * X[:, 0] - 0.1 * X[:, 1] + 0.3 * rng.standard_normal(n)
    return X, y


def build_family_cases(*, quick: bool, seed: int) -> List[FamilyCase]:
    """The family cases: nine in the full run; five in the quick run, smaller and with fewer fits."""
    rng = np.random.default_rng([seed, 31])
    n_c, n_g, n_l = (300, 100, 3000) if quick else (600, 300, 3000)
    X, y = _class_data(n_c, rng)
    Xg, yg = _class_data(n_g, rng)
    wg = rng.uniform(0.0, 1.3, n_g)  # some weights above W = 1: clipped by both engines
    Xl, yl = _regression_data(n_l, rng)
    cls_b: Dict[str, Any] = dict(lower=(-1.0, -1.0), upper=(1.0, 1.0))
    reg_b: Dict[str, Any] = dict(lower=(-1.0, 0.0), upper=(1.0, 3.0), target_bounds=(-1.0, 3.0))
    k_g = 40 if quick else None
    k_q = 100 if quick else None
    cases = [
        FamilyCase("svm_objective_linear", f"svmDP, objective perturbation, linear kernel, n={n_c}", "svm", X, y,
                   epsilon=1.0, gamma=1.0, **cls_b,
                   notes=("epsilon' = 1 - log(4) <= 0: the extra-curvature branch (Delta > 0)",)),
        FamilyCase("svm_output_linear", f"svmDP, output perturbation, linear kernel, n={n_c}", "svm", X, y,
                   epsilon=1.0, gamma=3.0, perturbation="output", **cls_b),
        FamilyCase("svm_objective_gaussian", f"svmDP, objective perturbation, Gaussian kernel D=8, n={n_g}", "svm",
                   Xg, yg, epsilon=2.0, gamma=2.0, kernel="gaussian", D=8, k=k_g),
        FamilyCase("svm_output_gaussian", f"svmDP, output perturbation, Gaussian kernel D=8, n={n_g}", "svm", Xg,
                   yg, epsilon=1.0, gamma=2.0, perturbation="output", kernel="gaussian", D=8, add_bias=False,
                   k=k_g),
        FamilyCase("svm_output_gaussian_weighted", f"svmDP, output perturbation, Gaussian kernel D=8, weights in "
                   f"[0, 1.3] with W=1, n={n_g}", "svm", Xg, yg, epsilon=1.0, gamma=2.0, perturbation="output",
                   kernel="gaussian", D=8, weights=wg, weights_upper_bound=1.0, k=k_g),
        FamilyCase("logistic_objective", f"LogisticRegressionDP, objective perturbation, n={n_c}", "logistic", X, y,
                   epsilon=1.0, gamma=1.0, **cls_b),
        FamilyCase("logistic_output", f"LogisticRegressionDP, output perturbation, n={n_c}", "logistic", X, y,
                   epsilon=1.0, gamma=1.0, perturbation="output", **cls_b,
                   notes=("gamma = 1: DPpack's optimiser uses gamma = 1 whatever gamma is",)),
        FamilyCase("linreg_pure", f"LinearRegressionDP, delta = 0 (epsilon-DP), n={n_l}", "linear", Xl, yl,
                   epsilon=2.0, gamma=1.0, **reg_b),
        FamilyCase("linreg_approx", f"LinearRegressionDP, delta = 1e-3 ((epsilon, delta)-DP), n={n_l}", "linear",
                   Xl, yl, epsilon=2.0, gamma=1.0, delta=1e-3, **reg_b),
    ]
    if quick:  # one case per mechanism family, small
        keep = {"svm_objective_linear", "svm_output_gaussian_weighted", "logistic_objective", "linreg_approx"}
        cases = [c if c.k is not None else replace(c, k=k_q) for c in cases if c.name in keep]
    return cases


# ----------------------------------------------------------------------------------------------- objectives

def _objective(case: FamilyCase, Z: np.ndarray, y_pm: np.ndarray, w: np.ndarray, theta: np.ndarray,
               b: Optional[np.ndarray], Delta: float) -> float:
    """F (DPpack's objective, scaled space) plus the perturbation terms: b'theta/n and the Delta term."""
    n = Z.shape[0]
    extra = 0.0 if b is None else float(b @ theta) / n
    if case.model == "linear":
        r = Z @ theta - y_pm
        return float(math.fsum(0.5 * r * r) / n + 0.5 * (case.gamma + Delta) * (theta @ theta) / n) + extra
    F = objective_value(theta, Z, y_pm, w, gamma=case.gamma, loss=case.loss())
    return F + extra + 0.5 * Delta * float(theta @ theta)


def _mu(case: FamilyCase, n: int, Delta: float) -> float:
    return (case.gamma + Delta) / n if case.model == "linear" else case.gamma / n + Delta


def _distance_check(case: FamilyCase, Z, y_pm, w, theta_py, theta_r, b, Delta) -> Tuple[float, float, float]:
    """``(gap F_R - F_py, distance, bound)`` on the (perturbed) objective; KST: DPpack's answer projected first."""
    n = Z.shape[0]
    moved = 0.0
    if case.model == "linear":
        radius = math.sqrt(Z.shape[1])
        norm = float(np.linalg.norm(theta_r))
        if norm > radius:
            projected = theta_r * (radius / norm)
            moved = float(np.linalg.norm(theta_r - projected))
            theta_r = projected
    gap = _objective(case, Z, y_pm, w, theta_r, b, Delta) - _objective(case, Z, y_pm, w, theta_py, b, Delta)
    dist = float(np.linalg.norm(theta_r - theta_py))
    mu = _mu(case, n, Delta)
    # theta_py lies within tol/mu of the exact minimiser theta* (KKT on the ball: 2 tol/mu) and
    # F(theta_py) - F(theta*) <= tol^2/(2 mu); strong convexity then bounds ||theta_R - theta*||
    err = (2.0 if case.model == "linear" else 1.0) * SOLVER_TOL / mu
    bound = math.sqrt(2.0 * (max(gap, 0.0) + SOLVER_TOL ** 2 / (2.0 * mu)) / mu) + err + moved + DIST_TOL
    return gap, dist, bound


def _recover_b(case: FamilyCase, Z, y_pm, theta, Delta) -> np.ndarray:
    """The linear term that makes ``theta`` the minimiser: ``b = -n grad`` of the unperturbed objective."""
    n = Z.shape[0]
    if case.model == "linear":
        return -(Z.T @ (Z @ theta - y_pm) + (case.gamma + Delta) * theta)
    loss = case.loss()
    g = Z.T @ (y_pm * loss.deriv(y_pm * (Z @ theta)))
    return -(g + (case.gamma + n * Delta) * theta)


# ----------------------------------------------------------------------------------------------- one case

def _py_scaled_data(case: FamilyCase, model: Any) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The data pydpowl's optimiser saw, rebuilt from the fitted public scaler/features."""
    X = case.X
    n = X.shape[0]
    if case.model == "linear":
        Xc, _ = model.scaler_.clip(X)
        if case.add_bias:
            Xc = np.column_stack([np.ones(n), Xc])
        t = (np.clip(case.y, *case.target_bounds) - model.target_shift_) / model.target_scale_
        return Xc / model.scaler_.column_scale, t, np.ones(n)
    if case.gaussian:
        Xb = np.column_stack([np.ones(n), X]) if case.add_bias else X
        Z, _ = model.scaler_.transform_checked(model.random_features_.transform(Xb))
    else:
        Z, _ = model.scaler_.transform_checked(X)
    w = np.ones(n) if case.weights is None else np.minimum(case.weights, case.weights_upper_bound)
    return Z, np.where(case.y > 0, 1.0, -1.0), w


def _features_Z(case: FamilyCase, prefilter: np.ndarray) -> np.ndarray:
    from pydpowl.engine.preprocessing import RandomFourierFeatures

    f = RandomFourierFeatures.from_prefilter(prefilter, 1.0)
    Xb = np.column_stack([np.ones(case.n), case.X]) if case.add_bias else case.X
    Z, _ = f.scaler().transform_checked(f.transform(Xb))
    return Z


def run_family_case(case: FamilyCase, *, k: int, seed: int, case_index: int, n_replay: int
                    ) -> Tuple[List[CheckRow], List[KSTest], FamilySummary]:
    """Every check of one family case (see the module docstring)."""
    from .engines import r_seeds

    rows: List[CheckRow] = []
    ks: List[KSTest] = []
    k = case.k or k
    seeds = r_seeds(seed, case_index, k)
    s0 = int(seeds[0])
    np_delta = 0.0 if case.model == "linear" else None  # DPpack cannot fit eps = Inf with delta > 0
    # 1-2. data and non-private match (same features for the Gaussian kernel: same R seed)
    exact_py = case.fit_py(math.inf, RRandom(s0), delta=np_delta)
    exact_r = case.fit_dppack(math.inf, [s0], return_data=True, delta=np_delta)
    Z, y_pm, w = _py_scaled_data(case, exact_py)
    data = exact_r.data
    yr = data.y if case.model == "linear" else (np.where(data.y > 0, 1.0, -1.0))
    wr = np.ones(case.n) if data.w is None else data.w
    diff = max(float(np.max(np.abs(Z - data.Z))), float(np.max(np.abs(y_pm - yr))), float(np.max(np.abs(w - wr))))
    rows.append(CheckRow(case.name, "same scaled data, labels, weights", "both", diff, None, f"<= {DATA_TOL:g}",
                         "PASS" if diff <= DATA_TOL else "FAIL", "max abs difference (Gaussian: same R seed)"))
    theta_py = exact_py.scaled_coef_
    theta_r = data.to_scaled(exact_r.coef, case.add_bias)[0]
    gap, dist, bound = _distance_check(case, Z, y_pm, w, theta_py, theta_r, None, 0.0)
    rows.append(CheckRow(case.name, "F(theta_py) <= F(theta_R) + 1e-12", "both", -gap, None,
                         f"F_py - F_R <= {F_TOL:g}", "PASS" if -gap <= F_TOL else "FAIL", "epsilon = inf"))
    rows.append(CheckRow(case.name, "||theta_R - theta_py|| <= sqrt(2 gap / mu) + 1e-9", "both", dist, None,
                         f"<= {bound:.3e}", "PASS" if dist <= bound else "FAIL", f"gap={gap:.3e}"))
    # 3. seeded replay
    replay = seeds[:n_replay]
    rr = case.fit_dppack(case.epsilon, replay, predict=True)
    worst_ratio, max_gap, min_agree, n_same = 0.0, 0.0, 1.0, 0
    feats_same = True
    for i, s in enumerate(replay):
        stream = RRandom(int(s))
        m = case.fit_py(case.epsilon, stream)
        n_same += int(np.array_equal(stream.get_state(), rr.random_seed[i]))
        Zs, ys, ws = _py_scaled_data(case, m)
        if case.gaussian:
            feats_same &= bool(np.array_equal(m.random_features_.prefilter, rr.prefilter[i]))
        theta_r = data.to_scaled(rr.coef[i:i + 1], case.add_bias)[0] - m.noise_
        b = None if m.linear_term_ is None or case.perturbation == "output" and case.model != "linear" else \
            m.linear_term_
        Delta = 0.0 if b is None else float(m.Delta_)
        g, dd, bd = _distance_check(case, Zs, ys, ws, m.minimiser_, theta_r, b, Delta)
        worst_ratio = max(worst_ratio, dd / bd, 0.0 if -g <= F_TOL else math.inf)
        max_gap = max(max_gap, float(np.max(np.abs(m.dppack_coeff_ - rr.coef[i]))))
        pred_py = m.predict(case.X) if case.model == "linear" else m.decision_function(case.X)
        if case.model == "linear":
            agree = float(np.mean(np.abs(pred_py - rr.predictions[i]) <= 1e-3 * (1 + np.abs(rr.predictions[i]))))
        else:  # DPpack's raw.value: the decision value (svmDP) or the probability (LogisticRegressionDP)
            cut = 0.5 if case.model == "logistic" else 0.0
            agree = float(np.mean((pred_py > 0) == (rr.predictions[i] > cut)))
        min_agree = min(min_agree, agree)
    K_r = len(replay)
    rows.append(CheckRow(case.name, "same .Random.seed after each fit (RRandom replay)", "both", float(K_r - n_same),
                         None, "= 0 differ", "PASS" if n_same == K_r and feats_same else "FAIL",
                         f"{n_same} of {K_r} seeds; random features identical: {feats_same}"))
    rows.append(CheckRow(case.name, "replayed coefficients within DPpack's optimiser bound", "both", worst_ratio, None,
                         "dist / bound <= 1", "PASS" if worst_ratio <= 1.0 else "FAIL",
                         f"perturbed objective; max |coeff gap| {max_gap:.2e}"))
    rows.append(CheckRow(case.name, f"predictions agree (>= {PREDICTION_AGREEMENT:.0%})", "both", min_agree, None,
                         f">= {PREDICTION_AGREEMENT}", "PASS" if min_agree >= PREDICTION_AGREEMENT else "FAIL",
                         "worst seed; regression: within 1e-3 relative"))
    # 4. released law
    t0 = time.perf_counter()
    py_fits = [case.fit_py(case.epsilon, np.random.default_rng([seed, case_index, i, 77])) for i in range(k)]
    t_py = time.perf_counter() - t0
    t0 = time.perf_counter()
    r_fits = case.fit_dppack(case.epsilon, seeds)
    t_r = time.perf_counter() - t0
    scaled_py = np.array([m.scaled_coef_ for m in py_fits])
    scaled_r = data.to_scaled(r_fits.coef, case.add_bias)
    if case.perturbation == "output" and case.model != "linear":
        noise_py = np.array([m.noise_ for m in py_fits])
        if case.gaussian:  # each fit has its own features: its own exact minimiser (DPpack: eps = Inf, same seed)
            ex = case.fit_dppack(math.inf, seeds)
            noise_r = scaled_r - data.to_scaled(ex.coef, case.add_bias)
        else:
            noise_r = scaled_r - theta_r_exact(data, exact_r, case)
        W = 1.0 if case.weights is None else float(case.weights_upper_bound)
        rate = case.gamma * case.epsilon / (2.0 * W)
        ks += _norm_direction_tests(case.name, "noise", noise_py, "pydpowl", rate)
        ks += _norm_direction_tests(case.name, "noise", noise_r, "DPpack", rate)
    else:
        Delta = case.Delta()
        b_py, b_r = [], []
        for i, m in enumerate(py_fits):
            Zi, yi, _ = _py_scaled_data(case, m)
            b_py.append(_recover_b(case, Zi, yi, m.scaled_coef_, Delta))
        for i in range(k):
            Zi = _features_Z(case, r_fits.prefilter[i]) if case.gaussian else data.Z
            b_r.append(_recover_b(case, Zi, yr, scaled_r[i], Delta))
        b_py, b_r = np.array(b_py), np.array(b_r)
        if case.model == "linear":
            active_py = int(np.sum(np.sum(scaled_py ** 2, axis=1) >= case.d * (1 - 1e-9)))
            active_r = int(np.sum(np.sum(scaled_r ** 2, axis=1) >= case.d * (1 - 1e-6)))
            rows.append(CheckRow(case.name, "ball constraint inactive in every private fit (b recoverable)", "both",
                                 float(active_py + active_r), None, "= 0", "PASS" if active_py + active_r == 0
                                 else "FAIL", f"pydpowl {active_py}, DPpack {active_r} of {k} fits on the sphere"))
            cal = kst_calibration(epsilon=case.epsilon, delta=case.delta, p=case.d)
            if case.delta == 0:
                ks += _norm_direction_tests(case.name, "b", b_py, "pydpowl", cal.rate)
                ks += _norm_direction_tests(case.name, "b", b_r, "DPpack", cal.rate)
            else:
                sd = math.sqrt(cal.variance)
                for eng, B in (("pydpowl", b_py), ("DPpack", b_r)):
                    for j in range(B.shape[1]):
                        res = stats.kstest(B[:, j], stats.norm(scale=sd).cdf)
                        ks.append(KSTest(case.name, f"b{j} ~ N(0, {sd:.4g}^2)", eng, float(res.statistic),
                                         float(res.pvalue), k))
        else:
            cal = cms_calibration(epsilon=case.epsilon, gamma=case.gamma, c=0.25 if case.model == "logistic" else 1.0,
                                  n=case.n)
            ks += _norm_direction_tests(case.name, "b", b_py, "pydpowl", cal.rate)
            ks += _norm_direction_tests(case.name, "b", b_r, "DPpack", cal.rate)
    for j in range(scaled_py.shape[1]):
        res = stats.ks_2samp(scaled_py[:, j], scaled_r[:, j])
        ks.append(KSTest(case.name, f"release coordinate {j}: pydpowl vs DPpack", "both", float(res.statistic),
                         float(res.pvalue), k))
    summary = FamilySummary(case.name, gap, dist, bound, worst_ratio, max_gap, min_agree, f"{n_same}/{K_r}",
                            seconds_py=t_py, seconds_r=t_r)
    return rows, ks, summary


def theta_r_exact(data, exact_r, case: FamilyCase) -> np.ndarray:
    """DPpack's own exact (eps = Inf) solution in the scaled space."""
    return data.to_scaled(exact_r.coef, case.add_bias)[0]


def _norm_direction_tests(case: str, what: str, V: np.ndarray, engine: str, rate: float) -> List[KSTest]:
    V = np.asarray(V, dtype=float)
    k, d = V.shape
    norms = np.linalg.norm(V, axis=1)
    out = []
    res = stats.kstest(norms, stats.gamma(a=d, scale=1.0 / rate).cdf)
    out.append(KSTest(case, f"norm of {what} ~ Gamma({d}, rate={rate:.4g})", engine, float(res.statistic),
                      float(res.pvalue), k))
    if d >= 2:
        law = direction_coordinate_law(d)
        U = V / norms[:, None]
        for j in range(d):
            res = stats.kstest(U[:, j], law.cdf)
            out.append(KSTest(case, f"direction u{j} of {what} ~ 2 Beta - 1", engine, float(res.statistic),
                              float(res.pvalue), k))
    return out


def family_table(summaries: List[FamilySummary]) -> str:
    """Markdown table of the agreement figures."""
    head = ["case", "F_R - F_py (eps=inf)", "distance / bound (eps=inf)", "replay dist/bound (worst)",
            "max |coeff gap| (replay)", "prediction agreement (worst)", "same .Random.seed", "min KS p",
            "K fits pydpowl (s)", "K fits DPpack (s)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in summaries:
        lines.append("| " + " | ".join([
            s.case, f"{s.gap_nonprivate:.2e}", f"{s.distance_nonprivate:.2e} / {s.bound_nonprivate:.2e}",
            f"{s.replay_worst_ratio:.3f}", f"{s.replay_max_coef_gap:.2e}", f"{s.prediction_agreement:.4f}",
            s.same_random_seed, f"{s.ks_min_p:.3g}", f"{s.seconds_py:.2f}", f"{s.seconds_r:.2f}"]) + " |")
    return "\n".join(lines)
