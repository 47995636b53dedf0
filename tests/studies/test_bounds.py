"""Tests of pydpowl.studies.bounds against hand computations, tail probabilities and asymptotic claims."""

import math

import numpy as np
import pytest

from pydpowl import DPOWL, prepare_owl
from pydpowl.studies.bounds import (a_p, bound_optimal_gamma, empirical_risk_bound, expected_noise_norm,
                                    noise_norm_bound, population_optimal_gamma, population_risk_bound,
                                    sample_complexity, solution_norm_bound)
from pydpowl.datasets import make_synthetic_owl
from pydpowl.engine.mechanisms import sample_output_noise_batch

BASE = dict(n=1000, p=5, epsilon=1.0, gamma=100.0, W=30.0, theta_norm=2.0, h=0.5)


def _erlang_tail(p, a):
    """P(Gamma(p, 1) > a) = exp(-a) sum_{k < p} a^k / k! (integer p), written out by hand."""
    return math.exp(-a) * sum(a ** k / math.factorial(k) for k in range(p))


@pytest.mark.parametrize("p, rho", [(1, 0.05), (5, 0.05), (5, 0.5), (12, 0.001)])
def test_a_p_is_the_gamma_quantile(p, rho):
    a = a_p(rho, p)
    assert _erlang_tail(p, a) == pytest.approx(rho, rel=1e-9)
    assert a <= a_p(rho, p, kind="union") + 1e-12, "the union bound p log(p/rho) is never smaller"


def test_a_p_closed_forms_by_hand():
    assert a_p(0.05, 1) == pytest.approx(-math.log(0.05), rel=1e-12)  # Exp(1) quantile
    assert a_p(0.05, 1, kind="union") == pytest.approx(math.log(20.0), rel=1e-12)
    assert a_p(0.01, 5, kind="union") == pytest.approx(5 * math.log(500.0), rel=1e-12)
    with pytest.raises(ValueError, match=r"rho must be in \(0, 1\)"):
        a_p(1.0, 3)


def test_empirical_bound_terms_by_hand():
    b = empirical_risk_bound(**BASE, rho=None)
    # T1 = gamma |theta*|^2 / (2n) = 100 * 4 / 2000; Delta = 2W / gamma = 0.6; E|b| = p Delta / eps = 3
    assert b.T1 == pytest.approx(0.2)
    assert b.T2 == pytest.approx(30 * 3.0)
    assert b.T3 == pytest.approx(30 * 0.5 / 4)
    assert b.total == pytest.approx(0.2 + 90 + 3.75)
    assert b.probability is None
    q = empirical_risk_bound(**BASE, rho=0.05)
    assert q.T2 == pytest.approx(30 * a_p(0.05, 5) * 0.6)
    assert q.probability == pytest.approx(0.95)
    with_c = empirical_risk_bound(**BASE, rho=None, C=6.0)  # Delta = (C + 2W) / gamma = 0.66
    assert with_c.T2 == pytest.approx(30 * 5 * 0.66)


def test_T2_shrinks_as_gamma_grows_and_T3_is_W_h_over_4():
    t2 = [empirical_risk_bound(**dict(BASE, gamma=g)).T2 for g in (10, 20, 40, 80)]
    assert all(a > b for a, b in zip(t2, t2[1:]))
    assert t2[0] / t2[1] == pytest.approx(2.0), "T2 is proportional to 1/gamma"
    for kw in (dict(gamma=1.0), dict(n=10), dict(epsilon=100.0), dict(W=7.0, h=0.2)):
        settings = dict(BASE, **kw)
        assert empirical_risk_bound(**settings).T3 == pytest.approx(settings["W"] * settings["h"] / 4)


def test_noise_norm_tail_matches_rho():
    rng = np.random.default_rng(0)
    kw = dict(p=5, epsilon=2.0, gamma=50.0, W=30.0)
    rate = kw["epsilon"] * kw["gamma"] / (2 * kw["W"])
    norms = np.linalg.norm(sample_output_noise_batch(5, rate, 40000, rng=rng), axis=1)
    frac = float(np.mean(norms > noise_norm_bound(0.1, **kw)))
    assert abs(frac - 0.1) < 0.01, f"share of noise norms above the rho=0.1 bound is {frac:.4f} (tolerance 0.01)"
    assert norms.mean() == pytest.approx(expected_noise_norm(**kw), rel=0.02)


def _weighted_hinge(theta, Z, y, w):
    return float(np.mean(w * np.maximum(0.0, 1.0 - y * (Z @ theta))))


