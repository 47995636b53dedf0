"""Multi-stage DP-OWL (pydpowl.estimators.multistage): backward releases, weights, ledger and bad input."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from pydpowl._validation import caller_words
from pydpowl import DPOWL
from pydpowl.exceptions import BudgetExceededError
from pydpowl.estimators.multistage import DPMultiStageOWL, ipw_value
from pydpowl.privacy.accountant import BudgetAccountant

BOUNDS = ([-3.0, -3.0, -3.0], [3.0, 3.0, 3.0])


def _two_stage(n=600, seed=1, arms2=(-1.0, 1.0)):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    A1 = rng.choice([-1.0, 1.0], n)
    A2 = rng.choice(np.asarray(arms2), n)
    opt1 = np.where(X[:, 0] > 0, 1.0, -1.0)
    opt2 = np.where(X[:, 1] > 0, arms2[-1], arms2[0])
    R1 = np.zeros(n)
    R2 = (A1 == opt1).astype(float) + (A2 == opt2) + rng.normal(0, 0.5, n)
    return X, [A1, A2], [R1, R2], (opt1, opt2)


def _model(**kw):
    """Output perturbation with the classic BOWL weights (the tests written for it); see _default for the defaults."""
    settings = dict(epsilon=np.inf, gamma=20.0, feature_bounds=BOUNDS, reward_bounds=[(0.0, 0.1), (-1.0, 4.0)],
                    mechanism="output", residual=False, huber_h=0.5)
    settings.update(kw)
    return DPMultiStageOWL(**settings)


def _default(**kw):
    """The estimator's own defaults (mechanism, residual weights, gamma and h 'auto')."""
    settings = dict(epsilon=np.inf, feature_bounds=BOUNDS, reward_bounds=[(0.0, 0.1), (-1.0, 4.0)])
    settings.update(kw)
    return DPMultiStageOWL(**settings)


def test_one_stage_is_dpowl_with_shifted_benefits():
    X, A, R, _ = _two_stage()
    m = _model(epsilon=1.0, reward_bounds=(-1.0, 4.0), random_state=4).fit(X, [A[1]], [R[1]], [0.5])
    W = 5.0 / 0.5  # (upper - lower) / floor
    ref = DPOWL(epsilon=1.0, gamma=20.0, weights_upper_bound=W, feature_bounds=BOUNDS, random_state=4,
                mechanism="output", residual=False, huber_h=0.5).fit(
        X, A[1], np.clip(R[1], -1.0, 4.0) + 1.0, 0.5)
    assert_array_equal(m.stages_[0].rule.scaled_coef.ravel(), ref.scaled_coef_)
    assert m.stages_[0].weights_upper_bound == W
    assert m.stages_[0].sensitivity == ref.sensitivity_


def test_stage_one_weights_follow_the_released_stage_two_rule():
    """Stage 1 is DP-OWL on (Y - lower) * 1{A2 = d2(H)} / (p1 p2) with d2 the *released* (noisy) rule."""
    X, A, R, _ = _two_stage()
    m = _model(epsilon=[np.inf, 3.0], keep_nonprivate=True, random_state=2).fit(X, A, R, [0.5, 0.5])
    d2 = m.predict(X, stage=2)
    followed = d2 == A[1]
    assert m.n_followed_ == [int(followed.sum()), len(X)]
    Y = np.clip(R[0], 0.0, 0.1) + np.clip(R[1], -1.0, 4.0) - (0.0 - 1.0)
    W = (0.1 + 5.0) / 0.25
    ref = DPOWL(epsilon=np.inf, gamma=20.0, weights_upper_bound=W, feature_bounds=BOUNDS, weight_sensitivity=0,
                mechanism="output", residual=False, huber_h=0.5).fit(
        X, A[0], Y * followed, np.full(len(X), 0.25))
    assert_allclose(m.nonprivate_scaled_coef_[0].ravel(), ref.scaled_coef_, rtol=0, atol=1e-12)


def test_exact_regime_recovers_the_optimal_rules():
    X, A, R, (opt1, opt2) = _two_stage(n=2000)
    for baseline in ("lower", "linear", 1.0):
        d1, d2 = _model(baseline=baseline).fit(X, A, R, [0.5, 0.5]).predict(X)
        assert np.mean(d2 == opt2) > 0.93 and np.mean(d1 == opt1) > 0.9, baseline


