"""Input checks shared by every public entry point.

Messages name the argument, the allowed range in interval notation and what was
received. For private data they report counts and positions, never values.

The R front end calls these checks with R's argument names (``eps``,
``weights.upper.bound``, ...) so that its users read the names they typed;
``index_base=1`` makes the positions in messages count from 1, as R does
(the default, 0, is Python's).

A caller that passes its arguments on to an estimator (the R front end's
``dpowl()``) does not restate the estimator's checks: it runs the estimator
inside :func:`caller_words`, and every check here then names the arguments
as the caller does (``X`` -> ``x``, ``feature_bounds`` -> ``bounds$lower`` and
``bounds$upper``) and counts positions from the caller's base. An explicit
``index_base`` argument still wins.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "check_positive",
    "is_chunked",
    "check_epsilon",
    "check_probability",
    "check_int",
    "check_bool",
    "check_array",
    "as_matrix",
    "as_vector",
    "as_target",
    "finite_counts",
    "raise_nonfinite",
    "label_counts",
    "binary_target_error",
    "code_labels",
    "check_numeric_dtype",
    "check_vector",
    "check_labels",
    "check_treatment",
    "treatment_counts",
    "treatment_error",
    "check_binary_target",
    "check_target_vector",
    "require_target",
    "binary_target_message",
    "check_both_arms",
    "check_same_length",
    "check_nonnegative",
    "check_in_interval",
    "check_bounds",
    "named_bounds",
    "resolve_feature_bounds",
    "columns_by_name",
    "check_diagnose_bounds",
    "diagnose_bounds",
    "check_weight_sensitivity",
    "feature_names_of",
    "resolve_rng",
    "check_choice",
    "caller_words",
    "said",
    "position_base",
]

#: the caller's words (:func:`caller_words`): its names for the engine's arguments, and its first position
_CALLER: ContextVar[Tuple[Mapping[str, str], int]] = ContextVar("pydpowl_caller_words", default=({}, 0))


@contextmanager
def caller_words(names: Mapping[str, str], *, index_base: int = 0) -> Iterator[None]:
    """Inside the block, the checks name arguments with the caller's ``names`` and count positions from
    ``index_base``.

    ``names`` maps the engine's argument names to the caller's (``{"X": "x"}``);
    for a pair of bounds, ``"<name>.lower"`` and ``"<name>.upper"`` name its two
    vectors (``{"feature_bounds.lower": "bounds$lower", ...}``). Names not in
    the map stay as they are. The setting is local to the running context
    (thread or task) and ends with the block.
    """
    token = _CALLER.set((dict(names), int(index_base)))
    try:
        yield
    finally:
        _CALLER.reset(token)


def said(name: str) -> str:
    """``name`` as the caller calls it (:func:`caller_words`); itself outside such a block."""
    return _CALLER.get()[0].get(name, name)


def position_base(index_base: Optional[int] = None) -> int:
    """``index_base`` when given, else the caller's (:func:`caller_words`; 0, Python's, by default)."""
    return _CALLER.get()[1] if index_base is None else index_base


def _pair_names(name: str) -> Optional[Tuple[str, str]]:
    """The caller's names of the two vectors of the bounds ``name``, when it gave them (else None)."""
    names = _CALLER.get()[0]
    lower, upper = f"{name}.lower", f"{name}.upper"
    return (names[lower], names[upper]) if lower in names and upper in names else None


def _describe(value: Any) -> str:
    """What was received, for TypeError messages: the type, or the shape of an array."""
    if value is None:
        return "None"
    if isinstance(value, np.ndarray):
        if value.ndim == 1:
            return f"an array of length {value.shape[0]}"
        return f"an array of shape {value.shape}"
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of length {len(value)}"
    return type(value).__name__


def _positions(mask: NDArray[np.bool_], index_base: int, max_shown: int = 5) -> str:
    """The first positions where ``mask`` holds, counted from ``index_base`` ("3, 7" or "1, 2, 3, 4, 5, ...")."""
    idx = np.flatnonzero(mask)
    shown = ", ".join(str(int(i) + index_base) for i in idx[:max_shown])
    return shown + (", ..." if idx.size > max_shown else "")


def check_positive(name: str, value: Any, *, allow_inf: bool = False, allow_zero: bool = False) -> float:
    """Return ``value`` as a float in ``(0, inf)``.

    ``allow_inf`` admits ``inf`` (``(0, inf]``) and ``allow_zero`` admits 0
    (``[0, inf)``).

    Raises
    ------
    TypeError
        If ``value`` is not a real number (``bool`` and strings are refused).
    ValueError
        If ``value`` is NaN, non-positive, or infinite when that is not allowed.
    """
    name = said(name)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {_describe(value)}.")
    value = float(value)
    low_ok = value >= 0.0 if allow_zero else value > 0.0
    if not (low_ok and (value < np.inf or (allow_inf and value == np.inf))):
        left = "[" if allow_zero else "("
        right = "]" if allow_inf else ")"
        raise ValueError(f"{name} must be in {left}0, inf{right}, got {name}={value!r}.")
    return value


def check_epsilon(value: Any, name: str = "epsilon") -> float:
    """Privacy budget in ``(0, inf]``; ``inf`` means no noise (validation only)."""
    return check_positive(name, value, allow_inf=True)


