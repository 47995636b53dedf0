"""The shared cases both engines are run on.

Each :class:`Case` carries data in the original space and the public settings.
``kind="owl"`` compares :class:`pydpowl.DPOWL` with DPpack's ``svmDP`` (both
clip, add the intercept and scale); ``kind="werm"`` compares
:class:`pydpowl.DPWeightedERM` with DPpack's ``WeightedERMDP.CMS`` on data
already in the scaled space (weights clipped at W first, as the engine requires).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Tuple

import numpy as np

from pydpowl import FeatureScaler
from pydpowl.datasets import (
    CYP_GAMMA,
    load_cyp_guides,
    make_cyp_guides_style,
    make_synthetic_owl,
)

__all__ = ["Case", "build_cases", "SYNTHETIC_GAMMA"]

#: gamma per n for the synthetic design at epsilon = 1 (the authors' tuned table)
SYNTHETIC_GAMMA = {200: 150.0, 800: 75.0, 2500: 250.0}


@dataclass(frozen=True)
class Case:
    """One validation case.

    Attributes
    ----------
    name : str
        Short identifier (file names, tables).
    title : str
        One-line description.
    kind : {"owl", "werm"}
        Which pair of engines is compared.
    loss : {"huber", "logistic"}
    X : ndarray of shape (n, p)
        "owl": original features; "werm": rows in the scaled space.
    y : ndarray of shape (n,)
        Treatment / label in {-1, 1}.
    benefit, propensity : ndarray of shape (n,) or None
        "owl" only: OWL weights are ``benefit / propensity`` (clipped at W by both engines).
    weights : ndarray of shape (n,) or None
        "werm" only: weights in [0, W].
    feature_bounds : tuple of ndarray or None
        "owl": public bounds; "werm": None (DPpack clips to [-1, 1], a no-op).
    epsilon, gamma, weights_upper_bound, huber_h : float
    notes : tuple of str
    """

    name: str
    title: str
    kind: str
    loss: str
    X: np.ndarray
    y: np.ndarray
    epsilon: float
    gamma: float
    weights_upper_bound: float
    benefit: Optional[np.ndarray] = None
    propensity: Optional[np.ndarray] = None
    weights: Optional[np.ndarray] = None
    feature_bounds: Optional[Tuple[np.ndarray, np.ndarray]] = None
    huber_h: float = 0.5
    notes: Tuple[str, ...] = field(default_factory=tuple)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    def raw_owl_weights(self) -> np.ndarray:
        """``benefit / propensity`` before the clip at W ("owl" cases only)."""
        if self.benefit is None or self.propensity is None:
            raise ValueError(f"case {self.name!r} (kind {self.kind!r}) has no benefit and propensity: not an OWL case.")
        return self.benefit / self.propensity

    @property
    def dim(self) -> int:
        """Number of coefficients d (intercept included for "owl")."""
        return int(self.X.shape[1]) + (1 if self.kind == "owl" else 0)

    @property
    def noise_rate(self) -> float:
        """DPpack's rate epsilon / Delta = gamma epsilon / (2W) of the noise norm's Gamma law (C = 0).

        pydpowl's default rate is ``gamma epsilon / (2W + 2 n tol)``: smaller by a
        relative ``n tol / W`` (below 1e-6 here), far below what a KS test resolves.
        """
        return self.gamma * self.epsilon / (2.0 * self.weights_upper_bound)

    @property
    def mu(self) -> float:
        """Strong-convexity modulus gamma / n of F."""
        return self.gamma / self.n


def _owl_case(name, title, data, *, epsilon, gamma, notes=()) -> Case:
    return Case(
        name=name, title=title, kind="owl", loss="huber", X=data.X.to_numpy(dtype=float), y=data.treatment,
        benefit=data.benefit, propensity=data.propensity, feature_bounds=data.feature_bounds,
        epsilon=epsilon, gamma=gamma, weights_upper_bound=float(data.weights_upper_bound),
        notes=tuple(notes) + tuple(data.notes),
    )


def _bounds_case(seed: int) -> Case:
    """Asymmetric bounds that clip, and a 2:1 randomisation (propensities 2/3 and 1/3)."""
    rng = np.random.default_rng([seed, 77])
    n = 1000
    x1 = rng.normal(50.0, 15.0, n)            # bounds [20, 80]: clips about 5% of rows
    x2 = rng.uniform(-3.0, 1.5, n)            # bounds [-2, 1]: asymmetric, clips about a third
    x3 = (rng.uniform(size=n) < 0.4).astype(float)
    X = np.column_stack([x1, x2, x3])
    A = np.where(rng.uniform(size=n) < 2.0 / 3.0, 1.0, -1.0)
    f = 0.5 - 0.04 * (np.clip(x1, 20, 80) - 50.0) + 0.8 * np.clip(x2, -2, 1) + 0.5 * x3
    B = 1.0 + A * np.tanh(f) + 0.3 * np.abs(rng.standard_normal(n))
    propensity = np.where(A > 0, 2.0 / 3.0, 1.0 / 3.0)
    bounds = (np.array([20.0, -2.0, 0.0]), np.array([80.0, 1.0, 1.0]))
    return Case(
        name="bounds_2to1", title="clipping bounds [20,80] x [-2,1] x [0,1], propensities 2/3 : 1/3, n=1000",
        kind="owl", loss="huber", X=X, y=A, benefit=B, propensity=propensity, feature_bounds=bounds,
        epsilon=2.0, gamma=40.0, weights_upper_bound=6.0,
        notes=("W = 6 clips the largest weights B / (1/3) by design",),
    )


def _werm_case(name, title, source: Case, *, loss, epsilon, gamma) -> Case:
    scaler = FeatureScaler.from_bounds(source.feature_bounds, source.X.shape[1], fit_intercept=True)
    Z, _ = scaler.transform(source.X)
    w = np.minimum(source.raw_owl_weights(), source.weights_upper_bound)
    return Case(
        name=name, title=title, kind="werm", loss=loss, X=Z, y=source.y, weights=w,
        epsilon=epsilon, gamma=gamma, weights_upper_bound=source.weights_upper_bound,
        notes=(f"rows: {source.name} scaled as svmDP does; weights min(B/p, W)",),
    )


def default_cyp_path() -> Path:
    """``../shared/data/cyp_guides_clinical.csv`` relative to the repository root."""
    return Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "cyp_guides_clinical.csv"


def build_cases(*, quick: bool, cyp_path: Optional[Path], seed: int) -> Tuple[List[Case], List[str]]:
    """All cases of a run and notes for the report (e.g. a missing data file).

    The quick run keeps every kind of case but drops the n = 2500 synthetic one.
    """
    notes: List[str] = []
    cases: List[Case] = []
    sizes = (200, 800) if quick else (200, 800, 2500)
    synth = {}
    for n in sizes:
        data = make_synthetic_owl(n, random_state=np.random.default_rng([seed, n]))
        synth[n] = _owl_case(f"synthetic_n{n}", f"paper's synthetic design, n={n}, p=4", data,
                             epsilon=1.0, gamma=SYNTHETIC_GAMMA[n])
        cases.append(synth[n])
    cyp = make_cyp_guides_style(1459, random_state=np.random.default_rng([seed, 1459]))
    cases.append(_owl_case("cyp_style", "CYP-GUIDES-style synthetic cohort, n=1459", cyp,
                           epsilon=1.0, gamma=CYP_GAMMA))
    bounds = _bounds_case(seed)
    cases.append(bounds)
    if cyp_path is not None and Path(cyp_path).is_file():
        real = load_cyp_guides(cyp_path)
        cases.append(_owl_case("cyp_real", f"real CYP-GUIDES clinical data, n={real.n}", real,
                               epsilon=1.0, gamma=CYP_GAMMA))
    else:
        notes.append(
            f"REAL DATA ABSENT: the CYP-GUIDES clinical file was not found at {cyp_path}; the real-data "
            "case was NOT run (pass --cyp-data PATH)."
        )
    cases.append(_werm_case("werm_logistic", "weighted logistic loss, WeightedERMDP.CMS vs DPWeightedERM "
                            "(synthetic n=800, scaled)", synth[800], loss="logistic", epsilon=1.0, gamma=20.0))
    if not quick:
        cases.append(_werm_case("werm_huber", "weighted Huber hinge, WeightedERMDP.CMS vs DPWeightedERM "
                                "(bounds case, scaled)", bounds, loss="huber", epsilon=2.0, gamma=40.0))
    return cases, notes
