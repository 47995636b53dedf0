"""A user's own CSV as DP-OWL data: columns, coding and public settings, stated.

:func:`owl_data_from_frame` turns a table with a treatment column, a benefit
column and numeric feature columns into :class:`~pydpowl.datasets.OWLData`,
with the public settings the analyst supplies (feature bounds, the weight bound
W, propensities). Every coding choice is recorded in the result's ``notes`` so
commands can print it; counts computed from the data (rows, subjects per arm,
values clipped) go to ``diagnostics`` instead, which is not private and is
printed only on request. Nothing public is read off the data: bounds, W and the
benefit shift must be given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from .._validation import check_bounds, check_positive, resolve_feature_bounds
from ..estimators.benefits import shift_benefits
from ._container import OWLData
from ..estimators.propensity_received import arm_propensity

__all__ = ["read_table", "parse_bounds", "parse_propensity", "owl_data_from_frame", "treatment_codes",
           "propensity_statement", "treatment_levels", "parse_arm_propensity"]


#: characters that make a path a pattern of several files (as ``glob`` reads them)
_GLOB_CHARS = frozenset("*?[")


def read_table(path: Union[str, Path]) -> pd.DataFrame:
    """Read one CSV into memory (UTF-8, an optional byte-order mark is ignored).

    Raises
    ------
    FileNotFoundError
        If ``path`` is not a file; the message says when it is a pattern of
        several files (read by ``pydpowl fit --engine dask``).
    ValueError
        If the file cannot be read as CSV or has a header but no data rows.
    """
    path = Path(path)
    if not path.is_file():
        if _GLOB_CHARS & set(str(path)):
            raise FileNotFoundError(f"data file not found: {path} is a pattern of several files; this reads one "
                                    "CSV into memory: give one file, or read several with 'pydpowl fit --engine "
                                    "dask'.")
        raise FileNotFoundError(f"data file not found: {path}")
    try:
        frame = pd.read_csv(path, encoding="utf-8-sig")
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"could not read {path.name} as CSV: {first}") from None
    if frame.shape[0] == 0:
        raise ValueError(f"{path.name} has a header but no data rows (columns {list(frame.columns)[:10]}).")
    return frame


def parse_bounds(text: str, features: Sequence[str]) -> Tuple[np.ndarray, np.ndarray]:
    """Public feature bounds from ``"age=18:89,male=0:1"`` (by name) or ``"18:89,0:1"`` (in feature order).

    Every feature needs a bound; names must match ``features``.
    """
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    if not items:
        raise ValueError("bounds must list 'lower:upper' for every feature, e.g. age=18:89,male=0:1.")
    named = all("=" in t for t in items)
    if not named and any("=" in t for t in items):
        raise ValueError("bounds: give either every bound by name (name=lo:hi) or every bound by position (lo:hi).")
    pairs: Dict[Union[str, int], Tuple[float, float]] = {}  # by name, or by position
    for k, item in enumerate(items):
        key: Union[str, int] = k  # by position, or by name:
        if named:
            name, _, rng_text = item.partition("=")
            key = name.strip()
        else:
            rng_text = item
        parts = rng_text.split(":")
        if len(parts) != 2:
            raise ValueError(f"bounds: {item!r} is not of the form {'name=' if named else ''}lower:upper.")
        try:
            lo, hi = float(parts[0]), float(parts[1])
        except ValueError:
            raise ValueError(f"bounds: {item!r} does not hold two numbers.") from None
        if key in pairs:
            raise ValueError(f"bounds: feature {key!r} is given twice.")
        pairs[key] = (lo, hi)
    if named:
        unknown = sorted(str(key) for key in set(pairs) - set(features))  # every key is a name here
        missing = [f for f in features if f not in pairs]
        if unknown:
            raise ValueError(f"bounds: {unknown} are not among the features {list(features)}.")
        if missing:
            raise ValueError(f"bounds: no bound for feature(s) {missing}; every feature needs a public bound.")
        rows = [pairs[f] for f in features]
    else:
        if len(pairs) != len(features):
            raise ValueError(f"bounds: got {len(pairs)} bound(s) for {len(features)} feature(s) {list(features)}.")
        rows = [pairs[k] for k in range(len(features))]
    lower = np.array([r[0] for r in rows])
    upper = np.array([r[1] for r in rows])
    return check_bounds("bounds", (lower, upper), len(features))


def parse_propensity(text: Any) -> Union[float, str]:
    """``"0.5"`` -> 0.5 (P(treatment = +1), randomised); ``"column:NAME"`` -> ``"NAME"`` (P(+1 | x) per row)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    text = str(text).strip()
    if text.startswith("column:"):
        name = text[len("column:"):].strip()
        if not name:
            raise ValueError("propensity: 'column:' needs a column name, e.g. column:pscore.")
        return name
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"propensity must be a probability (e.g. 0.5) or column:NAME, got {text!r}.") from None
    if not 0.0 < value < 1.0:
        raise ValueError(f"propensity (P(treatment = +1)) must be in (0, 1), got {value!r}.")
    return value