def check_probability(
    name: str, value: Any, *, low_open: bool = True, high_open: bool = False
) -> float:
    """Return a scalar probability in ``(0, 1]`` (interval ends configurable)."""
    name = said(name)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {_describe(value)}.")
    value = float(value)
    lo_ok = value > 0 if low_open else value >= 0
    hi_ok = value < 1 if high_open else value <= 1
    if not (lo_ok and hi_ok) or np.isnan(value):
        interval = ("(" if low_open else "[") + "0, 1" + (")" if high_open else "]")
        raise ValueError(f"{name} must be in {interval}, got {name}={value!r}.")
    return value


def check_int(name: str, value: Any, *, minimum: Optional[int] = None) -> int:
    """Return ``value`` as an int, at least ``minimum`` when given."""
    name = said(name)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {_describe(value)}.")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {name}={value}.")
    return value


def check_bool(name: str, value: Any) -> bool:
    """Return ``value`` if it is a bool."""
    name = said(name)
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {_describe(value)}.")
    return bool(value)


def is_sparse(value: Any) -> bool:
    """True for a scipy sparse matrix or array (scipy is not imported)."""
    return type(value).__module__.startswith("scipy.sparse") and hasattr(value, "toarray")


def _is_real(v: Any) -> bool:
    return isinstance(v, (numbers.Real, np.bool_)) or (isinstance(v, np.number) and not np.iscomplexobj(v))


def check_numeric_dtype(name: str, dtype: np.dtype) -> None:
    """Refuse a dtype that does not hold real numbers (in-memory and chunked checks alike).

    Raises
    ------
    TypeError
        For text, dates and other non-numeric dtypes.
    ValueError
        For complex numbers (scikit-learn's "Complex data not supported").
    """
    if dtype.kind in "USVMmO":
        raise TypeError(
            f"{name} must hold numbers, got dtype {dtype}; convert text columns and encode "
            "categories as 0/1 columns first."
        )
    if dtype.kind == "c":
        raise ValueError(f"{name} must hold real numbers, got dtype {dtype}: Complex data not supported.")
    if dtype.kind not in "iufb":
        raise TypeError(f"{name} must hold real numbers, got dtype {dtype}.")


def _to_float_array(name: str, value: ArrayLike) -> NDArray[np.float64]:
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be numeric array-like, got {type(value).__name__}.")
    if is_sparse(value):
        raise TypeError(f"{name} is a sparse matrix ({type(value).__name__}); sparse input is not supported: "
                        f"pass a dense array ({name}.toarray()).")
    try:
        arr = np.asarray(value)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name} could not be read as a numeric array: {exc}") from None
    if arr.dtype == object:
        flat = arr.ravel()
        if not all(_is_real(v) for v in flat):
            bad = [v for v in flat if not _is_real(v)]
            if any(np.iscomplexobj(v) for v in bad):
                raise ValueError(f"{name} must hold real numbers, got complex values: Complex data not supported.")
            kinds = sorted({type(v).__name__ for v in bad})
            other = [k for k in kinds if k != "str"]
            why = f" (float() argument must be a string or a real number, not {other[0]!r})" if other else ""
            raise TypeError(
                f"{name} must hold numbers only, got values of type {', '.join(kinds)}{why}; "
                "convert text columns and encode categories as 0/1 columns first."
            )
        arr = arr.astype(np.float64)
    check_numeric_dtype(name, arr.dtype)
    return np.asarray(arr, dtype=np.float64)


def nonfinite_message(name: str, n_nan: int, n_inf: int, size: int, *, rows: Sequence[int],
                      columns: Optional[Sequence[str]] = None, max_shown: int = 5) -> str:
    """The one message for non-finite entries (in-memory and chunked checks alike).

    ``rows`` are the (first) positions holding them, already counted from the
    caller's base, at least ``max_shown + 1`` of them when there are that many;
    ``columns`` the labels of the columns holding them (2-D data) or None (1-D).
    """
    shown = ", ".join(str(int(i)) for i in list(rows)[:max_shown]) + (", ..." if len(rows) > max_shown else "")
    where = f" in column(s) {', '.join(columns)} (rows {shown})" if columns is not None else f" at position(s) {shown}"
    return (f"{name} must be finite; it has {n_nan} NaN and {n_inf} infinite entries of {size}{where}. "
            "Nothing is dropped silently: remove or impute them first.")


def column_labels(cols: Sequence[int], columns: Optional[Sequence[str]], index_base: int) -> List[str]:
    """Labels of the columns ``cols``: ``repr`` of their names when known, else numbers from ``index_base``."""
    return [repr(str(columns[j])) if columns is not None and j < len(columns) else str(j + index_base)
            for j in cols]


#: from this many entries ``_check_finite`` first tries the sum (no boolean temporary of the array's size)
_SUM_CHECK_MIN_SIZE = 65_536


def finite_counts(name: str, arr: NDArray[Any], offset: int = 0) -> Dict[str, Any]:
    """The counts the non-finite rule decides from, for one block of rows whose first row is at ``offset``.

    Keys: ``{name}_nan``, ``{name}_inf``, ``nonfinite_rows_{name}`` (the first 6
    positions, counted from 0) and, for 2-D blocks, ``nonfinite_cols_{name}``.
    Counts of several blocks add up (the positions and columns merge), so the
    whole data in memory (one block) and a chunked fit are judged by one rule
    (:func:`raise_nonfinite`). From ``_SUM_CHECK_MIN_SIZE`` entries the sum is
    tried first (no boolean temporary of the array's size): a NaN or an
    infinity makes it non-finite, so a finite sum clears every entry.
    """
    if arr.size >= _SUM_CHECK_MIN_SIZE:
        with np.errstate(over="ignore", invalid="ignore"):
            clean = bool(np.isfinite(np.add.reduce(arr, axis=None)))
    else:
        clean = False
    bad = None if clean else ~np.isfinite(arr)
    if bad is None or not bad.any():
        out: Dict[str, Any] = {f"{name}_nan": 0, f"{name}_inf": 0, f"nonfinite_rows_{name}": ()}
        if arr.ndim == 2:
            out[f"nonfinite_cols_{name}"] = ()
        return out
    n_nan = int(np.count_nonzero(np.isnan(arr)))
    out = {f"{name}_nan": n_nan, f"{name}_inf": int(np.count_nonzero(bad)) - n_nan}
    rows = bad.any(axis=1) if arr.ndim == 2 else bad
    out[f"nonfinite_rows_{name}"] = tuple(int(i) + offset for i in np.flatnonzero(rows)[:6])
    if arr.ndim == 2:
        out[f"nonfinite_cols_{name}"] = tuple(int(j) for j in np.flatnonzero(bad.any(axis=0)))
    return out