def test_empirical_bound_holds_on_real_fits():
    data = make_synthetic_owl(400, random_state=1)
    gamma, eps, W = 20.0, 2.0, 30.0
    model = DPOWL(epsilon=math.inf, gamma=gamma, weights_upper_bound=W, feature_bounds=data.feature_bounds)
    problem = prepare_owl(data.X, data.treatment, data.benefit, 0.5, weights_upper_bound=W,
                          feature_bounds=data.feature_bounds)
    Z, y, w = problem.Z, problem.labels, problem.weights
    theta_hat = model.fit(data.X, data.treatment, data.benefit, 0.5).scaled_coef_
    assert np.linalg.norm(theta_hat) <= solution_norm_bound(n=400, gamma=gamma, W=W)
    rng = np.random.default_rng(2)
    noise = sample_output_noise_batch(5, eps * gamma / (2 * W), 2000, rng=rng)
    theta_star = np.array([0.5, 1.0, 1.0, -1.5, -2.0])  # any comparison vector
    excess = np.array([_weighted_hinge(theta_hat + b, Z, y, w) for b in noise]) - _weighted_hinge(theta_star, Z, y, w)
    bound = empirical_risk_bound(n=400, p=5, epsilon=eps, gamma=gamma, W=W,
                                 theta_norm=float(np.linalg.norm(theta_star)), rho=0.1)
    share = float(np.mean(excess > bound.total))
    assert share <= 0.1, f"the rho=0.1 bound {bound.total:.3f} is exceeded in {share:.3f} of 2000 releases"
    mean_bound = empirical_risk_bound(n=400, p=5, epsilon=eps, gamma=gamma, W=W,
                                      theta_norm=float(np.linalg.norm(theta_star)), rho=None)
    assert excess.mean() <= mean_bound.total


def test_population_bound_adds_a_generalisation_term():
    emp = empirical_risk_bound(**BASE, rho=0.05)
    pop = population_risk_bound(**BASE, rho=0.05, delta=0.05)
    assert (pop.T1, pop.T2, pop.T3) == (emp.T1, emp.T2, emp.T3)
    radius = max(2.0, math.sqrt(2 * 1000 * 30 / 100) + a_p(0.05, 5) * 0.6)
    U = 2 * 30 * radius / math.sqrt(1000) + 30 * (1 + radius) * math.sqrt(math.log(2 / 0.05) / 2000)
    assert pop.T4 == pytest.approx(2 * U)
    assert pop.probability == pytest.approx(0.9)


def test_bound_optimal_gamma_minimises_T1_plus_T2():
    g_star = bound_optimal_gamma(n=1000, p=5, epsilon=1.0, W=30.0, theta_norm=2.0, rho=0.05)
    grid = np.geomspace(g_star / 10, g_star * 10, 401)
    terms = [empirical_risk_bound(**dict(BASE, gamma=float(g))) for g in grid]
    vals = [b.T1 + b.T2 for b in terms]
    assert grid[int(np.argmin(vals))] == pytest.approx(g_star, rel=0.02)
    # gamma* ~ sqrt(n / epsilon)
    assert bound_optimal_gamma(n=4000, p=5, epsilon=1.0, W=30.0, theta_norm=2.0) == pytest.approx(2 * g_star)
    assert bound_optimal_gamma(n=1000, p=5, epsilon=4.0, W=30.0, theta_norm=2.0) == pytest.approx(g_star / 2)


def test_population_optimal_gamma_minimises_the_population_bound():
    kw = dict(n=2000, p=5, epsilon=1.0, W=30.0, theta_norm=2.0, rho=0.05, delta=0.05)
    g = population_optimal_gamma(**kw)
    grid = np.geomspace(g / 30, g * 30, 601)
    vals = [population_risk_bound(gamma=float(x), **kw).total for x in grid]
    assert population_risk_bound(gamma=g, **kw).total <= min(vals) + 1e-9


def test_sample_complexity_is_the_smallest_n():
    kw = dict(p=5, epsilon=1.0, W=1.0, theta_norm=2.0, h=0.5, rho=0.05, delta=0.05)
    alpha = 0.5
    n = sample_complexity(alpha, **kw)

    def total(m):
        # the population bound minimised over gamma by brute force on a fine log grid
        return min(population_risk_bound(n=m, gamma=float(g), **kw).total for g in np.geomspace(1e-2, 1e6, 4001))

    assert total(n) <= alpha + 1e-6 and total(n - 1) > alpha - 1e-6
    assert sample_complexity(0.4, **kw) > n, "a smaller target needs more data"
    assert sample_complexity(alpha, **dict(kw, epsilon=0.1)) > n, "a smaller budget needs more data"
    with pytest.raises(ValueError, match="alpha must exceed T3"):
        sample_complexity(0.125, **kw)  # T3 = W h / 4 = 0.125
