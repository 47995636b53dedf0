"""A privacy budget accountant for repeated releases on one dataset.

Each release of an ``epsilon``-DP mechanism on the same data spends
``epsilon``; by basic sequential composition, releases with budgets
``epsilon_1, ..., epsilon_k`` are together ``(epsilon_1 + ... + epsilon_k)``-DP.
:class:`BudgetAccountant` records every release and refuses one that would take
the total spent above the budget fixed when the accountant was created.

The pattern, as in diffprivlib's accountant: check the budget *before* the data
are touched, and spend it only *after* the release succeeded, so a failed fit
(bad input, solver failure) costs nothing::

    acc = BudgetAccountant(total_epsilon=2.0, dataset="trial-2024")
    with acc.release(1.0, label="DP-OWL fit, gamma=75"):
        model = DPOWL(epsilon=1.0, ...).fit(X, A, B)
    # acc.spent == 1.0; a second release of 1.5 raises BudgetExceededError

The state can be saved to and loaded from a small JSON file (strictly
validated), so a command-line tool can keep the tally across invocations.

Notes
-----
Only pure epsilon-DP with basic composition is tracked (no delta, no advanced
composition). Releases computed on *disjoint* subsets of the data compose in
parallel and could share a budget; the accountant does not know the subsets and
adds them, which is conservative. ``epsilon = inf`` (no noise) can only be
spent from an infinite budget.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import numbers
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Sequence, Tuple, Union

from ..exceptions import BudgetExceededError

__all__ = ["BudgetAccountant", "Release", "dataset_fingerprint", "BUDGET_FILE_FORMAT", "BUDGET_FILE_VERSION"]

#: ``format`` field of a budget file
BUDGET_FILE_FORMAT = "pydpowl-budget"
#: ``version`` field of the budget files this module writes and reads
BUDGET_FILE_VERSION = 1

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


def _check_label(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"label must be a string, got {type(value).__name__}.")
    return value


@dataclass(frozen=True)
class Release:
    """One recorded release: what it was and the epsilon it spent."""

    label: str
    epsilon: float


class BudgetAccountant:
    """Tally of the epsilon spent on one dataset under basic composition.

    Parameters
    ----------
    total_epsilon : float
        The whole budget for this dataset, in (0, inf]; fixed for the life of
        the accountant (and of its budget file).
    dataset : str, optional
        A name or fingerprint (:func:`dataset_fingerprint`) of the dataset the
        budget protects; a budget file refuses to be used for another one.
    releases : sequence of Release or (label, epsilon) pairs, default=()
        Releases already made (e.g. read from a budget file).

    Raises
    ------
    BudgetExceededError
        If ``releases`` already spend more than ``total_epsilon``.

    Examples
    --------
    >>> acc = BudgetAccountant(total_epsilon=1.0)
    >>> acc.spend(0.4, label="first")
    Release(label='first', epsilon=0.4)
    >>> acc.remaining
    0.6
    """

    def __init__(self, total_epsilon: float, *, dataset: Optional[str] = None,
                 releases: Sequence[Union[Release, Tuple[str, float]]] = ()) -> None:
        self._total = _check_budget("total_epsilon", total_epsilon, allow_inf=True)
        if dataset is not None and not isinstance(dataset, str):
            raise TypeError(f"dataset must be a string or None, got {type(dataset).__name__}.")
        self._dataset = dataset
        self._releases: list = []
        for k, item in enumerate(releases):
            label, eps = (item.label, item.epsilon) if isinstance(item, Release) else _pair(f"releases[{k}]", item)
            self._releases.append(Release(_check_label(label), _check_budget(f"releases[{k}].epsilon", eps,
                                                                            allow_inf=True)))
        if self._exceeds(0.0):
            raise BudgetExceededError(
                f"releases spend epsilon={self.spent:.6g}, more than total_epsilon={self._total:.6g}."
            )

    # -- state -----------------------------------------------------------------
    @property
    def total_epsilon(self) -> float:
        """The whole budget."""
        return self._total

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
    def remaining(self) -> float:
        """Epsilon still available (never negative)."""
        if self._total == math.inf:
            return math.inf
        return max(0.0, self._total - self.spent)

    def __repr__(self) -> str:
        ds = f", dataset={self._dataset!r}" if self._dataset is not None else ""
        return (f"BudgetAccountant(total_epsilon={self._total!r}{ds}, spent={self.spent!r}, "
                f"releases={len(self._releases)})")

    def _exceeds(self, epsilon: float) -> bool:
        if self._total == math.inf:
            return False
        new_total = math.fsum([self.spent, epsilon])
        return new_total > self._total * (1.0 + _REL_SLACK)

    # -- spending --------------------------------------------------------------
    def check(self, epsilon: float, label: str = "release") -> float:
        """Raise unless a release of ``epsilon`` fits in the remaining budget.

        Call this before touching the data. Nothing is recorded.

        Returns
        -------
        float
            The validated ``epsilon``.

        Raises
        ------
        TypeError, ValueError
            If ``epsilon`` is not a number in (0, inf].
        BudgetExceededError
            If ``spent + epsilon`` exceeds ``total_epsilon``.
        """
        eps = _check_budget("epsilon", epsilon, allow_inf=True)
        _check_label(label)
        if self._exceeds(eps):
            raise BudgetExceededError(
                f"{label}: epsilon={eps:.6g} exceeds the remaining privacy budget {self.remaining:.6g} "
                f"(total_epsilon={self._total:.6g}, already spent {self.spent:.6g} in {len(self._releases)} "
                "release(s)); nothing was released."
            )
        return eps

    def spend(self, epsilon: float, label: str = "release") -> Release:
        """Record a release of ``epsilon`` (after checking it fits).

        Call this only after the release succeeded.
        """
        eps = self.check(epsilon, label)
        record = Release(label, eps)
        self._releases.append(record)
        return record

    @contextlib.contextmanager
    def release(self, epsilon: float, label: str = "release") -> Iterator[float]:
        """Check before the block runs; spend only if it finishes without an exception.

        Examples
        --------
        >>> acc = BudgetAccountant(total_epsilon=1.0)
        >>> with acc.release(0.5, label="fit") as eps:
        ...     pass  # fit with epsilon=eps here
        >>> acc.spent
        0.5
        """
        eps = self.check(epsilon, label)
        yield eps
        self.spend(eps, label)

    def check_split(self, epsilons: Sequence[float], label: str = "release") -> Tuple[float, ...]:
        """Check that several releases (e.g. a budget split ``epsilon_1 + epsilon_2``) fit together.

        Returns the validated budgets; nothing is recorded.
        """
        if isinstance(epsilons, (str, bytes)) or not hasattr(epsilons, "__len__") or len(epsilons) == 0:
            raise TypeError("epsilons must be a non-empty sequence of numbers.")
        parts = tuple(_check_budget(f"epsilons[{k}]", e, allow_inf=True) for k, e in enumerate(epsilons))
        self.check(math.fsum(parts), label)
        return parts

    # -- files -----------------------------------------------------------------
    def to_dict(self) -> Dict[str, Any]:
        """A JSON-ready dict (``inf`` written as the string ``"inf"``)."""
        return {
            "format": BUDGET_FILE_FORMAT,
            "version": BUDGET_FILE_VERSION,
            "dataset": self._dataset,
            "total_epsilon": _dump_eps(self._total),
            "releases": [{"label": r.label, "epsilon": _dump_eps(r.epsilon)} for r in self._releases],
        }

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "budget") -> "BudgetAccountant":
        """Rebuild an accountant from :meth:`to_dict` output, refusing anything else."""
        if not isinstance(data, dict):
            raise ValueError(f"{source}: expected a JSON object, got {type(data).__name__}.")
        expected = {"format", "version", "dataset", "total_epsilon", "releases"}
        extra, missing = sorted(set(data) - expected), sorted(expected - set(data))
        if extra or missing:
            raise ValueError(f"{source}: fields must be exactly {sorted(expected)}; "
                             f"unexpected {extra}, missing {missing}.")
        if data["format"] != BUDGET_FILE_FORMAT:
            raise ValueError(f"{source}: format must be {BUDGET_FILE_FORMAT!r}, got {data['format']!r}.")
        if isinstance(data["version"], bool) or data["version"] != BUDGET_FILE_VERSION:
            raise ValueError(f"{source}: version must be {BUDGET_FILE_VERSION}, got {data['version']!r}.")
        if not isinstance(data["releases"], list):
            raise ValueError(f"{source}: releases must be a list, got {type(data['releases']).__name__}.")
        releases = []
        for k, item in enumerate(data["releases"]):
            if not isinstance(item, dict) or set(item) != {"label", "epsilon"} or not isinstance(item["label"], str):
                raise ValueError(f"{source}: releases[{k}] must be an object with exactly a string 'label' "
                                 "and an 'epsilon'.")
            releases.append((item["label"], _load_eps(f"{source}: releases[{k}].epsilon", item["epsilon"])))
        total = _load_eps(f"{source}: total_epsilon", data["total_epsilon"])
        if data["dataset"] is not None and not isinstance(data["dataset"], str):
            raise ValueError(f"{source}: dataset must be a string or null, got {type(data['dataset']).__name__}.")
        try:
            return cls(total, dataset=data["dataset"], releases=releases)
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
    def load(cls, path: Union[str, os.PathLike], *, dataset: Optional[str] = None) -> "BudgetAccountant":
        """Read a budget file written by :meth:`save`.

        Parameters
        ----------
        path : path-like
        dataset : str, optional
            When given, the file must be for this dataset (same name or fingerprint).

        Raises
        ------
        ValueError
            If the file is not valid JSON, has another format or version, extra or
            missing fields, bad epsilons, or belongs to another dataset.
        """
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"), parse_constant=_refuse_constant)
        except json.JSONDecodeError as exc:
            raise ValueError(f"budget file {str(path)!r} is not valid JSON: {exc.msg} (line {exc.lineno}).") from None
        except ValueError as exc:  # NaN / Infinity tokens
            raise ValueError(f"budget file {str(path)!r}: {exc}") from None
        acc = cls.from_dict(data, source=f"budget file {str(path)!r}")
        if dataset is not None and acc.dataset != dataset:
            raise ValueError(f"budget file {str(path)!r} is for dataset {acc.dataset!r}, not {dataset!r}; "
                             "use one budget file per dataset.")
        return acc


def _pair(name: str, item: Any) -> Tuple[Any, Any]:
    try:
        label, eps = item
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a Release or a (label, epsilon) pair.") from None
    return label, eps


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


def dataset_fingerprint(path: Union[str, os.PathLike]) -> str:
    """``"sha256:<hex>"`` of a data file's bytes, to bind a budget file to that dataset."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return "sha256:" + digest.hexdigest()