def raise_nonfinite(name: str, counts: Dict[str, Any], size: int, *, columns: Optional[Sequence[str]] = None,
                    index_base: Optional[int] = None) -> None:
    """Raise the one error for non-finite entries when :func:`finite_counts` (of one block or merged) found any.

    Columns are named by ``columns`` when given, else numbered from
    ``index_base``; positions count from ``index_base``.
    """
    n_nan, n_inf = counts.get(f"{name}_nan", 0), counts.get(f"{name}_inf", 0)
    if not (n_nan or n_inf):
        return
    cols = counts.get(f"nonfinite_cols_{name}")
    index_base = position_base(index_base)
    labels = None if cols is None else column_labels(list(cols), columns, index_base)
    rows = [int(i) + index_base for i in counts.get(f"nonfinite_rows_{name}", ())]
    raise ValueError(nonfinite_message(said(name), n_nan, n_inf, size, rows=rows, columns=labels))


def _check_finite(name: str, arr: NDArray[np.float64], *, columns: Optional[Sequence[str]] = None,
                  index_base: Optional[int] = None) -> None:
    raise_nonfinite(name, finite_counts(name, arr), arr.size, columns=columns, index_base=index_base)


def as_matrix(name: str, value: ArrayLike, *, min_rows: int = 1, order: str = "C") -> NDArray[np.float64]:
    """A 2-D float64 array with at least ``min_rows`` rows and one column: the shape and type rules of
    :func:`check_array`, without its finiteness rule (for callers that count non-finite entries per block)."""
    if order not in ("C", "K"):
        raise ValueError(f"order must be 'C' or 'K', got order={order!r}.")
    name = said(name)
    arr = _to_float_array(name, value)
    if arr.ndim == 1:
        raise ValueError(one_d_message(name, arr.shape[0]))
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {arr.shape}.")
    if arr.shape[0] < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} row(s), got {arr.shape[0]}.")
    if arr.shape[1] < 1:
        raise ValueError(no_columns_message(name, arr.shape))
    return np.ascontiguousarray(arr) if order == "C" else arr


def check_array(name: str, value: ArrayLike, *, min_rows: int = 1, columns: Optional[Sequence[str]] = None,
                index_base: Optional[int] = None, order: str = "C") -> NDArray[np.float64]:
    """Return a finite 2-D float64 array with at least ``min_rows`` rows.

    Non-finite entries are reported by column (``columns``, else a DataFrame's
    column names, else numbers from ``index_base``) and row. With
    ``order="C"`` (the default) the array is row-major (copied if it is not);
    with ``order="K"`` a float64 array keeps its layout (no copy), for callers
    that read it in any layout: a pandas frame's values and R's matrices are
    column-major, and a family fit reads the features column by column.
    """
    if columns is None:
        columns = feature_names_of(value)
    arr = as_matrix(name, value, min_rows=min_rows, order=order)
    _check_finite(name, arr, columns=columns, index_base=index_base)
    return arr


def one_d_message(name: str, length: int) -> str:
    """The one message for a 1-D input where a 2-D one is needed (scikit-learn's "Reshape your data" inside)."""
    return (f"{name} must be 2-D (n_samples, n_features), got a 1-D array of length {length}. Reshape your data: "
            f"{name}.reshape(-1, 1) for a single feature, {name}.reshape(1, -1) for a single sample.")


def no_columns_message(name: str, shape: Tuple[int, ...]) -> str:
    """The one message for a 2-D input without columns (scikit-learn's wording inside ours)."""
    return (f"{name} must have at least 1 column: found 0 feature(s) (shape={tuple(int(k) for k in shape)}) "
            "while a minimum of 1 is required.")


def as_vector(name: str, value: ArrayLike, *, length: Optional[int] = None,
              length_of: Optional[str] = None) -> NDArray[np.float64]:
    """A 1-D float64 array (optionally of a given length): the shape and type rules of
    :func:`check_vector`, without its finiteness rule."""
    name = said(name)
    arr = _to_float_array(name, value)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}.")
    if length is not None and arr.shape[0] != length:
        per = f" ({length_of})" if length_of else ""
        raise ValueError(f"{name} must have length {length}{per}, got length {arr.shape[0]}.")
    return arr


def check_vector(
    name: str, value: ArrayLike, *, length: Optional[int] = None, length_of: Optional[str] = None,
    index_base: Optional[int] = None,
) -> NDArray[np.float64]:
    """Return a finite 1-D float64 array (optionally of a given length).

    ``length_of`` says what the length counts (e.g. ``"one per row of X"``) in
    the message; non-finite entries are reported by position from ``index_base``.
    """
    arr = as_vector(name, value, length=length, length_of=length_of)
    _check_finite(name, arr, index_base=index_base)
    return arr


