"""Tests of pydpowl.mdp_policy_evaluation._base (parameters, repr, result containers)."""

import dataclasses

import numpy as np
import pytest

from pydpowl.mdp_policy_evaluation import DPLSW, LSL, PolicyEvalDiagnostics, PolicyEvalSummary


def test_policy_evaluators_use_the_one_estimator_base():
    from sklearn.base import clone

    from pydpowl._base import DPEstimator

    assert isinstance(LSL(), DPEstimator) and isinstance(DPLSW(), DPEstimator)
    assert sorted(LSL().get_params()) == ["discount", "features", "regularization", "rho"]
    est = DPLSW(epsilon=0.3, random_state=3)
    assert clone(est).get_params() == est.get_params()


def test_repr_shows_only_non_default_parameters():
    assert repr(LSL()) == "LSL()"
    text = repr(LSL(discount=0.5, rho=np.ones(50)))
    assert text.startswith("LSL(") and "discount=0.5" in text and "rho=array(" in text and "features" not in text
    assert "random_state=Generator(PCG64)" in repr(DPLSW(random_state=np.random.default_rng(0)))


def test_set_params_rejects_unknown_names():
    with pytest.raises(ValueError, match=r"Invalid parameter 'epsilon' for estimator LSL\(\)"):
        LSL().set_params(epsilon=1.0)


def test_summary_is_frozen_and_has_no_data_fields():
    names = {f.name for f in dataclasses.fields(PolicyEvalSummary)}
    assert not names & {"sigma", "psi", "counts", "nonprivate_coef", "coef"}
    s = PolicyEvalSummary("DPLSW", True, 0.5, 0.1, 4, 2, 100, "smooth", "A", "spectral", 1.0, 0.01, 3.0, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.epsilon = 1.0
    assert dataclasses.asdict(s)["n_episodes"] == 100
    assert "m = 100 episodes" in str(s) and "lambda" not in str(s)


def test_diagnostics_repr_hides_values():
    d = PolicyEvalDiagnostics(sigma=123.456, psi=0.5, psi_argmax=2, phi0=0.25,
                              counts=np.array([7, 8]), nonprivate_coef=np.array([0.9876]))
    assert "123.456" not in repr(d) and "0.9876" not in repr(d) and "private" in repr(d)
