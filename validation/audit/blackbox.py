"""Black-box distinguishing test and its epsilon lower bound.

Given releases of a mechanism M on two neighbouring datasets, samples of M(D)
and M(D'), pure epsilon-DP implies for every measurable region R

    P(M(D') in R) <= exp(epsilon) P(M(D) in R)   and the same with D, D' swapped.

(epsilon, delta)-DP implies ``P(M(D') in R) <= exp(epsilon) P(M(D) in R) + delta``,
so with ``delta > 0`` the bound below becomes ``log((Q_low - delta) / P_high)``.

An auditor picks a region R (here ``{T(z) > t}`` or ``{T(z) <= t}`` for a test
statistic T and threshold t), counts how many releases of each dataset fall in
it, and bounds ``epsilon >= log(Q_low / P_high)`` with one-sided Clopper-Pearson
bounds ``Q_low`` on the larger probability and ``P_high`` on the smaller one
(Jagielski et al. 2020; Nasr et al. 2021; with ``Q = 1 - FNR`` and ``P = FPR``
this is ``log((1 - FNR_upper) / FPR_upper)``).

The region is chosen on a *selection* sample and the bound is computed on a
separate *evaluation* sample, so the bound is a single pre-specified test: each
Clopper-Pearson bound is one-sided at level ``alpha / 2`` and, by the union
bound, the reported epsilon lower bound exceeds the true epsilon with
probability at most ``alpha``.

Statistics (centres estimated from the selection sample only):

* ``projection``: ``u'z`` with ``u`` the unit vector from the mean release on D
  to the mean release on D';
* ``likelihood``: ``||z - c|| - ||z - c'||``, the log-likelihood ratio of the
  output-perturbation noise law up to the factor epsilon/Delta (the most
  powerful statistic when the centres are right).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, Tuple

import numpy as np
from numpy.typing import NDArray
from scipy import stats

__all__ = [
    "BoundVerdict",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "DistinguishingTest",
    "EpsilonBound",
    "select_test",
    "evaluate_test",
    "epsilon_lower_bound",
]

STATISTICS = ("projection", "likelihood")

#: The selection half ranks regions by their Clopper-Pearson bound at this
#: fraction of alpha: a stricter level prefers regions holding more releases,
#: whose advantage replicates on the evaluation half (it does not affect validity).
SELECTION_ALPHA_FACTOR = 0.01

#: Statistics are rounded to this fraction of the distance between the centres.
#: Without it the likelihood statistic has an atom at ``-||c' - c||`` whose
#: floating-point rounding differs between releases near 0 and releases computed
#: as ``theta_hat + noise``: a region picked on those last bits distinguishes the
#: two datasets beyond epsilon (the floating-point attack of Mironov, CCS 2012).
#: The audit targets the mechanism as specified, not its floating-point
#: representation; docs/privacy_audit.md discusses the latter.
_QUANTUM = 1e-6


def clopper_pearson_upper(k: int, n: int, alpha: float) -> float:
    """One-sided ``1 - alpha`` Clopper-Pearson upper bound on a binomial proportion."""
    if not (0 <= k <= n and n >= 1):
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}.")
    if k == n:
        return 1.0
    return float(stats.beta.ppf(1.0 - alpha, k + 1, n - k))


def clopper_pearson_lower(k: int, n: int, alpha: float) -> float:
    """One-sided ``1 - alpha`` Clopper-Pearson lower bound on a binomial proportion."""
    if not (0 <= k <= n and n >= 1):
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}.")
    if k == 0:
        return 0.0
    return float(stats.beta.ppf(alpha, k, n - k + 1))


@dataclass(frozen=True)
class DistinguishingTest:
    """A fixed region ``R`` and which dataset is claimed to put more mass in it.

    Attributes
    ----------
    statistic : {"projection", "likelihood"}
    centre0, centre1 : ndarray
        Centres (mean releases on D and D') estimated from the selection sample.
    threshold : float
    upper : bool
        ``R = {T > threshold}`` if True, else ``{T <= threshold}``.
    favours : {0, 1}
        The dataset whose releases should fall in R more often (Q); the other is P.
    """

    statistic: str
    centre0: NDArray[np.float64]
    centre1: NDArray[np.float64]
    threshold: float
    upper: bool
    favours: int

    def values(self, Z: NDArray[np.float64]) -> NDArray[np.float64]:
        """The statistic T on each row of ``Z``."""
        return _statistic(self.statistic, Z, self.centre0, self.centre1)

    def in_region(self, Z: NDArray[np.float64]) -> NDArray[np.bool_]:
        t = self.values(Z)
        return t > self.threshold if self.upper else t <= self.threshold

    def describe(self) -> str:
        side = ">" if self.upper else "<="
        return f"{self.statistic} {side} {self.threshold:.4g}, favours D{'' if self.favours == 0 else chr(39)}"


@dataclass(frozen=True)
class EpsilonBound:
    """The evaluated bound of one test.

    Attributes
    ----------
    epsilon_lb : float
        ``max(0, log(Q_low / P_high))`` on the evaluation sample.
    q_count, p_count, n_eval : int
        Releases in R from the favoured dataset (Q) and the other (P), out of ``n_eval`` each.
    q_low, p_high : float
        Clopper-Pearson bounds (one-sided, ``alpha / 2`` each).
    point : float
        ``log(q_count / p_count)`` (inf when p_count = 0): the plug-in estimate.
    test : DistinguishingTest
    alpha : float
    """

    epsilon_lb: float
    q_count: int
    p_count: int
    n_eval: int
    q_low: float
    p_high: float
    point: float
    test: DistinguishingTest
    alpha: float


class BoundVerdict:
    """The verdict of a black-box lower bound against its claim, for an audit row with the fields ``bound``
    (:class:`EpsilonBound`) and ``control`` and the claimed budget as ``claimed_epsilon``.

    A row violates its claim when the lower bound exceeds it. An honest row passes when it does not; a
    control (a release calibrated for more than it claims) passes when it is flagged, which shows the
    audit can fail.
    """

    bound: EpsilonBound
    control: bool

    @property
    def claimed_epsilon(self) -> float:
        raise NotImplementedError

    @property
    def epsilon_lb(self) -> float:
        return self.bound.epsilon_lb

    @property
    def violates(self) -> bool:
        return self.bound.epsilon_lb > self.claimed_epsilon

    @property
    def passed(self) -> bool:
        return self.violates if self.control else not self.violates

    @property
    def verdict(self) -> str:
        if self.control:
            return "FLAGGED (expected)" if self.violates else "NOT FLAGGED (audit too weak)"
        return "FAIL" if self.violates else "PASS"


def _statistic(name: str, Z, c0, c1) -> NDArray[np.float64]:
    Z = np.asarray(Z, dtype=np.float64)
    scale = float(np.linalg.norm(c1 - c0))
    if name == "projection":
        u = (c1 - c0) / scale if scale > 0 else np.eye(Z.shape[1])[0]
        t = Z @ u
    elif name == "likelihood":
        t = np.linalg.norm(Z - c0, axis=1) - np.linalg.norm(Z - c1, axis=1)
    else:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {name!r}.")
    # Round to a grid far coarser than floating-point error: the test must not
    # read the least significant bits of the releases (see _QUANTUM).
    q = _QUANTUM * (scale if scale > 0 else 1.0)
    return np.round(t / q) * q


def _bound_from_counts(kq: int, kp: int, n: int, alpha: float, delta: float = 0.0) -> Tuple[float, float, float]:
    q_low = clopper_pearson_lower(kq, n, alpha / 2)
    p_high = clopper_pearson_upper(kp, n, alpha / 2)
    lb = math.log((q_low - delta) / p_high) if q_low > delta else -math.inf
    return lb, q_low, p_high


def _bounds_vectorised(kq, kp, n: int, alpha: float, delta: float = 0.0) -> NDArray[np.float64]:
    kq = np.asarray(kq, dtype=np.float64)
    kp = np.asarray(kp, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        q_low = np.where(kq > 0, stats.beta.ppf(alpha / 2, np.maximum(kq, 1), n - kq + 1), 0.0)
        p_high = np.where(kp < n, stats.beta.ppf(1 - alpha / 2, kp + 1, np.maximum(n - kp, 1)), 1.0)
        lbs = np.where((q_low > delta) & (kq > kp), np.log((q_low - delta) / p_high), -np.inf)
    return lbs


def select_test(sel0: NDArray[np.float64], sel1: NDArray[np.float64], *, alpha: float = 0.05,
                n_thresholds: int = 200, delta: float = 0.0) -> DistinguishingTest:
    """Choose the statistic, threshold, side and direction with the best bound on the selection sample.

    The selection criterion is the Clopper-Pearson bound itself computed on the
    selection sample (scaled to the evaluation size it will meet, equal here),
    which prefers regions with enough releases in them to survive the bounds.
    """
    sel0 = np.asarray(sel0, dtype=np.float64)
    sel1 = np.asarray(sel1, dtype=np.float64)
    if sel0.ndim != 2 or sel1.shape != sel0.shape or sel0.shape[0] < 10:
        raise ValueError(f"selection samples must be two (m, d) arrays of the same shape with m >= 10, "
                         f"got {sel0.shape} and {sel1.shape}.")
    c0, c1 = sel0.mean(axis=0), sel1.mean(axis=0)
    n = sel0.shape[0]
    best: Tuple[float, DistinguishingTest] = (-math.inf, DistinguishingTest("projection", c0, c1, 0.0, True, 1))
    for name in STATISTICS:
        t0, t1 = _statistic(name, sel0, c0, c1), _statistic(name, sel1, c0, c1)
        pooled = np.concatenate([t0, t1])
        grid = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, n_thresholds + 2)[1:-1]))
        s0, s1 = np.sort(t0), np.sort(t1)
        above0 = n - np.searchsorted(s0, grid, side="right")
        above1 = n - np.searchsorted(s1, grid, side="right")
        for upper in (True, False):
            k0 = above0 if upper else n - above0
            k1 = above1 if upper else n - above1
            for favours in (0, 1):
                kq, kp = (k0, k1) if favours == 0 else (k1, k0)
                lbs = _bounds_vectorised(kq, kp, n, alpha, delta)
                j = int(np.argmax(lbs))
                if lbs[j] > best[0]:
                    best = (float(lbs[j]), DistinguishingTest(name, c0, c1, float(grid[j]), upper, favours))
    return best[1]


def evaluate_test(test: DistinguishingTest, ev0: NDArray[np.float64], ev1: NDArray[np.float64], *,
                  alpha: float = 0.05, delta: float = 0.0) -> EpsilonBound:
    """The (1 - alpha) epsilon lower bound of a fixed test on fresh releases (same count per dataset);
    with ``delta > 0`` the bound for an (epsilon, delta)-DP claim."""
    ev0 = np.asarray(ev0, dtype=np.float64)
    ev1 = np.asarray(ev1, dtype=np.float64)
    if ev0.shape != ev1.shape or ev0.ndim != 2:
        raise ValueError(f"evaluation samples must be two (m, d) arrays of the same shape, got {ev0.shape} "
                         f"and {ev1.shape}.")
    n = ev0.shape[0]
    k0, k1 = int(test.in_region(ev0).sum()), int(test.in_region(ev1).sum())
    kq, kp = (k0, k1) if test.favours == 0 else (k1, k0)
    lb, q_low, p_high = _bound_from_counts(kq, kp, n, alpha, delta)
    point = math.inf if kp == 0 else (math.log(kq / kp) if kq > 0 else -math.inf)
    return EpsilonBound(epsilon_lb=max(0.0, lb), q_count=kq, p_count=kp, n_eval=n, q_low=q_low, p_high=p_high,
                        point=point, test=test, alpha=alpha)


def epsilon_lower_bound(samples0: NDArray[np.float64], samples1: NDArray[np.float64], *,
                        alpha: float = 0.05, delta: float = 0.0) -> EpsilonBound:
    """Split each sample in halves: select the test on the first, bound epsilon on the second
    (for an (epsilon, delta)-DP claim with ``delta > 0``)."""
    samples0 = np.asarray(samples0, dtype=np.float64)
    samples1 = np.asarray(samples1, dtype=np.float64)
    m = min(samples0.shape[0], samples1.shape[0]) // 2
    test = select_test(samples0[:m], samples1[:m], alpha=alpha * SELECTION_ALPHA_FACTOR, delta=delta)
    return evaluate_test(test, samples0[m:2 * m], samples1[m:2 * m], alpha=alpha, delta=delta)


def summary_of(bound: EpsilonBound) -> Dict[str, object]:
    """A flat dict for tables and JSON."""
    return {"epsilon_lb": bound.epsilon_lb, "q_count": bound.q_count, "p_count": bound.p_count,
            "n_eval": bound.n_eval, "q_low": bound.q_low, "p_high": bound.p_high, "point": bound.point,
            "test": bound.test.describe(), "alpha": bound.alpha}
