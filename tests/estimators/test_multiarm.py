"""Multi-arm DP-OWL pieces (pydpowl.estimators.multiarm): labels, propensities, the problem and its release."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import optimize

from pydpowl import DPOWL, FeatureScaler, LogisticPropensity
from pydpowl.engine.multicategory import simplex_vertices
from pydpowl.estimators.multiarm import (
    ArmRule,
    encode_arms,
    prepare_arm_problem,
    release_arm_rule,
    resolve_arm_propensity,
)

BOUNDS = ([-2.0, -2.0, -2.0], [2.0, 2.0, 2.0])


def _data(n=300, K=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, (n, 3))
    A = rng.integers(0, K, n)
    B = rng.uniform(0, 2, n) + (A == (X[:, 0] > 0).astype(int))
    return X, A, B


def _problem(X, A, B, K, W=10.0, propensity=None):
    classes, codes = encode_arms("treatment", A)
    Z, _ = FeatureScaler.from_bounds(BOUNDS, 3, True).transform_checked(X)
    prop = resolve_arm_propensity(1.0 / K if propensity is None else propensity, classes, codes)
    return classes, Z, codes, prepare_arm_problem(Z, codes, K, B, prop.probability, weights_upper_bound=W)


# ------------------------------------------------------------------ labels
def test_labels_of_any_kind_are_sorted_classes():
    classes, codes = encode_arms("treatment", ["placebo", "drug", "drug", "dose2"])
    assert_array_equal(classes, ["dose2", "drug", "placebo"])
    assert_array_equal(codes, [2, 1, 1, 0])
    classes, codes = encode_arms("treatment", np.array([3, 1, 2, 1]))
    assert_array_equal(classes, [1, 2, 3])
    assert_array_equal(codes, [2, 0, 1, 0])


@pytest.mark.parametrize("values, error, message", [
    (["a", "a", "a"], ValueError, r"^A\[1\] must contain at least two arms .* all 3 entries are 'a'"),
    ([1.0, np.nan, 2.0], ValueError, r"^A\[1\] must be finite; it has 1 NaN and 0 infinite entries of 3 at position"),
    (np.array([1, "a"], dtype=object), TypeError, r"^A\[1\] must hold numbers or strings, not a mix"),
    ([True, False], TypeError, r"^A\[1\] must hold numbers or strings \(arm labels\), got booleans"),
    ([[1, 2], [3, 4]], ValueError, r"^A\[1\] must be 1-D"),
])
def test_bad_labels_are_named(values, error, message):
    with pytest.raises(error, match=message):
        encode_arms("A[1]", values)


def test_labels_length_is_checked():
    with pytest.raises(ValueError, match=r"^treatment must have length 5 \(one label per subject\), got length 3"):
        encode_arms("treatment", [1, 2, 3], length=5)


# ------------------------------------------------------------------ propensities
def test_propensity_forms_give_the_received_arms_probability():
    classes, codes = encode_arms("t", ["a", "b", "c", "a"])
    assert_allclose(resolve_arm_propensity(1 / 3, classes, codes).probability, 1 / 3)
    prop = resolve_arm_propensity({"a": 0.5, "b": 0.25, "c": 0.25}, classes, codes)
    assert_allclose(prop.probability, [0.5, 0.25, 0.25, 0.5])
    assert prop.C == 0.0 and prop.floor == 0.25
    P = np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3], [0.3, 0.3, 0.4], [0.5, 0.25, 0.25]])
    prop = resolve_arm_propensity(P, classes, codes, weight_sensitivity=0)
    assert_allclose(prop.probability, [0.2, 0.6, 0.4, 0.5])
    assert prop.floor is None
    two, c2 = encode_arms("t", [-1, 1, 1])
    assert_allclose(resolve_arm_propensity(0.7, two, c2).probability, [0.3, 0.7, 0.7])  # P(classes[1]) = 0.7


@pytest.mark.parametrize("propensity, kw, error, message", [
    (0.5, {}, ValueError, r"a single number means balanced randomisation, P\(A = a\) = 1/K = 0.333333 for K=3"),
    ({"a": 0.5, "b": 0.5}, {}, ValueError, r"exactly the arms \['a', 'b', 'c'\]; missing \['c'\]"),
    ({"a": 0.5, "b": 0.3, "c": 0.3}, {}, ValueError, r"must sum to 1 .* got 1.1"),
    (np.full((4, 3), 0.4), {"weight_sensitivity": 0}, ValueError,
     r"each row must sum to 1 across the 3 arms .* 4 of 4 rows do not \(first at row 0\)"),
    (np.full((4, 2), 0.5), {"weight_sensitivity": 0}, ValueError, r"must have shape \(n, K\) = \(4, 3\)"),
    (np.full(4, 0.3), {}, ValueError, r"state how it was obtained with weight_sensitivity="),
    (np.array([0.3, 0.0, 0.3, 0.3]), {"weight_sensitivity": 0}, ValueError,
     r"must lie in \(0, 1\] \(P\(A_i \| x_i\) of the received arm\); 1 of 4"),
    (LogisticPropensity(feature_bounds=([0], [1]), benefit_bound=1, ridge=1), {}, TypeError,
     r"a LogisticPropensity models two arms"),
    ("1/3", {}, TypeError, r"must be a number, a mapping"),
])
def test_bad_propensities_are_named(propensity, kw, error, message):
    classes, codes = encode_arms("t", ["a", "b", "c", "a"])
    with pytest.raises(error, match=message):
        resolve_arm_propensity(propensity, classes, codes, **kw)


# ------------------------------------------------------------------ two arms: today's DP-OWL release
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_two_arms_reproduce_the_dpowl_release_exactly(seed):
    X, A01, B = _data(K=2, seed=seed)
    A = np.where(A01 == 1, 1.0, -1.0)
    model = DPOWL(epsilon=1.0, gamma=2.0, weights_upper_bound=5.0, feature_bounds=BOUNDS, keep_nonprivate=True,
                  mechanism="output", residual=False, huber_h=0.5,  # the paper's mechanism, as the K-arm rule's
                  random_state=seed).fit(X, A, B, 0.5)
    _, _, _, problem = _problem(X, A, B, 2, W=5.0, propensity=0.5)
    out = release_arm_rule(problem, epsilon=1.0, gamma=2.0, tol=1e-10, rng=np.random.default_rng(seed))
    assert_array_equal(out.coef, model.scaled_coef_)  # the same floats: the same problem, noise and rounding
    assert_array_equal(out.nonprivate_coef, model.nonprivate_scaled_coef_)
    assert out.sensitivity == model.sensitivity_ and out.grid == model.release_grid_


# ------------------------------------------------------------------ K arms: the solver against scipy
def _huber(m, h):
    r = (1 + h - m) / (2 * h)
    value = np.where(r > 1, 1 - m, np.where(r >= 0, h * r * r, 0.0))
    slope = -np.clip(r, 0, 1)
    curve = np.where((r >= 0) & (r <= 1), 1 / (2 * h), 0.0)
    return value, slope, curve


def _direct_objective(Z, arms, signs, w, gamma, K, h=0.5):
    """F(Theta) = (1/n) sum w l(s <V_a, Theta z>) + gamma/(2n) ||Theta||_F^2, written with matrices."""
    V = simplex_vertices(K)
    n, d = Z.shape
    Va = V[arms]

    def parts(theta):
        Theta = theta.reshape(K - 1, d)
        m = signs * np.einsum("ik,ik->i", Va, Z @ Theta.T)
        v, s1, s2 = _huber(m, h)
        G = np.einsum("i,ik,ij->kj", w * signs * s1, Va, Z) / n + gamma / n * Theta
        outer = np.einsum("ik,ij->ikj", Va, Z).reshape(n, -1)
        H = (outer.T * (w * s2)) @ outer / n + gamma / n * np.eye(theta.size)
        return (w @ v) / n + gamma / (2 * n) * theta @ theta, G.ravel(), H

    return parts


@pytest.mark.parametrize("K", [3, 4])
def test_k_arm_solution_matches_a_direct_scipy_solve(K):
    X, A, B = _data(n=250, K=K, seed=K)
    gamma, tol = 3.0, 1e-10
    classes, Z, codes, problem = _problem(X, A, B, K)
    out = release_arm_rule(problem, epsilon=np.inf, gamma=gamma, tol=tol, rng=np.random.default_rng(0))
    parts = _direct_objective(Z, codes, np.ones(len(A)), problem.weights, gamma, K)
    res = optimize.minimize(lambda t: parts(t)[0], np.zeros((K - 1) * Z.shape[1]), jac=lambda t: parts(t)[1],
                            hess=lambda t: parts(t)[2], method="trust-exact", options={"gtol": 1e-13})
    g_scipy = np.linalg.norm(parts(res.x)[1])
    assert g_scipy <= 1e-12
    # both answers are certified (||grad F|| <= tol): each lies within n tol / gamma of the exact minimiser
    bound = len(A) * (tol + g_scipy) / gamma
    assert np.linalg.norm(out.coef - res.x) <= bound
    assert np.linalg.norm(parts(out.coef)[1]) <= tol  # the direct gradient at pydpowl's answer
    assert out.coef.shape == ((K - 1) * Z.shape[1],)


def test_k_arm_sensitivity_is_attained_in_the_linear_zone_and_not_exceeded():
    """With gamma large every margin is in the linear zone: Theta = (1/gamma) sum w s u, so flipping the sign of
    one record at a corner (||z|| = 1, weight W) moves Theta by 2W/gamma in Frobenius norm: Delta up to the
    solver-tolerance term."""
    rng = np.random.default_rng(5)
    K, n, W, gamma = 3, 40, 2.0, 400.0
    X = rng.uniform(-2, 2, (n, 3))
    X[0] = [2.0, -2.0, 2.0]  # a corner: the scaled row has norm exactly 1
    A = rng.integers(0, K, n)
    B = rng.uniform(0, 2 * W / 3, n)
    B[0] = 2 * W / 3  # weight B / (1/3) = W
    Bn = B.copy()
    Bn[0] = -B[0]  # the neighbour: same record with a residual of the opposite sign (label flipped)
    _, _, _, p0 = _problem(X, A, B, K, W=W)
    _, _, _, p1 = _problem(X, A, Bn, K, W=W)
    r0 = release_arm_rule(p0, epsilon=np.inf, gamma=gamma, tol=1e-10, rng=rng)
    r1 = release_arm_rule(p1, epsilon=np.inf, gamma=gamma, tol=1e-10, rng=rng)
    ratio = np.linalg.norm(r0.coef - r1.coef) / r0.sensitivity
    assert 0.9999 <= ratio <= 1.0
    # random neighbours (any record, arm, outcome) stay below Delta
    for j in range(20):
        Xn, An, Bm = X.copy(), A.copy(), B.copy()
        k = int(rng.integers(n))
        Xn[k], An[k], Bm[k] = rng.uniform(-2, 2, 3), rng.integers(0, K), rng.uniform(-1, 1) * 2 * W / 3
        _, _, _, pn = _problem(Xn, An, Bm, K, W=W)
        rn = release_arm_rule(pn, epsilon=np.inf, gamma=1.0, tol=1e-10, rng=rng)
        r0s = release_arm_rule(p0, epsilon=np.inf, gamma=1.0, tol=1e-10, rng=rng)
        assert np.linalg.norm(rn.coef - r0s.coef) <= rn.sensitivity


def test_k_arm_noise_has_the_frobenius_law():
    """The release minus the minimiser is l2-Laplace in (K-1) d dimensions: its norm is Gamma((K-1) d, Delta/eps)."""
    from scipy import stats

    X, A, B = _data(n=100, K=3, seed=2)
    _, _, _, problem = _problem(X, A, B, 3)
    rng = np.random.default_rng(11)
    norms = []
    for _ in range(600):
        out = release_arm_rule(problem, epsilon=2.0, gamma=4.0, tol=1e-10, rng=rng)
        norms.append(np.linalg.norm(out.coef - out.nonprivate_coef))
    dim = 2 * 4
    assert stats.kstest(norms, stats.gamma(a=dim, scale=out.sensitivity / 2.0).cdf).pvalue > 1e-3


def test_negative_outcomes_flip_the_label_and_count():
    X, A, B = _data(n=50, K=3, seed=4)
    B = B - 1.5
    _, _, _, problem = _problem(X, A, B, 3)
    assert problem.n_negative == int(np.sum(B < 0))
    assert_array_equal(problem.labels, np.where(B < 0, -1.0, 1.0))
    assert_allclose(problem.weights, np.minimum(np.abs(B) * 3, 10.0))


def test_rule_predicts_labels_and_maps_to_the_original_space():
    X, A, B = _data(n=400, K=3, seed=9)
    labels = np.array(["low", "mid", "high"])[A]
    classes, Z, codes, problem = _problem(X, labels, B, 3)
    out = release_arm_rule(problem, epsilon=np.inf, gamma=2.0, tol=1e-10, rng=None)
    scaler = FeatureScaler.from_bounds(BOUNDS, 3, True)
    rule = ArmRule(classes=classes, scaled_coef=out.coef.reshape(2, 4), scaler=scaler)
    direct = (Z @ rule.scaled_coef.T) @ simplex_vertices(3).T  # scores in the scaled space
    assert_allclose(rule.scores(X), direct, atol=1e-12)  # X inside the bounds: no clipping
    assert set(rule.predict(X)) <= set(classes)
    assert rule.to_dict()["classes"] == ["high", "low", "mid"]


def test_k_arm_fit_reports_epsilon_and_the_rounding_delta():
    """Issue 21.5: every estimator reports (epsilon, delta); a K-arm release's delta is that of the rounding of the
    l2-Laplace noise in (K - 1) d dimensions."""
    from pydpowl.engine.mechanisms import floating_point_delta

    X, A, B = _data(n=300, K=3, seed=4)
    m = DPOWL(epsilon=1.5, gamma=20.0, weights_upper_bound=10.0, feature_bounds=BOUNDS, mechanism="output",
              residual=False, random_state=0).fit(X, A, B, 1 / 3)
    fp = floating_point_delta(epsilon=1.5, dim=2 * 4, grid=m.release_grid_, noise_scale=m.sensitivity_ / 1.5)
    assert m.privacy_spent_ == (1.5, fp) and 0 < fp < 1e-7 and m.summary().privacy_spent == m.privacy_spent_
    assert m.release_delta_ == fp and m.sampler_model_ == "numpy"
    # replaying R's stream: the rounding's delta under R's samplers, as the two-arm rule's
    from pydpowl import RRandom

    r = DPOWL(epsilon=1.5, gamma=20.0, weights_upper_bound=10.0, feature_bounds=BOUNDS, mechanism="output",
              residual=False, random_state=RRandom(1)).fit(X, A, B, 1 / 3)
    fp_r = floating_point_delta(epsilon=1.5, dim=2 * 4, grid=r.release_grid_, noise_scale=r.sensitivity_ / 1.5,
                                stream="R")
    assert r.sampler_model_ == "R" and r.privacy_spent_ == (1.5, fp_r) == (1.5, r.release_delta_) and fp_r != fp


@pytest.mark.parametrize("propensity, message", [
    (np.array([[0.2, 0.3, 0.5], [0.4, 0.4, 0.4], [0.3, 0.3, 0.4], [0.5, 0.25, 0.25]]),
     r"each row must sum to 1 across the 3 arms .* 1 of 4 rows do not \(first at row 2\)"),
    (np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3], [0.3, 0.3, 1.4], [0.5, 0.25, 0.25]]),
     r"must lie in \[0, 1\]; 1 of 4 rows do not \(first at row 3\)"),
    (np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3], [0.3, 0.3, 0.4], [0.0, 0.5, 0.5]]),
     r"received an arm of probability 0 \(first at row 4\)"),
    (np.array([0.3, 0.3, 0.3, 0.0]), r"1 of 4 entries do not \(first at position 4\)"),
])
def test_propensity_positions_count_from_index_base(propensity, message):
    """R's front end counts rows from 1 (index_base=1)."""
    classes, codes = encode_arms("t", ["a", "b", "c", "a"])
    with pytest.raises(ValueError, match=message):
        resolve_arm_propensity(propensity, classes, codes, weight_sensitivity=0, index_base=1)


