"""The whole private analysis (:func:`pydpowl.analysis.run_analysis`) audited as one mechanism.

The mechanism maps a dataset to everything the analysis releases: the rule's
coefficients (scaled space, as exported), the propensity model's coefficients
(when one is released), the chosen gamma, and the value release (the noisy
first- and second-moment cell sums, each divided by its public noise scale;
the value, its intervals and the report are functions of these; the cells are
listed in an order set by the released rule's recommendation at record 0's
features, a post-processing the auditor can do). Neighbouring datasets differ
in record 0 (replacement).

Three views, each an ``epsilon``-DP mechanism if the ledger is right:

The audit runs the analysis with ``composition="parallel"``: each of the two
disjoint parts spends the whole E, the most a part can spend, so it is the
sharper test (the default ``"sequential"`` split gives each part less).

* ``"whole"``: the analysis as users run it (its own random split);
* ``"evaluation"``: the split fixed in advance with record 0 in the
  evaluation part (the mechanism for that split; parallel composition says it
  is ``max(learning, evaluation)``-DP for every split, so this is a valid and
  sharper test of the value release);
* ``"learning"``: the split fixed with record 0 in the learning part.

Record 0 of D is ``(x, A = +1, B = U)`` and of D' ``(x, A = -1, B = L)``: it
moves the value release by exactly its sensitivity (from ``s = +h_+`` in a cell
of arm +1 to ``s = -h_-`` in a cell of arm -1), and flips the label and the
weight of a training record. The black-box bound
(:func:`validation.audit.blackbox.epsilon_lower_bound`) must not exceed the
ledger's total. A negative control runs the analysis with ``4 E`` while
claiming ``E`` and must be flagged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import NDArray

from pydpowl.analysis import BudgetSplit, run_analysis
from pydpowl.engine.preprocessing import FeatureScaler
from pydpowl.evaluation.private import CELLS

from .blackbox import BoundVerdict, EpsilonBound, epsilon_lower_bound

__all__ = ["AnalysisAuditConfig", "AnalysisAuditRow", "analysis_release", "audit_analysis", "default_analysis_configs",
           "quick_analysis_configs", "neighbouring_datasets", "MODES"]

MODES = ("whole", "evaluation", "learning")


@dataclass(frozen=True)
class AnalysisAuditConfig:
    """Public settings of one audited analysis."""

    name: str
    title: str
    n: int = 40
    p: int = 2
    total_epsilon: float = 1.0
    benefit_bounds: Tuple[float, float] = (0.0, 1.0)
    weights_upper_bound: float = 2.0
    propensity: Optional[float] = 0.5
    propensity_model: Optional[str] = None
    logit_bound: float = 1.0
    gamma: Optional[float] = None
    gammas: Tuple[float, ...] = (1.0, 4.0)

    @property
    def feature_bounds(self) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
        return np.zeros(self.p), np.ones(self.p)

    def run(self, X, A, B, *, seed: int, evaluation_rows=None, total_epsilon: Optional[float] = None):
        return run_analysis(
            X, A, B, feature_bounds=self.feature_bounds, benefit_bounds=self.benefit_bounds,
            weights_upper_bound=self.weights_upper_bound,
            total_epsilon=self.total_epsilon if total_epsilon is None else total_epsilon,
            propensity=self.propensity, propensity_model=self.propensity_model, logit_bound=self.logit_bound,
            gamma=self.gamma, gammas=self.gammas, evaluation_rows=evaluation_rows, random_state=seed,
            split=BudgetSplit(composition="parallel"))


def neighbouring_datasets(config: AnalysisAuditConfig, seed: int = 0):
    """``(D, D')`` as ``(X, A, B)`` triples differing in record 0 (see the module docstring)."""
    rng = np.random.default_rng(seed)
    lo, hi = config.benefit_bounds
    X = rng.uniform(0.0, 1.0, (config.n, config.p))
    A = rng.choice([-1.0, 1.0], config.n)
    A[1:3] = (-1.0, 1.0)
    B = rng.uniform(lo, hi, config.n)
    X[0] = 1.0
    A0, B0 = A.copy(), B.copy()
    A0[0], B0[0] = 1.0, hi
    A1, B1 = A.copy(), B.copy()
    A1[0], B1[0] = -1.0, lo
    return (X, A0, B0), (X.copy(), A1, B1)


def analysis_release(config: AnalysisAuditConfig, data, *, seed: int, evaluation_rows=None,
                     total_epsilon: Optional[float] = None) -> NDArray[np.float64]:
    """Everything one run of the analysis releases, as a vector (see the module docstring)."""
    res = config.run(*data, seed=seed, evaluation_rows=evaluation_rows, total_epsilon=total_epsilon)
    mc = res.model_content
    scaler = FeatureScaler.from_bounds(config.feature_bounds, config.p)
    rule = scaler.coef_to_scaled(np.r_[mc["intercept"], mc["coef"]])
    parts = [rule, [res.gamma]]
    if res.propensity_model is not None:
        parts.append(res.propensity_model.scaled_coef_)
    v = res.value
    # order the value cells by the released rule's recommendation at x_0 (known to the auditor, who built D):
    # post-processing of the release that puts record 0's cells first, whatever the rule recommends there
    d0 = 1 if mc["intercept"] + float(np.dot(data[0][0], mc["coef"])) > 0 else -1
    order = [CELLS.index((1, d0)), CELLS.index((-1, d0)), CELLS.index((1, -d0)), CELLS.index((-1, -d0))]
    parts += [(v.first_moments / v.first_scales)[order], (v.second_moments / v.second_scales)[order]]
    return np.concatenate([np.asarray(x, dtype=np.float64) for x in parts])


@dataclass(frozen=True)
class AnalysisAuditRow(BoundVerdict):
    """One black-box audit of the analysis.

    Attributes
    ----------
    config, mode : str
    claimed : float
        The ledger's total (``spent``) of the claimed analysis.
    noise_epsilon : float
        The total the noise was calibrated for (differs in the control only).
    bound : EpsilonBound
    control : bool
    """

    config: str
    mode: str
    claimed: float
    noise_epsilon: float
    bound: EpsilonBound
    control: bool = False

    @property
    def claimed_epsilon(self) -> float:
        return self.claimed

    def as_dict(self) -> Dict[str, Any]:
        b = self.bound
        return {"config": self.config, "mode": self.mode, "claimed": self.claimed, "noise_epsilon": self.noise_epsilon,
                "epsilon_lb": b.epsilon_lb, "q_count": b.q_count, "p_count": b.p_count, "n_eval": b.n_eval,
                "test": b.test.describe(), "control": self.control, "verdict": self.verdict}


def audit_statistic(R0: NDArray[np.float64], R1: NDArray[np.float64]
                    ) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Map both samples to a 1-D statistic chosen on the selection halves only.

    :func:`epsilon_lower_bound` selects its test on the first half of each
    sample and evaluates it on the second. This map uses the first halves only
    (so it is part of the selection and the bound stays valid): each coordinate
    is divided by its pooled standard deviation there, coordinates whose means
    do not differ by at least 2 standard errors are dropped (e.g. the rule when
    the replaced record evaluates), and the rest enter the Laplace
    log-likelihood ratio ``sum_k |z_k - c_k| - |z_k - c'_k|`` with the
    first-half medians ``c`` and ``c'`` (the most powerful statistic for the
    value release, whose noise is Laplace).
    """
    m = min(R0.shape[0], R1.shape[0]) // 2
    a, b = R0[:m], R1[:m]
    sd = np.sqrt(0.5 * (a.var(axis=0, ddof=1) + b.var(axis=0, ddof=1)))
    sd = np.where(sd > 0, sd, 1.0)
    t = np.abs(a.mean(axis=0) - b.mean(axis=0)) / (sd * math.sqrt(2.0 / m))
    keep = t >= 2.0
    if not keep.any():
        keep = t == t.max()
    c0, c1 = np.median(a[:, keep] / sd[keep], axis=0), np.median(b[:, keep] / sd[keep], axis=0)

    def stat(R):
        Z = R[:, keep] / sd[keep]
        return (np.abs(Z - c0).sum(axis=1) - np.abs(Z - c1).sum(axis=1))[:, None]

    return stat(R0), stat(R1)


def _evaluation_rows(config: AnalysisAuditConfig, mode: str) -> Optional[NDArray[np.int64]]:
    n_eval = config.n // 2
    if mode == "whole":
        return None
    if mode == "evaluation":
        return np.arange(n_eval)  # record 0 evaluates
    if mode == "learning":
        return np.arange(config.n - n_eval, config.n)  # record 0 learns
    raise ValueError(f"mode must be one of {list(MODES)}, got mode={mode!r}.")


def audit_analysis(config: AnalysisAuditConfig, *, mode: str, n_per_split: int, seed: int, alpha: float = 0.05,
                   control: bool = False) -> AnalysisAuditRow:
    """Draw ``2 n_per_split`` releases on D and on D' and bound epsilon (Clopper-Pearson, alpha)."""
    D, D1 = neighbouring_datasets(config, seed=seed)
    rows = _evaluation_rows(config, mode)
    noise_eps = 4.0 * config.total_epsilon if control else config.total_epsilon
    m = 2 * n_per_split
    R0 = np.array([analysis_release(config, D, seed=seed + 1 + k, evaluation_rows=rows, total_epsilon=noise_eps)
                   for k in range(m)])
    R1 = np.array([analysis_release(config, D1, seed=seed + 1 + m + k, evaluation_rows=rows,
                                    total_epsilon=noise_eps) for k in range(m)])
    claimed = config.run(*D, seed=seed, evaluation_rows=rows).ledger()["spent"]
    bound = epsilon_lower_bound(*audit_statistic(R0, R1), alpha=alpha)
    return AnalysisAuditRow(config=config.name, mode=mode, claimed=float(claimed), noise_epsilon=noise_eps,
                            bound=bound, control=control)


