"""Tests of pydpowl.engine.dask_problem: the blockwise problem agrees with the in-memory one, and the
solver reaches the same certified minimiser through it without holding anything of length n."""

import dask
import dask.array as da
import numpy as np
import pytest

from pydpowl.engine import solver
from pydpowl.engine.dask_problem import ChunkedRows, DaskMarginProblem, PassLog, track_passes
from pydpowl.engine.losses import HuberHingeLoss, LogisticLoss
from pydpowl.engine.problem import MarginProblem
from pydpowl.engine.solver import solve_weighted_erm
from pydpowl.exceptions import ConvergenceError

pytestmark = pytest.mark.usefixtures("dask_client")


def _data(n, d=5, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.uniform(-1, 1, size=(n, d))
    Z /= np.sqrt(d) * np.abs(Z).max()
    Z[:, 0] = 1 / np.sqrt(d)
    y = np.where(Z[:, 1] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    w = rng.uniform(0, 3, size=n)
    return Z, y, w


def _chunked(Z, y, w, chunks):
    return (da.from_array(Z, chunks=(chunks, -1)), da.from_array(y, chunks=(chunks,)),
            da.from_array(w, chunks=(chunks,)))


UNEVEN = (300, 1, 0, 250, 449)  # an empty chunk, a one-row chunk and an uneven last chunk (n = 1000)


@pytest.mark.parametrize("loss", [HuberHingeLoss(0.5), LogisticLoss()], ids=["huber", "logistic"])
@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_evaluate_and_line_are_the_in_memory_sums(loss, backend):
    Z, y, w = _data(1000)
    rows = ChunkedRows(*_chunked(Z, y, w, UNEVEN))
    theta, p = np.array([0.3, 2.0, -1.0, 0.5, 0.1]), np.array([-0.2, 0.5, 0.3, 0.0, 1.0])
    mem = MarginProblem(Z, y, w, loss, backend=backend)
    problem = rows.problem(loss, backend)
    L0, g0, H0 = mem.evaluate(theta)
    L1, g1, H1 = problem.evaluate(theta)
    np.testing.assert_allclose(L1, L0, rtol=1e-12)
    np.testing.assert_allclose(g1, g0, rtol=1e-12, atol=1e-12 * np.abs(g0).max())
    np.testing.assert_allclose(H1, H0, rtol=1e-12, atol=1e-12 * np.abs(H0).max())
    for t in (0.0, 0.7, 2.5):
        np.testing.assert_allclose(problem.line(theta, p)(t), mem.line(theta, p)(t), rtol=1e-12, atol=1e-12)
    assert problem.backend == f"dask/{backend}" and (problem.n, problem.d) == (1000, 5)
    mem.release()
    problem.release()
    with pytest.raises(RuntimeError, match="released"):
        problem.evaluate(theta)


@pytest.mark.parametrize("n,chunks", [(1000, UNEVEN), (2999, 1000), (120_000, 25_000)])
@pytest.mark.parametrize("loss", [HuberHingeLoss(0.5), LogisticLoss()], ids=["huber", "logistic"])
def test_solve_equals_the_in_memory_solve(n, chunks, loss):
    Z, y, w = _data(n, seed=n)
    ref = solve_weighted_erm(Z, y, w, gamma=2.0, loss=loss)
    res = solve_weighted_erm(*_chunked(Z, y, w, chunks), gamma=2.0, loss=loss)
    assert res.grad_norm <= 1e-10 and res.backend.startswith("dask/")
    assert np.linalg.norm(res.x - ref.x) <= 1e-9 * np.linalg.norm(ref.x)


def test_objective_perturbation_terms_are_passed_through():
    Z, y, w = _data(1500, seed=4)
    b = np.array([0.5, -1.0, 2.0, 0.0, 0.3])
    ref = solve_weighted_erm(Z, y, w, gamma=1.0, loss=HuberHingeLoss(0.5), extra_ridge=30.0, linear=b)
    res = solve_weighted_erm(*_chunked(Z, y, w, 400), gamma=1.0, loss=HuberHingeLoss(0.5), extra_ridge=30.0, linear=b)
    assert np.linalg.norm(res.x - ref.x) <= 1e-9 * np.linalg.norm(ref.x)


def test_the_solver_sees_only_d_sized_results(monkeypatch):
    n = 120_000
    Z, y, w = _data(n, seed=7)
    seen, solves = [], []
    real_newton = solver.newton

    def spy(problem, theta0, **kw):
        evaluate, line = problem.evaluate, problem.line

        def evaluate_spy(theta):
            out = evaluate(theta)
            seen.append(out)
            return out

        def line_spy(theta, p):
            phi = line(theta, p)
            return lambda t: seen.append(phi(t)) or seen[-1]

        if isinstance(problem, DaskMarginProblem):
            problem.evaluate, problem.line = evaluate_spy, line_spy
        solves.append((type(problem), problem.n))
        return real_newton(problem, theta0, **kw)

    monkeypatch.setattr(solver, "newton", spy)
    strided = []
    real_strided = ChunkedRows.strided
    monkeypatch.setattr(ChunkedRows, "strided", lambda self, step: strided.append(real_strided(self, step))
                        or strided[-1])
    solve_weighted_erm(*_chunked(Z, y, w, 30_000), gamma=1.0, loss=HuberHingeLoss(0.5))
    # the warm start solves the strided subsample in memory, then the whole problem runs blockwise
    assert solves == [(MarginProblem, 20_000), (DaskMarginProblem, n)]
    assert seen
    for out in seen:
        for part in out:
            assert np.size(part) <= 25  # L, gradient (d), Hessian (d x d): never n entries
    assert len(strided) == 1 and all(a.shape[0] == 20_000 for a in strided[0])  # the warm start's subsample


def test_passes_are_counted():
    Z, y, w = _data(120_000, seed=9)
    with track_passes() as log:
        res = solve_weighted_erm(*_chunked(Z, y, w, 30_000), gamma=1.0, loss=HuberHingeLoss(0.5))
    assert isinstance(log, PassLog) and log.chunks == 4
    assert log.subsample == 1 and log.validation == 0
    assert res.nit + 1 <= log.evaluations + log.line_search  # an evaluation at the start and per iteration
    assert log.total == log.subsample + log.evaluations + log.line_search
    with track_passes() as outer:
        pass
    assert outer.total == 0


def test_line_search_runs_blockwise_when_a_full_step_is_rejected():
    # from a far starting point the full Newton step of the logistic loss overshoots
    Z, y, w = _data(2000, seed=3)
    theta0 = np.full(5, 5.0)
    ref = solve_weighted_erm(Z, y, w, gamma=1.0, loss=LogisticLoss(), theta0=theta0)
    with track_passes() as log:
        res = solve_weighted_erm(*_chunked(Z, y, w, 700), gamma=1.0, loss=LogisticLoss(), theta0=theta0)
    assert log.line_search > 0
    assert np.linalg.norm(res.x - ref.x) <= 1e-9 * np.linalg.norm(ref.x)


def test_uncertified_solves_raise():
    Z, y, w = _data(1000)
    with pytest.raises(ConvergenceError, match="nothing was released"):
        solve_weighted_erm(*_chunked(Z, y, w, 300), gamma=1.0, loss=HuberHingeLoss(0.5), max_iter=0)


def test_local_scheduler_without_a_client_gives_the_same_answer():
    Z, y, w = _data(1000, seed=2)
    ref = solve_weighted_erm(Z, y, w, gamma=1.0, loss=HuberHingeLoss(0.5))
    with dask.config.set(scheduler="threads"):
        res = solve_weighted_erm(*_chunked(Z, y, w, 333), gamma=1.0, loss=HuberHingeLoss(0.5))
    assert np.linalg.norm(res.x - ref.x) <= 1e-9 * np.linalg.norm(ref.x)


def test_rows_are_checked_and_aligned():
    Z, y, w = _data(100)
    rows = ChunkedRows(da.from_array(Z, chunks=(30, 2)), da.from_array(y, chunks=17), w)
    assert rows.Z.chunks == ((30, 30, 30, 10), (5,)) and rows.y.chunks == rows.w.chunks == (rows.Z.chunks[0],)
    with pytest.raises(ValueError, match="shape \\(100,\\)"):
        ChunkedRows(da.from_array(Z, chunks=30), y[:99], w)
    with pytest.raises(ValueError, match="must be 2-D"):
        ChunkedRows(da.from_array(y, chunks=30), y, w)
    unknown = da.from_array(Z, chunks=(30, -1))
    unknown = unknown[unknown[:, 0] > -10]  # boolean indexing: chunk sizes unknown
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        ChunkedRows(unknown, y, w)
    with pytest.raises(ValueError, match="backend"):
        DaskMarginProblem(rows, HuberHingeLoss(0.5), "cuda")
