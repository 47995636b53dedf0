"""What the commands that read private data print about it: nothing computed from it, unless asked.

A release (noised, on the ledger) and the public settings are printed; counts
computed from the private data are not, because one subject changes them (the
subjects per arm, the values clipped by design, the solver's iterations) and a
printed count is a release with no noise. Two opt-ins:

* ``--public-n``: the analyst declares the number of rows public (a trial's
  published size, a registry extract whose size is known). The guarantee is for
  neighbouring datasets of the same size (one subject replaced), so n is
  public *to the guarantee* and the releases depend on it (the noise scale's
  ``2 n tol`` term, gamma's transfer by ``sqrt(n)``); printing it is the
  analyst's statement that publishing it is acceptable. Without it the
  commands say "n not released".
* ``--diagnostics``: print the counts in a section labelled
  ``NON-PRIVATE DIAGNOSTICS``. They are never written to a file.
"""

from __future__ import annotations

import argparse
from typing import Any, Mapping

from ._common import say

__all__ = ["add_disclosure_options", "rows_text", "say_data", "say_diagnostics", "budget_text", "NOT_RELEASED",
           "DIAGNOSTICS_TITLE", "COUNT_LABELS"]

#: said where n would be
NOT_RELEASED = "n not released (--public-n prints it if the number of subjects is public)"
#: the heading of the opt-in section
DIAGNOSTICS_TITLE = ("NON-PRIVATE DIAGNOSTICS (--diagnostics): computed from the private data, NOT differentially "
                     "private; for the analyst only, do not publish (never written to a file)")
#: names of the fitted objects' non-private counts, as printed
COUNT_LABELS = {
    "n_clipped_weights": "weights clipped at W",
    "n_clipped_features": "feature values clipped to the bounds",
    "n_clipped_benefits": "benefits clipped to the bounds",
    "n_clipped_logits": "propensity logits clipped to [-M, M]",
    "n_iter": "Newton iterations of the solver",
    "n_clipped_rewards": "rewards clipped to the bounds",
    "n_followed": "learning subjects whose later treatments followed the released later rules",
}


def add_disclosure_options(parser: argparse.ArgumentParser) -> None:
    """``--public-n`` and ``--diagnostics``."""
    g = parser.add_argument_group("what is printed about the private data (default: releases and public settings "
                                  "only)")
    g.add_argument("--public-n", action="store_true",
                   help="the number of rows is public: print it (and the sizes derived from it); without it the "
                        "output says 'n not released'")
    g.add_argument("--diagnostics", action="store_true",
                   help="also print counts computed from the private data (rows, subjects per arm, values clipped "
                        "by design, solver iterations) in a section labelled NON-PRIVATE DIAGNOSTICS; they are not "
                        "differentially private and are never written to a file")


def rows_text(n: int, public_n: bool) -> str:
    """``"n = 400 rows (declared public with --public-n)"`` or :data:`NOT_RELEASED`."""
    return f"n = {int(n)} rows (declared public with --public-n)" if public_n else NOT_RELEASED


def say_data(data: Any, args: argparse.Namespace) -> None:
    """The data line (source and, if declared public, n) and the coding notes (public statements)."""
    say(f"data: {data.description}; {rows_text(data.n, args.public_n)}")
    for note in data.notes:
        say(f"coding: {note}")


def say_diagnostics(args: argparse.Namespace, *counts: Mapping[str, Any]) -> None:
    """With ``--diagnostics``: every count, under :data:`DIAGNOSTICS_TITLE`; otherwise nothing."""
    if not args.diagnostics:
        return
    say(DIAGNOSTICS_TITLE)
    for group in counts:
        for name, value in group.items():
            say(f"  {COUNT_LABELS.get(name, name)}: {value}")


def budget_text(budget: Any) -> str:
    """A budget file's tally: ``"(1.5, 3.1e-09)-DP of total epsilon 2 in 2 release(s); epsilon 0.5 left"``."""
    from ..estimators.summary import guarantee_text

    return (f"{guarantee_text(*budget.privacy_spent)} of total epsilon {budget.total_epsilon:g}"
            + (f" and delta {budget.total_delta:g}" if budget.total_delta is not None else "")
            + f" in {len(budget.releases)} release(s); epsilon {budget.remaining:g} left")
