"""Tests of pydpowl.policy_evaluation.plotting."""

import matplotlib
import pytest

from pydpowl.policy_evaluation.experiment import run_experiment
from pydpowl.policy_evaluation.plotting import plot_experiment

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def table():
    return run_experiment(m_values=(10, 40), n_reps=2, n_states=6, lambda_grid=(0.1, 10.0),
                          lambda_m=40, random_state=0)


def test_writes_a_png_with_three_panels(table, tmp_path):
    backend = matplotlib.get_backend()
    out = plot_experiment(table, tmp_path / "fig.png")
    data = (tmp_path / "fig.png").read_bytes()
    assert out.endswith("fig.png") and data[:8] == PNG_MAGIC
    width = int.from_bytes(data[16:20], "big")
    assert width == pytest.approx(15 * 120, abs=2), f"3 panels of 5 in at 120 dpi, got width {width}"
    assert matplotlib.get_backend() == backend, "plotting must not switch the global backend"


def test_without_lambda_panel_draws_two_panels(table, tmp_path):
    plot_experiment(table[table["panel"] == "m"], tmp_path / "two.png", dpi=50)
    data = (tmp_path / "two.png").read_bytes()
    assert int.from_bytes(data[16:20], "big") == pytest.approx(10 * 50, abs=2)


def test_rejects_a_table_without_the_columns(tmp_path):
    with pytest.raises(ValueError, match="table is missing columns"):
        plot_experiment(table_without_rmse(), tmp_path / "x.png")


def table_without_rmse():
    import pandas as pd

    return pd.DataFrame({"panel": ["m"], "method": ["LSW"], "m": [1], "lambda_c": [1.0]})
