"""The problem protocol (pydpowl.engine.problem): MarginProblem's sums, its incremental Hessian, and that the
solver needs nothing else."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from pydpowl.engine.kernels import numba_available
from pydpowl.engine.losses import HuberHingeLoss, LogisticLoss
from pydpowl.engine import problem as problem_module
from pydpowl.engine.problem import MarginProblem
from pydpowl.engine.solver import newton

BACKENDS = ["numpy", pytest.param("numba", marks=pytest.mark.skipif(not numba_available(), reason="no numba"))]
LOSSES = [HuberHingeLoss(0.3), LogisticLoss()]


def _data(seed, n=400, d=4):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, d))
    Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]
    return Z, np.where(rng.uniform(size=n) < 0.5, 1.0, -1.0), rng.uniform(0, 3, size=n)


def _direct(theta, Z, y, w, h=None):
    """L, gradient and Hessian written out row by row, independently of the package."""
    L, g, H = 0.0, np.zeros(Z.shape[1]), np.zeros((Z.shape[1],) * 2)
    for z, yi, wi in zip(Z, y, w):
        m = yi * z @ theta
        if h is None:  # logistic
            v, d1, d2 = np.log1p(np.exp(-m)), -1 / (1 + np.exp(m)), np.exp(m) / (1 + np.exp(m)) ** 2
        elif m > 1 + h:
            v, d1, d2 = 0.0, 0.0, 0.0
        elif m < 1 - h:
            v, d1, d2 = 1 - m, -1.0, 0.0
        else:
            v, d1, d2 = (1 + h - m) ** 2 / (4 * h), -(1 + h - m) / (2 * h), 1 / (2 * h)
        L, g, H = L + wi * v, g + wi * d1 * yi * z, H + wi * d2 * np.outer(z, z)
    return L, g, H


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("loss", LOSSES, ids=str)
@pytest.mark.parametrize("block", [None, 7], ids=["block-default", "block-7"])
@pytest.mark.parametrize("pairs", [True, False], ids=["pair-products", "weighted-gram"])
@pytest.mark.parametrize("unit", [False, True], ids=["weighted", "unit-weights"])
def test_evaluate_matches_the_direct_sums_after_arbitrary_moves(backend, loss, block, pairs, unit, monkeypatch):
    if block is not None:  # many blocks of rows in the numpy path: loss terms, gathered and full Gram updates
        monkeypatch.setattr(problem_module, "_NUMPY_BLOCK", block)
        monkeypatch.setattr(problem_module, "_SPARE", type(problem_module._SPARE)())
    if not pairs:  # the logistic Hessian by the weighted Gram, as above the size cap of the pair products
        monkeypatch.setattr(problem_module, "_PAIRS_MAX_ENTRIES", 0)
    Z, y, w = _data(0)
    if unit:  # every weight 1 (unweighted fits): the numpy path skips the products with w
        w = np.ones_like(w)
    problem = MarginProblem(Z, y, w, loss, backend=backend)
    if backend == "numpy":
        assert problem._unit_weights is unit
    rng = np.random.default_rng(1)
    # many rows change zone between points: the rank-k Hessian updates must stay exact; theta = 0 (a starting
    # point, where every margin is 0) is evaluated on its own path in numpy
    for theta in [np.zeros(4)] + [rng.normal(size=4) * 2 for _ in range(5)] + [np.zeros(4)]:
        L, g, H = problem.evaluate(theta)
        L_ref, g_ref, H_ref = _direct(theta, Z, y, w, getattr(loss, "h", None))
        assert L == pytest.approx(L_ref, rel=1e-12)
        assert_allclose(g, g_ref, rtol=1e-11, atol=1e-11)
        assert_allclose(H, H_ref, rtol=1e-11, atol=1e-11)
    problem.release()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("loss", LOSSES, ids=str)
def test_line_derivatives_match_evaluate(backend, loss):
    Z, y, w = _data(2)
    problem = MarginProblem(Z, y, w, loss, backend=backend)
    theta, p = np.array([0.5, -1.0, 2.0, 0.3]), np.array([-1.0, 0.5, 0.2, 1.0])
    problem.evaluate(theta)
    line = problem.line(theta, p)
    for t in (0.0, 0.37, 1.0, 2.5):
        _, g, H = problem.evaluate(theta + t * p)
        d1, d2 = line(t)
        assert d1 == pytest.approx(g @ p, rel=1e-11, abs=1e-11)
        assert d2 == pytest.approx(p @ H @ p, rel=1e-11, abs=1e-11)


class _DenseLeastSquares:
    """A problem outside the package: L = sum_i w_i (z_i'theta - t_i)^2 / 2, only the protocol."""

    backend = "test"

    def __init__(self, Z, t, w):
        self.Z, self.t, self.w = Z, t, w
        self.n, self.d = Z.shape

    def evaluate(self, theta):
        r = self.Z @ theta - self.t
        return 0.5 * float(self.w @ r**2), self.Z.T @ (self.w * r), (self.Z * self.w[:, None]).T @ self.Z

    def line(self, theta, p):
        r, s = self.Z @ theta - self.t, self.Z @ p
        return lambda step: (float(self.w @ ((r + step * s) * s)), float(self.w @ (s * s)))


@pytest.mark.parametrize("loss", LOSSES, ids=str)
@pytest.mark.parametrize("unit", [False, True], ids=["weighted", "unit-weights"])
def test_value_is_the_evaluated_value_and_can_be_skipped(loss, unit):
    Z, y, w = _data(4)
    w = np.ones_like(w) if unit else w
    problem = MarginProblem(Z, y, w, loss, backend="numpy")
    theta = np.random.default_rng(5).normal(size=4)
    L, g, H = problem.evaluate(theta)
    L_skip, g_skip, H_skip = problem.evaluate(theta, value=False)
    assert np.array_equal(g_skip, g) and np.array_equal(H_skip, H)
    # skipped where the loss has cheaper slopes (logistic); where the value comes with them (Huber) it is given
    assert L_skip is None if isinstance(loss, LogisticLoss) else L_skip == L
    assert problem.value(theta) == L  # from the kept margins, summed alike: the same number
    other = theta + 0.5
    assert problem.value(other) == pytest.approx(_direct(other, Z, y, w, getattr(loss, "h", None))[0], rel=1e-12)
    problem.release()


class _WithoutValue:
    """A MarginProblem seen through the protocol's required part only (no value(): every evaluation has L)."""

    def __init__(self, inner):
        self.inner, self.n, self.d, self.backend = inner, inner.n, inner.d, inner.backend
        self.evaluate, self.line = inner.evaluate, inner.line


@pytest.mark.parametrize("loss", LOSSES, ids=str)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_values_computed_on_demand_give_the_minimiser_computed_with_every_value(loss, seed, monkeypatch):
    """The slope at the trial point proves a full step's decrease (G convex), so values are computed only where
    that proof fails and for the objective reported; the iterates are those of the solver that has every value."""
    Z, y, w = _data(seed, n=600)
    # large margins and a weak ridge: full steps that overshoot, so the proof fails and values are computed
    Z = Z * (6.0 if loss.piecewise_quadratic else 40.0) / np.abs(Z).max()
    calls = {"value": 0}
    value = MarginProblem.value

    def counted(self, theta):
        calls["value"] += 1
        return value(self, theta)

    monkeypatch.setattr(MarginProblem, "value", counted)
    ridge = 0.5 if loss.piecewise_quadratic else 0.01
    lazy = newton(MarginProblem(Z, y, w, loss), np.zeros(4), ridge=ridge, tol=1e-12)
    full = newton(_WithoutValue(MarginProblem(Z, y, w, loss)), np.zeros(4), ridge=ridge, tol=1e-12)
    assert_allclose(lazy.x, full.x, rtol=1e-13, atol=1e-15)
    assert lazy.nit == full.nit
    assert lazy.objective == pytest.approx(full.objective, rel=1e-14)
    if not isinstance(loss, LogisticLoss):  # the Huber hinge's value comes with its slopes: never recomputed
        assert calls["value"] == 0
        return
    assert 1 <= calls["value"] <= 1 + 2 * lazy.nit
    if seed == 0:  # here a full step overshoots: the proof fails and the values decide (the fallback is exercised)
        assert calls["value"] > 1


def test_the_solver_needs_only_the_protocol():
    Z, t, w = _data(3)
    problem = _DenseLeastSquares(Z, t, w)
    b = np.array([0.3, -0.2, 0.1, 0.0])
    res = newton(problem, np.zeros(4), ridge=2.0, linear=b, tol=1e-12)
    exact = np.linalg.solve((Z * w[:, None]).T @ Z + 2.0 * np.eye(4), Z.T @ (w * t) - b)
    assert_allclose(res.x, exact, rtol=1e-12, atol=1e-13)
    assert res.backend == "test" and res.grad_norm <= 1e-12


def test_pair_products_are_recomputed_for_the_next_problem_of_the_same_size():
    """The logistic Hessian's pair products live in the shared work arrays: a later problem with other rows of
    the same shape must not see the earlier problem's."""
    theta = np.array([0.5, -1.0, 0.3, 2.0])
    for seed in (11, 12):
        Z, y, w = _data(seed, n=300)
        problem = MarginProblem(Z, y, w, LogisticLoss())
        _, _, H = problem.evaluate(theta)
        problem.release()
        assert_allclose(H, _direct(theta, Z, y, w)[2], rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("backend", BACKENDS)
def test_work_arrays_are_reused_across_problems_of_two_sizes(backend):
    """A solve from 100,000 rows builds problems of two sizes (its subsample's and its own): each size finds
    its work arrays again, so repeated solves touch no fresh memory."""
    Z, y, w = _data(5, n=300)
    loss = HuberHingeLoss(0.3)

    def arrays(ws):  # every work array (numpy swaps the roles of two of them between calls)
        return [a for v in ws.values() for a in (v if isinstance(v, tuple) else (v,)) if isinstance(a, np.ndarray)]

    first = {}  # holds the first arrays alive, so that a fresh array cannot take the id of a dropped one
    for rnd in range(2):
        for n in (300, 100):
            problem = MarginProblem(Z[:n], y[:n], w[:n], loss, backend=backend)
            problem.evaluate(np.ones(4))
            if rnd == 0:
                first[n] = arrays(problem._ws)
            else:
                assert sorted(map(id, arrays(problem._ws))) == sorted(map(id, first[n]))
            problem.release()


def test_data_are_kept_column_major_and_caller_arrays_untouched():
    Z, y, w = _data(6, n=50)
    Z_before = Z.copy()
    problem = MarginProblem(Z, y, w, LogisticLoss())
    assert problem.Z.flags.f_contiguous and np.array_equal(problem.Z, Z_before)
    problem.evaluate(np.ones(4))
    assert np.array_equal(Z, Z_before) and Z.flags.c_contiguous
    problem.release()


def test_unknown_backend_and_custom_loss_on_numba_are_refused():
    class Softplus(LogisticLoss):
        def kernel_spec(self):  # a loss the kernels do not know
            return None

    Z, y, w = _data(4, n=10)
    with pytest.raises(ValueError, match="backend must be 'numpy' or 'numba'"):
        MarginProblem(Z, y, w, LogisticLoss(), backend="gpu")
    with pytest.raises(ValueError, match="needs a built-in loss"):
        MarginProblem(Z, y, w, Softplus(), backend="numba")


@pytest.mark.parametrize("weighted", [True, False])
def test_quadratic_problem_squared_error_by_hand(weighted):
    from pydpowl.engine.losses import SquaredErrorLoss
    from pydpowl.engine.problem import QuadraticProblem

    rng = np.random.default_rng(5)
    Z, y, w = rng.normal(size=(30, 3)), rng.normal(size=30), rng.uniform(0, 2, 30)
    if not weighted:
        w = np.ones(30)
    prob = QuadraticProblem.from_rows(Z, y, w if weighted else None)
    assert (prob.n, prob.d) == (30, 3)
    theta = rng.normal(size=3)
    L, g, H = prob.evaluate(theta)
    r = Z @ theta - y
    assert L == pytest.approx(np.sum(w * SquaredErrorLoss().value(Z @ theta, y)), rel=1e-12)
    assert L == pytest.approx(0.5 * np.sum(w * r * r), rel=1e-12)
    assert_allclose(g, Z.T @ (w * r), rtol=1e-12)
    assert_allclose(H, Z.T @ (w[:, None] * Z), rtol=1e-12)
    p = rng.normal(size=3)
    d1, d2 = prob.line(theta, p)(0.7)
    s = Z @ p
    assert d1 == pytest.approx(np.sum(w * (r + 0.7 * s) * s), rel=1e-12)
    assert d2 == pytest.approx(np.sum(w * s * s), rel=1e-12)
    H[0, 0] += 1.0  # the caller owns what evaluate returns
    assert_allclose(prob.evaluate(theta)[2], Z.T @ (w[:, None] * Z), rtol=1e-12)


def test_quadratic_problem_refuses_mismatched_statistics():
    from pydpowl.engine.problem import QuadraticProblem

    with pytest.raises(ValueError, match=r"gram must have shape \(2, 2\)"):
        QuadraticProblem(np.eye(3), np.zeros(2), 0.0, 10)
