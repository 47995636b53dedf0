"""DP-wERM and DP-OWL on Dask arrays: the inputs checked and prepared chunk by chunk.

:meth:`DPWeightedERM.fit <pydpowl.estimators.werm.DPWeightedERM.fit>` and
:func:`~pydpowl.estimators.owl.prepare_owl` (which :meth:`DPOWL.fit
<pydpowl.estimators.owl.DPOWL.fit>` calls) hand their inputs here when any of
them is a Dask collection (:func:`is_chunked`); everything after
(the solve, the noise, the release) is the estimators' own code. The solver
sees Dask arrays and runs each Newton pass blockwise
(:mod:`pydpowl.engine.dask_problem`).

One pass over the data, one task per chunk, validates and prepares it with
the in-memory code applied to the chunk: counts of non-finite entries,
treatments outside {-1, 1} (DP-OWL) or the distinct labels of ``y`` (DP-wERM:
any two numbers), rows (clipped to norm 1 with ``clip_rows=True``) or weights
outside their bounds, the arms present, and
(DP-OWL) :func:`~pydpowl.estimators.propensity.resolve_propensity`,
:func:`~pydpowl.estimators.owl.owl_weights` and
:meth:`FeatureScaler.transform_checked
<pydpowl.engine.preprocessing.FeatureScaler.transform_checked>` from the
public bounds, with the clip counts. The counts are reduced by Dask; the
client raises the error the in-memory fit raises for the same data (same
message: argument, counts of the whole data, first position, bound) or keeps
the counts the in-memory fit reports.

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

import numbers
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._validation import (binary_target_message, check_numeric_dtype, column_labels, columns_by_name,
                           feature_names_of, nonfinite_message, nonnegative_message,
                           no_columns_message, one_arm_message, one_d_message, treatment_counts, treatment_error)
from ..engine.dask_cluster import compute, distributed_client, persist
from ..engine.dask_problem import count_pass, tree_reduce
from ..engine.preprocessing import FeatureScaler, bounds_from_data

__all__ = ["is_chunked", "check_erm_inputs_chunked", "prepare_owl_chunked", "persist_setting", "should_persist"]

#: persist the prepared chunks when they take at most this share of the workers' memory
_PERSIST_SHARE = 0.5


def is_chunked(*values: Any) -> bool:
    """True when any value is a Dask collection (``__dask_graph__``; Dask is not imported)."""
    return any(hasattr(v, "__dask_graph__") for v in values)


# --------------------------------------------------------------------------- DP-wERM


def check_erm_inputs_chunked(X: Any, y: Any, sample_weight: Any, weights_upper_bound: float, *,
                             clip_rows: bool = False):
    """:func:`~pydpowl.estimators.werm.check_erm_inputs` for Dask inputs.

    Labels may be any two numbers (the classes are found in the validation
    pass; labels other than -1 and 1 are coded lazily, inside the solver's
    passes).

    Returns
    -------
    ERMData
        ``X``, ``labels`` and ``weights`` are float64 Dask arrays chunked alike
        along the rows (persisted when the rule of the module docstring says so).
    """
    from .werm import _NORM_SLACK, ERMData, unit_weights_message

    X = _as_matrix("X", X, y, sample_weight)
    n, rows = X.shape[0], X.chunks[0]
    y = _as_vector("y", y, n, rows)
    label_dtype = y.dtype
    if sample_weight is None:
        if weights_upper_bound < 1.0:
            raise ValueError(unit_weights_message(weights_upper_bound))
        w = None
    else:
        w = _as_vector("sample_weight", sample_weight, n, rows)
    blocks = _blocks(X, y, w)
    outs = [_delayed(_erm_block, 4)(xb, yb, wb, off, weights_upper_bound, _NORM_SLACK, clip_rows)
            for xb, yb, wb, off in zip(*blocks, _offsets(rows))]
    X, y, w, stats = _assemble(outs, rows, X.shape[1])
    X, y, w, stats = _materialise(X, y, w, stats)
    _raise_erm(stats, n, X.shape[1], weights_upper_bound, sample_weight is None)
    classes = np.array(stats["values_y"], dtype=np.float64).astype(label_dtype)
    if not (classes[0] == -1 and classes[1] == 1):  # other labels: coded -1/+1 lazily (no further pass)
        y = (y == float(classes[1])) * 2.0 - 1.0
    return ERMData(X=X, labels=y, weights=w, classes=classes, n_clipped_rows=stats["rows_clipped"])


def _erm_block(X, y, w, offset, w_max, slack, clip_rows):
    """One chunk of DP-wERM data: counts for the checks, and the float64 arrays (rows clipped when asked)."""
    from .werm import clip_row_norms, row_norms

    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).ravel()
    w = np.ones(X.shape[0]) if w is None else np.asarray(w, dtype=np.float64).ravel()
    s = _finite_counts("X", X, offset)
    s.update(_finite_counts("y", y, offset))
    s["values_y"] = _distinct(y[np.isfinite(y)])
    s["rows_clipped"] = 0
    if clip_rows and not (s["X_nan"] or s["X_inf"]):
        X, s["rows_clipped"] = clip_row_norms(X)
    with np.errstate(invalid="ignore", over="ignore"):
        too_long = row_norms(X) > 1.0 + slack
    s["rows_too_long"] = int(np.count_nonzero(too_long))
    s["first_row_too_long"] = _first(too_long, offset)
    s.update(_finite_counts("sample_weight", w, offset))
    s["sample_weight_negative"] = int(np.count_nonzero(w < 0))
    s["sample_weight_over"] = int(np.count_nonzero(w > w_max))
    return X, y, w, s


def _distinct(values: np.ndarray) -> Tuple[float, ...]:
    """Up to 3 distinct values, sorted (3 means "more than 2")."""
    return tuple(float(v) for v in np.unique(values)[:3])


def _raise_erm(s: Dict[str, Any], n: int, d: int, w_max: float, unit_weights: bool) -> None:
    from .werm import row_norm_message, weight_range_message

    _raise_finite("X", s, n * d)
    _raise_finite("y", s, n)
    if len(s["values_y"]) != 2:
        raise ValueError(binary_target_message("y", len(s["values_y"]), continuous=len(s["values_y"]) == 3 and any(
            v != np.floor(v) for v in s["values_y"])))
    if s["rows_too_long"]:
        raise ValueError(row_norm_message(s["rows_too_long"], n, s["first_row_too_long"]))
    if unit_weights:
        return
    _raise_finite("sample_weight", s, n)
    if s["sample_weight_negative"]:
        raise ValueError(weight_range_message(w_max, s["sample_weight_negative"], n, negative=True))
    if s["sample_weight_over"]:
        raise ValueError(weight_range_message(w_max, s["sample_weight_over"], n, negative=False))


# --------------------------------------------------------------------------- DP-OWL


def prepare_owl_chunked(X: Any, treatment: Any, benefit: Any, propensity: Any = 0.5, *,
                        weights_upper_bound: float, feature_bounds: Any, fit_intercept: bool,
                        weight_sensitivity: Any = None):
    """:func:`~pydpowl.estimators.owl.prepare_owl` for Dask inputs (it calls this one).

    ``weights_upper_bound`` and ``fit_intercept`` arrive checked.

    Returns
    -------
    OWLProblem
        ``Z``, ``labels`` and ``weights`` are Dask arrays chunked alike
        (persisted when the rule of the module docstring says so); C is the
        weight sensitivity of the propensity specification for the total n
        (:func:`~pydpowl.estimators.propensity.propensity_constants`, on the
        client); the clip counts are summed over all chunks.
    """
    from .owl import OWLProblem
    from .propensity import propensity_constants

    w_max = weights_upper_bound
    names = feature_names_of(X)  # a Dask DataFrame's columns: bounds given by name are matched to them
    X = _as_matrix("X", X, treatment, benefit, propensity)
    (n, p), rows = X.shape, X.chunks[0]
    bounds = feature_bounds
    if isinstance(bounds, str) and bounds == "data":
        bounds = _bounds_from_chunks(X)  # emits PrivacyLeakWarning: the guarantee is void
    scaler = FeatureScaler.from_bounds(bounds, p, fit_intercept, columns=names)
    A = _as_vector("treatment", treatment, n, rows)
    B = _as_vector("benefit", benefit, n, rows)
    array = is_chunked(propensity) or _is_array(propensity)
    # C and the benefit bound it relies on: on the client, for the total n, with the in-memory rules
    C, c_b = propensity_constants(np.empty(0) if array else propensity, n,
                                  weight_sensitivity=weight_sensitivity, weights_upper_bound=w_max)
    if array:
        P, spec = _as_vector("propensity", propensity, n, rows), None
    else:
        P, spec = None, propensity
    columns = _propensity_columns(spec, names, p)  # a model fitted on named columns reads them by name
    outs = [_delayed(_owl_block, 4)(xb, ab, bb, pb, off, spec, scaler, w_max, c_b, columns)
            for xb, ab, bb, pb, off in zip(*_blocks(X, A, B, P), _offsets(rows))]
    Z, A, w, stats = _assemble(outs, rows, scaler.n_coefficients)
    Z, A, w, stats = _materialise(Z, A, w, stats)
    _raise_owl(stats, n, p, spec is None)
    return OWLProblem(Z=Z, labels=A, weights=w, weight_sensitivity=float(C), weights_upper_bound=w_max,
                      scaler=scaler, n_clipped_weights=stats["clipped_weights"],
                      n_clipped_features=stats["clipped_features"], n_clipped_logits=stats["clipped_logits"],
                      n_clipped_benefits=stats["clipped_benefits"])


def _propensity_columns(spec: Any, names: Optional[Sequence[str]], p: int):
    """``(fitted names, positions in X)`` of the columns a propensity model fitted on named columns reads, matched
    by name once on the client (an X without names: in order, with the warning of
    :func:`~pydpowl._validation.columns_by_name`); None for any other propensity."""
    fitted = getattr(spec, "feature_names_in_", None)
    if fitted is None:
        return None
    import pandas as pd

    probe = pd.DataFrame(columns=list(names)) if names is not None else np.empty((0, p))
    columns_by_name(probe, fitted, owner=type(spec).__name__)  # refuses a missing column; warns for an array
    fitted = [str(c) for c in fitted]
    return fitted, [list(names).index(c) for c in fitted] if names is not None else list(range(len(fitted)))


def _owl_block(X, A, B, P, offset, spec, scaler, w_max, benefit_bound, columns=None):
    """One chunk of DP-OWL data: counts for the checks; if the chunk passes them, the in-memory
    preparation of the chunk (propensities, clipped weights, clipped and scaled rows). ``columns``: what
    :func:`_propensity_columns` found (the propensity model reads a frame of those columns)."""
    from .owl import clip_benefits, owl_weights
    from .propensity import resolve_propensity
    from ..value import received_propensity_outside

    X = np.asarray(X, dtype=np.float64)
    A = np.asarray(A, dtype=np.float64).ravel()
    B = np.asarray(B, dtype=np.float64).ravel()
    s = _finite_counts("X", X, offset)
    s.update(_finite_counts("treatment", A, offset))
    s.update(treatment_counts(A, offset))  # the in-memory rule: {-1, 1} or {0, 1}, judged on the sums
    A = np.where(A == 0.0, -1.0, A)  # 0 codes -1; a mix of both codings is refused on the client
    s.update(_finite_counts("benefit", B, offset))
    negative = B < 0
    s["benefit_negative"] = int(np.count_nonzero(negative))
    s["first_benefit_negative"] = _first(negative, offset)
    if P is not None:
        P = np.asarray(P, dtype=np.float64).ravel()
        s.update(_finite_counts("propensity", P, offset))
        outside = received_propensity_outside(P)
        s["propensity_outside"] = int(np.count_nonzero(outside))
        s["first_propensity_outside"] = _first(outside, offset)
    k, d = X.shape[0], scaler.n_coefficients
    if _has_problem(s):
        nan = np.full(k, np.nan)  # the client raises on the counts; nothing of this chunk is used
        s.update(clipped_weights=0, clipped_features=0, clipped_logits=0, clipped_benefits=0)
        return np.full((k, d), np.nan), A, nan, s
    # the chunk's probabilities (C was resolved on the client for the total n: any statement passes here)
    Xp = X
    if columns is not None:
        import pandas as pd

        Xp = pd.DataFrame(X[:, columns[1]], columns=columns[0])
    resolved = resolve_propensity(spec if P is None else P, Xp, A, weight_sensitivity=None if P is None else 0.0)
    B, n_benefits = clip_benefits(B, benefit_bound)  # C relies on B <= C_B: clipped by design, counted
    w, n_weights = owl_weights(B, resolved.probability, w_max)
    Z, n_features = scaler.transform_checked(X)
    s.update(clipped_weights=n_weights, clipped_features=n_features, clipped_logits=resolved.n_clipped_logits,
             clipped_benefits=n_benefits)
    return Z, A, w, s


def _raise_owl(s: Dict[str, Any], n: int, p: int, array_propensity: bool) -> None:
    from .owl import BENEFIT_HINT, BENEFIT_WHY
    from ..value import received_propensity_error

    _raise_finite("X", s, n * p)
    _raise_finite("treatment", s, n)
    message = treatment_error(s, n)
    if message:
        raise ValueError(message)
    if s["treatment_plus"] == 0 or s["treatment_minus"] + s["treatment_zero"] == 0:
        raise ValueError(one_arm_message("treatment", n, 1 if s["treatment_plus"] else -1))
    _raise_finite("benefit", s, n)
    if s["benefit_negative"]:
        raise ValueError(nonnegative_message("benefit", s["benefit_negative"], n, s["first_benefit_negative"],
                                             why=BENEFIT_WHY, hint=BENEFIT_HINT))
    if array_propensity:
        _raise_finite("propensity", s, n)
        if s["propensity_outside"]:
            raise received_propensity_error(s["propensity_outside"], n, s["first_propensity_outside"])


def _bounds_from_chunks(X):
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
        _raise_finite("X", counts, X.size)
    return bounds_from_data(np.vstack([lo, hi]))


# --------------------------------------------------------------------------- conversion


def _is_array(value: Any) -> bool:
    return not isinstance(value, (numbers.Real, str, bytes)) and hasattr(value, "__len__") and not hasattr(
        value, "probability_of")


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


def _as_matrix(name: str, value: Any, *others: Any):
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


def _as_vector(name: str, value: Any, n: int, rows: Tuple[int, ...]):
    import dask.array as da

    v = _dask_array(name, value)
    if v is None:  # an in-memory array beside Dask ones: chunked like X
        from .._validation import check_vector

        return da.from_array(check_vector(name, value, length=n), chunks=(rows,))
    check_numeric_dtype(name, v.dtype)
    if v.ndim == 2 and 1 in v.shape:
        v = v.ravel()
    if v.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {v.shape}.")
    v = _known_chunks(v)
    if v.shape[0] != n:
        raise ValueError(f"{name} must have length {n}, got length {v.shape[0]}.")
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


def _assemble(outs, rows, d: int):
    """Dask arrays of the prepared chunks and the reduced counts (all still lazy)."""
    import dask.array as da

    Z = da.concatenate([da.from_delayed(o[0], shape=(k, d), dtype=np.float64) for o, k in zip(outs, rows)])
    y = da.concatenate([da.from_delayed(o[1], shape=(k,), dtype=np.float64) for o, k in zip(outs, rows)])
    w = da.concatenate([da.from_delayed(o[2], shape=(k,), dtype=np.float64) for o, k in zip(outs, rows)])
    return Z, y, w, tree_reduce([o[3] for o in outs], _merge_counts)


def _materialise(Z, y, w, stats):
    """Compute the counts; persist the prepared chunks in the same pass when :func:`persist_setting` says so."""
    count_pass("validation", Z.numblocks[0])
    if should_persist(Z.nbytes + y.nbytes + w.nbytes):
        Z, y, w, stats = persist(Z, y, w, stats, label="the validation pass")
    (stats,) = compute(stats, label="the validation pass")
    return Z, y, w, stats


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


# --------------------------------------------------------------------------- per-chunk counts


def _finite_counts(name: str, arr: np.ndarray, offset: int) -> Dict[str, Any]:
    """Non-finite counts, the first 6 global row positions holding them and (2-D) the columns."""
    bad = ~np.isfinite(arr)
    n_nan = int(np.count_nonzero(np.isnan(arr)))
    out: Dict[str, Any] = {f"{name}_nan": n_nan, f"{name}_inf": int(np.count_nonzero(bad)) - n_nan}
    rows = bad.any(axis=1) if arr.ndim == 2 else bad
    out[f"nonfinite_rows_{name}"] = tuple(int(i) + offset for i in np.flatnonzero(rows)[:6])
    if arr.ndim == 2:
        out[f"nonfinite_cols_{name}"] = tuple(int(j) for j in np.flatnonzero(bad.any(axis=0)))
    return out


#: endings of the count keys that make a chunk (and the data) invalid
_PROBLEMS = ("_nan", "_inf", "_bad", "_negative", "_outside", "_too_long", "_over")


def _has_problem(s: Dict[str, Any]) -> bool:
    return any(v for key, v in s.items() if not key.startswith("first_") and key.endswith(_PROBLEMS))


def _first(mask: np.ndarray, offset: int) -> int:
    """Global position of the first True, or -1."""
    hits = np.flatnonzero(mask)
    return int(hits[0]) + offset if hits.size else -1


def _merge_counts(*parts: Dict[str, Any]) -> Dict[str, Any]:
    """Sum the counts and keep the smallest first positions (and the first rows and columns of non-finite values)."""
    out = dict(parts[0])
    for part in parts[1:]:
        for key, value in part.items():
            if key.startswith("first_"):
                out[key] = value if out[key] < 0 else (out[key] if value < 0 else min(out[key], value))
            elif key.startswith("nonfinite_rows_"):  # the first 6 positions over both parts
                out[key] = tuple(sorted(out[key] + value)[:6])
            elif key.startswith("nonfinite_cols_"):
                out[key] = tuple(sorted(set(out[key]) | set(value)))
            elif key.startswith("values_"):  # up to 3 distinct values (3: "more than 2")
                out[key] = tuple(sorted(set(out[key]) | set(value)))[:3]
            else:
                out[key] += value
    return out


def _raise_finite(name: str, s: Dict[str, Any], size: int, columns: Optional[Sequence[str]] = None) -> None:
    n_nan, n_inf = s.get(f"{name}_nan", 0), s.get(f"{name}_inf", 0)
    if n_nan or n_inf:
        cols = s.get(f"nonfinite_cols_{name}")
        labels = None if cols is None else column_labels(cols, columns, 0)
        rows = s.get(f"nonfinite_rows_{name}", ())
        raise ValueError(nonfinite_message(name, n_nan, n_inf, size, rows=rows, columns=labels))
