import numpy as np
import pytest
from scipy.optimize import minimize

from pydpowl import HuberHingeLoss, LogisticLoss
from pydpowl.engine.kernels import numba_available
from pydpowl.exceptions import ConvergenceError
from pydpowl.engine.solver import objective_gradient, objective_value, solve_each, solve_weighted_erm


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
@pytest.mark.parametrize("loss", [HuberHingeLoss(0.5), HuberHingeLoss(0.1), LogisticLoss()],
                         ids=["h0.5", "h0.1", "logit"])
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


@pytest.mark.skipif(not numba_available(), reason="numba not installed")
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


# ---- objective perturbation terms: extra ridge and a linear term -------------------------------
def _independent_objective(Z, y, w, gamma, extra, b, h=0.5):
    """F = G / n with G = sum w l + (gamma + extra)/2 ||t||^2 + b't, written out independently (Huber, h)."""
    n = Z.shape[0]

    def value(t):
        m = y * (Z @ t)
        r = (1 + h - m) / (2 * h)
        loss = np.where(r > 1, 1 - m, np.where(r < 0, 0.0, h * r * r))
        return (w @ loss + 0.5 * (gamma + extra) * t @ t + b @ t) / n

    def grad(t):
        m = y * (Z @ t)
        d1 = -np.clip((1 + h - m) / (2 * h), 0, 1)
        return (Z.T @ (w * y * d1) + (gamma + extra) * t + b) / n

    return value, grad


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("extra", [0.0, 40.0])
def test_linear_and_extra_ridge_terms_against_scipy(seed, extra):
    Z, y, w = random_problem(seed, n=200, d=4)
    b = np.random.default_rng(seed + 100).normal(size=4) * 5
    res = solve_weighted_erm(Z, y, w, gamma=2.0, loss=HuberHingeLoss(0.5), extra_ridge=extra, linear=b)
    f, jac = _independent_objective(Z, y, w, 2.0, extra, b)
    assert np.linalg.norm(jac(res.x)) <= 1e-10
    best = minimize(f, np.zeros(4), jac=jac, method="BFGS", options={"gtol": 1e-13, "maxiter": 10000})
    assert res.objective == pytest.approx(f(res.x), rel=1e-13)
    assert res.objective <= best.fun + 1e-14
    np.testing.assert_allclose(res.x, best.x, atol=1e-6)


def test_dppack_objective_perturbation_mapping():
    # DPpack's CMS objective (1/n) sum l + gamma/(2n)||t||^2 + b't/n + Delta/2 ||t||^2:
    # extra_ridge = n * Delta, linear = b.
    Z, y, w = random_problem(9, n=150, d=3)
    n, gamma, delta, b = 150, 1.5, 0.02, np.array([1.0, -2.0, 0.5])
    res = solve_weighted_erm(Z, y, w, gamma=gamma, loss=LogisticLoss(), extra_ridge=n * delta, linear=b)

    def F(t):
        return np.mean(w * np.logaddexp(0, -y * (Z @ t))) + gamma / (2 * n) * t @ t + b @ t / n + delta / 2 * t @ t

    best = minimize(F, np.zeros(3), method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-15, "maxiter": 20000})
    assert F(res.x) <= best.fun + 1e-12
    np.testing.assert_allclose(res.x, best.x, atol=1e-5)


@pytest.mark.parametrize("kwargs, match", [({"extra_ridge": -1.0}, "extra_ridge must be in"),
                                           ({"extra_ridge": np.inf}, "extra_ridge must be in"),
                                           ({"linear": np.ones(2)}, "linear must be a finite vector of length d=5"),
                                           ({"linear": np.full(5, np.nan)}, "non-finite")])
def test_bad_perturbation_terms_are_named(kwargs, match):
    Z, y, w = random_problem(1, n=20)
    with pytest.raises(ValueError, match=match):
        solve_weighted_erm(Z, y, w, gamma=1.0, loss=HuberHingeLoss(), **kwargs)


def test_certificate_is_kept_with_the_extra_terms():
    Z, y, w = random_problem(3)
    with pytest.raises(ConvergenceError, match="nothing was released"):
        solve_weighted_erm(Z, y, w, gamma=1.0, loss=LogisticLoss(), tol=1e-30, max_iter=3, extra_ridge=5.0,
                           linear=np.ones(5))


