"""The Dask side of DP-wERM and DP-OWL: Dask inputs checked and prepared chunk by chunk.

:func:`~pydpowl.estimators.inputs.check_erm_inputs` and
:func:`~pydpowl.estimators.inputs.prepare_owl` hand Dask inputs (any of them a
Dask collection: :func:`~pydpowl._validation.is_chunked`) here: :func:`as_matrix_chunked` and
:func:`as_vector_chunked` give them known row chunks, and :func:`map_blocks`
maps the in-memory block check (:func:`~pydpowl.estimators.inputs.erm_block`,
:func:`~pydpowl.estimators.inputs.owl_block`: the one place of every rule) over
the chunks in one pass, one task per chunk. The counts are reduced by Dask; the
client raises the error the in-memory fit raises for the same data (same
message: argument, counts of the whole data, first position, bound) or keeps
the counts the in-memory fit reports. Everything after (the solve, the noise,
the release) is the estimators' own code; the solver sees Dask arrays and runs
each Newton pass blockwise (:mod:`pydpowl.engine.dask_problem`). This module
knows no rule: it imports nothing of the estimators.

Persisting
----------
The prepared chunks (``Z``, labels, weights: ``n (d + 2)`` doubles) are kept
in the workers' memory for the solve when they take at most half of it
(the sum of the workers' ``memory_limit``; workers without a limit count as
large enough), in the same pass that validates them; then the Newton passes
read memory. Otherwise, or without a ``distributed.Client`` (Dask's local
scheduler runs in the client's own process), every pass reads and prepares
the chunks again from their source, so data larger than the cluster's memory
can be fitted. ``dask.config.set({"pydpowl.persist": True})`` (or ``False``)
overrides the rule; the default is ``"auto"``.

Inputs may be Dask arrays, Dask DataFrames or Series (converted with their
partition lengths), or, mixed with them, numpy arrays (chunked like ``X``).
Chunks of any sizes are accepted; labels and weights are rechunked to the
row chunks of ``X``.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._validation import check_numeric_dtype, is_chunked, no_columns_message, one_d_message, raise_nonfinite
from ..engine.dask_cluster import compute, distributed_client, persist
from ..engine.dask_problem import count_pass, tree_reduce
from ..engine.preprocessing import bounds_from_data

__all__ = ["map_blocks", "as_matrix_chunked", "as_vector_chunked", "bounds_from_chunks",
           "persist_setting", "should_persist"]

#: persist the prepared chunks when they take at most this share of the workers' memory
_PERSIST_SHARE = 0.5


# --------------------------------------------------------------------------- the block checks, mapped


def map_blocks(block: Callable[..., Tuple[Tuple[Any, ...], Dict[str, Any]]], arrays: Sequence[Any], *,
               out_columns: Sequence[Optional[int]], merge: Callable[..., Dict[str, Any]], **settings: Any):
    """``block(*chunks, offset=..., **settings) -> (arrays, counts)`` on every row chunk, in one pass.

    ``arrays`` are Dask arrays chunked alike along the rows (None: the block
    receives None); ``out_columns`` says which of the block's output arrays
    to keep (the first ``len(out_columns)``) and their columns (None: 1-D).
    Returns the kept outputs as float64 Dask arrays and the counts reduced with
    ``merge`` (computed; the outputs persisted in the same pass when the rule of
    the module docstring says so).
    """
    rows = next(a for a in arrays if a is not None).chunks[0]
    keep = len(out_columns)
    outs = [_delayed(_apply, keep + 1)(block, keep, off, settings, *chunks)
            for *chunks, off in zip(*_blocks(*arrays), _offsets(rows))]
    kept = [_concatenate([o[j] for o in outs], rows, cols) for j, cols in enumerate(out_columns)]
    counts = tree_reduce([o[keep] for o in outs], merge)
    count_pass("validation", len(rows))
    if should_persist(sum(a.nbytes for a in kept)):
        *kept, counts = persist(*kept, counts, label="the validation pass")
    (counts,) = compute(counts, label="the validation pass")
    return tuple(kept), counts


def _apply(block, keep, offset, settings, *chunks):
    arrays, counts = block(*chunks, offset=offset, **settings)
    return (*arrays[:keep], counts)


def _concatenate(parts, rows, cols: Optional[int]):
    import dask.array as da

    return da.concatenate([da.from_delayed(part, shape=(k,) if cols is None else (k, cols), dtype=np.float64)
                           for part, k in zip(parts, rows)])


def bounds_from_chunks(X):
    """Column minima and maxima of X in one pass, through :func:`bounds_from_data` (which warns):
    the extremes of the column extremes are the column extremes."""
    import dask.array as da

    count_pass("validation", X.numblocks[0])
    nonfinite = ~da.isfinite(X)
    lo, hi, bad, n_nan = compute(X.min(axis=0), X.max(axis=0), nonfinite.sum(), da.isnan(X).sum(),
                                 label="the pass finding the column ranges")
    if bad:
        rows, cols = compute(da.flatnonzero(nonfinite.any(axis=1))[:6], da.flatnonzero(nonfinite.any(axis=0)),
                             label="the pass locating non-finite values")
        counts = {"X_nan": int(n_nan), "X_inf": int(bad) - int(n_nan),
                  "nonfinite_rows_X": tuple(int(i) for i in rows), "nonfinite_cols_X": tuple(int(j) for j in cols)}
        raise_nonfinite("X", counts, X.size)
    return bounds_from_data(np.vstack([lo, hi]))


# --------------------------------------------------------------------------- conversion


def _dask_array(name: str, value: Any):
    """A Dask array from a Dask array, DataFrame or Series (with its partition lengths) or an in-memory array."""
    import dask.array as da

    if hasattr(value, "__dask_graph__") and hasattr(value, "to_dask_array"):  # Dask DataFrame or Series
        count_pass("validation", value.npartitions)
        (lengths,) = compute(value.map_partitions(len), label=f"the pass counting the rows of {name}")
        value = value.to_dask_array(lengths=tuple(int(k) for k in lengths))
    elif not hasattr(value, "__dask_graph__"):
        return None
    if not isinstance(value, da.Array):
        raise TypeError(f"{name} must be a Dask array, DataFrame or Series, got {type(value).__name__}.")
    return value


def _known_chunks(arr):
    """``arr`` with known chunk sizes (one pass when they are unknown)."""
    import dask.array as da
    from dask import delayed

    if not any(np.isnan(c) for chunks in arr.chunks for c in chunks):
        return arr
    count_pass("validation", arr.numblocks[0])
    blocks = arr.to_delayed()
    shapes = compute(*[delayed(np.shape, pure=True)(b) for b in blocks.ravel()], label="the pass sizing the chunks")
    shapes = np.array(shapes, dtype=int).reshape(blocks.shape + (arr.ndim,))

    def nest(index):
        if len(index) == arr.ndim:
            return da.from_delayed(blocks[index], shape=tuple(shapes[index]), dtype=arr.dtype)
        return [nest(index + (k,)) for k in range(blocks.shape[len(index)])]

    return da.block(nest(()))


def as_matrix_chunked(name: str, value: Any, *others: Any):
    """``value`` as a Dask array with known row chunks and one column chunk; an in-memory ``value``
    is chunked like the first Dask collection among ``others``."""
    import dask.array as da

    X = _dask_array(name, value)
    if X is None:
        from .._validation import check_array

        like = next(_dask_array("input", o) for o in others if is_chunked(o))
        like = _known_chunks(like)
        return da.from_array(check_array(name, value), chunks=(like.chunks[0], -1))
    check_numeric_dtype(name, X.dtype)
    if X.ndim == 1:
        X = _known_chunks(X)
        raise ValueError(one_d_message(name, X.shape[0]))
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {X.shape}.")
    X = _known_chunks(X)
    if X.shape[0] < 1:
        raise ValueError(f"{name} must have at least 1 row(s), got {X.shape[0]}.")
    if X.shape[1] < 1:
        raise ValueError(no_columns_message(name, X.shape))
    return X.rechunk({1: -1}) if X.numblocks[1] > 1 else X


def as_vector_chunked(name: str, value: Any, n: int, rows: Tuple[int, ...], length_of: Optional[str] = None):
    import dask.array as da

    v = _dask_array(name, value)
    if v is None:  # an in-memory array beside Dask ones: chunked like X
        from .._validation import check_vector

        return da.from_array(check_vector(name, value, length=n, length_of=length_of), chunks=(rows,))
    check_numeric_dtype(name, v.dtype)
    if v.ndim == 2 and 1 in v.shape:
        v = v.ravel()
    if v.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {v.shape}.")
    v = _known_chunks(v)
    if v.shape[0] != n:
        raise ValueError(f"{name} must have length {n}{f' ({length_of})' if length_of else ''}, got length "
                         f"{v.shape[0]}.")
    return v if v.chunks[0] == rows else v.rechunk((rows,))


def _blocks(*arrays: Any) -> List[List[Any]]:
    """The row chunks of each array (None: a list of None), as Delayed objects of one jointly optimised
    graph: a task shared by several arrays (e.g. parsing a CSV chunk) then runs once per pass."""
    import dask

    present = [a for a in arrays if a is not None]
    optimised = iter(dask.optimize(*present))
    n_chunks = present[0].numblocks[0]
    out = []
    for a in arrays:
        if a is None:
            out.append([None] * n_chunks)
        else:
            out.append(list(next(optimised).to_delayed(optimize_graph=False).ravel()))
    return out


def _offsets(rows: Tuple[int, ...]) -> List[int]:
    return [int(o) for o in np.concatenate([[0], np.cumsum(rows)[:-1]])]


def _delayed(fn, nout: int):
    from dask import delayed

    return delayed(fn, nout=nout, pure=False)


def persist_setting() -> Any:
    """``dask.config.get("pydpowl.persist")``: ``"auto"`` (default), True or False."""
    import dask

    value = dask.config.get("pydpowl.persist", "auto")
    if value not in ("auto", True, False):
        raise ValueError(f"dask config 'pydpowl.persist' must be 'auto', True or False, got {value!r}.")
    return value


def should_persist(nbytes: int) -> bool:
    """Whether ``nbytes`` of chunks are kept in the workers' memory (the rule of the module docstring)."""
    setting = persist_setting()
    if setting != "auto":
        return bool(setting)
    client = distributed_client()
    if client is None:
        return False
    limits = [w.get("memory_limit") or 0 for w in client.scheduler_info()["workers"].values()]
    if not limits:
        return False
    if any(limit == 0 for limit in limits):  # a worker without a memory limit
        return True
    return nbytes <= _PERSIST_SHARE * sum(limits)
