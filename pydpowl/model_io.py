"""JSON export and strict import of a released DP-OWL model.

The file holds only the private output (the noisy coefficients) and public
settings: nothing computed from the data without noise (no n, no clip counts,
no non-private solution, no noise). Fields (format version 1):

==========================  ======================================================
``format``                  ``"pydpowl.dpowl-model"``
``format_version``          ``1``
``package_version``         pydpowl version that wrote the file
``epsilon``                 budget of this release (finite, > 0)
``epsilon_total``           total budget the pipeline spent on the data (>= epsilon;
                            larger when gamma was tuned on the same data)
``tuning``                  how gamma was chosen (text)
``gamma``                   regularisation constant (> 0)
``weights_upper_bound``     W (> 0)
``weight_sensitivity``      C (>= 0)
``huber_h``                 Huber smoothing h (> 0)
``fit_intercept``           bool
``feature_names``           list of p distinct non-empty strings
``feature_bounds``          ``{"lower": [p numbers], "upper": [p numbers]}``
``intercept``               released intercept (0 when ``fit_intercept`` is false)
``coef``                    released coefficients, p numbers (original feature scale)
``treatment_labels``        ``{"+1": text, "-1": text}``: what the two arms are
``checksum``                ``{"sha256": hex}`` over the canonical content
==========================  ======================================================

The checksum is SHA-256 of the canonical JSON of every other field (keys
sorted, no whitespace, UTF-8). It detects accidental or careless edits; it is
not a signature (anyone can recompute it).

Loading validates strictly and raises :class:`ModelFileError` with a
one-line message naming the field: malformed JSON, duplicate keys,
unknown or missing fields, wrong format or version, wrong types, non-finite
numbers, inconsistent lengths, reversed bounds, or a checksum mismatch.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._base import check_is_fitted
from ._validation import check_array

__all__ = ["FORMAT", "FORMAT_VERSION", "ModelFileError", "ReleasedModel", "export_model", "load_model",
           "model_to_dict", "canonical_checksum"]

FORMAT = "pydpowl.dpowl-model"
FORMAT_VERSION = 1

_FIELDS = ("format", "format_version", "package_version", "epsilon", "epsilon_total", "tuning", "gamma",
           "weights_upper_bound", "weight_sensitivity", "huber_h", "fit_intercept", "feature_names",
           "feature_bounds", "intercept", "coef", "treatment_labels", "checksum")


class ModelFileError(ValueError):
    """A model file is malformed, inconsistent or tampered with (one-line message)."""


@dataclass(frozen=True)
class ReleasedModel:
    """A released DP-OWL rule, as read from a model file.

    Attributes mirror the file's fields; :meth:`predict` applies the rule
    ``sign(intercept + x'coef)`` (+1 where positive, as :class:`pydpowl.DPOWL`).
    """

    epsilon: float
    epsilon_total: float
    tuning: str
    gamma: float
    weights_upper_bound: float
    weight_sensitivity: float
    huber_h: float
    fit_intercept: bool
    feature_names: Tuple[str, ...]
    lower: Tuple[float, ...]
    upper: Tuple[float, ...]
    intercept: float
    coef: Tuple[float, ...]
    treatment_labels: Tuple[str, str]
    package_version: str

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """``intercept + X @ coef``; a DataFrame is matched by column name."""
        cols = getattr(X, "columns", None)
        if cols is not None:
            missing = [c for c in self.feature_names if c not in cols]
            if missing:
                raise ValueError(f"X lacks the model's feature column(s) {missing}.")
            X = X[list(self.feature_names)]
        X = check_array("X", X)
        if X.shape[1] != len(self.coef):
            raise ValueError(f"X must have {len(self.coef)} columns (the model's features), got {X.shape[1]}.")
        return X @ np.asarray(self.coef) + self.intercept

    def predict(self, X: ArrayLike) -> NDArray[np.int64]:
        """Recommended treatment in {-1, 1}."""
        return np.where(self.decision_function(X) > 0, 1, -1)

    def outside_bounds(self, X: ArrayLike) -> int:
        """Number of rows with a feature outside the public bounds (prediction does not clip)."""
        cols = getattr(X, "columns", None)
        if cols is not None:
            X = X[list(self.feature_names)]
        X = check_array("X", X)
        return int(np.any((X < np.asarray(self.lower)) | (X > np.asarray(self.upper)), axis=1).sum())


def canonical_checksum(content: Dict[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of ``content`` (without ``checksum``)."""
    body = {k: v for k, v in content.items() if k != "checksum"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def model_to_dict(model: Any, *, feature_names: Optional[Sequence[str]] = None, epsilon_total: Optional[float] = None,
                  tuning: str = "gamma fixed in advance (no tuning on the private data)",
                  treatment_labels: Tuple[str, str] = ("+1", "-1")) -> Dict[str, Any]:
    """The file content of a fitted :class:`pydpowl.DPOWL` (private release + public settings).

    The coefficients are the model's floating-point-safe release (``scaled_coef_``
    on its power-of-two grid, mapped to the original space), passed once more
    through :func:`pydpowl.engine.mechanisms.round_release`, the one function
    that makes releases safe (idempotent on the grid).

    Raises
    ------
    ValueError
        For a non-private model (``epsilon = inf``): such a model is not a
        release; and for a validation fit with ``reproduce_dppack=True``, whose
        full-precision coefficients are not floating-point safe.
    """
    from . import __version__
    from .engine.mechanisms import round_release

    check_is_fitted(model)
    arms = getattr(model, "classes_", ())
    if len(arms) > 2:
        raise ValueError(f"model.json holds two-arm rules only; this DPOWL has {len(arms)} arms "
                         f"({', '.join(str(a) for a in arms)}): keep the fitted object (pickle) for now.")
    eps = float(model.epsilon)
    if not math.isfinite(eps):
        raise ValueError("only private models can be exported: epsilon=inf is the exact, non-private rule.")
    grid = getattr(model, "release_grid_", None)
    if grid is None:
        raise ValueError("this model's release is not floating-point safe (fitted with reproduce_dppack=True, for "
                         "validation against DPpack, or by an older pydpowl): refit it with the default "
                         "reproduce_dppack=False before exporting.")
    total = eps if epsilon_total is None else float(epsilon_total)
    if not (math.isfinite(total) and total >= eps):
        raise ValueError(f"epsilon_total must be finite and >= epsilon={eps:g}, got epsilon_total={epsilon_total!r}.")
    scaler = model.scaler_
    # Full-precision floating-point releases leak through their last bits (Mironov, CCS 2012; measured by
    # validation.audit's bit-level test): the file holds the grid values, mapped back (post-processing).
    safe = round_release(model.scaled_coef_, np.zeros_like(model.scaled_coef_), grid=grid)
    original = scaler.coef_to_original(safe)
    intercept, coef = (float(original[0]), original[1:]) if scaler.fit_intercept else (0.0, original)
    names = list(feature_names) if feature_names is not None else (
        getattr(model, "feature_names_in_", None) or [f"x{j + 1}" for j in range(scaler.n_features)])
    content: Dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "package_version": str(__version__),
        "epsilon": eps,
        "epsilon_total": total,
        "tuning": str(tuning),
        "gamma": float(model.gamma),
        "weights_upper_bound": float(model.weights_upper_bound),
        "weight_sensitivity": float(model.weight_sensitivity_),
        "huber_h": float(model.huber_h),
        "fit_intercept": bool(scaler.fit_intercept),
        "feature_names": [str(n) for n in names],
        "feature_bounds": {"lower": [float(v) for v in scaler.lower], "upper": [float(v) for v in scaler.upper]},
        "intercept": intercept,
        "coef": [float(v) for v in coef],
        "treatment_labels": {"+1": str(treatment_labels[0]), "-1": str(treatment_labels[1])},
    }
    _validate(content, check_sum=False)
    content["checksum"] = {"sha256": canonical_checksum(content)}
    return content


def export_model(model: Any, path: Union[str, Path], **kwargs: Any) -> Path:
    """Write a fitted DP-OWL model to ``path`` as JSON; keyword arguments as in :func:`model_to_dict`."""
    content = model_to_dict(model, **kwargs)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content, indent=2, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8")
    return path


def _no_constants(name: str):
    raise ModelFileError(f"model file: non-finite number {name} is not allowed.")


def _pairs(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ModelFileError(f"model file: duplicate key {k!r}.")
        out[k] = v
    return out


def load_model(path: Union[str, Path]) -> ReleasedModel:
    """Read and validate a model file written by :func:`export_model`.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ModelFileError
        If the file is malformed, inconsistent or its checksum does not match.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"model file not found: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ModelFileError(f"model file {path.name} is not UTF-8 text.") from None
    return model_from_json(text)


def model_from_json(text: str) -> ReleasedModel:
    """Validate the JSON text of a model file (see :func:`load_model`)."""
    try:
        content = json.loads(text, object_pairs_hook=_pairs, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise ModelFileError(f"model file is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}).") \
            from None
    _validate(content, check_sum=True)
    b = content["feature_bounds"]
    labels = content["treatment_labels"]
    return ReleasedModel(
        epsilon=float(content["epsilon"]), epsilon_total=float(content["epsilon_total"]), tuning=content["tuning"],
        gamma=float(content["gamma"]), weights_upper_bound=float(content["weights_upper_bound"]),
        weight_sensitivity=float(content["weight_sensitivity"]), huber_h=float(content["huber_h"]),
        fit_intercept=content["fit_intercept"], feature_names=tuple(content["feature_names"]),
        lower=tuple(float(v) for v in b["lower"]), upper=tuple(float(v) for v in b["upper"]),
        intercept=float(content["intercept"]), coef=tuple(float(v) for v in content["coef"]),
        treatment_labels=(labels["+1"], labels["-1"]), package_version=content["package_version"],
    )


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _number(content: Dict[str, Any], key: str, *, low: float, low_open: bool) -> float:
    v = content[key]
    if not _is_number(v):
        raise ModelFileError(f"model file: {key} must be a number, got {type(v).__name__}.")
    v = float(v)
    if not math.isfinite(v):
        raise ModelFileError(f"model file: {key} must be finite.")
    if v < low or (low_open and v == low):
        interval = f"({low:g}, inf)" if low_open else f"[{low:g}, inf)"
        raise ModelFileError(f"model file: {key} must be in {interval}, got {v!r}.")
    return v


def _numbers(value: Any, key: str, length: int) -> List[float]:
    if not isinstance(value, list):
        raise ModelFileError(f"model file: {key} must be a list of numbers, got {type(value).__name__}.")
    if len(value) != length:
        raise ModelFileError(f"model file: {key} must have {length} entries (one per feature), got {len(value)}.")
    for i, v in enumerate(value):
        if not _is_number(v):
            raise ModelFileError(f"model file: {key}[{i}] must be a number, got {type(v).__name__}.")
        if not math.isfinite(float(v)):
            raise ModelFileError(f"model file: {key}[{i}] must be finite.")
    return [float(v) for v in value]


def _validate(content: Any, *, check_sum: bool) -> None:
    if not isinstance(content, dict):
        raise ModelFileError(f"model file must hold a JSON object, got {type(content).__name__}.")
    expected = set(_FIELDS) if check_sum else set(_FIELDS) - {"checksum"}
    unknown = sorted(set(content) - expected)
    if unknown:
        raise ModelFileError(f"model file: unknown field(s) {unknown}.")
    missing = [k for k in _FIELDS if k in expected and k not in content]
    if missing:
        raise ModelFileError(f"model file: missing field(s) {missing}.")
    if content["format"] != FORMAT:
        raise ModelFileError(f"model file: format must be {FORMAT!r}, got {content['format']!r}.")
    version = content["format_version"]
    if not isinstance(version, int) or isinstance(version, bool):
        raise ModelFileError(f"model file: format_version must be an integer, got {type(version).__name__}.")
    if version != FORMAT_VERSION:
        raise ModelFileError(f"model file: format_version {version} is not supported (this pydpowl reads "
                             f"version {FORMAT_VERSION}).")
    for key in ("package_version", "tuning"):
        if not isinstance(content[key], str):
            raise ModelFileError(f"model file: {key} must be a string, got {type(content[key]).__name__}.")
    eps = _number(content, "epsilon", low=0.0, low_open=True)
    total = _number(content, "epsilon_total", low=0.0, low_open=True)
    if total < eps:
        raise ModelFileError(f"model file: epsilon_total ({total:g}) must be >= epsilon ({eps:g}).")
    for key in ("gamma", "weights_upper_bound", "huber_h"):
        _number(content, key, low=0.0, low_open=True)
    _number(content, "weight_sensitivity", low=0.0, low_open=False)
    if not isinstance(content["fit_intercept"], bool):
        raise ModelFileError("model file: fit_intercept must be true or false.")
    names = content["feature_names"]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
        raise ModelFileError("model file: feature_names must be a non-empty list of non-empty strings.")
    if len(set(names)) != len(names):
        raise ModelFileError("model file: feature_names must be distinct.")
    p = len(names)
    bounds = content["feature_bounds"]
    if not isinstance(bounds, dict) or set(bounds) != {"lower", "upper"}:
        raise ModelFileError("model file: feature_bounds must be an object with exactly 'lower' and 'upper'.")
    lower = _numbers(bounds["lower"], "feature_bounds.lower", p)
    upper = _numbers(bounds["upper"], "feature_bounds.upper", p)
    reversed_ = [i for i, (lo, hi) in enumerate(zip(lower, upper)) if lo > hi]
    if reversed_:
        raise ModelFileError(f"model file: feature_bounds lower > upper at position(s) {reversed_}.")
    _numbers(content["coef"], "coef", p)
    intercept = content["intercept"]
    if not _is_number(intercept) or not math.isfinite(float(intercept)):
        raise ModelFileError("model file: intercept must be a finite number.")
    if not content["fit_intercept"] and float(intercept) != 0.0:
        raise ModelFileError("model file: intercept must be 0 when fit_intercept is false.")
    labels = content["treatment_labels"]
    if not isinstance(labels, dict) or set(labels) != {"+1", "-1"} or not all(
            isinstance(v, str) for v in labels.values()):
        raise ModelFileError("model file: treatment_labels must be an object with string fields '+1' and '-1'.")
    if check_sum:
        cs = content["checksum"]
        if not isinstance(cs, dict) or set(cs) != {"sha256"} or not isinstance(cs["sha256"], str):
            raise ModelFileError("model file: checksum must be an object with exactly one field 'sha256'.")
        if cs["sha256"] != canonical_checksum(content):
            raise ModelFileError("model file: checksum mismatch: the content was modified after export.")
