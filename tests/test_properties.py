"""Property-based tests (hypothesis) of the solver, the preprocessing and the accountant.

The objective and its gradient are re-implemented here from their definitions
(independently of pydpowl's loss classes), so the solver's certificate is
checked against another implementation.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from pydpowl import DPOWL, FeatureScaler, HuberHingeLoss, LogisticLoss, solve_weighted_erm
from pydpowl.privacy.accountant import BudgetAccountant
from pydpowl.exceptions import BudgetExceededError

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)


def _dloss(name, h, m):
    if name == "logistic":
        return -np.exp(-np.logaddexp(0.0, m))  # -1 / (1 + e^m)
    return np.where(m < 1 - h, -1.0, np.where(m > 1 + h, 0.0, -(1 + h - m) / (2 * h)))


def _loss(name, h, m):
    if name == "logistic":
        return np.logaddexp(0.0, -m)
    return np.where(m < 1 - h, 1 - m, np.where(m > 1 + h, 0.0, (1 + h - m) ** 2 / (4 * h)))


def _objective(name, h, Z, y, w, gamma, theta):
    n = Z.shape[0]
    return float(np.sum(w * _loss(name, h, y * (Z @ theta))) / n + gamma / (2 * n) * theta @ theta)


def _gradient(name, h, Z, y, w, gamma, theta):
    n = Z.shape[0]
    return Z.T @ (w * y * _dloss(name, h, y * (Z @ theta))) / n + gamma / n * theta


@st.composite
def erm_problems(draw):
    n = draw(st.integers(2, 30))
    d = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, d)) * draw(st.sampled_from([0.01, 0.3, 1.0, 5.0]))
    Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]  # rows in the unit ball, some on the sphere
    y = rng.choice([-1.0, 1.0], size=n)
    W = draw(st.sampled_from([0.5, 1.0, 30.0]))
    w = rng.uniform(0, W, size=n) * (rng.uniform(size=n) > 0.1)  # some zero weights
    gamma = draw(st.sampled_from([0.01, 0.5, 1.0, 20.0, 300.0]))
    name = draw(st.sampled_from(["huber", "logistic"]))
    h = draw(st.sampled_from([0.1, 0.5, 1.0]))
    return Z, y, w, gamma, name, h, seed


@FAST
@given(erm_problems())
def test_solver_certifies_the_minimiser(problem):
    Z, y, w, gamma, name, h, seed = problem
    loss = HuberHingeLoss(h) if name == "huber" else LogisticLoss()
    res = solve_weighted_erm(Z, y, w, gamma=gamma, loss=loss, tol=1e-10)
    g = _gradient(name, h, Z, y, w, gamma, res.x)
    assert res.success and res.grad_norm <= 1e-10
    assert np.linalg.norm(g) <= 1e-9, f"independent gradient norm {np.linalg.norm(g):.2e} > 1e-9"
    f0 = _objective(name, h, Z, y, w, gamma, res.x)
    rng = np.random.default_rng(seed)
    for scale in (1e-6, 1e-3, 1e-1, 10.0):
        for _ in range(3):
            other = res.x + scale * rng.normal(size=res.x.shape)
            assert f0 <= _objective(name, h, Z, y, w, gamma, other) + 1e-12 * max(1.0, abs(f0)), \
                f"objective at a point {scale:g} away is lower than at the certified minimiser"
    # strong convexity: the minimiser is within ||grad F(0)|| / (gamma / n) of 0
    n = Z.shape[0]
    g0 = _gradient(name, h, Z, y, w, gamma, np.zeros_like(res.x))
    assert np.linalg.norm(res.x) <= np.linalg.norm(g0) * n / gamma + 1e-9


@st.composite
def bounds_and_data(draw):
    p = draw(st.integers(1, 4))
    lower = np.array(draw(st.lists(finite, min_size=p, max_size=p)))
    width = np.array(draw(st.lists(st.floats(0, 1e3, allow_nan=False), min_size=p, max_size=p)))
    upper = lower + width
    assume(np.all(np.maximum(np.abs(lower), np.abs(upper)) > 1e-6))
    n = draw(st.integers(1, 20))
    X = draw(arrays(np.float64, (n, p), elements=st.floats(-1e6, 1e6, allow_nan=False)))
    intercept = draw(st.booleans())
    return lower, upper, X, intercept


@FAST
@given(bounds_and_data())
def test_scaled_rows_lie_in_the_unit_ball(case):
    lower, upper, X, intercept = case
    scaler = FeatureScaler.from_bounds((lower, upper), lower.shape[0], intercept)
    Z, n_clipped = scaler.transform(X)
    norms = np.linalg.norm(Z, axis=1)
    assert np.all(norms <= 1.0 + 1e-12), f"largest scaled row norm {norms.max()!r} > 1"
    outside = int(np.count_nonzero((X < lower) | (X > upper)))
    assert n_clipped == outside
    if intercept:
        np.testing.assert_array_equal(Z[:, 0], 1.0 / math.sqrt(lower.shape[0] + 1))


@FAST
@given(bounds_and_data(), st.integers(0, 2 ** 32 - 1))
def test_coefficients_map_back_exactly(case, seed):
    lower, upper, X, intercept = case
    scaler = FeatureScaler.from_bounds((lower, upper), lower.shape[0], intercept)
    theta = np.random.default_rng(seed).normal(size=scaler.n_coefficients)
    original = scaler.coef_to_original(theta)
    np.testing.assert_allclose(scaler.coef_to_scaled(original), theta, rtol=1e-14, atol=0)
    # decision values agree in both spaces (clipped features, intercept first)
    Z, _ = scaler.transform(X)
    Xc = np.clip(X, lower, upper)
    design = np.column_stack([np.ones(X.shape[0]), Xc]) if intercept else Xc
    lhs, rhs = Z @ theta, design @ original
    scale = np.abs(Z) @ np.abs(theta) + np.abs(design) @ np.abs(original)
    assert np.all(np.abs(lhs - rhs) <= 1e-12 * np.maximum(scale, 1e-300))


@FAST
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([1.0, 2.5, 100.0]))
def test_dpowl_release_is_the_scaled_release_mapped_back(seed, gamma):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, (15, 2))
    A = np.tile([1.0, -1.0], 8)[:15]
    B = rng.uniform(0, 2, 15)
    bounds = ([-2.0, -1.0], [2.0, 4.0])
    model = DPOWL(epsilon=1.0, gamma=gamma, weights_upper_bound=4.0, feature_bounds=bounds, random_state=seed)
    model.fit(X, A, B)
    Z, _ = model.scaler_.transform(X)
    np.testing.assert_allclose(model.decision_function(np.clip(X, *bounds)), Z @ model.scaled_coef_,
                               rtol=1e-12, atol=1e-12)


@FAST
@given(st.floats(0.01, 10), st.lists(st.floats(1e-3, 5), min_size=1, max_size=30))
def test_accountant_never_overspends(total, requests):
    acc = BudgetAccountant(total_epsilon=total)
    accepted = []
    for eps in requests:
        try:
            acc.spend(eps)
            accepted.append(eps)
        except BudgetExceededError:
            assert math.fsum(accepted) + eps > total
    assert acc.spent == pytest.approx(math.fsum(accepted), rel=0, abs=0)
    assert acc.spent <= total * (1 + 1e-12)