# ------------------------------------------------------------------ K arms: weighted objective perturbation
@pytest.mark.parametrize("propensity, mechanism, residual", [(0.5, "auto", "auto"), (0.3, "auto", "auto"),
                                                             (0.5, "objective", False), (0.5, "output", False)])
def test_the_k_arm_route_with_two_arms_is_dpowls_two_arm_release(propensity, mechanism, residual):
    """Issue 25: the K-arm fit (objective perturbation and residual weights included) reduces exactly to the
    two-arm release for K = 2: the same plan, the same floats, the same noise, the same ledger."""
    from pydpowl.estimators.multiarm import fit_multiarm_owl

    X, A01, B = _data(n=400, K=2, seed=5)
    settings = dict(epsilon=1.0, weights_upper_bound=6.0, feature_bounds=BOUNDS, mechanism=mechanism,
                    residual=residual, keep_nonprivate=True, random_state=11)
    two = DPOWL(**settings).fit(X, np.where(A01 == 1, 1.0, -1.0), B, propensity)
    classes, codes = encode_arms("treatment", A01)
    karm = fit_multiarm_owl(DPOWL(**settings), X, classes, codes, B, propensity, None)
    assert (karm.mechanism_, karm.residual_) == (two.mechanism_, two.residual_)
    assert karm.gamma_ == two.gamma_ and karm.baseline_ == two.baseline_
    assert_array_equal(karm.scaled_coef_.ravel(), two.scaled_coef_)
    assert_array_equal(karm.nonprivate_scaled_coef_.ravel(), two.nonprivate_scaled_coef_)
    assert karm.release_grid_ == two.release_grid_ and karm.privacy_spent_ == two.privacy_spent_
    assert karm.n_clipped_residuals_ == two.n_clipped_residuals_


