"""Audit configurations: a private estimator, its public settings and its record space.

A configuration knows how to draw base datasets, how to write one record (the
one a neighbour replaces) as a point of a box, how to compute the exact
minimiser in the space where the noise is added (pydpowl, ``epsilon = inf``),
and how to draw private releases from pydpowl and from DPpack.

Two kinds:

* ``"werm"``: :class:`pydpowl.DPWeightedERM` on rows of the unit ball, labels
  in {-1, 1} and weights in [0, W]; DPpack's ``WeightedERMDP.CMS`` as reference.
  A record is ``(x, w)`` with ``x`` in the box [-1, 1]^d mapped to the ball by
  ``x / max(1, ||x||)`` (so the box corners are points of norm 1).
* ``"owl"``: :class:`pydpowl.DPOWL` with an intercept and public feature bounds;
  DPpack's ``svmDP`` as reference. A record is ``(x, B)`` with ``x`` in the
  feature box and the benefit ``B`` in ``[0, benefit_bound]``; its treatment is
  the label. Propensities are either known (0.5, C = 0) or a
  :class:`pydpowl.LogisticPropensity` fitted on the dataset itself (C > 0), which
  a neighbouring dataset must refit.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import NDArray

from pydpowl import DPOWL, DPWeightedERM, LogisticPropensity

__all__ = ["Dataset", "AuditConfig", "default_configs", "quick_configs", "bit_level_configs"]


@dataclass(frozen=True)
class Dataset:
    """One dataset: features, labels and a per-record value.

    Attributes
    ----------
    X : ndarray of shape (n, p)
        "werm": rows in the unit ball; "owl": original features.
    y : ndarray of shape (n,)
        Labels (treatments for "owl") in {-1, 1}.
    v : ndarray of shape (n,)
        "werm": weights in [0, W]; "owl": benefits in [0, benefit_bound].
    """

    X: NDArray[np.float64]
    y: NDArray[np.float64]
    v: NDArray[np.float64]

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    def with_record(self, j: int, x: NDArray[np.float64], y: float, v: float) -> "Dataset":
        """A copy with record ``j`` replaced (the neighbouring relation: replacement)."""
        X, Y, V = self.X.copy(), self.y.copy(), self.v.copy()
        X[j], Y[j], V[j] = x, y, v
        return Dataset(X, Y, V)

    def as_dict(self) -> Dict[str, Any]:
        return {"X": self.X.tolist(), "y": self.y.tolist(), "v": self.v.tolist()}


@dataclass(frozen=True)
class AuditConfig:
    """One audited configuration (see the module docstring).

    Attributes
    ----------
    name, title : str
    kind : {"werm", "owl"}
    loss : {"huber", "logistic"}
        "owl" is always Huber.
    epsilons : tuple of float
        Claimed budgets audited black-box (the neighbours do not depend on epsilon).
    gamma, weights_upper_bound, huber_h : float
    n : int
        Records per dataset.
    p : int
        "werm": dimension d; "owl": number of features (d = p + 1 with the intercept).
    lower, upper : tuple of float, optional
        "owl": public feature bounds.
    benefit_bound : float
        "owl": benefits lie in [0, benefit_bound].
    propensity : {"known", "logistic"}
        "owl": known randomisation probability 0.5 (C = 0) or a LogisticPropensity
        fitted on the private data (C from Proposition 8).
    logit_bound, ridge : float
        Public constants of the LogisticPropensity.
    """

    name: str
    title: str
    kind: str
    loss: str
    epsilons: Tuple[float, ...]
    gamma: float
    weights_upper_bound: float
    n: int
    p: int
    huber_h: float = 0.5
    lower: Optional[Tuple[float, ...]] = None
    upper: Optional[Tuple[float, ...]] = None
    benefit_bound: float = 1.0
    propensity: str = "known"
    logit_bound: float = 0.5
    ridge: float = 1.0
    notes: Tuple[str, ...] = field(default_factory=tuple)

    # -- the record space --------------------------------------------------------
    @property
    def d(self) -> int:
        """Dimension of the released vector (intercept included for "owl")."""
        return self.p + 1 if self.kind == "owl" else self.p

    @property
    def bounds(self) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
        return np.asarray(self.lower, dtype=np.float64), np.asarray(self.upper, dtype=np.float64)

    def record_box(self) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Box of the continuous part of one record, ``(x_1..x_p, v)``."""
        if self.kind == "werm":
            return np.r_[-np.ones(self.p), 0.0], np.r_[np.ones(self.p), self.weights_upper_bound]
        lo, hi = self.bounds
        return np.r_[lo, 0.0], np.r_[hi, self.benefit_bound]

    def record(self, u: NDArray[np.float64]) -> Tuple[NDArray[np.float64], float]:
        """``(x, v)`` of a point ``u`` of :meth:`record_box` (werm: mapped into the unit ball)."""
        lo, hi = self.record_box()
        u = np.clip(np.asarray(u, dtype=np.float64), lo, hi)
        x, v = u[:-1], float(u[-1])
        if self.kind == "werm":
            x = x / max(1.0, float(np.linalg.norm(x)))
        return x, v

    def corner(self, rng: np.random.Generator) -> NDArray[np.float64]:
        """A random corner of the feature box with the largest value (weight W / top benefit)."""
        lo, hi = self.record_box()
        pick = rng.integers(0, 2, size=self.p).astype(bool)
        return np.r_[np.where(pick, hi[:-1], lo[:-1]), hi[-1]]

    def uniform_point(self, rng: np.random.Generator) -> NDArray[np.float64]:
        lo, hi = self.record_box()
        return rng.uniform(lo, hi)

    # -- datasets --------------------------------------------------------------
    def random_dataset(self, rng: np.random.Generator) -> Dataset:
        """Records drawn uniformly from the record box, labels at random."""
        U = np.array([self.uniform_point(rng) for _ in range(self.n)])
        recs = [self.record(u) for u in U]
        X = np.array([r[0] for r in recs])
        v = np.array([r[1] for r in recs])
        y = rng.choice([-1.0, 1.0], size=self.n)
        y[:2] = (-1.0, 1.0)  # both labels / arms present
        return Dataset(X, y, v)

    def balanced_dataset(self, rng: np.random.Generator) -> Dataset:
        """Pairs of identical records with opposite labels (their loss gradients cancel), record 0 free.

        With known propensities the pairs carry equal weights, so near 0 the
        other records add neither gradient nor curvature: the replaced record alone
        moves the minimiser, the regime where the sensitivity bound is attained.
        """
        base = self.random_dataset(rng)
        X, y, v = base.X.copy(), base.y.copy(), base.v.copy()
        for i in range(1, self.n - 1, 2):
            X[i + 1], v[i + 1] = X[i], v[i]
            y[i], y[i + 1] = 1.0, -1.0
        return Dataset(X, y, v)

    # -- pydpowl ---------------------------------------------------------------
    def propensity_for(self, data: Dataset) -> Any:
        """The propensity argument of DPOWL for this dataset (a model refitted on it when "logistic")."""
        if self.propensity == "known":
            return 0.5
        return LogisticPropensity(feature_bounds=self.bounds, benefit_bound=self.benefit_bound,
                                  logit_bound=self.logit_bound, ridge=self.ridge).fit(data.X, data.y)

    def estimator(self, epsilon: float, random_state: Any = None) -> Any:
        if self.kind == "werm":
            return DPWeightedERM(epsilon=epsilon, gamma=self.gamma, weights_upper_bound=self.weights_upper_bound,
                                 loss=self.loss, huber_h=self.huber_h, random_state=random_state)
        return DPOWL(epsilon=epsilon, gamma=self.gamma, weights_upper_bound=self.weights_upper_bound,
                     feature_bounds=self.bounds, huber_h=self.huber_h, fit_intercept=True,
                     random_state=random_state)

    def fit(self, data: Dataset, epsilon: float, random_state: Any = None, propensity: Any = None) -> Any:
        """Fit the pydpowl estimator on ``data`` (``propensity`` reused when given)."""
        model = self.estimator(epsilon, random_state)
        if self.kind == "werm":
            return model.fit(data.X, data.y, data.v)
        prop = self.propensity_for(data) if propensity is None else propensity
        return model.fit(data.X, data.y, data.v, prop)

    def minimiser(self, data: Dataset) -> Tuple[NDArray[np.float64], float]:
        """The exact minimiser in the noise space (``epsilon = inf``) and the sensitivity Delta."""
        model = self.fit(data, np.inf)
        theta = model.coef_ if self.kind == "werm" else model.scaled_coef_
        return np.array(theta, dtype=np.float64), float(model.sensitivity_)

    def weights(self, data: Dataset, propensity: Any = None) -> Tuple[NDArray[np.float64], float]:
        """The weights the optimiser sees and C (werm: the given weights, C = 0)."""
        if self.kind == "werm":
            return data.v.copy(), 0.0
        model = self.estimator(np.inf)
        prop = self.propensity_for(data) if propensity is None else propensity
        _, _, w, C, _, _ = model.prepare(data.X, data.y, data.v, prop)
        return w, float(C)

    def analyse(self, data: Dataset) -> Tuple[NDArray[np.float64], float, NDArray[np.float64], float]:
        """``(theta_hat, Delta, weights, C)`` with one propensity fit."""
        prop = None if self.kind == "werm" else self.propensity_for(data)
        model = self.fit(data, np.inf, propensity=prop)
        theta = model.coef_ if self.kind == "werm" else model.scaled_coef_
        w, C = self.weights(data, prop)
        return np.array(theta, dtype=np.float64), float(model.sensitivity_), w, C

    def naive_sensitivity(self) -> float:
        """``2W / gamma``: the sensitivity if the weights of the other records could not move (C = 0)."""
        return 2.0 * self.weights_upper_bound / self.gamma

    def releases(self, data: Dataset, epsilon: float, seeds: Sequence[int]) -> NDArray[np.float64]:
        """One pydpowl release per seed in the noise space (``coef_`` / ``scaled_coef_``), through ``fit``."""
        return self.released_attributes(data, epsilon, seeds)[self.noise_space_attribute]

    @property
    def noise_space_attribute(self) -> str:
        """Name of the released attribute that lives in the space where the noise is added."""
        return "coef_" if self.kind == "werm" else "scaled_coef_"

    def released_attributes(self, data: Dataset, epsilon: float, seeds: Sequence[int]
                            ) -> Dict[str, NDArray[np.float64]]:
        """Every number pydpowl releases, one row per seed, by attribute.

        DPWeightedERM: ``coef_`` and ``summary()``'s coefficients. DPOWL:
        ``scaled_coef_``, ``intercept_, coef_``, ``summary()``'s coefficients
        and the coefficients of the JSON export (``model_io``), parsed back from
        the JSON text.
        """
        import json

        from pydpowl.model_io import model_to_dict

        prop = None if self.kind == "werm" else self.propensity_for(data)
        rows: Dict[str, list] = {}
        for seed in seeds:
            model = self.fit(data, epsilon, random_state=int(seed), propensity=prop)
            views = {self.noise_space_attribute: model.coef_ if self.kind == "werm" else model.scaled_coef_,
                     "summary()": np.asarray(model.summary().coefficients)}
            if self.kind == "owl":
                views["intercept_, coef_"] = np.r_[model.intercept_, model.coef_]
                if np.isfinite(epsilon):
                    content = json.loads(json.dumps(model_to_dict(model)))
                    views["JSON export"] = np.r_[content["intercept"], content["coef"]]
            for name, value in views.items():
                rows.setdefault(name, []).append(np.asarray(value, dtype=np.float64))
        return {name: np.array(v) for name, v in rows.items()}

    # -- DPpack ----------------------------------------------------------------
    def dppack_epsilon(self, data: Dataset, epsilon: float) -> float:
        """The ``eps`` given to DPpack so its noise law equals pydpowl's.

        DPpack's sensitivity is ``2W / gamma`` (C = 0); with a propensity model
        fitted on the data pydpowl uses ``(C + 2W) / gamma``, so DPpack is run at
        ``epsilon * 2W / (C + 2W)``, which gives the same Gamma rate.
        """
        if self.kind == "werm" or self.propensity == "known" or epsilon == np.inf:
            return epsilon
        _, C = self.weights(data)
        return epsilon * 2.0 * self.weights_upper_bound / (C + 2.0 * self.weights_upper_bound)

    def dppack_releases(self, data: Dataset, epsilon: float, seeds: Sequence[int], *,
                        as_released: bool = False) -> NDArray[np.float64]:
        """One DPpack release per R seed, all in one R call.

        Rows are in the noise space (``svmDP``: DPpack's ``coeff`` times its scales,
        computed in R); with ``as_released`` they are what DPpack releases,
        ``coeff`` (the original space for ``svmDP``).
        """
        from r_reference import fit_svmdp, fit_weighted_erm_cms

        eps = self.dppack_epsilon(data, epsilon)
        if self.kind == "werm":
            fits = fit_weighted_erm_cms(data.X, data.y, data.v, epsilon=eps, gamma=self.gamma,
                                        weights_upper_bound=self.weights_upper_bound, loss=self.loss,
                                        huber_h=self.huber_h, seeds=list(seeds))
            return fits.coef if as_released else fits.scaled_coef
        prop = self.propensity_for(data)
        if isinstance(prop, LogisticPropensity):
            p_received, _ = prop.probability_of(data.X, data.y)
        else:
            p_received = np.full(data.n, prop)
        fits = fit_svmdp(data.X, data.y, data.v / p_received, epsilon=eps, gamma=self.gamma,
                         weights_upper_bound=self.weights_upper_bound, feature_bounds=self.bounds,
                         huber_h=self.huber_h, fit_intercept=True, seeds=list(seeds))
        return fits.coef if as_released else fits.scaled_coef

    def with_epsilons(self, *epsilons: float) -> "AuditConfig":
        return replace(self, epsilons=tuple(float(e) for e in epsilons))


