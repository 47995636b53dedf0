"""Validated configurations of the paper's studies.

Each study takes its settings as one frozen dataclass, checked once in
``__post_init__`` (messages name the field, the allowed range and the value,
as everywhere in pydpowl). The study functions accept the same fields as
keyword arguments and build the configuration from them, so
``run_simulation(ns=[200], reps=50)`` and
``run_simulation(config=SimulationConfig(ns=[200], reps=50))`` are the same
run. Randomness (``random_state``) and progress bars are arguments of the
run, not of the configuration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any, Optional, Tuple, Type, TypeVar

from .._validation import check_bool, check_choice, check_epsilon, check_int, check_positive
from ..datasets.synthetic import SYNTHETIC_WEIGHTS_UPPER_BOUND

__all__ = [
    "FIG1_NS",
    "FIG1_EPSILONS",
    "DEFAULT_CASE_EPSILONS",
    "DEFAULT_SENSITIVITY_GAMMAS",
    "DEFAULT_GAMMA_GRID",
    "SimulationConfig",
    "GammaSearchConfig",
    "CaseStudyConfig",
    "SensitivityConfig",
    "resolve_config",
    "check_gamma_grid",
    "METRICS",
    "RULES",
]

#: training sizes of the paper's Fig. 1
FIG1_NS: Tuple[int, ...] = (200, 500, 800, 1000, 1500, 2000, 2500)
#: privacy budgets of Fig. 1 (the non-private reference is always added)
FIG1_EPSILONS: Tuple[float, ...] = (0.1, 0.5, 1, 2, 5, 20, 50, 150, 300, 500, 800, 1000)
#: budgets of the case study's Table 1 (``inf`` is the non-private rule)
DEFAULT_CASE_EPSILONS: Tuple[float, ...] = (0.1, 0.5, 1.0, 2.0, 5.0, math.inf)
#: gammas of the case study's sensitivity figure
DEFAULT_SENSITIVITY_GAMMAS: Tuple[float, ...] = (1, 5, 10, 20, 30, 50, 75, 100, 150, 200, 300)
#: the project's default gamma grid (``tuning_algorithm2.md`` section 8)
DEFAULT_GAMMA_GRID: Tuple[float, ...] = (1, 2, 5, 10, 20, 30, 50, 75, 100, 150, 200, 300, 400, 600)

METRICS = ("value", "accuracy")
RULES = ("max", "one-se")
_BACKENDS = ("auto", "numba", "numpy")

C = TypeVar("C")


def _set(obj: Any, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)  # frozen dataclass: normalise once, in __post_init__


def _nonempty(name: str, values: Tuple[Any, ...]) -> Tuple[Any, ...]:
    if not values:
        raise ValueError(f"{name} must hold at least one value.")
    return values


def check_gamma_grid(name: str, values: Any) -> Tuple[float, ...]:
    grid = _nonempty(name, tuple(check_positive(name, v) for v in values))
    if len(set(grid)) != len(grid):
        raise ValueError(f"{name} must not repeat a candidate.")
    return grid


@dataclass(frozen=True)
class SimulationConfig:
    """Settings of the synthetic study of Fig. 1 (:func:`pydpowl.studies.simulation.run_simulation`).

    Parameters
    ----------
    ns : sequence of int, default=FIG1_NS
        Training sizes (each >= 2).
    epsilons : sequence of float, default=FIG1_EPSILONS
        Privacy budgets in (0, inf]; ``inf`` (non-private) is always added, and
        the stored tuple is sorted without repeats.
    reps : int, default=200
        Repetitions per n (each: a new training set and a new test set), >= 2.
    test_size : int, default=5000
        Rows of each test set.
    gamma_table : None, "authors", "pydpowl", path or GammaTable
        Gamma per (n, epsilon); None is the authors' tuned table.
    huber_h : float, default=0.5
    weights_upper_bound : float, default=30
        Public bound W (the authors' value for this design).
    backend : {"auto", "numba", "numpy"}, default="auto"
        Solver backend (see :func:`pydpowl.engine.solver.solve_weighted_erm`).
    """

    ns: Tuple[int, ...] = FIG1_NS
    epsilons: Tuple[float, ...] = FIG1_EPSILONS
    reps: int = 200
    test_size: int = 5000
    gamma_table: Any = None
    huber_h: float = 0.5
    weights_upper_bound: float = SYNTHETIC_WEIGHTS_UPPER_BOUND
    backend: str = "auto"

    def __post_init__(self) -> None:
        _set(self, "ns", _nonempty("ns", tuple(check_int("ns", n, minimum=2) for n in self.ns)))
        _set(self, "epsilons", tuple(sorted({check_epsilon(e, "epsilons") for e in self.epsilons} | {math.inf})))
        _set(self, "reps", check_int("reps", self.reps, minimum=2))
        _set(self, "test_size", check_int("test_size", self.test_size, minimum=1))
        _set(self, "huber_h", check_positive("huber_h", self.huber_h))
        _set(self, "weights_upper_bound", check_positive("weights_upper_bound", self.weights_upper_bound))
        check_choice("backend", self.backend, _BACKENDS)


@dataclass(frozen=True)
class GammaSearchConfig:
    """Settings of Algorithm 2 on public data D0 (:func:`pydpowl.studies.gamma_tuning.tune_gamma_table`).

    Parameters
    ----------
    ns : sequence of int
        Training sizes of the private fits (>= 1).
    epsilons : sequence of float
        Budgets of the private fits in (0, inf] (``inf``: non-private).
    gammas : sequence of float, default=DEFAULT_GAMMA_GRID
        Distinct candidates in (0, inf).
    m : int, optional
        Minimum validation size (>= 1); default ``n0 // 2``.
    r : int, default=200
        Repetitions per candidate (>= 2).
    metric : {"value", "accuracy"}, default="value"
    rule : {"max", "one-se"}, default="max"
    common_samples : bool, default=True
        Share the resampled training sets across candidates.
    redraw_split : bool, default=False
        Draw a new pool / validation split of D0 for every repetition.
    huber_h : float, default=0.5
    """

    ns: Tuple[int, ...]
    epsilons: Tuple[float, ...]
    gammas: Tuple[float, ...] = DEFAULT_GAMMA_GRID
    m: Optional[int] = None
    r: int = 200
    metric: str = "value"
    rule: str = "max"
    common_samples: bool = True
    redraw_split: bool = False
    huber_h: float = 0.5

    def __post_init__(self) -> None:
        _set(self, "ns", _nonempty("ns", tuple(check_int("ns", v, minimum=1) for v in self.ns)))
        _set(self, "epsilons", _nonempty("epsilons", tuple(check_epsilon(e, "epsilons") for e in self.epsilons)))
        _set(self, "gammas", check_gamma_grid("gammas", self.gammas))
        if self.m is not None:
            _set(self, "m", check_int("m", self.m, minimum=1))
        _set(self, "r", check_int("r", self.r, minimum=2))
        check_choice("metric", self.metric, METRICS)
        check_choice("rule", self.rule, RULES)
        _set(self, "common_samples", check_bool("common_samples", self.common_samples))
        _set(self, "redraw_split", check_bool("redraw_split", self.redraw_split))
        _set(self, "huber_h", check_positive("huber_h", self.huber_h))


@dataclass(frozen=True)
class CaseStudyConfig:
    """Settings of the case study's Table 1 (:func:`pydpowl.studies.casestudy.run_case_study`).

    Parameters
    ----------
    epsilons : sequence of float, default=(0.1, 0.5, 1, 2, 5, inf)
        Privacy budgets; ``inf`` is the non-private rule.
    gamma : float, default=75
    n_runs : int, default=200
        Private releases per finite epsilon (>= 1).
    huber_h : float, default=0.5
    """

    epsilons: Tuple[float, ...] = DEFAULT_CASE_EPSILONS
    gamma: float = 75.0
    n_runs: int = 200
    huber_h: float = 0.5

    def __post_init__(self) -> None:
        _set(self, "epsilons", _nonempty("epsilons", tuple(check_epsilon(e, "epsilons") for e in self.epsilons)))
        _set(self, "gamma", check_positive("gamma", self.gamma))
        _set(self, "n_runs", check_int("n_runs", self.n_runs, minimum=1))
        _set(self, "huber_h", check_positive("huber_h", self.huber_h))


@dataclass(frozen=True)
class SensitivityConfig:
    """Settings of the gamma-sensitivity figure (:func:`pydpowl.studies.casestudy.gamma_sensitivity`).

    Parameters
    ----------
    gammas : sequence of float, default=DEFAULT_SENSITIVITY_GAMMAS
    epsilons : sequence of float, default=(0.1, 0.5, 1, 2, 5, inf)
        ``inf`` gives the non-private rule of each gamma.
    n_runs : int, default=100
        Private releases per (gamma, finite epsilon), >= 2.
    huber_h : float, default=0.5
    """

    gammas: Tuple[float, ...] = DEFAULT_SENSITIVITY_GAMMAS
    epsilons: Tuple[float, ...] = DEFAULT_CASE_EPSILONS
    n_runs: int = 100
    huber_h: float = 0.5

    def __post_init__(self) -> None:
        _set(self, "gammas", _nonempty("gammas", tuple(check_positive("gammas", g) for g in self.gammas)))
        _set(self, "epsilons", _nonempty("epsilons", tuple(check_epsilon(e, "epsilons") for e in self.epsilons)))
        _set(self, "n_runs", check_int("n_runs", self.n_runs, minimum=2))
        _set(self, "huber_h", check_positive("huber_h", self.huber_h))


def resolve_config(kind: Type[C], config: Optional[C], settings: dict) -> C:
    """``config`` with ``settings`` applied, or a new ``kind`` built from ``settings``.

    Unknown setting names raise ``TypeError`` naming the valid ones.
    """
    valid = {f.name for f in fields(kind)}
    unknown = sorted(set(settings) - valid)
    if unknown:
        raise TypeError(f"unknown setting(s) {unknown} for {kind.__name__}; valid: {sorted(valid)}.")
    if config is None:
        return kind(**settings)
    if not isinstance(config, kind):
        raise TypeError(f"config must be a {kind.__name__}, got {type(config).__name__}.")
    return replace(config, **settings) if settings else config
