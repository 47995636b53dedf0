"""Frozen summaries of fitted estimators, built only from fitted (released) state."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Tuple


@dataclass(frozen=True)
class FitSummary:
    """Public settings and the released coefficients of a DP fit.

    Nothing here is private: coefficients are the noisy release, the other
    fields are public settings. ``str()`` gives a table for people;
    ``dataclasses.asdict()`` a row for programs. ``n_samples`` is public under
    the guarantee (neighbours have the same n) but is not printed by ``str()``:
    publishing it is the analyst's decision. The fitted objects' non-private
    diagnostics (``n_iter_``, ``n_clipped_*``) are not part of a summary.
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
    privacy_spent: Optional[Tuple[float, float]] = None
    mechanism: str = "output perturbation"

    def __str__(self) -> str:
        eps = "inf (non-private)" if self.epsilon == float("inf") else f"{self.epsilon:g}"
        lines = [
            f"{self.estimator} ({self.mechanism}, loss={self.loss})",
            f"  epsilon = {eps}, gamma = {self.gamma:g}, W = {self.weights_upper_bound:g}, C = {self.C:g}",
        ]
        if self.privacy_spent is not None and self.epsilon != float("inf"):
            lines.append(f"  guarantee: {guarantee_text(*self.privacy_spent)}")
        if self.mechanism == "output perturbation":
            lines.append(f"  sensitivity Delta = (L (C + 2W) + 2 n tol)/gamma = {self.sensitivity:.6g}")
        lines += [
            "  released coefficients:",
        ]
        width = max((len(n) for n in self.coefficient_names), default=4)
        lines += [f"    {name:<{width}}  {value: .6g}"
                  for name, value in zip(self.coefficient_names, self.coefficients)]
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


def delta_text(delta: float) -> str:
    """``delta`` rounded *up* to two significant digits (a stated delta must not understate the true one)."""
    if delta == 0:
        return "0"
    if delta >= 1:
        return "1 (no proven guarantee)"
    exponent = math.floor(math.log10(delta)) - 1
    text = f"{math.ceil(delta / 10.0 ** exponent) * 10.0 ** exponent:.2g}"
    return text if float(text) >= delta else f"{float(text) + 10.0 ** exponent:.2g}"


def guarantee_text(epsilon: float, delta: float) -> str:
    """``"(1, 5.5e-09)-DP"``: the (epsilon, delta) of a release, delta rounded up."""
    return f"({epsilon:g}, {delta_text(delta)})-DP"


def eps_text(epsilon: Optional[float]) -> str:
    """``epsilon`` for tables: 'inf' or a compact number."""
    if epsilon is None:
        return "-"
    return "inf" if epsilon == float("inf") else f"{epsilon:g}"
