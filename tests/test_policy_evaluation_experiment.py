"""Tests of pydpowl.policy_evaluation.experiment (reference experiment, reduced grids).

The trends checked are those the spec derives from the formulas (§9): they are
properties of the methods, not numbers copied from a previous run.
"""

import numpy as np
import pandas as pd
import pytest

from pydpowl.policy_evaluation.experiment import (
    COLUMNS,
    METHODS,
    run_experiment,
    summarize_experiment,
    weighted_rmse,
)

SMALL = dict(
    m_values=(20, 200, 2000), n_reps=4, epsilon=1.0, n_states=10, reward_bound=None,
    return_bound=1.0, lambda_grid=(0.01, 1.0, 10.0, 100.0, 1e3), lambda_m=1000, random_state=0,
)


@pytest.fixture(scope="module")
def small_table():
    return run_experiment(**SMALL)


def _means(table, panel, key):
    summ = summarize_experiment(table)
    sub = summ[summ["panel"] == panel]
    return sub.pivot(index=key, columns="method", values="rmse_mean")


def test_table_shape_and_columns(small_table):
    t = small_table
    assert list(t.columns) == COLUMNS
    assert len(t) == 4 * (3 * len(METHODS) + 5 * 3)
    assert set(t["method"]) == set(METHODS)
    assert np.allclose(t["mse"], t["rmse"] ** 2)
    assert t.loc[t["method"].isin(["LSW", "LSL"]), "sigma"].isna().all()
    assert t.loc[t["method"].str.startswith(("DP", "GS")), "sigma"].gt(0).all()


def test_nonprivate_errors_fall_with_m(small_table):
    by_m = _means(small_table, "m", "m")
    for method in ("LSW", "LSL"):
        col = by_m[method].to_numpy()
        assert np.all(np.diff(col) < 0), f"{method} mean RMSE vs m=(20, 200, 2000): {col}"


def test_private_errors_fall_with_m(small_table):
    by_m = _means(small_table, "m", "m")
    for method in ("DP-LSW", "DP-LSL"):
        col = by_m[method].to_numpy()
        assert col[-1] < col[0], f"{method} mean RMSE should fall from m=20 to m=2000: {col}"


def test_private_errors_exceed_nonprivate(small_table):
    by_m = _means(small_table, "m", "m")
    assert (by_m["DP-LSW"] > by_m["LSW"]).all() and (by_m["DP-LSL"] > by_m["LSL"]).all()


def test_smoothed_sigma_below_global_and_errors_ordered(small_table):
    t = small_table[small_table["panel"] == "m"].set_index(["m", "rep"])
    for smooth, glob in (("DP-LSW", "GS-DP-LSW"), ("DP-LSL", "GS-DP-LSL")):
        s = t[t["method"] == smooth]["sigma"]
        g = t[t["method"] == glob]["sigma"]
        assert (s <= g * (1 + 1e-12)).all(), f"{smooth} sigma above {glob} sigma somewhere"
    by_m = _means(small_table, "m", "m")
    # the gap opens once states are visited many times (m = 2000 here)
    assert by_m.loc[2000, "DP-LSW"] < by_m.loc[2000, "GS-DP-LSW"]
    assert by_m.loc[2000, "DP-LSL"] < by_m.loc[2000, "GS-DP-LSL"]


def test_dp_lsl_error_is_u_shaped_in_lambda(small_table):
    by_c = _means(small_table, "lambda", "lambda_c")["DP-LSL"]
    best = by_c.idxmin()
    assert by_c.index.min() < best < by_c.index.max(), f"DP-LSL RMSE vs c: {by_c.to_dict()}"
    assert by_c.iloc[0] > 2 * by_c.min() and by_c.iloc[-1] > 1.2 * by_c.min(), f"{by_c.to_dict()}"


def test_lsl_error_grows_with_lambda(small_table):
    col = _means(small_table, "lambda", "lambda_c")["LSL"].to_numpy()
    assert np.all(np.diff(col) > 0), f"LSL mean RMSE vs c: {col}"


