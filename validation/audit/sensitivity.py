"""Sensitivity audit: search for neighbouring datasets that move the minimiser most.

For a configuration with sensitivity ``Delta`` the mechanism is
``epsilon``-DP only if ``||theta_hat(D) - theta_hat(D')|| <= Delta`` for every
pair of datasets differing in one record. The search looks for the pair with
the largest ratio ``||theta_hat(D) - theta_hat(D')|| / Delta``:

* **random**: the record is replaced by random records, half of them at a
  corner of the feature box with the largest weight (benefit) and the label
  flipped, half drawn uniformly;
* **adversarial**: ``scipy.optimize.minimize`` (L-BFGS-B, finite-difference
  gradients, box constraints) maximises the distance from many starts, over the
  replacement record (``"replace"``: D fixed) or over both the record and its
  replacement (``"pair"``), for every combination of labels.

Base datasets are random and "balanced" (pairs of records whose gradients
cancel, the regime where the bound is attained). Every evaluation refits the
whole pipeline on both datasets (for a propensity model fitted on the private
data, the neighbour refits it too), with pydpowl at ``epsilon = inf``: the
certified exact minimiser.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np
from numpy.typing import NDArray
from scipy import optimize

from .configs import AuditConfig, Dataset

__all__ = ["PairEvaluation", "SensitivityResult", "evaluate_pair", "sensitivity_search"]


@dataclass(frozen=True)
class PairEvaluation:
    """Distance between the minimisers of one neighbouring pair.

    Attributes
    ----------
    distance : float
        ``||theta_hat(D) - theta_hat(D')||`` in the noise space.
    sensitivity : float
        Delta (the same for D and D': it depends on public settings only).
    naive_sensitivity : float
        ``2W / gamma``, what Delta would be without the C term.
    weight_change : float
        ``sum_{i != j} |w_i(D) - w_i(D')|``: how much the other records' weights moved.
    C : float
        The weight-change bound used in Delta.
    """

    distance: float
    sensitivity: float
    naive_sensitivity: float
    weight_change: float
    C: float

    @property
    def ratio(self) -> float:
        return self.distance / self.sensitivity

    @property
    def naive_ratio(self) -> float:
        return self.distance / self.naive_sensitivity

    @property
    def weight_ratio(self) -> float:
        return self.weight_change / self.C if self.C > 0 else (0.0 if self.weight_change == 0 else math.inf)


@dataclass
class SensitivityResult:
    """Worst pair found for one configuration, with the search's bookkeeping.

    Attributes
    ----------
    config : AuditConfig
    worst : PairEvaluation
    D, D1 : Dataset
        The worst neighbouring pair (differing in record ``replaced``).
    replaced : int
    found_by : str
        Method ("corner", "random", "optimised-replace", "optimised-pair"), base and record.
    by_method : dict
        Largest ratio found by each method.
    worst_naive_ratio, worst_weight_ratio : float
        Largest ``distance / (2W/gamma)`` and ``weight_change / C`` over all evaluated pairs.
    n_evaluations : int
        Pairs evaluated.
    seconds : float
    """

    config: AuditConfig
    worst: PairEvaluation
    D: Dataset
    D1: Dataset
    replaced: int
    found_by: str
    by_method: Dict[str, float] = field(default_factory=dict)
    worst_naive_ratio: float = 0.0
    worst_weight_ratio: float = 0.0
    n_evaluations: int = 0
    seconds: float = 0.0


def evaluate_pair(config: AuditConfig, D: Dataset, D1: Dataset, *, cache: Optional[dict] = None) -> PairEvaluation:
    """Refit everything on D and on D' and measure how far the minimiser moved."""
    def solve(data: Dataset):
        key = None
        if cache is not None:
            key = (data.X.tobytes(), data.y.tobytes(), data.v.tobytes())
            if key in cache:
                return cache[key]
        out = config.analyse(data)
        if cache is not None:
            cache[key] = out
        return out

    t0, delta0, w0, C0 = solve(D)
    t1, delta1, w1, C1 = solve(D1)
    if not math.isclose(delta0, delta1, rel_tol=1e-12):
        raise AssertionError(f"{config.name}: Delta depends on the data ({delta0} vs {delta1}); it must be public.")
    changed = np.flatnonzero((D.X != D1.X).any(axis=1) | (D.y != D1.y) | (D.v != D1.v))
    # the weights are those of the OWL records (after a separate propensity sample, if any)
    others = np.ones(w0.shape[0], dtype=bool)
    owl_changed = changed - config.n_propensity if config.kind in ("owl", "multiarm") else changed
    others[owl_changed[owl_changed >= 0]] = False
    return PairEvaluation(
        distance=float(np.linalg.norm(t0 - t1)), sensitivity=delta0, naive_sensitivity=config.naive_sensitivity(),
        weight_change=float(np.abs(w0 - w1)[others].sum()), C=max(C0, C1),
    )


class _Tracker:
    def __init__(self, config: AuditConfig):
        self.config = config
        self.best: Optional[Tuple[PairEvaluation, Dataset, Dataset, int, str]] = None
        self.by_method: Dict[str, float] = {}
        self.naive = 0.0
        self.weight = 0.0
        self.n = 0

    def record(self, ev: PairEvaluation, D: Dataset, D1: Dataset, j: int, method: str, base: str) -> None:
        self.n += 1
        self.naive = max(self.naive, ev.naive_ratio)
        self.weight = max(self.weight, ev.weight_ratio)
        self.by_method[method] = max(self.by_method.get(method, 0.0), ev.ratio)
        if self.best is None or ev.ratio > self.best[0].ratio:
            self.best = (ev, D, D1, j, f"{method} ({base} base, record {j})")


def _labels_grid(mode: str, labels: Tuple[float, ...] = (-1.0, 1.0)) -> List[Tuple[float, ...]]:
    """The labels (arms) a replaced record takes: each one ("replace"), each pair ("pair")."""
    return [(y,) for y in labels] if mode == "replace" else list(itertools.product(labels, repeat=2))


def sensitivity_search(config: AuditConfig, *, seed: int = 0, n_random: int = 200, n_starts: int = 6,
                       maxiter: int = 60, bases: Tuple[str, ...] = ("random", "balanced"),
                       modes: Tuple[str, ...] = ("replace", "pair"), n_replaced: int = 2) -> SensitivityResult:
    """Random and adversarial search for the worst neighbouring pair of ``config``.

    Parameters
    ----------
    config : AuditConfig
    seed : int
        Seed of every random choice (base data, random records, starts).
    n_random : int
        Random replacement records per base dataset (half at box corners with the
        top weight and the label flipped).
    n_starts : int
        Optimiser starts per (base, replaced index, mode, labels); the first start
        is a corner.
    maxiter : int
        L-BFGS-B iterations per start.
    bases : tuple of {"random", "balanced"}
        One base dataset per entry (repeats give further draws), base ``k`` drawn
        from its own stream seeded by ``(seed, k)``.
    modes : tuple of {"replace", "pair"}
    n_replaced : int
        How many record positions are tried per base dataset (record 0 first; with a
        separate propensity sample also the first OWL record).
    """
    t_start = time.perf_counter()
    rng = np.random.default_rng(seed)
    track = _Tracker(config)
    cache: dict = {}
    lo, hi = config.record_box()
    m = lo.shape[0]

    for b, base_name in enumerate(bases):
        # each base dataset has its own stream, so searches of different effort share their bases
        base_rng = np.random.default_rng([seed, b])
        D = config.random_dataset(base_rng) if base_name == "random" else config.balanced_dataset(base_rng)
        first = [0]  # record 0 first; with a separate propensity sample, also the first OWL record
        if config.kind == "owl" and config.n_propensity:
            first.append(config.n_propensity)
        rest = np.setdiff1d(np.arange(D.n), first)
        positions = first + [int(k) for k in base_rng.choice(rest, size=max(0, n_replaced - len(first)),
                                                             replace=False)]
        for j in positions:
            # random records: corners (top weight, label flipped) and uniform points
            for k in range(n_random):
                at_corner = k % 2 == 0
                u = config.corner(rng) if at_corner else config.uniform_point(rng)
                arms = getattr(config, "labels", (-1.0, 1.0))
                y1 = -D.y[j] if at_corner and len(arms) == 2 else float(rng.choice(arms))
                x, v = config.record(u)
                D1 = D.with_record(j, x, y1, v)
                track.record(evaluate_pair(config, D, D1, cache=cache), D, D1, j,
                             "corner" if at_corner else "random", base_name)

            for mode in modes:
                for labels in _labels_grid(mode, getattr(config, "labels", (-1.0, 1.0))):
                    def pair_of(z: NDArray[np.float64]) -> Tuple[Dataset, Dataset]:
                        if mode == "replace":
                            x1, v1 = config.record(z)
                            return D, D.with_record(j, x1, labels[0], v1)
                        x0, v0 = config.record(z[:m])
                        x1, v1 = config.record(z[m:])
                        return D.with_record(j, x0, labels[0], v0), D.with_record(j, x1, labels[1], v1)

                    def objective(z: NDArray[np.float64]) -> float:
                        A, B = pair_of(z)
                        # the pair cache would only grow here: the optimiser rarely revisits points
                        return -evaluate_pair(config, A, B, cache=cache if mode == "replace" else None).distance

                    box_lo = lo if mode == "replace" else np.r_[lo, lo]
                    box_hi = hi if mode == "replace" else np.r_[hi, hi]
                    for s in range(n_starts):
                        if s == 0:
                            z0 = config.corner(rng) if mode == "replace" else np.r_[config.corner(rng),
                                                                                    config.corner(rng)]
                        else:
                            z0 = rng.uniform(box_lo, box_hi)
                        res = optimize.minimize(objective, z0, method="L-BFGS-B",
                                                bounds=list(zip(box_lo, box_hi)),
                                                options={"maxiter": maxiter, "eps": 1e-7})
                        A, B = pair_of(res.x)
                        track.record(evaluate_pair(config, A, B), A, B, j, f"optimised-{mode}", base_name)
                        track.n += int(res.nfev)
        if len(cache) > 20000:
            cache.clear()

    if track.best is None:  # every search above records its pairs
        raise RuntimeError("the sensitivity search evaluated no pair of datasets.")
    ev, D, D1, j, method = track.best
    return SensitivityResult(
        config=config, worst=ev, D=D, D1=D1, replaced=j, found_by=method, by_method=dict(track.by_method),
        worst_naive_ratio=track.naive, worst_weight_ratio=track.weight, n_evaluations=track.n,
        seconds=time.perf_counter() - t_start,
    )
