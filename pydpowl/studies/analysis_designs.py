"""The two simulation designs of the private-analysis studies, with their public settings and truth.

* ``"synthetic"``: the paper's design (:func:`pydpowl.datasets.make_synthetic_owl`),
  benefits *not* shifted by the data's minimum (that shift is not public) but
  clipped to the public bounds [-10, 10] (the mean benefit lies in [-9, 9.03]
  and the noise SD is 0.5); P(A = +1) = 1/2; W = 20 / (1/2) = 40, so no
  weight is clipped; features in [0, 1]^4.
* ``"cyp"``: the CYP-GUIDES-style generator (preset "guided"), benefit
  ``log(24*365) - log(LOS)`` with the public bounds [0, log(24*365)], features
  with the paper's bounds, W = log(24*365) / (1/3) (the paper's). The generator
  assigns exactly ``round(n * 982 / 1459)`` subjects to the guided arm at
  random (complete randomisation), so ``P(A = +1) = round(n * 982 / 1459) / n``
  for every subject; that is the propensity the analysis is given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Tuple

import numpy as np

from ..datasets import (CYP_FEATURE_BOUNDS, CYP_WEIGHTS_UPPER_BOUND, DesignTruth, OWLData, cyp_guides_style_truth,
                        make_cyp_guides_style, make_synthetic_owl, synthetic_truth)

__all__ = ["AnalysisDesign", "DESIGNS", "get_design"]


@dataclass(frozen=True)
class AnalysisDesign:
    """A design, its public settings and its truth."""

    name: str
    title: str
    benefit_bounds: Tuple[float, float]
    weights_upper_bound: float
    feature_bounds: Tuple[np.ndarray, np.ndarray]
    _draw: Callable[[int, Any], OWLData]
    _propensity: Callable[[int], float]
    _truth: Callable[[], DesignTruth]

    def draw(self, n: int, rng: Any) -> OWLData:
        """One dataset of n subjects (raw benefits)."""
        return self._draw(n, rng)

    def propensity(self, n: int) -> float:
        """``P(A = +1)`` of every subject of a dataset of n."""
        return self._propensity(n)

    @property
    def truth(self) -> DesignTruth:
        """Exact truth (benefits clipped to the public bounds)."""
        return self._truth()


_LOG_YEAR = math.log(24 * 365)


@lru_cache(maxsize=None)
def _synthetic_truth() -> DesignTruth:
    return synthetic_truth(benefit_bounds=(-10.0, 10.0))


@lru_cache(maxsize=None)
def _cyp_truth() -> DesignTruth:
    return cyp_guides_style_truth("guided", benefit_bounds=(0.0, _LOG_YEAR))


DESIGNS = {
    "synthetic": AnalysisDesign(
        name="synthetic", title="paper's synthetic design (p = 4, P(+1) = 1/2, B clipped to [-10, 10])",
        benefit_bounds=(-10.0, 10.0), weights_upper_bound=40.0, feature_bounds=(np.zeros(4), np.ones(4)),
        _draw=lambda n, rng: make_synthetic_owl(n, shift=None, random_state=rng), _propensity=lambda n: 0.5,
        _truth=_synthetic_truth),
    "cyp": AnalysisDesign(
        name="cyp", title="CYP-GUIDES-style design (preset 'guided', 982:477 allocation, B in [0, log 8760])",
        benefit_bounds=(0.0, _LOG_YEAR), weights_upper_bound=CYP_WEIGHTS_UPPER_BOUND,
        feature_bounds=(CYP_FEATURE_BOUNDS[0].copy(), CYP_FEATURE_BOUNDS[1].copy()),
        _draw=lambda n, rng: make_cyp_guides_style(n, random_state=rng),
        _propensity=lambda n: round(n * 982 / 1459) / n, _truth=_cyp_truth),
}


def get_design(name: str) -> AnalysisDesign:
    """The design called ``name`` ("synthetic" or "cyp")."""
    if name not in DESIGNS:
        raise ValueError(f"design must be one of {sorted(DESIGNS)}, got design={name!r}.")
    return DESIGNS[name]
