"""The price of privacy for several arms and several stages: ``pydpowl simulate --design multiarm|kstage``.

Two designs, each a fixed population from which every repetition draws a
training set of size ``n`` (and one large test set per run):

* ``multiarm``: three arms randomised 1/3 each, ``X ~ U[-1, 1]^5``; the best
  arm is the sector of ``(x1, x2)`` its direction points to (arm ``a`` has
  score ``cos(2 pi a / 3) x1 + sin(2 pi a / 3) x2``; the other three features
  are noise), the benefit ``B = 1 + 0.5 x1 + 2 1{A = d*(X)} + N(0, 0.5^2)``
  clipped to the public ``[0, 5]``. The value of a rule ``d`` is
  ``E B(d(X)) = 1 + 2 P(d(X) = d*(X))`` (3 for the optimal rule, 1.67 at
  random). Our own construction of the kind angle-based multicategory OWL is
  studied on (Zhang & Liu 2014; Zhang et al. 2020: linear boundaries between
  arms at simplex-like angles).
* ``kstage``: DTRlearn2's ``sim_Kstage`` design (Chen, Liu, Zeng & Wang, the
  package's simulation; our implementation from its description) with
  ``T = 2`` stages: 10 clusters of ``pinfo = 5`` informative features (centres
  ``N(0, 5)``, fixed for the population; within-cluster covariance 1 on the
  diagonal, 0.2 off it), ``pnoise = 5`` standard normal noise features,
  treatments randomised 1/2 at each stage, the optimal treatment at stage
  ``k`` for cluster ``l`` ``2 (floor(l / (2k - 1)) mod 2) - 1``, and the
  whole reward at the end: ``R_T = sum_k A_k y_k + N(0, 1)``. Histories
  ``H_1 = X``, ``H_2 = (X, A_1, X A_1)``. The value of a regime is
  ``E sum_k d_k(H_k) y_k`` (``T`` for the optimal regime, 0 at random).

Each private fit is compared with the non-private fit on the same training
data (``epsilon = inf``): the agreement of the two rules on the test set, and
the value of each. ``mechanism`` is the estimators' (``"auto"``, their
default, or ``"output"``, the paper's output perturbation). With output
perturbation ``gamma`` is public and fixed in advance as ``lambda n``
(DPpack's convention): ``lambda = 0.05`` for the three-arm rule, ``0.005``
for each stage of the regime (its features, bounded by +-12, are scaled far
down; with 0.05 even the non-private regime is nearly flat). With
``"auto"`` the three-arm rule and the two-stage regime take their defaults:
weighted objective perturbation with residual weights (at each stage) and
gamma by the public rule (``gamma="auto"``; the non-private comparison fit at
``epsilon = inf`` then has gamma 1). The budget of the two-stage regime is split equally between the
stages.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Sequence

import numpy as np
import pandas as pd

from .._progress import Progress

__all__ = ["DESIGNS", "MultiStudyResult", "run_multi_study", "MultiarmDesign", "KStageDesign"]


class MultiarmDesign:
    """The three-arm design (see the module docstring)."""

    name = "multiarm"
    n_arms = 3
    p = 5
    feature_bounds = ([-1.0] * 5, [1.0] * 5)
    benefit_bounds = (0.0, 5.0)
    #: lambda = gamma / n
    lam = 0.05

    def __init__(self, rng: np.random.Generator) -> None:
        angles = 2 * np.pi * np.arange(3) / 3
        self.directions = np.column_stack([np.cos(angles), np.sin(angles)])

    def best(self, X: np.ndarray) -> np.ndarray:
        return np.argmax(X[:, :2] @ self.directions.T, axis=1)

    def draw(self, n: int, rng: np.random.Generator):
        X = rng.uniform(-1, 1, (n, self.p))
        A = rng.integers(0, 3, n)
        B = 1 + 0.5 * X[:, 0] + 2.0 * (A == self.best(X)) + rng.normal(0, 0.5, n)
        return X, A, np.clip(B, *self.benefit_bounds)

    def fit(self, data, epsilon: float, rng: np.random.Generator, mechanism: str = "auto"):
        from ..estimators.owl import DPOWL

        X, A, B = data
        W = self.benefit_bounds[1] * self.n_arms
        settings: Dict[str, Any]
        if mechanism == "output":  # the paper's mechanism with OWL weights and the fixed lambda
            settings = dict(gamma=self.lam * len(A), mechanism="output", residual=False)
        else:  # DPOWL's defaults for K arms: objective perturbation, residual weights, the public gamma rule
            settings = dict(mechanism=mechanism)
        return DPOWL(epsilon=epsilon, weights_upper_bound=W, feature_bounds=self.feature_bounds, random_state=rng,
                     **settings).fit(X, A, B, 1 / 3)

    def recommend(self, model, test) -> np.ndarray:
        return model.predict(test)

    def value(self, recommended: np.ndarray, test) -> float:
        return float(1 + 0.5 * test[:, 0].mean() + 2.0 * np.mean(recommended == self.best(test)))

    def test_set(self, size: int, rng: np.random.Generator):
        return rng.uniform(-1, 1, (size, self.p))


class KStageDesign:
    """DTRlearn2's ``sim_Kstage`` design with two stages (see the module docstring)."""

    name = "kstage"
    T = 2
    n_cluster, pinfo, pnoise = 10, 5, 5
    x_bound = 12.0
    #: lambda = gamma / n of each stage
    lam = 0.005

    def __init__(self, rng: np.random.Generator) -> None:
        self.centroids = rng.normal(0, math.sqrt(5.0), (self.n_cluster, self.pinfo))
        cov = np.full((self.pinfo, self.pinfo), 0.2)
        np.fill_diagonal(cov, 1.0)
        self.chol = np.linalg.cholesky(cov)
        clusters = np.arange(1, self.n_cluster + 1)
        self.optimal = np.array([2 * ((clusters // (2 * k - 1)) % 2) - 1 for k in range(1, self.T + 1)])  # (T, 10)

    @property
    def p(self) -> int:
        return self.pinfo + self.pnoise

    def _features(self, n: int, rng: np.random.Generator):
        cluster = rng.integers(0, self.n_cluster, n)
        info = self.centroids[cluster] + rng.standard_normal((n, self.pinfo)) @ self.chol.T
        return np.column_stack([info, rng.standard_normal((n, self.pnoise))]), cluster

    def draw(self, n: int, rng: np.random.Generator):
        X, cluster = self._features(n, rng)
        A = [rng.choice([-1.0, 1.0], n) for _ in range(self.T)]
        y = self.optimal[:, cluster]
        R = [np.zeros(n) for _ in range(self.T)]
        R[-1] = sum(A[k] * y[k] for k in range(self.T)) + rng.normal(0, 1, n)
        return X, A, R

    def histories(self, X: np.ndarray, A1: np.ndarray) -> List[np.ndarray]:
        return [X, np.column_stack([X, A1, X * A1[:, None]])]

    def bounds(self):
        b1 = ([-self.x_bound] * self.p, [self.x_bound] * self.p)
        b2 = (b1[0] + [-1.0] + b1[0], b1[1] + [1.0] + b1[1])
        return [b1, b2]

    def fit(self, data, epsilon: float, rng: np.random.Generator, mechanism: str = "auto"):
        from ..estimators.multistage import DPMultiStageOWL

        X, A, R = data
        n = len(X)
        reward_bounds = [(0.0, 1e-9), (-float(self.T) - 4.0, float(self.T) + 4.0)]
        settings: Dict[str, Any]
        if mechanism == "output":  # the paper's mechanism with the classic BOWL weights and the fixed lambda
            settings = dict(gamma=self.lam * n, mechanism="output", residual=False)
        else:
            settings = dict(mechanism=mechanism)
        return DPMultiStageOWL(epsilon=epsilon, feature_bounds=self.bounds(), reward_bounds=reward_bounds,
                               random_state=rng, **settings).fit(self.histories(X, A[0]), A, R, [0.5] * self.T)

    def recommend(self, model, test) -> np.ndarray:
        X, _ = test
        d1 = model.predict(X, stage=1)
        d2 = model.predict(self.histories(X, d1), stage=2)  # the regime applied as it would be used
        return np.column_stack([d1, d2])

    def value(self, recommended: np.ndarray, test) -> float:
        _, cluster = test
        y = self.optimal[:, cluster]
        return float(np.mean(sum(recommended[:, k] * y[k] for k in range(self.T))))

    def test_set(self, size: int, rng: np.random.Generator):
        return self._features(size, rng)


DESIGNS: Dict[str, Any] = {"multiarm": MultiarmDesign, "kstage": KStageDesign}


@dataclass
class MultiStudyResult:
    design: str
    table: pd.DataFrame  # one row per (n, epsilon): means and standard errors
    raw: pd.DataFrame  # one row per (n, epsilon, repetition)
    reps: int
    seconds: float
    mechanism: str = "auto"

    def format_table(self) -> str:
        t = self.table
        lines = [f"{'n':>6} {'epsilon':>8} {'value':>16} {'agreement':>16} {'value(eps=inf)':>16}"]
        for _, r in t.iterrows():
            lines.append(f"{int(r.n):>6} {('inf' if math.isinf(r.epsilon) else f'{r.epsilon:g}'):>8} "
                         f"{r.value:>9.3f} ± {r.value_se:.3f} {r.agreement:>9.3f} ± {r.agreement_se:.3f} "
                         f"{r.value_nonprivate:>16.3f}")
        return "\n".join(lines)


def run_multi_study(design: str, sizes: Sequence[int], epsilons: Sequence[float], *, reps: int,
                    test_size: int = 20000, random_state: int = 2024, mechanism: str = "auto",
                    progress: bool = False) -> MultiStudyResult:
    """Every (n, epsilon, repetition): fit privately and non-privately on the same data, score on the test set.

    ``mechanism``: ``"auto"`` (the estimators' defaults) or ``"output"`` (output perturbation with the
    fixed ``lambda n``; see the module docstring).
    """
    if mechanism not in ("auto", "output"):
        raise ValueError(f"mechanism must be 'auto' or 'output', got mechanism={mechanism!r}.")
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {sorted(DESIGNS)}, got design={design!r}.")
    t0 = time.perf_counter()
    population = DESIGNS[design](np.random.default_rng([random_state, 0]))
    test = population.test_set(test_size, np.random.default_rng([random_state, 1]))
    finite = [float(e) for e in epsilons if math.isfinite(float(e))]
    rows = []
    with Progress(len(sizes) * reps, f"simulate {design}", enabled=progress) as bar:
        for n, r in ((n, r) for n in sizes for r in range(reps)):
            rng = np.random.default_rng([random_state, 2, int(n), r])
            data = population.draw(int(n), rng)
            exact = population.recommend(population.fit(data, math.inf, rng, mechanism), test)
            v_exact = population.value(exact, test)
            rows.append((int(n), math.inf, r, v_exact, 1.0, v_exact))
            for eps in finite:
                rec = population.recommend(population.fit(data, eps, rng, mechanism), test)
                same = rec.reshape(len(rec), -1) == exact.reshape(len(exact), -1)  # every stage alike
                agree = float(np.mean(np.all(same, axis=1)))
                rows.append((int(n), eps, r, population.value(rec, test), agree, v_exact))
            bar.update(1)
    raw = pd.DataFrame(rows, columns=["n", "epsilon", "rep", "value", "agreement", "value_nonprivate"])
    g = raw.groupby(["n", "epsilon"])
    table = g.agg(value=("value", "mean"), value_se=("value", lambda v: v.std(ddof=1) / math.sqrt(len(v))),
                  agreement=("agreement", "mean"),
                  agreement_se=("agreement", lambda v: v.std(ddof=1) / math.sqrt(len(v))),
                  value_nonprivate=("value_nonprivate", "mean")).reset_index()
    return MultiStudyResult(design=design, table=table, raw=raw, reps=reps, seconds=time.perf_counter() - t0,
                            mechanism=mechanism)
