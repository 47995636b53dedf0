"""Tests of pydpowl.mdp_policy_evaluation.features."""

import numpy as np
import pytest

from pydpowl.mdp_policy_evaluation.features import aggregated_features, make_features, tabular_features


def test_tabular_is_identity():
    assert np.array_equal(tabular_features(4), np.eye(4))


def test_aggregated_pairs_adjacent_states():
    phi = aggregated_features(6)
    assert phi.shape == (6, 3)
    for s in range(6):
        assert np.flatnonzero(phi[s]).tolist() == [s // 2], f"state {s} row {phi[s]}"
    assert np.linalg.norm(phi, 2) == pytest.approx(np.sqrt(2))


def test_aggregated_group_size_three():
    assert aggregated_features(9, 3).sum(axis=0).tolist() == [3, 3, 3]


def test_odd_states_for_pairs_raise():
    with pytest.raises(ValueError, match=r"n_states must be a multiple of group_size=2.*n_states=5"):
        aggregated_features(5)


def test_make_features_dispatch_and_error():
    assert make_features("tabular", 3).shape == (3, 3)
    assert make_features("aggregated", 4).shape == (4, 2)
    with pytest.raises(ValueError, match=r"features must be one of \('tabular', 'aggregated'\)"):
        make_features("rbf", 4)
