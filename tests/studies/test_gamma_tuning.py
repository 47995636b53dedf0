"""Tests of pydpowl.studies.gamma_tuning: Algorithm 2 on D0 and the no-D0 ways."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from pydpowl.datasets import OWLData, make_synthetic_owl, synthetic_decision
from pydpowl.estimators.summary import delta_text
from pydpowl.studies.gamma_table import GammaTable
from pydpowl.studies.simulation import paper_shift, run_simulation
from pydpowl.studies.gamma_tuning import (select_gamma, split_sizes, tune_gamma, tune_gamma_table,
                                          tune_split_budget, tune_split_data)

GRID = (1, 2, 5, 10, 30, 100, 300)


@pytest.fixture(scope="module")
def d0():
    return make_synthetic_owl(1000, random_state=20240)


def _true_accuracy(n, eps, gammas, reps=100, seed=77):
    """Accuracy of each candidate on the paper's design, estimated by an independent simulation."""
    out = {}
    for g in gammas:
        table = GammaTable(cells=((n, eps, float(g)), (n, math.inf, 1.0)))
        res = run_simulation([n], [eps], reps=reps, test_size=2000, gamma_table=table, random_state=seed)
        out[g] = float(res.table[res.table.epsilon == eps].accuracy_mean.iloc[0])
    return out


@pytest.mark.parametrize("n, pool, val, replace", [(200, 200, 800, False), (500, 500, 500, False),
                                                   (499, 499, 501, False), (501, 500, 500, True),
                                                   (800, 500, 500, True), (2500, 500, 500, True)])
def test_split_sizes_and_replacement_flag(n, pool, val, replace):
    # n_val = max(m, n0 - n), n_pool = n0 - n_val; replacement exactly when n_pool < n (n0 = 1000, m = 500)
    assert split_sizes(1000, n, 500) == (pool, val, replace)


def test_split_sizes_rejects_m_not_below_n0():
    with pytest.raises(ValueError, match=r"m must be in \[1, n0 - 1\]"):
        split_sizes(100, 50, 100)


def test_selection_rules_by_hand():
    g = [1, 10, 100]
    assert select_gamma(g, [0.5, 0.7, 0.7], [0.1, 0.1, 0.1]) == 100, "ties go to the larger gamma"
    assert select_gamma(g, [0.5, 0.7, 0.6], [0.1, 0.01, 0.1]) == 10
    # one-SE: best 0.7 with SE 0.15 -> the largest gamma with mean >= 0.55 is 100
    assert select_gamma(g, [0.5, 0.7, 0.6], [0.1, 0.15, 0.1], rule="one-se") == 100
    assert select_gamma(g, [0.5, 0.7, 0.6], [0.1, 0.05, 0.1], rule="one-se") == 10
    assert select_gamma(g, [np.nan, 0.1, 0.05], [0, 0, 0]) == 10, "an undefined mean ranks last"


def test_reproducible_with_a_fixed_generator(d0):
    kw = dict(gammas=GRID, m=500, r=20)
    _, a = tune_gamma_table(d0, [500, 800], [1.0, math.inf], random_state=9, **kw)
    _, b = tune_gamma_table(d0, [500, 800], [1.0, math.inf], random_state=9, **kw)
    _, c = tune_gamma_table(d0, [500, 800], [1.0, math.inf], random_state=10, **kw)
    pd.testing.assert_frame_equal(a, b)
    assert not a["mean"].equals(c["mean"])
    assert set(a[a.n == 500]["replace"]) == {False} and set(a[a.n == 800]["replace"]) == {True}


def test_one_split_vs_a_split_per_repetition(d0):
    # n = n_pool = 500: with one split every repetition trains on the same 500 rows, so without noise
    # (epsilon = inf) the repetitions agree exactly; a split per repetition varies the rows too
    kw = dict(gammas=(1, 30), m=500, r=10, random_state=3)
    _, once = tune_gamma_table(d0, [500], [math.inf], **kw)
    _, redrawn = tune_gamma_table(d0, [500], [math.inf], redraw_split=True, **kw)
    assert (once.sd < 1e-12).all(), f"one split: SD over repetitions {once.sd.tolist()} should be 0"
    assert (redrawn.sd > 1e-3).all(), f"split per repetition: SD {redrawn.sd.tolist()} should be positive"


def test_budget_drives_the_choice(d0):
    table, _ = tune_gamma_table(d0, [500], [0.1, math.inf], gammas=GRID, m=500, r=100, random_state=1)
    g_inf, g_01 = table.lookup(500, math.inf), table.lookup(500, 0.1)
    assert g_inf <= 10, f"epsilon=inf should pick a small gamma (authors: 1), got {g_inf}"
    assert g_01 >= 50, f"epsilon=0.1 should pick a large gamma (authors: 75), got {g_01}"