def test_same_seed_same_table():
    kw = dict(SMALL, m_values=(10, 30), n_reps=2, lambda_grid=(1.0,), lambda_m=30)
    a, b = run_experiment(**kw), run_experiment(**kw)
    pd.testing.assert_frame_equal(a, b)
    c = run_experiment(**dict(kw, random_state=1))
    assert not np.allclose(a["rmse"], c["rmse"])


def test_aggregated_features_and_no_lambda_panel():
    t = run_experiment(m_values=(10, 50), n_reps=1, n_states=8, features="aggregated",
                       lambda_grid=None, random_state=0)
    assert set(t["panel"]) == {"m"} and len(t) == 2 * len(METHODS)


def test_summarize_matches_manual_groupby():
    t = run_experiment(m_values=(10,), n_reps=3, n_states=6, lambda_grid=None, random_state=2)
    s = summarize_experiment(t)
    lsw = t[t["method"] == "LSW"]["rmse"]
    row = s[s["method"] == "LSW"].iloc[0]
    assert row["rmse_mean"] == pytest.approx(lsw.mean()) and row["rmse_std"] == pytest.approx(lsw.std())
    assert row["n_reps"] == 3
    with pytest.raises(ValueError, match=r"table is missing columns \['rmse'"):
        summarize_experiment(t.drop(columns="rmse"))


def test_weighted_rmse():
    assert weighted_rmse(np.array([1.0, 3.0]), np.array([0.0, 0.0]), np.array([0.5, 0.5])) == pytest.approx(np.sqrt(5))


@pytest.mark.parametrize(
    "kwargs, exc, pattern",
    [
        (dict(m_values=()), ValueError, r"m_values must contain at least one"),
        (dict(m_values=(0,)), ValueError, r"m_values entry must be an integer >= 1"),
        (dict(n_reps=0), ValueError, r"n_reps must be an integer >= 1"),
        (dict(epsilon=0.0), ValueError, r"epsilon must be in \(0, inf\]"),
        (dict(delta=1.0), ValueError, r"delta must be in \(0, 1\)"),
        (dict(features="rbf"), ValueError, r"features must be one of"),
        (dict(features="aggregated", n_states=7), ValueError, r"multiple of group_size=2"),
        (dict(return_bound=1.0), ValueError, r"exactly one of reward_bound and return_bound"),
        (dict(lambda_c=0.0), ValueError, r"lambda_c must be in \(0, inf\)"),
        (dict(constants="B"), ValueError, r"constants must be one of"),
    ],
)
def test_bad_arguments(kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        run_experiment(**dict(dict(m_values=(10,), n_reps=1, lambda_grid=None), **kwargs))


@pytest.mark.slow
def test_reference_settings_trends():
    """Spec settings (N=40, tabular, epsilon=delta=0.1, F_max=100): full m grid."""
    t = run_experiment(n_reps=10, random_state=0)
    by_m = _means(t, "m", "m")
    assert by_m["LSW"].iloc[-1] < by_m["LSW"].iloc[0] / 10
    assert by_m["LSL"].iloc[-1] < by_m["LSL"].iloc[0] / 3
    sig = summarize_experiment(t)
    sig = sig[sig["panel"] == "m"].pivot(index="m", columns="method", values="sigma_mean")
    # DP-LSW sigma: ~7.7e4 at m=10 (the global value, spec §9) and falling
    assert sig["DP-LSW"].iloc[0] == pytest.approx(sig["GS-DP-LSW"].iloc[0], rel=0.02)
    assert sig["DP-LSW"].iloc[0] == pytest.approx(7.7e4, rel=0.05)
    assert sig["DP-LSW"].iloc[-1] < 0.7 * sig["DP-LSW"].iloc[0]
    assert (sig["DP-LSL"] <= sig["GS-DP-LSL"] * (1 + 1e-12)).all()
    assert sig.loc[1000, "DP-LSL"] == pytest.approx(9.4e2, rel=0.1)
