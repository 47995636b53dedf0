"""Quick audit of the whole private analysis as one mechanism (validation.audit.analysis).

The full audit (more releases, three views, two configurations) runs in
``make audit-full``; here the sharpest view (record 0 in the evaluation part)
and the negative control, with fewer releases.
"""

import numpy as np
import pytest

from validation.audit.analysis import (AnalysisAuditConfig, analysis_release, analysis_table, audit_analysis,
                                       audit_statistic, neighbouring_datasets)

CONFIG = AnalysisAuditConfig(name="analysis-known", title="quick", gamma=2.0)
N_SPLIT = 300


@pytest.fixture(scope="module")
def rows():
    return (audit_analysis(CONFIG, mode="evaluation", n_per_split=N_SPLIT, seed=11),
            audit_analysis(CONFIG, mode="evaluation", n_per_split=N_SPLIT, seed=12, control=True))


def test_lower_bound_does_not_exceed_the_ledger_total(rows):
    row, _ = rows
    assert row.claimed == 1.0, "the ledger of the audited analysis spends E = 1"
    assert row.epsilon_lb <= row.claimed and row.verdict == "PASS"


def test_an_analysis_weaker_than_claimed_is_flagged(rows):
    _, control = rows
    assert control.noise_epsilon == 4.0 and control.claimed == 1.0
    assert control.epsilon_lb > 1.0 and control.verdict == "FLAGGED (expected)" and control.passed
    assert "control" in analysis_table(list(rows))


def test_neighbours_differ_in_record_zero_only():
    (X, A, B), (X1, A1, B1) = neighbouring_datasets(CONFIG, seed=3)
    assert np.array_equal(X, X1)
    diff = (A != A1) | (B != B1)
    assert diff[0] and not diff[1:].any()
    assert (A[0], B[0], A1[0], B1[0]) == (1.0, 1.0, -1.0, 0.0)


def test_release_vector_holds_rule_gamma_and_value_cells():
    D, _ = neighbouring_datasets(CONFIG, seed=3)
    v = analysis_release(CONFIG, D, seed=1, evaluation_rows=np.arange(20))
    assert v.shape == (3 + 1 + 8,)
    model_cfg = AnalysisAuditConfig(name="m", title="m", propensity=None, propensity_model="logistic", gamma=2.0)
    assert analysis_release(model_cfg, D, seed=1).shape == (3 + 1 + 3 + 8,)


def test_the_statistic_is_chosen_on_the_first_halves_only():
    rng = np.random.default_rng(0)
    R0, R1 = rng.laplace(size=(400, 3)), rng.laplace(size=(400, 3))
    R1[:, 0] += 1.0
    a0, a1 = audit_statistic(R0, R1)
    R0b, R1b = R0.copy(), R1.copy()
    R0b[200:] = rng.laplace(size=(200, 3))  # new evaluation halves: the map must not change
    b0, b1 = audit_statistic(R0b, R1b)
    assert np.array_equal(a0[:200], b0[:200]) and np.array_equal(a1, b1)
