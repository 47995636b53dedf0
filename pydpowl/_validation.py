"""Input checks shared by every public entry point.

Messages name the argument, the allowed range in interval notation and what was
received. For private data they report counts and positions, never values.
"""

from __future__ import annotations

import numbers
from typing import Any, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "check_positive",
    "check_epsilon",
    "check_probability",
    "check_int",
    "check_bool",
    "check_array",
    "check_vector",
    "check_labels",
    "check_both_arms",
    "check_same_length",
    "check_bounds",
    "feature_names_of",
    "resolve_rng",
]


def check_positive(name: str, value: Any, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float in ``(0, inf)`` (or ``(0, inf]`` with ``allow_inf``).

    Raises
    ------
    TypeError
        If ``value`` is not a real number (``bool`` and strings are refused).
    ValueError
        If ``value`` is NaN, non-positive, or infinite when that is not allowed.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}.")
    value = float(value)
    if not (0.0 < value < np.inf or (allow_inf and value == np.inf)):
        right = "]" if allow_inf else ")"
        raise ValueError(f"{name} must be in (0, inf{right}, got {name}={value!r}.")
    return value


def check_epsilon(value: Any, name: str = "epsilon") -> float:
    """Privacy budget in ``(0, inf]``; ``inf`` means no noise (validation only)."""
    return check_positive(name, value, allow_inf=True)


def check_probability(
    name: str, value: Any, *, low_open: bool = True, high_open: bool = False
) -> float:
    """Return a scalar probability in ``(0, 1]`` (interval ends configurable)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}.")
    value = float(value)
    lo_ok = value > 0 if low_open else value >= 0
    hi_ok = value < 1 if high_open else value <= 1
    if not (lo_ok and hi_ok) or np.isnan(value):
        interval = ("(" if low_open else "[") + "0, 1" + (")" if high_open else "]")
        raise ValueError(f"{name} must be in {interval}, got {name}={value!r}.")
    return value


def check_int(name: str, value: Any, *, minimum: Optional[int] = None) -> int:
    """Return ``value`` as an int, at least ``minimum`` when given."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}.")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {name}={value}.")
    return value