def default_analysis_configs() -> Tuple[AnalysisAuditConfig, ...]:
    """The configurations of the full audit."""
    return (
        AnalysisAuditConfig(name="analysis-known", title="run_analysis, n=40, p=2, known propensity 0.5, B in [0, 1], "
                            "W=2, gamma chosen privately from {1, 4}, E=1"),
        AnalysisAuditConfig(name="analysis-model", title="run_analysis, n=40, p=2, DP logistic propensity (M=1), "
                            "B in [0, 1], W=2 (weights clipped), gamma chosen privately from {1, 4}, E=1",
                            propensity=None, propensity_model="logistic"),
    )


def quick_analysis_configs() -> Tuple[AnalysisAuditConfig, ...]:
    """The reduced set of the quick audit (gamma fixed: faster)."""
    return (AnalysisAuditConfig(name="analysis-known", title="run_analysis, n=40, p=2, known propensity 0.5, "
                                "B in [0, 1], W=2, gamma=2 fixed, E=1", gamma=2.0),)


def run_analysis_audit(*, quick: bool, n_per_split: int, seed: int, alpha: float = 0.05,
                       configs: Optional[Sequence[AnalysisAuditConfig]] = None, say=lambda msg: None
                       ) -> List[AnalysisAuditRow]:
    """Every configuration in every view, then the negative control (evaluation view of the first)."""
    configs = list(configs if configs is not None else (quick_analysis_configs() if quick else
                                                        default_analysis_configs()))
    modes = ("whole", "evaluation") if quick else MODES
    out: List[AnalysisAuditRow] = []
    next_seed = seed
    for config in configs:
        for mode in modes:
            row = audit_analysis(config, mode=mode, n_per_split=n_per_split, seed=next_seed, alpha=alpha)
            out.append(row)
            say(f"[audit] {config.name} ({mode}): lower bound {row.epsilon_lb:.3f} <= ledger {row.claimed:g}? "
                f"{row.verdict}")
            next_seed += 4 * n_per_split + 1
    control = audit_analysis(configs[0], mode="evaluation", n_per_split=n_per_split, seed=next_seed, alpha=alpha,
                             control=True)
    out.append(control)
    say(f"[audit] control ({configs[0].name}, noise for 4E, claimed E): lower bound {control.epsilon_lb:.3f} "
        f"{control.verdict}")
    return out


def analysis_table(rows: Sequence[AnalysisAuditRow]) -> str:
    """Markdown table of the analysis audit."""
    lines = ["| configuration | view | ledger total (claimed) | noise for | **empirical eps lower bound** "
             "| releases in region (Q / P of N) | verdict |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        b = r.bound
        lines.append(f"| {r.config} | {r.mode}{' (control)' if r.control else ''} | {r.claimed:g} | "
                     f"{r.noise_epsilon:g} | **{r.epsilon_lb:.3f}** | {b.q_count} / {b.p_count} of {b.n_eval} | "
                     f"{r.verdict} |")
    return "\n".join(lines)
