"""The weighted ERM data term on chunked (Dask) arrays: each solver call is one blockwise pass.

:func:`pydpowl.engine.solver.solve_weighted_erm` accepts Dask arrays ``Z``
(n, d), ``y`` and ``w`` (n,) chunked along the rows. It then reaches the data
through :class:`ChunkedRows` and :class:`DaskMarginProblem`, which implement
the problem protocol of :mod:`pydpowl.engine.problem` so that the one Newton
iteration of :func:`~pydpowl.engine.solver.newton` runs unchanged:

``evaluate(theta)``
    one task per chunk builds a :class:`~pydpowl.engine.problem.MarginProblem`
    on the chunk (the same numpy or numba row code as an in-memory fit, and the
    loss's one definition) and returns its partial sums of ``(L, gradient,
    Hessian)``, ``1 + d + d^2`` numbers; Dask adds them up in a tree of tasks
    on the workers, and the client receives the total only.
``line(theta, p)(t)``
    the same for ``(dL/dt, d2L/dt2)`` along the search direction: two numbers
    per chunk.
``ChunkedRows.strided(step)``
    the evenly strided subsample of the solver's warm start (about 20,000
    rows, the same rows an in-memory fit takes).

Each of these is one pass over the data (one task per chunk). Nothing of
length ``n`` reaches the client; the per-row work arrays live inside the tasks
and are gone when a task ends. Partial sums are added in a different order
than in one sweep, so the iterates agree with an in-memory solve up to
rounding, and the certificate (``||grad F|| <= tol``) is checked on the
reduced gradient exactly as in memory.

The work runs wherever Dask runs the graph: the ``distributed.Client`` in
use (a ``LocalCluster`` or a scheduler address), or Dask's local scheduler
when there is none. On a client every pass is watched by
:func:`pydpowl.engine.dask_cluster.compute` (lost workers, a worker that cannot
import pydpowl, progress lines). Whether the arrays are held in the workers' memory
between passes (``persist``) is the caller's choice; the estimators decide it
(see :mod:`pydpowl.estimators.dask_inputs`).

:func:`track_passes` counts the passes of the fits run inside it.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from dataclasses import dataclass
from typing import Any, Iterator, List, Optional, Tuple

import numpy as np
from numpy.typing import NDArray

from .dask_cluster import compute
from .losses import MarginLoss
from .problem import LineDerivatives, MarginProblem

__all__ = ["ChunkedRows", "DaskMarginProblem", "PassLog", "track_passes", "count_pass", "tree_reduce"]

#: partial results combined per task of the reduction tree
_FAN_IN = 8


@dataclass
class PassLog:
    """Passes over the data made by the fits inside :func:`track_passes`, by kind.

    Attributes
    ----------
    validation : int
        Passes that check and prepare the data (per-chunk counts, scaling, weights).
    subsample : int
        Passes that take the strided subsample of the warm start.
    evaluations : int
        Evaluations of ``(L, gradient, Hessian)``.
    line_search : int
        Evaluations of the line-search derivatives.
    chunks : int
        Number of chunks of the last problem (tasks per pass).
    """

    validation: int = 0
    subsample: int = 0
    evaluations: int = 0
    line_search: int = 0
    chunks: int = 0

    @property
    def total(self) -> int:
        """All passes."""
        return self.validation + self.subsample + self.evaluations + self.line_search


_LOG: contextvars.ContextVar[Optional[PassLog]] = contextvars.ContextVar("pydpowl_dask_passes", default=None)


@contextlib.contextmanager
def track_passes() -> Iterator[PassLog]:
    """Count the passes over chunked data made inside the block.

    Examples
    --------
    >>> with track_passes() as log:                      # doctest: +SKIP
    ...     DPOWL(...).fit(X, A, B)                      # X, A, B Dask arrays
    >>> log.total, log.evaluations                       # doctest: +SKIP
    """
    log = PassLog()
    token = _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(token)


def count_pass(kind: str, chunks: int = 0) -> None:
    """Record one pass of ``kind`` (a :class:`PassLog` field) in the active :func:`track_passes`, if any."""
    log = _LOG.get()
    if log is not None:
        setattr(log, kind, getattr(log, kind) + 1)
        if chunks:
            log.chunks = chunks


def tree_reduce(parts: List[Any], combine) -> Any:
    """Combine Delayed partial results ``_FAN_IN`` at a time in a tree of tasks (in chunk order), so
    that the workers do the adding up and only the last result goes to the client."""
    from dask import delayed

    if not parts:
        raise ValueError("tree_reduce needs at least one part.")
    while len(parts) > 1:
        parts = [delayed(combine, pure=False)(*parts[i:i + _FAN_IN]) for i in range(0, len(parts), _FAN_IN)]
    return parts[0]


def _add(*arrays: NDArray[np.float64]) -> NDArray[np.float64]:
    return functools.reduce(np.add, arrays)


class ChunkedRows:
    """The data of a solve as Dask arrays chunked along the rows (see the module docstring).

    Parameters
    ----------
    Z : dask.array.Array of shape (n, d)
        Rows in the scaled space; chunk sizes must be known. Column chunks are
        merged into one.
    y, w : dask.array.Array of shape (n,)
        Labels and weights; rechunked to ``Z``'s row chunks when they differ.
    """

    def __init__(self, Z: Any, y: Any, w: Any) -> None:
        import dask.array as da

        Z = da.asarray(Z)
        if Z.ndim != 2:
            raise ValueError(f"Z must be 2-D (n_samples, n_features), got shape {Z.shape}.")
        if any(np.isnan(c) for c in Z.chunks[0]):
            raise ValueError("Z has unknown chunk sizes; call Z.compute_chunk_sizes() (one pass) first.")
        if len(Z.chunks[1]) > 1:
            Z = Z.rechunk({1: -1})
        self.n, self.d = int(Z.shape[0]), int(Z.shape[1])
        rows = Z.chunks[0]
        vectors = []
        for name, v in (("y", y), ("w", w)):
            v = da.asarray(v)
            if v.shape != (self.n,):
                raise ValueError(f"{name} must have shape ({self.n},) like the rows of Z, got {v.shape}.")
            vectors.append(v if v.chunks[0] == rows else v.rechunk((rows,)))
        from dask.base import collections_to_dsk

        # optimised together, so that chunks of Z, y and w computed by one task (a persisted chunk, or the
        # preparation of a chunk read from its source) stay one task in every pass. Not dask.optimize: its
        # unpack_collections keeps its arguments in a reference cycle (a recursive closure), which held the
        # persisted chunks on the workers after the fit until the garbage collector ran (a flaky test under load)
        arrays = (Z.astype(np.float64), vectors[0].astype(np.float64), vectors[1].astype(np.float64))
        graph = collections_to_dsk(arrays, optimize_graph=True)
        self.Z, self.y, self.w = (rebuild(graph, *args) for rebuild, args in
                                  (a.__dask_postpersist__() for a in arrays))
        self._blocks = list(zip(*(a.to_delayed(optimize_graph=False).ravel() for a in (self.Z, self.y, self.w))))
        self.n_chunks = len(self._blocks)

    def strided(self, step: int) -> Tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Rows ``0, step, 2 step, ...`` (as ``Z[::step]``) in memory: one pass, a few thousand rows."""
        count_pass("subsample", self.n_chunks)
        Zs, ys, ws = compute(self.Z[::step], self.y[::step], self.w[::step], label="the warm start's subsample pass")
        return np.ascontiguousarray(Zs), np.ascontiguousarray(ys), np.ascontiguousarray(ws)

    def problem(self, loss: MarginLoss, backend: str) -> "DaskMarginProblem":
        """The data term of ``loss`` with the per-chunk row code of ``backend`` ("numpy" or "numba")."""
        return DaskMarginProblem(self, loss, backend)