def test_choice_is_within_noise_of_the_best_candidate(d0):
    res = tune_gamma(d0, 500, 5.0, gammas=GRID, m=500, r=100, metric="value", random_state=2)
    assert res.table.selected.sum() == 1 and res.details["replace"] is False
    truth = _true_accuracy(500, 5.0, GRID)
    best = max(truth.values())
    # the SE of a mean accuracy over 100 repetitions is at most about 1.3 points here
    assert truth[res.gamma] >= best - 0.04, \
        f"chosen gamma {res.gamma} has accuracy {truth[res.gamma]:.3f}; best candidate {best:.3f} (tolerance 0.04)"


def _shifted_d0(n0, seed):
    """The supplement's covariate shift: x from normals (means .25/.5/.75/.5, SD .3) truncated to [0, 1]."""
    rng = np.random.default_rng(seed)
    means = np.array([0.25, 0.5, 0.75, 0.5])
    a, b = (0 - means) / 0.3, (1 - means) / 0.3
    X = stats.truncnorm.rvs(a, b, loc=means, scale=0.3, size=(n0, 4), random_state=rng)
    A = np.where(rng.uniform(size=n0) < 0.5, 1.0, -1.0)
    f = synthetic_decision(X)
    B = paper_shift((0.01 + 0.02 * X[:, 3] + 3 * A * f + 0.5 * rng.standard_normal(n0))[None, :])[0]
    return OWLData(X=pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(4)]), treatment=A, benefit=B,
                   propensity=np.full(n0, 0.5), feature_bounds=(np.zeros(4), np.ones(4)), weights_upper_bound=30.0,
                   optimal=np.where(f > 0, 1.0, -1.0), description="shifted D0", weight_sensitivity=0.0)