def test_k_arm_default_is_objective_perturbation_with_residual_weights_on_the_budget():
    """Issue 25: three arms, known probabilities (C = 0): the baseline on 10% of epsilon, then weighted objective
    perturbation of vec(Theta) in (K - 1) d coordinates with W_r = W / 16 and its ridge floor; every
    released number on its grid; privacy_spent_ composes the two releases' (epsilon, delta)."""
    from pydpowl.engine.mechanisms import objective_ridge_floor
    from pydpowl.privacy.accountant import rounded_release_spent

    X, A, B = _data(n=500, K=3, seed=6)
    m = DPOWL(epsilon=2.0, weights_upper_bound=9.0, feature_bounds=BOUNDS, keep_nonprivate=True,
              random_state=2).fit(X, A, B, 1 / 3)
    assert (m.mechanism_, m.residual_, m.huber_h_) == ("objective", True, 1.0)
    assert m.epsilon_baseline_ == pytest.approx(0.2) and m.epsilon_rule_ == pytest.approx(1.8)
    assert m.rule_weights_upper_bound_ == 9.0 / 16 and math.isnan(m.sensitivity_)
    floor = objective_ridge_floor(epsilon=1.8 * (1 - 1e-3), weights_upper_bound=9.0 / 16, curvature=0.5)
    assert m.ridge_ >= m.gamma_ and m.ridge_ >= floor * 0.99
    assert m.scaled_coef_.shape == m.noise_scaled_.shape == m.nonprivate_scaled_coef_.shape == (2, 4)
    assert np.all(np.round(m.scaled_coef_ / m.release_grid_) * m.release_grid_ == m.scaled_coef_)
    rule = rounded_release_spent(m.epsilon_rule_, dim=8, grid=m.release_grid_, noise_scale=m.release_scale_)
    # the rule's rounding delta plus the baseline's (a one-dimensional Laplace release): both tiny, both counted
    assert m.privacy_spent_[0] == pytest.approx(2.0) and rule[1] < m.privacy_spent_[1] < 1e-6
    text = str(m.summary())
    assert "weighted objective perturbation with residual weights" in text and "Frobenius" not in text