class DaskMarginProblem:
    """``L(theta) = sum_i w_i l(y_i z_i'theta)`` over the chunks of a :class:`ChunkedRows`.

    Implements the problem protocol of :mod:`pydpowl.engine.problem`; each
    call is one pass (one task per chunk plus a reduction tree).

    Parameters
    ----------
    rows : ChunkedRows
    loss : MarginLoss
    backend : {"numpy", "numba"}
        Row code inside each chunk (that of :class:`~pydpowl.engine.problem.MarginProblem`).
    """

    def __init__(self, rows: ChunkedRows, loss: MarginLoss, backend: str) -> None:
        if backend not in ("numpy", "numba"):
            raise ValueError(f"DaskMarginProblem backend must be 'numpy' or 'numba', got backend={backend!r}.")
        self._rows: Optional[ChunkedRows] = rows
        self.loss = loss
        self.n, self.d = rows.n, rows.d
        self.chunk_backend = backend
        self.backend = f"dask/{backend}"

    def _blocks(self):
        if self._rows is None:
            raise RuntimeError("this DaskMarginProblem was released.")
        return self._rows._blocks

    def evaluate(self, theta: NDArray[np.float64]) -> Tuple[float, NDArray[np.float64], NDArray[np.float64]]:
        """``(L, grad L, Hessian of L)`` at ``theta``: per-chunk partial sums, reduced by Dask."""
        from dask import delayed

        theta = np.array(theta, dtype=np.float64)
        blocks = self._blocks()
        count_pass("evaluations", len(blocks))
        parts = [delayed(_evaluate_block, pure=False)(Zb, yb, wb, theta, self.loss, self.chunk_backend)
                 for Zb, yb, wb in blocks]
        (total,) = compute(tree_reduce(parts, _add), label="an evaluation pass")
        d = self.d
        return float(total[0]), total[1:d + 1].copy(), total[d + 1:].reshape(d, d).copy()

    def line(self, theta: NDArray[np.float64], p: NDArray[np.float64]) -> LineDerivatives:
        """``t -> (dL/dt, d2L/dt2)`` of ``t -> L(theta + t p)``; each call is one pass."""
        theta = np.array(theta, dtype=np.float64)
        p = np.array(p, dtype=np.float64)

        def derivatives(t: float) -> Tuple[float, float]:
            from dask import delayed

            blocks = self._blocks()
            count_pass("line_search", len(blocks))
            parts = [delayed(_line_block, pure=False)(Zb, yb, wb, theta, p, float(t), self.loss, self.chunk_backend)
                     for Zb, yb, wb in blocks]
            (total,) = compute(tree_reduce(parts, _add), label="a line-search pass")
            return float(total[0]), float(total[1])

        return derivatives

    def release(self) -> None:
        """Drop the reference to the data (persisted chunks are freed once nothing else holds them)."""
        self._rows = None


