"""Tests of pydpowl.studies.plots: every figure is written as a PNG."""

import math

import pandas as pd

from pydpowl.studies.casestudy import gamma_sensitivity, run_case_study
from pydpowl.datasets import make_cyp_guides_style, make_synthetic_owl
from pydpowl.studies.plots import plot_case_study, plot_gamma_sensitivity, plot_simulation, plot_tuning_curves
from pydpowl.studies.simulation import run_simulation
from pydpowl.studies.tuning import tune_gamma_table

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
