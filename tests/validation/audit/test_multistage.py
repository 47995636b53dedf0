"""The multi-stage regime audited black-box (validation.audit.multistage)."""

import numpy as np
import pytest

from validation.audit.multistage import (MultiStageAuditConfig, audit_regime, multistage_audit_configs,
                                         neighbouring_regime_datasets, regime_release, run_multistage_audit)


def test_neighbours_differ_in_subject_zero_only_and_flip_its_label():
    config = multistage_audit_configs()[0]
    (X, A, R), (X1, A1, R1) = neighbouring_regime_datasets(config, seed=3)
    np.testing.assert_array_equal(X, X1)
    for k in range(2):
        assert np.flatnonzero(A[k] != A1[k]).tolist() == [0] and A[k][0] == 1.0 and A1[k][0] == -1.0
        np.testing.assert_array_equal(R[k], R1[k])  # the largest reward in both: the residual label A sign(r) flips
        assert R[k][0] == 1.0
    assert np.all(X[0] == 1.0)


def test_release_holds_both_rules_and_both_baselines():
    default, output = multistage_audit_configs()
    D, _ = neighbouring_regime_datasets(default)
    assert regime_release(default, D, seed=1).shape == (2 * (default.p + 1) + 2,)
    assert regime_release(output, D, seed=1).shape == (2 * (output.p + 1),)  # no baseline
    assert default.fit(D, seed=1).privacy_spent_[0] == pytest.approx(default.total_epsilon)


@pytest.mark.parametrize("config", multistage_audit_configs(), ids=lambda c: c.name)
def test_honest_regimes_pass(config):
    row = audit_regime(config, n_per_split=300, seed=11)
    assert row.claimed == pytest.approx(1.0) and row.passed and not row.control


@pytest.mark.slow
def test_the_control_is_flagged():
    rows = run_multistage_audit(n_per_split=1000, seed=5, configs=[multistage_audit_configs()[1]])
    assert rows[0].passed
    assert rows[-1].control and rows[-1].violates and rows[-1].passed, rows[-1]


def test_the_output_configuration_releases_by_output_perturbation():
    config = MultiStageAuditConfig(name="x", title="x", mechanism="output", gamma=50.0)
    assert config.fit(neighbouring_regime_datasets(config)[0], seed=0).stages_[0].mechanism == "output"
