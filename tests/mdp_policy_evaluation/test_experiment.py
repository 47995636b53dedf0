"""Tests of pydpowl.mdp_policy_evaluation.experiment (reference experiment, reduced grids).

The trends checked are those the formulas imply (spec §9 and docs): they are
properties of the methods, not numbers copied from a previous run.
"""

import numpy as np
import pandas as pd
import pytest

from pydpowl.mdp_policy_evaluation.experiment import (
    COLUMNS,
    DEFAULT_EPSILONS,
    DEFAULT_M_VALUES,
    METHODS,
    NOISE,
    run_experiment,
    summarize_experiment,
    weighted_rmse,
)

SMALL = dict(
    m_values=(30, 300, 3000, 30_000), epsilons=(0.5, 2.0, 10.0), n_reps=3, n_states=10,
    lambda_grid=(0.01, 1.0, 10.0, 100.0, 1e3), lambda_m=3000, random_state=0,
)


@pytest.fixture(scope="module")
def small_table():
    return run_experiment(**SMALL)


def _means(table, panel, index, eps=None):
    summ = summarize_experiment(table)
    sub = summ[summ["panel"] == panel]
    if eps is not None:
        sub = sub[(sub["epsilon"] == eps) | ~np.isfinite(sub["epsilon"])]
    return sub.pivot(index=index, columns="method", values="rmse_mean")


def test_defaults_reach_a_million_episodes_and_span_epsilon():
    assert max(DEFAULT_M_VALUES) >= 1_000_000 and len(DEFAULT_EPSILONS) >= 3
    assert min(DEFAULT_EPSILONS) < 1 < max(DEFAULT_EPSILONS)


def test_table_has_one_row_per_repetition(small_table):
    t = small_table
    assert list(t.columns) == COLUMNS
    keys = ["panel", "method", "m", "epsilon", "lambda_c"]
    assert (t.groupby(keys).size() == 3).all() and sorted(t["rep"].unique()) == [0, 1, 2]
    grid = t[t["panel"] == "m"]
    # per (m, rep): LSW, LSL, and per epsilon DP, GS-analytic (+ GS-classical below 1) of each family
    assert len(grid) == 3 * 4 * (2 + 2 * (3 + 2 + 2))
    assert set(grid["method"]) == set(METHODS)
    assert np.allclose(t["mse"], t["rmse"] ** 2)
    assert (t["noise"] == t["method"].map(NOISE)).all()
    nonprivate = t["noise"] == "none"
    assert np.isinf(t.loc[nonprivate, "epsilon"]).all() and t.loc[nonprivate, "sigma"].isna().all()
    assert np.isfinite(t.loc[~nonprivate, "epsilon"]).all() and t.loc[~nonprivate, "sigma"].gt(0).all()
    assert t.loc[t["noise"] == "global-classical", "epsilon"].max() < 1, "classical only below 1"
    lam = t[t["panel"] == "lambda"]
    assert set(lam["method"]) == {"LSL", "DP-LSL"} and (lam["m"] == 3000).all()
    assert len(lam) == 3 * 5 * (1 + 3)


def test_classical_baseline_uses_the_textbook_constant(small_table):
    t = small_table[small_table["panel"] == "m"].set_index(["method", "m", "epsilon", "rep"])["sigma"]
    ratio = (t.loc["GS-classical-LSW"] / t.loc["GS-analytic-LSW"]).dropna()
    assert len(ratio) == 4 * 3
    # both scale the same global sensitivity: their ratio is the ratio of the multipliers
    from pydpowl.mdp_policy_evaluation.calibration import analytic_gaussian_scale

    expected = np.sqrt(2 * np.log(1.25 / 0.1)) / 0.5 / analytic_gaussian_scale(1.0, 0.5, 0.1)
    assert np.allclose(ratio, expected, rtol=1e-12)


def test_nonprivate_errors_fall_with_m(small_table):
    by_m = _means(small_table, "m", "m", 10.0)
    for method in ("LSW", "LSL"):
        col = by_m[method].to_numpy()
        assert np.all(np.diff(col) < 0), f"{method} mean RMSE vs m: {col}"


