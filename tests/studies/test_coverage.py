"""Tests of pydpowl.studies.coverage (a tiny run; the full grid is ``make coverage``)."""

import math

import pandas as pd
import pytest

from pydpowl.studies.coverage import coverage_table, main, run_coverage, summarise_coverage


@pytest.fixture(scope="module")
def rows():
    return run_coverage(designs=("synthetic", "cyp"), ns=(600,), epsilons=(1.0,), reps=12, random_state=3)


def test_rows_compare_each_interval_with_the_truth_of_its_released_rule(rows):
    assert len(rows) == 24 and set(rows.design) == {"synthetic", "cyp"}
    covered = (rows.value_low <= rows.value_true) & (rows.value_true <= rows.value_high)
    assert (covered == rows.value_covered).all()
    assert (rows.value_width == rows.value_high - rows.value_low).all()
    assert (rows.diff_true == rows.value_true - rows.best_arm_value).all()
    assert (rows.spent <= 1.0 + 1e-12).all()
    assert rows.value_true.nunique() > 1, "every replication releases its own rule"


def test_summary_has_coverage_with_monte_carlo_error_and_widths(rows):
    s = summarise_coverage(rows)
    assert len(s) == 2
    for r in s.itertuples():
        assert r.reps == 12 and 0 <= r.value_coverage <= 1
        assert r.value_mc_se == pytest.approx(math.sqrt(r.value_coverage * (1 - r.value_coverage) / 12))
    text = coverage_table(s)
    assert text.count("\n") == 3 and "± " in text


def test_main_writes_the_tables(tmp_path, capsys):
    assert main(["--out", str(tmp_path), "--reps", "3", "--ns", "400", "--epsilons", "2", "--designs", "cyp",
                 "--no-progress"]) == 0
    assert (tmp_path / "coverage.md").read_text().startswith("# Coverage of the private analysis")
    assert len(pd.read_csv(tmp_path / "coverage_replications.csv")) == 3