def default_configs() -> Tuple[AuditConfig, ...]:
    """The configurations of the full audit."""
    return (
        AuditConfig(
            name="werm-huber", title="DPWeightedERM, Huber hinge (h=0.5), d=2, n=20, gamma=1, W=1",
            kind="werm", loss="huber", epsilons=(0.5, 1.0, 2.0, 4.0), gamma=1.0, weights_upper_bound=1.0,
            n=20, p=2),
        AuditConfig(
            name="werm-huber-strong", title="DPWeightedERM, Huber hinge, d=3, n=20, gamma=20, W=1 (linear zone)",
            kind="werm", loss="huber", epsilons=(1.0,), gamma=20.0, weights_upper_bound=1.0, n=20, p=3),
        AuditConfig(
            name="werm-logistic", title="DPWeightedERM, logistic loss, d=2, n=20, gamma=1, W=1",
            kind="werm", loss="logistic", epsilons=(1.0,), gamma=1.0, weights_upper_bound=1.0, n=20, p=2),
        AuditConfig(
            name="owl-intercept", title="DPOWL, intercept, bounds x1 in [-2, 1], x2 in [0, 5], B in [0, 2], "
            "propensity 0.5, W=3 (weights clipped), gamma=2, n=30",
            kind="owl", loss="huber", epsilons=(1.0, 3.0), gamma=2.0, weights_upper_bound=3.0, n=30, p=2,
            lower=(-2.0, 0.0), upper=(1.0, 5.0), benefit_bound=2.0),
        AuditConfig(
            name="owl-propensity", title="DPOWL, intercept, bounds x1 in [-1, 1], x2 in [0, 2], B in [0, 1], "
            "LogisticPropensity fitted on the private data (ridge=1, M=0.5), W=2.5, gamma=1, n=20",
            kind="owl", loss="huber", epsilons=(1.0,), gamma=1.0, weights_upper_bound=2.5, n=20, p=2,
            lower=(-1.0, 0.0), upper=(1.0, 2.0), benefit_bound=1.0, propensity="logistic",
            logit_bound=0.5, ridge=1.0,
            notes=("C > 0 from Proposition 8; the neighbour refits the propensity model; DPpack is run at "
                   "eps * 2W/(C + 2W), which gives the same noise law",)),
    )


def quick_configs() -> Tuple[AuditConfig, ...]:
    """A reduced set for the test suite and ``--quick`` (one epsilon each)."""
    by_name = {c.name: c for c in default_configs()}
    return (by_name["werm-huber"].with_epsilons(1.0), by_name["werm-logistic"],
            by_name["owl-intercept"].with_epsilons(1.0), by_name["owl-propensity"])


def bit_level_configs() -> Tuple[AuditConfig, ...]:
    """Extra configurations audited at the bit level only (full run).

    With three features and an intercept, d = 4 and the scaling divides by
    sqrt(d) = 2 and by column scales 1: exact in binary, so the released
    original-space intercept and coefficients (attributes) keep the
    floating-point grid of the scaled release.
    """
    return (
        AuditConfig(
            name="owl-3-features", title="DPOWL, intercept, 3 features in [-1, 1] (scaling exact in binary), "
            "B in [0, 2], propensity 0.5, W=3, gamma=2, n=30",
            kind="owl", loss="huber", epsilons=(1.0,), gamma=2.0, weights_upper_bound=3.0, n=30, p=3,
            lower=(-1.0, -1.0, -1.0), upper=(1.0, 1.0, 1.0), benefit_bound=2.0),
    )
