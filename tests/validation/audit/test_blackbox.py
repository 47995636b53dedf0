"""The distinguishing test and its epsilon lower bound, on mechanisms whose epsilon is known.

Samples come from numpy's own Laplace sampler (not pydpowl's noise code), so
the true epsilon of each synthetic mechanism is known exactly.
"""

import math

import numpy as np
import pytest
from scipy import stats

from validation.audit.blackbox import (
    SELECTION_ALPHA_FACTOR,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_bound,
    evaluate_test,
    select_test,
)


@pytest.mark.parametrize("n", [1, 10, 1000])
def test_clopper_pearson_closed_forms_at_the_ends(n):
    alpha = 0.05
    # P(X = 0; p) = (1 - p)^n = alpha  <=>  p = 1 - alpha^(1/n)
    assert clopper_pearson_upper(0, n, alpha) == pytest.approx(1 - alpha ** (1 / n), rel=1e-10)
    assert clopper_pearson_lower(n, n, alpha) == pytest.approx(alpha ** (1 / n), rel=1e-10)
    assert clopper_pearson_upper(n, n, alpha) == 1.0 and clopper_pearson_lower(0, n, alpha) == 0.0


@pytest.mark.parametrize("k, n", [(3, 50), (17, 40), (250, 1000)])
def test_clopper_pearson_bounds_solve_the_binomial_tail_equations(k, n):
    alpha = 0.025
    hi, lo = clopper_pearson_upper(k, n, alpha), clopper_pearson_lower(k, n, alpha)
    assert stats.binom.cdf(k, n, hi) == pytest.approx(alpha, rel=1e-8)  # P(X <= k; hi) = alpha
    assert stats.binom.sf(k - 1, n, lo) == pytest.approx(alpha, rel=1e-8)  # P(X >= k; lo) = alpha
    assert lo < k / n < hi


def _laplace_pair(eps, shift, n, seed, d=1):
    rng = np.random.default_rng(seed)
    a = rng.laplace(scale=1.0 / eps, size=(n, d))
    b = rng.laplace(scale=1.0 / eps, size=(n, d))
    b[:, 0] += shift
    return a, b


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_bound_is_valid_and_nearly_tight_for_laplace(eps):
    # shift 1 with scale 1/eps: the exact privacy loss is eps
    a, b = _laplace_pair(eps, 1.0, 20000, seed=int(eps * 10))
    bound = epsilon_lower_bound(a, b)
    assert bound.epsilon_lb <= eps, f"Laplace eps={eps}: lower bound {bound.epsilon_lb:.3f} exceeds the truth"
    assert bound.epsilon_lb >= 0.7 * eps, f"Laplace eps={eps}: lower bound {bound.epsilon_lb:.3f} < 0.7 eps (weak)"


def test_bound_flags_a_mechanism_weaker_than_claimed():
    # noise for eps = 4 while eps = 1 is claimed: the audit must report more than 1
    a, b = _laplace_pair(4.0, 1.0, 5000, seed=3)
    assert epsilon_lower_bound(a, b).epsilon_lb > 2.0


def test_coverage_over_many_runs():
    """The bound exceeds the true epsilon in at most about alpha of repeated audits."""
    exceed = 0
    for rep in range(60):
        a, b = _laplace_pair(1.0, 1.0, 600, seed=100 + rep)
        exceed += epsilon_lower_bound(a, b, alpha=0.05).epsilon_lb > 1.0
    # Binomial(60, 0.05): P(X >= 9) < 0.01
    assert exceed <= 8, f"{exceed} of 60 bounds exceed the true epsilon (expected about 3 or fewer)"


def test_bound_is_zero_for_identical_mechanisms():
    a, b = _laplace_pair(1.0, 0.0, 4000, seed=9, d=3)
    assert epsilon_lower_bound(a, b).epsilon_lb < 0.1


def test_selection_and_evaluation_use_disjoint_halves():
    a, b = _laplace_pair(1.0, 1.0, 2000, seed=5, d=2)
    test = select_test(a[:1000], b[:1000], alpha=0.05 * SELECTION_ALPHA_FACTOR)
    direct = evaluate_test(test, a[1000:], b[1000:])
    via_split = epsilon_lower_bound(a, b)
    assert via_split.epsilon_lb == direct.epsilon_lb and via_split.n_eval == 1000


def test_statistic_ignores_the_least_significant_bits():
    """Regression: an atom of the likelihood statistic at -||c' - c|| split by rounding exceeded epsilon.

    Releases computed as 0 + noise and as 1 + noise round differently; a region
    chosen on those bits gave 0.56 > 0.5 before the statistics were rounded.
    """
    rng = np.random.default_rng(0)
    eps = 0.5
    a = rng.gamma(1, 1 / eps, size=(20000, 1)) * rng.choice([-1.0, 1.0], size=(20000, 1))
    b = 1.0 + rng.gamma(1, 1 / eps, size=(20000, 1)) * rng.choice([-1.0, 1.0], size=(20000, 1))
    assert epsilon_lower_bound(a, b).epsilon_lb <= eps


def test_bad_samples_are_refused():
    with pytest.raises(ValueError, match="same shape"):
        select_test(np.zeros((20, 2)), np.zeros((20, 3)))
    with pytest.raises(ValueError, match="need 0 <= k <= n"):
        clopper_pearson_upper(5, 3, 0.05)
    assert math.isfinite(clopper_pearson_upper(0, 1, 0.05))


@pytest.mark.parametrize("control", [False, True])
@pytest.mark.parametrize("lower_bound, violates", [(0.4, False), (1.0, False), (1.2, True)])
def test_bound_verdict_rule_for_honest_rows_and_controls(control, lower_bound, violates):
    """Both kinds of audit row (one engine's release, the whole analysis) judge their bound by one rule."""
    from validation.audit.analysis import AnalysisAuditRow
    from validation.audit.blackbox import EpsilonBound
    from validation.audit.run import BlackBoxRow

    bound = EpsilonBound(epsilon_lb=lower_bound, q_count=1, p_count=1, n_eval=10, q_low=0.1, p_high=0.1, point=0.0,
                         test=None, alpha=0.05)
    rows = [BlackBoxRow(config="c", engine="pydpowl", epsilon=1.0, noise_epsilon=1.0, ideal=1.0, bound=bound,
                        control=control),
            AnalysisAuditRow(config="c", mode="whole", claimed=1.0, noise_epsilon=1.0, bound=bound, control=control)]
    expected = {(False, False): "PASS", (False, True): "FAIL", (True, False): "NOT FLAGGED (audit too weak)",
                (True, True): "FLAGGED (expected)"}[(control, violates)]
    for row in rows:
        assert row.epsilon_lb == lower_bound
        assert row.violates is violates
        assert row.verdict == expected
        assert row.passed is (violates if control else not violates)
