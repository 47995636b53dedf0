"""Lazy access to an embedded R through rpy2, with local conversion only.

Every call into R goes through :func:`call_r`: it loads rpy2 on first use,
evaluates an R function's source once (cached), converts numpy arguments inside
a ``localconverter`` context (never globally) and turns R errors into
:class:`RError` with R's message.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from typing import Any, Dict, Iterator, List

import numpy as np

__all__ = ["RError", "RUnavailableError", "r_available", "call_r", "require_packages"]

SETUP_HINT = "run 'bash scripts/setup.sh' (or 'make setup') from the repository root"


class RUnavailableError(ImportError):
    """R, rpy2 or a required R package is not available."""


class RError(RuntimeError):
    """R signalled an error; the message is R's."""


@functools.lru_cache(maxsize=None)
def _rpy2() -> Dict[str, Any]:
    try:
        import rpy2.rinterface_lib.callbacks as callbacks
        import rpy2.rinterface_lib.embedded as embedded
        from rpy2 import robjects
        from rpy2.robjects import default_converter, numpy2ri
        from rpy2.robjects.conversion import localconverter
        from rpy2.robjects.packages import isinstalled
    except Exception as exc:  # ImportError, or R itself failing to start
        raise RUnavailableError(
            f"the R reference needs rpy2 and a working R ({type(exc).__name__}: {exc}); "
            f"{SETUP_HINT}."
        ) from exc
    return {
        "robjects": robjects,
        "converter": default_converter + numpy2ri.converter,
        "localconverter": localconverter,
        "isinstalled": isinstalled,
        "RRuntimeError": embedded.RRuntimeError,
        "callbacks": callbacks,
    }


def r_available(*packages: str) -> bool:
    """True when rpy2 loads and every named R package is installed."""
    try:
        require_packages(*packages)
    except RUnavailableError:
        return False
    return True


@functools.lru_cache(maxsize=None)
def require_packages(*packages: str) -> None:
    """Raise :class:`RUnavailableError` unless every R package is installed."""
    api = _rpy2()
    for pkg in packages:
        if not api["isinstalled"](pkg):
            raise RUnavailableError(
                f"R package '{pkg}' is not installed in the R that rpy2 found; {SETUP_HINT}."
            )


@functools.lru_cache(maxsize=None)
def _r_function(source: str) -> Any:
    api = _rpy2()
    with api["localconverter"](api["converter"]):
        return api["robjects"].r(source)


def call_r(source: str, *args: Any, **kwargs: Any) -> Any:
    """Evaluate the R function ``source`` and call it with converted arguments.

    Parameters
    ----------
    source : str
        R source of a function, e.g. ``"function(x) sum(x)"``; compiled once.
    *args, **kwargs
        numpy arrays, floats, ints, strings or None; keyword names are passed to
        R unchanged (use ``upper_bounds`` style names in R code you control).

    Returns
    -------
    object
        The R result converted with numpy2ri (numeric vectors become numpy
        arrays, named lists become ``rpy2`` ``NamedList``-like objects).

    Raises
    ------
    RError
        With R's message when R signals an error.
    """
    api = _rpy2()
    fn = _r_function(source)
    with api["localconverter"](api["converter"]), _captured_r_console(api["callbacks"]) as console:
        try:
            result = fn(*args, **kwargs)
        except api["RRuntimeError"] as exc:
            raise RError(f"R error: {str(exc).strip()}") from None
    text = "".join(console).strip()
    if text:  # R wrote a warning while succeeding: pass it on rather than lose it
        warnings.warn(f"R: {text}", RuntimeWarning, stacklevel=2)
    return result


@contextlib.contextmanager
def _captured_r_console(callbacks: Any) -> Iterator[List[str]]:
    """Keep R's error/warning console output (already carried by RError) off stderr.

    rpy2 echoes every R error as "R[write to console]: ..."; the message is
    raised as :class:`RError` instead, so the echo is swallowed while the call
    runs and the previous callback is restored afterwards.
    """
    captured: List[str] = []
    previous = callbacks.consolewrite_warnerror
    callbacks.consolewrite_warnerror = captured.append
    try:
        yield captured
    finally:
        callbacks.consolewrite_warnerror = previous


def as_float_array(value: Any) -> np.ndarray:
    """Copy an R numeric result into a fresh float64 numpy array."""
    return np.array(value, dtype=np.float64, copy=True)
