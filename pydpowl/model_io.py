"""JSON export and strict import of a released DP-OWL model.

The file holds only the private output (the noisy coefficients) and public
settings: nothing computed from the data without noise (no n, no clip counts,
no non-private solution, no noise). Fields (format version 2):

==========================  ======================================================
``format``                  ``"pydpowl.dpowl-model"``
``format_version``          ``2`` (version 1 files, without ``mechanism``, are still read)
``package_version``         pydpowl version that wrote the file
``epsilon``                 budget of this release (finite, > 0)
``epsilon_total``           total budget the pipeline spent on the data (>= epsilon;
                            larger when gamma was tuned on the same data)
``tuning``                  how gamma was chosen (text)
``gamma``                   regularisation constant (> 0)
``weights_upper_bound``     W (> 0)
``weight_sensitivity``      C (>= 0)
``huber_h``                 Huber smoothing h (> 0)
``mechanism``               how the rule was released (text; version 2; version 1
                            files were all output perturbation with OWL weights)
``fit_intercept``           bool
``feature_names``           list of p distinct non-empty strings
``feature_bounds``          ``{"lower": [p numbers], "upper": [p numbers]}``
``intercept``               released intercept (0 when ``fit_intercept`` is false)
``coef``                    released coefficients, p numbers (original feature scale)
``treatment_labels``        ``{"+1": text, "-1": text}``: what the two arms are
``signature``               optional: ``{"hmac-sha256": hex}``, a keyed signature
``checksum``                ``{"sha256": hex}`` over the canonical content
==========================  ======================================================

The checksum is SHA-256 of the canonical JSON of every other field (keys
sorted, no whitespace, UTF-8). It detects accidental or careless edits
(a truncated copy, a hand-edited number); it is NOT a protection against
forgery: anyone can change the coefficients and recompute it. When integrity
against tampering matters, sign the file with a secret key that only its
holders know (``export_model(..., key=)``, ``pydpowl fit --key-file``): the
``signature`` is HMAC-SHA256 under that key of the canonical JSON of every
field but ``checksum`` and ``signature``, and ``load_model(..., key=)``
(``pydpowl predict --key-file``) refuses a file whose signature is missing or
does not match. Without the key a signed file loads with its checksum checked
and ``signature_verified=False``.

Several arms or several stages (format version 3)
--------------------------------------------------
A rule for ``K >= 3`` arms (:class:`pydpowl.DPOWL` fitted on three or more
labels) or a multi-stage regime (:class:`pydpowl.estimators.multistage.DPMultiStageOWL`)
is written as format version 3 (two-arm rules keep version 2, so files of
older pydpowl versions and older readers are unaffected). The top level holds
``format``, ``format_version`` (3), ``package_version``, ``kind``
(``"multiarm"`` or ``"multistage"``), ``epsilon`` (the sum of the stages'
budgets: sequential composition), ``epsilon_total``, ``tuning``,
``mechanism``, ``stages`` and, as above, ``signature`` and ``checksum``. Each
stage (stage 1 first) holds ``stage`` (1, 2, ...), its ``epsilon``,
``gamma``, ``weights_upper_bound``, ``weight_sensitivity``, ``huber_h``,
``fit_intercept``, ``feature_names``, ``feature_bounds``, ``arms`` (the K
labels in the rule's order, all strings or all numbers), ``vertices`` (the
``K x (K - 1)`` simplex vertices of :func:`pydpowl.engine.multicategory.simplex_vertices`,
written out and checked against it on loading), ``intercept`` (``K - 1``
numbers) and ``coef`` (``K - 1`` rows of ``p`` numbers): the stage's rule
recommends ``argmax_a <V_a, intercept + coef x>`` (the first arm on ties).
Each stage's features are matched by name, so a later stage's history
columns (earlier treatments, intermediate outcomes) are named in the file and
read from the data by :meth:`ReleasedRegime.predict`.

Loading validates strictly and raises :class:`ModelFileError` with a
one-line message naming the field: malformed JSON, duplicate keys,
unknown or missing fields, wrong format or version, wrong types, non-finite
numbers, inconsistent lengths, reversed bounds, a checksum mismatch, or (with
a key) a missing or mismatched signature.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import numbers
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._base import check_is_fitted
from .engine.multicategory import arm_scores, recommend, simplex_vertices
from ._validation import check_array, columns_by_name, feature_names_of

__all__ = ["FORMAT", "FORMAT_VERSION", "REGIME_FORMAT_VERSION", "ModelFileError", "ReleasedModel",
           "ReleasedStage", "ReleasedRegime", "export_model", "load_model", "model_to_dict", "canonical_checksum",
           "canonical_signature", "check_key"]

FORMAT = "pydpowl.dpowl-model"
FORMAT_VERSION = 2
#: the version of files holding several arms or several stages (two-arm rules keep :data:`FORMAT_VERSION`)
REGIME_FORMAT_VERSION = 3
#: what a version 3 file holds
KINDS = ("multiarm", "multistage")
#: what a version 1 file's rule was made with (pydpowl had only the paper's mechanism then)
VERSION_1_MECHANISM = "output perturbation (Algorithm 1), OWL weights B / P(A | x)"

_FIELDS = ("format", "format_version", "package_version", "epsilon", "epsilon_total", "tuning", "gamma",
           "weights_upper_bound", "weight_sensitivity", "huber_h", "fit_intercept", "feature_names",
           "feature_bounds", "intercept", "coef", "treatment_labels", "mechanism", "checksum")
#: fields a file may hold or not
_OPTIONAL = ("signature",)
#: the top-level fields of a version 3 file, and those of each of its stages
_REGIME_FIELDS = ("format", "format_version", "package_version", "kind", "epsilon", "epsilon_total", "tuning",
                  "mechanism", "stages", "checksum")
_STAGE_FIELDS = ("stage", "epsilon", "gamma", "weights_upper_bound", "weight_sensitivity", "huber_h",
                 "fit_intercept", "feature_names", "feature_bounds", "arms", "vertices", "intercept", "coef")
#: the shortest key accepted for a signature (128 bits)
MIN_KEY_BYTES = 16


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
    signature_verified: bool = False
    mechanism: str = VERSION_1_MECHANISM

    def _features(self, X: ArrayLike) -> NDArray[np.float64]:
        return _features(X, self.feature_names)

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """``intercept + X @ coef``; a DataFrame is matched by column name."""
        X = self._features(X)
        if X.shape[1] != len(self.coef):
            raise ValueError(f"X must have {len(self.coef)} columns (the model's features), got {X.shape[1]}.")
        return X @ np.asarray(self.coef) + self.intercept

    def predict(self, X: ArrayLike) -> NDArray[np.int64]:
        """Recommended treatment in {-1, 1}."""
        return np.where(self.decision_function(X) > 0, 1, -1)

    def outside_bounds(self, X: ArrayLike) -> int:
        """Number of rows with a feature outside the public bounds (prediction does not clip)."""
        X = self._features(X)
        return int(np.any((X < np.asarray(self.lower)) | (X > np.asarray(self.upper)), axis=1).sum())


def _features(X: ArrayLike, names: Sequence[str], owner: str = "the model") -> NDArray[np.float64]:
    """X's feature columns: a DataFrame's matched by name (:func:`pydpowl._validation.columns_by_name`), an
    array's taken in the model's order (every model file names its features, ``x1``, ... by default)."""
    if feature_names_of(X) is not None:
        X = columns_by_name(X, names, owner=owner)
    X = check_array("X", X)
    if X.shape[1] != len(names):
        raise ValueError(f"X must have {len(names)} columns ({owner}'s features), got {X.shape[1]}.")
    return X


@dataclass(frozen=True)
class ReleasedStage:
    """One stage of a released regime (or the whole rule of a K-arm model), as read from a version 3 file.

    The rule recommends ``arms[argmax_a <vertices[a], intercept + coef x>]`` (the first arm on ties,
    as :class:`pydpowl.DPOWL` and :mod:`pydpowl.engine.multicategory`).
    """

    stage: int
    epsilon: float
    gamma: float
    weights_upper_bound: float
    weight_sensitivity: float
    huber_h: float
    fit_intercept: bool
    feature_names: Tuple[str, ...]
    lower: Tuple[float, ...]
    upper: Tuple[float, ...]
    arms: Tuple[Any, ...]
    vertices: Tuple[Tuple[float, ...], ...]
    intercept: Tuple[float, ...]
    coef: Tuple[Tuple[float, ...], ...]

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """``intercept + coef x`` in ``R^(K-1)`` per row: shape (n, K - 1); a DataFrame is matched by name."""
        X = _features(X, self.feature_names, owner=f"stage {self.stage}")
        return X @ np.asarray(self.coef).T + np.asarray(self.intercept)

    def scores(self, X: ArrayLike) -> NDArray[np.float64]:
        """``<V_a, f(x)>`` per arm: shape (n, K), columns in the order of ``arms``."""
        return arm_scores(self.decision_function(X), np.asarray(self.vertices))

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The recommended arm labels."""
        return np.asarray(self.arms, dtype=object)[recommend(self.scores(X))]

    def outside_bounds(self, X: ArrayLike) -> int:
        """Number of rows with a feature outside the stage's public bounds (prediction does not clip)."""
        X = _features(X, self.feature_names, owner=f"stage {self.stage}")
        return int(np.any((X < np.asarray(self.lower)) | (X > np.asarray(self.upper)), axis=1).sum())