@pytest.mark.parametrize("eps", [0.5, 2.0, 10.0])
def test_private_errors_fall_with_m(small_table, eps):
    by_m = _means(small_table, "m", "m", eps)
    for method in ("DP-LSW", "DP-LSL"):
        col = by_m[method].to_numpy()
        assert col[-1] < col[0] / 3, f"{method} at epsilon={eps}: mean RMSE vs m {col}"
        assert np.all(np.diff(col) < 0) or eps == 0.5, f"{method} at epsilon={eps}: {col}"


def test_private_errors_fall_with_epsilon_and_exceed_nonprivate(small_table):
    at = _means(small_table[small_table["m"] == 30_000], "m", "epsilon")
    finite = at.loc[np.isfinite(at.index)]
    for fam in ("LSW", "LSL"):
        col = finite[f"DP-{fam}"].to_numpy()
        assert np.all(np.diff(col) < 0), f"DP-{fam} vs epsilon at m=30000: {col}"
        assert (col > at.loc[np.inf, fam]).all()


def test_smoothing_loses_at_small_m_and_wins_at_large_m_for_lsw(small_table):
    # few visits: psi^w is its global value and alpha (lemma) exceeds the analytic multiplier;
    # many visits at large epsilon: psi^w ~ sum_s w_s / n_s^2 is far below its global value
    by_m = _means(small_table, "m", "m", 10.0)
    assert by_m.loc[30, "DP-LSW"] > by_m.loc[30, "GS-analytic-LSW"]
    assert by_m.loc[30_000, "DP-LSW"] < by_m.loc[30_000, "GS-analytic-LSW"] / 100


def test_dp_lsl_error_is_u_shaped_in_lambda(small_table):
    by_lam = _means(small_table, "lambda", "regularization", 0.5)["DP-LSL"]
    best = by_lam.idxmin()
    assert by_lam.index.min() < best < by_lam.index.max(), f"DP-LSL RMSE vs lambda: {by_lam.to_dict()}"
    assert by_lam.iloc[0] > 2 * by_lam.min() and by_lam.iloc[-1] > 1.2 * by_lam.min(), by_lam.to_dict()


def test_lsl_error_grows_with_lambda(small_table):
    col = _means(small_table, "lambda", "regularization", 10.0)["LSL"].to_numpy()
    assert np.all(np.diff(col) > 0), f"LSL mean RMSE vs lambda: {col}"


def test_same_seed_same_table():
    kw = dict(SMALL, m_values=(10, 30), epsilons=(1.0,), n_reps=2, lambda_grid=(1.0,), lambda_m=30)
    a, b = run_experiment(**kw), run_experiment(**kw)
    pd.testing.assert_frame_equal(a, b)
    c = run_experiment(**dict(kw, random_state=1))
    assert not np.allclose(a["rmse"], c["rmse"])


def test_aggregated_features_no_lambda_panel_and_reward_bound():
    t = run_experiment(m_values=(10, 50), epsilons=(0.3,), n_reps=1, n_states=8, features="aggregated",
                       lambda_grid=None, reward_bound=1.0, return_bound=None, random_state=0)
    assert set(t["panel"]) == {"m"} and len(t) == 2 * len(METHODS)


def test_lambda_panel_at_a_batch_size_outside_the_grid():
    t = run_experiment(m_values=(10,), epsilons=(1.0,), n_reps=2, n_states=6, lambda_grid=(1.0, 10.0),
                       lambda_m=40, random_state=0)
    lam = t[t["panel"] == "lambda"]
    assert set(lam["m"]) == {40} and len(lam) == 2 * 2 * 2
    assert set(t.loc[t["panel"] == "m", "m"]) == {10}


