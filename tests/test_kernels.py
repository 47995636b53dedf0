"""The numba kernels (pydpowl.engine.kernels) against the numpy path, which uses the same loss definitions."""

import numpy as np
import pytest

from pydpowl.engine.kernels import numba_available, use_kernels, warm_up
from pydpowl.engine.losses import HuberHingeLoss, LogisticLoss
from pydpowl.engine.solver import objective_gradient, solve_weighted_erm

pytestmark = pytest.mark.skipif(not numba_available(), reason="numba not installed")


def _problem(seed, n, d):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, d)) * rng.uniform(0.2, 2.0, d)
    Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]
    y = np.where(rng.uniform(size=n) < 0.5, 1.0, -1.0)
    w = rng.exponential(size=n) * (rng.uniform(size=n) < 0.9)
    return Z, y, w


@pytest.mark.parametrize("loss", [HuberHingeLoss(0.5), HuberHingeLoss(0.05), LogisticLoss()], ids=str)
@pytest.mark.parametrize("n, d, gamma", [(3000, 1, 3.0), (3000, 4, 0.01), (3000, 20, 50.0), (120_000, 4, 1.0)])
def test_numba_and_numpy_paths_reach_the_same_minimiser(loss, n, d, gamma):  # 120k: subsample warm start
    Z, y, w = _problem(n + d, n, d)
    a = solve_weighted_erm(Z, y, w, gamma=gamma, loss=loss, backend="numpy")
    b = solve_weighted_erm(Z, y, w, gamma=gamma, loss=loss, backend="numba")
    assert (a.backend, b.backend) == ("numpy", "numba")
    for res in (a, b):
        g = np.linalg.norm(objective_gradient(res.x, Z, y, w, gamma=gamma, loss=loss))
        assert g <= 1e-10, f"{res.backend}: certified gradient norm {g:.2e} > 1e-10"
    # both within tol of the unique minimiser: ||x - x*|| <= ||grad F|| / mu, mu = gamma / n
    assert np.linalg.norm(a.x - b.x) <= 2e-10 / (gamma / n)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_feature_scaling_kernel_is_bit_identical_to_numpy(fit_intercept):
    from pydpowl.engine.preprocessing import FeatureScaler

    rng = np.random.default_rng(4)
    X = rng.normal(size=(5000, 3)) * [10.0, 1.0, 3.0]
    scaler = FeatureScaler.from_bounds((np.array([-12.0, -0.5, 0.0]), np.array([8.0, 2.0, 4.0])), 3, fit_intercept)
    Zk, nk = scaler.transform_checked(X, backend="numba")
    Zn, nn = scaler.transform_checked(X, backend="numpy")
    assert np.array_equal(Zk, Zn)
    assert nk == nn == int(np.count_nonzero(np.clip(X, scaler.lower, scaler.upper) != X)) > 0


def test_backend_rule():
    assert not use_kernels(10**9, "numpy") and use_kernels(1, "numba")
    from pydpowl.engine import kernels

    assert use_kernels(kernels.AUTO_MIN_ROWS, "auto") and not use_kernels(kernels.AUTO_MIN_ROWS - 1, "auto")
    with pytest.raises(ValueError, match="backend must be one of"):
        use_kernels(10, "gpu")


def test_auto_keeps_the_logistic_loss_on_numpy():
    """The logistic loss is faster vectorised in numpy at every n (measured), so "auto" never picks the kernels
    for it, while the Huber hinge gets them from AUTO_MIN_ROWS rows; backend="numba" still forces them."""
    from pydpowl.engine import kernels
    from pydpowl.engine.losses import HuberHingeLoss, LogisticLoss
    from pydpowl.engine.solver import solve_weighted_erm

    n = kernels.AUTO_MIN_ROWS
    assert use_kernels(n, "auto", HuberHingeLoss(0.5)) and not use_kernels(n, "auto", LogisticLoss())
    assert use_kernels(n, "numba", LogisticLoss())
    rng = np.random.default_rng(8)
    Z = rng.uniform(-0.5, 0.5, size=(n, 2))
    y = np.where(Z[:, 0] + 0.2 * rng.normal(size=n) > 0, 1.0, -1.0)
    auto = solve_weighted_erm(Z, y, np.ones(n), gamma=1.0, loss=LogisticLoss())
    forced = solve_weighted_erm(Z, y, np.ones(n), gamma=1.0, loss=LogisticLoss(), backend="numba")
    assert (auto.backend, forced.backend) == ("numpy", "numba")
    np.testing.assert_allclose(auto.x, forced.x, rtol=0, atol=1e-9)


def test_warm_up_compiles_every_kernel():
    assert warm_up() is True