def check_labels(
    name: str, value: ArrayLike, *, length: Optional[int] = None, allowed: Tuple[int, int] = (-1, 1),
    length_of: Optional[str] = None, hint: str = "", index_base: Optional[int] = None,
) -> NDArray[np.float64]:
    """Return labels as float64 after checking every entry is in ``allowed``.

    ``hint`` is appended to the message when entries are outside ``allowed``
    (e.g. how to recode labels from another convention).
    """
    arr = check_vector(name, value, length=length, length_of=length_of, index_base=index_base)
    bad = (arr != allowed[0]) & (arr != allowed[1]) if len(allowed) == 2 else ~np.isin(arr, allowed)
    if bad.any():
        first = int(np.flatnonzero(bad)[0]) + position_base(index_base)
        raise ValueError(labels_message(name, int(bad.sum()), arr.size, first, allowed=allowed, hint=hint))
    return arr


def labels_message(name: str, n_bad: int, size: int, first: int, *, allowed: Tuple[Any, Any] = (-1, 1),
                   hint: str = "") -> str:
    """The one message for labels outside ``allowed`` (in-memory and chunked checks alike)."""
    name = said(name)
    return (f"{name} must take values in {{{allowed[0]}, {allowed[1]}}}; {n_bad} of {size} entries do not "
            f"(first at position {first}).{' ' + hint if hint else ''}")


def treatment_counts(A: NDArray[np.float64], offset: int = 0) -> Dict[str, int]:
    """What :func:`check_treatment` decides from, for finite treatments ``A`` (one block of them, whose first
    entry is at position ``offset``): entries outside {-1, 0, 1}, zeros, -1s, +1s and the first positions.

    Counts of several blocks add up (first positions: the smallest), so in-memory and chunked data are
    judged by one rule (:func:`treatment_error`).
    """
    bad = np.isfinite(A) & (A != 1.0) & (A != -1.0) & (A != 0.0)  # non-finite entries are reported as such
    zero = A == 0.0

    def first(mask: NDArray[np.bool_]) -> int:
        return int(np.flatnonzero(mask)[0]) + offset if mask.any() else -1

    return {"treatment_bad": int(np.count_nonzero(bad)), "first_treatment_bad": first(bad),
            "treatment_zero": int(np.count_nonzero(zero)), "first_treatment_zero": first(zero),
            "treatment_minus": int(np.count_nonzero(A == -1.0)), "treatment_plus": int(np.count_nonzero(A == 1.0))}


def treatment_error(counts: Dict[str, int], size: int, name: str = "treatment") -> Optional[str]:
    """The message for treatments that are neither coded {-1, 1} nor {0, 1} (None when they are).

    {0, 1} codes 0 as -1 (the control arm), as the CLI does and as
    :class:`~pydpowl.DPWeightedERM` maps the sorted labels 0 and 1.
    """
    name = said(name)
    if counts["treatment_bad"]:
        return (f"{name} must take values in {{-1, 1}} or {{0, 1}} (0 is coded -1); {counts['treatment_bad']} of "
                f"{size} entries do not (first at position {counts['first_treatment_bad']}).")
    if counts["treatment_zero"] and counts["treatment_minus"]:
        return (f"{name} mixes the codings {{-1, 1}} and {{0, 1}}: {counts['treatment_zero']} of {size} entries "
                f"are 0 while others are -1 (first 0 at position {counts['first_treatment_zero']}).")
    return None


def check_treatment(name: str, value: ArrayLike, *, length: Optional[int] = None,
                    index_base: Optional[int] = None) -> NDArray[np.float64]:
    """Received treatments coded {-1, 1} or {0, 1}, returned coded {-1, 1} (0 -> -1).

    Raises
    ------
    ValueError
        For values outside both codings or a mix of them (:func:`treatment_error`), and every error of
        :func:`check_vector`.
    """
    arr = check_vector(name, value, length=length, index_base=index_base)
    message = treatment_error(treatment_counts(arr, position_base(index_base)), arr.size, name)
    if message:
        raise ValueError(message)
    return np.where(arr == 0.0, -1.0, arr) if np.any(arr == 0.0) else arr


def require_target(name: str, value: Any, what: str) -> None:
    """Refuse a missing target (``None``) with the words scikit-learn's checks look for."""
    if value is None:
        raise ValueError(f"{name} must be array-like ({what}): this estimator requires {name} to be passed, but "
                         f"the target {name} is None.")


def _warn_column_vector(name: str, shape: Tuple[int, ...], stacklevel: int) -> None:
    """scikit-learn's ``DataConversionWarning`` for a target of shape (n, 1) with n > 1 (then used raveled)."""
    if len(shape) == 2 and shape[1] == 1 and shape[0] > 1:
        from sklearn.exceptions import DataConversionWarning  # only here: the R worker never loads sklearn

        warnings.warn(f"A column-vector {name} was passed when a 1d array was expected. Please change the "
                      f"shape of {name} to (n_samples, ), for example using ravel().",
                      DataConversionWarning, stacklevel=stacklevel + 1)


def check_target_vector(name: str, value: ArrayLike, *, length: Optional[int] = None) -> NDArray[np.float64]:
    """A regression target: required, a finite 1-D float64 array (a column vector with the warning)."""
    require_target(name, value, "the target values")
    _warn_column_vector(name, tuple(getattr(value, "shape", ())), stacklevel=3)  # arrays and DataFrames
    return check_vector(name, value, length=length)