def test_three_arm_stage_with_string_labels():
    X, A, R, (_, opt2) = _two_stage(n=2000, arms2=("a", "b", "c"))
    m = _model().fit(X, A, R, [0.5, 1 / 3])
    assert_array_equal(m.classes_[1], ["a", "b", "c"])
    assert m.stages_[1].rule.scaled_coef.shape == (2, 4)
    d2 = m.predict(X, stage=2)
    assert d2.dtype.kind == "U"
    assert m.decision_function(X, stage=2).shape == (len(X), 3)


def test_ledger_records_every_release_and_the_budget_split():
    X, A, R, _ = _two_stage()
    m = _model(epsilon=2.0, baseline="linear", baseline_share=0.25, random_state=0).fit(X, A, R, [0.5, 0.5])
    labels = [r.label for r in m.ledger_.releases]
    assert labels == ["stage 2 baseline (linear, KST)", "stage 2 rule (2 arms, output perturbation)",
                      "stage 1 baseline (linear, KST)", "stage 1 rule (2 arms, output perturbation)"]
    assert_allclose([r.epsilon for r in m.ledger_.releases], [0.25, 0.75, 0.25, 0.75])
    assert m.ledger_.spent == pytest.approx(2.0)
    assert m.epsilon_stages_ == [1.0, 1.0]
    assert m.stages_[0].baseline_coef.shape == (4,)
    # issue 21.5: every release carries its delta (the rules' and the KST baselines' roundings); they add up
    deltas = [r.delta for r in m.ledger_.releases]
    assert all(0 < d < 1e-6 for d in deltas) and m.privacy_spent_ == m.ledger_.privacy_spent
    assert m.privacy_spent_[1] == pytest.approx(sum(deltas)) and m.privacy_spent_[0] == pytest.approx(2.0)
    assert m.floating_point_delta() == pytest.approx(deltas[1] + deltas[3])  # the rules' part


def test_shared_accountant_is_checked_before_the_data_and_spent_per_release():
    X, A, R, _ = _two_stage()
    acc = BudgetAccountant(total_epsilon=1.5)
    with pytest.raises(BudgetExceededError, match=r"DPMultiStageOWL, 2 stages: epsilon=2 exceeds"):
        _model(epsilon=2.0, accountant=acc).fit(X, A, R, [0.5, 0.5])
    assert acc.spent == 0.0
    _model(epsilon=[0.5, 1.0], accountant=acc, random_state=1).fit(X, A, R, [0.5, 0.5])
    assert [r.epsilon for r in acc.releases] == [1.0, 0.5]  # stage 2 first
    assert acc.spent == pytest.approx(1.5)


def test_weight_bounds_from_reward_bounds_and_floors():
    X, A, R, _ = _two_stage()
    P = np.full(len(X), 0.4)
    m = _model(propensity_floor=[None, 0.2], weight_sensitivity=0).fit(X, A, R, [0.5, P])
    assert m.stages_[1].weights_upper_bound == pytest.approx(5.0 / 0.2)
    assert m.stages_[0].weights_upper_bound == pytest.approx(5.1 / (0.5 * 0.2))
    m = _model(baseline=1.0).fit(X, A, R, [0.5, 0.5])
    assert m.stages_[1].weights_upper_bound == pytest.approx(3.0 / 0.5)  # max(4 - 1, 1 - (-1)) / 0.5


@pytest.mark.parametrize("change, error, message", [
    (lambda X, A, R, P: (X, [A[0], np.ones(len(X))], R, P), ValueError,
     r"^A\[1\] \(stage 2's treatments\) must contain at least two arms"),
    (lambda X, A, R, P: ([X, X[:-1]], A, R, P), ValueError,
     r"^H\[1\] \(stage 2's history\) has 599 rows but H\[0\] has 600"),
    (lambda X, A, R, P: (X, [A[0], np.array(["a", "b", "c"] * 200)], R,
                         [0.5, np.full((600, 3), 0.3)]), ValueError,
     r"each row must sum to 1 across the 3 arms"),
    (lambda X, A, R, P: (X, A, R, [0.5, np.full(600, 0.5)]), ValueError, r"weight_sensitivity="),
    (lambda X, A, R, P: (X, A, R[:1], P), ValueError, r"^R must have one entry per stage \(T=2\), got 1"),
    (lambda X, A, R, P: (X, A, [R[0], R[1][:-2]], P), ValueError, r"^R\[1\] must have length 600"),
    (lambda X, A, R, P: (X, A, R, [0.5, 0.4]), ValueError, None),
    (lambda X, A, R, P: (X, A[0], R, P), TypeError, r"^A must be a list with one entry per stage"),
])
def test_bad_input_is_named(change, error, message):
    X, A, R, _ = _two_stage()
    args = change(X, A, R, [0.5, 0.5])
    if message is None:  # P(A = +1) = 0.4 is a valid two-arm design: no error
        _model().fit(*args)
        return
    with pytest.raises(error, match=message):
        _model().fit(*args)


