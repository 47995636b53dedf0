"""The density argument of weighted objective perturbation, checked numerically (validation/audit/objective.py)."""

import numpy as np
import pytest
from scipy import stats

from pydpowl.engine.losses import HuberHingeLoss
from pydpowl.engine.mechanisms import weighted_objective_calibration
from validation.audit.objective import cms_ratio_constants, density_search, log_density, sample_minimisers

W = 3.0


def _constants(eps=1.0, gamma=1.0):
    cal = weighted_objective_calibration(epsilon=eps, gamma=gamma, weights_upper_bound=W, curvature=1.0)
    return cal.ridge, cal.rate


def test_density_formula_is_the_law_of_the_minimiser_in_one_dimension():
    """p_D(theta) = nu(b_D(theta)) |det J_D(theta)| integrates to 1 and matches minimisers drawn through the
    solver (KS); without the Jacobian factor it is not a density."""
    loss = HuberHingeLoss(0.5)
    Z = np.array([[1.0], [-0.6], [0.3], [0.8]])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    w = np.array([3.0, 2.0, 1.0, 0.5])
    ridge, rate = _constants()
    grid = np.linspace(-40, 40, 200001)
    dens = np.exp(log_density(grid[:, None], Z, y, w, ridge=ridge, rate=rate, loss=loss)) * rate / 2.0
    cdf = np.concatenate([[0.0], np.cumsum((dens[1:] + dens[:-1]) / 2.0 * np.diff(grid))])
    assert cdf[-1] == pytest.approx(1.0, abs=1e-4)
    # the same without |det J|: the noise density at b_D(theta) alone
    b = -(w * y * loss.deriv(np.outer(grid, Z[:, 0] * y))) @ Z[:, 0] - ridge * grid
    no_jac = np.exp(-rate * np.abs(b)) * rate / 2.0
    assert abs(np.trapz(no_jac, grid) - 1.0) > 0.5
    draws = sample_minimisers(Z, y, w, ridge=ridge, rate=rate, loss=loss, size=1500,
                              rng=np.random.default_rng(11))[:, 0]
    assert stats.kstest(draws, lambda t: np.interp(t, grid, cdf)).pvalue > 1e-3


@pytest.mark.parametrize("dim", [1, 2])
def test_worst_log_density_ratio_attains_but_never_exceeds_epsilon(dim):
    """The Jacobian bound 1 + W c / lambda and the gradient bound 2 W are both reached at the edge of the
    Huber hinge's quadratic zone (margin 1 - h): the claim is tight, and the search never beats it."""
    res = density_search(dim=dim, epsilon=1.0, gamma=1.0, weights_upper_bound=W, n_starts=4, maxiter=200, seed=3)
    assert res.ratio <= 1.0 + 1e-9
    assert res.ratio >= 0.97
    assert res.worst_gradient_ratio <= 1.0 + 1e-9 and res.worst_jacobian_ratio <= 1.0 + 1e-9


def test_dppacks_cms_form_is_looser_and_a_smaller_ridge_breaks_the_claim():
    cms = density_search(dim=1, epsilon=1.0, gamma=1.0, weights_upper_bound=W, n_starts=4, maxiter=200, seed=3,
                         constants=cms_ratio_constants(epsilon=1.0, gamma=1.0, weights_upper_bound=W, curvature=1.0))
    assert cms.ratio < 0.8
    ridge, rate = _constants()
    broken = density_search(dim=1, epsilon=1.0, gamma=1.0, weights_upper_bound=W, n_starts=4, maxiter=200, seed=3,
                            constants=(ridge / 3.0, rate))
    assert broken.ratio > 1.2  # the search can fail a mechanism


def test_audit_configuration_of_the_estimators_passes_and_its_statistic_is_the_density_ratio():
    """werm-objective through DPWeightedERM(mechanism='objective'): the density search with the estimator's
    constants stays <= 1, and the black-box bound on its releases stays below the claim."""
    from validation.audit.objective import objective_configs
    from validation.audit.run import black_box_row

    config = objective_configs()[0]
    found = config.density(1.0, quick=True, seed=2)
    assert found.ratio <= 1.0 + 1e-9 and found.worst_gradient_ratio <= 1.0 + 1e-9
    D, D1 = config.audit_pair(3)
    row = black_box_row(config, D, D1, epsilon=1.0, engine="pydpowl", n_per_split=300, seed=10)
    assert row.passed and row.epsilon_lb <= 1.0
    # the statistic at the exact minimiser of D is the log density ratio there (by construction of the map)
    theta = config.minimiser(D)[0]
    ridge, rate = config.constants(1.0)
    stat = config.audit_map(D, D1, theta[None, :], 1.0)[0, 0]
    Z0, y0, w0 = config.scaled_problem(D)
    Z1, y1, w1 = config.scaled_problem(D1)
    loss = HuberHingeLoss(0.5)
    expected = (log_density(theta[None, :], Z0, y0, w0, ridge=ridge, rate=rate, loss=loss)
                - log_density(theta[None, :], Z1, y1, w1, ridge=ridge, rate=rate, loss=loss))[0]
    assert stat == pytest.approx(expected)


def test_multiarm_objective_configuration_passes_on_kronecker_rows():
    """Issue 25: DPOWL with three arms and weighted objective perturbation. The density search over records
    V_a kron z (arms changed between D and D') with the estimator's constants stays <= epsilon, the gradient
    change <= 2W and the Jacobian log ratio <= log(1 + W c / lambda); the black box stays below the claim; the
    audited statistic is the log density ratio of the K-arm problem's own rows."""
    from pydpowl.engine.multicategory import simplex_vertices
    from validation.audit.objective import objective_configs
    from validation.audit.run import black_box_row

    config = next(c for c in objective_configs() if c.kind == "multiarm")
    ridge, rate = config.constants(1.0)
    found = density_search(dim=2, epsilon=1.0, gamma=config.gamma, weights_upper_bound=config.weights_upper_bound,
                           huber_h=config.huber_h, n_starts=4, maxiter=150, seed=2, constants=(ridge, rate), n_arms=3)
    assert found.ratio <= 1.0 + 1e-9 and found.worst_gradient_ratio <= 1.0 + 1e-9
    assert found.worst_jacobian_ratio <= 1.0 + 1e-9 and found.ratio > 0.9  # near the claim: the bound is tight
    Z0 = found.worst.D0[0]
    V = simplex_vertices(3)
    for u in Z0:  # every row is V_a kron z = outer(V_a, z) for some arm a, with z = V_a' outer in the unit ball
        outer = u.reshape(2, 2)
        assert any(np.allclose(np.outer(V[a], V[a] @ outer), outer) for a in range(3))
        assert np.linalg.norm(u) <= 1.0 + 1e-12
    D, D1 = config.audit_pair(3)
    assert set(D.y[1:4]) == {-1.0, 0.0, 1.0} and D.y[0] != D1.y[0]
    row = black_box_row(config, D, D1, epsilon=1.0, engine="pydpowl", n_per_split=300, seed=10)
    assert row.passed and row.epsilon_lb <= 1.0
    theta = config.minimiser(D)[0]
    assert theta.shape == (config.d,) == (6,)
    stat = config.audit_map(D, D1, theta[None, :], 1.0)[0, 0]
    loss = HuberHingeLoss(config.huber_h)
    expected = (log_density(theta[None, :], *config.scaled_problem(D), ridge=ridge, rate=rate, loss=loss)
                - log_density(theta[None, :], *config.scaled_problem(D1), ridge=ridge, rate=rate, loss=loss))[0]
    assert stat == pytest.approx(expected) and config.scaled_problem(D)[0].shape == (config.n, 6)