def as_target(name: str, value: ArrayLike, *, length: Optional[int] = None) -> NDArray[Any]:
    """Class labels as a 1-D array of their own dtype: the shape and type rules of :func:`check_binary_target`
    (a column vector is accepted with scikit-learn's ``DataConversionWarning``), without its value rules."""
    if is_sparse(value):
        raise TypeError(f"{name} is a sparse matrix ({type(value).__name__}); sparse input is not supported.")
    require_target(name, value, "the class labels")
    arr = np.asarray(value)
    if arr.ndim == 2 and 1 in arr.shape:
        _warn_column_vector(name, arr.shape, stacklevel=4)
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}.")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have length {length}, got length {arr.shape[0]}.")
    if arr.dtype.kind == "c":
        raise ValueError(f"{name} must hold real numbers or labels, got dtype {arr.dtype}: Complex data not supported.")
    return arr


def _is_integer(value: Any) -> bool:
    return not isinstance(value, (float, np.floating)) or float(value) == np.floor(float(value))


def label_counts(name: str, arr: NDArray[Any], offset: int = 0) -> Dict[str, Any]:
    """The counts the two-class rule decides from, for one block of labels whose first entry is at ``offset``.

    Non-finite counts (:func:`finite_counts`, float labels only), ``values_{name}``:
    up to 3 of the distinct values, sorted (3 means "more than 2"; found without
    sorting the labels), and ``{name}_nonint``: whether a float label is not an
    integer (a regression target). Blocks merge: the values by union (the
    first 3), the rest by sum; :func:`binary_target_error` judges the result.
    """
    out = finite_counts(name, arr, offset) if arr.dtype.kind == "f" else {f"{name}_nan": 0, f"{name}_inf": 0}
    if out[f"{name}_nan"] or out[f"{name}_inf"]:
        arr = arr[np.isfinite(arr)]
    values: List[Any] = []
    if arr.size:
        values.append(arr[0])
        other = arr != arr[0]
        if other.any():
            values.append(arr[int(np.argmax(other))])
            rest = other & (arr != values[1])
            if rest.any():
                values.append(arr[int(np.argmax(rest))])
    out[f"values_{name}"] = tuple(sorted(values))
    nonint = 0
    if arr.dtype.kind == "f":  # fewer than 3 values: every label is one of them
        nonint = int(not all(_is_integer(v) for v in values) if len(values) < 3
                     else bool(np.any(arr != np.floor(arr))))
    out[f"{name}_nonint"] = nonint
    return out


def binary_target_error(name: str, counts: Dict[str, Any]) -> Optional[str]:
    """The message when :func:`label_counts` (of one block or merged) did not find exactly two classes."""
    values = counts[f"values_{name}"]
    if len(values) == 2:
        return None
    return binary_target_message(name, len(values), continuous=len(values) == 3 and bool(counts[f"{name}_nonint"]))


def check_binary_target(name: str, value: ArrayLike, *, length: Optional[int] = None,
                        classes: Optional[Sequence[Any]] = None) -> Tuple[NDArray[Any], NDArray[np.float64]]:
    """Class labels of a binary classifier: ``(classes, labels in {-1, 1})``.

    ``classes`` are the two sorted distinct values of ``value`` (scikit-learn's
    ``classes_``); the first maps to -1 and the second to +1, so DPpack's 0/1
    labels map to -1/+1 as in ``svmDP`` and labels -1/+1 map to themselves.
    With ``classes`` given (e.g. DPpack's ``(0, 1)``), every entry must be one
    of them and a single class is allowed. A column vector is accepted with
    scikit-learn's ``DataConversionWarning``.
    """
    arr = as_target(name, value, length=length)
    if classes is None:
        counts = label_counts(name, arr)
        raise_nonfinite(name, counts, arr.size)
        message = binary_target_error(name, counts)
        if message:
            raise ValueError(message)
        found = np.array(counts[f"values_{name}"], dtype=arr.dtype)
    else:
        if arr.dtype.kind == "f":
            _check_finite(name, arr)
        found = np.asarray(classes)
        bad = ~np.isin(arr, found)
        if bad.any():
            raise ValueError(f"{name} must take values in {{{found[0]!r}, {found[1]!r}}}; {int(bad.sum())} of "
                             f"{arr.size} entries do not (first at position {int(np.flatnonzero(bad)[0])}).")
    return found, code_labels(arr, found)


def code_labels(labels: Any, classes: NDArray[Any]) -> Any:
    """Labels coded -1 (``classes[0]``) and +1 (``classes[1]``), as float64 (numpy or Dask arrays alike)."""
    return np.where(labels == classes[1], 1.0, -1.0)


def binary_target_message(name: str, n_values: int, *, continuous: bool = False) -> str:
    """The one message for labels that are not two classes (``n_values``: 0, 1, or 3 for "more than 2").

    Contains scikit-learn's "1 class" and, for non-integer values (a regression
    target), its "Unknown label type: 'continuous'".
    """
    name = said(name)
    got = {0: "0 (no labels)", 1: "1 class"}.get(n_values, "more than 2")
    extra = (" Unknown label type: 'continuous' (non-integer values, as of a regression target)."
             if continuous else "")
    return f"{name} must take exactly two distinct values (a binary classifier), got {got}.{extra}"


def check_both_arms(name: str, labels: NDArray[np.float64]) -> None:
    """Raise unless ``labels`` (already checked to lie in {-1, 1}) contain both values.

    A treatment rule or propensity model cannot be learned from one arm.
    """
    if labels.size and np.all(labels == labels[0]):
        raise ValueError(one_arm_message(name, labels.size, int(labels[0])))