@pytest.mark.parametrize("kw, error, message", [
    (dict(reward_bounds=[(0.0, 0.1), (4.0, -1.0)]), ValueError, r"^reward_bounds\[1\] must be finite with lower"),
    (dict(epsilon=[1.0, 1.0, 1.0]), ValueError, r"^epsilon must be one number \(the total\) or one per stage"),
    (dict(gamma=[1.0]), ValueError, r"^gamma must be one setting for every stage or one per stage \(T=2\), got 1"),
    (dict(baseline="lasso"), ValueError, r"^baseline must be 'lower', 'linear', 'ols' or a number"),
    (dict(epsilon=2.0, baseline="ols"), ValueError, r"^baseline='ols' \(stage 1\) is the non-private least-squares"),
    (dict(baseline="linear", baseline_share=1.0), ValueError, r"^baseline_share must be in \(0, 1\)"),
    (dict(propensity_floor=[0.5, 1.5]), ValueError, r"^propensity_floor\[1\] must be in \(0, 1\]"),
])
def test_bad_settings_are_named(kw, error, message):
    X, A, R, _ = _two_stage()
    with pytest.raises(error, match=message):
        _model(**kw).fit(X, A, R, [0.5, 0.5])


def test_array_propensities_need_a_floor():
    X, A, R, _ = _two_stage()
    with pytest.raises(ValueError, match=r"^propensity_floor\[1\] is needed: propensity\[1\] \(stage 2\) gives one "
                                         r"probability per subject \(an array\)"):
        _model(weight_sensitivity=0).fit(X, A, R, [0.5, np.full(len(X), 0.5)])


def test_per_stage_names_in_a_callers_words():
    """Per-stage feature bounds are named with their stage, and every per-stage name passes through caller_words (the
    R front end's owl() maps them to H[[2]], bounds[[2]]$lower, ...)."""
    X, A, R, _ = _two_stage()
    lower, upper = np.full(3, -3.0), np.full(3, 3.0)
    per_stage = _model(feature_bounds=[(lower, upper), (upper, lower)])
    with pytest.raises(ValueError, match=r"^feature_bounds\[1\]: lower must be <= upper"):
        per_stage.fit(X, A, R, [0.5, 0.5])
    with pytest.raises(ValueError, match=r"^feature_bounds: lower must be <= upper"):  # one pair
        _model(feature_bounds=(upper, lower)).fit(X, A, R, [0.5, 0.5])
    names = {"feature_bounds[1].lower": "b2$lo", "feature_bounds[1].upper": "b2$up", "H[1]": "h2", "H[0]": "h1",
             "reward_bounds[1]": "rb2", "propensity_floor[1]": "pf2", "propensity[1] (stage 2)": "p2"}
    with caller_words(names, index_base=1):
        with pytest.raises(ValueError, match=r"^b2\$lo must be <= b2\$up"):
            per_stage.fit(X, A, R, [0.5, 0.5])
        with pytest.raises(ValueError, match=r"^h2 \(stage 2's history\) has 599 rows but h1 has 600"):
            _model().fit([X, X[:-1]], A, R, [0.5, 0.5])
        with pytest.raises(ValueError, match=r"^rb2 must be finite with lower < upper .*got rb2=\(4\.0, -1\.0\)\.$"):
            _model(reward_bounds=[(0.0, 0.1), (4.0, -1.0)]).fit(X, A, R, [0.5, 0.5])
        with pytest.raises(ValueError, match=r"^pf2 is needed: p2 gives one probability per subject"):
            _model(weight_sensitivity=0).fit(X, A, R, [0.5, np.full(len(X), 0.5)])
        with pytest.raises(ValueError, match=r"^p2 was given as an array of P\(A_i \| x_i\): state how"):
            _model().fit(X, A, R, [0.5, np.full(len(X), 0.5)])


