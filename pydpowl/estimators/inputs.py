"""The one input path of DP-wERM and DP-OWL: every rule written once, as a check of a block of rows.

A block check takes one block of rows (the whole data in memory, one chunk of
a Dask array) and returns the arrays prepared from it and the counts the rules
decide from (``block(X, ...) -> (arrays, counts)``): non-finite entries, labels,
rows of norm above 1, weights outside [0, W], treatments, benefits and
propensities outside their ranges, with the first positions. Counts of several
blocks add up (:func:`merge_counts`), and :func:`raise_from_counts` raises the
error of the first rule the whole data breaks (argument, counts of the whole
data, first position, bound). An in-memory fit is the one-block case; a Dask
fit maps the same block check over the chunks
(:func:`pydpowl.estimators.dask_inputs.map_blocks`), so both raise the same error
for the same data and keep the same clip counts.

:func:`check_erm_inputs` prepares DP-wERM data (:class:`ERMData`),
:func:`prepare_owl` DP-OWL's (:class:`OWLProblem`).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import (as_matrix, as_target, as_vector, binary_target_error, check_bool, check_diagnose_bounds,
                           check_positive, check_vector, check_nonnegative, code_labels, columns_by_name,
                           diagnose_bounds as diagnose_bounds_of, feature_names_of, finite_counts, is_chunked,
                           label_counts, nonnegative_message, one_arm_message, position_base, raise_nonfinite,
                           treatment_counts, treatment_error)
from ..engine.preprocessing import FeatureScaler, bounds_from_data
from .propensity_received import received_propensity_error, received_propensity_outside

__all__ = ["ERMData", "OWLProblem", "check_erm_inputs", "prepare_owl", "erm_block", "owl_block", "merge_counts",
           "raise_from_counts", "row_norms", "clip_row_norms", "owl_weights", "clip_benefits", "check_benefit",
           "NORM_SLACK"]

#: slack on ||x_i|| <= 1 for rounding in scaled data
NORM_SLACK = 1e-12

#: why benefits must be non-negative, and what to do (the message of :func:`check_benefit`)
BENEFIT_WHY = "OWL weights are benefit / propensity"
BENEFIT_HINT = ("Give benefit_bounds (public bounds: the benefits are then shifted and clipped to them, counted), or "
                "shift them by a public lower bound first (in Python pydpowl.shift_benefits).")

Counts = Dict[str, Any]


# --------------------------------------------------------------------------- counts of blocks


def _first(mask: NDArray[np.bool_], offset: int) -> int:
    """Position of the first True (counted from the data's first row), or -1."""
    hits = np.flatnonzero(mask)
    return int(hits[0]) + offset if hits.size else -1


def _mask_counts(key: str, mask: NDArray[np.bool_], offset: int) -> Counts:
    return {key: int(np.count_nonzero(mask)), f"first_{key}": _first(mask, offset)}


def merge_counts(*parts: Counts) -> Counts:
    """The counts of consecutive blocks as one: sums, the smallest first positions, the first 6 rows and every
    column holding non-finite values, and up to 3 distinct labels."""
    out = dict(parts[0])
    for part in parts[1:]:
        for key, value in part.items():
            if key.startswith("first_"):
                out[key] = value if out[key] < 0 else (out[key] if value < 0 else min(out[key], value))
            elif key.startswith("nonfinite_rows_"):
                out[key] = tuple(sorted(out[key] + value)[:6])
            elif key.startswith("nonfinite_cols_"):
                out[key] = tuple(sorted(set(out[key]) | set(value)))
            elif key.startswith("values_"):  # up to 3 distinct values (3: "more than 2")
                out[key] = tuple(sorted(set(out[key]) | set(value)))[:3]
            else:
                out[key] += value
    return out


#: endings of the count keys that make a block (and the data) invalid
_PROBLEMS = ("_nan", "_inf", "_bad", "_negative", "_outside", "_too_long", "_over")


def _has_problem(counts: Counts) -> bool:
    return any(v for key, v in counts.items() if not key.startswith("first_") and key.endswith(_PROBLEMS))


# --------------------------------------------------------------------------- the rules, in the order they are judged


def _row_norm_message(c: Counts, n: int, **_: Any) -> str:
    return (f"every row of X must have l2 norm <= 1 (the sensitivity assumes it); {c['rows_too_long']} of {n} rows "
            f"exceed it (first at position {c['first_rows_too_long']}). Scale the features with public bounds "
            "(pydpowl.FeatureScaler), use DPOWL, which does, or clip_rows=True, which divides such rows by their "
            "norm (counted).")


def _unit_weights_message(c: Counts, n: int, *, weights_upper_bound: float, **_: Any) -> str:
    return f"sample_weight=None means unit weights, which exceed weights_upper_bound={weights_upper_bound!r}."


def _weight_message(key: str, end: str):
    def message(c: Counts, n: int, *, weights_upper_bound: float, **_: Any) -> str:
        return (f"sample_weight must lie in [0, weights_upper_bound={weights_upper_bound!r}]; {c[key]} of {n} "
                f"entries {end}")
    return message


def _arms_message(c: Counts, n: int, **_: Any) -> Optional[str]:
    if c["treatment_plus"] and c["treatment_minus"] + c["treatment_zero"]:
        return None
    return one_arm_message("treatment", n, 1 if c["treatment_plus"] else -1)


def _benefit_message(c: Counts, n: int, **_: Any) -> str:
    return nonnegative_message("benefit", c["benefit_negative"], n, c["first_benefit_negative"], why=BENEFIT_WHY,
                               hint=BENEFIT_HINT)


def _propensity_message(c: Counts, n: int, **_: Any) -> str:
    return str(received_propensity_error(c["propensity_outside"], n, c["first_propensity_outside"]).args[0])


#: (argument, the count that triggers the rule or None for "always ask", the message) in the order of the checks
_RULES: Tuple[Tuple[str, Optional[str], Optional[Callable[..., Optional[str]]]], ...] = (
    ("X", None, None),  # non-finite entries (every argument's first rule: raise_nonfinite)
    ("y", None, None),
    ("y", "values_y", lambda c, n, **_: binary_target_error("y", c)),
    ("X", "rows_too_long", _row_norm_message),
    ("sample_weight", "unit_weights_over", _unit_weights_message),
    ("sample_weight", None, None),
    ("sample_weight", "sample_weight_negative", _weight_message("sample_weight_negative", "are negative.")),
    ("sample_weight", "sample_weight_over", _weight_message(
        "sample_weight_over", "exceed the bound (clip them to the public bound first, or raise the bound).")),
    ("treatment", None, None),
    ("treatment", "treatment_bad", lambda c, n, **_: treatment_error(c, n)),
    ("treatment", "treatment_plus", _arms_message),
    ("benefit", None, None),
    ("benefit", "benefit_negative", _benefit_message),
    ("propensity", None, None),
    ("propensity", "propensity_outside", _propensity_message),
)


def raise_from_counts(counts: Counts, n: int, *, n_features: int, weights_upper_bound: Optional[float] = None,
                      columns: Optional[Sequence[str]] = None) -> None:
    """Raise the error of the first rule the counts (of one block or merged) say the data breaks.

    Rules whose counts are absent (another estimator's arguments) are skipped.
    Positions count from 0, or from the caller's base inside
    :func:`~pydpowl._validation.caller_words`, which also names the arguments.
    ``n_features`` is X's number of columns (the size of X in the non-finite
    message), ``columns`` X's column names (None: numbered).
    """
    base = position_base()  # the caller's first position (caller_words; 0 in Python)
    counts = {k: v + base if k.startswith("first_") and v >= 0 else v for k, v in counts.items()}
    for name, key, message in _RULES:
        if message is None:
            if f"{name}_nan" in counts:
                raise_nonfinite(name, counts, n * n_features if name == "X" else n,
                                columns=columns if name == "X" else None)
            continue
        if key not in counts:
            continue
        if key in ("values_y", "treatment_bad", "treatment_plus") or counts[key]:
            text = message(counts, n, weights_upper_bound=weights_upper_bound)
            if text:
                raise ValueError(text)


# --------------------------------------------------------------------------- DP-wERM


@dataclass(frozen=True, eq=False)
class ERMData:
    """DP-wERM data after :func:`check_erm_inputs`: ready for the one release.

    Attributes
    ----------
    X : ndarray of shape (n, d)
        Rows of l2 norm at most 1 (a Dask array for Dask inputs).
    labels : ndarray of shape (n,)
        ``classes[0]`` coded -1, ``classes[1]`` coded +1.
    weights : ndarray of shape (n,)
        In [0, W].
    classes : ndarray of shape (2,)
        The two class labels, sorted (scikit-learn's ``classes_``).
    n_clipped_rows : int
        Rows scaled to norm 1 by ``clip_rows=True`` (0 otherwise); computed
        from the private data: a diagnostic, not a release.
    """

    X: Any
    labels: Any
    weights: Any
    classes: NDArray[Any]
    n_clipped_rows: int = 0


def row_norms(X: NDArray[np.float64]) -> NDArray[np.float64]:
    """The l2 norm of each row."""
    return np.sqrt(np.einsum("ij,ij->i", X, X))


def clip_row_norms(X: NDArray[np.float64]) -> Tuple[NDArray[np.float64], int]:
    """Each row of norm above 1 divided by its norm (a new array), and how many were.

    A public, data-independent map of each record on its own: neighbouring
    datasets stay neighbours and every row then meets the bound ``||x|| <= 1``
    the sensitivity assumes, so the privacy guarantee holds for any input.
    """
    norms = row_norms(X)
    huge = np.isinf(norms)  # squares overflowed (entries near 1e154 or more): scale by the largest entry first
    if huge.any():
        top = np.max(np.abs(X[huge]), axis=1)
        norms[huge] = top * row_norms(X[huge] / top[:, None])
    over = norms > 1.0
    n_over = int(np.count_nonzero(over))
    if n_over:
        X = X / np.where(over, norms, 1.0)[:, None]
    return X, n_over


def erm_block(X: NDArray[Any], y: NDArray[Any], w: Optional[NDArray[Any]], *, offset: int = 0,
              weights_upper_bound: float, clip_rows: bool = False) -> Tuple[Tuple[Any, ...], Counts]:
    """The DP-wERM rules on one block of rows: ``((X, y, w), counts)``.

    ``X`` float64 (rows divided by their norm with ``clip_rows``), ``y`` the
    labels as given (coded once the classes of the whole data are known), ``w``
    float64 (ones for ``w=None``).
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y).ravel()
    s = finite_counts("X", X, offset)
    s.update(label_counts("y", y, offset))
    s["rows_clipped"] = 0
    if clip_rows and not (s["X_nan"] or s["X_inf"]):
        X, s["rows_clipped"] = clip_row_norms(X)
    with np.errstate(invalid="ignore", over="ignore"):
        s.update(_mask_counts("rows_too_long", row_norms(X) > 1.0 + NORM_SLACK, offset))
    if w is None:
        w = np.ones(X.shape[0])
        s["unit_weights_over"] = X.shape[0] if weights_upper_bound < 1.0 else 0
        return (X, y, w), s
    w = np.asarray(w, dtype=np.float64).ravel()
    s.update(finite_counts("sample_weight", w, offset))
    s["sample_weight_negative"] = int(np.count_nonzero(w < 0))
    s["sample_weight_over"] = int(np.count_nonzero(w > weights_upper_bound))
    return (X, y, w), s


def check_erm_inputs(X: ArrayLike, y: ArrayLike, sample_weight: Optional[ArrayLike], weights_upper_bound: float,
                     *, clip_rows: bool = False) -> ERMData:
    """Validate DP-wERM data: rows with norm <= 1 (or clipped to it), two classes, weights in [0, W].

    Dask inputs (any of them) are checked chunk by chunk with the same rules
    (:func:`erm_block` mapped over the chunks; labels then must be numbers) and
    come back as Dask arrays chunked alike.
    """
    names = feature_names_of(X)
    Xa: Any = X  # the data as arrays from here on (numpy, or Dask for Dask inputs)
    ya: Any = y
    w: Any
    if is_chunked(Xa, ya, sample_weight):
        from .dask_inputs import as_matrix_chunked, as_vector_chunked, map_blocks

        Xa = as_matrix_chunked("X", Xa, ya, sample_weight)
        n, rows = Xa.shape[0], Xa.chunks[0]
        ya = as_vector_chunked("y", ya, n, rows)
        w = None if sample_weight is None else as_vector_chunked("sample_weight", sample_weight, n, rows)
        label_dtype = ya.dtype
        (Xa, ya, w), counts = map_blocks(erm_block, [Xa, ya, w], out_columns=(Xa.shape[1], None, None),
                                         merge=merge_counts, weights_upper_bound=weights_upper_bound,
                                         clip_rows=clip_rows)
    else:
        Xa = as_matrix("X", Xa)
        n = Xa.shape[0]
        ya = as_target("y", ya, length=n)
        w = None if sample_weight is None else as_vector("sample_weight", sample_weight, length=n)
        label_dtype = ya.dtype
        (Xa, ya, w), counts = erm_block(Xa, ya, w, weights_upper_bound=weights_upper_bound, clip_rows=clip_rows)
    raise_from_counts(counts, n, n_features=Xa.shape[1], weights_upper_bound=weights_upper_bound, columns=names)
    classes = np.array(counts["values_y"], dtype=label_dtype)
    if is_chunked(ya) and classes[0] == -1 and classes[1] == 1:
        labels = ya  # already coded: no lazy recoding in every pass of the solver
    else:
        labels = code_labels(ya, classes)
    return ERMData(X=Xa, labels=labels, weights=w, classes=classes, n_clipped_rows=counts["rows_clipped"])


# --------------------------------------------------------------------------- DP-OWL


def check_benefit(benefit: ArrayLike, n: int) -> NDArray[np.float64]:
    """Benefits as a finite, non-negative float vector of length ``n``."""
    B = check_vector("benefit", benefit, length=n)
    check_nonnegative("benefit", B, why=BENEFIT_WHY, hint=BENEFIT_HINT)
    return B


def clip_benefits(benefit: NDArray[np.float64], benefit_bound: Optional[float]):
    """``min(B, C_B)`` and the number clipped, when C relies on the bound C_B (else B unchanged, 0).

    A propensity model fitted on the private data bounds the weight sensitivity
    only for benefits in [0, C_B]; larger ones are clipped by design and counted.
    """
    if benefit_bound is None:
        return benefit, 0
    over = benefit > benefit_bound
    return np.where(over, benefit_bound, benefit), int(np.count_nonzero(over))


def owl_weights(benefit: NDArray[np.float64], propensity_received: NDArray[np.float64],
                weights_upper_bound: float):
    """``min(B / p, W)`` and the number of weights clipped at W."""
    w = np.asarray(benefit / propensity_received)
    over = w > weights_upper_bound
    n_over = int(np.count_nonzero(over))
    if n_over:
        np.putmask(w, over, weights_upper_bound)  # in place: no second array of n weights
    return w, n_over


@dataclass(frozen=True, eq=False)
class OWLProblem:
    """A DP-OWL fit's data as a DP-wERM problem, made by :func:`prepare_owl`.

    Everything in it is either public (``scaler``, ``weight_sensitivity``,
    ``weights_upper_bound``: functions of the public settings and n) or
    private data ready for the one release
    (:func:`pydpowl.engine.mechanisms.output.release_output_perturbation`): rows of norm
    at most 1, labels in {-1, 1}, weights in [0, W].

    Attributes
    ----------
    Z : ndarray of shape (n, d)
        Clipped and scaled rows (intercept column first when fitted), each of
        l2 norm at most 1; a Dask array for Dask inputs.
    labels : ndarray of shape (n,)
        Received treatments in {-1, 1} (the DP-wERM labels).
    weights : ndarray of shape (n,)
        OWL weights ``min(min(B, C_B) / P(A | x), W)`` in [0, W].
    weight_sensitivity : float
        C, the bound on the total change of the other subjects' weights when
        one subject is replaced (:func:`~pydpowl.estimators.propensity.propensity_constants`).
    weights_upper_bound : float
        W, the public bound on the weights.
    scaler : FeatureScaler
        The public map to the scaled space (and back, for coefficients).
    n_clipped_weights, n_clipped_features, n_clipped_logits, n_clipped_benefits : int
        How many weights (at W), feature entries (to their bounds), propensity
        logits (to [-M, M]) and benefits (at C_B) were clipped by design.
        Computed from the private data: diagnostics, not releases.
    benefit, propensity_received : ndarray of shape (n,) or None
        PRIVATE. The benefits the weights were made from and ``P(A_i | x_i)``
        (in-memory inputs; None for Dask inputs), for residual weights.
    """

    Z: Any
    labels: Any
    weights: Any
    weight_sensitivity: float
    weights_upper_bound: float
    scaler: FeatureScaler
    n_clipped_weights: int = 0
    n_clipped_features: int = 0
    n_clipped_logits: int = 0
    n_clipped_benefits: int = 0
    benefit: Any = None
    propensity_received: Any = None

    @property
    def n_samples(self) -> int:
        """n, the number of subjects."""
        return int(self.Z.shape[0])


def owl_block(X: NDArray[Any], A: NDArray[Any], B: NDArray[Any], P: Optional[NDArray[Any]], *, offset: int = 0,
              spec: Any, scaler: FeatureScaler, weights_upper_bound: float, benefit_bound: Optional[float],
              columns: Optional[Tuple[list, list]] = None) -> Tuple[Tuple[Any, ...], Counts]:
    """The DP-OWL rules on one block of rows, and, if it passes them, its preparation:
    ``((Z, labels, weights, benefit, propensity_received), counts)``.

    ``P`` is the block of an array of P(A_i | x_i) (``spec`` None), else
    ``spec`` is the scalar or model. The weight sensitivity was resolved for
    the whole data (:func:`~pydpowl.estimators.propensity.propensity_constants`);
    ``benefit_bound`` is the C_B it relies on. ``columns``: the columns a
    propensity model fitted on named columns reads (:func:`_propensity_columns`).
    A block that breaks a rule returns NaN arrays (nothing of it is used).
    """
    from .propensity import resolve_propensity

    X = np.asarray(X, dtype=np.float64)
    A = np.asarray(A, dtype=np.float64).ravel()
    B = np.asarray(B, dtype=np.float64).ravel()
    s = finite_counts("X", X, offset)
    s.update(finite_counts("treatment", A, offset))
    s.update(treatment_counts(A, offset))  # {-1, 1} or {0, 1}, judged on the sums
    A = np.where(A == 0.0, -1.0, A)  # 0 codes -1; a mix of both codings is refused from the counts
    s.update(finite_counts("benefit", B, offset))
    s.update(_mask_counts("benefit_negative", B < 0, offset))
    if P is not None:
        P = np.asarray(P, dtype=np.float64).ravel()
        s.update(finite_counts("propensity", P, offset))
        s.update(_mask_counts("propensity_outside", received_propensity_outside(P), offset))
    k, d = X.shape[0], scaler.n_coefficients
    if _has_problem(s):
        nan = np.full(k, np.nan)
        s.update(clipped_weights=0, clipped_features=0, clipped_logits=0, clipped_benefits=0)
        return (np.full((k, d), np.nan), A, nan, nan, nan), s
    Xp = X
    if columns is not None:  # the propensity model reads a frame of the columns it was fitted on
        import pandas as pd

        Xp = pd.DataFrame(X[:, columns[1]], columns=columns[0])
    resolved = resolve_propensity(spec if P is None else P, Xp, A, weight_sensitivity=None if P is None else 0.0)
    B, n_benefits = clip_benefits(B, benefit_bound)  # C relies on B <= C_B: clipped by design, counted
    w, n_weights = owl_weights(B, resolved.probability, weights_upper_bound)
    Z, n_features = scaler.transform_checked(X)
    s.update(clipped_weights=n_weights, clipped_features=n_features, clipped_logits=resolved.n_clipped_logits,
             clipped_benefits=n_benefits)
    return (Z, A, w, B, resolved.probability), s


def _is_array(value: Any) -> bool:
    return not isinstance(value, (numbers.Real, str, bytes)) and hasattr(value, "__len__") and not hasattr(
        value, "probability_of")


def _propensity_columns(spec: Any, names: Optional[Sequence[str]], p: int):
    """``(fitted names, positions in X)`` of the columns a propensity model fitted on named columns reads,
    matched by name once (an X without names: in order, with the warning of
    :func:`~pydpowl._validation.columns_by_name`); None for any other propensity."""
    fitted = getattr(spec, "feature_names_in_", None)
    if fitted is None:
        return None
    import pandas as pd

    probe = pd.DataFrame(columns=list(names)) if names is not None else np.empty((0, p))
    columns_by_name(probe, fitted, owner=type(spec).__name__)  # refuses a missing column; warns for an array
    fitted = [str(c) for c in fitted]
    return fitted, [list(names).index(c) for c in fitted] if names is not None else list(range(len(fitted)))


def prepare_owl(X: ArrayLike, treatment: ArrayLike, benefit: ArrayLike, propensity: Any = 0.5, *,
                weights_upper_bound: float, feature_bounds: Any, fit_intercept: bool = True,
                weight_sensitivity: Any = None, diagnose_bounds: Any = None) -> OWLProblem:
    """Validate the data and turn it into the DP-wERM problem of DP-OWL (the one preparation).

    The settings are those of :class:`~pydpowl.DPOWL` (public, fixed before
    seeing the data); :meth:`DPOWL.fit <pydpowl.DPOWL.fit>` uses this function,
    and so may validation tools and studies that need the weights or the
    scaled rows without a fit. Dask inputs are prepared chunk by chunk with the
    same block check (:func:`owl_block`; docs/dask.md).

    Parameters
    ----------
    X : array-like or DataFrame of shape (n, p)
    treatment : array-like of shape (n,)
        Received treatment coded {-1, 1} or {0, 1} (0 is -1); both arms must occur.
    benefit : array-like of shape (n,)
        Non-negative benefit (larger is better).
    propensity : float, array-like or LogisticPropensity, default=0.5
        As in :meth:`DPOWL.fit <pydpowl.DPOWL.fit>`.
    weights_upper_bound, feature_bounds, fit_intercept, weight_sensitivity, diagnose_bounds
        As in :class:`~pydpowl.DPOWL`.

    Returns
    -------
    OWLProblem
        For Dask inputs ``Z``, ``labels`` and ``weights`` are Dask arrays
        chunked alike and ``benefit``, ``propensity_received`` are None.
    """
    from .propensity import LogisticPropensity, propensity_constants

    w_max = check_positive("weights_upper_bound", weights_upper_bound)
    fit_intercept = check_bool("fit_intercept", fit_intercept)
    share = check_diagnose_bounds(diagnose_bounds)
    names = feature_names_of(X)  # bounds given by name are matched to them
    chunked = is_chunked(X, treatment, benefit, propensity)
    array = is_chunked(propensity) or _is_array(propensity)
    if chunked:
        from .dask_inputs import as_matrix_chunked, as_vector_chunked, bounds_from_chunks

        Xm = as_matrix_chunked("X", X, treatment, benefit, propensity)
        (n, p), rows = Xm.shape, Xm.chunks[0]

        def vector(name, value):
            return as_vector_chunked(name, value, n, rows, length_of="one per subject")
    else:
        Xm = as_matrix("X", X)
        n, p = Xm.shape

        def vector(name, value):
            return as_vector(name, value, length=n, length_of="one per subject")
    bounds = feature_bounds
    if isinstance(bounds, str) and bounds == "data":  # emits PrivacyLeakWarning: the guarantee is void
        bounds = bounds_from_chunks(Xm) if chunked else bounds_from_data(X if names is not None else Xm)
    scaler = FeatureScaler.from_bounds(bounds, p, fit_intercept, columns=names)
    A, B = vector("treatment", treatment), vector("benefit", benefit)
    P, spec = (vector("propensity", propensity), None) if array else (None, propensity)
    # the benefit bound C_B of a propensity model fitted on private data (C relies on it): clips the benefits
    c_b = propensity_constants(spec, n)[1] if isinstance(spec, LogisticPropensity) else None
    settings = dict(spec=spec, scaler=scaler, weights_upper_bound=w_max, benefit_bound=c_b,
                    columns=_propensity_columns(spec, names, p))
    if chunked:
        from .dask_inputs import map_blocks

        (Z, A, w), counts = map_blocks(owl_block, [Xm, A, B, P], out_columns=(scaler.n_coefficients, None, None),
                                       merge=merge_counts, **settings)
        B = p_received = None
    else:
        (Z, A, w, B, p_received), counts = owl_block(Xm, A, B, P, **settings)
    raise_from_counts(counts, n, n_features=p, columns=names)
    # C from public settings and the total n (after the data's checks: an array's values are judged first)
    C = propensity_constants(np.empty(0) if array else propensity, n, weight_sensitivity=weight_sensitivity,
                             weights_upper_bound=w_max)[0]
    if share is not None:
        diagnose_bounds_of(Xm, scaler.lower, scaler.upper, share, columns=names, owner="DPOWL")
    return OWLProblem(Z=Z, labels=A, weights=w, weight_sensitivity=float(C), weights_upper_bound=w_max,
                      scaler=scaler, n_clipped_weights=counts["clipped_weights"],
                      n_clipped_features=counts["clipped_features"], n_clipped_logits=counts["clipped_logits"],
                      n_clipped_benefits=counts["clipped_benefits"], benefit=B, propensity_received=p_received)