def treatment_levels(values: pd.Series) -> List[str]:
    """The distinct values of a treatment column as text (stripped), sorted: the arm labels (public, as a
    classifier's ``classes_``)."""
    return sorted(values.astype(str).str.strip().unique())


def parse_arm_propensity(text: Any, arms: Sequence[str]) -> Union[float, dict]:
    """The design's arm probabilities for ``K >= 3`` arms: ``None`` -> 1/K (balanced), a number (must be
    1/K: checked by :func:`pydpowl.estimators.multiarm.resolve_arm_propensity`), or
    ``"arm=probability,..."`` naming every arm (a design with unequal allocation).

    Raises
    ------
    ValueError
        For ``column:NAME`` (a column holds one probability per row, the received arm's: with K arms
        give the design's probabilities) or text that is neither a number nor ``arm=probability`` pairs.
    """
    if text is None:
        return 1.0 / len(arms)
    if isinstance(text, dict):
        return dict(text)
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    text = str(text).strip()
    if text.startswith("column:"):
        raise ValueError(f"propensity {text!r}: with {len(arms)} arms give the design's probabilities, a number "
                         "1/K or arm=probability,... naming every arm (a column of P(+1 | x) describes two arms).")
    if "=" not in text:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"propensity must be 1/K or arm=probability,... (arms {list(arms)}), got "
                             f"{text!r}.") from None
    out = {}
    for item in (t.strip() for t in text.split(",") if t.strip()):
        arm, _, value = item.partition("=")
        try:
            out[arm.strip()] = float(value)
        except ValueError:
            raise ValueError(f"propensity: {item!r} is not arm=probability.") from None
    return out


def treatment_codes(values: pd.Series, treated: Optional[str] = None) -> Tuple[np.ndarray, str, str]:
    """Code a treatment column as {-1, 1}: ``(A, label_plus, label_minus)``.

    ``treated`` names the value coded +1 (the other value is -1). Without it,
    values {-1, 1} are kept and values {0, 1} map 1 -> +1, 0 -> -1.
    """
    text = values.astype(str).str.strip()
    levels = sorted(text.unique())
    if len(levels) != 2:
        raise ValueError(f"the treatment column must take exactly 2 values, got {len(levels)}."
                         + (f" (treated={treated!r} names the arm coded +1 of two arms; with three or more arms "
                            "leave it out: the rule chooses among the labels)" if treated is not None
                            and len(levels) > 2 else ""))
    if treated is not None:
        treated = str(treated).strip()
        if treated not in levels:
            raise ValueError(f"treated value {treated!r} does not occur in the treatment column (values {levels}).")
        other = levels[0] if levels[1] == treated else levels[1]
        return np.where(text == treated, 1.0, -1.0), treated, other
    numeric = pd.to_numeric(values, errors="coerce")
    if numeric.notna().all():
        uniq = set(numeric.unique().tolist())
        if uniq == {-1.0, 1.0}:
            return np.where(numeric > 0, 1.0, -1.0), "1", "-1"
        if uniq == {0.0, 1.0}:
            return np.where(numeric > 0, 1.0, -1.0), "1", "0"
    raise ValueError(f"treatment values {levels} are not -1/1 or 0/1; name the arm coded +1 with --treated VALUE.")