def check_bool(name: str, value: Any) -> bool:
    """Return ``value`` if it is a bool."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__}.")
    return bool(value)


def _to_float_array(name: str, value: ArrayLike) -> NDArray[np.float64]:
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be numeric array-like, got {type(value).__name__}.")
    try:
        arr = np.asarray(value)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name} could not be read as a numeric array: {exc}") from None
    if arr.dtype.kind in "USVMm":
        raise TypeError(
            f"{name} must hold numbers, got dtype {arr.dtype}; convert text columns and encode "
            "categories as 0/1 columns first."
        )
    if arr.dtype == object:
        flat = arr.ravel()
        if not all(isinstance(v, (numbers.Real, np.number, np.bool_)) for v in flat):
            kinds = sorted({type(v).__name__ for v in flat if not isinstance(v, (numbers.Real, np.number, np.bool_))})
            raise TypeError(
                f"{name} must hold numbers only, got values of type {', '.join(kinds)}; "
                "convert text columns and encode categories as 0/1 columns first."
            )
        arr = arr.astype(np.float64)
    if arr.dtype.kind == "b":
        arr = arr.astype(np.float64)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}.")
    return np.asarray(arr, dtype=np.float64)


#: from this many entries ``_check_finite`` first tries the sum (no boolean temporary of the array's size)
_SUM_CHECK_MIN_SIZE = 65_536


def _check_finite(name: str, arr: NDArray[np.float64]) -> None:
    if arr.size >= _SUM_CHECK_MIN_SIZE:
        # One pass without a temporary: a NaN or an infinity makes the sum NaN or infinite, so a finite sum
        # clears every entry; only otherwise (bad entries, or a sum that overflowed) are the entries examined.
        with np.errstate(over="ignore", invalid="ignore"):
            if np.isfinite(np.add.reduce(arr, axis=None)):
                return
    bad = ~np.isfinite(arr)
    if bad.any():
        n_nan = int(np.isnan(arr).sum())
        n_inf = int(bad.sum()) - n_nan
        raise ValueError(
            f"{name} must be finite; it has {n_nan} NaN and {n_inf} infinite entries "
            f"of {arr.size}. Nothing is dropped silently: remove or impute them first."
        )


def check_array(name: str, value: ArrayLike, *, min_rows: int = 1) -> NDArray[np.float64]:
    """Return a finite 2-D float64 array with at least ``min_rows`` rows."""
    arr = _to_float_array(name, value)
    if arr.ndim == 1:
        raise ValueError(
            f"{name} must be 2-D (n_samples, n_features), got a 1-D array of length "
            f"{arr.shape[0]}; use X.reshape(-1, 1) for a single feature."
        )
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {arr.shape}.")
    if arr.shape[0] < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} row(s), got {arr.shape[0]}.")
    if arr.shape[1] < 1:
        raise ValueError(f"{name} must have at least 1 column, got shape {arr.shape}.")
    _check_finite(name, arr)
    return np.ascontiguousarray(arr)


def check_vector(
    name: str, value: ArrayLike, *, length: Optional[int] = None
) -> NDArray[np.float64]:
    """Return a finite 1-D float64 array (optionally of a given length)."""
    arr = _to_float_array(name, value)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}.")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have length {length}, got length {arr.shape[0]}.")
    _check_finite(name, arr)
    return arr


def check_labels(
    name: str, value: ArrayLike, *, length: Optional[int] = None, allowed: Tuple[int, int] = (-1, 1)
) -> NDArray[np.float64]:
    """Return labels as float64 after checking every entry is in ``allowed``."""
    arr = check_vector(name, value, length=length)
    bad = (arr != allowed[0]) & (arr != allowed[1])
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name} must take values in {{{allowed[0]}, {allowed[1]}}}; {int(bad.sum())} of "
            f"{arr.size} entries do not (first at position {first})."
        )
    return arr


def check_both_arms(name: str, labels: NDArray[np.float64]) -> None:
    """Raise unless ``labels`` (already checked to lie in {-1, 1}) contain both values.

    A treatment rule or propensity model cannot be learned from one arm.
    """
    if labels.size and np.all(labels == labels[0]):
        raise ValueError(
            f"{name} must contain both arms -1 and 1; all {labels.size} entries are {int(labels[0]):+d}."
        )


def check_same_length(names: Sequence[str], lengths: Sequence[int]) -> None:
    """Raise if the given lengths differ, naming every argument."""
    if len(set(lengths)) > 1:
        parts = ", ".join(f"{n} has {k}" for n, k in zip(names, lengths))
        raise ValueError(f"inconsistent numbers of samples: {parts}.")


def check_bounds(
    name: str, bounds: Any, n_features: int
) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Validate public feature bounds ``(lower, upper)``, each of length ``n_features``."""
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
    lower = check_vector(f"{name}[0] (lower)", lower)
    upper = check_vector(f"{name}[1] (upper)", upper)
    for label, arr in (("lower", lower), ("upper", upper)):
        if arr.shape[0] != n_features:
            raise ValueError(
                f"{name}: {label} bounds must have length {n_features} (one per feature), "
                f"got length {arr.shape[0]}."
            )
    reversed_ = lower > upper
    if reversed_.any():
        idx = np.flatnonzero(reversed_).tolist()
        raise ValueError(f"{name}: lower must be <= upper for every feature; reversed at {idx}.")
    if np.any(np.maximum(np.abs(lower), np.abs(upper)) == 0):
        idx = np.flatnonzero(np.maximum(np.abs(lower), np.abs(upper)) == 0).tolist()
        raise ValueError(
            f"{name}: max(|lower|, |upper|) must be > 0 for every feature (used as its "
            f"scale); it is 0 at {idx}."
        )
    return lower, upper


def feature_names_of(X: Any) -> Optional[list]:
    """Column names of a pandas DataFrame, else None."""
    cols = getattr(X, "columns", None)
    if cols is None:
        return None
    return [str(c) for c in cols]


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
        return np.random.default_rng(random_state)
    if callable(getattr(random_state, "rgamma", None)) and callable(getattr(random_state, "rnorm", None)):
        return random_state
    raise TypeError(
        "random_state must be None, an int, a numpy.random.Generator or a pydpowl.RRandom, "
        f"got {type(random_state).__name__}."
    )
