"""The audit's multi-arm configuration: DPOWL with three arms (the angle-based rule, Frobenius-norm Delta).

A record is ``(x, B)`` in the feature box times ``[0, benefit_bound]`` and its
arm, one of -1, 0, 1 (three labels, so that the search's label flips -1 <-> 1
are arm changes). Known propensities 1/3 (C = 0). The released vector is
``vec(Theta)`` in the scaled space, ``(K - 1)(p + 1)`` numbers; the sensitivity
search measures ``||Theta_hat(D) - Theta_hat(D')||_F / Delta`` and the
black-box audit bounds the epsilon its releases reveal. DPpack has no
multi-arm counterpart (no DPpack column); the JSON export holds two-arm rules
only (not audited here).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Sequence, Tuple

import numpy as np
from numpy.typing import NDArray

from pydpowl import DPOWL, FeatureScaler
from pydpowl.estimators.multiarm import encode_arms, prepare_arm_problem, resolve_arm_propensity

from .configs import AuditConfig, Dataset

__all__ = ["MultiArmConfig", "multiarm_configs"]

ARMS = (-1.0, 0.0, 1.0)


@dataclass(frozen=True)
class MultiArmConfig(AuditConfig):
    """:class:`~validation.audit.configs.AuditConfig` for DPOWL with three arms (kind "multiarm")."""

    compare_dppack: bool = False

    #: the arms a replaced record may take in the search
    labels: Tuple[float, ...] = ARMS

    @property
    def n_arms(self) -> int:
        return len(ARMS)

    @property
    def d(self) -> int:
        return (self.n_arms - 1) * (self.p + 1)

    def random_dataset(self, rng: np.random.Generator) -> Dataset:
        base = super().random_dataset(rng)
        y = rng.choice(ARMS, size=base.n)
        y[:3] = ARMS  # every arm present
        return Dataset(base.X, y, base.v)

    def balanced_dataset(self, rng: np.random.Generator) -> Dataset:
        """Triples of identical records, one per arm, record 0 free.

        ``sum_a V_a = 0``: their gradients cancel near 0.
        """
        base = self.random_dataset(rng)
        X, y, v = base.X.copy(), base.y.copy(), base.v.copy()
        for i in range(1, self.n - 2, 3):
            X[i + 1], X[i + 2], v[i + 1], v[i + 2] = X[i], X[i], v[i], v[i]
            y[i:i + 3] = ARMS
        return Dataset(X, y, v)

    def estimator(self, epsilon: float, random_state: Any = None) -> Any:
        return DPOWL(epsilon=epsilon, gamma=self.gamma, weights_upper_bound=self.weights_upper_bound,
                     feature_bounds=self.bounds, huber_h=self.huber_h, fit_intercept=True, mechanism="output",
                     residual=False, random_state=random_state)

    def fit(self, data: Dataset, epsilon: float, random_state: Any = None, propensity: Any = None) -> Any:
        return self.estimator(epsilon, random_state).fit(data.X, data.y, data.v, 1.0 / self.n_arms)

    def minimiser(self, data: Dataset) -> Tuple[NDArray[np.float64], float]:
        model = self.fit(data, np.inf)
        return np.ravel(model.scaled_coef_).astype(np.float64), float(model.sensitivity_)

    def weights(self, data: Dataset, propensity: Any = None) -> Tuple[NDArray[np.float64], float]:
        classes, codes = encode_arms("treatment", data.y)
        prop = resolve_arm_propensity(1.0 / self.n_arms, classes, codes)
        Z, _ = FeatureScaler.from_bounds(self.bounds, self.p, True).transform_checked(data.X)
        problem = prepare_arm_problem(Z, codes, len(classes), data.v, prop.probability,
                                      weights_upper_bound=self.weights_upper_bound, weight_sensitivity=prop.C)
        return problem.weights, problem.weight_sensitivity

    def analyse(self, data: Dataset):
        theta, delta = self.minimiser(data)
        w, C = self.weights(data)
        return theta, delta, w, C

    def released_attributes(self, data: Dataset, epsilon: float, seeds: Sequence[int]
                            ) -> Dict[str, NDArray[np.float64]]:
        """``scaled_coef_`` (vec Theta), ``intercept_, coef_`` and ``summary()``, one row per seed."""
        rows: Dict[str, list] = {}
        for seed in seeds:
            model = self.fit(data, epsilon, random_state=int(seed))
            views = {"scaled_coef_": np.ravel(model.scaled_coef_),
                     "intercept_, coef_": np.c_[model.intercept_, model.coef_].ravel(),
                     "summary()": np.asarray(model.summary().coefficients)}
            for name, value in views.items():
                rows.setdefault(name, []).append(np.asarray(value, dtype=np.float64))
        return {name: np.array(v) for name, v in rows.items()}

    def dppack_releases(self, *args: Any, **kwargs: Any) -> NDArray[np.float64]:
        raise NotImplementedError("DPpack has no multi-arm counterpart.")


def multiarm_configs() -> Tuple[MultiArmConfig, ...]:
    """The multi-arm configuration of the audit."""
    return (
        MultiArmConfig(
            name="multiarm-3", title="DPOWL with 3 arms (angle-based, Theta 2 x 3), bounds x1 in [-2, 1], "
            "x2 in [0, 5], B in [0, 2], propensity 1/3, W=6, gamma=2, n=30",
            kind="multiarm", loss="huber", epsilons=(1.0,), gamma=2.0, weights_upper_bound=6.0, n=30, p=2,
            lower=(-2.0, 0.0), upper=(1.0, 5.0), benefit_bound=2.0,
            notes=("Delta bounds the Frobenius norm of Theta; arms -1, 0, 1; no DPpack column (no counterpart)",)),
    )
