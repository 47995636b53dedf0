import numpy as np
import pytest
from scipy.stats import chi2_contingency

from pydpowl.evaluation.empirical import (
    accuracy,
    allocation_test,
    association_test,
    concordance,
    empirical_value,
    ipw_value,
    ipw_values,
)


def test_empirical_value_by_hand():
    rule = [1, 1, -1, -1]
    A = [1, -1, -1, 1]
    B = [2.0, 5.0, 4.0, 7.0]
    p = [0.5, 0.5, 0.25, 0.5]
    # matches: subjects 0 (B=2, p=.5) and 2 (B=4, p=.25): (4 + 16) / (2 + 4)
    assert empirical_value(rule, A, B, p) == pytest.approx(20 / 6)
    assert ipw_value(rule, A, B, p) == pytest.approx((4 + 16) / 4)


def test_scalar_propensity_is_probability_of_plus_one():
    rule, A, B = [1, -1], [1, -1], [3.0, 6.0]
    # p = 2/3 for arm +1 and 1/3 for arm -1: (3*1.5 + 6*3) / (1.5 + 3)
    assert empirical_value(rule, A, B, 2 / 3) == pytest.approx((4.5 + 18) / 4.5)


def test_no_match_gives_nan():
    assert np.isnan(empirical_value([1, 1], [-1, -1], [1.0, 2.0]))


def test_zero_one_rules_are_refused():
    with pytest.raises(ValueError, match=r"rule must take values in \{-1, 1\}"):
        empirical_value([0, 1], [1, -1], [1.0, 1.0])


def test_accuracy_and_concordance():
    assert accuracy([1, -1, 1, 1], [1, 1, 1, -1]) == 0.5
    assert concordance([1, -1, 1], [1, -1, -1]) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        accuracy([1, 1], [1])


def test_association_matches_scipy_on_a_table():
    a = np.array([1] * 30 + [-1] * 20)
    b = np.array([1] * 25 + [-1] * 5 + [1] * 4 + [-1] * 16)
    res = association_test(a, b)
    table = np.array([[16, 4], [5, 25]])
    stat, p, _, _ = chi2_contingency(table, correction=True)
    assert res.table == ((16, 4), (5, 25))
    assert res.statistic == pytest.approx(stat) and res.pvalue == pytest.approx(p)


def test_association_undefined_for_constant_rule():
    res = association_test([1, 1, 1], [1, -1, 1])
    assert np.isnan(res.pvalue)


def test_allocation_test_defined_against_a_constant_rule():
    rule = np.array([1] * 60 + [-1] * 40)
    ref = np.ones(100)
    res = allocation_test(rule, ref)
    stat, p, _, _ = chi2_contingency(np.array([[40, 60], [0, 100]]), correction=True)
    assert res.pvalue == pytest.approx(p) and res.pvalue < 1e-10
    assert np.isnan(allocation_test(np.ones(5), np.ones(5)).pvalue)


def test_ipw_values_matches_the_definition_rule_by_rule():
    rng = np.random.default_rng(3)
    n, K = 40, 5
    A = rng.choice([-1.0, 1.0], n)
    B = rng.uniform(0, 3, n)
    p = rng.uniform(0.2, 0.9, n)
    rules = rng.random((n, K)) < 0.5
    got = ipw_values(rules, A, B, p)
    for k in range(K):
        follow = [i for i in range(n) if (1.0 if rules[i, k] else -1.0) == A[i]]
        num = sum(B[i] / p[i] for i in follow)
        den = sum(1.0 / p[i] for i in follow)
        assert got[k] == pytest.approx(num / den, rel=1e-13)


def test_ipw_values_batches_constant_propensity_and_nobody_following():
    A = np.array([[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0]])
    B = np.array([[1.0, 2.0, 4.0], [3.0, 5.0, 7.0]])
    rules = np.array([[[True], [False], [False]], [[False], [False], [False]]])  # (reps, n, K)
    got = ipw_values(rules, A, B)
    assert got.shape == (2, 1)
    assert got[0, 0] == pytest.approx((1.0 + 2.0) / 2)
    assert got[1, 0] == pytest.approx((3.0 + 5.0) / 2)
    assert np.isnan(ipw_values(np.array([[True]]), np.array([-1.0]), np.array([1.0]))[0])