def propensity_statement(propensity: Union[float, str], weight_sensitivity: Any) -> Tuple[str, Any]:
    """The note on the propensities and the weight sensitivity C the data carry (one rule for every reader).

    A scalar ``P(+1)`` is a randomised trial: C = 0 unless the analyst states
    otherwise. A column of ``P(+1 | x)`` carries exactly what the analyst
    stated (None: :class:`pydpowl.DPOWL` then refuses to guess).
    """
    if isinstance(propensity, str):
        stated = weight_sensitivity
        note = f"propensity: P(+1 | x) from column {propensity!r}" + (
            "" if stated is None else f"; weight sensitivity C stated as {stated}")
    else:
        stated = 0.0 if weight_sensitivity is None else weight_sensitivity
        note = f"propensity: P(+1) = {propensity:g} (randomised)"
    return note, stated


def owl_data_from_frame(frame: pd.DataFrame, *, treatment: str, benefit: str, features: Sequence[str],
                        bounds: Any, weights_upper_bound: float, propensity: Any = 0.5,
                        treated: Optional[str] = None, benefit_lower_bound: Optional[float] = None,
                        weight_sensitivity: Any = None, source: str = "user data") -> OWLData:
    """Build :class:`OWLData` from a table and public settings, recording the coding in ``notes``.

    ``notes`` and ``description`` are public (coding choices and the source);
    the counts computed from the data (rows read, subjects per arm, benefits
    clipped at ``benefit_lower_bound``) are in ``diagnostics`` (not private).

    Parameters
    ----------
    frame : DataFrame
    treatment, benefit : str
        Column names. Larger benefit is better.
    features : sequence of str
        Numeric feature columns.
    bounds : str, dict or (lower, upper)
        Public feature bounds: text (:func:`parse_bounds`), by name
        (``{column: (lower, upper)}``, any order) or a pair in the order of ``features``.
    weights_upper_bound : float
        Public bound W on ``B / P(A | x)``.
    propensity : float, str or None, default=0.5
        P(treatment = +1) in a randomised study, or ``"column:NAME"`` / a column
        name holding P(+1 | x) per row. With three or more arms in the
        treatment column (the labels are then kept as text, sorted): 1/K, a
        mapping or text ``"arm=P,..."`` naming every arm
        (:func:`parse_arm_propensity`); None: 0.5 for two arms, 1/K for K.
    treated : str, optional
        Value of the treatment column coded +1.
    benefit_lower_bound : float, optional
        Public lower bound of the benefit: benefits are shifted by it (values
        below are clipped to it, counted). Without it benefits must be >= 0.
    weight_sensitivity : float, "trivial" or None, default=None
        C for propensities read from a column (see :class:`pydpowl.DPOWL`): 0
        when the column holds known probabilities or estimates from
        independent data. A constant propensity is a known randomisation
        probability (C = 0); stating more is allowed.
    source : str
        Shown in the description.
    """
    features = [str(f) for f in features]
    if not features:
        raise ValueError("features must name at least one column.")
    if len(set(features)) != len(features):
        raise ValueError("features must not repeat a column.")
    needed: List[str] = [treatment, benefit, *features]
    arms = treatment_levels(frame[treatment].dropna()) if treatment in frame.columns else []
    multi = len(arms) >= 3  # K arms: the labels themselves, the design's arm probabilities
    multi = multi and treated is None  # with treated: two arms (treatment_codes names the problem)
    # K arms: 1/K or {arm: probability}; two arms: P(+1) or the name of its column
    arm_prop: Union[float, dict] = parse_arm_propensity(propensity, arms) if multi else 0.0
    prop: Union[float, str] = 0.0 if multi else parse_propensity(0.5 if propensity is None else propensity)
    if isinstance(prop, str):
        needed.append(prop)
    missing = [c for c in dict.fromkeys(needed) if c not in frame.columns]
    if missing:
        raise ValueError(f"{source}: missing column(s) {missing}; columns present: {list(frame.columns)[:20]}.")
    if treatment in features or benefit in features:
        raise ValueError("the treatment and benefit columns must not be features.")
    na = frame[list(dict.fromkeys(needed))].isna().sum()
    if na.any():
        bad = {k: int(v) for k, v in na.items() if v}
        raise ValueError(f"{source}: missing values in {bad} (counts); remove or impute them first.")
    if multi:
        A, plus, minus = frame[treatment].astype(str).str.strip().to_numpy(dtype=object), None, None
    else:
        A, plus, minus = treatment_codes(frame[treatment], treated)
    X = pd.DataFrame({f: pd.to_numeric(frame[f], errors="coerce") for f in features})
    bad_cols = [f for f in features if X[f].isna().any()]
    if bad_cols:
        raise ValueError(f"{source}: feature column(s) {bad_cols} are not numeric; code categories as 0/1 columns.")
    infinite = {f: int(np.isinf(X[f].to_numpy(dtype=float)).sum()) for f in features}
    infinite = {f: k for f, k in infinite.items() if k}
    if infinite:
        raise ValueError(f"{source}: infinite values in feature column(s) {infinite} (counts); remove them first.")
    B = pd.to_numeric(frame[benefit], errors="coerce")
    if B.isna().any():
        raise ValueError(f"{source}: benefit column {benefit!r} is not numeric ({int(B.isna().sum())} entries).")
    if np.isinf(B.to_numpy(dtype=float)).any():
        raise ValueError(f"{source}: benefit column {benefit!r} has {int(np.isinf(B.to_numpy(dtype=float)).sum())} "
                         "infinite entries; remove them first.")
    B = B.to_numpy(dtype=float)
    coding = f"{len(arms)} arms {', '.join(arms)}" if multi else f"+1 = {plus}, -1 = {minus}"
    notes = [f"treatment {treatment!r}: {coding}",
             f"benefit {benefit!r} (larger is better)",
             f"features {features}"]
    if multi:
        diagnostics = {"rows read": int(len(A)), **{f"treatment {a}": int(np.count_nonzero(A == a)) for a in arms}}
    else:
        n_plus = int((A > 0).sum())
        diagnostics = {"rows read": int(len(A)), f"treatment +1 ({plus})": n_plus,
                       f"treatment -1 ({minus})": int(len(A)) - n_plus}
    if benefit_lower_bound is not None:
        B, n_clip = shift_benefits(B, float(benefit_lower_bound))
        notes.append(f"benefit shifted by the public lower bound {float(benefit_lower_bound):g}; values below it "
                     "are clipped to it")
        diagnostics["benefits below the lower bound (clipped)"] = n_clip
    lower, upper = parse_bounds(bounds, features) if isinstance(bounds, str) else resolve_feature_bounds(
        "bounds", bounds, len(features), features)
    W = check_positive("weights_upper_bound", weights_upper_bound)
    if multi:
        from ..estimators.multiarm import encode_arms, resolve_arm_propensity

        classes, codes = encode_arms("treatment", A)
        p_recv = resolve_arm_propensity(arm_prop, classes, codes, name="propensity").probability
    elif isinstance(prop, str):
        p_plus = pd.to_numeric(frame[prop], errors="coerce").to_numpy(dtype=float)
        outside = ~((p_plus > 0) & (p_plus < 1))
        if outside.any():
            raise ValueError(f"{source}: propensity column {prop!r} must hold probabilities in (0, 1); "
                             f"{int(outside.sum())} of {len(p_plus)} entries do not.")
        p_recv = arm_propensity(p_plus, A)
    else:
        p_recv = arm_propensity(prop, A)
    if multi:  # the design's probabilities (public): C = 0 unless more is stated
        note = "propensity: " + (f"P(A = a) = 1/{len(arms)} for each arm (randomised)" if not isinstance(arm_prop, dict)
                                 else ", ".join(f"P({a}) = {arm_prop[a]:g}" for a in arms) + " (randomised)")
        stated = 0.0 if weight_sensitivity is None else weight_sensitivity
    else:
        note, stated = propensity_statement(prop, weight_sensitivity)
    notes.append(note)
    notes.append(f"public settings: bounds {dict(zip(features, zip(lower.tolist(), upper.tolist())))}, W = {W:g}")
    return OWLData(
        X=X.reset_index(drop=True), treatment=A, benefit=B, propensity=p_recv,
        feature_bounds=(lower, upper), weights_upper_bound=W, optimal=None,
        description=source, notes=tuple(notes), weight_sensitivity=stated, diagnostics=diagnostics,
    )
