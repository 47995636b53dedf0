import numpy as np
import pytest
from scipy.optimize import minimize

from pydpowl import HuberHingeLoss, LogisticLoss
from pydpowl.engine._kernels import NUMBA_AVAILABLE
from pydpowl.exceptions import ConvergenceError
from pydpowl.engine.solver import objective_gradient, objective_value, solve_weighted_erm


def random_problem(seed, n=300, d=5):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, d))
    Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]
    y = rng.choice([-1.0, 1.0], size=n)
    w = rng.uniform(0, 5, size=n)
    return Z, y, w


# ---- tiny cases solved by hand -------------------------------------------------------------
# n = 1, z = 1, y = 1, w = 1, h = 0.5:  F(t) = l(t) + gamma/2 t^2.
# linear zone (t < 0.5): -1 + gamma t = 0 -> t = 1/gamma, valid for gamma > 2;
# quadratic zone: -(1.5 - t) + gamma t = 0 -> t = 1.5/(1 + gamma), valid for gamma <= 2.
@pytest.mark.parametrize("gamma, expected", [(4.0, 0.25), (10.0, 0.1), (1.0, 0.75), (2.0, 0.5)])
def test_one_point_huber_by_hand(gamma, expected):
    res = solve_weighted_erm(np.array([[1.0]]), np.array([1.0]), np.array([1.0]), gamma=gamma, loss=HuberHingeLoss(0.5))
    assert res.x[0] == pytest.approx(expected, abs=1e-14)
    assert res.grad_norm <= 1e-10


def test_two_symmetric_points_by_hand():
    # z = +-(1, 0)/1 with labels +-1 are the same margin; second coordinate unused -> 0.
    # With weights 2 and gamma = 8 (n = 2): F = (1/2)(2 l(t) + 2 l(t)) + 8/4 t^2 = 2 l(t) + 2 t^2.
    # Linear zone: -2 + 4 t = 0 -> t = 0.5 (boundary of the quadratic zone, consistent).
    Z = np.array([[1.0, 0.0], [-1.0, 0.0]])
    y = np.array([1.0, -1.0])
    res = solve_weighted_erm(Z, y, np.array([2.0, 2.0]), gamma=8.0, loss=HuberHingeLoss(0.5))
    np.testing.assert_allclose(res.x, [0.5, 0.0], atol=1e-14)


def test_one_point_logistic_by_hand():
    # -1/(1 + e^t) + gamma t = 0 at the root; check the first-order condition directly.
    res = solve_weighted_erm(np.array([[1.0]]), np.array([1.0]), np.array([1.0]), gamma=3.0, loss=LogisticLoss())
    t = res.x[0]
    assert abs(-1 / (1 + np.exp(t)) + 3.0 * t) < 1e-12


# ---- random problems ---------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("loss", [HuberHingeLoss(0.5), HuberHingeLoss(0.1), LogisticLoss()], ids=["h0.5", "h0.1", "logit"])
@pytest.mark.parametrize("gamma", [0.3, 5.0, 200.0])
def test_certified_and_no_worse_than_scipy(seed, loss, gamma):
    Z, y, w = random_problem(seed)
    res = solve_weighted_erm(Z, y, w, gamma=gamma, loss=loss)
    g = objective_gradient(res.x, Z, y, w, gamma=gamma, loss=loss)
    assert np.linalg.norm(g) <= 1e-10, f"gradient norm {np.linalg.norm(g):.2e} > 1e-10"
    f = lambda t: objective_value(t, Z, y, w, gamma=gamma, loss=loss)  # noqa: E731
    jac = lambda t: objective_gradient(t, Z, y, w, gamma=gamma, loss=loss)  # noqa: E731
    best = minimize(f, np.zeros(Z.shape[1]), jac=jac, method="BFGS", options={"gtol": 1e-12, "maxiter": 10000})
    assert res.objective <= best.fun + 1e-13, f"pydpowl F={res.objective!r} > scipy BFGS F={best.fun!r}"


@pytest.mark.skipif(not NUMBA_AVAILABLE, reason="numba not installed")
@pytest.mark.parametrize("loss", [HuberHingeLoss(0.5), LogisticLoss()], ids=["huber", "logistic"])
@pytest.mark.parametrize("d", [1, 5, 20])
def test_numba_and_numpy_give_the_same_answer(loss, d):
    Z, y, w = random_problem(11, n=6000, d=d)
    a = solve_weighted_erm(Z, y, w, gamma=3.0, loss=loss, backend="numpy")
    b = solve_weighted_erm(Z, y, w, gamma=3.0, loss=loss, backend="numba")
    assert b.backend == "numba" and a.backend == "numpy"
    np.testing.assert_allclose(a.x, b.x, rtol=0, atol=1e-12)


def test_large_problem_uses_warm_start_and_is_certified():
    Z, y, w = random_problem(5, n=120_000, d=5)
    res = solve_weighted_erm(Z, y, w, gamma=10.0, loss=HuberHingeLoss(0.5))
    g = objective_gradient(res.x, Z, y, w, gamma=10.0, loss=HuberHingeLoss(0.5))
    assert np.linalg.norm(g) <= 1e-10


def test_zero_weights_give_zero_solution():
    Z, y, _ = random_problem(2)
    res = solve_weighted_erm(Z, y, np.zeros(len(y)), gamma=1.0, loss=HuberHingeLoss())
    np.testing.assert_array_equal(res.x, np.zeros(Z.shape[1]))


def test_uncertified_solution_is_refused():
    Z, y, w = random_problem(3)
    with pytest.raises(ConvergenceError, match=r"gradient norm .* > tol=1e-30; nothing was released"):
        solve_weighted_erm(Z, y, w, gamma=1.0, loss=LogisticLoss(), tol=1e-30, max_iter=3)


def test_unknown_backend():
    Z, y, w = random_problem(3)
    with pytest.raises(ValueError, match="backend must be one of"):
        solve_weighted_erm(Z, y, w, gamma=1.0, loss=LogisticLoss(), backend="gpu")