def test_predict_shapes_and_stage_numbers():
    X, A, R, _ = _two_stage()
    m = _model().fit([X, X], A, R, [0.5, 0.5])
    both = m.predict([X, X])
    assert len(both) == 2 and both[0].shape == (len(X),)
    assert_array_equal(m.predict(X, stage=1), both[0])
    with pytest.raises(ValueError, match=r"^stage must be in 1..2, got stage=3"):
        m.predict(X, stage=3)
    with pytest.raises(ValueError, match=r"stage 1's history must have 3 columns, got 2"):
        m.predict(X[:, :2], stage=1)


def test_ipw_value_by_hand():
    A = [np.array([1, -1, 1, -1]), np.array([1, 1, -1, -1])]
    R = [np.zeros(4), np.array([1.0, 2.0, 3.0, 4.0])]
    P = [np.full(4, 0.5), np.full(4, 0.5)]
    d = [np.array([1, -1, -1, -1]), np.array([1, 1, 1, -1])]  # followed by subjects 0, 1, 3
    value, se = ipw_value(d, A, R, P)
    assert value == pytest.approx((1 + 2 + 4) / 3)
    assert se > 0


def test_floating_point_delta_is_small_and_zero_when_exact():
    X, A, R, _ = _two_stage()
    assert _model().fit(X, A, R, [0.5, 0.5]).floating_point_delta() == 0.0
    assert 0 < _model(epsilon=2.0, random_state=0).fit(X, A, R, [0.5, 0.5]).floating_point_delta() < 1e-8


def test_gamma_for_cost_gives_dtrlearn2s_penalty_on_a_common_scale():
    """gamma = n / (c d s^2): pydpowl's (gamma/2) ||theta||^2 over theta_j = beta_j s sqrt(d) (DPpack's scaled
    space, from the engine's own FeatureScaler) is DTRlearn2's (n / (2c)) ||beta||^2."""
    from pydpowl import FeatureScaler
    from pydpowl.estimators.multistage import gamma_for_cost

    n, c, s = 250, 0.5, 4.0
    scaler = FeatureScaler.from_bounds(([-s] * 3, [s] * 3), 3, True)
    gamma = gamma_for_cost(c, n, scaler.n_coefficients, s)
    beta = np.array([0.0, 0.3, -1.2, 0.7])  # intercept 0: DTRlearn2 does not penalise it
    theta = beta * scaler.column_scale * scaler.dimension_scale  # coef_to_original's inverse
    assert_allclose(scaler.coef_to_original(theta), beta, rtol=1e-14)
    assert gamma / 2 * theta @ theta == pytest.approx(n / (2 * c) * beta @ beta, rel=1e-14)
    with pytest.raises(ValueError, match=r"^c must be in \(0, inf\), got c=0\.0"):
        gamma_for_cost(0.0, n, 4, s)


# ---------------------------------------------------------------- weighted objective perturbation per stage

def test_defaults_are_objective_perturbation_with_residual_weights_per_two_arm_stage():
    X, A, R, _ = _two_stage()
    m = _default(epsilon=2.0, random_state=0).fit(X, A, R, [0.5, 0.5])
    assert [s.mechanism for s in m.stages_] == ["objective", "objective"]
    assert [s.residual for s in m.stages_] == [True, True]
    assert [r.label for r in m.ledger_.releases] == [
        "stage 2 baseline (mean, Laplace)", "stage 2 rule (2 arms, objective perturbation)",
        "stage 1 baseline (mean, Laplace)", "stage 1 rule (2 arms, objective perturbation)"]
    # each stage's 1 is split 0.1 / 0.9 (residual weights' share) and the four releases add up to 2
    assert_allclose([r.epsilon for r in m.ledger_.releases], [0.1, 0.9, 0.1, 0.9])
    assert m.epsilon_stages_ == pytest.approx([1.0, 1.0])
    assert m.privacy_spent_[0] == pytest.approx(2.0)
    deltas = [r.delta for r in m.ledger_.releases]
    assert all(0 < d < 1e-6 for d in deltas) and m.privacy_spent_[1] == pytest.approx(sum(deltas))
    assert m.floating_point_delta() == pytest.approx(deltas[1] + deltas[3])
    # residual weights are bounded by W clip_share (R / prod floors): 5 / 16 / 0.5 and 5.1 / 16 / 0.25
    assert m.stages_[1].weights_upper_bound == pytest.approx(5.0 / 16 / 0.5)
    assert m.stages_[0].weights_upper_bound == pytest.approx(5.1 / 16 / 0.25)
    assert all(np.isnan(s.sensitivity) for s in m.stages_)  # objective perturbation has no output sensitivity
    assert all(s.baseline is not None and s.gamma > 0 and s.huber_h == 1.0 for s in m.stages_)