# ---- many problems (studies) --------------------------------------------------------------------
def test_solve_each_is_a_loop_of_certified_solves():
    rng = np.random.default_rng(7)
    Z = rng.uniform(-0.4, 0.4, size=(6, 120, 3))
    y = np.where(rng.uniform(size=(6, 120)) < 0.5, -1.0, 1.0)
    w = rng.uniform(0, 4, size=(6, 120))
    gammas = np.geomspace(0.5, 300, 6)
    loss = HuberHingeLoss(0.5)
    theta = solve_each(Z, y, w, gamma=gammas, loss=loss)
    warm = solve_each(Z, y, w, gamma=gammas, loss=loss, theta0=theta + 0.3)
    for r in range(6):
        single = solve_weighted_erm(Z[r], y[r], w[r], gamma=gammas[r], loss=loss).x
        np.testing.assert_array_equal(theta[r], single)
        np.testing.assert_allclose(warm[r], single, rtol=0, atol=1e-12)


def test_small_fits_never_import_numba():
    import subprocess
    import sys

    code = ("import sys, numpy as np; from pydpowl import DPOWL; from pydpowl.datasets import make_synthetic_owl; "
            "d = make_synthetic_owl(5000, random_state=np.random.default_rng(0)); "
            "DPOWL(epsilon=1.0, gamma=1.0, weights_upper_bound=30, feature_bounds=d.feature_bounds, "
            "weight_sensitivity=d.weight_sensitivity, random_state=1)"
            ".fit(d.X, d.treatment, d.benefit, d.propensity); print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# ---- the ball-constrained solve (KST) ----------------------------------------------------------

from pydpowl.engine.solver import solve_least_squares, trust_region_step  # noqa: E402


def _ls_problem(seed, n=400, p=3):
    rng = np.random.default_rng(seed)
    Z = rng.uniform(-1, 1, (n, p))
    y = np.clip(3 * Z @ rng.normal(size=p) + rng.normal(size=n), -p, p)
    return Z, y, rng.normal(size=p) * 30


@pytest.mark.parametrize("seed", range(6))
def test_ball_constrained_least_squares_matches_scipy(seed):
    Z, y, b = _ls_problem(seed)
    n, p = Z.shape
    R = np.sqrt(p)
    res = solve_least_squares(Z, y, gamma=1.0, extra_ridge=2.0 * p, linear=b, radius=R)

    def F(t):
        return (0.5 * np.sum((Z @ t - y) ** 2) + 0.5 * (1 + 2 * p) * t @ t + b @ t) / n
    ref = minimize(F, np.zeros(p), method="SLSQP", constraints=[{"type": "ineq", "fun": lambda t: p - t @ t}],
                   options={"ftol": 1e-15, "maxiter": 500})
    assert np.sum(res.x ** 2) <= p
    assert F(res.x) <= F(ref.x) + 1e-13
    np.testing.assert_allclose(res.x, ref.x, atol=1e-6)
    assert res.grad_norm <= 1e-10 and res.multiplier >= 0


def test_ball_inactive_gives_the_unconstrained_minimiser():
    Z, y, _ = _ls_problem(11)
    big = solve_least_squares(Z, y, gamma=1.0, radius=1e6)
    free = solve_least_squares(Z, y, gamma=1.0)
    np.testing.assert_allclose(big.x, free.x, rtol=1e-12)
    assert big.multiplier == 0.0
    np.testing.assert_allclose(free.x, np.linalg.solve(Z.T @ Z + np.eye(3), Z.T @ y), rtol=1e-12)


def test_ball_active_kkt_by_hand():
    # one coordinate: minimise ((t - 3)^2 + t^2)/2 over |t| <= 1: the minimiser 1.5 is outside, so t = 1
    res = solve_least_squares(np.array([[1.0]]), np.array([3.0]), gamma=1.0, radius=1.0)
    assert res.x[0] == 1.0
    assert res.multiplier == pytest.approx(1.0, rel=1e-14)  # grad F(1) = (1 - 3) + 1 = -1, so nu = 1


def test_trust_region_step_on_the_sphere_and_inside():
    H = np.diag([1.0, 4.0])
    q = np.array([-3.0, -4.0])  # unconstrained minimiser (3, 1), norm sqrt(10)
    np.testing.assert_allclose(trust_region_step(H, q, 10.0), [3.0, 1.0], rtol=1e-15)
    z = trust_region_step(H, q, 1.0)
    assert np.linalg.norm(z) == pytest.approx(1.0, rel=1e-15)
    lam = -(H @ z + q) @ z  # (H + lam I) z = -q with ||z|| = 1
    np.testing.assert_allclose((H + lam * np.eye(2)) @ z, -q, rtol=1e-12)


def test_ball_radius_must_be_positive():
    with pytest.raises(ValueError, match=r"radius must be in \(0, inf\)"):
        solve_least_squares(np.eye(2), np.ones(2), gamma=1.0, radius=0.0)


def test_objective_can_be_left_unreported_without_changing_the_answer():
    # callers that keep only x spare the pass over the rows that the value costs (logistic: its log1p)
    rng = np.random.default_rng(8)
    n = 20_000  # above the polished sizes (polishing evaluates the value anyway)
    Z = rng.uniform(-0.5, 0.5, (n, 3))
    y = np.where(Z @ np.array([1.0, -2.0, 0.5]) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    w = np.ones(n)
    told = solve_weighted_erm(Z, y, w, gamma=1.0, loss=LogisticLoss(), backend="numpy")
    untold = solve_weighted_erm(Z, y, w, gamma=1.0, loss=LogisticLoss(), backend="numpy", objective=False)
    assert np.array_equal(told.x, untold.x) and told.nit == untold.nit
    assert np.isnan(untold.objective)
    assert told.objective == pytest.approx(objective_value(told.x, Z, y, w, gamma=1.0, loss=LogisticLoss()),
                                           rel=1e-13)


def test_ball_certificate_proves_the_radius_the_smoothing_noise_is_calibrated_for():
    """Review 21.4(d): the certificate discounted 8 ulps of the radius from the complementarity slack, so a
    certified answer on the sphere was only proven within about sqrt(R^2 - ||theta||^2) ~ 1e-8 of the minimiser,
    not the 2 tol / mu the smoothing noise covered. Recomputed here from the answer (exact ||theta||^2): the
    smaller of the bounds e <= res/(mu + nu/2) + sqrt(nu (R^2 - ||theta||^2) / (2 mu + nu)) and e <= res/(mu + nu)
    + (L/mu)((R^2 - ||theta||^2)/R + res/(mu + nu)) must be within the release's radius."""
    import math
    from fractions import Fraction

    from pydpowl.engine.mechanisms import release_kst

    rng = np.random.default_rng(2)
    n, p = 300, 2
    Z = rng.uniform(-1, 1, (n, p))
    t = np.clip(Z @ np.array([1.5, -1.0]) * 2, -p, p)
    R = math.sqrt(p)
    checked = 0
    for seed in range(6):
        rel = release_kst(Z, t, gamma=1.0, epsilon=0.3, delta=0.0, tol=1e-13, reproduce_dppack=False,
                          rng=np.random.default_rng(seed))
        theta, mu = rel.minimiser, (1.0 + rel.Delta) / n
        grad = (Z.T @ (Z @ theta - t) + (1.0 + rel.Delta) * theta + rel.linear_term) / n
        nu = max(0.0, -float(theta @ grad) / float(theta @ theta))
        if nu == 0.0 or np.linalg.norm(grad) <= 1e-13:
            assert np.linalg.norm(grad) / mu <= rel.error_radius  # interior: e <= ||grad|| / mu
            continue
        checked += 1
        res = float(np.linalg.norm(grad + nu * theta))
        gap = float(Fraction(R) ** 2 - sum(Fraction(float(v)) ** 2 for v in theta))
        assert gap >= 0  # feasible, exactly
        L = p + mu  # public bound on the Hessian of F (|x_j| <= 1)
        strong = res / (mu + nu / 2) + math.sqrt(nu * gap / (2 * mu + nu))
        path = res / (mu + nu) + (L / mu) * (gap / R + res / (mu + nu))  # the ball's radius moves the minimiser
        bound = min(strong, path)
        assert bound <= rel.error_radius, f"proven {bound:.3e} > calibrated {rel.error_radius:.3e}"
    assert checked >= 3  # the ball was active in most draws
