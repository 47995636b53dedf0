"""The multi-arm and multi-stage study (pydpowl.studies.multi_designs) and its command."""

import math

import numpy as np
import pytest

from pydpowl.cli import main
from pydpowl.studies.multi_designs import KStageDesign, MultiarmDesign, run_multi_study


def test_multiarm_design_values():
    design = MultiarmDesign(np.random.default_rng(0))
    test = design.test_set(20000, np.random.default_rng(1))
    best = design.best(test)
    assert abs(design.value(best, test) - 3.0) < 0.02  # 1 + 2 P(d = d*) with E x1 = 0
    assert abs(design.value((best + 1) % 3, test) - 1.0) < 0.02
    assert np.bincount(best, minlength=3).min() > 6000  # three sectors of equal size


def test_kstage_design_optimal_regime_has_value_T():
    design = KStageDesign(np.random.default_rng(0))
    X, cluster = design.test_set(5000, np.random.default_rng(1))
    optimal = design.optimal[:, cluster].T
    assert design.value(optimal, (X, cluster)) == pytest.approx(2.0)
    assert design.value(-optimal, (X, cluster)) == pytest.approx(-2.0)
    # sim_Kstage's rule: cluster c (1-based) -> 2 (floor(c / (2k - 1)) mod 2) - 1
    np.testing.assert_array_equal(design.optimal[0], [2 * ((c // 1) % 2) - 1 for c in range(1, 11)])
    np.testing.assert_array_equal(design.optimal[1], [2 * ((c // 3) % 2) - 1 for c in range(1, 11)])


@pytest.mark.parametrize("design", ["multiarm", "kstage"])
def test_study_rows_and_the_nonprivate_reference(design):
    result = run_multi_study(design, [400], [1.0, math.inf], reps=2, test_size=2000)
    t = result.table
    assert list(t.epsilon) == [1.0, math.inf]
    inf_row = t[t.epsilon == math.inf].iloc[0]
    assert inf_row.agreement == 1.0 and inf_row.value == pytest.approx(inf_row.value_nonprivate)
    assert len(result.raw) == 2 * 2


def test_command_writes_table_and_figure(tmp_path, capsys):
    assert main(["simulate", "--design", "multiarm", "--n", "300", "--reps", "2", "--eps", "2", "--test-size",
                 "1000", "--out", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "multiarm study (mechanism: auto): n in [300], 2 repetitions" in out
    assert (tmp_path / "multiarm.csv").exists() and (tmp_path / "multiarm.png").stat().st_size > 1000


def test_objective_default_beats_output_on_the_kstage_design():
    """The reason for the default: on DTRlearn2's sim_Kstage design (n = 2000, epsilon = 2) the private regime
    with objective perturbation and residual weights has a far higher value than output perturbation's."""
    res = {mech: run_multi_study("kstage", [2000], [2.0], reps=6, test_size=5000, mechanism=mech).table
           for mech in ("auto", "output")}
    auto = res["auto"].set_index("epsilon").loc[2.0]
    output = res["output"].set_index("epsilon").loc[2.0]
    assert auto.value > output.value + 0.3, (auto, output)
    assert auto.agreement > output.agreement + 0.1, (auto, output)


def test_command_takes_the_mechanism(tmp_path, capsys):
    assert main(["simulate", "--design", "kstage", "--n", "300", "--reps", "2", "--eps", "2", "--test-size",
                 "1000", "--mechanism", "output", "--out", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "kstage study (mechanism: output): n in [300], 2 repetitions" in out
    with pytest.raises(SystemExit):
        main(["simulate", "--design", "kstage", "--mechanism", "objective", "--out", str(tmp_path)])
