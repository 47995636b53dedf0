"""Tests of pydpowl.mdp_policy_evaluation.least_squares (objectives and closed forms)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import optimize

from pydpowl.exceptions import ConvergenceError
from pydpowl.mdp_policy_evaluation import least_squares as ls
from pydpowl.mdp_policy_evaluation.episodes import episode_statistics, first_visit_returns


def _problem(seed, n=7, d=3, m=25):
    rng = np.random.default_rng(seed)
    phi = rng.normal(size=(n, d))
    w = rng.random(n) + 0.05
    rho = rng.dirichlet(np.ones(n))
    counts = rng.integers(0, m + 1, size=n)
    averages = np.where(counts > 0, rng.random(n) * 10, 0.0)
    return phi, w, rho, counts, averages, m


def _minimise(fun, d):
    res = optimize.minimize(fun, np.zeros(d), method="BFGS", options={"gtol": 1e-11, "maxiter": 10_000})
    return res.x


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lsw_closed_form_equals_numerical_minimiser(seed):
    phi, w, _, _, averages, _ = _problem(seed)
    theta = ls.lsw_solution(phi, w, averages)
    ref = _minimise(lambda t: ls.weighted_objective(t, phi, w, averages), phi.shape[1])
    err = np.max(np.abs(theta - ref))
    assert err < 1e-5, f"seed {seed}: |closed form - BFGS| = {err:.2e} >= 1e-5"


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("lam", [0.3, 5.0, 200.0])
def test_lsl_closed_form_equals_numerical_minimiser(seed, lam):
    phi, _, rho, counts, averages, m = _problem(seed)
    theta = ls.lsl_solution(phi, rho, counts, averages, m, lam)
    ref = _minimise(
        lambda t: ls.ridge_objective(t, phi, rho, counts, averages, m, lam), phi.shape[1]
    )
    err = np.max(np.abs(theta - ref))
    assert err < 1e-5, f"seed {seed}, lambda {lam}: |closed form - BFGS| = {err:.2e} >= 1e-5"


def test_lsl_gradient_vanishes_with_lambda_over_2m_scaling():
    # P7: the analytic gradient of J^lambda = sum rho n/m (F - phi theta)^2 + lambda/(2m)|theta|^2
    phi, _, rho, counts, averages, m = _problem(5)
    lam = 3.0
    theta = ls.lsl_solution(phi, rho, counts, averages, m, lam)
    grad = -2 * phi.T @ (rho * counts / m * (averages - phi @ theta)) + lam / m * theta
    assert np.linalg.norm(grad) < 1e-12, f"gradient norm {np.linalg.norm(grad):.2e} >= 1e-12"


def test_tabular_lsw_returns_the_averages():
    # P7: Phi = I and all w_s > 0 gives theta^w = F_X exactly
    _, w, _, _, averages, _ = _problem(3)
    assert_allclose(ls.lsw_solution(np.eye(7), w, averages), averages, rtol=1e-13, atol=1e-13)


def test_tabular_lsl_has_shrinkage_form():
    # P7: theta_s = rho_s n_s F_s / (rho_s n_s + lambda/2)
    _, _, rho, counts, averages, m = _problem(4)
    lam = 0.7
    expected = rho * counts * averages / (rho * counts + lam / 2)
    assert_allclose(ls.lsl_solution(np.eye(7), rho, counts, averages, m, lam), expected, rtol=1e-12)


def test_plain_objective_is_the_trajectory_regression_up_to_a_constant():
    # J_X(theta) - (1/m) sum_i sum_{s in x_i} rho_s (F_{x_i,s} - phi_s theta)^2 is free of theta
    rng = np.random.default_rng(8)
    n, d, m, gamma = 5, 2, 12, 0.8
    eps = []
    for _ in range(m):
        T = int(rng.integers(1, 9))
        eps.append((rng.integers(0, n, size=T), rng.random(T)))
    st = episode_statistics(eps, n_states=n, discount=gamma)
    phi = rng.normal(size=(n, d))
    rho = rng.dirichlet(np.ones(n))

    def per_trajectory(theta):
        total = 0.0
        for ep in eps:
            visited, ret = first_visit_returns(ep, gamma)
            total += np.sum(rho[visited] * (ret - phi[visited] @ theta) ** 2)
        return total / m

    gaps = [
        ls.plain_objective(t, phi, rho, st.counts, st.averages, m) - per_trajectory(t)
        for t in rng.normal(size=(6, d)) * 3
    ]
    spread = np.ptp(gaps)
    assert spread < 1e-12, f"J_X minus trajectory regression varies by {spread:.2e} over theta"


def test_ls_solution_matches_lsw_with_count_weights_when_well_posed():
    phi, _, rho, counts, averages, m = _problem(6)
    counts = np.maximum(counts, 1)
    ref = ls.lsw_solution(phi, rho * counts / m, averages)
    assert_allclose(ls.ls_solution(phi, rho, counts, averages, m), ref, rtol=1e-10)


def test_ls_solution_uses_pseudo_inverse_when_singular():
    phi = np.array([[1.0, 1.0], [2.0, 2.0], [0.0, 1.0]])
    rho = np.full(3, 1 / 3)
    counts = np.array([3, 2, 0])  # state 2 unvisited: Phi' Gamma Phi is rank 1
    averages = np.array([1.0, 2.0, 0.0])
    theta = ls.ls_solution(phi, rho, counts, averages, 5)
    g = np.diag(rho * counts / 5)
    ref = np.linalg.pinv(phi.T @ g @ phi) @ phi.T @ g @ averages
    assert_allclose(theta, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "phi, w",
    [
        (np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]), np.ones(3)),  # collinear columns
        (np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]), np.array([1.0, 0.0, 1.0])),  # w zero
        (np.ones((1, 2)), np.ones(1)),  # more features than states
    ],
)
def test_singular_weighted_design_raises(phi, w):
    with pytest.raises(ValueError, match=r"must have full column rank d=2 .*numerical rank is 1"):
        ls.lsw_solution(phi, w, np.ones(phi.shape[0]))


def test_check_full_rank_returns_smallest_singular_value():
    phi = np.diag([1.0, 2.0, 3.0])
    w = np.array([4.0, 1.0, 1.0])  # W^{1/2} Phi = diag(2, 2, 3)
    assert ls.check_full_rank(phi, w) == pytest.approx(2.0)


@pytest.mark.parametrize("lam", [0.0, -1.0])
def test_lsl_refuses_non_positive_lambda(lam):
    phi, _, rho, counts, averages, m = _problem(0)
    with pytest.raises(ValueError, match=r"regularization must be in \(0, inf\)"):
        ls.lsl_solution(phi, rho, counts, averages, m, lam)


def test_uncertified_solution_raises_convergence_error():
    a = np.eye(2)
    with pytest.raises(ConvergenceError, match="residual .* nothing was released"):
        ls._certify(a, np.array([1.0, 1.0]), np.array([1.0, 0.5]), "test solve")
