"""The dataset container shared by the generators and loaders."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Tuple

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
        One line saying what the data are.
    notes : tuple of str
        Coding choices and anything clipped or shifted.
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

    @property
    def n(self) -> int:
        """Number of subjects."""
        return int(self.X.shape[0])