def test_one_stage_default_is_dpowls_default_release_bit_for_bit():
    """T = 1 with the defaults is DPOWL's default (objective perturbation, residual weights, gamma 'auto')
    on the benefit's public bounds: the same baseline, the same rule, from the same random state."""
    X, A, R, _ = _two_stage()
    m = _default(epsilon=1.0, reward_bounds=(-1.0, 4.0), random_state=7).fit(X, [A[1]], [R[1]], [0.5])
    ref = DPOWL(epsilon=1.0, weights_upper_bound=5.0 / 0.5, benefit_bounds=(-1.0, 4.0), feature_bounds=BOUNDS,
                random_state=7).fit(X, A[1], R[1], 0.5)
    assert ref.mechanism_ == "objective" and ref.residual_
    assert_array_equal(m.stages_[0].rule.scaled_coef.ravel(), ref.scaled_coef_)
    assert m.stages_[0].baseline == pytest.approx(ref.baseline_ - 1.0, rel=1e-12)  # DPOWL's is on B - L
    assert m.stages_[0].gamma == ref.gamma_
    assert m.privacy_spent_ == pytest.approx(ref.privacy_spent_, rel=1e-12)


def test_stage_one_residual_weights_use_the_released_stage_two_rule_and_zero_non_followers():
    """Stage 1's objective, by hand: labels A sign(r), weights min(|r| 1{A2 = d2(H)} / (p1 p2), W_r) with
    r = clip(Y - m, -R, R), m the mean of Y over all n subjects (exact at epsilon = inf)."""
    from pydpowl import FeatureScaler
    from pydpowl.engine.losses import HuberHingeLoss
    from pydpowl.engine.solver import solve_weighted_erm

    X, A, R, _ = _two_stage()
    m = _default(epsilon=[np.inf, 3.0], gamma=20.0, keep_nonprivate=True, random_state=2).fit(X, A, R, [0.5, 0.5])
    followed = m.predict(X, stage=2) == A[1]
    Y = np.clip(R[0], 0.0, 0.1) + np.clip(R[1], -1.0, 4.0)
    base = Y.mean()
    Rc = 5.1 / 16
    r = np.clip(Y - base, -Rc, Rc)
    labels = np.where(r < 0, -A[0], A[0])
    w = np.minimum(np.abs(r) * followed / 0.25, Rc / 0.25)
    Z, _ = FeatureScaler.from_bounds(BOUNDS, 3, True).transform_checked(X)
    ref = solve_weighted_erm(Z, labels, w, gamma=20.0, loss=HuberHingeLoss(1.0), tol=1e-12).x
    assert m.stages_[0].baseline == pytest.approx(base, rel=1e-12)
    assert_allclose(m.nonprivate_scaled_coef_[0].ravel(), ref, rtol=0, atol=1e-9)


def test_output_mechanism_stays_available_and_objective_is_refused_where_unproven():
    X, A, R, _ = _two_stage()
    out = _default(epsilon=2.0, mechanism="output", random_state=0).fit(X, A, R, [0.5, 0.5])
    assert [s.mechanism for s in out.stages_] == ["output", "output"]
    assert all(s.sensitivity > 0 for s in out.stages_)
    # three arms at stage 2: 'auto' releases it as K-arm DPOWL does (objective perturbation, residual weights)
    X3, A3, R3, _ = _two_stage(arms2=("a", "b", "c"))
    mixed = _default(epsilon=2.0, random_state=0).fit(X3, A3, R3, [0.5, 1 / 3])
    assert [s.mechanism for s in mixed.stages_] == ["objective", "objective"]
    assert [s.residual for s in mixed.stages_] == [True, True]
    assert [r.label for r in mixed.ledger_.releases] == [
        "stage 2 baseline (mean, Laplace)", "stage 2 rule (3 arms, objective perturbation)",
        "stage 1 baseline (mean, Laplace)", "stage 1 rule (2 arms, objective perturbation)"]
    assert mixed.privacy_spent_[0] == pytest.approx(2.0)
    forced = _default(epsilon=2.0, mechanism="objective", residual=False, random_state=0)
    forced.fit(X3, A3, R3, [0.5, 1 / 3])
    assert [s.mechanism for s in forced.stages_] == ["objective", "objective"]
    out3 = _default(epsilon=2.0, mechanism="output", random_state=0).fit(X3, A3, R3, [0.5, 1 / 3])
    assert [s.mechanism for s in out3.stages_] == ["output", "output"]
    # estimated propensities with C > 0: output perturbation and the classic weights
    P = np.full(len(X), 0.5)
    c = _default(epsilon=2.0, propensity_floor=0.2, weight_sensitivity=0.5, random_state=0).fit(X, A, R, [0.5, P])
    assert [s.mechanism for s in c.stages_] == ["output", "output"]  # the stated C is every stage's
    assert not any(s.residual for s in c.stages_)
    with pytest.raises(ValueError, match=r"^mechanism='objective' needs C = 0"):
        _default(epsilon=2.0, mechanism="objective", propensity_floor=0.2, weight_sensitivity=0.5).fit(
            X, A, R, [0.5, P])


