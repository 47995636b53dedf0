"""The utility study (pydpowl.studies.utility)."""

import math

import numpy as np
import pytest

from pydpowl.estimators.owl_defaults import OBJECTIVE_HUBER_H
from pydpowl.estimators.residual import RESIDUAL_CLIP_SHARE, ResidualWeights
from pydpowl.studies.utility import DESIGNS, MECHANISMS, run_cell, run_utility


def test_the_default_mechanism_is_dpowls_default():
    m = MECHANISMS["default"]
    assert (m.perturbation, m.residual, m.huber_h) == ("objective", ResidualWeights(), OBJECTIVE_HUBER_H)
    assert m.residual.clip_share == RESIDUAL_CLIP_SHARE
    assert MECHANISMS["output"].perturbation == "output" and MECHANISMS["output"].residual is None


def test_a_cell_is_deterministic_and_its_scores_are_regrets_and_shares():
    a = run_cell("cyp", 300, [1.0], ["output", "default"], 3, seed=5)
    b = run_cell("cyp", 300, [1.0], ["output", "default"], 3, seed=5)
    for key, r in a["regret"].items():
        np.testing.assert_array_equal(r, b["regret"][key])
        assert np.all(r >= -1e-12)  # V(rule) <= V*
        assert np.all((a["agreement"][key] >= 0) & (a["agreement"][key] <= 1 + 1e-12))
    truth = DESIGNS["cyp"].truth
    assert a["best_arm_regret"] == pytest.approx(truth.optimal_value - max(truth.arm_value(1), truth.arm_value(-1)))
    assert ("default", 1.0, "public") in a["regret"] and ("output", 1.0, "grid 3") in a["regret"]


def test_the_table_has_public_oracle_and_reference_rows():
    res = run_utility(designs=["synthetic"], ns=[200], epsilons=[1.0], mechanisms=["objective"], reps=2, seed=1)
    t = res.table
    rules = set(t[t.mechanism == "objective"].gamma_rule)
    assert {"public", "oracle", "grid"} <= rules
    oracle = t[(t.mechanism == "objective") & (t.gamma_rule == "oracle")].regret_mean.iloc[0]
    assert oracle == t[(t.mechanism == "objective") & (t.gamma_rule == "grid")].regret_mean.min()
    assert set(t.mechanism) == {"objective", "nonprivate", "best-arm"}
    assert t[t.mechanism == "best-arm"].regret_mean.iloc[0] == pytest.approx(2.24, abs=0.02)  # issue 24's figure
    assert math.isinf(t[t.mechanism == "nonprivate"].epsilon.iloc[0])
    assert list(res.summary().columns) == ["objective", "best-arm", "nonprivate"]
    with pytest.raises(ValueError, match="designs"):
        run_utility(designs=["nope"], reps=2)
