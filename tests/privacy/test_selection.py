"""Tests of pydpowl.privacy.selection: the exponential mechanism and private choice of gamma by value."""

import numpy as np
import pytest
from scipy import stats

from pydpowl import prepare_owl
from pydpowl.datasets import make_synthetic_owl
from pydpowl.privacy.selection import (exponential_mechanism, rule_scores, score_sensitivity,
                                       select_gamma_privately)


def test_exponential_mechanism_frequencies():
    rng = np.random.default_rng(0)
    scores = np.array([0.0, 1.0, 2.0])
    draws = np.bincount([exponential_mechanism(scores, epsilon=2.0, sensitivity=1.0, rng=rng)
                         for _ in range(20000)], minlength=3)
    p = np.exp(scores) / np.exp(scores).sum()  # exp(eps * s / (2 * sens)) with eps = 2, sens = 1
    chi2 = stats.chisquare(draws, 20000 * p)
    assert chi2.pvalue > 1e-3, \
        f"exponential mechanism frequencies {draws} vs {np.round(20000 * p)}: p={chi2.pvalue:.2g}"


def test_exponential_mechanism_privacy_ratio_is_at_most_e_epsilon():
    # neighbouring score vectors differ by at most the sensitivity in every entry
    s0, s1 = np.array([0.0, 3.0, 1.0]), np.array([2.0, 1.0, 1.0])
    eps, sens = 1.0, 2.0

    def probs(s):
        p = np.exp(eps * s / (2 * sens))
        return p / p.sum()

    assert np.max(np.abs(np.log(probs(s0) / probs(s1)))) <= eps + 1e-12


@pytest.mark.parametrize("bad, match", [([], "non-empty"), ([np.nan, 1.0], "finite"), ([[1.0, 2.0]], "1-D")])
def test_exponential_mechanism_refuses_bad_scores(bad, match):
    with pytest.raises(ValueError, match=match):
        exponential_mechanism(bad, epsilon=1.0, sensitivity=1.0, rng=np.random.default_rng(0))


def test_score_sensitivity_is_w_for_value_and_one_for_accuracy():
    assert score_sensitivity("value", 27.5) == 27.5
    assert score_sensitivity("accuracy", 27.5) == 1.0
    with pytest.raises(ValueError, match="score must be one of"):
        score_sensitivity("auc", 1.0)


def test_value_score_changes_by_at_most_w_when_one_scoring_record_is_replaced():
    rng = np.random.default_rng(3)
    W = 4.0
    rules = rng.random((50, 6)) < 0.5
    A = rng.choice([-1.0, 1.0], 50)
    w = rng.uniform(0, W, 50)
    base = rule_scores(rules, A, w)
    worst = 0.0
    for _ in range(300):
        j = rng.integers(50)
        A2, w2, r2 = A.copy(), w.copy(), rules.copy()
        A2[j], w2[j], r2[j] = rng.choice([-1.0, 1.0]), rng.choice([0.0, W, rng.uniform(0, W)]), rng.random(6) < 0.5
        worst = max(worst, np.max(np.abs(rule_scores(r2, A2, w2) - base)))
    assert worst <= W + 1e-12


def test_value_score_is_the_weighted_agreement():
    rules = np.array([[True, False], [False, False], [True, True]])
    A = np.array([1.0, -1.0, -1.0])
    w = np.array([1.0, 2.0, 4.0])
    # rule 0 follows subjects 0 and 1; rule 1 follows subject 1 only
    np.testing.assert_allclose(rule_scores(rules, A, w), [3.0, 2.0])
    np.testing.assert_allclose(rule_scores(rules, A, w, score="accuracy", optimal=np.array([1.0, 1.0, 1.0])),
                               [2.0, 1.0])
    with pytest.raises(ValueError, match="needs the optimal rule"):
        rule_scores(rules, A, w, score="accuracy")


