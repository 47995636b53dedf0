"""The multi-stage regime (:class:`pydpowl.DPMultiStageOWL`) audited black-box as one mechanism.

The mechanism maps a dataset to everything the regime releases: each stage's
rule (scaled space, stage 1 first) and each stage's released mean baseline
(residual weights), as one vector. Neighbouring datasets differ in subject 0
(replacement): at the corner ``x = (1, ..., 1)`` of the feature box, with the
largest rewards, it received ``+1`` at both stages in D and ``-1`` in D'. Its
residual is then the largest at every stage (clipped at ``+R_k``) and its
weight the bound, so the label of its row flips at each stage where it
follows the later released rule, with the largest weight. (Flipping the
rewards too would cancel: the label is ``A sign(r)``.) The black-box bound
(:func:`validation.audit.blackbox.epsilon_lower_bound`, on the statistic of
:func:`validation.audit.analysis.audit_statistic`) must not exceed the
ledger's total (``privacy_spent_[0]``: sequential composition over the 2T
releases); a negative control releases with noise for ``4 E`` while claiming
``E`` and must be flagged. It runs on the output-perturbation configuration:
the projection statistic is weaker against the objective-perturbation regime
(its control reached 0.89 for a claimed 1 with 1000 releases per split, the
output one's 1.88 and 1.96 on two seeds), whose sharp audit is the density
argument of :mod:`validation.audit.objective` for each stage's mechanism.

Small datasets (n = 10, one feature) make one subject's influence visible;
the output configuration's gamma = 50 keeps the minimiser in the Huber
hinge's linear zone, where the replaced subject moves it by nearly Delta.

Two configurations: the default (weighted objective perturbation with residual
weights at each stage, docs/privacy_audit.md, "Multi-stage rules") and
``mechanism="output"`` (output perturbation with the classic BOWL weights).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pydpowl import DPMultiStageOWL

from .analysis import AnalysisAuditRow, audit_statistic
from .blackbox import epsilon_lower_bound

__all__ = ["MultiStageAuditConfig", "neighbouring_regime_datasets", "regime_release", "audit_regime",
           "multistage_audit_configs", "run_multistage_audit"]


@dataclass(frozen=True)
class MultiStageAuditConfig:
    """Public settings of one audited regime (two stages, known propensities 1/2)."""

    name: str
    title: str
    n: int = 10
    p: int = 1
    total_epsilon: float = 1.0
    mechanism: str = "auto"
    gamma: Any = "auto"

    @property
    def feature_bounds(self) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
        return np.zeros(self.p), np.ones(self.p)

    def fit(self, data, *, seed: int, total_epsilon: Optional[float] = None) -> DPMultiStageOWL:
        X, A, R = data
        settings = dict(mechanism="output", residual=False) if self.mechanism == "output" else {}
        return DPMultiStageOWL(
            epsilon=self.total_epsilon if total_epsilon is None else total_epsilon, gamma=self.gamma,
            feature_bounds=self.feature_bounds, reward_bounds=[(0.0, 1.0), (0.0, 1.0)], random_state=seed,
            **settings).fit(X, A, R, [0.5, 0.5])


def neighbouring_regime_datasets(config: MultiStageAuditConfig, seed: int = 0):
    """``(D, D')`` as ``(X, [A1, A2], [R1, R2])`` differing in subject 0 (see the module docstring)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, (config.n, config.p))
    A = [rng.choice([-1.0, 1.0], config.n) for _ in range(2)]
    for a in A:
        a[1:3] = (-1.0, 1.0)  # both arms present at every stage, whatever subject 0 received
    R = [rng.uniform(0.0, 1.0, config.n) for _ in range(2)]
    X[0] = 1.0
    D = (X, [a.copy() for a in A], [r.copy() for r in R])
    D1 = (X.copy(), [a.copy() for a in A], [r.copy() for r in R])
    for k in range(2):
        D[1][k][0], D[2][k][0] = 1.0, 1.0
        D1[1][k][0], D1[2][k][0] = -1.0, 1.0
    return D, D1


def regime_release(config: MultiStageAuditConfig, data, *, seed: int,
                   total_epsilon: Optional[float] = None) -> NDArray[np.float64]:
    """Everything one fit releases, as a vector: the stages' scaled rules, then the released baselines."""
    model = config.fit(data, seed=seed, total_epsilon=total_epsilon)
    parts: List[ArrayLike] = [np.ravel(s.rule.scaled_coef) for s in model.stages_]  # arrays, then [baseline]s
    parts += [[s.baseline] for s in model.stages_ if s.baseline is not None]
    return np.concatenate([np.asarray(x, dtype=np.float64) for x in parts])


def audit_regime(config: MultiStageAuditConfig, *, n_per_split: int, seed: int, alpha: float = 0.05,
                 control: bool = False) -> AnalysisAuditRow:
    """Draw ``2 n_per_split`` releases on D and on D' and bound epsilon (Clopper-Pearson, alpha)."""
    D, D1 = neighbouring_regime_datasets(config, seed=seed)
    noise_eps = 4.0 * config.total_epsilon if control else config.total_epsilon
    m = 2 * n_per_split
    R0 = np.array([regime_release(config, D, seed=seed + 1 + k, total_epsilon=noise_eps) for k in range(m)])
    R1 = np.array([regime_release(config, D1, seed=seed + 1 + m + k, total_epsilon=noise_eps) for k in range(m)])
    claimed = config.fit(D, seed=seed).privacy_spent_[0]
    bound = epsilon_lower_bound(*audit_statistic(R0, R1), alpha=alpha)
    return AnalysisAuditRow(config=config.name, mode="whole regime", claimed=float(claimed),
                            noise_epsilon=noise_eps, bound=bound, control=control)


def multistage_audit_configs() -> Tuple[MultiStageAuditConfig, ...]:
    """The default regime and the output-perturbation one (both in the quick and the full audit)."""
    return (
        MultiStageAuditConfig(name="multistage-2", title="DPMultiStageOWL, 2 stages, n=10, p=1, propensities 1/2, "
                              "rewards in [0, 1] per stage, defaults (objective perturbation, residual weights, "
                              "gamma auto), E=1 split equally"),
        MultiStageAuditConfig(name="multistage-2-output", title="DPMultiStageOWL, 2 stages, n=10, p=1, "
                              "mechanism='output' (classic BOWL weights), gamma=50, E=1 split equally",
                              mechanism="output", gamma=50.0),
    )


def run_multistage_audit(*, n_per_split: int, seed: int, alpha: float = 0.05,
                         configs: Optional[Sequence[MultiStageAuditConfig]] = None, say=lambda msg: None
                         ) -> List[AnalysisAuditRow]:
    """Every configuration, then the negative control (the output configuration with noise for 4E; see the
    module docstring)."""
    configs = list(configs if configs is not None else multistage_audit_configs())
    out: List[AnalysisAuditRow] = []
    next_seed = seed
    for config in configs:
        row = audit_regime(config, n_per_split=n_per_split, seed=next_seed, alpha=alpha)
        out.append(row)
        say(f"[audit] {config.name}: lower bound {row.epsilon_lb:.3f} <= ledger {row.claimed:g}? {row.verdict}")
        next_seed += 4 * n_per_split + 1
    target = next((c for c in configs if c.mechanism == "output"), configs[0])
    control = audit_regime(target, n_per_split=n_per_split, seed=next_seed, alpha=alpha, control=True)
    out.append(control)
    say(f"[audit] control ({target.name}, noise for 4E, claimed E): lower bound {control.epsilon_lb:.3f} "
        f"{control.verdict}")
    return out
