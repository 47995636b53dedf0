"""Audit configurations for DPpack's ERM family: DPSVM, DPLogisticRegression, DPLinearRegression.

A :class:`FamilyAuditConfig` has the interface of
:class:`~validation.audit.configs.AuditConfig` that the sensitivity search and
the black-box audit use. Records are ``(x, v)`` with ``x`` in the public box
``[-1, 1]^p`` (the estimators' bounds, intercept added) and ``v`` the weight
(weighted DPSVM, in ``[0, W]``), or 1; a record's label is ``y`` in {-1, 1}
(passed to the estimators as 0/1), or, for linear regression, its target in
the public target bounds.

* Output perturbation (DPLogisticRegression, DPSVM with the Gaussian kernel
  and weights): the minimiser moves by at most ``Delta`` between neighbours;
  the sensitivity search applies (for the Gaussian kernel with the random
  features fixed: the bound must hold for every draw of them).
* Objective perturbation (DPSVM, DPLogisticRegression, DPLinearRegression):
  no sensitivity to search; the black-box test runs on a neighbouring pair
  built to move the objective's gradient most (a balanced base and a record
  at a corner of the box whose label, or target, flips), and for
  ``delta > 0`` bounds epsilon for the (epsilon, delta) claim.

pydpowl's releases are the default (proven) ones; DPpack's are its own.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import NDArray

from pydpowl import DPLinearRegression, DPLogisticRegression, DPSVM

from .configs import Dataset, RecordBoxSearch

__all__ = ["FamilyAuditConfig", "family_configs", "quick_family_configs"]


@dataclass(frozen=True)
class FamilyAuditConfig(RecordBoxSearch):
    """One audited configuration of the family (see the module docstring).

    Attributes
    ----------
    name, title : str
    model : {"svm", "logistic", "linear"}
    perturbation : {"objective", "output"}
    epsilons : tuple of float
    gamma : float
    n : int
        Records per dataset.
    p : int
        Features (an intercept is added).
    kernel : {"linear", "gaussian"}
    D : int or None
    weights_upper_bound : float or None
        Weighted DPSVM (output perturbation): weights in [0, W].
    delta : float
        DPLinearRegression's delta.
    target_bounds : tuple of float
    compare_dppack : bool
        Run the black-box audit on DPpack's class too (every family member has one).
    """

    name: str
    title: str
    model: str
    perturbation: str
    epsilons: Tuple[float, ...]
    gamma: float
    n: int
    p: int
    kernel: str = "linear"
    D: Optional[int] = None
    weights_upper_bound: Optional[float] = None
    delta: float = 0.0
    target_bounds: Tuple[float, float] = (-1.0, 1.0)
    notes: Tuple[str, ...] = field(default_factory=tuple)
    kind: str = "family"
    propensity: str = "known"
    huber_h: float = 0.5
    compare_dppack: bool = True
    #: releases per dataset and half at most (DPpack's R6 fits cost about 5 ms each at n = 20)
    max_releases_per_split: int = 4000

    #: seed of the random features held fixed in the sensitivity analysis
    FEATURE_SEED = 12345

    @property
    def conditional(self) -> bool:
        """False: every family release rests on public constants only (no assumed data bound)."""
        return False

    @property
    def sensitivity_applies(self) -> bool:
        return self.perturbation == "output" and self.model != "linear"

    @property
    def d(self) -> int:
        if self.kernel != "gaussian":
            return self.p + 1
        if self.D is None:
            raise ValueError("the Gaussian kernel needs D (the number of random features).")
        return int(self.D)

    @property
    def bounds(self) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
        return -np.ones(self.p), np.ones(self.p)

    # -- the record space --------------------------------------------------------
    def record_box(self) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
        top = 1.0 if self.weights_upper_bound is None else self.weights_upper_bound
        bottom = 1.0 if self.weights_upper_bound is None else 0.0
        return np.r_[-np.ones(self.p), bottom], np.r_[np.ones(self.p), top]

    def record(self, u: NDArray[np.float64]) -> Tuple[NDArray[np.float64], float]:
        lo, hi = self.record_box()
        u = np.clip(np.asarray(u, dtype=np.float64), lo, hi)
        return u[:-1], float(u[-1])

    def _labels(self, rng: np.random.Generator) -> NDArray[np.float64]:
        if self.model == "linear":
            return rng.uniform(*self.target_bounds, size=self.n)
        y = rng.choice([-1.0, 1.0], size=self.n)
        y[:2] = (-1.0, 1.0)
        return y

    def random_dataset(self, rng: np.random.Generator) -> Dataset:
        U = np.array([self.uniform_point(rng) for _ in range(self.n)])
        return Dataset(U[:, :-1].copy(), self._labels(rng), U[:, -1].copy())

    def balanced_dataset(self, rng: np.random.Generator) -> Dataset:
        """Pairs of identical records with opposite labels (targets), record 0 free."""
        base = self.random_dataset(rng)
        X, y, v = base.X.copy(), base.y.copy(), base.v.copy()
        lo_t, hi_t = self.target_bounds
        for i in range(1, self.n - 1, 2):
            X[i + 1], v[i + 1] = X[i], v[i]
            if self.model == "linear":
                y[i], y[i + 1] = hi_t, lo_t
            else:
                y[i], y[i + 1] = 1.0, -1.0
        return Dataset(X, y, v)

    def audit_pair(self, seed: int) -> Tuple[Dataset, Dataset]:
        """A neighbouring pair for objective perturbation: balanced base, record 0 at a corner, label flipped."""
        rng = np.random.default_rng([seed, 5])
        D = self.balanced_dataset(rng)
        x, v = self.record(self.corner(rng))
        if self.model == "linear":
            y0, y1 = self.target_bounds[1], self.target_bounds[0]
        else:
            y0, y1 = 1.0, -1.0
        D = D.with_record(0, x, y0, v)
        return D, D.with_record(0, x, y1, v)

    # -- pydpowl ---------------------------------------------------------------
    def estimator(self, epsilon: float, random_state: Any = None) -> Any:
        common = dict(epsilon=epsilon, gamma=self.gamma, fit_intercept=True, random_state=random_state)
        if self.model == "svm":
            gauss = self.kernel == "gaussian"
            return DPSVM(perturbation=self.perturbation, kernel=self.kernel, n_components=self.D,
                         feature_bounds=None if gauss else self.bounds, weights_upper_bound=self.weights_upper_bound,
                         **common)
        if self.model == "logistic":
            return DPLogisticRegression(perturbation=self.perturbation, feature_bounds=self.bounds, **common)
        return DPLinearRegression(delta=self.delta, feature_bounds=self.bounds, target_bounds=self.target_bounds,
                                  **common)

    def fit(self, data: Dataset, epsilon: float, random_state: Any = None, propensity: Any = None) -> Any:
        model = self.estimator(epsilon, random_state)
        if self.model == "linear":
            return model.fit(data.X, data.y)
        y01 = (data.y + 1.0) / 2.0
        if self.model == "svm" and self.weights_upper_bound is not None:
            return model.fit(data.X, y01, data.v)
        return model.fit(data.X, y01)

    def minimiser(self, data: Dataset) -> Tuple[NDArray[np.float64], float]:
        """The exact minimiser (scaled space; fixed random features) and the sensitivity (nan: objective)."""
        cfg = replace(self, delta=0.0)  # epsilon = inf needs delta = 0 (DPpack's rule)
        model = cfg.fit(data, math.inf, random_state=self.FEATURE_SEED)
        sens = float(getattr(model, "sensitivity_", math.nan))
        return np.array(model.scaled_coef_, dtype=np.float64), sens

    def weights(self, data: Dataset, propensity: Any = None) -> Tuple[NDArray[np.float64], float]:
        if self.weights_upper_bound is None:
            return np.ones(data.n), 0.0
        return np.minimum(data.v, self.weights_upper_bound), 0.0

    def analyse(self, data: Dataset):
        theta, sens = self.minimiser(data)
        w, C = self.weights(data)
        return theta, sens, w, C

    def naive_sensitivity(self) -> float:
        W = 1.0 if self.weights_upper_bound is None else self.weights_upper_bound
        return 2.0 * W / self.gamma

    def releases(self, data: Dataset, epsilon: float, seeds: Sequence[int], *,
                 all_attributes: bool = False) -> NDArray[np.float64]:
        """One pydpowl release per seed (scaled space), through the public ``fit``."""
        return np.array([self.fit(data, epsilon, random_state=int(s)).scaled_coef_ for s in seeds])

    # -- DPpack ----------------------------------------------------------------
    def dppack_releases(self, data: Dataset, epsilon: float, seeds: Sequence[int], *,
                        all_attributes: bool = False) -> NDArray[np.float64]:
        """One DPpack release per R seed, in DPpack's scaled space (``coeff`` with ``all_attributes``)."""
        from r_reference.dppack_family import fit_dppack_model

        cls = {"svm": "svmDP", "logistic": "LogisticRegressionDP", "linear": "LinearRegressionDP"}[self.model]
        upper, lower = [1.0] * self.p, [-1.0] * self.p
        y = data.y
        if self.model == "linear":
            upper, lower = upper + [self.target_bounds[1]], lower + [self.target_bounds[0]]
        else:
            y = (data.y + 1.0) / 2.0
        weighted = self.model == "svm" and self.weights_upper_bound is not None
        delta = 0.0 if epsilon == math.inf else self.delta
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits = fit_dppack_model(cls, data.X, y, upper=upper, lower=lower, add_bias=True, eps=epsilon,
                                    gamma=self.gamma, delta=delta, perturbation=self.perturbation,
                                    kernel="Gaussian" if self.kernel == "gaussian" else "linear", D=self.D,
                                    weights=data.v if weighted else None,
                                    weights_upper_bound=self.weights_upper_bound, seeds=list(seeds),
                                    return_data=not all_attributes)
        if all_attributes:
            return fits.coef
        if fits.data is None:  # asked for with return_data=True
            raise RuntimeError("the DPpack fits returned no data to scale the coefficients with.")
        return fits.data.to_scaled(fits.coef, True)

    # -- the audit statistic of objective perturbation -----------------------------------------------------
    @property
    def maps_releases(self) -> bool:
        """True when :meth:`audit_map` applies (objective perturbation, linear kernel)."""
        return self.perturbation == "objective" and self.kernel == "linear"

    def _scaled_rows(self, data: Dataset) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
        X = np.column_stack([np.ones(data.n), np.clip(data.X, -1.0, 1.0)])
        if self.model == "linear":
            d = X.shape[1]
            lo, hi = self.target_bounds
            shift, scale = lo + (hi - lo) / 2.0, (hi - lo) / (2.0 * d)
            return X, (np.clip(data.y, lo, hi) - shift) / scale
        return X / np.sqrt(X.shape[1]), data.y

    def _linear_term(self, Z, y, theta: NDArray[np.float64], epsilon: float) -> NDArray[np.float64]:
        """``b`` that makes ``theta`` (rows) the minimiser of the perturbed objective on (Z, y)."""
        from pydpowl.engine.losses import HuberHingeLoss, LogisticLoss
        from pydpowl.engine.mechanisms import cms_calibration, kst_calibration

        n = Z.shape[0]
        if self.model == "linear":
            Delta = kst_calibration(epsilon=epsilon, delta=self.delta, p=Z.shape[1]).Delta
            return -((Z @ theta.T - y[:, None]).T @ Z + (self.gamma + Delta) * theta)
        loss = LogisticLoss() if self.model == "logistic" else HuberHingeLoss(self.huber_h)
        c = 0.25 if self.model == "logistic" else 1.0 / (2.0 * self.huber_h)
        Delta = cms_calibration(epsilon=epsilon, gamma=self.gamma, c=c, n=n).Delta
        M = y[:, None] * (Z @ theta.T)  # margins, one column per release
        return -((y[:, None] * loss.deriv(M)).T @ Z + (self.gamma + n * Delta) * theta)

    def audit_map(self, D: Dataset, D1: Dataset, releases: NDArray[np.float64], epsilon: float) -> NDArray[np.float64]:
        """``||b_D(theta)|| - ||b_D'(theta)||`` per release: the log-density ratio of objective perturbation
        up to its constant and the Jacobian term (the auditor knows D and D'; a fixed map of the release)."""
        R = np.atleast_2d(np.asarray(releases, dtype=np.float64))
        Z0, y0 = self._scaled_rows(D)
        Z1, y1 = self._scaled_rows(D1)
        b0 = self._linear_term(Z0, y0, R, epsilon)
        b1 = self._linear_term(Z1, y1, R, epsilon)
        return (np.linalg.norm(b0, axis=1) - np.linalg.norm(b1, axis=1))[:, None]

    def with_epsilons(self, *epsilons: float) -> "FamilyAuditConfig":
        return replace(self, epsilons=tuple(float(e) for e in epsilons))


