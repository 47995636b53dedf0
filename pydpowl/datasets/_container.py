"""The dataset container shared by the generators and loaders."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray


@dataclass(frozen=True)
class OWLData:
    """Everything a DP-OWL analysis needs, with the public settings that go with it.

    Attributes
    ----------
    X : DataFrame of shape (n, p)
        Features.
    treatment : ndarray of shape (n,)
        Received treatment in {-1, 1}.
    benefit : ndarray of shape (n,)
        Non-negative benefit (larger is better).
    propensity : ndarray of shape (n,)
        P(A_i | x_i) of the received treatment.
    weight_sensitivity : float or None
        The C these propensities imply (``DPOWL(weight_sensitivity=...)``): 0
        when they are the known randomisation probabilities of a trial (the
        generators and loaders here), a stated bound when they were estimated
        on these data, None when nobody has stated it (a fit then refuses).
    feature_bounds : tuple of ndarray
        Public (lower, upper) bounds of the features.
    weights_upper_bound : float
        Public bound W on B / P(A | x).
    optimal : ndarray of shape (n,) or None
        The true optimal treatment, when the data are simulated.
    description : str
        One line saying what the data are (public: no count computed from the data).
    notes : tuple of str
        Coding choices and what is clipped or shifted (public statements, no counts).
    diagnostics : dict of str to int
        Counts computed from the data (rows read, subjects per arm, values
        clipped or dropped by a loader). NOT private: for the analyst's eyes
        only; ``pydpowl`` commands print them with ``--diagnostics``, in a
        section labelled non-private, and never write them to a file.
    """

    X: pd.DataFrame
    treatment: NDArray[np.float64]
    benefit: NDArray[np.float64]
    propensity: NDArray[np.float64]
    feature_bounds: Tuple[NDArray[np.float64], NDArray[np.float64]]
    weights_upper_bound: float
    optimal: Optional[NDArray[np.float64]] = None
    description: str = ""
    weight_sensitivity: Optional[float] = None
    notes: Tuple[str, ...] = field(default_factory=tuple)
    diagnostics: Dict[str, int] = field(default_factory=dict)

    @property
    def bounds_by_name(self) -> Dict[str, Tuple[float, float]]:
        """The public feature bounds by column name, ``{column: (lower, upper)}``: estimators match them to a
        DataFrame's columns in any order (``feature_bounds=data.bounds_by_name``)."""
        lower, upper = self.feature_bounds
        return {str(c): (float(lo), float(hi)) for c, lo, hi in zip(self.X.columns, lower, upper)}

    @property
    def n(self) -> int:
        """Number of subjects."""
        return int(self.X.shape[0])


@dataclass(frozen=True)
class DesignTruth:
    """A simulation design's truth: the covariate law and the mean benefit of each arm.

    The covariate law is a weighted set of support points (exact for a discrete
    law, a fixed quasi-Monte Carlo sample for a continuous one), so the value of
    any rule, ``V(d) = E[B(d(X))]``, is a weighted sum.

    Attributes
    ----------
    X : ndarray of shape (m, p)
        Support points.
    weight : ndarray of shape (m,)
        Their probabilities (summing to 1).
    mean_plus, mean_minus : ndarray of shape (m,)
        ``E[B | x, A = +1]`` and ``E[B | x, A = -1]`` (of the benefit clipped to the
        public bounds, when the truth was built with them).
    description : str
    """

    X: NDArray[np.float64]
    weight: NDArray[np.float64]
    mean_plus: NDArray[np.float64]
    mean_minus: NDArray[np.float64]
    description: str = ""

    def value(self, recommends_plus: NDArray[np.bool_]) -> float:
        """``V(d)`` of a rule given by its recommendations at the support points (True = +1)."""
        plus = np.asarray(recommends_plus, dtype=bool)
        return float(self.weight @ np.where(plus, self.mean_plus, self.mean_minus))

    def linear_rule_value(self, intercept: float, coef: NDArray[np.float64]) -> float:
        """``V(d)`` of the rule ``+1 where intercept + x'coef > 0``."""
        return self.value(self.X @ np.asarray(coef, dtype=np.float64) + float(intercept) > 0)

    def arm_value(self, arm: int) -> float:
        """Value of giving everyone ``arm`` (+1 or -1)."""
        return float(self.weight @ (self.mean_plus if arm > 0 else self.mean_minus))

    @property
    def optimal_value(self) -> float:
        """Value of the optimal rule ``argmax_a E[B | x, a]``."""
        return float(self.weight @ np.maximum(self.mean_plus, self.mean_minus))