@pytest.mark.parametrize("K", [3, 4])
def test_k_arm_residual_objective_at_infinite_epsilon_is_the_direct_solve(K):
    """The residual route for K arms: a negative residual is label -1 on the subject's own row V_a kron z
    (weight |r| / p): the released rule at epsilon = inf minimises that objective (direct scipy solve)."""
    X, A, B = _data(n=240, K=K, seed=K)
    m = DPOWL(epsilon=np.inf, gamma=3.0, weights_upper_bound=2.0 * K, feature_bounds=BOUNDS, huber_h=1.0,
              residual=True, mechanism="objective").fit(X, A, B, 1 / K)
    classes, Z, codes, _ = _problem(X, A, B, K)
    span = 2.0 * K / K  # W min_a p_a: the benefit range W implies
    r = np.clip(np.clip(B, 0, span) - m.baseline_, -span / 16, span / 16)
    assert m.baseline_ == pytest.approx(np.mean(np.clip(B, 0, span)), abs=1e-12)  # exact mean at epsilon = inf
    signs, w = np.where(r < 0, -1.0, 1.0), np.minimum(np.abs(r) * K, 2.0 * K / 16)
    parts = _direct_objective(Z, codes, signs, w, 3.0, K, h=1.0)
    sol = optimize.minimize(lambda t: parts(t)[0], np.zeros((K - 1) * 4), jac=lambda t: parts(t)[1],
                            hess=lambda t: parts(t)[2], method="trust-exact", options={"gtol": 1e-12})
    assert np.any(signs < 0) and np.any(signs > 0)
    assert_allclose(m.scaled_coef_.ravel(), sol.x, atol=1e-7)


def test_k_arm_benefit_bounds_shift_and_clip_the_benefits():
    """benefit_bounds was ignored with three arms (negative benefits were refused): they are now shifted by the
    public lower bound and clipped (counted), as for two arms, and give residual weights their range."""
    X, A, B = _data(n=300, K=3, seed=8)
    B = B - 1.0  # in [-1, 2]
    B[0] = -3.0  # below the bound: clipped
    m = DPOWL(epsilon=1.0, weights_upper_bound=9.0, feature_bounds=BOUNDS, benefit_bounds=(-1.0, 2.0),
              random_state=0).fit(X, A, B, 1 / 3)
    assert m.residual_ and m.n_clipped_benefits_ == 1 and -1.0 <= m.baseline_ + 0.0 <= 3.0
    ref = DPOWL(epsilon=1.0, weights_upper_bound=9.0, feature_bounds=BOUNDS, random_state=0).fit(
        X, A, np.clip(B, -1.0, 2.0) + 1.0, 1 / 3)
    assert m.baseline_ == ref.baseline_ and ref.residual_
