"""Feature matrices for finite state spaces: tabular and state aggregation."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .._validation import check_int

__all__ = ["tabular_features", "aggregated_features", "make_features"]


def tabular_features(n_states: int) -> NDArray[np.float64]:
    """Identity features ``Phi = I_N`` (one indicator per state)."""
    n = check_int("n_states", n_states, minimum=1)
    return np.eye(n)


def aggregated_features(n_states: int, group_size: int = 2) -> NDArray[np.float64]:
    """State aggregation: feature ``j`` is 1 on states ``g j, ..., g j + g - 1``.

    Parameters
    ----------
    n_states : int
        ``N``; must be a multiple of ``group_size``.
    group_size : int, default=2
        Number of adjacent states per feature, so ``d = N / group_size``.
    """
    n = check_int("n_states", n_states, minimum=1)
    g = check_int("group_size", group_size, minimum=1)
    if n % g:
        raise ValueError(
            f"n_states must be a multiple of group_size={g} for aggregated features, "
            f"got n_states={n}."
        )
    return np.kron(np.eye(n // g), np.ones((g, 1)))


def make_features(kind: str, n_states: int) -> NDArray[np.float64]:
    """``"tabular"`` -> :func:`tabular_features`; ``"aggregated"`` -> pairs of states."""
    if kind == "tabular":
        return tabular_features(n_states)
    if kind == "aggregated":
        return aggregated_features(n_states, 2)
    raise ValueError(f"features must be one of ('tabular', 'aggregated'), got features={kind!r}.")
