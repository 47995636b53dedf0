"""Tests of pydpowl.plotting.studies: every figure is written as a PNG."""

import math

import pandas as pd

from pydpowl.studies.casestudy import gamma_sensitivity, run_case_study
from pydpowl.datasets import make_cyp_guides_style, make_synthetic_owl
from pydpowl.plotting.studies import plot_case_study, plot_gamma_sensitivity, plot_simulation, plot_tuning_curves
from pydpowl.studies.simulation import run_simulation
from pydpowl.studies.gamma_tuning import tune_gamma_table

PNG = b"\x89PNG\r\n\x1a\n"


def _is_png(path):
    return path.is_file() and path.read_bytes()[:8] == PNG and path.stat().st_size > 5000


def test_all_figures_are_written(tmp_path):
    sim = run_simulation([200, 500], [1, 10], reps=4, test_size=200, random_state=1)
    assert _is_png(plot_simulation(sim.table, tmp_path / "a" / "fig1.png"))
    cohort = make_cyp_guides_style(300, random_state=2)
    res = run_case_study(cohort, epsilons=(1, math.inf), gamma=20, n_runs=5, random_state=3)
    assert _is_png(plot_case_study(res, tmp_path / "cs.png"))
    sens = gamma_sensitivity(cohort, gammas=(5, 50), epsilons=(1, math.inf), n_runs=5, random_state=4)
    assert _is_png(plot_gamma_sensitivity(sens, tmp_path / "sens.png"))
    _, curves = tune_gamma_table(make_synthetic_owl(300, random_state=5), [100, 150], [1.0, math.inf],
                                 gammas=(1, 10, 100), m=100, r=3, random_state=6)
    assert isinstance(curves, pd.DataFrame)
    assert _is_png(plot_tuning_curves(curves, tmp_path / "tune.png"))


def test_concordance_bars_stay_within_zero_one():
    """Issue 22.5: mean +- SD bars of concordance ran past 1; the bars are the runs' 2.5%-97.5% quantiles."""
    from pydpowl.studies.casestudy import CaseStudyResult
    from pydpowl.plotting.studies import case_study_figure

    table = pd.DataFrame([dict(epsilon=1.0, value_mean=4.2, value_sd=0.1, concordance_mean=0.97, concordance_sd=0.06,
                               concordance_lo=0.85, concordance_hi=1.0)])
    fig = case_study_figure(CaseStudyResult(table=table, gamma=75.0, n_runs=20, description="test",
                                            nonprivate_coef=(0.0,), coefficient_names=("(intercept)",)))
    bars = fig.axes[1].containers[0].lines[2][0].get_segments()
    lows, highs = [seg[0][1] for seg in bars], [seg[1][1] for seg in bars]
    assert min(lows) >= 0 and max(highs) <= 1
    assert (lows, highs) == ([0.85], [1.0])
    assert "2.5%" in fig.axes[1].get_legend().get_texts()[0].get_text()


def test_multi_study_figure_with_one_repetition(tmp_path):
    """One repetition gives no standard error (NaN): the figure is drawn without error bars, not refused."""
    from pydpowl.studies.multi_designs import run_multi_study
    from pydpowl.plotting.studies import plot_multi_study

    result = run_multi_study("multiarm", [300], [2.0, math.inf], reps=1, test_size=500)
    assert result.table.value_se.isna().all()
    assert _is_png(plot_multi_study(result, tmp_path / "one.png"))