def _prepared(data):
    problem = prepare_owl(data.X, data.treatment, np.maximum(data.benefit, 0), data.propensity,
                          weights_upper_bound=data.weights_upper_bound, feature_bounds=data.feature_bounds,
                          weight_sensitivity=data.weight_sensitivity)
    return problem.Z, problem.labels, problem.weights


def test_selection_prefers_the_useful_gamma_with_a_large_budget():
    # gamma = 1e5 shrinks the rule to (nearly) nothing plus noise: a coin flip; gamma = 30 learns the rule
    data = make_synthetic_owl(3000, random_state=5)
    Z, y, w = _prepared(data)
    rng = np.random.default_rng(2)
    picks = [select_gamma_privately(Z, y, w, rng.permutation(data.n), [30.0, 1e5], epsilon=50.0,
                                    weights_upper_bound=30.0, rng=rng)[0] for _ in range(20)]
    assert picks.count(30.0) >= 17, f"picked {picks}"


def test_selection_sizes_and_refusal():
    data = make_synthetic_owl(60, random_state=5)
    Z, y, w = _prepared(data)
    gamma, n_part = select_gamma_privately(Z, y, w, np.arange(60), [10.0, 50.0], epsilon=1.0,
                                           weights_upper_bound=30.0, rng=np.random.default_rng(0))
    assert n_part == 20 and gamma in (10.0, 50.0)
    with pytest.raises(ValueError, match="too small for 2 candidates"):
        select_gamma_privately(Z, y, w, np.arange(5), [10.0, 50.0], epsilon=1.0, weights_upper_bound=30.0,
                               rng=np.random.default_rng(0))


def test_transfer_gamma_scales_by_the_bound_or_keeps_it():
    from pydpowl.privacy.selection import transfer_gamma

    got = transfer_gamma(40.0, transfer="bound", n_part=100, epsilon_select=0.5, n_fit=900, epsilon_fit=2.0)
    assert got == pytest.approx(40.0 * (9 * 0.25) ** 0.5)
    assert transfer_gamma(40.0, transfer="none", n_part=100, epsilon_select=0.5, n_fit=900, epsilon_fit=2.0) == 40.0
    with pytest.raises(ValueError, match="transfer must be one of"):
        transfer_gamma(40.0, transfer="magic", n_part=1, epsilon_select=1, n_fit=1, epsilon_fit=1)


def test_candidates_are_released_through_the_one_output_release():
    """Review 21.7: the candidate fits went through a second path without the reach guard; a setting with no
    floating-point-safe grid at the solution's scale is refused before the data are touched, as every fit is."""
    data = make_synthetic_owl(300, random_state=5)
    Z, y, w = _prepared(data)
    with pytest.raises(ValueError, match="no floating-point-safe rounding exists"):
        select_gamma_privately(Z, y, w, np.arange(300), [1e-3, 10.0], epsilon=1e11, weights_upper_bound=30.0,
                               rng=np.random.default_rng(0))


def test_candidate_release_is_the_output_mechanisms(monkeypatch):
    """Each candidate is ``output_mechanism(...).release``: the settings of DP-OWL's fit on its part (L of the loss,
    C = 0, the part's n and the solver's tol)."""
    import pydpowl.privacy.selection as selection
    from pydpowl.engine.mechanisms import output_mechanism
    from pydpowl.engine.solver import DEFAULT_TOL

    seen = []

    def spy(**kwargs):
        seen.append(kwargs)
        return output_mechanism(**kwargs)

    monkeypatch.setattr(selection, "output_mechanism", spy)
    data = make_synthetic_owl(60, random_state=5)
    Z, y, w = _prepared(data)
    select_gamma_privately(Z, y, w, np.arange(60), [10.0, 50.0], epsilon=1.0, weights_upper_bound=30.0,
                           rng=np.random.default_rng(0))
    assert seen == [dict(epsilon=1.0, gamma=g, weights_upper_bound=30.0, C=0.0, lipschitz=1.0, n_samples=20,
                         tol=DEFAULT_TOL) for g in (10.0, 50.0)]
