import math

import pytest

from pydpowl.studies.config import (
    CaseStudyConfig,
    GammaSearchConfig,
    SensitivityConfig,
    SimulationConfig,
    check_gamma_grid,
    resolve_config,
)


def test_simulation_config_normalises_and_always_adds_inf():
    cfg = SimulationConfig(ns=[500, 200], epsilons=[5, 1, 5], reps=3)
    assert cfg.ns == (500, 200) and cfg.epsilons == (1.0, 5.0, math.inf) and cfg.reps == 3


@pytest.mark.parametrize("kind, field, value, message", [
    (SimulationConfig, "reps", 1, r"reps must be"),
    (SimulationConfig, "ns", [], r"ns must hold at least one value"),
    (SimulationConfig, "backend", "gpu", r"backend must be one of \['auto', 'numba', 'numpy'\], got backend='gpu'"),
    (SimulationConfig, "epsilons", [0.0], r"epsilons must be in \(0, inf\]"),
    (CaseStudyConfig, "gamma", -1.0, r"gamma must be in \(0, inf\), got gamma=-1.0"),
    (CaseStudyConfig, "n_runs", 0, r"n_runs must be"),
    (SensitivityConfig, "gammas", [], r"gammas must hold at least one value"),
    (SensitivityConfig, "n_runs", 1, r"n_runs must be"),
])
def test_bad_settings_are_named(kind, field, value, message):
    with pytest.raises(ValueError, match=message):
        kind(**{field: value})


def test_gamma_search_config_checks_every_field():
    ok = GammaSearchConfig(ns=[100], epsilons=[1.0, math.inf], gammas=[5, 1])
    assert ok.gammas == (5.0, 1.0) and ok.m is None and ok.rule == "max"
    with pytest.raises(ValueError, match="gammas must not repeat a candidate"):
        GammaSearchConfig(ns=[100], epsilons=[1.0], gammas=[5, 5])
    with pytest.raises(ValueError, match=r"metric must be one of \['value', 'accuracy'\]"):
        GammaSearchConfig(ns=[100], epsilons=[1.0], metric="auc")
    with pytest.raises(ValueError, match=r"rule must be one of"):
        GammaSearchConfig(ns=[100], epsilons=[1.0], rule="min")
    with pytest.raises(TypeError, match="redraw_split must be"):
        GammaSearchConfig(ns=[100], epsilons=[1.0], redraw_split="yes")


def test_resolve_config_builds_overrides_and_refuses_unknown_names():
    base = CaseStudyConfig(gamma=30.0)
    assert resolve_config(CaseStudyConfig, None, {"gamma": 5}).gamma == 5.0
    assert resolve_config(CaseStudyConfig, base, {}) is base
    assert resolve_config(CaseStudyConfig, base, {"n_runs": 7}) == CaseStudyConfig(gamma=30.0, n_runs=7)
    with pytest.raises(TypeError, match=r"unknown setting\(s\) \['gama'\] for CaseStudyConfig"):
        resolve_config(CaseStudyConfig, None, {"gama": 5})
    with pytest.raises(TypeError, match="config must be a CaseStudyConfig, got SensitivityConfig"):
        resolve_config(CaseStudyConfig, SensitivityConfig(), {})


def test_choice_and_grid_helpers():
    assert check_gamma_grid("gammas", [1, 2.5]) == (1.0, 2.5)
    with pytest.raises(ValueError, match=r"gammas must be in \(0, inf\)"):
        check_gamma_grid("gammas", [1, -2])
