"""Tests of pydpowl.studies.gamma_table: the authors' table, the nearest-cell rule, CSV round trip."""

import math

import pandas as pd
import pytest

from pydpowl.studies.gamma_table import GammaTable, authors_gamma_table, get_gamma_table, pydpowl_gamma_table


def test_authors_table_cells_from_the_spec():
    t = authors_gamma_table()
    # section 5.3 of tuning_algorithm2.md, read off by hand
    for n, eps, gamma in [(200, 0.1, 50), (1000, 5, 75), (2500, 2, 300), (800, 1000, 1), (500, math.inf, 1),
                          (50, 0.4, 90), (100, 2, 105), (2000, 300, 40)]:
        assert t.lookup(n, eps) == gamma, f"authors' table at n={n}, epsilon={eps}"
    assert len(t.cells) == 94


def test_full_fig1_grid_is_covered_exactly():
    grid = authors_gamma_table().grid([200, 500, 800, 1000, 1500, 2000, 2500],
                                      [0.1, 0.5, 1, 2, 5, 20, 50, 150, 300, 500, 800, 1000, math.inf])
    assert grid.exact.all(), "every Fig. 1 cell should be in the authors' table"


def test_nearest_cell_rule_by_hand():
    t = authors_gamma_table()
    # n = 1459: |log(1459/1500)| = 0.028 < |log(1459/1000)| = 0.378 -> n = 1500 row of epsilon = 1
    assert t.lookup_cell(1459, 1) == (125, 1500, 1.0)
    # epsilon = 0.3: |log(0.3/0.5)| = 0.51 < |log(0.3/0.1)| = 1.10 -> epsilon 0.5, n = 200
    assert t.lookup_cell(200, 0.3) == (90, 200, 0.5)
    # beyond the table: epsilon 5000 -> 1000; n 5000 -> 2500
    assert t.lookup_cell(5000, 5000) == (10, 2500, 1000.0)
    # infinite budgets only borrow from the inf row
    assert t.lookup_cell(3000, math.inf) == (1, 2500, math.inf)


def test_ties_go_to_the_larger_gamma():
    t = GammaTable(cells=((100, 1.0, 10.0), (400, 1.0, 30.0)))
    # n = 200 is equidistant on the log scale from 100 and 400
    assert t.lookup(200, 1.0) == 30.0


def test_finite_and_infinite_budgets_never_mix():
    t = GammaTable(cells=((100, 1.0, 10.0),))
    with pytest.raises(ValueError, match="no epsilon=inf cells"):
        t.lookup(100, math.inf)


def test_csv_round_trip_and_errors(tmp_path):
    t = pydpowl_gamma_table()
    path = t.to_csv(tmp_path / "g.csv")
    back = GammaTable.from_csv(path)
    assert sorted(back.cells) == sorted(t.cells)
    assert get_gamma_table(path).lookup(1000, 5) == t.lookup(1000, 5)
    pd.DataFrame({"n": [100], "eps": [1.0], "gamma": [3.0]}).to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match="columns n, epsilon, gamma"):
        GammaTable.from_csv(tmp_path / "bad.csv")
    pd.DataFrame({"n": [100, 100], "epsilon": [1.0, 1.0], "gamma": [3.0, 4.0]}).to_csv(tmp_path / "dup.csv",
                                                                                       index=False)
    with pytest.raises(ValueError, match="two cells"):
        GammaTable.from_csv(tmp_path / "dup.csv")
    with pytest.raises(FileNotFoundError):
        GammaTable.from_csv(tmp_path / "missing.csv")
    with pytest.raises(ValueError, match="gamma must be in"):
        GammaTable(cells=((100, 1.0, -3.0),))