@dataclass(frozen=True)
class ReleasedRegime:
    """A released K-arm rule (one stage) or multi-stage regime, as read from a version 3 file.

    Attributes mirror the file's top-level fields; ``stages`` holds one
    :class:`ReleasedStage` per decision point, stage 1 first.
    """

    kind: str
    epsilon: float
    epsilon_total: float
    tuning: str
    mechanism: str
    stages: Tuple[ReleasedStage, ...]
    package_version: str
    signature_verified: bool = False

    @property
    def n_stages(self) -> int:
        return len(self.stages)

    @property
    def feature_names(self) -> Tuple[str, ...]:
        """Every column a prediction reads, stage by stage, each named once."""
        return tuple(dict.fromkeys(n for s in self.stages for n in s.feature_names))

    def scores(self, X: ArrayLike) -> NDArray[np.float64]:
        """The arm scores of a one-stage rule (shape (n, K))."""
        self._one_stage("scores")
        return self.stages[0].scores(X)

    def _one_stage(self, what: str) -> None:
        if self.n_stages != 1:
            raise ValueError(f"{what} of a {self.n_stages}-stage regime: use stages[k].{what}(X) for stage k + 1.")

    def predict(self, X: ArrayLike) -> Any:
        """The recommended arms: an array for a one-stage rule, a list (one array per stage) for a regime.

        Each stage reads its own columns from ``X`` (a DataFrame, matched by
        name; an array only for a one-stage rule, in the file's column order).
        """
        if self.n_stages == 1:
            return self.stages[0].predict(X)
        if feature_names_of(X) is None:
            raise TypeError("a multi-stage regime reads each stage's history columns by name: give a DataFrame "
                            f"with the columns {list(self.feature_names)}.")
        return [s.predict(X) for s in self.stages]


