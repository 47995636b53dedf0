"""Frozen summaries of fitted estimators, built only from fitted (released) state."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Tuple


@dataclass(frozen=True)
class FitSummary:
    """Public settings and the released coefficients of a DP fit.

    Nothing here is private: coefficients are the noisy release, the other
    fields are public settings. ``str()`` gives a table for people;
    ``dataclasses.asdict()`` a row for programs.
    """

    estimator: str
    epsilon: float
    gamma: float
    weights_upper_bound: float
    C: float
    sensitivity: float
    loss: str
    n_samples: int
    coefficient_names: Tuple[str, ...]
    coefficients: Tuple[float, ...]
    notes: Tuple[str, ...] = field(default_factory=tuple)
    mechanism: str = "output perturbation"

    def __str__(self) -> str:
        eps = "inf (non-private)" if self.epsilon == float("inf") else f"{self.epsilon:g}"
        lines = [
            f"{self.estimator} ({self.mechanism}, loss={self.loss})",
            f"  epsilon = {eps}, gamma = {self.gamma:g}, W = {self.weights_upper_bound:g}, C = {self.C:g}",
            (f"  sensitivity Delta = (L (C + 2W) + 2 n tol)/gamma = {self.sensitivity:.6g}; n = {self.n_samples}"
             if self.mechanism == "output perturbation" else f"  n = {self.n_samples}"),
            "  released coefficients:",
        ]
        width = max((len(n) for n in self.coefficient_names), default=4)
        lines += [f"    {name:<{width}}  {value: .6g}" for name, value in zip(self.coefficient_names, self.coefficients)]
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


def eps_text(epsilon: Optional[float]) -> str:
    """``epsilon`` for tables: 'inf' or a compact number."""
    if epsilon is None:
        return "-"
    return "inf" if epsilon == float("inf") else f"{epsilon:g}"