def _coefficient_variant(n0, seed, theta=(1.0, -1.0, -1.0, 1.5, -1.5)):
    """The supplement's theta1 variant: other decision coefficients, same feature law."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n0, 4))
    A = np.where(rng.uniform(size=n0) < 0.5, 1.0, -1.0)
    f = theta[0] + X @ np.array(theta[1:])
    B = paper_shift((0.01 + 0.02 * X[:, 3] + 3 * A * f + 0.5 * rng.standard_normal(n0))[None, :])[0]
    return OWLData(X=pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(4)]), treatment=A, benefit=B,
                   propensity=np.full(n0, 0.5), feature_bounds=(np.zeros(4), np.ones(4)), weights_upper_bound=30.0,
                   optimal=np.where(f > 0, 1.0, -1.0), description="theta1 D0", weight_sensitivity=0.0)


def test_shifted_d0_choice_stays_close(d0):
    # reduced grid around the optimum of (n = 1000, epsilon = 5), as in the supplement's figures
    grid = (5, 10, 20, 30, 50, 75, 100, 150, 200, 300)
    kw = dict(gammas=grid, m=500, r=200, metric="value", random_state=5)
    chosen = {
        "baseline": tune_gamma(d0, 1000, 5.0, **kw).gamma,
        "covariate shift": tune_gamma(_shifted_d0(1000, seed=6), 1000, 5.0, **kw).gamma,
        "other coefficients": tune_gamma(_coefficient_variant(1000, seed=7), 1000, 5.0, **kw).gamma,
        "n0 = 500": tune_gamma(make_synthetic_owl(500, random_state=8), 1000, 5.0, **dict(kw, m=250)).gamma,
    }
    truth = _true_accuracy(1000, 5.0, grid, reps=200)
    best = max(truth.values())
    for name, gamma in chosen.items():
        # the supplement's criterion: accuracy within 5 points of the best gamma's
        assert truth[gamma] >= best - 0.05, \
            f"D0 '{name}' chose gamma {gamma} with accuracy {truth[gamma]:.3f}; best {best:.3f} (band 0.05)"


def test_accuracy_metric_needs_the_optimal_rule(d0):
    no_truth = OWLData(X=d0.X, treatment=d0.treatment, benefit=d0.benefit, propensity=d0.propensity,
                       feature_bounds=d0.feature_bounds, weights_upper_bound=30.0, weight_sensitivity=0.0)
    with pytest.raises(ValueError, match="needs the optimal rule"):
        tune_gamma(no_truth, 500, 1.0, gammas=GRID, r=5, metric="accuracy")


def test_split_budget_charges_both_steps():
    data = make_synthetic_owl(900, random_state=8)
    res = tune_split_budget(data, epsilon_select=0.5, epsilon_fit=2.0, gammas=(10, 50, 200), random_state=3)
    assert [c.epsilon for c in res.spending] == [0.5, 2.0]
    assert [c.rows for c in res.spending] == [900, 900]
    assert res.epsilon_total == 2.5 and "sequential" in res.composition
    assert res.model.epsilon == 2.0 and res.model.gamma == res.gamma
    n_part = res.details["n_part"]
    assert n_part == 900 // 4
    # bound transfer: gamma * sqrt((n_fit / n_part) * (eps_select / eps_fit))
    assert res.gamma == pytest.approx(res.details["selected_gamma"] * math.sqrt((900 / n_part) * (0.5 / 2.0)))
    assert res.table is None, "candidate scores on private data must not be reported"
    assert "total epsilon = 2.5" in res.describe()
    # issue 21.5: each charge carries its delta and the total composes them (sequential: the sum)
    from pydpowl.privacy.selection import selection_delta

    assert sel_fit_deltas(res) == [selection_delta((10, 50, 200), epsilon=0.5, weights_upper_bound=30.0,
                                                   n_part=n_part, dim=5), res.model.privacy_spent_[1]]
    assert res.privacy_spent == (2.5, math.fsum(sel_fit_deltas(res))) and res.privacy_spent[1] > 0
    assert f"(2.5, {delta_text(res.privacy_spent[1])})-DP" in res.describe()
    # issue 21.6: the returned model keeps no live generator
    assert res.model.random_state is None


def sel_fit_deltas(res):
    return [c.delta for c in res.spending]


def test_split_data_uses_disjoint_rows():
    data = make_synthetic_owl(600, random_state=9)
    res = tune_split_data(data, epsilon=1.0, gammas=(10, 50, 200), select_fraction=0.4, transfer="none",
                          random_state=4)
    sel, fit = res.spending
    assert sel.rows + fit.rows == 600 and sel.rows == 240
    assert res.epsilon_total == 1.0 and "parallel" in res.composition
    assert res.gamma == res.details["selected_gamma"] and res.model.n_samples_ == 360
    assert res.privacy_spent == (1.0, max(sel.delta, fit.delta)) and fit.delta == res.model.privacy_spent_[1]


def test_no_d0_refuses_too_many_candidates_for_the_data():
    data = make_synthetic_owl(20, random_state=1)
    with pytest.raises(ValueError, match="too small for 14 candidates"):
        tune_split_budget(data, epsilon_select=1, epsilon_fit=1, gammas=tuple(range(1, 15)), random_state=1)


def test_split_budget_with_an_accountant_checks_first_and_spends_both_charges():
    from pydpowl.privacy.accountant import BudgetAccountant
    from pydpowl.exceptions import BudgetExceededError

    data = make_synthetic_owl(500, random_state=8)
    acc = BudgetAccountant(total_epsilon=2.0)
    with pytest.raises(BudgetExceededError):
        tune_split_budget(data, epsilon_select=0.5, epsilon_fit=2.0, gammas=(10, 50), random_state=1, accountant=acc)
    assert acc.spent == 0.0, "a refused tuning must spend nothing"
    tune_split_budget(data, epsilon_select=0.5, epsilon_fit=1.0, gammas=(10, 50), random_state=1, accountant=acc)
    assert acc.spent == pytest.approx(1.5) and len(acc.releases) == 2


def test_split_data_with_an_accountant_charges_epsilon_once():
    from pydpowl.privacy.accountant import BudgetAccountant

    data = make_synthetic_owl(500, random_state=9)
    acc = BudgetAccountant(total_epsilon=1.5)
    tune_split_data(data, epsilon=1.0, gammas=(10, 50), random_state=4, accountant=acc)
    assert acc.spent == pytest.approx(1.0) and len(acc.releases) == 1


def test_tuning_prepares_d0_without_building_an_estimator(d0, monkeypatch):
    """The D0 search prepares the data with prepare_owl from D0's public settings; no throwaway DPOWL."""
    import pydpowl.estimators.owl as owl_module
    from pydpowl import prepare_owl
    from pydpowl.studies import gamma_tuning as tuning

    def refuse(*args, **kwargs):
        raise AssertionError("tune_gamma_table built a DPOWL")

    monkeypatch.setattr(owl_module.DPOWL, "__init__", refuse)
    _, curves = tune_gamma_table(d0, [200], [1.0], gammas=(1, 30), m=500, r=3, random_state=1)
    assert len(curves) == 2
    problem = tuning._prepared(d0)
    same = prepare_owl(d0.X, d0.treatment, d0.benefit, d0.propensity, weights_upper_bound=d0.weights_upper_bound,
                       feature_bounds=d0.feature_bounds, weight_sensitivity=d0.weight_sensitivity)
    np.testing.assert_array_equal(problem.weights, same.weights)
    np.testing.assert_array_equal(problem.Z, same.Z)
