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
  feature box and the benefit ``B`` in ``benefit_range`` (default
  ``[0, benefit_bound]``); its treatment is the label. Propensities are either
  known (0.5, C = 0) or a :class:`pydpowl.LogisticPropensity` fitted on private
  data (C > 0), which a neighbouring dataset must refit: on the OWL records
  themselves, or (``n_propensity > 0``) on the first ``n_propensity`` records of
  the dataset, a separate private sample whose model weights the other ``n``.

Configurations with ``assume_hessian_bound`` take a Hessian bound the ridge does
not guarantee: their guarantee is conditional on it, so their search is
reported but not part of the verdict, and the audit checks instead that the
bound is refused without the opt-in.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import NDArray

from pydpowl import DPOWL, DPWeightedERM, LogisticPropensity, PrivacyLeakWarning, prepare_owl

__all__ = ["Dataset", "AuditConfig", "default_configs", "quick_configs", "bit_level_configs"]

#: half-width of the record box of "werm" configurations with clip_rows (rows of norm up to 3 sqrt(p))
_CLIP_ROWS_BOX = 3.0


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


class RecordBoxSearch:
    """Candidate records for the search: corners and uniform points of ``record_box()``.

    A record is ``(x_1, ..., x_p, v)``: features, then the value coordinate
    (weight, benefit or label), whose largest value every corner takes.
    """

    p: int

    def record_box(self) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
        raise NotImplementedError

    def corner(self, rng: np.random.Generator) -> NDArray[np.float64]:
        """A random corner of the feature box with the largest value (weight W / top benefit)."""
        lo, hi = self.record_box()
        pick = rng.integers(0, 2, size=self.p).astype(bool)
        return np.r_[np.where(pick, hi[:-1], lo[:-1]), hi[-1]]

    def uniform_point(self, rng: np.random.Generator) -> NDArray[np.float64]:
        """A point drawn uniformly from the record box."""
        lo, hi = self.record_box()
        return rng.uniform(lo, hi)


