"""Warnings and errors with privacy semantics.

Every class here states a guarantee that was weakened or refused, so callers can
filter on them (``warnings.simplefilter("error", PrivacyLeakWarning)``) or catch
them without parsing messages.

:class:`NotFittedError` is scikit-learn's, subclassed in :mod:`pydpowl._base`
and re-exported here on first use, so that importing this module does not load
scikit-learn (the R front end's worker imports it and never loads scikit-learn).
"""

from __future__ import annotations

from typing import Any

__all__ = [  # noqa: F822 (NotFittedError: module __getattr__ below)
    "PrivacyLeakWarning",
    "ConvergenceError",
    "NotFittedError",
    "BudgetExceededError",
    "DataClippedWarning",
    "BoundsDiagnosticWarning",
]


class PrivacyLeakWarning(RuntimeWarning):
    """A privacy-relevant quantity was derived from the private data.

    Raised (as a warning) when a bound that must be public, such as feature
    bounds or a benefit shift, is computed from the data being protected. The
    differential-privacy guarantee of any release that uses it is void.
    """


class ConvergenceError(RuntimeError):
    """The solver could not certify its minimiser, so nothing was released.

    Output perturbation is private only for the exact minimiser of the
    objective; an uncertified iterate is never released.
    """


class BudgetExceededError(ValueError):
    """A release would spend more privacy budget than remains."""


class DataClippedWarning(UserWarning):
    """Values were clipped to their public bounds by design (counted in the result)."""


class BoundsDiagnosticWarning(UserWarning):
    """Opt-in, non-private diagnostic: many values of a column lie outside its public bounds.

    Emitted only when the analyst asks for it (``diagnose_bounds``): whether it
    appears depends on the private data, so it is not covered by the privacy
    guarantee. It names columns, never counts or values.
    """


def __getattr__(name: str) -> Any:
    if name == "NotFittedError":  # defined beside the estimator base, which loads scikit-learn anyway
        from ._base import NotFittedError

        return NotFittedError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