def _canonical(content: Dict[str, Any], without: Tuple[str, ...]) -> bytes:
    body = {k: v for k, v in content.items() if k not in without}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def canonical_checksum(content: Dict[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of ``content`` (without ``checksum``).

    Detects accidental edits only: anyone can recompute it (see :func:`canonical_signature`).
    """
    return hashlib.sha256(_canonical(content, ("checksum",))).hexdigest()


def check_key(key: Any) -> bytes:
    """A signing key as bytes: ``bytes`` as they are, ``str`` as UTF-8; at least :data:`MIN_KEY_BYTES`.

    Raises
    ------
    TypeError
        For another type.
    ValueError
        For a key shorter than 16 bytes.
    """
    if isinstance(key, str):
        key = key.encode("utf-8")
    elif isinstance(key, (bytearray, memoryview)):
        key = bytes(key)
    elif not isinstance(key, bytes):
        raise TypeError(f"key must be bytes or str, got {type(key).__name__}.")
    if len(key) < MIN_KEY_BYTES:
        raise ValueError(f"key must have at least {MIN_KEY_BYTES} bytes (a random secret, e.g. "
                         f"secrets.token_hex(32)), got {len(key)}.")
    return key


def canonical_signature(content: Dict[str, Any], key: Any) -> str:
    """HMAC-SHA256 (hex) under ``key`` of the canonical JSON of ``content`` without ``checksum`` and ``signature``.

    Only holders of the key can make it, so a file that verifies was written by one of them and not changed
    since (keep the key out of the model file and of the repository).
    """
    return hmac.new(check_key(key), _canonical(content, ("checksum", "signature")), hashlib.sha256).hexdigest()


def model_to_dict(model: Any, *, feature_names: Union[Sequence[str], Sequence[Sequence[str]], None] = None,
                  epsilon_total: Optional[float] = None,
                  tuning: str = "gamma fixed in advance (no tuning on the private data)",
                  treatment_labels: Tuple[str, str] = ("+1", "-1"), key: Any = None) -> Dict[str, Any]:
    """The file content of a fitted :class:`pydpowl.DPOWL` (private release + public settings).

    With ``key`` (bytes, or text as UTF-8; at least 16 bytes, kept secret by
    its holders) the content is signed (``signature``: HMAC-SHA256), so that
    :func:`load_model` with the same key detects any change, including one
    whose checksum was recomputed.

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

    if key is not None:
        key = check_key(key)  # before anything else is done
    if hasattr(model, "stages_") or (hasattr(model, "classes_") and len(model.classes_) > 2):
        return regime_to_dict(model, feature_names=feature_names, epsilon_total=epsilon_total, tuning=tuning,
                              key=key)
    check_is_fitted(model)
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
        "gamma": float(model.gamma_),
        "weights_upper_bound": float(model.weights_upper_bound),
        "weight_sensitivity": float(model.weight_sensitivity_),
        "huber_h": float(model.huber_h_),
        "fit_intercept": bool(scaler.fit_intercept),
        "feature_names": [str(n) for n in names],
        "feature_bounds": {"lower": [float(v) for v in scaler.lower], "upper": [float(v) for v in scaler.upper]},
        "intercept": intercept,
        "coef": [float(v) for v in coef],
        "treatment_labels": {"+1": str(treatment_labels[0]), "-1": str(treatment_labels[1])},
        "mechanism": str(model.mechanism_description_),
    }
    _validate(content, check_sum=False)
    if key is not None:
        content["signature"] = {"hmac-sha256": canonical_signature(content, key)}
    content["checksum"] = {"sha256": canonical_checksum(content)}
    return content


def _label(value: Any) -> Any:
    """An arm label as JSON: strings as they are, integral numbers as ints, other numbers as floats."""
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(float(value)):
        return int(value) if float(value).is_integer() else float(value)
    raise ValueError(f"arm labels must be strings or finite numbers to be written, got {value!r}.")


def _stage_content(stage: int, rule: Any, grid: Optional[float], *, epsilon: float, gamma: float,
                   weights_upper_bound: float, weight_sensitivity: float, huber_h: float,
                   names: Optional[Sequence[str]]) -> Dict[str, Any]:
    """One stage's fields: its settings and its rule (``rule``: an :class:`~pydpowl.estimators.multiarm.ArmRule`),
    the release passed once more through the one rounding function, mapped to the original space."""
    from .engine.mechanisms import round_release

    if not math.isfinite(epsilon):
        raise ValueError("only private models can be exported: epsilon=inf is the exact, non-private rule"
                         + (f" (stage {stage})." if stage > 1 else "."))
    if grid is None:
        raise ValueError(f"stage {stage}'s release is not floating-point safe (no release grid): refit it with "
                         "the default settings before exporting.")
    scaler = rule.scaler
    safe = round_release(rule.scaled_coef, np.zeros_like(rule.scaled_coef), grid=grid)
    original = scaler.coef_to_original(safe)
    intercept, coef = (original[:, 0], original[:, 1:]) if scaler.fit_intercept else (
        np.zeros(original.shape[0]), original)
    names = list(names) if names is not None else [f"x{j + 1}" for j in range(scaler.n_features)]
    K = len(rule.classes)
    return {
        "stage": int(stage), "epsilon": float(epsilon), "gamma": float(gamma),
        "weights_upper_bound": float(weights_upper_bound), "weight_sensitivity": float(weight_sensitivity),
        "huber_h": float(huber_h), "fit_intercept": bool(scaler.fit_intercept),
        "feature_names": [str(n) for n in names],
        "feature_bounds": {"lower": [float(v) for v in scaler.lower], "upper": [float(v) for v in scaler.upper]},
        "arms": [_label(a) for a in rule.classes],
        "vertices": simplex_vertices(K).tolist(),
        "intercept": [float(v) for v in intercept],
        "coef": [[float(v) for v in row] for row in coef],
    }


def regime_to_dict(model: Any, *, feature_names: Any = None, epsilon_total: Optional[float] = None,
                   tuning: str = "gamma fixed in advance (no tuning on the private data)",
                   key: Any = None) -> Dict[str, Any]:
    """The version 3 file content of a K-arm :class:`pydpowl.DPOWL` or a fitted
    :class:`~pydpowl.estimators.multistage.DPMultiStageOWL` (see the module docstring).

    ``feature_names`` is one list of names (a K-arm rule; default the
    DataFrame's columns or x1..xp) or one list per stage (a regime; default
    x1..xp per stage). ``epsilon`` is the sum of the stages' budgets (rule and
    private baseline), the regime's guarantee by sequential composition.
    """
    from . import __version__
    from .estimators.multiarm import ArmRule

    if key is not None:
        key = check_key(key)
    if hasattr(model, "stages_"):
        check_is_fitted(model, "stages_")
        T = model.n_stages_
        if feature_names is not None and (isinstance(feature_names, str) or len(feature_names) != T
                                          or any(isinstance(f, str) for f in feature_names)):
            raise ValueError(f"feature_names must hold one list of names per stage (T={T}), got {feature_names!r}.")
        stages = [_stage_content(k + 1, s.rule, s.release_grid, epsilon=s.epsilon + s.epsilon_baseline,
                                 gamma=s.gamma, weights_upper_bound=s.weights_upper_bound,
                                 weight_sensitivity=C, huber_h=s.huber_h,
                                 names=None if feature_names is None else feature_names[k])
                  for k, (s, C) in enumerate(zip(model.stages_, _stage_sensitivities(model, T)))]
        kind = "multistage"
        how = {"output": "output perturbation (Algorithm 1)", "objective": "weighted objective perturbation"}
        per_stage = ", ".join(f"stage {k + 1}: {how[s.mechanism]}" + (" with residual weights" if s.residual else "")
                              for k, s in enumerate(model.stages_))
        mechanism = (f"{per_stage}; backward OWL weights |Y_k - m_k| 1{{later treatments followed the released "
                     "rules}} / prod P(A_l | H_l); stages composed sequentially")
        eps = math.fsum(s["epsilon"] for s in stages)
    else:
        check_is_fitted(model)
        rule = ArmRule(classes=model.classes_, scaled_coef=model.scaled_coef_, scaler=model.scaler_)
        names = feature_names if feature_names is not None else getattr(model, "feature_names_in_", None)
        eps = float(model.epsilon)
        stages = [_stage_content(1, rule, getattr(model, "release_grid_", None), epsilon=eps, gamma=model.gamma_,
                                 weights_upper_bound=model.weights_upper_bound,
                                 weight_sensitivity=model.weight_sensitivity_, huber_h=model.huber_h_,
                                 names=None if names is None else list(names))]
        kind = "multiarm"
        mechanism = str(model.mechanism_description_)
    total = eps if epsilon_total is None else float(epsilon_total)
    if not (math.isfinite(total) and total >= eps):
        raise ValueError(f"epsilon_total must be finite and >= epsilon={eps:g}, got epsilon_total={epsilon_total!r}.")
    content: Dict[str, Any] = {
        "format": FORMAT, "format_version": REGIME_FORMAT_VERSION, "package_version": str(__version__),
        "kind": kind, "epsilon": eps, "epsilon_total": total, "tuning": str(tuning), "mechanism": mechanism,
        "stages": stages,
    }
    _validate_regime(content, check_sum=False)
    if key is not None:
        content["signature"] = {"hmac-sha256": canonical_signature(content, key)}
    content["checksum"] = {"sha256": canonical_checksum(content)}
    return content


def _stage_sensitivities(model: Any, T: int) -> List[float]:
    """The C of each stage of a fitted regime (0 with known propensities; the stated value otherwise)."""
    C = getattr(model, "weight_sensitivity", None)
    if C is None:
        return [0.0] * T
    if C == "trivial":
        raise ValueError("a regime fitted with weight_sensitivity='trivial' cannot be exported: its C depends on n.")
    return [float(C)] * T


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


def load_model(path: Union[str, Path], *, key: Any = None) -> Union[ReleasedModel, "ReleasedRegime"]:
    """Read and validate a model file written by :func:`export_model`.

    Parameters
    ----------
    path : str or Path
    key : bytes or str, optional
        The key the file was signed with (``export_model(..., key=)``): the file
        must then carry a signature that matches, which detects any change made
        without the key. Without it the checksum is checked (accidental edits)
        and a signature, if any, is not (``signature_verified=False``).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ModelFileError
        If the file is malformed, inconsistent, its checksum does not match, or
        (with ``key``) it is unsigned or its signature does not match.
    """
    if key is not None:
        key = check_key(key)
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"model file not found: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ModelFileError(f"model file {path.name} is not UTF-8 text.") from None
    return model_from_json(text, key=key)


def model_from_json(text: str, *, key: Any = None) -> Union[ReleasedModel, "ReleasedRegime"]:
    """Validate the JSON text of a model file (see :func:`load_model`)."""
    try:
        content = json.loads(text, object_pairs_hook=_pairs, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise ModelFileError(f"model file is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}).") \
            from None
    _validate(content, check_sum=True)
    verified = False
    if key is not None:
        if "signature" not in content:
            raise ModelFileError("model file is not signed: a key was given, so only a file signed with it "
                                 "(export_model(..., key=), pydpowl fit --key-file) is accepted.")
        if not hmac.compare_digest(content["signature"]["hmac-sha256"], canonical_signature(content, key)):
            raise ModelFileError("model file: signature mismatch: the content was modified after it was signed, or "
                                 "the key is not the one it was signed with.")
        verified = True
    if content["format_version"] == REGIME_FORMAT_VERSION:
        return _regime_from_content(content, verified)
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
        signature_verified=verified,
        mechanism=content.get("mechanism", VERSION_1_MECHANISM),
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
    version = content.get("format_version")
    if version == REGIME_FORMAT_VERSION and not isinstance(version, bool):
        _validate_regime(content, check_sum=check_sum)
        return
    fields = _FIELDS if version != 1 else tuple(k for k in _FIELDS if k != "mechanism")
    expected = set(fields) if check_sum else set(fields) - {"checksum"}
    unknown = sorted(set(content) - expected - set(_OPTIONAL))
    if unknown:
        raise ModelFileError(f"model file: unknown field(s) {unknown}.")
    missing = [k for k in fields if k in expected and k not in content]
    if missing:
        raise ModelFileError(f"model file: missing field(s) {missing}.")
    if content["format"] != FORMAT:
        raise ModelFileError(f"model file: format must be {FORMAT!r}, got {content['format']!r}.")
    version = content["format_version"]
    if not isinstance(version, int) or isinstance(version, bool):
        raise ModelFileError(f"model file: format_version must be an integer, got {type(version).__name__}.")
    if version not in (1, FORMAT_VERSION):
        raise ModelFileError(f"model file: format_version {version} is not supported (this pydpowl reads "
                             f"versions 1, {FORMAT_VERSION} and {REGIME_FORMAT_VERSION}).")
    if "mechanism" in content and not isinstance(content["mechanism"], str):
        raise ModelFileError(f"model file: mechanism must be a string, got {type(content['mechanism']).__name__}.")
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
    _check_integrity(content, check_sum=check_sum)


def _check_integrity(content: Dict[str, Any], *, check_sum: bool) -> None:
    """The checksum (when ``check_sum``) and the signature field's form."""
    if check_sum:
        cs = content["checksum"]
        if not isinstance(cs, dict) or set(cs) != {"sha256"} or not isinstance(cs["sha256"], str):
            raise ModelFileError("model file: checksum must be an object with exactly one field 'sha256'.")
        if cs["sha256"] != canonical_checksum(content):
            raise ModelFileError("model file: checksum mismatch: the content was modified after export.")
    if "signature" in content:
        sig = content["signature"]
        if (not isinstance(sig, dict) or set(sig) != {"hmac-sha256"} or not isinstance(sig["hmac-sha256"], str)
                or len(sig["hmac-sha256"]) != 64 or not set(sig["hmac-sha256"]) <= set("0123456789abcdef")):
            raise ModelFileError("model file: signature must be an object with exactly one field 'hmac-sha256' "
                                 "(64 hexadecimal digits).")


def _regime_from_content(content: Dict[str, Any], verified: bool) -> ReleasedRegime:
    stages = tuple(ReleasedStage(
        stage=int(st["stage"]), epsilon=float(st["epsilon"]), gamma=float(st["gamma"]),
        weights_upper_bound=float(st["weights_upper_bound"]), weight_sensitivity=float(st["weight_sensitivity"]),
        huber_h=float(st["huber_h"]), fit_intercept=st["fit_intercept"], feature_names=tuple(st["feature_names"]),
        lower=tuple(float(v) for v in st["feature_bounds"]["lower"]),
        upper=tuple(float(v) for v in st["feature_bounds"]["upper"]), arms=tuple(st["arms"]),
        vertices=tuple(tuple(float(v) for v in row) for row in st["vertices"]),
        intercept=tuple(float(v) for v in st["intercept"]),
        coef=tuple(tuple(float(v) for v in row) for row in st["coef"])) for st in content["stages"])
    return ReleasedRegime(kind=content["kind"], epsilon=float(content["epsilon"]),
                          epsilon_total=float(content["epsilon_total"]), tuning=content["tuning"],
                          mechanism=content["mechanism"], stages=stages, package_version=content["package_version"],
                          signature_verified=verified)


def _fields(where: str, content: Dict[str, Any], fields: Sequence[str], optional: Sequence[str] = ()) -> None:
    unknown = sorted(set(content) - set(fields) - set(optional))
    if unknown:
        raise ModelFileError(f"model file: {where}unknown field(s) {unknown}.")
    missing = [k for k in fields if k not in content]
    if missing:
        raise ModelFileError(f"model file: {where}missing field(s) {missing}.")


def _validate_regime(content: Dict[str, Any], *, check_sum: bool) -> None:
    """A version 3 file (several arms or several stages): every field, every stage."""
    fields = _REGIME_FIELDS if check_sum else tuple(k for k in _REGIME_FIELDS if k != "checksum")
    _fields("", content, fields, _OPTIONAL)
    if content["format"] != FORMAT:
        raise ModelFileError(f"model file: format must be {FORMAT!r}, got {content['format']!r}.")
    for key in ("package_version", "tuning", "mechanism", "kind"):
        if not isinstance(content[key], str):
            raise ModelFileError(f"model file: {key} must be a string, got {type(content[key]).__name__}.")
    if content["kind"] not in KINDS:
        raise ModelFileError(f"model file: kind must be one of {list(KINDS)}, got {content['kind']!r}.")
    eps = _number(content, "epsilon", low=0.0, low_open=True)
    total = _number(content, "epsilon_total", low=0.0, low_open=True)
    if total < eps:
        raise ModelFileError(f"model file: epsilon_total ({total:g}) must be >= epsilon ({eps:g}).")
    stages = content["stages"]
    if not isinstance(stages, list) or not stages or not all(isinstance(st, dict) for st in stages):
        raise ModelFileError("model file: stages must be a non-empty list of objects (stage 1 first).")
    if content["kind"] == "multiarm" and len(stages) != 1:
        raise ModelFileError(f"model file: a multiarm rule has exactly one stage, got {len(stages)}.")
    for k, st in enumerate(stages):
        _validate_stage(st, k + 1)
    if [st["stage"] for st in stages] != list(range(1, len(stages) + 1)):
        raise ModelFileError("model file: stage numbers must be 1, 2, ... in order.")
    if content["kind"] == "multiarm" and len(stages[0]["arms"]) < 3:
        raise ModelFileError("model file: a multiarm rule has at least 3 arms (two-arm rules are format version "
                             f"{FORMAT_VERSION}).")
    stage_sum = math.fsum(float(st["epsilon"]) for st in stages)
    if abs(stage_sum - eps) > 1e-12 * max(1.0, eps):
        raise ModelFileError(f"model file: epsilon ({eps:g}) must equal the sum of the stages' epsilons "
                             f"({stage_sum:g}): sequential composition.")
    _check_integrity(content, check_sum=check_sum)


def _validate_stage(st: Dict[str, Any], k: int) -> None:
    where = f"stage {k}: "
    _fields(where, st, _STAGE_FIELDS)
    if not isinstance(st["stage"], int) or isinstance(st["stage"], bool):
        raise ModelFileError(f"model file: {where}stage must be an integer.")
    for key in ("epsilon", "gamma", "weights_upper_bound", "huber_h"):
        _number(st, key, low=0.0, low_open=True)
    _number(st, "weight_sensitivity", low=0.0, low_open=False)
    if not isinstance(st["fit_intercept"], bool):
        raise ModelFileError(f"model file: {where}fit_intercept must be true or false.")
    names = st["feature_names"]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
        raise ModelFileError(f"model file: {where}feature_names must be a non-empty list of non-empty strings.")
    if len(set(names)) != len(names):
        raise ModelFileError(f"model file: {where}feature_names must be distinct.")
    p = len(names)
    bounds = st["feature_bounds"]
    if not isinstance(bounds, dict) or set(bounds) != {"lower", "upper"}:
        raise ModelFileError(f"model file: {where}feature_bounds must be an object with exactly 'lower' and 'upper'.")
    lower = _numbers(bounds["lower"], f"{where}feature_bounds.lower", p)
    upper = _numbers(bounds["upper"], f"{where}feature_bounds.upper", p)
    reversed_ = [i for i, (lo, hi) in enumerate(zip(lower, upper)) if lo > hi]
    if reversed_:
        raise ModelFileError(f"model file: {where}feature_bounds lower > upper at position(s) {reversed_}.")
    arms = st["arms"]
    if not isinstance(arms, list) or len(arms) < 2:
        raise ModelFileError(f"model file: {where}arms must be a list of at least 2 labels.")
    if not (all(isinstance(a, str) for a in arms) or all(_is_number(a) and math.isfinite(float(a)) for a in arms)):
        raise ModelFileError(f"model file: {where}arms must be all strings or all numbers (finite).")
    if len(set(arms)) != len(arms):
        raise ModelFileError(f"model file: {where}arms must be distinct.")
    K = len(arms)
    rows = st["vertices"]
    if not isinstance(rows, list) or len(rows) != K:
        raise ModelFileError(f"model file: {where}vertices must have {K} rows (one per arm).")
    V = np.array([_numbers(r, f"{where}vertices[{a}]", K - 1) for a, r in enumerate(rows)])
    if not np.array_equal(V, simplex_vertices(K)):
        raise ModelFileError(f"model file: {where}vertices do not match the angle-based simplex of {K} arms "
                             "(pydpowl.engine.multicategory.simplex_vertices).")
    coef = st["coef"]
    if not isinstance(coef, list) or len(coef) != K - 1:
        raise ModelFileError(f"model file: {where}coef must have {K - 1} rows (K - 1 for {K} arms), got "
                             f"{len(coef) if isinstance(coef, list) else type(coef).__name__}.")
    for r, row in enumerate(coef):
        _numbers(row, f"{where}coef[{r}]", p)
    intercept = st["intercept"]
    if not isinstance(intercept, list) or len(intercept) != K - 1:
        raise ModelFileError(f"model file: {where}intercept must have {K - 1} entries (K - 1 for {K} arms).")
    values = _numbers(intercept, f"{where}intercept", K - 1)
    if not st["fit_intercept"] and any(v != 0.0 for v in values):
        raise ModelFileError(f"model file: {where}intercept must be 0 when fit_intercept is false.")
