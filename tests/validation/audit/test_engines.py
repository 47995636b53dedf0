"""Quick black-box audit of both engines on pairs whose exact privacy loss is known.

The werm pair (linear zone of the Huber hinge) moves the minimiser by exactly
Delta, so its exact privacy loss is the claimed epsilon: a release with the
right noise must give a lower bound <= epsilon, and noise for 4 epsilon must be
flagged. The same pairs are audited through DPpack (R).
"""

import json

import numpy as np
import pytest

from validation.audit.__main__ import main as audit_main
from validation.audit.configs import Dataset, default_configs
from validation.audit.report import write_report
from validation.audit.run import AuditResult, black_box_row, floating_rows
from validation.audit.sensitivity import sensitivity_search

CONFIGS = {c.name: c for c in default_configs()}
N_SPLIT = 2500


def _linear_zone_pair():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(20, 3))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    X[0] = np.array([1.0, 2.0, -2.0]) / 3.0
    w = np.full(20, 0.3)
    w[0] = 1.0
    D = Dataset(X, np.tile([1.0, -1.0], 10), w)
    return D, D.with_record(0, X[0], -1.0, 1.0)


def _owl_pair():
    config = CONFIGS["owl-intercept"]
    rng = np.random.default_rng(8)
    D = config.random_dataset(rng)
    lo, hi = config.bounds
    return D, D.with_record(0, hi.copy(), -D.y[0], config.benefit_bound)  # corner, top benefit, label flipped


@pytest.fixture(scope="module")
def pydpowl_rows():
    config = CONFIGS["werm-huber-strong"]
    D, D1 = _linear_zone_pair()
    row = black_box_row(config, D, D1, epsilon=1.0, engine="pydpowl", n_per_split=N_SPLIT, seed=10)
    control = black_box_row(config, D, D1, epsilon=1.0, engine="pydpowl", n_per_split=N_SPLIT, seed=10 + 4 * N_SPLIT,
                            noise_epsilon=4.0, control=True)
    return row, control


def test_pydpowl_release_does_not_exceed_its_claim(pydpowl_rows):
    row, _ = pydpowl_rows
    assert row.ideal == pytest.approx(1.0, abs=1e-8)  # 1 - 2e-9: Delta's solver-tolerance term
    assert row.epsilon_lb <= 1.0, f"pydpowl: empirical lower bound {row.epsilon_lb:.3f} > claimed 1"
    assert row.epsilon_lb >= 0.4, f"pydpowl: lower bound {row.epsilon_lb:.3f} < 0.4: the audit lost its power"
    assert row.verdict == "PASS"


def test_broken_noise_is_flagged(pydpowl_rows):
    _, control = pydpowl_rows
    assert control.epsilon_lb > 1.0 and control.verdict == "FLAGGED (expected)" and control.passed


def test_report_files(pydpowl_rows, tmp_path):
    row, control = pydpowl_rows
    search = sensitivity_search(CONFIGS["werm-huber-strong"], seed=1, bases=("random",), n_random=4, n_starts=1,
                                maxiter=5, n_replaced=1)
    result = AuditResult(sensitivity=[search], black_box=[row, control], n_per_split=N_SPLIT, alpha=0.05, seed=10,
                         seconds=1.0)
    md = write_report(result, tmp_path)
    text = md.read_text()
    assert "### Sensitivity" in text and "### Black-box" in text and "FLAGGED (expected)" in text
    assert "| werm-huber-strong | pydpowl | 1 |" in text
    assert (tmp_path / "audit_epsilon.png").stat().st_size > 5000
    numbers = json.loads((tmp_path / "audit.json").read_text())
    assert numbers["passed"] is True and numbers["black_box"][0]["epsilon_lb"] == row.epsilon_lb
    assert len(numbers["sensitivity"][0]["D"]["X"]) == 20


@pytest.mark.parametrize("argv", [["--n", "10"], ["--alpha", "1.5"]])
def test_cli_refuses_bad_settings(argv, tmp_path, capsys):
    assert audit_main(argv + ["--out", str(tmp_path), "--no-r"]) == 2
    assert "error:" in capsys.readouterr().err


@pytest.mark.r
def test_dppack_weighted_erm_does_not_exceed_its_claim(require_r):
    require_r("DPpack")
    config = CONFIGS["werm-huber-strong"]
    D, D1 = _linear_zone_pair()
    row = black_box_row(config, D, D1, epsilon=1.0, engine="DPpack", n_per_split=N_SPLIT, seed=1)
    assert row.ideal == pytest.approx(1.0, abs=1e-3), f"DPpack's minimisers are {row.ideal:.5f} Delta apart, not 1"
    assert row.epsilon_lb <= 1.0, f"DPpack: empirical lower bound {row.epsilon_lb:.3f} > claimed 1"
    assert row.epsilon_lb >= 0.4, f"DPpack: lower bound {row.epsilon_lb:.3f} < 0.4: the audit lost its power"


@pytest.mark.r
def test_dppack_svmdp_and_pydpowl_owl_on_the_same_neighbours(require_r):
    require_r("DPpack")
    config = CONFIGS["owl-intercept"]
    D, D1 = _owl_pair()
    r_row = black_box_row(config, D, D1, epsilon=1.0, engine="DPpack", n_per_split=400, seed=1)
    py_row = black_box_row(config, D, D1, epsilon=1.0, engine="pydpowl", n_per_split=400, seed=1)
    assert r_row.ideal == pytest.approx(py_row.ideal, abs=0.01), "the engines disagree on the neighbours' minimisers"
    for row in (r_row, py_row):
        assert row.epsilon_lb <= 1.0, f"{row.engine}: lower bound {row.epsilon_lb:.3f} > claimed 1"


def test_bit_level_rows_cover_each_released_attribute():
    config = CONFIGS["owl-intercept"]
    D, D1 = _owl_pair()
    rows = floating_rows(config, D, D1, epsilon=1.0, engine="pydpowl", n_per_split=300, seed=3)
    names = ["scaled_coef_", "summary()", "intercept_, coef_", "JSON export"]
    assert [(r.attribute, r.grid is None) for r in rows] == [(a, raw) for a in names for raw in (True, False)]
    assert all(r.bound.n_eval == 300 for r in rows)
    assert all(r.bound.epsilon_lb <= 1.0 for r in rows if r.grid is not None), "rounded releases must not leak"