def one_arm_message(name: str, size: int, arm: int) -> str:
    """The one message for treatments that all lie in the arm ``arm`` (in-memory and chunked checks alike)."""
    return f"{said(name)} must contain both arms -1 and 1; all {size} entries are {arm:+d} (one class only)."


def check_same_length(names: Sequence[str], lengths: Sequence[int]) -> None:
    """Raise if the given lengths differ, naming every argument."""
    if len(set(lengths)) > 1:
        parts = ", ".join(f"{n} has {k}" for n, k in zip(names, lengths))
        raise ValueError(f"inconsistent numbers of samples: {parts}.")


def check_nonnegative(name: str, arr: NDArray[np.float64], *, why: str = "", hint: str = "",
                      index_base: Optional[int] = None) -> None:
    """Raise unless every entry of the (finite) vector ``arr`` is >= 0.

    ``why`` is a parenthetical after "non-negative", ``hint`` a sentence after
    the counts; the first offending position counts from ``index_base``.
    """
    negative = arr < 0
    if negative.any():
        first = int(np.flatnonzero(negative)[0]) + position_base(index_base)
        raise ValueError(nonnegative_message(name, int(negative.sum()), arr.size, first, why=why, hint=hint))


def nonnegative_message(name: str, n_negative: int, size: int, first: int, *, why: str = "", hint: str = "") -> str:
    """The one message for negative entries (in-memory and chunked checks alike); see :func:`check_nonnegative`."""
    return (f"{said(name)} must be non-negative{' (' + why + ')' if why else ''}; {n_negative} of {size} "
            f"entries are negative (first at position {first}).{' ' + hint if hint else ''}")


def check_in_interval(name: str, arr: NDArray[np.float64], low: float, high: float, *, low_open: bool = True,
                      high_open: bool = False, why: str = "", index_base: Optional[int] = None) -> None:
    """Raise unless every entry of the (finite) vector ``arr`` lies in the interval from ``low`` to ``high``."""
    inside_low = arr > low if low_open else arr >= low
    inside_high = arr < high if high_open else arr <= high
    bad = ~(inside_low & inside_high)
    if bad.any():
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        first = int(np.flatnonzero(bad)[0]) + position_base(index_base)
        raise ValueError(
            f"{said(name)} must be in {interval}{' (' + why + ')' if why else ''}; {int(bad.sum())} of {arr.size} "
            f"entries are outside (first at position {first})."
        )