@dataclass(frozen=True)
class AuditConfig(RecordBoxSearch):
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
        "owl": C_B of the LogisticPropensity, and by default the top of the benefits' range.
    benefit_range : (float, float), optional
        "owl": range of the benefits in the record space (default ``(0, benefit_bound)``);
        benefits above C_B are clipped by DPOWL when a model fitted on private data supplies C.
    propensity : {"known", "logistic"}
        "owl": known randomisation probability 0.5 (C = 0) or a LogisticPropensity
        fitted on private data (C = n h).
    n_propensity : int
        Records at the start of each dataset that form the propensity model's own private
        sample (0: the model is fitted on the OWL records themselves).
    logit_bound, ridge : float
        Public constants of the LogisticPropensity.
    hessian_lower_bound : float, optional
        b_x given to the LogisticPropensity (default: the ridge).
    assume_hessian_bound : bool
        Take ``hessian_lower_bound > ridge`` as an assumption (a conditional guarantee).
    compare_dppack : bool
        Run the black-box audit on DPpack too (skipped where DPpack has no counterpart).
    clip_rows : bool
        "werm": records are raw points of the box [-3, 3]^p, not mapped into the unit ball, and
        DPWeightedERM(clip_rows=True) divides rows of norm above 1 by their norm itself.
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
    benefit_range: Optional[Tuple[float, float]] = None
    propensity: str = "known"
    n_propensity: int = 0
    logit_bound: float = 0.5
    ridge: float = 1.0
    hessian_lower_bound: Optional[float] = None
    assume_hessian_bound: bool = False
    compare_dppack: bool = True
    clip_rows: bool = False
    notes: Tuple[str, ...] = field(default_factory=tuple)

    @property
    def conditional(self) -> bool:
        """True when the guarantee rests on an assumption about the data (not part of the verdict)."""
        return self.assume_hessian_bound

    @property
    def n_records(self) -> int:
        """Records per dataset: the OWL records and, before them, the propensity sample."""
        return self.n + self.n_propensity

    def owl_part(self, data: "Dataset") -> "Dataset":
        """The records the DP-OWL fit uses (all but the propensity sample)."""
        k = self.n_propensity
        return data if k == 0 else Dataset(data.X[k:], data.y[k:], data.v[k:])

    def propensity_part(self, data: "Dataset") -> "Dataset":
        """The records the propensity model is fitted on."""
        k = self.n_propensity
        return data if k == 0 else Dataset(data.X[:k], data.y[:k], data.v[:k])

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
            half = _CLIP_ROWS_BOX if self.clip_rows else 1.0
            return np.r_[-half * np.ones(self.p), 0.0], np.r_[half * np.ones(self.p), self.weights_upper_bound]
        lo, hi = self.bounds
        b_lo, b_hi = self.benefit_range if self.benefit_range is not None else (0.0, self.benefit_bound)
        return np.r_[lo, b_lo], np.r_[hi, b_hi]

    def record(self, u: NDArray[np.float64]) -> Tuple[NDArray[np.float64], float]:
        """``(x, v)`` of a point ``u`` of :meth:`record_box` (werm: mapped into the unit ball)."""
        lo, hi = self.record_box()
        u = np.clip(np.asarray(u, dtype=np.float64), lo, hi)
        x, v = u[:-1], float(u[-1])
        if self.kind == "werm" and not self.clip_rows:
            x = x / max(1.0, float(np.linalg.norm(x)))
        return x, v

    # -- datasets --------------------------------------------------------------
    def random_dataset(self, rng: np.random.Generator) -> Dataset:
        """Records drawn uniformly from the record box, labels at random."""
        N = self.n_records
        U = np.array([self.uniform_point(rng) for _ in range(N)])
        recs = [self.record(u) for u in U]
        X = np.array([r[0] for r in recs])
        v = np.array([r[1] for r in recs])
        y = rng.choice([-1.0, 1.0], size=N)
        y[:2] = (-1.0, 1.0)  # both labels / arms present
        k = self.n_propensity
        y[k:k + 2] = (-1.0, 1.0)  # in the propensity sample and among the OWL records
        return Dataset(X, y, v)

    def balanced_dataset(self, rng: np.random.Generator) -> Dataset:
        """Pairs of identical records with opposite labels (their loss gradients cancel), record 0 free.

        With known propensities the pairs carry equal weights, so near 0 the
        other records add neither gradient nor curvature: the replaced record alone
        moves the minimiser, the regime where the sensitivity bound is attained.
        """
        base = self.random_dataset(rng)
        X, y, v = base.X.copy(), base.y.copy(), base.v.copy()
        for i in range(1, self.n_records - 1, 2):
            X[i + 1], v[i + 1] = X[i], v[i]
            y[i], y[i + 1] = 1.0, -1.0
        return Dataset(X, y, v)

    # -- pydpowl ---------------------------------------------------------------
    def propensity_model(self, *, assume: Optional[bool] = None) -> LogisticPropensity:
        """The (unfitted) LogisticPropensity of this configuration."""
        return LogisticPropensity(feature_bounds=self.bounds, benefit_bound=self.benefit_bound,
                                  logit_bound=self.logit_bound, ridge=self.ridge,
                                  hessian_lower_bound=self.hessian_lower_bound,
                                  assume_hessian_bound=self.assume_hessian_bound if assume is None else assume)

    def propensity_for(self, data: Dataset) -> Any:
        """The propensity argument of DPOWL for this dataset (a model refitted on it when "logistic")."""
        if self.propensity == "known":
            return 0.5
        sample = self.propensity_part(data)
        with warnings.catch_warnings():  # a conditional configuration warns at every refit, as documented
            warnings.filterwarnings("ignore", message="LogisticPropensity: hessian_lower_bound",
                                    category=PrivacyLeakWarning)
            return self.propensity_model().fit(sample.X, sample.y)

    def estimator(self, epsilon: float, random_state: Any = None) -> Any:
        if self.kind == "werm":
            return DPWeightedERM(epsilon=epsilon, gamma=self.gamma, weights_upper_bound=self.weights_upper_bound,
                                 loss=self.loss, huber_h=self.huber_h, clip_rows=self.clip_rows,
                                 random_state=random_state)
        return DPOWL(epsilon=epsilon, gamma=self.gamma, weights_upper_bound=self.weights_upper_bound,
                     feature_bounds=self.bounds, huber_h=self.huber_h, fit_intercept=True, mechanism="output",
                     residual=False, random_state=random_state)

    def fit(self, data: Dataset, epsilon: float, random_state: Any = None, propensity: Any = None) -> Any:
        """Fit the pydpowl estimator on ``data`` (``propensity`` reused when given)."""
        model = self.estimator(epsilon, random_state)
        if self.kind == "werm":
            return model.fit(data.X, data.y, data.v)
        prop = self.propensity_for(data) if propensity is None else propensity
        owl = self.owl_part(data)
        return model.fit(owl.X, owl.y, owl.v, prop)

    def minimiser(self, data: Dataset) -> Tuple[NDArray[np.float64], float]:
        """The exact minimiser in the noise space (``epsilon = inf``) and the sensitivity Delta."""
        model = self.fit(data, np.inf)
        theta = model.coef_ if self.kind == "werm" else model.scaled_coef_
        return np.array(theta, dtype=np.float64), float(model.sensitivity_)

    def weights(self, data: Dataset, propensity: Any = None) -> Tuple[NDArray[np.float64], float]:
        """The weights the optimiser sees and C (werm: the given weights, C = 0)."""
        if self.kind == "werm":
            return data.v.copy(), 0.0
        prop = self.propensity_for(data) if propensity is None else propensity
        owl = self.owl_part(data)
        problem = prepare_owl(owl.X, owl.y, owl.v, prop, weights_upper_bound=self.weights_upper_bound,
                              feature_bounds=self.bounds, fit_intercept=True)
        return problem.weights, problem.weight_sensitivity

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

        DPpack's sensitivity is ``2W / gamma`` (C = 0, no solver-tolerance term);
        with a propensity model fitted on private data pydpowl uses
        ``(C + 2W + 2 n tol) / gamma``, so DPpack is run at
        ``epsilon * 2W / (C + 2W + 2 n tol)``, which gives the same Gamma rate.
        """
        if self.kind == "werm" or self.propensity == "known" or epsilon == np.inf:
            return epsilon
        from pydpowl.engine.mechanisms import output_sensitivity
        from pydpowl.estimators.werm import DEFAULT_TOL

        _, C = self.weights(data)
        delta = output_sensitivity(gamma=self.gamma, weights_upper_bound=self.weights_upper_bound, C=C,
                                   n_samples=self.n, tol=DEFAULT_TOL)
        return epsilon * (2.0 * self.weights_upper_bound / self.gamma) / delta

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
        data = self.owl_part(data)
        if isinstance(prop, LogisticPropensity):
            p_received, _ = prop.probability_of(data.X, data.y)
            benefit = np.minimum(data.v, self.benefit_bound)  # C relies on B <= C_B (DPOWL clips by design)
        else:
            p_received, benefit = np.full(data.n, prop), data.v
        fits = fit_svmdp(data.X, data.y, benefit / p_received, epsilon=eps, gamma=self.gamma,
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
            name="werm-clip-rows", title="DPWeightedERM(clip_rows=True), Huber hinge, raw rows in [-3, 3]^2 "
            "(norm up to 4.2), d=2, n=20, gamma=20 (linear zone), W=1",
            kind="werm", loss="huber", epsilons=(1.0,), gamma=20.0, weights_upper_bound=1.0, n=20, p=2,
            clip_rows=True, compare_dppack=False,
            notes=("the estimator divides rows of norm above 1 by their norm (counted): the mechanism's own "
                   "per-record map; in the linear zone a replaced record moves the minimiser in proportion to its "
                   "norm, so without the map the search finds more than 3 Delta; no DPpack column (DPpack refuses no "
                   "row and clips none)",)),
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
            notes=("C = n h > 0 with the tight per-weight bound h (review item 4); the neighbour refits the "
                   "propensity model; DPpack is run at eps * 2W/(C + 2W + 2 n tol), which gives the same noise law",)),
        AuditConfig(
            name="owl-benefit-bound", title="DPOWL + LogisticPropensity on the private data with C_B = 1e-5 "
            "below the benefits (B in [0.5, 1]), ridge=3, M=3, W=50, gamma=1, n=20, x in [-1, 1] x [0, 2]",
            kind="owl", loss="huber", epsilons=(1.0,), gamma=1.0, weights_upper_bound=50.0, n=20, p=2,
            lower=(-1.0, 0.0), upper=(1.0, 2.0), benefit_bound=1e-5, benefit_range=(0.5, 1.0),
            propensity="logistic", logit_bound=3.0, ridge=3.0,
            notes=("review item 1: benefits above C_B are clipped by design (counted); unclipped, the other "
                   "weights moved by about 50 times C",)),
        AuditConfig(
            name="owl-propensity-split", title="DPOWL on n=1000 records weighted by a LogisticPropensity "
            "fitted on 8 other private records (ridge=1, M=0.5), B in [0, 1], W=2.5, gamma=1, x in [-1, 1] x [0, 2]",
            kind="owl", loss="huber", epsilons=(1.0,), gamma=1.0, weights_upper_bound=2.5, n=1000, p=2,
            lower=(-1.0, 0.0), upper=(1.0, 2.0), benefit_bound=1.0, propensity="logistic", n_propensity=8,
            logit_bound=0.5, ridge=1.0, compare_dppack=False,
            notes=("review item 2: a replaced record of the propensity sample moves every OWL weight; "
                   "C = n h with h computed with n_p = 8 (with C = H, the code before the review, the other "
                   "weights moved by 1.13 C here); no DPpack column (DPpack has no propensity sample, and "
                   "n = 1000 makes its 40,000 fits slow)",)),
        AuditConfig(
            name="owl-assumed-hessian", title="DPOWL + LogisticPropensity with ridge=0.01 and an ASSUMED "
            "hessian_lower_bound=20 (2000 x the ridge), B in [0, 1], M=0.5, W=2.5, gamma=1, n=20",
            kind="owl", loss="huber", epsilons=(1.0,), gamma=1.0, weights_upper_bound=2.5, n=20, p=2,
            lower=(-1.0, 0.0), upper=(1.0, 2.0), benefit_bound=1.0, propensity="logistic", logit_bound=0.5,
            ridge=0.01, hessian_lower_bound=20.0, assume_hessian_bound=True,
            notes=("review item 3: refused without assume_hessian_bound=True (checked); with it the guarantee "
                   "is conditional, so this search is reported but not part of the verdict",)),
    )


def quick_configs() -> Tuple[AuditConfig, ...]:
    """A reduced set for the test suite and ``--quick`` (one epsilon each)."""
    by_name = {c.name: c for c in default_configs()}
    return (by_name["werm-huber"].with_epsilons(1.0), by_name["werm-logistic"], by_name["werm-clip-rows"],
            by_name["owl-intercept"].with_epsilons(1.0), by_name["owl-propensity"], by_name["owl-benefit-bound"],
            by_name["owl-propensity-split"], by_name["owl-assumed-hessian"])


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