def family_configs() -> Tuple[FamilyAuditConfig, ...]:
    """One configuration per new mechanism."""
    return (
        FamilyAuditConfig("svm-objective", "DPSVM, objective perturbation, linear kernel, intercept, x in [-1, 1]^2, "
                          "gamma=1, n=20", "svm", "objective", (1.0, 3.0), gamma=1.0, n=20, p=2,
                          notes=("epsilon = 1 takes the extra-curvature branch (Delta > 0)",)),
        FamilyAuditConfig("svm-gaussian-objective", "DPSVM, objective perturbation, Gaussian kernel D=4, gamma=2, "
                          "n=20", "svm", "objective", (1.0,), gamma=2.0, n=20, p=2, kernel="gaussian", D=4),
        FamilyAuditConfig("svm-gaussian-output-weighted", "DPSVM, output perturbation, Gaussian kernel D=4, weights "
                          "in [0, 2], W=2, gamma=2, n=20", "svm", "output", (1.0,), gamma=2.0, n=20, p=2,
                          kernel="gaussian", D=4, weights_upper_bound=2.0),
        FamilyAuditConfig("logistic-objective", "DPLogisticRegression, objective perturbation, gamma=1, n=20",
                          "logistic", "objective", (1.0,), gamma=1.0, n=20, p=2),
        FamilyAuditConfig("logistic-output", "DPLogisticRegression, output perturbation, gamma=1, n=20", "logistic",
                          "output", (1.0,), gamma=1.0, n=20, p=2,
                          notes=("gamma = 1, where DPpack's optimiser and its noise agree",)),
        FamilyAuditConfig("linreg-pure", "DPLinearRegression, delta = 0, gamma=1, n=20, y in [-1, 1]", "linear",
                          "objective", (1.0,), gamma=1.0, n=20, p=2),
        FamilyAuditConfig("linreg-approx", "DPLinearRegression, delta = 1e-3 ((epsilon, delta) bound), gamma=1, n=20",
                          "linear", "objective", (1.0,), gamma=1.0, n=20, p=2, delta=1e-3),
    )


def quick_family_configs() -> Tuple[FamilyAuditConfig, ...]:
    """The reduced set of ``--quick`` (one epsilon each)."""
    by_name = {c.name: c for c in family_configs()}
    return (by_name["svm-objective"].with_epsilons(1.0), by_name["svm-gaussian-output-weighted"],
            by_name["logistic-output"], by_name["linreg-approx"])
