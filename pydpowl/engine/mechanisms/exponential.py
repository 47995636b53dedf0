"""The exponential mechanism: select an index with probability proportional to ``exp(epsilon s_k / (2 Delta_s))``.

Used by private tuning (:mod:`pydpowl.privacy.tuning`), private gamma
selection (:mod:`pydpowl.privacy.selection`) and DPpack's ``tune_*`` replay
(:mod:`pydpowl.dppack`).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..._validation import check_positive
from ._common import r_cumsum, r_sum

__all__ = ["exponential_mechanism"]


def exponential_mechanism(scores: Sequence[float], *, epsilon: float, sensitivity: float, rng: Any) -> int:
    """Index k drawn with probability proportional to ``exp(epsilon * s_k / (2 * sensitivity))``.

    Implemented by inversion with one uniform draw (the first k whose cumulative
    probability reaches u), in the arithmetic of DPpack's
    ``ExponentialMechanism(utility, eps, sensitivity)``: scores minus their
    maximum, ``exp(eps * u / (2 * sens))``, normalised by their sum, cumulated
    (sums in long double, as R's ``sum`` and ``cumsum``), then
    ``which.max(runif(1) <= cumsum(p))``. Works with a numpy Generator and with
    an R-compatible :class:`pydpowl.RRandom` (then it is DPpack's draw).

    Parameters
    ----------
    scores : sequence of float
        Utilities (larger is better), finite.
    epsilon : float
        Budget in (0, inf).
    sensitivity : float
        Largest change of any score when one record is replaced, in (0, inf).
    rng : numpy.random.Generator or RRandom

    Returns
    -------
    int
        The selected index (0-based).
    """
    eps = check_positive("epsilon", epsilon)
    sens = check_positive("sensitivity", sensitivity)
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1 or s.size == 0 or not np.all(np.isfinite(s)):
        raise ValueError("scores must be a non-empty 1-D array of finite numbers.")
    p = np.exp(eps * (s - s.max()) / (2.0 * sens))
    total = r_sum(p)
    cumulative = r_cumsum(p / total)
    u = float(rng.uniform())
    hits = np.flatnonzero(u <= cumulative)
    return int(hits[0]) if hits.size else 0  # R's which.max of all FALSE is the first index