def test_summarize_matches_manual_aggregates():
    t = run_experiment(m_values=(10,), epsilons=(1.0,), n_reps=5, n_states=6, lambda_grid=None,
                       random_state=2)
    s = summarize_experiment(t)
    lsw = t[t["method"] == "DP-LSW"]["rmse"].to_numpy()
    row = s[s["method"] == "DP-LSW"].iloc[0]
    assert row["rmse_mean"] == pytest.approx(lsw.mean()) and row["rmse_std"] == pytest.approx(lsw.std(ddof=1))
    assert row["rmse_q10"] == pytest.approx(np.quantile(lsw, 0.1)) and row["rmse_q90"] == pytest.approx(
        np.quantile(lsw, 0.9))
    assert row["n_reps"] == 5 and row["epsilon"] == 1.0
    assert s.loc[s["method"] == "LSW", "epsilon"].iloc[0] == np.inf
    with pytest.raises(ValueError, match=r"table is missing columns \['rmse'"):
        summarize_experiment(t.drop(columns="rmse"))


def test_weighted_rmse():
    assert weighted_rmse(np.array([1.0, 3.0]), np.array([0.0, 0.0]), np.array([0.5, 0.5])) == pytest.approx(np.sqrt(5))


@pytest.mark.parametrize(
    "kwargs, exc, pattern",
    [
        (dict(m_values=()), ValueError, r"m_values must contain at least one value"),
        (dict(m_values=(0,)), ValueError, r"m_values entry must be an integer >= 1"),
        (dict(epsilons=()), ValueError, r"epsilons must contain at least one value"),
        (dict(epsilons=(0.1, 0.0)), ValueError, r"epsilons entry must be in \(0, inf\), got epsilons entry=0.0"),
        (dict(epsilons=(np.inf,)), ValueError, r"epsilons entry must be in \(0, inf\)"),
        (dict(epsilons=0.1), TypeError, r"epsilons must be a sequence of numbers, got float"),
        (dict(n_reps=0), ValueError, r"n_reps must be an integer >= 1"),
        (dict(delta=1.0), ValueError, r"delta must be in \(0, 1\)"),
        (dict(features="rbf"), ValueError, r"features must be one of"),
        (dict(features="aggregated", n_states=7), ValueError, r"multiple of group_size=2"),
        (dict(reward_bound=1.0), ValueError, r"exactly one of reward_bound and return_bound .* got both"),
        (dict(return_bound=None), ValueError, r"exactly one of reward_bound and return_bound .* got neither"),
        (dict(lambda_c=0.0), ValueError, r"lambda_c must be in \(0, inf\)"),
        (dict(lambda_grid=(1.0, -2.0)), ValueError, r"lambda_grid entry must be in \(0, inf\)"),
        (dict(constants="B"), ValueError, r"constants must be one of"),
    ],
)
def test_bad_arguments(kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        run_experiment(**dict(dict(m_values=(10,), n_reps=1, lambda_grid=None), **kwargs))


@pytest.mark.slow
def test_reference_settings_meet_the_targets():
    """The default run: errors fall with m and epsilon; within 2x of non-private at the far corner."""
    t = run_experiment(random_state=0)
    summ = summarize_experiment(t)
    grid = summ[summ["panel"] == "m"]
    m_max, eps_max = grid["m"].max(), max(DEFAULT_EPSILONS)
    for fam in ("LSW", "LSL"):
        for eps in DEFAULT_EPSILONS:
            col = grid[(grid["method"] == f"DP-{fam}") & (grid["epsilon"] == eps)].sort_values("m")["rmse_mean"]
            assert col.iloc[-1] < col.iloc[0] / 3, f"DP-{fam} at epsilon={eps}: {col.to_numpy()}"
        at = grid[(grid["method"] == f"DP-{fam}") & (grid["m"] == m_max)].sort_values("epsilon")["rmse_mean"]
        assert np.all(np.diff(at.to_numpy()) < 0), f"DP-{fam} vs epsilon at m={m_max}: {at.to_numpy()}"
        ref = grid[(grid["method"] == fam) & (grid["m"] == m_max)]["rmse_mean"].iloc[0]
        assert at.iloc[-1] <= 2 * ref, f"DP-{fam} at (m={m_max}, epsilon={eps_max}): {at.iloc[-1]} vs {ref}"