# --------------------------------------------------------------------------- per-chunk tasks (run on workers)


def _chunk_problem(Z, y, w, loss, backend) -> MarginProblem:
    # writable float64 C arrays (a read-only memory map would make numba compile another variant)
    Z, y, w = (np.require(a, np.float64, ["C", "W"]) for a in (Z, y, w))
    return MarginProblem(Z, y, w, loss, backend=backend)


def _evaluate_block(Z, y, w, theta, loss, backend) -> NDArray[np.float64]:
    """``[L, gradient, Hessian.ravel()]`` of one chunk, by the in-memory problem on that chunk."""
    d = Z.shape[1]
    out = np.zeros(1 + d + d * d)
    if Z.shape[0]:
        problem = _chunk_problem(Z, y, w, loss, backend)
        try:
            total, grad, hess = problem.evaluate(theta)
        finally:
            problem.release()
        out[0], out[1:d + 1], out[d + 1:] = total, grad, hess.ravel()
    return out


def _line_block(Z, y, w, theta, p, t, loss, backend) -> NDArray[np.float64]:
    """``[dL/dt, d2L/dt2]`` of one chunk at ``t``, by the in-memory problem on that chunk."""
    out = np.zeros(2)
    if Z.shape[0]:
        problem = _chunk_problem(Z, y, w, loss, backend)
        try:
            out[:] = problem.line(theta, p)(t)
        finally:
            problem.release()
    return out
