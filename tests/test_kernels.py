"""Fused kernels: same answers as the numpy path, incremental Huber Hessian exact."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from pydpowl.engine.problem import NumpyProblem
from pydpowl.engine._kernels import NUMBA_AVAILABLE, fused_problem
from pydpowl.engine.losses import HuberHingeLoss, LogisticLoss
from pydpowl.engine.solver import objective_gradient, solve_weighted_erm

pytestmark = pytest.mark.skipif(not NUMBA_AVAILABLE, reason="numba not installed")


def _problem(seed, n, d):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, d)) * rng.uniform(0.2, 2.0, d)
    Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]
    y = np.where(rng.uniform(size=n) < 0.5, 1.0, -1.0)
    w = rng.exponential(size=n) * (rng.uniform(size=n) < 0.9)
    return Z, y, w


def test_incremental_huber_hessian_equals_direct_after_moves():
    Z, y, w = _problem(0, 3000, 5)
    loss = HuberHingeLoss(0.3)
    fused, ref = fused_problem(Z, y, w, 2.0, loss), NumpyProblem(Z, y, w, 2.0, loss)
    fused.quadratic_start()
    rng = np.random.default_rng(1)
    for _ in range(6):  # arbitrary points: many rows change zone between sweeps
        theta = rng.normal(size=5) * 3
        m = fused.margins(theta)
        g, H = fused.grad_hess(theta, m)
        g_ref, H_ref = ref.grad_hess(theta, ref.margins(theta))
        assert_allclose(m, ref.margins(theta), rtol=1e-13, atol=1e-13)
        assert_allclose(g, g_ref, rtol=1e-10, atol=1e-10)
        assert_allclose(H, H_ref, rtol=1e-10, atol=1e-9)
        assert fused.objective(theta, m) == pytest.approx(ref.objective(theta, ref.margins(theta)), rel=1e-12)


@pytest.mark.parametrize("loss", [HuberHingeLoss(0.5), HuberHingeLoss(0.05), LogisticLoss()], ids=str)
@pytest.mark.parametrize("n, gamma", [(6000, 0.01), (6000, 50.0), (120_000, 1.0)])  # 120k: subsample warm start
def test_numba_and_numpy_paths_agree(loss, n, gamma):
    Z, y, w = _problem(n, n, 4)
    a = solve_weighted_erm(Z, y, w, gamma=gamma, loss=loss, backend="numpy")
    b = solve_weighted_erm(Z, y, w, gamma=gamma, loss=loss, backend="numba")
    for res in (a, b):
        g = np.linalg.norm(objective_gradient(res.x, Z, y, w, gamma=gamma, loss=loss))
        assert g <= 1e-10, f"{res.backend}: certified gradient norm {g:.2e} > 1e-10"
    # both within tol of the unique minimiser: ||x - x*|| <= ||grad F|| / mu
    assert np.linalg.norm(a.x - b.x) <= 2e-10 / (gamma / n)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_fused_scale_features_bit_identical_to_numpy(fit_intercept):
    from pydpowl.engine._kernels import fused_scale_features

    rng = np.random.default_rng(4)
    X = rng.normal(size=(5000, 3)) * [10.0, 1.0, 3.0]
    lower, upper = np.array([-12.0, -0.5, 0.0]), np.array([8.0, 2.0, 4.0])
    scale = np.maximum(np.abs(lower), np.abs(upper))
    col_scale = np.concatenate([[1.0], scale]) if fit_intercept else scale
    d = 3 + int(fit_intercept)
    Xc = np.clip(X, lower, upper)
    expected = (np.column_stack([np.ones(5000), Xc]) if fit_intercept else Xc) / col_scale / np.sqrt(d)
    Z, n_clipped = fused_scale_features(X, lower, upper, col_scale, np.sqrt(d), fit_intercept)
    assert np.array_equal(Z, expected)
    assert n_clipped == int(np.count_nonzero(Xc != X)) > 0
