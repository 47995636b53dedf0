"""A privacy budget accountant for repeated releases on one dataset: (epsilon, delta) under basic composition.

Each release of an ``(epsilon, delta)``-DP mechanism on the same data spends
both; by basic sequential composition, releases with budgets ``(epsilon_i,
delta_i)`` are together ``(sum epsilon_i, sum delta_i)``-DP, and releases on
disjoint parts of the data (every subject in at most one) are together
``(max epsilon_i, max delta_i)``-DP (parallel composition): :func:`compose`.
Every estimator of pydpowl reports what one fit spent in ``privacy_spent_``
(its ``delta`` is that of the floating-point-safe rounding,
:func:`rounded_release_spent`, plus any ``delta`` of the mechanism itself).
:class:`BudgetAccountant` records every release and refuses one that would
take the total spent above the budget fixed when the accountant was created
(``total_delta=None`` records delta without a cap).

The pattern, as in diffprivlib's accountant: check the budget *before* the data
are touched, and spend it only *after* the release succeeded, so a failed fit
(bad input, solver failure) costs nothing::

    acc = BudgetAccountant(total_epsilon=2.0, dataset="trial-2024")
    with acc.release(1.0, label="DP-OWL fit, gamma=75"):
        model = DPOWL(epsilon=1.0, ...).fit(X, A, B)
    # acc.spent == 1.0; a second release of 1.5 raises BudgetExceededError

or, recording the fit's own ``(epsilon, delta)``::

    eps, delta = model.privacy_spent_
    acc.spend(eps, label="DP-OWL fit", delta=delta)

The state can be saved to and loaded from a small JSON file (strictly
validated), so a command-line tool can keep the tally across invocations. The
file names its dataset by a keyed fingerprint (:func:`dataset_fingerprint`:
HMAC-SHA-256 with a secret key kept outside the file), so that whoever holds
a budget file cannot test whether a candidate dataset is the one it protects.

Notes
-----
Basic composition only (no advanced composition). Releases computed on
*disjoint* subsets of the data compose in parallel and could share a budget;
the accountant does not know the subsets and adds them, which is conservative
(the analysis and the tuning functions apply :func:`compose` themselves and
charge the composed total). ``epsilon = inf`` (no noise) can only be spent from
an infinite budget.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import math
import numbers
import os
import secrets
import stat
import tempfile
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, Optional, Sequence, Tuple, Union

from ..exceptions import BudgetExceededError

__all__ = ["BudgetAccountant", "Release", "compose", "rounded_release_spent", "double_at_most", "dataset_fingerprint",
           "fingerprint_key_path", "BUDGET_FILE_FORMAT", "BUDGET_FILE_VERSION", "KEY_FILE_ENV"]


def double_at_most(q: Fraction) -> float:
    """The largest double not above the exact share ``q`` (a mechanism calibrated with it spends at most ``q``)."""
    f = float(q)
    return f if Fraction(f) <= q else math.nextafter(f, -math.inf)


#: ``format`` field of a budget file
BUDGET_FILE_FORMAT = "pydpowl-budget"
#: ``version`` field of the budget files this module writes (version 1, epsilon only, is still read)
BUDGET_FILE_VERSION = 2
#: environment variable naming the fingerprint key file (default: the user's config folder)
KEY_FILE_ENV = "PYDPOWL_KEY_FILE"

# Relative slack for floating-point sums: 0.1 + 0.2 must fit a total of 0.3.
_REL_SLACK = 1e-12


def _check_budget(name: str, value: Any, *, allow_inf: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}.")
    value = float(value)
    if not (0.0 < value < math.inf or (allow_inf and value == math.inf)):
        right = "]" if allow_inf else ")"
        raise ValueError(f"{name} must be in (0, inf{right}, got {name}={value!r}.")
    return value


def _check_delta(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}.")
    value = float(value)
    if not 0.0 <= value <= 1.0:  # NaN fails too
        raise ValueError(f"{name} must be in [0, 1], got {name}={value!r}.")
    return value


def _check_label(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"label must be a string, got {type(value).__name__}.")
    return value


@dataclass(frozen=True)
class Release:
    """One recorded release: what it was and the ``(epsilon, delta)`` it spent."""

    label: str
    epsilon: float
    delta: float = 0.0


def compose(spent: Iterable[Tuple[float, float]], how: str = "sequential") -> Tuple[float, float]:
    """``(epsilon, delta)`` of several releases together, by basic composition.

    ``"sequential"`` (every release on the same data): the sums;
    ``"parallel"`` (each release on its own disjoint part of the data, every
    subject in at most one part): the largest epsilon and the largest delta.
    Sums are exactly rounded (``math.fsum``).

    Examples
    --------
    >>> compose([(0.5, 1e-9), (0.25, 0.0)])
    (0.75, 1e-09)
    >>> compose([(0.5, 1e-9), (0.25, 2e-9)], how="parallel")
    (0.5, 2e-09)
    """
    pairs = [(float(e), float(d)) for e, d in spent]
    if how == "sequential":
        return math.fsum(e for e, _ in pairs), math.fsum(d for _, d in pairs)
    if how == "parallel":
        return max((e for e, _ in pairs), default=0.0), max((d for _, d in pairs), default=0.0)
    raise ValueError(f"how must be 'sequential' or 'parallel', got how={how!r}.")


def rounded_release_spent(epsilon: float, *, dim: int, grid: Optional[float], noise_scale: float,
                          delta: float = 0.0, full_precision: bool = False,
                          stream: str = "numpy") -> Tuple[float, float]:
    """``(epsilon, delta)`` of a mechanism whose release was rounded by ``round_release``.

    The ideal mechanism is ``(epsilon, delta)``-DP; rounding the exact sum of
    the answer and the noise to ``grid`` adds the floating-point ``delta`` of
    :func:`pydpowl.engine.mechanisms.floating_point_delta` for that noise
    (``noise_scale`` is the scale of the l2-Laplace noise that was rounded).
    ``grid=None`` with a finite epsilon and ``full_precision=True``
    (``reproduce_dppack=True``: DPpack's full-precision arithmetic) has no
    proven guarantee: delta is reported as 1, the trivial bound (as it is when
    the bound exceeds 1, e.g. for epsilon near 710, where ``e^epsilon``
    overflows). ``epsilon = inf`` (no noise) gives ``(inf, delta)``.

    Parameters
    ----------
    epsilon : float
        The whole mechanism's epsilon (it sets the ``1 + e^epsilon`` factor).
    dim : int
        Number of released coordinates.
    grid : float or None
        The grid the release was rounded to.
    noise_scale : float
        Scale ``lambda`` of the rounded noise (``Delta / epsilon`` for output
        perturbation, the smoothing noise's for objective perturbation).
    delta : float, default=0.0
        The mechanism's own delta (e.g. KST with Gaussian noise).
    full_precision : bool, default=False
        The release was not rounded (``reproduce_dppack=True``).
    stream : {"numpy", "R"}, default="numpy"
        The sampler model of the noise's stream (R's samplers when R's stream
        is replayed).
    """
    eps = float(epsilon)
    delta = _check_delta("delta", delta)
    if eps == math.inf:
        return eps, delta
    if full_precision:
        return eps, 1.0
    if grid is None:
        raise ValueError("a private release without a grid is not floating-point safe; pass full_precision=True "
                         "for a full-precision (reproduce_dppack) release.")
    from ..engine.mechanisms import floating_point_delta

    try:
        rounding = floating_point_delta(epsilon=eps, dim=dim, grid=grid, noise_scale=noise_scale, stream=stream)
    except OverflowError:  # 1 + e^epsilon overflows: the bound exceeds 1 (vacuous)
        rounding = 1.0
    return eps, min(1.0, delta + rounding)


class BudgetAccountant:
    """Tally of the ``(epsilon, delta)`` spent on one dataset under basic composition.

    Parameters
    ----------
    total_epsilon : float
        The whole epsilon budget for this dataset, in (0, inf]; fixed for the
        life of the accountant (and of its budget file).
    total_delta : float or None, default=None
        The whole delta budget, in [0, 1]; None records the deltas spent
        without a cap (every floating-point-safe release carries a tiny delta,
        so a cap of 0 refuses every release).
    dataset : str, optional
        A name or fingerprint (:func:`dataset_fingerprint`) of the dataset the
        budget protects; a budget file refuses to be used for another one.
    releases : sequence of Release or (label, epsilon[, delta]) tuples, default=()
        Releases already made (e.g. read from a budget file).

    Raises
    ------
    BudgetExceededError
        If ``releases`` already spend more than the totals.

    Examples
    --------
    >>> acc = BudgetAccountant(total_epsilon=1.0)
    >>> acc.spend(0.4, label="first", delta=1e-9)
    Release(label='first', epsilon=0.4, delta=1e-09)
    >>> acc.remaining, acc.privacy_spent
    (0.6, (0.4, 1e-09))
    """

    def __init__(self, total_epsilon: float, *, total_delta: Optional[float] = None, dataset: Optional[str] = None,
                 releases: Sequence[Union[Release, Tuple[Any, ...]]] = ()) -> None:
        self._total = _check_budget("total_epsilon", total_epsilon, allow_inf=True)
        self._total_delta = None if total_delta is None else _check_delta("total_delta", total_delta)
        if dataset is not None and not isinstance(dataset, str):
            raise TypeError(f"dataset must be a string or None, got {type(dataset).__name__}.")
        self._dataset = dataset
        self._releases: list = []
        for k, item in enumerate(releases):
            label, eps, delta = ((item.label, item.epsilon, item.delta) if isinstance(item, Release)
                                 else _triple(f"releases[{k}]", item))
            self._releases.append(Release(_check_label(label),
                                          _check_budget(f"releases[{k}].epsilon", eps, allow_inf=True),
                                          _check_delta(f"releases[{k}].delta", delta)))
        if self._exceeds(0.0):
            raise BudgetExceededError(
                f"releases spend epsilon={self.spent:.6g}, more than total_epsilon={self._total:.6g}."
            )
        if self._exceeds_delta(0.0):
            raise BudgetExceededError(
                f"releases spend delta={self.spent_delta:.6g}, more than total_delta={self._total_delta:.6g}."
            )

    # -- state -----------------------------------------------------------------
    @property
    def total_epsilon(self) -> float:
        """The whole epsilon budget."""
        return self._total

    @property
    def total_delta(self) -> Optional[float]:
        """The whole delta budget (None: not capped)."""
        return self._total_delta

    @property
    def dataset(self) -> Optional[str]:
        """Name or fingerprint of the protected dataset (None if not given)."""
        return self._dataset

    @property
    def releases(self) -> Tuple[Release, ...]:
        """Every recorded release, oldest first."""
        return tuple(self._releases)

    @property
    def spent(self) -> float:
        """Total epsilon spent (an exactly rounded sum)."""
        return math.fsum(r.epsilon for r in self._releases)

    @property
    def spent_delta(self) -> float:
        """Total delta spent (an exactly rounded sum)."""
        return math.fsum(r.delta for r in self._releases)

    @property
    def privacy_spent(self) -> Tuple[float, float]:
        """``(spent, spent_delta)``: the guarantee of every release recorded, together."""
        return compose(((r.epsilon, r.delta) for r in self._releases), "sequential")

    @property
    def remaining(self) -> float:
        """Epsilon still available (never negative)."""
        if self._total == math.inf:
            return math.inf
        return max(0.0, self._total - self.spent)

    def __repr__(self) -> str:
        ds = f", dataset={self._dataset!r}" if self._dataset is not None else ""
        td = f", total_delta={self._total_delta!r}" if self._total_delta is not None else ""
        return (f"BudgetAccountant(total_epsilon={self._total!r}{td}{ds}, spent={self.spent!r}, "
                f"spent_delta={self.spent_delta!r}, releases={len(self._releases)})")

    def _exceeds(self, epsilon: float) -> bool:
        if self._total == math.inf:
            return False
        new_total = math.fsum([self.spent, epsilon])
        return new_total > self._total * (1.0 + _REL_SLACK)

    def _exceeds_delta(self, delta: float) -> bool:
        if self._total_delta is None:
            return False
        return math.fsum([self.spent_delta, delta]) > self._total_delta * (1.0 + _REL_SLACK)

    # -- spending --------------------------------------------------------------
    def check(self, epsilon: float, label: str = "release", *, delta: float = 0.0) -> float:
        """Raise unless a release of ``(epsilon, delta)`` fits in the remaining budget.

        Call this before touching the data. Nothing is recorded.

        Returns
        -------
        float
            The validated ``epsilon``.

        Raises
        ------
        TypeError, ValueError
            If ``epsilon`` is not a number in (0, inf] or ``delta`` not in [0, 1].
        BudgetExceededError
            If ``spent + epsilon`` exceeds ``total_epsilon`` (or the deltas ``total_delta``).
        """
        eps = _check_budget("epsilon", epsilon, allow_inf=True)
        delta = _check_delta("delta", delta)
        _check_label(label)
        if self._exceeds(eps):
            raise BudgetExceededError(
                f"{label}: epsilon={eps:.6g} exceeds the remaining privacy budget {self.remaining:.6g} "
                f"(total_epsilon={self._total:.6g}, already spent {self.spent:.6g} in {len(self._releases)} "
                "release(s)); nothing was released."
            )
        total_delta = self._total_delta
        if total_delta is not None and self._exceeds_delta(delta):  # _exceeds_delta: never without a total
            raise BudgetExceededError(
                f"{label}: delta={delta:.3g} exceeds the remaining delta budget "
                f"{max(0.0, total_delta - self.spent_delta):.3g} (total_delta={total_delta:.3g}, "
                f"already spent {self.spent_delta:.3g}); nothing was released."
            )
        return eps

    def spend(self, epsilon: float, label: str = "release", *, delta: float = 0.0) -> Release:
        """Record a release of ``(epsilon, delta)`` (after checking it fits).

        Call this only after the release succeeded.
        """
        eps = self.check(epsilon, label, delta=delta)
        record = Release(label, eps, float(delta))
        self._releases.append(record)
        return record

    @contextlib.contextmanager
    def release(self, epsilon: float, label: str = "release", *, delta: float = 0.0) -> Iterator[float]:
        """Check before the block runs; spend only if it finishes without an exception.

        Examples
        --------
        >>> acc = BudgetAccountant(total_epsilon=1.0)
        >>> with acc.release(0.5, label="fit") as eps:
        ...     pass  # fit with epsilon=eps here
        >>> acc.spent
        0.5
        """
        eps = self.check(epsilon, label, delta=delta)
        yield eps
        self.spend(eps, label, delta=delta)

    def check_split(self, epsilons: Sequence[float], label: str = "release", *,
                    deltas: Sequence[float] = ()) -> Tuple[float, ...]:
        """Check that several releases (e.g. a budget split ``epsilon_1 + epsilon_2``) fit together.

        Returns the validated budgets; nothing is recorded.
        """
        if isinstance(epsilons, (str, bytes)) or not hasattr(epsilons, "__len__") or len(epsilons) == 0:
            raise TypeError("epsilons must be a non-empty sequence of numbers.")
        parts = tuple(_check_budget(f"epsilons[{k}]", e, allow_inf=True) for k, e in enumerate(epsilons))
        dparts = tuple(_check_delta(f"deltas[{k}]", d) for k, d in enumerate(deltas))
        self.check(math.fsum(parts), label, delta=math.fsum(dparts))
        return parts

    # -- files -----------------------------------------------------------------
    def to_dict(self) -> Dict[str, Any]:
        """A JSON-ready dict (``inf`` written as the string ``"inf"``)."""
        return {
            "format": BUDGET_FILE_FORMAT,
            "version": BUDGET_FILE_VERSION,
            "dataset": self._dataset,
            "total_epsilon": _dump_eps(self._total),
            "total_delta": self._total_delta,
            "releases": [{"label": r.label, "epsilon": _dump_eps(r.epsilon), "delta": r.delta}
                         for r in self._releases],
        }

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "budget") -> "BudgetAccountant":
        """Rebuild an accountant from :meth:`to_dict` output, refusing anything else.

        Version 1 files (epsilon only, written before deltas were tracked) are
        read with every delta 0 and no delta cap.
        """
        if not isinstance(data, dict):
            raise ValueError(f"{source}: expected a JSON object, got {type(data).__name__}.")
        version = data.get("version")
        if isinstance(version, bool) or version not in (1, BUDGET_FILE_VERSION):
            raise ValueError(f"{source}: version must be 1 or {BUDGET_FILE_VERSION}, got {version!r}.")
        expected = {"format", "version", "dataset", "total_epsilon", "releases"}
        entry = {"label", "epsilon"}
        if version == 2:
            expected, entry = expected | {"total_delta"}, entry | {"delta"}
        extra, missing = sorted(set(data) - expected), sorted(expected - set(data))
        if extra or missing:
            raise ValueError(f"{source}: fields must be exactly {sorted(expected)}; "
                             f"unexpected {extra}, missing {missing}.")
        if data["format"] != BUDGET_FILE_FORMAT:
            raise ValueError(f"{source}: format must be {BUDGET_FILE_FORMAT!r}, got {data['format']!r}.")
        if not isinstance(data["releases"], list):
            raise ValueError(f"{source}: releases must be a list, got {type(data['releases']).__name__}.")
        releases = []
        for k, item in enumerate(data["releases"]):
            if not isinstance(item, dict) or set(item) != entry or not isinstance(item["label"], str):
                raise ValueError(f"{source}: releases[{k}] must be an object with exactly a string 'label' and "
                                 + ("an 'epsilon'." if version == 1 else "an 'epsilon' and a 'delta'."))
            delta = item.get("delta", 0.0)
            if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
                raise ValueError(f"{source}: releases[{k}].delta must be a number, got {delta!r}.")
            releases.append((item["label"], _load_eps(f"{source}: releases[{k}].epsilon", item["epsilon"]), delta))
        total = _load_eps(f"{source}: total_epsilon", data["total_epsilon"])
        total_delta = data.get("total_delta")
        if total_delta is not None and (isinstance(total_delta, bool) or not isinstance(total_delta, numbers.Real)):
            raise ValueError(f"{source}: total_delta must be a number or null, got {total_delta!r}.")
        if data["dataset"] is not None and not isinstance(data["dataset"], str):
            raise ValueError(f"{source}: dataset must be a string or null, got {type(data['dataset']).__name__}.")
        try:
            return cls(total, total_delta=None if total_delta is None else float(total_delta), dataset=data["dataset"],
                       releases=releases)
        except BudgetExceededError as exc:
            raise BudgetExceededError(f"{source}: {exc}") from None
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{source}: {exc}") from None

    def save(self, path: Union[str, os.PathLike]) -> Path:
        """Write the state to ``path`` as JSON, atomically (a temporary file, then a rename)."""
        path = Path(path)
        text = json.dumps(self.to_dict(), indent=2) + "\n"
        fd, tmp = tempfile.mkstemp(prefix=".budget-", suffix=".json", dir=str(path.parent or Path(".")))
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return path

    @classmethod
    def load(cls, path: Union[str, os.PathLike], *, dataset: Optional[str] = None,
             data_file: Optional[Union[str, os.PathLike]] = None) -> "BudgetAccountant":
        """Read a budget file written by :meth:`save`.

        Parameters
        ----------
        path : path-like
        dataset : str, optional
            When given, the file must be for this dataset (same name or fingerprint).
        data_file : path-like, optional
            The data file the budget protects: the file must hold its
            :func:`dataset_fingerprint`. A file written by an older pydpowl
            with the unkeyed ``"sha256:..."`` fingerprint of the same bytes is
            accepted and re-keyed (the next :meth:`save` writes the keyed one),
            so the tally carries over.

        Raises
        ------
        ValueError
            If the file is not valid JSON, has another format or version, extra or
            missing fields, bad budgets, or belongs to another dataset.
        """
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"), parse_constant=_refuse_constant)
        except json.JSONDecodeError as exc:
            raise ValueError(f"budget file {str(path)!r} is not valid JSON: {exc.msg} (line {exc.lineno}).") from None
        except ValueError as exc:  # NaN / Infinity tokens
            raise ValueError(f"budget file {str(path)!r}: {exc}") from None
        acc = cls.from_dict(data, source=f"budget file {str(path)!r}")
        if data_file is not None:
            keyed = dataset_fingerprint(data_file)
            if acc.dataset != keyed and str(acc.dataset).startswith("sha256:") \
                    and acc.dataset == _sha256_fingerprint(data_file):
                acc._dataset = keyed  # an unkeyed fingerprint of the same bytes: re-keyed on the next save
            dataset = keyed if dataset is None else dataset
        if dataset is not None and acc.dataset != dataset:
            raise ValueError(f"budget file {str(path)!r} is for dataset {acc.dataset!r}, not {dataset!r}; "
                             "use one budget file per dataset.")
        return acc


def _triple(name: str, item: Any) -> Tuple[Any, Any, Any]:
    try:
        if len(item) == 2:
            label, eps = item
            return label, eps, 0.0
        label, eps, delta = item
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a Release or a (label, epsilon[, delta]) tuple.") from None
    return label, eps, delta


def _dump_eps(value: float) -> Union[float, str]:
    return "inf" if value == math.inf else value


def _load_eps(name: str, value: Any) -> float:
    if value == "inf":
        return math.inf
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number or \"inf\", got {value!r}.")
    return float(value)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed (write \"inf\" for an infinite budget).")


def fingerprint_key_path() -> Path:
    """Where the secret key of :func:`dataset_fingerprint` is kept.

    ``$PYDPOWL_KEY_FILE`` if set (e.g. for a service account without a
    writable home, or to share one key between analysts who share budget
    files), else ``pydpowl/fingerprint.key`` in the user's configuration folder
    (``$XDG_CONFIG_HOME``, by default ``~/.config``).
    """
    given = os.environ.get(KEY_FILE_ENV)
    if given:
        return Path(given)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "pydpowl" / "fingerprint.key"


def _fingerprint_key() -> bytes:
    """The secret key (32 random bytes), created on first use with permissions 0600 (folder 0700)."""
    path = fingerprint_key_path()
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    except OSError as exc:
        raise ValueError(f"cannot create the budget file's fingerprint key {str(path)!r} ({exc.strerror}); set "
                         f"{KEY_FILE_ENV} to a writable path.") from None
    else:
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(32))
    if os.name == "posix" and stat.S_IMODE(path.stat().st_mode) & 0o077:
        raise ValueError(f"the fingerprint key {str(path)!r} can be read by other users (mode "
                         f"{stat.S_IMODE(path.stat().st_mode):o}); run: chmod 600 {path}")
    key = path.read_bytes()
    if len(key) < 32:
        raise ValueError(f"the fingerprint key {str(path)!r} is shorter than 32 bytes; remove it to make a new one "
                         "(budget files keyed with it will then no longer match their data).")
    return key


def dataset_fingerprint(path: Union[str, os.PathLike]) -> str:
    """``"hmac-sha256:<hex>"``: a keyed fingerprint of a data file's bytes, binding a budget file to it.

    The key (:func:`fingerprint_key_path`) is a secret kept outside the budget
    file, created on first use: with an unkeyed hash, whoever holds a budget
    file could test whether a candidate dataset is the one it protects.
    Analysts sharing a budget file share the key (``PYDPOWL_KEY_FILE``).
    """
    mac = hmac.new(_fingerprint_key(), digestmod=hashlib.sha256)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            mac.update(block)
    return "hmac-sha256:" + mac.hexdigest()


def _sha256_fingerprint(path: Union[str, os.PathLike]) -> str:
    """The unkeyed fingerprint older budget files hold (only to recognise and re-key them)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return "sha256:" + digest.hexdigest()
