"""Tests of pydpowl.engine.batched: many Huber-hinge problems at once, certified like the one-problem solver."""

import importlib.util

import numpy as np
import pytest

from pydpowl import HuberHingeLoss, solve_weighted_erm
from pydpowl.engine.batched import solve_huber_batch
from pydpowl.datasets import make_synthetic_owl
from pydpowl.estimators.owl import DPOWL

HAS_NUMBA = importlib.util.find_spec("numba") is not None
BACKENDS = ["numpy", pytest.param("numba", marks=pytest.mark.skipif(not HAS_NUMBA, reason="numba not installed"))]


def _problems(n, reps, seed):
    """Scaled rows, labels and OWL weights of ``reps`` datasets of the paper's design."""
    rng = np.random.default_rng(seed)
    Z, y, w = [], [], []
    for _ in range(reps):
        d = make_synthetic_owl(n, random_state=rng)
        z, a, wt, _, _, _ = DPOWL(epsilon=np.inf, gamma=1.0, weights_upper_bound=30,
                                  feature_bounds=d.feature_bounds).prepare(d.X, d.treatment, d.benefit, 0.5)
        Z.append(z), y.append(a), w.append(wt)
    return np.stack(Z), np.stack(y), np.stack(w)


def _grad_norm(theta, Z, y, w, gamma, h=0.5):
    """Gradient norm of F = G / n, written out independently of the solvers."""
    m = y * (Z @ theta)
    d1 = np.where(m < 1 - h, -1.0, np.where(m > 1 + h, 0.0, -(1 + h - m) / (2 * h)))
    return np.linalg.norm(Z.T @ (w * y * d1) + gamma * theta) / Z.shape[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_batch_matches_the_one_problem_solver(backend):
    Z, y, w = _problems(300, 12, seed=1)
    gammas = np.geomspace(0.5, 500, 12)  # every problem has its own gamma
    theta = solve_huber_batch(Z, y, w, gamma=gammas, backend=backend)
    loss = HuberHingeLoss(0.5)
    for r in range(12):
        ref = solve_weighted_erm(Z[r], y[r], w[r], gamma=gammas[r], loss=loss).x
        np.testing.assert_allclose(theta[r], ref, rtol=0, atol=1e-9,
                                   err_msg=f"problem {r} (gamma={gammas[r]:g}) differs from solve_weighted_erm")
        g = _grad_norm(theta[r], Z[r], y[r], w[r], gammas[r])
        assert g <= 1e-10, f"problem {r}: certified gradient norm {g:.2e} > 1e-10"


@pytest.mark.parametrize("backend", BACKENDS)
def test_warm_start_reaches_the_same_minimiser(backend):
    Z, y, w = _problems(200, 5, seed=2)
    cold = solve_huber_batch(Z, y, w, gamma=20.0, backend=backend)
    warm = solve_huber_batch(Z, y, w, gamma=20.0, theta0=cold + 0.3, backend=backend)
    np.testing.assert_allclose(warm, cold, rtol=0, atol=1e-9)


def test_stragglers_are_certified_by_the_one_problem_solver():
    # no batched iteration at all: every problem goes to solve_weighted_erm
    Z, y, w = _problems(150, 4, seed=3)
    theta = solve_huber_batch(Z, y, w, gamma=5.0, max_iter=0, backend="numpy")
    for r in range(4):
        g = _grad_norm(theta[r], Z[r], y[r], w[r], 5.0)
        assert g <= 1e-10, f"straggler {r}: gradient norm {g:.2e} > 1e-10"


def test_unknown_backend_is_named():
    Z, y, w = _problems(20, 1, seed=4)
    with pytest.raises(ValueError, match="backend must be one of"):
        solve_huber_batch(Z, y, w, gamma=1.0, backend="gpu")


def test_warm_up_compiles_when_numba_is_installed():
    from pydpowl.engine.batched import warm_up

    assert warm_up() is HAS_NUMBA