def test_residual_weights_need_the_lower_baseline():
    X, A, R, _ = _two_stage()
    with pytest.raises(ValueError, match=r"^residual weights \(a private mean baseline\) replace baseline="):
        _default(epsilon=2.0, residual=True, baseline="linear").fit(X, A, R, [0.5, 0.5])
    m = _default(epsilon=2.0, baseline="linear", random_state=0).fit(X, A, R, [0.5, 0.5])  # 'auto': no residual
    assert [s.residual for s in m.stages_] == [False, False] and m.stages_[0].mechanism == "objective"


def test_an_r_stream_is_accounted_under_rs_samplers():
    from pydpowl.privacy.accountant import rounded_release_spent
    from pydpowl import RRandom

    X, A, R, _ = _two_stage()
    m = _default(epsilon=2.0, random_state=RRandom(3)).fit(X, A, R, [0.5, 0.5])
    assert m.sampler_model_ == "R"
    s = m.stages_[0]
    expected = rounded_release_spent(s.epsilon, dim=s.rule.scaled_coef.size, grid=s.release_grid,
                                     noise_scale=s.noise_scale, stream="R")[1]
    assert s.delta == expected and m.ledger_.releases[-1].delta == expected
    assert _default(epsilon=2.0, random_state=0).fit(X, A, R, [0.5, 0.5]).sampler_model_ == "numpy"


def test_stage_split_divides_the_total_in_the_given_ratios_exactly():
    """stage_split = (1, 2): stage 1 gets a third of the total, stage 2 two thirds (exact shares, rounded down)."""
    from fractions import Fraction

    X, A, R, _ = _two_stage()
    m = _model(epsilon=1.5, stage_split=[1, 2], random_state=0).fit(X, A, R, [0.5, 0.5])
    assert m.epsilon_stages_ == [0.5, 1.0]
    assert [r.epsilon for r in m.ledger_.releases] == [1.0, 0.5]  # stage 2 first
    m = _model(epsilon=1.0, stage_split=[1, 2], random_state=0).fit(X, A, R, [0.5, 0.5])
    assert sum(Fraction(e) for e in m.epsilon_stages_) <= 1  # each share rounded down: never above the total
    assert m.epsilon_stages_[1] == pytest.approx(2 / 3, rel=1e-15)


@pytest.mark.parametrize("split, message", [
    ([1, 0], r"stage_split\[1\] must be in \(0, inf\), got 0 \(stage 2"),
    ([1, -2], r"stage_split\[1\] must be in \(0, inf\), got -2"),
    ([1, 2, 3], r"stage_split must have one share per stage \(T=2\), got 3"),
    ("1:2", r"stage_split must be a sequence of positive numbers"),
])
def test_bad_stage_split_is_named(split, message):
    X, A, R, _ = _two_stage(n=200)
    with pytest.raises((TypeError, ValueError), match=message):
        _model(epsilon=1.0, stage_split=split).fit(X, A, R, [0.5, 0.5])


def test_stage_split_needs_a_total_not_per_stage_budgets():
    X, A, R, _ = _two_stage(n=200)
    with pytest.raises(ValueError, match=r"stage_split divides a total epsilon; epsilon is already one per stage"):
        _model(epsilon=[0.5, 0.5], stage_split=[1, 2]).fit(X, A, R, [0.5, 0.5])