def check_bounds(
    name: str, bounds: Any, n_features: int, *, names: Optional[Tuple[str, str]] = None,
    index_base: Optional[int] = None,
) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Validate public feature bounds ``(lower, upper)``, each of length ``n_features``.

    ``names = (lower_name, upper_name)`` names the two vectors separately in
    messages (as the R front end's ``lower.bounds``/``upper.bounds``), with
    positions counted from ``index_base``; by default both are parts of ``name``
    (or the caller's names of them, :func:`caller_words`).
    """
    names = names if names is not None else _pair_names(name)
    name, index_base = said(name), position_base(index_base)
    if isinstance(bounds, str):
        raise TypeError(
            f"{name} must be a pair (lower, upper) of array-likes, got the string "
            f"{bounds!r}. Bounds must be public; use pydpowl.bounds_from_data only "
            "with its PrivacyLeakWarning."
        )
    try:
        lower, upper = bounds
    except (TypeError, ValueError):
        raise TypeError(
            f"{name} must be a pair (lower, upper) of array-likes of length {n_features}."
        ) from None
    if names is None:
        lower = check_vector(f"{name}[0] (lower)", lower)
        upper = check_vector(f"{name}[1] (upper)", upper)
        labels = (f"{name}: lower bounds", f"{name}: upper bounds")
    else:
        lower = check_vector(names[0], lower, index_base=index_base)
        upper = check_vector(names[1], upper, index_base=index_base)
        labels = names
    for label, arr in zip(labels, (lower, upper)):
        if arr.shape[0] != n_features:
            raise ValueError(
                f"{label} must have length {n_features} (one per feature), got length {arr.shape[0]}."
            )
    reversed_ = lower > upper
    zero = np.maximum(np.abs(lower), np.abs(upper)) == 0
    if names is None:
        if reversed_.any():
            idx = np.flatnonzero(reversed_).tolist()
            raise ValueError(f"{name}: lower must be <= upper for every feature; reversed at {idx}.")
        if zero.any():
            idx = np.flatnonzero(zero).tolist()
            raise ValueError(
                f"{name}: max(|lower|, |upper|) must be > 0 for every feature (used as its "
                f"scale); it is 0 at {idx}."
            )
    else:
        lo, up = names
        if reversed_.any():
            raise ValueError(f"{lo} must be <= {up} for every feature; reversed at position(s) "
                             f"{_positions(reversed_, index_base)}.")
        if zero.any():
            raise ValueError(f"max(|{lo}|, |{up}|) must be > 0 for every feature (used as its scale); it is 0 at "
                             f"position(s) {_positions(zero, index_base)}.")
    return lower, upper


def _is_pandas(value: Any, kind: str) -> bool:
    """True for a pandas ``Series`` or ``DataFrame`` (``kind``), without importing pandas."""
    return type(value).__name__ == kind and type(value).__module__.startswith("pandas")


def _labelled_series(value: Any) -> bool:
    """A pandas Series whose index holds strings (column names): bounds given by name."""
    return _is_pandas(value, "Series") and len(value.index) > 0 and all(isinstance(k, str) for k in value.index)


def named_bounds(name: str, bounds: Any) -> Optional[Dict[str, Tuple[Any, Any]]]:
    """Bounds given by column name as ``{column: (lower, upper)}``, or None for bounds given by position.

    By name are: a mapping ``{column: (lower, upper)}``; a pair ``(lower, upper)``
    of pandas Series indexed by column names (e.g. ``X.min()``-shaped objects);
    a DataFrame with columns ``lower`` and ``upper`` indexed by column name, or
    with rows ``lower`` and ``upper`` and one column per feature. A pair of
    array-likes without names is by position.

    Raises
    ------
    TypeError
        For a pair with one side named and the other not, a DataFrame of
        another shape, or an entry of a mapping that is not a pair.
    """
    if _is_pandas(bounds, "DataFrame"):
        cols, rows = [str(c) for c in bounds.columns], [str(r) for r in bounds.index]
        if sorted(cols) == ["lower", "upper"]:
            return {str(k): (bounds.loc[k, bounds.columns[cols.index("lower")]],
                             bounds.loc[k, bounds.columns[cols.index("upper")]]) for k in bounds.index}
        if sorted(rows) == ["lower", "upper"]:
            lo, up = bounds.index[rows.index("lower")], bounds.index[rows.index("upper")]
            return {str(c): (bounds.loc[lo, c], bounds.loc[up, c]) for c in bounds.columns}
        raise TypeError(f"{name} given as a DataFrame must have columns 'lower' and 'upper' (one row per feature, "
                        f"indexed by column name) or rows 'lower' and 'upper' (one column per feature), got columns "
                        f"{cols[:5]} and index {rows[:5]}.")
    if isinstance(bounds, Mapping):
        out: Dict[str, Tuple[Any, Any]] = {}
        for key, pair in bounds.items():
            if isinstance(pair, (str, bytes)) or np.ndim(pair) != 1 or len(pair) != 2:
                raise TypeError(f"{name}[{key!r}] must be a pair (lower, upper) of numbers, got {_describe(pair)}.")
            out[str(key)] = (pair[0], pair[1])
        return out
    if isinstance(bounds, (list, tuple)) and len(bounds) == 2:
        named = [_labelled_series(side) for side in bounds]
        if all(named):
            lower, upper = bounds
            if set(lower.index) != set(upper.index):
                raise ValueError(f"{name}: the lower and upper Series must name the same columns; "
                                 f"{sorted(set(lower.index) ^ set(upper.index))[:5]} are in one only.")
            return {str(k): (lower[k], upper[k]) for k in lower.index}
        if any(named):
            raise TypeError(f"{name}: give both lower and upper by column name (pandas Series indexed by column) "
                            "or both by position, not one of each.")
    return None


def resolve_feature_bounds(name: str, bounds: Any, n_features: int, columns: Optional[Sequence[str]] = None,
                           ) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Public per-feature bounds ``(lower, upper)`` in the order of X's columns (the one place bounds meet columns).

    Bounds given by name (:func:`named_bounds`) are matched to ``columns``, the
    column names of X: every column needs a bound and every bound a column, in
    any order. Bounds given by position (a pair of array-likes) apply to the
    columns in order; with a DataFrame the caller records the column names, so
    prediction checks them.

    Raises
    ------
    ValueError
        Bounds by name for an X without column names, names that are not
        columns of X, columns without a bound, and every error of
        :func:`check_bounds`.
    """
    engine_name, name = name, said(name)
    by_name = named_bounds(name, bounds)
    if by_name is None:
        return check_bounds(engine_name, bounds, n_features)
    if columns is None:
        raise ValueError(f"{name} are given by column name ({', '.join(repr(k) for k in list(by_name)[:5])}"
                         f"{', ...' if len(by_name) > 5 else ''}) but X has no column names: pass X as a pandas "
                         "DataFrame with these columns, or the bounds as a pair (lower, upper) in column order.")
    columns = [str(c) for c in columns]
    unknown = [k for k in by_name if k not in set(columns)]
    if unknown:
        raise ValueError(f"{name} name column(s) {unknown[:5]} that X does not have; X's columns are "
                         f"{columns[:20]}.")
    missing = [c for c in columns if c not in by_name]
    if missing:
        raise ValueError(f"{name} have no bounds for column(s) {missing[:5]} of X; every feature needs public "
                         "bounds (known before seeing the data).")
    lower, upper = [], []
    for c in columns:
        lo, up = (float(v) for v in check_vector(f"{name}[{c!r}]", list(by_name[c])))
        if lo > up:
            raise ValueError(f"{name}[{c!r}]: lower must be <= upper, got ({lo!r}, {up!r}).")
        if max(abs(lo), abs(up)) == 0:
            raise ValueError(f"{name}[{c!r}]: max(|lower|, |upper|) must be > 0 (used as the column's scale), "
                             f"got ({lo!r}, {up!r}).")
        lower.append(lo)
        upper.append(up)
    return check_bounds(engine_name, (np.array(lower), np.array(upper)), n_features)


def columns_by_name(X: Any, fitted: Optional[Sequence[str]], *, owner: str, name: str = "X") -> Any:
    """X's columns matched to the fitted feature names: a DataFrame is reordered by name.

    ``fitted`` are the column names recorded at fit (None: fitted without
    names, X is used by position). A DataFrame must hold every fitted column
    (extra columns are ignored) and comes back with exactly those columns in
    the fitted order. An X without column names is taken by position, with
    scikit-learn's ``UserWarning`` (its columns must be in the fitted order).

    Raises
    ------
    ValueError
        If X has column names and lacks some of the fitted ones (named, with
        the columns X has).
    """
    if fitted is None:
        return X
    name = said(name)
    fitted = [str(c) for c in fitted]
    given = feature_names_of(X)
    if given is None:
        warnings.warn(f"{name} does not have valid feature names, but {owner} was fitted with feature names: its "
                      f"columns are taken in the fitted order {fitted[:10]}; pass a DataFrame to match them by name.",
                      UserWarning, stacklevel=3)
        return X
    if given == fitted:
        return X
    missing = [c for c in fitted if c not in set(given)]
    if missing:
        raise ValueError(f"{name} lacks the column(s) {missing[:5]} that {owner} was fitted on (columns are matched "
                         f"by name); {name} has {given[:20]}.")
    if len(set(given)) != len(given):
        raise ValueError(f"{name} has repeated column names; columns are matched by name.")
    return X.iloc[:, [given.index(c) for c in fitted]]


#: the share of a column's values outside its bounds from which :func:`diagnose_bounds` warns, for ``True``
DEFAULT_DIAGNOSE_SHARE = 0.5


def check_diagnose_bounds(value: Any) -> Optional[float]:
    """``diagnose_bounds`` as the share it states: None (off), ``True`` (0.5) or a share in (0, 1)."""
    if value is None or value is False:
        return None
    if value is True:
        return DEFAULT_DIAGNOSE_SHARE
    return check_probability("diagnose_bounds", value, high_open=True)


def diagnose_bounds(X: Any, lower: NDArray[np.float64], upper: NDArray[np.float64], share: Optional[float], *,
                    columns: Optional[Sequence[str]] = None, owner: str = "fit") -> None:
    """Opt-in, NON-PRIVATE diagnostic: warn when more than ``share`` of a column's values lie outside its bounds.

    So many values outside a column's public bounds usually mean the bounds
    belong to another column (bounds given by position to columns in another
    order). The warning names the columns only (no counts or shares), but
    whether it appears depends on the private data: it is not covered by the
    privacy guarantee, so it runs only when the analyst asks for it
    (``share`` not None; None does nothing and reads nothing).
    """
    if share is None:
        return
    outside = (X < lower) | (X > upper)
    frac = np.asarray(outside.mean(axis=0), dtype=float)  # a Dask array is computed here (one pass)
    flagged = np.flatnonzero(frac > share).tolist()
    if flagged:
        from .exceptions import BoundsDiagnosticWarning

        labels = column_labels(flagged, columns, 0)
        warnings.warn(f"{owner}: more than {share:.0%} of the values of column(s) {', '.join(labels)} lie outside "
                      "their public bounds: are the bounds in the columns' order? Give them by name "
                      "({column: (lower, upper)}). NON-PRIVATE diagnostic (diagnose_bounds is set): this warning "
                      "depends on the private data and is not covered by the privacy guarantee.",
                      BoundsDiagnosticWarning, stacklevel=3)


def check_weight_sensitivity(value: Any, name: str = "C") -> float:
    """C of Theorem 7 (the bound on the total change of the other records' weights) as a float in ``[0, inf)``.

    The one check of a stated C: :class:`pydpowl.DPWeightedERM`'s ``C``,
    :class:`pydpowl.DPOWL`'s numeric ``weight_sensitivity`` and the
    sensitivity formula all use it.
    """
    name = said(name)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not (0 <= float(value) < np.inf):
        raise ValueError(f"{name} must be in [0, inf), got {name}={value!r}.")
    return float(value)


def is_chunked(*values: Any) -> bool:
    """True when any value is a Dask collection (``__dask_graph__``; Dask is not imported, nor is the package's
    Dask plumbing, :mod:`pydpowl.estimators.dask_inputs`, which in-memory fits never load)."""
    return any(hasattr(v, "__dask_graph__") for v in values)


def feature_names_of(X: Any) -> Optional[list]:
    """Column names of a pandas DataFrame, else None."""
    cols = getattr(X, "columns", None)
    if cols is None:
        return None
    return [str(c) for c in cols]


def check_choice(name: str, value: Any, allowed: Sequence[str]) -> str:
    """``value`` if it is one of the strings ``allowed``.

    Raises
    ------
    TypeError
        If ``value`` is not a string.
    ValueError
        If it is not one of ``allowed`` (the message lists them).
    """
    name = said(name)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {list(allowed)}, got {type(value).__name__}.")
    if value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)}, got {name}={value!r}.")
    return value


def resolve_rng(random_state: Any) -> Any:
    """Turn ``random_state`` into a generator, once, at the start of ``fit``.

    None draws fresh entropy from the operating system (use this for real
    releases); an int or a ``numpy.random.Generator`` makes runs reproducible
    (for research and tests, not for production releases). An R-compatible
    stream (:class:`pydpowl.RRandom`) is used as is.
    """
    if random_state is None or isinstance(random_state, (int, np.integer, np.random.Generator, np.random.SeedSequence)):
        if isinstance(random_state, (bool, np.bool_)):
            raise TypeError("random_state must be None, an int, a numpy Generator or an RRandom, got bool.")
        if isinstance(random_state, (int, np.integer)) and random_state < 0:
            raise ValueError(f"random_state must be a non-negative int, got random_state={int(random_state)}.")
        return np.random.default_rng(random_state)
    if callable(getattr(random_state, "rgamma", None)) and callable(getattr(random_state, "rnorm", None)):
        return random_state
    raise TypeError(
        "random_state must be None, an int, a numpy.random.Generator or a pydpowl.RRandom, "
        f"got {type(random_state).__name__}."
    )
